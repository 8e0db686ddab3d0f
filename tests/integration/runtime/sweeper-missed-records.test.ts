/**
 * The sweeper on DynamoDB Local and the AWS fault server: records whose stream event never reached the
 * publisher are found through the sparse ClaimIndex and delivered within one sweep; expired ones go to the DLQ;
 * failed partitions are reported. Not proven here: the schedule (component tests) and GSI lag (DynamoDB Local's
 * indexes are synchronous).
 */
import assert from "node:assert/strict";
import { ATTR } from "../../../runtime/schema";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { FakeDynamoDb, PASS, throttled } from "../../support/store/fake-client";
import { RecordingLogger } from "../../support/store/helpers";
import * as relay from "../../support/runtime/relay-fixtures";

describe("createSweeper delivers missed records (DynamoDB Local + AWS fault server)", function () {
    const openHarness = relay.harnessPerTest();

    it("publishes within one sweep the records whose stream events were never delivered, keyed ones in order", async function () {
        const h = await openHarness();
        const keyless = (
            await h.writer.write({
                messages: [1, 2, 3].map((n) => ({ partition: `ORDER#${n}`, type: "T", payload: n })),
            })
        ).messageIds;
        const keyed = await relay.writeKeyedOneByOne(h, "ACCOUNT#7", "acct-7", 4, () => 1);
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
        const published = relay.publishedIds(h);
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
        const h = await openHarness();
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
        const h = await openHarness();
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
        const h = await openHarness();
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
        assert.deepEqual(relay.publishedIds(h), [id]);
        assert.equal((await h.records())[0]!.status, "completed");
    });

    it("moves pending records past their expiry to the DLQ and marks them expired", async function () {
        const h = await openHarness();
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
            relay.deadLetterReasons(h),
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
        const h = await openHarness();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "A", type: "T", payload: 1 },
                { partition: "B", type: "T", payload: 2 },
            ],
        });
        h.server.setFaults({
            entries: [relay.entryFault(messageIds[0], { code: "InternalError" })],
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
        const h = await openHarness();
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
            entries: [relay.entryFault([a2, b1], { code: "InvalidParameter", senderFault: true })],
        });
        h.clock.advance(200_000);
        const logger = new RecordingLogger();
        const result = await createSweeper({ ...h.config({ maxPublishAttempts: 3 }), logger })();
        assert.deepEqual([result.published, result.failedPartitions], [1, 1]);
        assert.deepEqual(relay.publishedIds(h), [a1]);
        assert.deepEqual(
            logger.warnings("sweeper: partition delivery stopped at a failure").map((l) => l.attributes),
            [{ partition: "A", recordId: a2, code: "INVALID_PAYLOAD" }],
            "a2 comes before b1 in claim order",
        );
    });

    it("a refused head holds only its key past the claim limit: the partition's other key and keyless record, beyond the first claim, are delivered in the same sweep (issue 38, found by tests/integration/relay/edges.test.ts)", async function () {
        const h = await openHarness();
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
                relay.entryFault(a1, {
                    code: "InvalidParameter",
                    senderFault: true,
                    message: "Invalid parameter: Message",
                }),
            ],
        });
        h.clock.advance(200_000);
        const result = await createSweeper(h.config({ claimLimit: 2, maxPublishAttempts: 3 }))();
        assert.deepEqual([result.published, result.failedPartitions], [2, 1], "the partition still counts as failed");
        assert.deepEqual(relay.publishedIds(h).sort(), [b1!, keyless!].sort());
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [a1, a2, a3, b1, keyless].map((id) => status.get(id!)),
            ["pending", "pending", "pending", "completed", "completed"],
        );
    });

    it("counts a partition whose claim came back truncated (a throttled claim write) as failed, and the next run delivers the rest in order", async function () {
        const h = await openHarness();
        // 100 records: a claim of 100 is two transactions of 50, so a throttled second one leaves a short batch.
        const ids = await relay.writeKeyRun(h, "K", "k", 100);
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
        assert.deepEqual(relay.publishedIds(h), ids);
    });

    it("starts no work when the invocation has less time left than reserveMs", async function () {
        const h = await openHarness();
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

    it("rejects an invalid sweep setting with INVALID_CONFIG", async function () {
        const h = await openHarness();
        assert.throws(
            () => createSweeper({ ...h.config(), sweepAfterSeconds: 0 }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /sweepAfterSeconds is 0; expected an integer from 1 to 86400/.test(err.message),
        );
    });
});
