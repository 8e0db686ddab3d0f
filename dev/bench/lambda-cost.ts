/**
 * What the publisher Lambda weighs, in both layouts a deployment meets:
 * - **own program** (this repository's program, or a linked checkout): the archive the Outbox component builds
 *   under the test run's Pulumi mocks, exactly as `pulumi up` would serialize it (`__index.js` alone);
 * - **installed** (`npm install dynamodb-outbox`): the package built, packed and installed into a fresh consumer
 *   project as tests/e2e/package/consume.test.ts does it, whose plain JavaScript program declares an Outbox under
 *   mocks and writes the archive out (`__index.js`, the package's package.json and its runtime's `.js` files).
 *
 * Each archive is written out as a folder and its cold load timed: `require("./__index.js")` (which runs the
 * factory: it reads the environment and builds the DynamoDB, SNS and SQS clients) in a fresh process of Lambda's
 * Node major ({@link lambdaNode}: this process's, the toolchain's Node 22), from the archive's folder, with only
 * `@aws-sdk` and `@smithy` on NODE_PATH, as the Lambda Node.js runtime loads it.
 *
 * `npx ts-node -T dev/bench/lambda-cost.ts` prints the figures alone as JSON.
 *
 * @packageDocumentation
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import "../../tests/support/pulumi-mocks";
import { buildOutbox, TYPE } from "../../tests/support/component-harness";
import {
    consumerArchivesOf,
    consumerEnvironment,
    installConsumerProject,
    runConsumerProgram,
} from "../../tests/support/package/consumer-project";
import { lambdaRuntimeModules } from "../../tests/support/lambda-host";
import { lambdaNode } from "../../tests/support/lambda-node";
import { entryText, folderSize } from "../../tests/support/serialized";
import { destinationArnRegion } from "../../runtime/destination/aws-resource-names";
import { median, round } from "./stats";

/** The `lambda` figures of the benchmark. */
export interface LambdaCost {
    /** Bytes of every file in the publisher's archive (own-program layout: `__index.js` alone), uncompressed. */
    readonly archiveBytes: number;
    /** The same, deflated (what the zip carries). */
    readonly archiveDeflatedBytes: number;
    /** Median over `initRuns` fresh processes of loading the own-program archive and building its clients, ms. */
    readonly initMs: number;
    /** Bytes of every file in the publisher's archive when the package is installed, uncompressed. */
    readonly installedArchiveBytes: number;
    /** The same, deflated. */
    readonly installedDeflatedBytes: number;
    /** Files in the installed layout's archive. */
    readonly installedArchiveFiles: number;
    /** Median over `initRuns` fresh processes of loading the installed layout's archive, ms. */
    readonly installedInitMs: number;
    /** How many cold loads each median is over. */
    readonly initRuns: number;
    /** The Node.js version the cold loads ran on (`process.version` of the binary). */
    readonly nodeVersion: string;
}

/** The child's program: time `require("./__index.js")` from its folder and check the handler, print the ms. */
const CHILD = `
const path = require("node:path");
const t0 = process.hrtime.bigint();
const m = require(path.resolve("__index.js"));
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
if (typeof m.handler !== "function") throw new Error("no handler export");
process.stdout.write(JSON.stringify({ ms, node: process.version }));
`;

/**
 * The region the publisher runs in: its destination's, as `pulumi up` would deploy it beside that destination. The
 * handler's cold start refuses a destination of another region (`runtime/config.ts`), so a fixed region here would
 * time an error.
 */
function regionOf(environment: Record<string, string>): string {
    for (const value of Object.values(environment)) {
        const region = destinationArnRegion(value);
        if (region !== undefined) return region;
    }
    throw new Error(`the publisher's environment names no destination ARN: ${JSON.stringify(environment)}`);
}

/** Median ms of `runs` cold loads of the archive written out at `dir`, and the Node version they ran on. */
function coldLoad(
    dir: string,
    work: string,
    environment: Record<string, string>,
    runs: number,
): { ms: number; node: string } {
    const samples: number[] = [];
    let node = "";
    for (let i = 0; i < runs; i += 1) {
        const child = spawnSync(lambdaNode().path, ["-e", CHILD], {
            cwd: dir,
            env: {
                PATH: process.env.PATH ?? "",
                NODE_PATH: lambdaRuntimeModules(work),
                AWS_REGION: regionOf(environment),
                AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
                ...environment,
            },
            encoding: "utf8",
        });
        if (child.error) throw child.error;
        if (child.status !== 0)
            throw new Error(`loading the publisher archive in ${dir} failed: ${child.stderr.trim()}`);
        const out = JSON.parse(child.stdout) as { ms: number; node: string };
        samples.push(out.ms);
        node = out.node;
    }
    return { ms: round(median(samples), 1), node };
}

/**
 * Build the publisher's archive in both layouts, measure each and time its cold loads.
 *
 * @param runs - Cold loads to take each median of. @default 7
 */
export async function measureLambdaCost(runs = 7): Promise<LambdaCost> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-bench-lambda-"));
    try {
        const built = await buildOutbox("benchlambda");
        const publisher = built.one(TYPE.fn, "benchlambda-publisher");
        const environment =
            (await (publisher.inputs.environment?.variables as
                Promise<Record<string, string>> | Record<string, string> | undefined)) ?? {};
        const own = path.join(work, "own", "publisher");
        fs.mkdirSync(own, { recursive: true });
        fs.writeFileSync(path.join(own, "__index.js"), await entryText(publisher));
        const ownSize = folderSize(own);
        const ownLoad = coldLoad(own, work, environment, runs);

        const { project } = installConsumerProject(work);
        const lambdaRoot = path.join(work, "installed");
        const archives = consumerArchivesOf(runConsumerProgram(project, lambdaRoot, consumerEnvironment(work)));
        const installed = path.join(lambdaRoot, "publisher");
        const installedSize = folderSize(installed);
        const installedLoad = coldLoad(installed, work, archives.publisher.environment, runs);
        return {
            archiveBytes: ownSize.raw,
            archiveDeflatedBytes: ownSize.deflated,
            initMs: ownLoad.ms,
            installedArchiveBytes: installedSize.raw,
            installedDeflatedBytes: installedSize.deflated,
            installedArchiveFiles: installedSize.files,
            installedInitMs: installedLoad.ms,
            initRuns: runs,
            nodeVersion: installedLoad.node,
        };
    } finally {
        fs.rmSync(work, { recursive: true, force: true });
    }
}

if (require.main === module) {
    measureLambdaCost().then(
        (cost) => process.stdout.write(`${JSON.stringify({ lambda: cost })}\n`),
        (err: unknown) => {
            process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
            process.exitCode = 1;
        },
    );
}
