/**
 * What the publisher Lambda weighs: the archive the Outbox component builds (under the test run's Pulumi
 * mocks, exactly as `pulumi up` would serialize it) and the time to load its `__index.js` and build its
 * clients, each load in a fresh Node process, as a Lambda cold start does.
 *
 * @packageDocumentation
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import "../tests/support/pulumi-mocks";
import { buildOutbox, TYPE } from "../tests/component/harness";
import { archiveSize, entryText } from "../tests/support/serialized";
import { median, round } from "./stats";

/** The `lambda` figures of the benchmark. */
export interface LambdaCost {
    /** Bytes of every file in the publisher's archive, uncompressed. */
    readonly archiveBytes: number;
    /** The same, deflated (what the zip carries). */
    readonly archiveDeflatedBytes: number;
    /** Median over `runs` fresh processes of loading the serialized handler and building its clients, ms. */
    readonly initMs: number;
    /** How many cold loads the median is over. */
    readonly initRuns: number;
}

const REPO = path.join(__dirname, "..");

/**
 * The child's program: time `Module._compile` of the serialized text (which runs the factory: it reads the
 * environment and builds the DynamoDB, SNS and SQS clients) from a fresh process, and print the ms.
 */
const CHILD = `
const Module = require("node:module");
const fs = require("node:fs");
const path = require("node:path");
const file = path.join(process.env.BENCH_REPO, ".serialized", "__index.js");
const text = fs.readFileSync(process.env.BENCH_TEXT, "utf8");
const t0 = process.hrtime.bigint();
const m = new Module(file);
m.filename = file;
m.paths = Module._nodeModulePaths(path.dirname(file));
m._compile(text, file);
if (typeof m.exports.handler !== "function") throw new Error("no handler export");
process.stdout.write(String(Number(process.hrtime.bigint() - t0) / 1e6));
`;

/**
 * Build the component under mocks and measure its publisher.
 *
 * @param runs - Cold loads to take the median of. @default 7
 */
export async function measureLambdaCost(runs = 7): Promise<LambdaCost> {
    const built = await buildOutbox("benchlambda");
    const publisher = built.one(TYPE.fn, "benchlambda-publisher");
    const size = await archiveSize(publisher);
    const environment = (await (publisher.inputs.environment?.variables as Promise<Record<string, string>> | Record<string, string> | undefined)) ?? {};
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-bench-"));
    try {
        const textFile = path.join(dir, "__index.js");
        fs.writeFileSync(textFile, await entryText(publisher));
        const samples: number[] = [];
        for (let i = 0; i < runs; i += 1) {
            const child = spawnSync(process.execPath, ["-e", CHILD], {
                env: { ...process.env, ...environment, AWS_REGION: "us-east-1", BENCH_REPO: REPO, BENCH_TEXT: textFile, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
                encoding: "utf8",
            });
            if (child.status !== 0) throw new Error(`loading the serialized publisher failed: ${child.stderr.trim()}`);
            samples.push(Number(child.stdout));
        }
        return { archiveBytes: size.raw, archiveDeflatedBytes: size.deflated, initMs: round(median(samples), 1), initRuns: runs };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}
