/**
 * The sweeper's cursor kept in the table: partitions that never drain never starve the others.
 */
import assert from "node:assert/strict";
import { PARTITIONS_IN_FLIGHT } from "../../../runtime/relay/claimed-delivery";
import { claimSort } from "../../../runtime/record/keys";
import { ATTR, SWEEP_CURSOR_PK, SWEEP_CURSOR_SK } from "../../../runtime/schema";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { FakeDynamoDb, PASS, throttled } from "../../support/store/fake-client";
import { RecordingLogger } from "../../support/store/helpers";
import * as relay from "../../support/runtime/relay-fixtures";
import type { Harness } from "../../support/runtime/harness";

/**
 * Write one message to each of the partitions `${prefix}0` to `${prefix}${count - 1}`, one write each, in that
 * order; their ids in that order.
 */
async function writeOnePerPartition(h: Harness, prefix: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 0; n < count; n += 1)
        ids.push(
            ...(await h.writer.write({ messages: [{ partition: `${prefix}${n}`, type: "T", payload: n }] })).messageIds,
        );
    return ids;
}

describe("createSweeper's sweep cursor (DynamoDB Local + AWS fault server)", function () {
    const openHarness = relay.harnessPerTest();

    describe("partitions that never drain never starve the others (a sweep cursor kept in the table)", function () {
        /** Give `partition` an item no sweep can ever drain, of one of three kinds. */
        async function plantStuck(h: Harness, partition: string, kind: number): Promise<void> {
            const old = h.clock.now() - 1_000;
            if (kind === 0) {
                // An undecodable item: its envelope is not JSON.
                await relay.putRawItem(h, {
                    PK: { S: partition },
                    SK: { S: "OUTBOX#broken#sns" },
                    record_id: { S: `${partition}/broken` },
                    envelope_json: { S: "not json" },
                    status: { S: "pending" },
                    claim_sort: { S: claimSort(old, 0n) },
                });
            } else if (kind === 1) {
                await relay.putRecord(h, partition, `${partition}/held`, old, { change: relay.heldByAnother(h) });
            } else {
                // A key tail behind a held head: the head is claimed by a live relay, the tail is pending and due.
                await relay.putRecord(h, partition, `${partition}/head`, old - 1_000, {
                    orderingKey: "held",
                    seq: 0n,
                    change: relay.heldByAnother(h),
                });
                await relay.putRecord(h, partition, `${partition}/tail`, old, { orderingKey: "held", seq: 1n });
            }
        }

        it("reaches every healthy partition within ⌈N / maxPartitionsPerRun⌉ runs, each a cold start, when the partitions first in ClaimIndex's scan order never drain: undecodable items, rows no claim can take, key tails behind a held head", async function () {
            const h = await openHarness();
            const healthy = await writeOnePerPartition(h, "P", 10);
            const order = await relay.claimIndexOrder(h);
            assert.equal(order.length, 10);
            // More stuck partitions than maxPartitionsPerRun, and first in scan order: today's worst case.
            for (const [i, partition] of order.slice(0, 6).entries()) await plantStuck(h, partition, i % 3);
            h.clock.advance(200_000);
            const maxPartitionsPerRun = 2;
            const runs = Math.ceil(order.length / maxPartitionsPerRun);
            for (let run = 1; run <= runs; run += 1) {
                const result = await createSweeper({ ...h.config(), maxPartitionsPerRun })();
                assert.equal(
                    result.partitions,
                    maxPartitionsPerRun,
                    `run ${run} drains its ${maxPartitionsPerRun} partitions`,
                );
                if (run === 1) {
                    const row = (await h.items()).find((i) => i[ATTR.pk]?.S === SWEEP_CURSOR_PK);
                    assert.equal(
                        row?.[ATTR.sweepCursor]?.M?.[ATTR.pk]?.S,
                        order[1],
                        "the cursor, a row of the table (so it survives cold starts), is past the partitions drained",
                    );
                }
            }
            assert.deepEqual(
                relay.publishedIds(h).sort(),
                [...healthy].sort(),
                `every healthy record within ${runs} runs, none of the stuck ones`,
            );
        });

        it("a run that runs out of time resumes, on the next run, at the first partition it did not reach", async function () {
            const h = await openHarness();
            // One more partition than a run drains at once, so a run out of time after its first group leaves one.
            const healthy = await writeOnePerPartition(h, "T", PARTITIONS_IN_FLIGHT + 1);
            const [first] = await relay.claimIndexOrder(h);
            await plantStuck(h, first!, 0);
            h.clock.advance(200_000);
            const reached: number[] = [];
            for (let run = 1; run <= 2; run += 1) {
                // Time for one group per run: it runs out once the run has published.
                let publishes = 0;
                const sns = { send: (command: object) => ((publishes += 1), h.sns.send(command as never)) };
                const context = {
                    awsRequestId: `run-${run}`,
                    getRemainingTimeInMillis: () => (publishes > 0 ? 0 : 60_000),
                };
                reached.push(
                    (await createSweeper({ ...h.config({ sns }), reserveMs: 1 })(undefined, context)).partitions,
                );
            }
            assert.equal(
                reached[0],
                PARTITIONS_IN_FLIGHT,
                "the first run reaches one group, the stuck partition first in scan order among them",
            );
            assert.deepEqual(
                relay.publishedIds(h).sort(),
                [...healthy].sort(),
                "the stuck partition first in scan order is passed, not retried every run",
            );
        });

        it("a run that runs out of time resumes after the last partition it reached, never at it and never past one it did not reach: a never-draining partition reached last is not taken again before the ones after it", async function () {
            const h = await openHarness();
            // Two more partitions than a run drains at once, so a run out of time after its first group leaves two.
            const healthy = await writeOnePerPartition(h, "R", PARTITIONS_IN_FLIGHT + 2);
            const order = await relay.claimIndexOrder(h);
            const reachedLast = order[PARTITIONS_IN_FLIGHT - 1]!;
            await plantStuck(h, reachedLast, 1);
            h.clock.advance(200_000);
            // The first run has time for one group: it runs out once the run has published.
            let publishes = 0;
            const sns = { send: (command: object) => ((publishes += 1), h.sns.send(command as never)) };
            const first = await createSweeper({ ...h.config({ sns }), reserveMs: 1 })(undefined, {
                awsRequestId: "run-1",
                getRemainingTimeInMillis: () => (publishes > 0 ? 0 : 60_000),
            });
            assert.deepEqual([first.partitions, first.published], [PARTITIONS_IN_FLIGHT, PARTITIONS_IN_FLIGHT]);
            // The second has the time, and room for two partitions: the two the first did not reach.
            const second = await createSweeper({ ...h.config(), maxPartitionsPerRun: 2 })();
            assert.equal(second.published, 2, `not ${reachedLast} again, reached last and never drained`);
            assert.deepEqual(relay.publishedIds(h).sort(), [...healthy].sort());
        });

        it("knows its position by the whole ClaimIndex key, not by the partition key alone: a cursor moved to a later item of the same partition is written, so a partition that never drains is passed", async function () {
            const h = await openHarness();
            const writtenAt = h.clock.now();
            const healthy: string[] = [];
            for (const partition of ["S0", "S1"])
                healthy.push(
                    ...(await h.writer.write({ messages: [{ partition, type: "T", payload: 1 }] })).messageIds,
                );
            const [x, y] = await relay.claimIndexOrder(h);
            h.clock.advance(200_000);
            const sweep = () => createSweeper({ ...h.config(), maxPartitionsPerRun: 1 })();
            const cursorRow = async () =>
                (await h.items()).find((i) => i[ATTR.pk]?.S === SWEEP_CURSOR_PK && i[ATTR.sk]?.S === SWEEP_CURSOR_SK)?.[
                    ATTR.sweepCursor
                ]?.M;
            assert.equal((await sweep()).published, 1, `${x}, first in scan order`);
            const afterFirst = await cursorRow();
            assert.equal(afterFirst?.[ATTR.pk]?.S, x);
            // x gets a due item no sweep can drain, after the cursor's item: the next run takes x again (nothing to
            // publish) and moves the cursor to that item, in the same partition.
            await relay.putRecord(h, x!, `${x}/held`, writtenAt + 1, { change: relay.heldByAnother(h) });
            assert.equal((await sweep()).published, 0);
            const afterSecond = await cursorRow();
            assert.equal(afterSecond?.[ATTR.pk]?.S, x);
            assert.notEqual(afterSecond?.[ATTR.sk]?.S, afterFirst?.[ATTR.sk]?.S, "moved within the partition");
            assert.equal((await sweep()).published, 1, `${y}, past the item no sweep drains`);
            assert.deepEqual(relay.publishedIds(h).sort(), [...healthy].sort());
        });

        /** A sweep cursor naming a partition that is gone, at a claim position no scan accepts. */
        async function putBadCursor(h: Harness): Promise<void> {
            await relay.putRawItem(h, {
                PK: { S: SWEEP_CURSOR_PK },
                SK: { S: "META" },
                [ATTR.sweepCursor]: {
                    M: { PK: { S: "C-gone" }, SK: { S: "OUTBOX#x#sns" }, claim_sort: { S: "not-a-position" } },
                },
            });
        }

        it("a cursor that cannot be read, or that the scan refuses, never stops a sweep: the run scans from the start of the index", async function () {
            const h = await openHarness();
            const ids = await writeOnePerPartition(h, "C", 3);
            h.clock.advance(200_000);
            await putBadCursor(h);
            // Fakes in front of DynamoDB Local: no emulator fails one GetItem or refuses one ExclusiveStartKey on demand.
            const unreadable = new FakeDynamoDb(h.ddb).on("GetItem", (input) =>
                input.Key?.PK?.S === SWEEP_CURSOR_PK ? Promise.reject(throttled()) : PASS,
            );
            const logger = new RecordingLogger();
            assert.equal(
                (
                    await createSweeper({
                        ...h.config({ dynamodb: unreadable as never }),
                        logger,
                        maxPartitionsPerRun: 1,
                    })()
                ).published,
                1,
            );
            assert.ok(
                logger.lines.some((l) => l.level === "error" && /sweep cursor could not be read/.test(l.message)),
            );
            const refusing = new FakeDynamoDb(h.ddb).on("Scan", (input) =>
                input.ExclusiveStartKey !== undefined && input.ExclusiveStartKey[ATTR.claimSort]?.S === "not-a-position"
                    ? Promise.reject(
                          Object.assign(new Error("The provided starting key is invalid"), {
                              name: "ValidationException",
                          }),
                      )
                    : PASS,
            );
            await putBadCursor(h);
            const result = await createSweeper({
                ...h.config({ dynamodb: refusing as never }),
                maxPartitionsPerRun: 10,
            })();
            assert.equal(result.published, 2, "the rest, from the start of the index");
            assert.deepEqual(relay.publishedIds(h).sort(), [...ids].sort());
        });
    });
});
