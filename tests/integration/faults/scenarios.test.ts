/**
 * The fault scenarios at CI scale (OUTBOX_FAULT_MESSAGES, default 320 messages over all scenarios, 10% faults):
 * each runs on DynamoDB Local's real stream through the local mapping into the real publisher and sweeper, with
 * the fault-injecting SNS server (a fake: no emulator fails single PublishBatch entries or loses an answer after
 * accepting) and, for DynamoDB throttling, conflicts and killed invocations, a fake wrapping client (DynamoDB
 * Local cannot throttle or conflict). `npm run test:faults` runs the same scenarios standalone, at any scale.
 */
import assert from "node:assert/strict";
import { faultScale, messagesFor } from "../../support/faults/scale";
import { inboxSummaryLine, runScenario, scenarioLine, summaryLine, type ScenarioResult } from "../../support/faults/scenario";
import { SCENARIOS } from "../../support/faults/scenarios";

describe("fault scenarios (DynamoDB Local + local mapping + fault-injecting SNS)", function () {
    this.timeout(300_000);
    const scale = faultScale();
    const results: ScenarioResult[] = [];

    after(function () {
        if (results.length > 0) console.log(`      ${inboxSummaryLine(results)}\n      ${summaryLine(results)}`);
    });

    SCENARIOS.forEach((spec, i) => {
        it(`${spec.name}: ${spec.description}; nothing lost, per-key order kept, nothing left pending, DLQ exact; the inbox consumer applies each event once`, async function () {
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
            const c = r.consumer;
            assert.ok(c.redelivered > 0 || scale.rate === 0, `redeliveries were injected on the consumer's side: ${line}`);
            assert.ok(c.expected > 0, `the consumer had messages: ${line}`);
            assert.deepEqual(c.appliedTwice, [], `no effect applied twice: ${line}`);
            assert.deepEqual(c.missing, [], `every published event applied: ${line}`);
            assert.deepEqual(c.unexpected, [], `no effect for an event never published: ${line}`);
            assert.equal(c.appliedOnce, c.expected, `each published event applied exactly once: ${line}`);
            assert.equal(c.markers, c.expected, `one marker per event: ${line}`);
            assert.equal(c.poisonDeadLettered, c.poison, `every poison message reached the consumer's DLQ: ${line}`);
            assert.equal(c.leftInQueue, 0, `the consumer's queue emptied: ${line}`);
        });
    });
});
