/**
 * The bench smoke: `npm run bench` as a user runs it, at the smallest sizes (`--smoke`), so that a section that
 * throws fails `npm test` instead of being found by the next person who runs the bench (issue 35: the Lambda
 * section's region check failed every run but `--drain-only`, and nothing noticed).
 *
 * It asserts that the run exits 0 and that its JSON holds every section with every key, each a number (or the
 * `null` the docs name). It asserts no timing: the figures of a smoke run are not meant to be read. The
 * invariants that hold at any size (no keyed record out of order) are asserted.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";

const REPO = path.join(__dirname, "..", "..", "..");

/** `npm run --silent bench -- <args>`: stdout is the JSON line alone, the progress and tables go to stderr. */
function bench(args: readonly string[]): { status: number | null; json: Record<string, unknown>; stderr: string } {
    const run = spawnSync("npm", ["run", "--silent", "bench", "--", ...args], {
        cwd: REPO,
        encoding: "utf8",
        env: { ...process.env, npm_config_update_notifier: "false", FORCE_COLOR: "0" },
        maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error) throw run.error;
    const last = run.stdout.trim().split("\n").pop() ?? "";
    let json: Record<string, unknown> = {};
    if (run.status === 0) {
        try {
            json = JSON.parse(last) as Record<string, unknown>;
        } catch (err) {
            assert.fail(`npm run bench -- ${args.join(" ")} printed no JSON line: ${last}\n${(err as Error).message}`);
        }
    }
    return { status: run.status, json, stderr: run.stderr };
}

/** The object at `key` of `parent`, asserted to be one. */
function section(parent: Record<string, unknown>, key: string): Record<string, unknown> {
    const value = parent[key];
    assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), `${key} is an object`);
    return value as Record<string, unknown>;
}

/** Asserts `object` has exactly `keys`, each a finite number, but those in `nullable`, which may be `null`. */
function figures(name: string, object: Record<string, unknown>, keys: readonly string[], nullable: string[] = []) {
    assert.deepEqual(Object.keys(object).sort(), [...keys].sort(), `${name}'s keys`);
    for (const key of keys) {
        const value = object[key];
        if (nullable.includes(key) && value === null) continue;
        assert.ok(typeof value === "number" && Number.isFinite(value), `${name}.${key} is ${JSON.stringify(value)}`);
    }
}

const DRAIN = [
    "msgsPerSec",
    "roundTripsPerBatch",
    "snsCallsPerMessage",
    "ddbCallsPerMessage",
    "msPerBatch",
    "emulatorCpuMsPerMessage",
];
const KEYED_DRAIN = [...DRAIN, "keys", "parallelizationFactor", "peakConcurrentBatches", "inversions"];
const DESTINATION = [
    "msgsPerSec",
    "roundTripsPerBatch",
    "destinationCallsPerMessage",
    "entriesPerCall",
    "busChecksPerMessage",
    "ddbCallsPerMessage",
    "msPerBatch",
    "emulatorCpuMsPerMessage",
];
const OFFLOAD = [
    "payloadBytes",
    "p50Ms",
    "p99Ms",
    "dynamodbCalls",
    "s3Calls",
    "itemBytes",
    "s3Bytes",
    "snsMessageBytes",
    "wcu",
];
const RELAY = [
    "snsCallsPerMessage",
    "ddbCallsPerMessage",
    "wcuPerMessage",
    "rcuPerMessage",
    "msgsPerSec",
    "p50LatencyMs",
    "p99LatencyMs",
    "paceMsgsPerSec",
];
const LAMBDA = [
    "archiveBytes",
    "archiveDeflatedBytes",
    "initMs",
    "installedArchiveBytes",
    "installedDeflatedBytes",
    "installedArchiveFiles",
    "installedInitMs",
    "initRuns",
];

