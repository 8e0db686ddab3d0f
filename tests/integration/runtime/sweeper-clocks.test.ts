/**
 * The sweeper and time: records stamped ahead of its clock, a sweeper whose own clock is wrong (it sweeps by
 * DynamoDB's), and the OldestPendingAge it emits every run.
 */
import assert from "node:assert/strict";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { SWEEPER_METRICS } from "../../../runtime/observability/metric-catalog";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { FakeDynamoDb } from "../../support/store/fake-client";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { dynamoClient } from "../../support/dynamodb";
import { closeAfterEach, putRecord, entryFault, publishedIds } from "../../support/runtime/relay-fixtures";

describe("createSweeper and clocks (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    /** The OldestPendingAge values of the lines written so far, one per run, and empties the lines. */
    function oldestAges(): number[] {
        const values = h.metricLines
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .filter((d) => SWEEPER_METRICS.oldestPendingAge in d)
            .map((d) => d[SWEEPER_METRICS.oldestPendingAge] as number);
        h.metricLines.length = 0;
        return values;
    }

    describe("a created_at ahead of the sweeper's clock (a writer whose clock ran fast)", function () {
        it("delivers a record stamped further ahead than sweepAfter at once, and its key's records in order", async function () {
            h = await createHarness();
            const now = h.clock.now();
            const day = 86_400_000;
            // Rows already written by a writer whose clock ran a day ahead, or carried forward from such a writer's FENCE.
            const future = await putRecord(h, "FUTURE", "future", now + day);
            const k1 = await putRecord(h, "KEYED", "k1", now - 10_000, { orderingKey: "k", seq: 1n });
            const k2 = await putRecord(h, "KEYED", "k2", now + day, { orderingKey: "k", seq: 2n });
            h.clock.advance(5_000);
            await createSweeper(h.config())();
            assert.deepEqual(
                publishedIds(h),
                [future],
                "at once, not a day later; k2 waits behind k1, which is not due yet",
            );
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                [k1, k2].map((id) => byId.get(id)),
                ["pending", "pending"],
            );
            h.clock.advance(120_000);
            await createSweeper(h.config())();
            assert.deepEqual(publishedIds(h), [future, k1, k2], "per-key order kept");
        });

        it("counts such a record in OldestPendingAge from its first claim, so a future stamp cannot hide a stuck record", async function () {
            h = await createHarness();
            const stuck = await putRecord(h, "FUTURE", "future-stuck", h.clock.now() + 86_400_000);
            h.server.setFaults({
                entries: [entryFault(stuck, { code: "InternalError" })],
            });
            assert.equal((await createSweeper(h.config())()).failedPartitions, 1, "tried at once, and refused");
            assert.deepEqual(oldestAges(), [0], "never claimed before: counted from now");
            h.clock.advance(60_000);
            await createSweeper(h.config())();
            assert.deepEqual(oldestAges(), [60_000], "counted from its first claim, not from a day ahead");
        });
    });

    describe("a sweeper whose clock is wrong sweeps by DynamoDB's clock (issue 38 item 7: the Date header of DynamoDB Local's answers)", function () {
        for (const [how, offsetMs] of [
            ["10 minutes slow", -600_000],
            ["10 minutes fast", 600_000],
        ] as const) {
            it(`a sweeper whose clock runs ${how} leaves fresh records to the stream path, which publishes them once, and warns`, async function () {
                h = await createHarness();
                const written = (
                    await h.writer.write({
                        messages: [
                            { partition: "ORDER#1", type: "T", payload: 1, orderingKey: "k" },
                            { partition: "ORDER#2", type: "T", payload: 2 },
                        ],
                    })
                ).messageIds;
                // A client whose answers carry DynamoDB Local's own Date (the harness's follows its hand-driven clock),
                // and a sweeper clock off by the offset from real time, as the writer's (started at real time) is not.
                const realDynamo = await dynamoClient();
                const logger = new RecordingLogger();
                const wrong = { now: () => Date.now() + offsetMs, sleep: async () => undefined };
                const result = await createSweeper(h.config({ dynamodb: realDynamo, clock: wrong, logger }))();
                assert.deepEqual(
                    [result.published, result.partitions, h.published().length],
                    [0, 0, 0],
                    "nothing is due by DynamoDB's clock: the records are seconds old",
                );
                const warnings = logger.lines.filter((l) => l.level === "warn");
                assert.equal(warnings.length, 1, JSON.stringify(logger.lines));
                assert.match(
                    warnings[0]!.message,
                    /^sweeper: this clock and DynamoDB's \(the Date header of its answer\) disagree by more than 5 s; this run sweeps by DynamoDB's time/,
                );
                const offset = warnings[0]!.attributes!.clock_offset_ms as number;
                assert.ok(Math.abs(offset + offsetMs) < 5_000, `offset ${offset} ms, about ${-offsetMs}`);
                const sampled = h.metricLines
                    .map((l) => JSON.parse(l) as Record<string, unknown>)
                    .map((d) => d[SWEEPER_METRICS.clockOffset]);
                assert.deepEqual(sampled, [offset], "SweeperClockOffset carries it");

                assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
                assert.deepEqual(publishedIds(h).sort(), [...written].sort(), "the stream path publishes each once");
            });
        }

        it("keeps its own clock when the answers carry no Date header (a fake client), and when the clocks agree", async function () {
            h = await createHarness();
            await h.writer.write({ messages: [{ partition: "ORDER#1", type: "T", payload: 1 }] });
            const noDate = new FakeDynamoDb(h.ddb).on("GetItem", () => ({}));
            const logger = new RecordingLogger();
            // Its clock is 10 minutes fast, and nothing tells it: the record looks 10 minutes old, as it did before.
            const fast = { now: () => h.clock.now() + 600_000, sleep: async () => undefined };
            const blind = await createSweeper(h.config({ dynamodb: noDate, clock: fast, logger }))();
            assert.equal(blind.published, 1);
            assert.deepEqual(logger.warnings(), []);
            assert.ok(
                h.metricLines.every((l) => !(SWEEPER_METRICS.clockOffset in (JSON.parse(l) as object))),
                "no offset without a header",
            );
            const agreeing = new RecordingLogger();
            await createSweeper(h.config({ logger: agreeing }))();
            assert.deepEqual(agreeing.warnings(), [], "the harness's DynamoDB follows its clock: they agree");
        });
    });

    describe("OldestPendingAge", function () {
        it("is emitted every run: the age of the oldest record in ClaimIndex, before the run delivers it, and 0 when none is", async function () {
            h = await createHarness();
            const sweep = createSweeper(h.config());
            await sweep();
            assert.deepEqual(oldestAges(), [0], "an empty index");
            await h.writer.write({ messages: [{ partition: "A", type: "T", payload: "a" }] });
            h.clock.advance(30_000);
            assert.equal((await sweep()).published, 0);
            assert.deepEqual(oldestAges(), [30_000], "younger than sweepAfter, left to the stream path, still counted");
            await h.writer.write({ messages: [{ partition: "B", type: "T", payload: "b" }] });
            h.clock.advance(100_000);
            assert.equal((await sweep()).published, 1, "A is 130 s old and delivered");
            assert.deepEqual(oldestAges(), [130_000], "A, read before it was delivered");
            await sweep();
            assert.deepEqual(oldestAges(), [100_000], "B is the oldest left");
            await sweep();
            const line = JSON.parse(h.metricLines.find((l) => l.includes(SWEEPER_METRICS.oldestPendingAge))!) as {
                _aws: { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] };
            };
            assert.deepEqual(
                line._aws.CloudWatchMetrics[0]!.Metrics.find((m) => m.Name === SWEEPER_METRICS.oldestPendingAge),
                { Name: SWEEPER_METRICS.oldestPendingAge, Unit: "Milliseconds" },
            );
        });

        it("counts a claimed record too, and is not emitted when the ClaimIndex scan fails", async function () {
            h = await createHarness();
            await h.writer.write({ messages: [{ partition: "C", type: "T", payload: "c" }] });
            h.clock.advance(10_000);
            const claimed = await new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock }).claim(
                "C",
                { owner: "other", version: 1n },
                10,
            );
            assert.equal(claimed.length, 1);
            h.clock.advance(5_000);
            await createSweeper(h.config())();
            assert.deepEqual(oldestAges(), [15_000]);
            // A fake in front of DynamoDB Local: no emulator fails one index scan on demand.
            const dynamodb = {
                send: (command: object) =>
                    command instanceof ScanCommand
                        ? Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }))
                        : h.ddb.send(command as never),
            };
            await assert.rejects(
                createSweeper({ ...h.config(), dynamodb })(),
                (err: unknown) => isOutboxError(err, "THROTTLED") && /claim index scan failed/.test(err.message),
            );
            assert.deepEqual(oldestAges(), [], "no value rather than a wrong one");
        });
    });
});
