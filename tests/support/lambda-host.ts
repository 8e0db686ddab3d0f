/**
 * Run a Lambda archive, written out as a folder, the way the Lambda Node.js runtime runs it: on Lambda's Node
 * ({@link lambdaNode}), from the archive's folder, with `NODE_PATH` holding only `@aws-sdk` and `@smithy` (what
 * the runtime provides), through `tests/support/package/fixtures/lambda-host.js`.
 *
 * @packageDocumentation
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { lambdaNode } from "./lambda-node";

const REPO = path.resolve(__dirname, "..", "..");
const HOST = path.join(REPO, "tests", "support", "package", "fixtures", "lambda-host.js");

/** What `lambda-host.js` found. */
export interface HostReport {
    /** `process.version` inside the host. */
    node: string;
    /** `typeof` the archive's `handler` export. */
    handlerType: string;
    /** The publisher's answer to an empty batch, when asked for. */
    emptyBatch?: unknown;
    /** For each variable dropped in turn, the cold start's error (or `loaded` when it did not fail). */
    missing: Record<string, { loaded?: true; code?: string; message?: string; context?: Record<string, unknown> }>;
    /** Every module loaded, by path. */
    modules: string[];
}

/**
 * The folder to put on `NODE_PATH` as the Lambda runtime provides modules: `<work>/lambda-runtime-modules` holding
 * links to this repository's `@aws-sdk` and `@smithy` and nothing else (made once per `work`).
 *
 * @param work - a scratch folder outside the archive.
 */
export function lambdaRuntimeModules(work: string): string {
    const dir = path.join(work, "lambda-runtime-modules");
    if (!fs.existsSync(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        for (const scope of ["@aws-sdk", "@smithy"])
            fs.symlinkSync(path.join(REPO, "node_modules", scope), path.join(dir, scope));
    }
    return dir;
}

/** How to run the host. */
export interface HostOptions {
    /** A scratch folder outside the archive: the host file, its result and the runtime modules go there. */
    readonly work: string;
    /** The function's environment variables. */
    readonly environment: Record<string, string>;
    /** Variables to drop one at a time, each a fresh cold start. @default [] */
    readonly drop?: readonly string[];
    /** Call the handler with an empty stream batch (the publisher only: it makes no AWS call). @default false */
    readonly invokeEmptyBatch?: boolean;
}

/**
 * Run `tests/support/package/fixtures/lambda-host.js` in `archiveDir` on Lambda's Node; fails (assertion) with its
 * output when it exits non-zero.
 *
 * @param archiveDir - the archive written out as a folder (`__index.js` at its root).
 * @param options - see {@link HostOptions}.
 */
export function runLambdaHost(archiveDir: string, options: HostOptions): HostReport {
    const name = path.basename(archiveDir);
    // The host sits outside the archive folder: the handler may only resolve what the archive and NODE_PATH hold.
    const host = path.join(options.work, `${name}-host.js`);
    fs.copyFileSync(HOST, host);
    const resultFile = path.join(options.work, `${name}-result.json`);
    const flags = [...(options.invokeEmptyBatch === true ? ["invoke-empty-batch"] : [])];
    const ran = spawnSync(lambdaNode().path, [host, resultFile, JSON.stringify(options.drop ?? []), ...flags], {
        cwd: archiveDir,
        encoding: "utf8",
        env: {
            PATH: process.env.PATH ?? "",
            NODE_PATH: lambdaRuntimeModules(options.work),
            AWS_REGION: "eu-west-1",
            AWS_ACCESS_KEY_ID: "test",
            AWS_SECRET_ACCESS_KEY: "test",
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
            ...options.environment,
        },
    });
    if (ran.error) throw ran.error;
    assert.equal(
        ran.status,
        0,
        `the ${name} Lambda host (${lambdaNode().path}) exited ${ran.status}\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`,
    );
    return JSON.parse(fs.readFileSync(resultFile, "utf8")) as HostReport;
}
