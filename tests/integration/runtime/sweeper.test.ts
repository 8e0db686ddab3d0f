/**
 * The sweeper on DynamoDB Local and the AWS fault server: records whose stream event never reached the
 * publisher are found through the sparse ClaimIndex and delivered within one sweep; expired ones go to the DLQ.
 * Not proven here: the schedule (component tests) and GSI lag (DynamoDB Local's indexes are synchronous).
 */
import assert from "node:assert/strict";
import { PutItemCommand, QueryCommand, ScanCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { PARTITIONS_IN_FLIGHT } from "../../../runtime/relay/claimed-delivery";
import { SWEEPER_METRICS } from "../../../runtime/observability/metric-catalog";
import { marshalRecord, pendingRecord } from "../../../runtime/record/codec";
import { claimSort } from "../../../runtime/record/keys";
import { ATTR, CLAIM_INDEX, EXPIRY_INDEX, SWEEP_CURSOR_PK, SWEEP_CURSOR_SK } from "../../../runtime/schema";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { FakeDynamoDb, PASS, throttled } from "../../support/store/fake-client";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { dynamoClient } from "../../support/dynamodb";

describe("createSweeper (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    afterEach(async function () {
        await h?.close();
    });

    it("publishes within one sweep the records whose stream events were never delivered, keyed ones in order", async function () {
        h = await createHarness();
        const keyless = (
            await h.writer.write({
                messages: [1, 2, 3].map((n) => ({ partition: `ORDER#${n}`, type: "T", payload: n })),
            })
        ).messageIds;
        const keyed: string[] = [];
        for (let n = 0; n < 4; n += 1) {
            keyed.push(
                ...(
                    await h.writer.write({
                        messages: [{ partition: "ACCOUNT#7", type: "T", payload: { n }, orderingKey: "acct-7" }],
                    })
                ).messageIds,
            );
            h.clock.advance(1);
        }
        h.clock.advance(121_000);
        const result = await createSweeper(h.config())();
        assert.deepEqual(result, {
            published: 7,
            expired: 0,
            deadLettered: 0,
            partitions: 4,
            failedPartitions: 0,
            failedRecords: 0,
        });
        const published = h.published().map((p) => p.id);
        assert.deepEqual([...published].sort(), [...keyless, ...keyed].sort());
        assert.deepEqual(
            published.filter((id) => keyed.includes(id)),
            keyed,
            "per-key order",
        );
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
        assert.deepEqual(
            await createSweeper(h.config())(),
            { published: 0, expired: 0, deadLettered: 0, partitions: 0, failedPartitions: 0, failedRecords: 0 },
            "a second sweep finds nothing",
        );
    });

    it("leaves records younger than sweepAfter to the stream path, unclaimed", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "old" }] });
        h.clock.advance(100_000);
        const young = (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "young" }] }))
            .messageIds[0];
        h.clock.advance(30_000);
        const result = await createSweeper(h.config())();
        assert.equal(result.published, 1);
        assert.equal(h.published().length, 1);
        const youngRecord = (await h.records()).find((r) => r.recordId === young)!;
        assert.equal(youngRecord.status, "pending", "released back: the stream path still owns it");
        assert.equal(youngRecord.claimedBy, undefined);
    });

    it("leaves a record whose created_at is ahead of the sweeper's clock for a later run", async function () {
        h = await createHarness();
        const ahead = new OutboxWriter({
            client: h.ddb,
            tableName: h.tableName,
            clock: { now: () => h.clock.now() + 60_000, sleep: async () => undefined },
        });
        for (const partition of ["SWEPT", "STREAMED"]) {
            await ahead.write({ messages: [{ partition, type: "T", payload: "first", orderingKey: "k" }] });
            await h.writer.write({ messages: [{ partition, type: "T", payload: "second", orderingKey: "k" }] });
        }
        h.clock.advance(121_000);
        assert.equal(
            (await createSweeper(h.config())()).published,
            0,
            "sweepAfter has passed on the sweeper's clock, but not since the records' created_at (60 s ahead)",
        );
        const event = await h.streamEvent();
        const streamed = event.Records.filter(
            (r) => (r.dynamodb.Keys as Record<string, { S?: string }>)[ATTR.pk]!.S === "STREAMED",
        );
        await h.publisher()({ Records: streamed });
        assert.deepEqual(
            h.published().map((p) => JSON.parse(p.body) as string),
            ["first", "second"],
            "the stream path does not wait for created_at",
        );
        h.clock.advance(60_000);
        assert.equal((await createSweeper(h.config())()).published, 2);
        assert.deepEqual(
            h.published().map((p) => JSON.parse(p.body) as string),
            ["first", "second", "first", "second"],
        );
    });

    it("reclaims and delivers a record a crashed publisher left claimed, once its claim is stale", async function () {
        h = await createHarness();
        const [id] = (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1, orderingKey: "k" }] }))
            .messageIds;
        const crashed = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        assert.equal((await crashed.claim("P", { owner: "publisher/crashed", version: 1n }, 10)).length, 1);
        h.clock.advance(10_000);
        assert.equal(
            (await createSweeper({ ...h.config(), sweepAfterSeconds: 5 })()).published,
            0,
            "a live claim is not stolen",
        );
        h.clock.advance(60_000);
        assert.equal((await createSweeper({ ...h.config(), sweepAfterSeconds: 5 })()).published, 1);
        assert.deepEqual(
            h.published().map((p) => p.id),
            [id],
        );
        assert.equal((await h.records())[0]!.status, "completed");
    });

    it("moves pending records past their expiry to the DLQ and marks them expired", async function () {
        h = await createHarness();
        const now = h.clock.now();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: "a", expiresAt: new Date(now + 1_000) },
                { partition: "Q", type: "T", payload: "b", expiresAt: new Date(now + 1_000), orderingKey: "k" },
                { partition: "R", type: "T", payload: "c", expiresAt: new Date(now + 3_600_000) },
            ],
        });
        h.clock.advance(2_000);
        const result = await createSweeper(h.config())();
        assert.equal(result.expired, 2);
        assert.equal(result.published, 0, "nothing is older than sweepAfter yet");
        assert.deepEqual(
            h
                .deadLetters()
                .map((d) => [d.reason, d.recordId])
                .sort(),
            [
                ["expired", messageIds[0]],
                ["expired", messageIds[1]],
            ].sort(),
        );
        assert.equal(h.published().length, 0);
        const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [byId.get(messageIds[0]!), byId.get(messageIds[1]!), byId.get(messageIds[2]!)],
            ["expired", "expired", "pending"],
        );
        assert.deepEqual(await h.indexCounts(), { claim: 1, expiry: 1 });
    });

    it("reports a partition that failed and delivers the others", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "A", type: "T", payload: 1 },
                { partition: "B", type: "T", payload: 2 },
            ],
        });
        h.server.setFaults({
            entries: [{ code: "InternalError", when: (e) => e.attributes["outbox.id"]?.stringValue === messageIds[0] }],
        });
        h.clock.advance(200_000);
        const result = await createSweeper(h.config())();
        assert.equal(result.failedPartitions, 1);
        assert.equal(result.published, 1);
        const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.equal(byId.get(messageIds[0]!), "pending", "released for the next run");
        assert.equal(byId.get(messageIds[1]!), "completed");
    });

    it("reports a partition's failure at its lowest record in claim order, not at the first to fail in time: a2, refused in the second round, before b1, refused in the first", async function () {
        h = await createHarness();
        const [a1, a2, b1] = (
            await h.writer.write({
                messages: [
                    { partition: "A", type: "T", payload: 1, orderingKey: "a" },
                    { partition: "A", type: "T", payload: 2, orderingKey: "a" },
                    { partition: "A", type: "T", payload: 3, orderingKey: "b" },
                ],
            })
        ).messageIds;
        // Round 1 publishes the heads a1 and b1 (b1 refused, so key b is held); round 2 publishes a2 (refused).
        h.server.setFaults({
            entries: [
                {
                    code: "InvalidParameter",
                    senderFault: true,
                    when: (e) => [a2, b1].includes(e.attributes["outbox.id"]?.stringValue ?? ""),
                },
            ],
        });
        h.clock.advance(200_000);
        const logger = new RecordingLogger();
        const result = await createSweeper({ ...h.config({ maxPublishAttempts: 3 }), logger })();
        assert.deepEqual([result.published, result.failedPartitions], [1, 1]);
        assert.deepEqual(
            h.published().map((p) => p.id),
            [a1],
        );
        assert.deepEqual(
            logger.warnings("sweeper: partition delivery stopped at a failure").map((l) => l.attributes),
            [{ partition: "A", recordId: a2, code: "INVALID_PAYLOAD" }],
            "a2 comes before b1 in claim order",
        );
    });

    it("a refused head holds only its key past the claim limit: the partition's other key and keyless record, beyond the first claim, are delivered in the same sweep (issue 38, found by tests/integration/relay/edges.test.ts)", async function () {
        h = await createHarness();
        const [a1, a2, a3, b1, keyless] = (
            await h.writer.write({
                messages: [
                    { partition: "A", type: "T", payload: 1, orderingKey: "a" },
                    { partition: "A", type: "T", payload: 2, orderingKey: "a" },
                    { partition: "A", type: "T", payload: 3, orderingKey: "a" },
                    { partition: "A", type: "T", payload: 4, orderingKey: "b" },
                    { partition: "A", type: "T", payload: 5 },
                ],
            })
        ).messageIds;
        h.server.setFaults({
            entries: [
                {
                    code: "InvalidParameter",
                    senderFault: true,
                    message: "Invalid parameter: Message",
                    when: (e) => e.attributes["outbox.id"]?.stringValue === a1,
                },
            ],
        });
        h.clock.advance(200_000);
        const result = await createSweeper(h.config({ claimLimit: 2, maxPublishAttempts: 3 }))();
        assert.deepEqual([result.published, result.failedPartitions], [2, 1], "the partition still counts as failed");
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [b1!, keyless!].sort(),
        );
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [a1, a2, a3, b1, keyless].map((id) => status.get(id!)),
            ["pending", "pending", "pending", "completed", "completed"],
        );
    });

    it("counts a partition whose claim came back truncated (a throttled claim write) as failed, and the next run delivers the rest in order", async function () {
        h = await createHarness();
        const ids: string[] = [];
        // 100 records: a claim of 100 is two transactions of 50, so a throttled second one leaves a short batch.
        for (let n = 0; n < 2; n += 1) {
            ids.push(
                ...(
                    await h.writer.write({
                        messages: Array.from({ length: 50 }, (_, i) => ({
                            partition: "K",
                            type: "T",
                            payload: n * 50 + i,
                            orderingKey: "k",
                        })),
                    })
                ).messageIds,
            );
        }
        h.clock.advance(200_000);
        // A fake in front of DynamoDB Local, which never throttles: the second claim transaction is throttled.
        const db = new FakeDynamoDb(h.ddb).on("TransactWriteItems", (_input, call) =>
            call.nth === 2 ? Promise.reject(throttled()) : PASS,
        );
        const logger = new RecordingLogger();
        const result = await createSweeper({ ...h.config({ dynamodb: db as never }), logger })();
        assert.deepEqual([result.published, result.failedPartitions], [50, 1]);
        assert.ok(
            logger.lines.some(
                (l) =>
                    l.level === "warn" &&
                    /claim came back truncated/.test(l.message) &&
                    l.attributes?.partition === "K",
            ),
        );
        assert.equal((await createSweeper(h.config())()).published, 50);
        assert.deepEqual(
            h.published().map((p) => p.id),
            ids,
        );
    });

    it("starts no work when the invocation has less time left than reserveMs", async function () {
        h = await createHarness();
        await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: 1, expiresAt: new Date(h.clock.now() + 1) },
                { partition: "Q", type: "T", payload: 2 },
            ],
        });
        h.clock.advance(200_000);
        let remaining = 9_000;
        const result = await createSweeper({ ...h.config(), reserveMs: 10_000 })(undefined, {
            awsRequestId: "r-1",
            getRemainingTimeInMillis: () => remaining,
        });
        assert.deepEqual(result, {
            published: 0,
            expired: 0,
            deadLettered: 0,
            partitions: 0,
            failedPartitions: 0,
            failedRecords: 0,
        });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        remaining = 60_000;
        const next = await createSweeper({ ...h.config(), reserveMs: 10_000 })(undefined, {
            awsRequestId: "r-2",
            getRemainingTimeInMillis: () => remaining,
        });
        assert.deepEqual([next.expired, next.published], [1, 1]);
    });

    /**
     * A record put in the table as another writer left it (an older one, a Go one, or one whose clock ran fast):
     * `change` is applied to the item, e.g. a claim by a live owner.
     */
    async function putRecord(
        partition: string,
        id: string,
        createdAt: number,
        options: { orderingKey?: string; seq?: bigint; change?: Record<string, AttributeValue> } = {},
    ): Promise<string> {
        const record = pendingRecord(
            {
                partition,
                recordId: id,
                bindingId: "sns",
                address: h.topicArn,
                createdAt,
                ...(options.orderingKey ? { orderingKey: options.orderingKey } : {}),
                envelope: { id, subject: "T", payload: JSON.stringify(id) },
            },
            options.seq ?? 0n,
            createdAt,
        );
        await h.ddb.send(
            new PutItemCommand({ TableName: h.tableName, Item: { ...marshalRecord(record), ...options.change } }),
        );
        return id;
    }

    /** Claimed by a relay that is alive (its claim never goes stale): no claim of this package can take it. */
    const heldByAnother = (): Record<string, AttributeValue> => ({
        [ATTR.status]: { S: "claimed" },
        [ATTR.claimedBy]: { S: "another-relay" },
        [ATTR.claimVersion]: { N: "1" },
        [ATTR.claimedAt]: { N: String(h.clock.now() + 30 * 86_400_000) },
    });

    /** The partitions of ClaimIndex in its scan order (the hash of PK), read from DynamoDB Local. */
    async function claimIndexOrder(): Promise<string[]> {
        const order: string[] = [];
        let start: Record<string, AttributeValue> | undefined;
        do {
            const page = await h.ddb.send(
                new ScanCommand({
                    TableName: h.tableName,
                    IndexName: CLAIM_INDEX.indexName,
                    ...(start ? { ExclusiveStartKey: start } : {}),
                }),
            );
            for (const item of page.Items ?? []) if (!order.includes(item[ATTR.pk]!.S!)) order.push(item[ATTR.pk]!.S!);
            start = page.LastEvaluatedKey;
        } while (start);
        return order;
    }

    describe("partitions that never drain never starve the others (a sweep cursor kept in the table)", function () {
        /** Give `partition` an item no sweep can ever drain, of one of three kinds. */
        async function plantStuck(partition: string, kind: number): Promise<void> {
            const old = h.clock.now() - 1_000;
            if (kind === 0) {
                // An undecodable item: its envelope is not JSON.
                await h.ddb.send(
                    new PutItemCommand({
                        TableName: h.tableName,
                        Item: {
                            PK: { S: partition },
                            SK: { S: "OUTBOX#broken#sns" },
                            record_id: { S: `${partition}/broken` },
                            envelope_json: { S: "not json" },
                            status: { S: "pending" },
                            claim_sort: { S: claimSort(old, 0n) },
                        },
                    }),
                );
            } else if (kind === 1) {
                await putRecord(partition, `${partition}/held`, old, { change: heldByAnother() });
            } else {
                // A key tail behind a held head: the head is claimed by a live relay, the tail is pending and due.
                await putRecord(partition, `${partition}/head`, old - 1_000, {
                    orderingKey: "held",
                    seq: 0n,
                    change: heldByAnother(),
                });
                await putRecord(partition, `${partition}/tail`, old, { orderingKey: "held", seq: 1n });
            }
        }

        it("reaches every healthy partition within ⌈N / maxPartitionsPerRun⌉ runs, each a cold start, when the partitions first in ClaimIndex's scan order never drain: undecodable items, rows no claim can take, key tails behind a held head", async function () {
            h = await createHarness();
            const healthy: string[] = [];
            for (let n = 0; n < 10; n += 1)
                healthy.push(
                    ...(await h.writer.write({ messages: [{ partition: `P${n}`, type: "T", payload: n }] })).messageIds,
                );
            const order = await claimIndexOrder();
            assert.equal(order.length, 10);
            // More stuck partitions than maxPartitionsPerRun, and first in scan order: today's worst case.
            for (const [i, partition] of order.slice(0, 6).entries()) await plantStuck(partition, i % 3);
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
                h
                    .published()
                    .map((p) => p.id)
                    .sort(),
                [...healthy].sort(),
                `every healthy record within ${runs} runs, none of the stuck ones`,
            );
        });

        it("a run that runs out of time resumes, on the next run, at the first partition it did not reach", async function () {
            h = await createHarness();
            const healthy: string[] = [];
            // One more partition than a run drains at once, so a run out of time after its first group leaves one.
            for (let n = 0; n <= PARTITIONS_IN_FLIGHT; n += 1)
                healthy.push(
                    ...(await h.writer.write({ messages: [{ partition: `T${n}`, type: "T", payload: n }] })).messageIds,
                );
            const [first] = await claimIndexOrder();
            await plantStuck(first!, 0);
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
                h
                    .published()
                    .map((p) => p.id)
                    .sort(),
                [...healthy].sort(),
                "the stuck partition first in scan order is passed, not retried every run",
            );
        });

        it("a run that runs out of time resumes after the last partition it reached, never at it and never past one it did not reach: a never-draining partition reached last is not taken again before the ones after it", async function () {
            h = await createHarness();
            const healthy: string[] = [];
            // Two more partitions than a run drains at once, so a run out of time after its first group leaves two.
            for (let n = 0; n < PARTITIONS_IN_FLIGHT + 2; n += 1)
                healthy.push(
                    ...(await h.writer.write({ messages: [{ partition: `R${n}`, type: "T", payload: n }] })).messageIds,
                );
            const order = await claimIndexOrder();
            const reachedLast = order[PARTITIONS_IN_FLIGHT - 1]!;
            await plantStuck(reachedLast, 1);
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
            assert.deepEqual(
                h
                    .published()
                    .map((p) => p.id)
                    .sort(),
                [...healthy].sort(),
            );
        });

        it("knows its position by the whole ClaimIndex key, not by the partition key alone: a cursor moved to a later item of the same partition is written, so a partition that never drains is passed", async function () {
            h = await createHarness();
            const writtenAt = h.clock.now();
            const healthy: string[] = [];
            for (const partition of ["S0", "S1"])
                healthy.push(
                    ...(await h.writer.write({ messages: [{ partition, type: "T", payload: 1 }] })).messageIds,
                );
            const [x, y] = await claimIndexOrder();
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
            await putRecord(x!, `${x}/held`, writtenAt + 1, { change: heldByAnother() });
            assert.equal((await sweep()).published, 0);
            const afterSecond = await cursorRow();
            assert.equal(afterSecond?.[ATTR.pk]?.S, x);
            assert.notEqual(afterSecond?.[ATTR.sk]?.S, afterFirst?.[ATTR.sk]?.S, "moved within the partition");
            assert.equal((await sweep()).published, 1, `${y}, past the item no sweep drains`);
            assert.deepEqual(
                h
                    .published()
                    .map((p) => p.id)
                    .sort(),
                [...healthy].sort(),
            );
        });

        it("a cursor that cannot be read, or that the scan refuses, never stops a sweep: the run scans from the start of the index", async function () {
            h = await createHarness();
            const ids: string[] = [];
            for (let n = 0; n < 3; n += 1)
                ids.push(
                    ...(await h.writer.write({ messages: [{ partition: `C${n}`, type: "T", payload: n }] })).messageIds,
                );
            h.clock.advance(200_000);
            await h.ddb.send(
                new PutItemCommand({
                    TableName: h.tableName,
                    Item: {
                        PK: { S: SWEEP_CURSOR_PK },
                        SK: { S: "META" },
                        [ATTR.sweepCursor]: {
                            M: { PK: { S: "C-gone" }, SK: { S: "OUTBOX#x#sns" }, claim_sort: { S: "not-a-position" } },
                        },
                    },
                }),
            );
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
            await h.ddb.send(
                new PutItemCommand({
                    TableName: h.tableName,
                    Item: {
                        PK: { S: SWEEP_CURSOR_PK },
                        SK: { S: "META" },
                        [ATTR.sweepCursor]: {
                            M: { PK: { S: "C-gone" }, SK: { S: "OUTBOX#x#sns" }, claim_sort: { S: "not-a-position" } },
                        },
                    },
                }),
            );
            const result = await createSweeper({
                ...h.config({ dynamodb: refusing as never }),
                maxPartitionsPerRun: 10,
            })();
            assert.equal(result.published, 2, "the rest, from the start of the index");
            assert.deepEqual(
                h
                    .published()
                    .map((p) => p.id)
                    .sort(),
                [...ids].sort(),
            );
        });
    });

    describe("a created_at ahead of the sweeper's clock (a writer whose clock ran fast)", function () {
        it("delivers a record stamped further ahead than sweepAfter at once, and its key's records in order", async function () {
            h = await createHarness();
            const now = h.clock.now();
            const day = 86_400_000;
            // Rows already written by a writer whose clock ran a day ahead, or carried forward from such a writer's FENCE.
            const future = await putRecord("FUTURE", "future", now + day);
            const k1 = await putRecord("KEYED", "k1", now - 10_000, { orderingKey: "k", seq: 1n });
            const k2 = await putRecord("KEYED", "k2", now + day, { orderingKey: "k", seq: 2n });
            h.clock.advance(5_000);
            await createSweeper(h.config())();
            assert.deepEqual(
                h.published().map((p) => p.id),
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
            assert.deepEqual(
                h.published().map((p) => p.id),
                [future, k1, k2],
                "per-key order kept",
            );
        });

        it("counts such a record in OldestPendingAge from its first claim, so a future stamp cannot hide a stuck record", async function () {
            h = await createHarness();
            const stuck = await putRecord("FUTURE", "future-stuck", h.clock.now() + 86_400_000);
            h.server.setFaults({
                entries: [{ code: "InternalError", when: (e) => e.attributes["outbox.id"]?.stringValue === stuck }],
            });
            const ages = (): number[] => {
                const values = h.metricLines
                    .map((l) => JSON.parse(l) as Record<string, unknown>)
                    .filter((d) => SWEEPER_METRICS.oldestPendingAge in d)
                    .map((d) => d[SWEEPER_METRICS.oldestPendingAge] as number);
                h.metricLines.length = 0;
                return values;
            };
            assert.equal((await createSweeper(h.config())()).failedPartitions, 1, "tried at once, and refused");
            assert.deepEqual(ages(), [0], "never claimed before: counted from now");
            h.clock.advance(60_000);
            await createSweeper(h.config())();
            assert.deepEqual(ages(), [60_000], "counted from its first claim, not from a day ahead");
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
                assert.deepEqual(
                    h
                        .published()
                        .map((p) => p.id)
                        .sort(),
                    [...written].sort(),
                    "the stream path publishes each once",
                );
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

    describe("one bad record never stops the safety net", function () {
        /** A pending record with an expiry written past the writer's checks (an older writer, or a Go drainer sharing the table). */
        async function persistRaw(partition: string, payload: string, expiresAt: number): Promise<string> {
            const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
            const recordId = `${partition}/raw`;
            await store.persist([
                {
                    partition,
                    recordId,
                    bindingId: "topic",
                    address: h.topicArn,
                    envelope: { id: `env-${partition}`, subject: "T", payload, expiresAt },
                },
            ]);
            return recordId;
        }

        it("an expired record holding U+FFFF (which SQS refuses) reaches the DLQ escaped, byte-identical once parsed, and the sweep goes on", async function () {
            h = await createHarness();
            const poison = await persistRaw("POISON", JSON.stringify({ text: "a\uFFFFb" }), h.clock.now() + 1_000);
            const [healthy] = (await h.writer.write({ messages: [{ partition: "OK", type: "T", payload: { n: 1 } }] }))
                .messageIds;
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.published, result.failedRecords], [1, 1, 0]);
            const [dead] = h.deadLetters();
            assert.equal(dead!.recordId, poison);
            assert.deepEqual(dead!.body.payload, { text: "a\uFFFFb" });
            assert.ok(
                h.server.queueMessages(h.dlqUrl)[0]!.body.includes("\\uffff"),
                "the DLQ body carries the character as a JSON escape",
            );
            assert.deepEqual(
                h.published().map((p) => p.id),
                [healthy],
            );
            assert.equal((await h.records()).find((r) => r.recordId === poison)!.status, "expired");
        });

        it("a DLQ outage fails only the expired records (counted as SweepFailures, left pending); missed records of other partitions are still published", async function () {
            h = await createHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const now = h.clock.now();
            const expiring = (
                await h.writer.write({
                    messages: ["E1", "E2"].map((p) => ({
                        partition: p,
                        type: "T",
                        payload: p,
                        expiresAt: new Date(now + 1_000),
                    })),
                })
            ).messageIds;
            const [missed] = (await h.writer.write({ messages: [{ partition: "M", type: "T", payload: "m" }] }))
                .messageIds;
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.failedRecords, result.published], [0, 2, 1]);
            assert.deepEqual(
                h.published().map((p) => p.id),
                [missed],
            );
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                expiring.map((id) => byId.get(id)),
                ["pending", "pending"],
            );
            const line = h.metricLines
                .map((l) => JSON.parse(l) as Record<string, unknown>)
                .find((l) => "SweepFailures" in l);
            assert.equal(line?.SweepFailures, 2);

            h.server.setFaults({});
            assert.equal((await createSweeper(h.config())()).expired, 2, "the next run dead-letters them");
        });

        it("a keyed head the DLQ cannot take (an outage) holds only its own key: the partition's other keys are published in the same sweep", async function () {
            h = await createHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const write = async (orderingKey: string, expiresAt?: Date) =>
                (
                    await h.writer.write({
                        messages: [
                            {
                                partition: "P",
                                type: "T",
                                payload: orderingKey,
                                orderingKey,
                                ...(expiresAt ? { expiresAt } : {}),
                            },
                        ],
                    })
                ).messageIds[0]!;
            const a1 = await write("a", new Date(h.clock.now() + 1_000));
            const b1 = await write("b");
            const a2 = await write("a");
            const b2 = await write("b");
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.published, result.failedPartitions], [2, 1]);
            assert.deepEqual(
                h.published().map((p) => p.id),
                [b1, b2],
                "key b went on past key a's head",
            );
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                [a1, a2].map((id) => byId.get(id)),
                ["pending", "pending"],
                "key a waits, released in order",
            );

            h.server.setFaults({});
            await createSweeper(h.config())();
            assert.deepEqual(
                h.deadLetters().map((d) => [d.recordId, d.reason]),
                [[a1, "expired"]],
            );
            assert.deepEqual(
                h.published().map((p) => p.id),
                [b1, b2, a2],
            );
        });

        it("a keyed record SNS refused maxPublishAttempts times whose DLQ send fails holds only its own key: the partition's other keys are published in the same sweep, and its key follows once the DLQ takes it", async function () {
            h = await createHarness();
            const write = async (orderingKey: string) =>
                (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: orderingKey, orderingKey }] }))
                    .messageIds[0]!;
            const a1 = await write("a");
            const b1 = await write("b");
            const a2 = await write("a");
            const b2 = await write("b");
            h.server.setFaults({
                entries: [
                    {
                        code: "InvalidParameter",
                        senderFault: true,
                        when: (e) => e.attributes["outbox.id"]?.stringValue === a1,
                    },
                ],
                calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }],
            });
            h.clock.advance(200_000);
            const result = await createSweeper(h.config({ maxPublishAttempts: 1 }))();
            assert.deepEqual([result.published, result.deadLettered, result.failedPartitions], [2, 0, 1]);
            assert.deepEqual(
                h.published().map((p) => p.id),
                [b1, b2],
                "key b went on past key a's head, in a later call too",
            );
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                [a1, a2].map((id) => byId.get(id)),
                ["pending", "pending"],
            );

            h.server.setFaults({
                entries: [
                    {
                        code: "InvalidParameter",
                        senderFault: true,
                        when: (e) => e.attributes["outbox.id"]?.stringValue === a1,
                    },
                ],
            });
            await createSweeper(h.config({ maxPublishAttempts: 1 }))();
            assert.deepEqual(
                h.deadLetters().map((d) => [d.recordId, d.reason]),
                [[a1, "publish-rejected"]],
            );
            assert.deepEqual(
                h.published().map((p) => p.id),
                [b1, b2, a2],
            );
        });

        it("an undecodable item with has_expiry is counted and skipped; the other expired records are dead-lettered", async function () {
            h = await createHarness();
            const now = h.clock.now();
            await h.ddb.send(
                new PutItemCommand({
                    TableName: h.tableName,
                    Item: {
                        PK: { S: "BROKEN" },
                        SK: { S: "OUTBOX#x#topic" },
                        record_id: { S: "broken" },
                        envelope_json: { S: "not json" },
                        status: { S: "pending" },
                        has_expiry: { S: "1" },
                        expires_at: { N: String(now - 5_000) },
                    },
                }),
            );
            const [fine] = (
                await h.writer.write({
                    messages: [{ partition: "FINE", type: "T", payload: 1, expiresAt: new Date(now + 1_000) }],
                })
            ).messageIds;
            h.clock.advance(2_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.failedRecords], [1, 1]);
            assert.deepEqual(
                h.deadLetters().map((d) => d.recordId),
                [fine],
            );
        });

        it("a failed expiry query does not stop the missed-record step; the invocation then fails with the query's error", async function () {
            h = await createHarness();
            const [missed] = (await h.writer.write({ messages: [{ partition: "M", type: "T", payload: "m" }] }))
                .messageIds;
            h.clock.advance(200_000);
            // A fake in front of DynamoDB Local: no emulator fails one index query on demand.
            const dynamodb = {
                send: (command: object) =>
                    command instanceof QueryCommand && command.input.IndexName === EXPIRY_INDEX.indexName
                        ? Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }))
                        : h.ddb.send(command as never),
            };
            await assert.rejects(
                createSweeper({ ...h.config(), dynamodb })(),
                (err: unknown) => isOutboxError(err, "THROTTLED") && /expiry index query failed/.test(err.message),
            );
            assert.deepEqual(
                h.published().map((p) => p.id),
                [missed],
            );
        });
    });

    describe("OldestPendingAge", function () {
        /** The OldestPendingAge values of the lines written so far, one per run, and empties the lines. */
        function oldestAges(): number[] {
            const values = h.metricLines
                .map((l) => JSON.parse(l) as Record<string, unknown>)
                .filter((d) => SWEEPER_METRICS.oldestPendingAge in d)
                .map((d) => d[SWEEPER_METRICS.oldestPendingAge] as number);
            h.metricLines.length = 0;
            return values;
        }

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

    it("rejects an invalid sweep setting with INVALID_CONFIG", async function () {
        h = await createHarness();
        assert.throws(
            () => createSweeper({ ...h.config(), sweepAfterSeconds: 0 }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /sweepAfterSeconds is 0; expected an integer from 1 to 86400/.test(err.message),
        );
    });
});
