/**
 * What `require("dynamodb-outbox/runtime")` costs a writer-only application: the built runtime entry
 * (`dist/runtime/index.js`, `npm run build` first) required in fresh Node processes, with an `OutboxWriter` built,
 * against `@aws-sdk/client-dynamodb` alone in the same run. Each sample counts the modules loaded and which AWS SDK
 * clients they include, and times the `require` (median of `runs`). Read the ratio, not the milliseconds: the
 * machine's load moves both.
 *
 * `npm run bench:require` prints the JSON. `npm run bench:require -- --newer-sdk` measures instead a writer-only
 * application on a newer `@aws-sdk/client-dynamodb` than the lower bound of the package's range, installed from the
 * packed tarball (tests/support/package/consumer-project.ts) twice, in the same run: with the package's ranges as
 * they are (carets: npm gives the package the application's copy), and with each range pinned to its lower bound, as
 * the package shipped them before (npm nests a second copy under the package). The pinned install needs the lower
 * bound's registry document in the npm cache: if it fails offline, run `npm cache add
 * @aws-sdk/client-dynamodb@<lower bound>` once.
 *
 * @packageDocumentation
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as os from "node:os";
import {
    installNewerSdkApp,
    ok,
    packPackage,
    run,
    type PackedPackage,
} from "../../tests/support/package/consumer-project";
import { median, round } from "./stats";

const REPO = path.resolve(__dirname, "..", "..");
const ENTRY = path.join(REPO, "dist", "runtime", "index.js");

/**
 * One child: require `target` and build a DynamoDB client (and, for the runtime, a writer on it); report the time,
 * the module count and the SDK clients loaded.
 */
const CHILD = `
const t0 = process.hrtime.bigint();
const m = require(process.argv[1]);
const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const client = new DynamoDBClient({ region: "eu-west-1" });
if (process.argv[2] === "writer") new m.OutboxWriter({ client, tableName: "orders" });
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const loaded = Object.keys(require.cache);
const clients = [...new Set(loaded.map((f) => /@aws-sdk[\\\\/](client-[a-z-]+)[\\\\/]/.exec(f)?.[1]).filter(Boolean))].sort();
const copies = new Set(loaded.map((f) => /^(.*[\\\\/]@aws-sdk[\\\\/]client-dynamodb)[\\\\/]/.exec(f)?.[1]).filter(Boolean)).size;
process.stdout.write(JSON.stringify({ ms, modules: loaded.length, clients, copies }));
`;

/** The cost of one kind of require. */
export interface RequireSample {
    /** Median ms of the require, over the runs. */
    readonly ms: number;
    /** Modules in `require.cache` afterwards. */
    readonly modules: number;
    /** The `@aws-sdk/client-*` packages among them. */
    readonly clients: readonly string[];
    /** The `@aws-sdk/client-dynamodb` folders they were loaded from. */
    readonly copies: number;
}

/** The runtime entry against the DynamoDB client alone, and their ratio. */
export interface RequireCost {
    /** `require("dynamodb-outbox/runtime")` and `new OutboxWriter(...)`. */
    readonly runtimeWriter: RequireSample;
    /** `require("@aws-sdk/client-dynamodb")` and a client built, alone. */
    readonly dynamodbClient: RequireSample;
    /** runtimeWriter.ms / dynamodbClient.ms. */
    readonly ratio: number;
    /** Fresh processes per median. */
    readonly runs: number;
    /** The Node version of the children. */
    readonly nodeVersion: string;
}

function sample(target: string, mode: "writer" | "client", runs: number, cwd = REPO): RequireSample {
    const times: number[] = [];
    let last: { ms: number; modules: number; clients: string[]; copies: number } | undefined;
    for (let i = 0; i < runs; i += 1) {
        const child = spawnSync(process.execPath, ["-e", CHILD, target, mode], { cwd, encoding: "utf8" });
        if (child.status !== 0) throw new Error(`requiring ${target} failed: ${child.stderr.trim()}`);
        last = JSON.parse(child.stdout) as { ms: number; modules: number; clients: string[]; copies: number };
        times.push(last.ms);
    }
    return { ms: round(median(times), 1), modules: last!.modules, clients: last!.clients, copies: last!.copies };
}

