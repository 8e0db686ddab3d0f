/**
 * The fault scenarios at CI scale (OUTBOX_FAULT_MESSAGES, default 320 messages over all scenarios, 10% faults):
 * each runs on DynamoDB Local's real stream through the local mapping into the real publisher and sweeper, with
 * the AWS fault server (a fake: no emulator fails single PublishBatch entries or loses an answer after
 * accepting) and, for DynamoDB throttling, conflicts and killed invocations, a fake wrapping client (DynamoDB
 * Local cannot throttle or conflict). Two scenarios publish to an SQS FIFO queue and to an EventBridge bus (the
 * fault server's stand-in) instead of the SNS topic, with faults in those services' codes; the last ends with the
 * operator's redrive of what was dead-lettered. `npm run test:faults` runs the same scenarios standalone, at any
 * scale.
 */
import assert from "node:assert/strict";
import { faultScale, scenarioMessages } from "../../support/faults/scale";
import {
    inboxSummaryLine,
    redriveProblems,
    runScenario,
    scenarioLine,
    summaryLine,
    type ScenarioResult,
} from "../../support/faults/scenario";
import { SCENARIOS } from "../../support/faults/scenarios";

describe("fault scenarios (DynamoDB Local + local mapping + fault-injecting SNS)", function () {
    this.timeout(300_000);
    const scale = faultScale();
    const results: ScenarioResult[] = [];
    const messages = scenarioMessages(
        scale,
        SCENARIOS.map((s) => s.minMessages ?? 0),
    );

    after(function () {
        if (results.length > 0) console.log(`      ${inboxSummaryLine(results)}\n      ${summaryLine(results)}`);
    });

    it("splits the run's messages over the scenarios so they add up to the total, each at least its plan's minimum", function () {
        assert.equal(
            messages.reduce((sum, n) => sum + n, 0),
            Math.max(
                scale.totalMessages,
                SCENARIOS.reduce((sum, s) => sum + (s.minMessages ?? 0), 0),
            ),
        );
        SCENARIOS.forEach((s, i) => assert.ok(messages[i]! >= (s.minMessages ?? 1), `${s.name}: ${messages[i]}`));
        assert.ok(SCENARIOS.some((s) => (s.minMessages ?? 0) > 0));
    });

    SCENARIOS.forEach((spec, i) => {
        it(`${spec.name}: ${spec.description}; nothing lost, per-key order kept, nothing left pending, DLQ exact; the inbox consumer applies each event once`, async function () {
            const r = await runScenario(spec, {
                messages: messages[i]!,
                rate: scale.rate,
                seed: scale.seed + i,
            });
            results.push(r);
            const line = scenarioLine(r);
            assert.ok(r.injected > 0 || scale.rate === 0, `faults were injected: ${line}`);
            assert.equal(r.lost, 0, `lost = 0: ${line}`);
            assert.equal(
                r.destination,
                spec.destination === undefined
                    ? "sns"
                    : `${spec.destination.kind}${spec.destination.fifo === true ? "-fifo" : ""}`,
                `published to the scenario's destination: ${line}`,
            );
            // On a bus, acceptance shows only the order the publisher put each key's events in (a bus keeps none).
            assert.equal(
                r.inversions,
                0,
                r.ordered ? `per-key order: ${line}` : `each key's events put in order: ${line}`,
            );
            assert.equal(r.leftOver, 0, `no record pending or claimed: ${line}`);
            assert.deepEqual(r.dlqUnexpected, [], `only expired and poison messages in the DLQ: ${line}`);
            assert.deepEqual(r.dlqMissing, [], `every expired and poison message in the DLQ: ${line}`);
            assert.deepEqual(r.publishedButDeadLettered, [], `expired and poison messages never published: ${line}`);
            assert.deepEqual(r.wrongReason, [], `DLQ reasons: ${line}`);
            assert.equal(r.reuseAccepted, 0, `every write reusing an id in another partition refused: ${line}`);
            const c = r.consumer;
            assert.ok(
                c.redelivered > 0 || scale.rate === 0,
                `redeliveries were injected on the consumer's side: ${line}`,
            );
            assert.ok(c.expected > 0, `the consumer had messages: ${line}`);
            assert.deepEqual(c.appliedTwice, [], `no effect applied twice: ${line}`);
            assert.deepEqual(c.missing, [], `every published event applied: ${line}`);
            assert.deepEqual(c.unexpected, [], `no effect for an event never published: ${line}`);
            assert.equal(c.appliedOnce, c.expected, `each published event applied exactly once: ${line}`);
            assert.equal(c.markers, c.expected, `one marker per event: ${line}`);
            assert.equal(c.poisonDeadLettered, c.poison, `every poison message reached the consumer's DLQ: ${line}`);
            assert.equal(c.leftInQueue, 0, `the consumer's queue emptied: ${line}`);
            if (spec.faults(scale.rate).redrive === true) {
                assert.ok(r.redrive !== undefined, `the redrive ran: ${line}`);
                assert.ok(
                    r.publishedThenExpired.length > 0,
                    `events published and then dead-lettered as expired, for the redrive to bring back: ${line}`,
                );
                assert.deepEqual(
                    redriveProblems(r.redrive, r),
                    [],
                    `every dead letter redriven and delivered under its own identity: ${line}`,
                );
            }
            if (spec.faults(scale.rate).skewMix === undefined) return;
            const k = r.skew!;
            assert.ok(
                k.carriedWrites > 0,
                `the correct writer wrote keyed messages behind a FENCE hours ahead: ${line}`,
            );
            assert.deepEqual(
                k.carriedNotAhead,
                [],
                `each was accepted and stamped with the fence's time (delivered and in order: lost and inversions above): ${line}`,
            );
            assert.ok(
                k.stuckPartitions > k.maxPartitionsPerRun,
                `more stuck partitions than maxPartitionsPerRun: ${line}`,
            );
            assert.deepEqual(
                [k.stuckChanged, k.stuckDelivered],
                [[], []],
                `the stuck items are as planted, none delivered: ${line}`,
            );
            assert.ok(
                k.emptyStatusRows > 0 && k.fastRecords > 0,
                `rows with status "" and records stamped ahead were written: ${line}`,
            );
            assert.ok(
                k.census !== undefined && k.census.stampedAhead > 0 && k.sweptPartitions > 0,
                `the sweeper had healthy partitions to deliver, records stamped ahead among them: ${line}`,
            );
            assert.deepEqual(k.undelivered, [], `the sweeper delivered every healthy partition: ${line}`);
            assert.ok(
                k.runsToDeliver <= k.bound,
                `within ⌈N / maxPartitionsPerRun⌉ runs (+ the runs until the last record is due): ${line}`,
            );
        });
    });
});
