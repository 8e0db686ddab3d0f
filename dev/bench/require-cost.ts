/**
 * What `require("dynamodb-outbox/runtime")` costs a writer-only application: the built runtime entry
 * (`dist/runtime/index.js`, `npm run build` first) required in fresh Node processes, with an `OutboxWriter` built,
 * against `@aws-sdk/client-dynamodb` alone in the same run. Each sample counts the modules loaded and which AWS SDK
 * clients they include, and times the `require` (median of `runs`). Read the ratio, not the milliseconds: the
 * machine's load moves both.
 *
 * `npm run bench:require` prints the JSON.
 *
 * @packageDocumentation
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
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
process.stdout.write(JSON.stringify({ ms, modules: loaded.length, clients }));
`;

/** The cost of one kind of require. */
export interface RequireSample {
    /** Median ms of the require, over the runs. */
    readonly ms: number;
    /** Modules in `require.cache` afterwards. */
    readonly modules: number;
    /** The `@aws-sdk/client-*` packages among them. */
    readonly clients: readonly string[];
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

function sample(target: string, mode: "writer" | "client", runs: number): RequireSample {
    const times: number[] = [];
    let last: { ms: number; modules: number; clients: string[] } | undefined;
    for (let i = 0; i < runs; i += 1) {
        const child = spawnSync(process.execPath, ["-e", CHILD, target, mode], { cwd: REPO, encoding: "utf8" });
        if (child.status !== 0) throw new Error(`requiring ${target} failed: ${child.stderr.trim()}`);
        last = JSON.parse(child.stdout) as { ms: number; modules: number; clients: string[] };
        times.push(last.ms);
    }
    return { ms: round(median(times), 1), modules: last!.modules, clients: last!.clients };
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

if (require.main === module) {
    try {
        process.stdout.write(`${JSON.stringify({ require: measureRequireCost() })}\n`);
    } catch (err) {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
    }
}
