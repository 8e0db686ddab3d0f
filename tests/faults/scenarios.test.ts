/**
 * The fault scenarios at CI scale (OUTBOX_FAULT_MESSAGES, default 320 messages over all scenarios, 10% faults):
 * each runs on DynamoDB Local's real stream through the local mapping into the real publisher and sweeper, with
 * the fault-injecting SNS server (a fake: no emulator fails single PublishBatch entries or loses an answer after
 * accepting) and, for DynamoDB throttling, conflicts and killed invocations, a fake wrapping client (DynamoDB
 * Local cannot throttle or conflict). `npm run test:faults` runs the same scenarios standalone, at any scale.
 */
import assert from "node:assert/strict";
import { faultScale, messagesFor } from "./support/scale";
import { runScenario, scenarioLine, summaryLine, type ScenarioResult } from "./support/scenario";
import { SCENARIOS } from "./support/scenarios";

describe("fault scenarios (DynamoDB Local + local mapping + fault-injecting SNS)", function () {
    this.timeout(300_000);
    const scale = faultScale();
    const results: ScenarioResult[] = [];

    after(function () {
        if (results.length > 0) console.log(`      ${summaryLine(results)}`);
    });

    SCENARIOS.forEach((spec, i) => {
        it(`${spec.name}: ${spec.description}; nothing lost, per-key order kept, nothing left pending, DLQ exact`, async function () {
            const r = await runScenario(spec, { messages: messagesFor(scale, i, SCENARIOS.length), rate: scale.rate, seed: scale.seed + i });
            results.push(r);
            const line = scenarioLine(r);
            assert.ok(r.injected > 0 || scale.rate === 0, `faults were injected: ${line}`);
            assert.equal(r.lost, 0, `lost = 0: ${line}`);
            assert.equal(r.inversions, 0, `per-key order: ${line}`);
            assert.equal(r.leftOver, 0, `no record pending or claimed: ${line}`);
            assert.deepEqual(r.dlqUnexpected, [], `only expired and poison messages in the DLQ: ${line}`);
            assert.deepEqual(r.dlqMissing, [], `every expired and poison message in the DLQ: ${line}`);
            assert.deepEqual(r.publishedButDeadLettered, [], `expired and poison messages never published: ${line}`);
            assert.deepEqual(r.wrongReason, [], `DLQ reasons: ${line}`);
            assert.equal(r.reuseAccepted, 0, `every write reusing an id in another partition refused: ${line}`);
        });
    });
});
