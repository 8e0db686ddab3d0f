/**
 * The smoke of `npm run bench:burst` (issue 35 item 5): at the smallest sizes (`--smoke`), it exits 0 and prints
 * one JSON line with the keyless and the keyed burst, each with its stages, sweeper, publisher, mapping and CPU
 * figures, so a part that throws fails `npm test`. It asserts no timing: the figures of a smoke run are not read.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";

const REPO = path.join(__dirname, "..", "..", "..");

function burst(args: readonly string[]) {
    return spawnSync("npm", ["run", "--silent", "bench:burst", "--", ...args], {
        cwd: REPO,
        encoding: "utf8",
        env: { ...process.env, npm_config_update_notifier: "false", FORCE_COLOR: "0" },
        maxBuffer: 16 * 1024 * 1024,
    });
}

describe("npm run bench:burst (the smoke: both bursts run at the smallest sizes and print their JSON)", function () {
    this.timeout(5 * 60_000);

    it("--smoke --json --load 1: exits 0 with keyless, keyed, keyedOverKeyless and settings, every record acknowledged", () => {
        const run = burst(["--smoke", "--json", "--load", "1"]);
        assert.equal(run.status, 0, `the bench failed:\n${run.stderr.slice(-4000)}`);
        const json = JSON.parse(run.stdout.trim().split("\n").pop() ?? "") as Record<string, any>;
        assert.deepEqual(Object.keys(json).sort(), ["keyed", "keyedOverKeyless", "keyless", "settings"]);
        assert.deepEqual(json.settings, { messages: 60, keys: 3, load: 1, sweepAfterSeconds: 5, warmUp: 20 });
        for (const kind of ["keyless", "keyed"]) {
            const r = json[kind];
            assert.equal(r.messages, 60);
            for (const key of ["p50LatencyMs", "p99LatencyMs", "msgsPerSec", "writesPerSec"])
                assert.ok(Number.isFinite(r[key]), `${kind}.${key} is ${r[key]}`);
            assert.deepEqual(Object.keys(r.stagesMs).sort(), ["relay", "waitForStream", "waitInBuffer", "write"]);
            assert.ok(r.publisher.invocations > 0, `${kind}: the publisher was invoked`);
            assert.ok(Number.isFinite(r.publisher.msPerInvocation), `${kind}: every invocation ended`);
            assert.ok(r.cpu.loadMsPerMessage > 0, `${kind}: the load spun`);
            const shares = Object.values(r.publisher.timeShare as Record<string, number>).reduce((a, b) => a + b, 0);
            assert.ok(Math.abs(shares - 1) < 0.01, `${kind}: the invocation time shares add up to 1 (${shares})`);
        }
        assert.equal(json.keyless.publisher.callsPerMessage.claim, 0, "keyless records take no claim");
        assert.ok(json.keyed.publisher.callsPerMessage.claim > 0, "keyed records go through the claim path");
    });

    it("refuses a bad --load with exit code 2, naming the flag, the value and the range", () => {
        const run = burst(["--load", "65"]);
        assert.equal(run.status, 2);
        assert.match(run.stderr, /--load is "65"; expected an integer from 0 to 64/);
    });
});