/** The drain section, the same in a full run and in `--drain-only`. */
function assertDrain(drain: Record<string, unknown>, messages: number): void {
    for (const relay of ["ours", "naive", "fifo"]) figures(`drain.${relay}`, section(drain, relay), DRAIN);
    for (const relay of ["keyed", "keyedParallel"]) {
        const keyed = section(drain, relay);
        // At a factor above 1 round trips are not counted (docs/cost-and-bench.md says the JSON holds null).
        figures(`drain.${relay}`, keyed, KEYED_DRAIN, relay === "keyedParallel" ? ["roundTripsPerBatch"] : []);
        assert.equal(keyed.inversions, 0, `drain.${relay}: no keyed record out of its key's order`);
    }
    const destinations = section(drain, "destinations");
    assert.deepEqual(Object.keys(destinations).sort(), ["eventbridge", "latencyMs", "sns", "sqs"]);
    const actions = { sns: "PublishBatch", sqs: "SendMessageBatch", eventbridge: "PutEvents" };
    for (const [kind, action] of Object.entries(actions)) {
        const byKind = section(destinations, kind);
        for (const keying of ["keyless", "keyed"]) {
            const { batchAction, ...numbers } = section(byKind, keying);
            assert.equal(batchAction, action, `drain.destinations.${kind}.${keying}.batchAction`);
            const keys = keying === "keyed" ? [...DESTINATION, "inversions"] : DESTINATION;
            figures(`drain.destinations.${kind}.${keying}`, numbers, keys);
        }
        assert.equal(section(byKind, "keyed").inversions, 0, `${kind}: keyed order kept`);
    }
    figures("drain.destinations.latencyMs", section(destinations, "latencyMs"), ["dynamodb", "destination"]);
    figures("drain.latencyMs", section(drain, "latencyMs"), ["dynamodb", "sns"]);
    assert.equal(drain.messages, messages);
}

describe("npm run bench (the smoke: every section runs at the smallest sizes and prints its JSON)", function () {
    this.timeout(15 * 60_000);

    it("--smoke --json: exits 0 with offload, drain, ours, naive, claim and lambda, each key a number", () => {
        const run = bench(["--smoke", "--json"]);
        assert.equal(run.status, 0, `the bench failed:\n${run.stderr.slice(-4000)}`);
        const json = run.json;
        assert.deepEqual(Object.keys(json).sort(), ["claim", "drain", "lambda", "naive", "offload", "ours"]);

        const offload = section(json, "offload");
        assert.equal(offload.writes, 3);
        for (const mode of ["inline", "offloaded", "offloaded1mb"])
            figures(`offload.${mode}`, section(offload, mode), OFFLOAD);

        assertDrain(section(json, "drain"), 100);

        for (const relay of ["ours", "naive"]) {
            const r = section(json, relay);
            assert.deepEqual(
                Object.keys(r).sort(),
                [...RELAY, "p99PartsMs", "withSnsLatency", "unitsByPerMessage", "callsPerMessage", "msPerCall"].sort(),
            );
            figures(`${relay}`, Object.fromEntries(RELAY.map((k) => [k, r[k]])), RELAY);
            const parts = section(r, "p99PartsMs");
            figures(`${relay}.p99PartsMs`, parts, ["write", "waitForRelay", "relay"]);
            const slow = section(r, "withSnsLatency");
            assert.equal(slow.latencyMs, 5);
            for (const k of ["unitsByPerMessage", "callsPerMessage", "msPerCall"]) section(r, k);
        }
        assert.ok((section(section(json, "ours"), "callsPerMessage").TransactWriteItems as number) > 0);

        const claim = section(json, "claim");
        assert.deepEqual(Object.keys(claim).sort(), ["100", "200"]);
        for (const size of ["100", "200"]) figures(`claim.${size}`, section(claim, size), ["rcu", "pages"]);

        const lambda = section(json, "lambda");
        assert.deepEqual(Object.keys(lambda).sort(), [...LAMBDA, "nodeVersion"].sort());
        figures("lambda", Object.fromEntries(LAMBDA.map((k) => [k, lambda[k]])), LAMBDA);
        assert.equal(lambda.initRuns, 1);
        assert.match(String(lambda.nodeVersion), /^v22\./);
    });

    it("--drain-only --smoke --json: exits 0 with the drain section alone", () => {
        const run = bench(["--drain-only", "--smoke", "--json"]);
        assert.equal(run.status, 0, `the bench failed:\n${run.stderr.slice(-4000)}`);
        assert.deepEqual(Object.keys(run.json), ["drain"]);
        assertDrain(section(run.json, "drain"), 100);
    });

    it("refuses an unknown option with exit code 2, naming it and the options there are", () => {
        const run = spawnSync("npm", ["run", "--silent", "bench", "--", "--smok"], { cwd: REPO, encoding: "utf8" });
        assert.equal(run.status, 2);
        assert.match(run.stderr, /unknown option "--smok"; the options are --quick, --smoke,/);
    });
});