/**
 * Time both requires, alternating, in `runs` fresh processes each.
 *
 * @param runs - Fresh processes per median. @default 9
 * @throws when `dist/runtime/index.js` is missing (run `npm run build`).
 */
export function measureRequireCost(runs = 9): RequireCost {
    if (!fs.existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run npm run build first`);
    const runtimeWriter = sample(ENTRY, "writer", runs);
    const dynamodbClient = sample("@aws-sdk/client-dynamodb", "client", runs);
    return {
        runtimeWriter,
        dynamodbClient,
        ratio: round(runtimeWriter.ms / dynamodbClient.ms, 2),
        runs,
        nodeVersion: process.version,
    };
}

/** `pack` with each dependency range pinned to its lower bound (`^3.1169.0` → `3.1169.0`), repacked into `work`. */
function pinnedVariant(pack: PackedPackage, work: string): PackedPackage {
    const dir = fs.mkdtempSync(path.join(work, "pinned-"));
    ok(run("tar", ["-xzf", pack.tarball, "-C", dir], { cwd: work }), "tar -x");
    const manifestPath = path.join(dir, "package", "package.json");
    const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as { dependencies: Record<string, string> };
    for (const [name, range] of Object.entries(manifest.dependencies))
        manifest.dependencies[name] = range.replace(/^\^/, "");
    fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    const tarballName = `pinned-${pack.tarballName}`;
    ok(run("tar", ["-czf", path.join(work, tarballName), "-C", dir, "package"], { cwd: work }), "tar -c");
    return { ...pack, tarball: path.join(work, tarballName), tarballName, packedManifest: manifest };
}

/** A writer-only application on a newer `@aws-sdk/client-dynamodb`, with the ranges as they are and pinned. */
export interface NewerSdkRequireCost {
    /** The application's `@aws-sdk/client-dynamodb` version. */
    readonly dynamodbVersion: string;
    /** The package's ranges as they are: one copy. */
    readonly ranges: RequireSample;
    /** The ranges pinned to their lower bounds: a second copy under the package. */
    readonly pinned: RequireSample;
    /** `@aws-sdk/client-dynamodb` alone, in the ranges' application. */
    readonly dynamodbClient: RequireSample;
    /** ranges.ms / dynamodbClient.ms, pinned.ms / dynamodbClient.ms, and pinned.ms / ranges.ms. */
    readonly ratios: { readonly ranges: number; readonly pinned: number; readonly pinnedOverRanges: number };
    readonly runs: number;
    readonly nodeVersion: string;
}

/**
 * Build, pack and install the package into two writer-only applications on a newer `@aws-sdk/client-dynamodb` (see
 * the module notes), then time `require("dynamodb-outbox/runtime")` with a writer built, in `runs` fresh processes
 * each, in the same run.
 *
 * @param runs - Fresh processes per median. @default 9
 */
export function measureNewerSdkRequireCost(runs = 9): NewerSdkRequireCost {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-require-"));
    try {
        const pack = packPackage(work);
        const ranges = installNewerSdkApp(work, pack, "ranges-app");
        const pinned = installNewerSdkApp(work, pinnedVariant(pack, work), "pinned-app");
        const runtime = "dynamodb-outbox/runtime";
        const rangesSample = sample(runtime, "writer", runs, ranges.project);
        const pinnedSample = sample(runtime, "writer", runs, pinned.project);
        const client = sample("@aws-sdk/client-dynamodb", "client", runs, ranges.project);
        return {
            dynamodbVersion: ranges.dynamodbVersion,
            ranges: rangesSample,
            pinned: pinnedSample,
            dynamodbClient: client,
            ratios: {
                ranges: round(rangesSample.ms / client.ms, 2),
                pinned: round(pinnedSample.ms / client.ms, 2),
                pinnedOverRanges: round(pinnedSample.ms / rangesSample.ms, 2),
            },
            runs,
            nodeVersion: process.version,
        };
    } finally {
        fs.rmSync(work, { recursive: true, force: true });
    }
}

if (require.main === module) {
    try {
        const result = process.argv.includes("--newer-sdk")
            ? { newerSdk: measureNewerSdkRequireCost() }
            : { require: measureRequireCost() };
        process.stdout.write(`${JSON.stringify(result)}\n`);
    } catch (err) {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
    }
}
