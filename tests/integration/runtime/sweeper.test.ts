/**
 * The sweeper on DynamoDB Local and the SNS test server: records whose stream event never reached the
 * publisher are found through the sparse ClaimIndex and delivered within one sweep; expired ones go to the DLQ.
 * Not proven here: the schedule (component tests) and GSI lag (DynamoDB Local's indexes are synchronous).
 */
import assert from "node:assert/strict";
import { PutItemCommand, QueryCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { SWEEPER_METRICS } from "../../../runtime/metric-catalog";
import { ATTR, EXPIRY_INDEX } from "../../../runtime/schema";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/sweeper";
import { OutboxWriter } from "../../../runtime/writer";
import { createHarness, type Harness } from "../../support/runtime/harness";

describe("createSweeper (DynamoDB Local + SNS test server)", function () {
    let h: Harness;
    afterEach(async function () {
        await h?.close();
    });

    it("publishes within one sweep the records whose stream events were never delivered, keyed ones in order", async function () {
        h = await createHarness();
        const keyless = (await h.writer.write({ messages: [1, 2, 3].map((n) => ({ partition: `ORDER#${n}`, type: "T", payload: n })) })).messageIds;
        const keyed: string[] = [];
        for (let n = 0; n < 4; n += 1) {
            keyed.push(...(await h.writer.write({ messages: [{ partition: "ACCOUNT#7", type: "T", payload: { n }, orderingKey: "acct-7" }] })).messageIds);
            h.clock.advance(1);
        }
        h.clock.advance(121_000);
        const result = await createSweeper(h.config())();
        assert.deepEqual(result, { published: 7, expired: 0, deadLettered: 0, partitions: 4, failedPartitions: 0, failedRecords: 0 });
        const published = h.published().map((p) => p.id);
        assert.deepEqual([...published].sort(), [...keyless, ...keyed].sort());
        assert.deepEqual(published.filter((id) => keyed.includes(id)), keyed, "per-key order");
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
        assert.deepEqual(await createSweeper(h.config())(), { published: 0, expired: 0, deadLettered: 0, partitions: 0, failedPartitions: 0, failedRecords: 0 }, "a second sweep finds nothing");
    });

    it("leaves records younger than sweepAfter to the stream path, unclaimed", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "old" }] });
        h.clock.advance(100_000);
        const young = (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "young" }] })).messageIds[0];
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
        const ahead = new OutboxWriter({ client: h.ddb, tableName: h.tableName, clock: { now: () => h.clock.now() + 60_000, sleep: async () => undefined } });
        for (const partition of ["SWEPT", "STREAMED"]) {
            await ahead.write({ messages: [{ partition, type: "T", payload: "first", orderingKey: "k" }] });
            await h.writer.write({ messages: [{ partition, type: "T", payload: "second", orderingKey: "k" }] });
        }
        h.clock.advance(121_000);
        assert.equal((await createSweeper(h.config())()).published, 0, "sweepAfter has passed on the sweeper's clock, but not since the records' created_at (60 s ahead)");
        const event = await h.streamEvent();
        const streamed = event.Records.filter((r) => (r.dynamodb.Keys as Record<string, { S?: string }>)[ATTR.pk]!.S === "STREAMED");
        await h.publisher()({ Records: streamed });
        assert.deepEqual(h.published().map((p) => JSON.parse(p.body) as string), ["first", "second"], "the stream path does not wait for created_at");
        h.clock.advance(60_000);
        assert.equal((await createSweeper(h.config())()).published, 2);
        assert.deepEqual(h.published().map((p) => JSON.parse(p.body) as string), ["first", "second", "first", "second"]);
    });

    it("reclaims and delivers a record a crashed publisher left claimed, once its claim is stale", async function () {
        h = await createHarness();
        const [id] = (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1, orderingKey: "k" }] })).messageIds;
        const crashed = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        assert.equal((await crashed.claim("P", { owner: "publisher/crashed", version: 1n }, 10)).length, 1);
        h.clock.advance(10_000);
        assert.equal((await createSweeper({ ...h.config(), sweepAfterSeconds: 5 })()).published, 0, "a live claim is not stolen");
        h.clock.advance(60_000);
        assert.equal((await createSweeper({ ...h.config(), sweepAfterSeconds: 5 })()).published, 1);
        assert.deepEqual(h.published().map((p) => p.id), [id]);
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
        assert.deepEqual(h.deadLetters().map((d) => [d.reason, d.recordId]).sort(), [["expired", messageIds[0]], ["expired", messageIds[1]]].sort());
        assert.equal(h.published().length, 0);
        const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual([byId.get(messageIds[0]!), byId.get(messageIds[1]!), byId.get(messageIds[2]!)], ["expired", "expired", "pending"]);
        assert.deepEqual(await h.indexCounts(), { claim: 1, expiry: 1 });
    });

    it("reports a partition that failed and delivers the others", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({ messages: [{ partition: "A", type: "T", payload: 1 }, { partition: "B", type: "T", payload: 2 }] });
        h.server.setFaults({ entries: [{ code: "InternalError", when: (e) => e.attributes["outbox.id"]?.stringValue === messageIds[0] }] });
        h.clock.advance(200_000);
        const result = await createSweeper(h.config())();
        assert.equal(result.failedPartitions, 1);
        assert.equal(result.published, 1);
        const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.equal(byId.get(messageIds[0]!), "pending", "released for the next run");
        assert.equal(byId.get(messageIds[1]!), "completed");
    });

    it("starts no work when the invocation has less time left than reserveMs", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1, expiresAt: new Date(h.clock.now() + 1) }, { partition: "Q", type: "T", payload: 2 }] });
        h.clock.advance(200_000);
        let remaining = 9_000;
        const result = await createSweeper({ ...h.config(), reserveMs: 10_000 })(undefined, { awsRequestId: "r-1", getRemainingTimeInMillis: () => remaining });
        assert.deepEqual(result, { published: 0, expired: 0, deadLettered: 0, partitions: 0, failedPartitions: 0, failedRecords: 0 });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        remaining = 60_000;
        const next = await createSweeper({ ...h.config(), reserveMs: 10_000 })(undefined, { awsRequestId: "r-2", getRemainingTimeInMillis: () => remaining });
        assert.deepEqual([next.expired, next.published], [1, 1]);
    });

    describe("one bad record never stops the safety net", function () {
        /** A pending record with an expiry written past the writer's checks (an older writer, or a Go drainer sharing the table). */
        async function persistRaw(partition: string, payload: string, expiresAt: number): Promise<string> {
            const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
            const recordId = `${partition}/raw`;
            await store.persist([{ partition, recordId, bindingId: "topic", address: h.topicArn, envelope: { id: `env-${partition}`, subject: "T", payload, expiresAt } }]);
            return recordId;
        }

        it("an expired record holding U+FFFF (which SQS refuses) reaches the DLQ escaped, byte-identical once parsed, and the sweep goes on", async function () {
            h = await createHarness();
            const poison = await persistRaw("POISON", JSON.stringify({ text: "a\uFFFFb" }), h.clock.now() + 1_000);
            const [healthy] = (await h.writer.write({ messages: [{ partition: "OK", type: "T", payload: { n: 1 } }] })).messageIds;
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.published, result.failedRecords], [1, 1, 0]);
            const [dead] = h.deadLetters();
            assert.equal(dead!.recordId, poison);
            assert.deepEqual(dead!.body.payload, { text: "a\uFFFFb" });
            assert.ok(h.server.queueMessages(h.dlqUrl)[0]!.body.includes("\\uffff"), "the DLQ body carries the character as a JSON escape");
            assert.deepEqual(h.published().map((p) => p.id), [healthy]);
            assert.equal((await h.records()).find((r) => r.recordId === poison)!.status, "expired");
        });

        it("a DLQ outage fails only the expired records (counted as SweepFailures, left pending); missed records of other partitions are still published", async function () {
            h = await createHarness({ faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] } });
            const now = h.clock.now();
            const expiring = (await h.writer.write({ messages: ["E1", "E2"].map((p) => ({ partition: p, type: "T", payload: p, expiresAt: new Date(now + 1_000) })) })).messageIds;
            const [missed] = (await h.writer.write({ messages: [{ partition: "M", type: "T", payload: "m" }] })).messageIds;
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.failedRecords, result.published], [0, 2, 1]);
            assert.deepEqual(h.published().map((p) => p.id), [missed]);
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(expiring.map((id) => byId.get(id)), ["pending", "pending"]);
            const line = h.metricLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => "SweepFailures" in l);
            assert.equal(line?.SweepFailures, 2);

            h.server.setFaults({});
            assert.equal((await createSweeper(h.config())()).expired, 2, "the next run dead-letters them");
        });

        it("a keyed head the DLQ cannot take (an outage) holds only its own key: the partition's other keys are published in the same sweep", async function () {
            h = await createHarness({ faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] } });
            const write = async (orderingKey: string, expiresAt?: Date) => (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: orderingKey, orderingKey, ...(expiresAt ? { expiresAt } : {}) }] })).messageIds[0]!;
            const a1 = await write("a", new Date(h.clock.now() + 1_000));
            const b1 = await write("b");
            const a2 = await write("a");
            const b2 = await write("b");
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.published, result.failedPartitions], [2, 1]);
            assert.deepEqual(h.published().map((p) => p.id), [b1, b2], "key b went on past key a's head");
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual([a1, a2].map((id) => byId.get(id)), ["pending", "pending"], "key a waits, released in order");

            h.server.setFaults({});
            await createSweeper(h.config())();
            assert.deepEqual(h.deadLetters().map((d) => [d.recordId, d.reason]), [[a1, "expired"]]);
            assert.deepEqual(h.published().map((p) => p.id), [b1, b2, a2]);
        });

        it("an undecodable item with has_expiry is counted and skipped; the other expired records are dead-lettered", async function () {
            h = await createHarness();
            const now = h.clock.now();
            await h.ddb.send(
                new PutItemCommand({
                    TableName: h.tableName,
                    Item: { PK: { S: "BROKEN" }, SK: { S: "OUTBOX#x#topic" }, record_id: { S: "broken" }, envelope_json: { S: "not json" }, status: { S: "pending" }, has_expiry: { S: "1" }, expires_at: { N: String(now - 5_000) } },
                }),
            );
            const [fine] = (await h.writer.write({ messages: [{ partition: "FINE", type: "T", payload: 1, expiresAt: new Date(now + 1_000) }] })).messageIds;
            h.clock.advance(2_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.failedRecords], [1, 1]);
            assert.deepEqual(h.deadLetters().map((d) => d.recordId), [fine]);
        });

        it("a failed expiry query does not stop the missed-record step; the invocation then fails with the query's error", async function () {
            h = await createHarness();
            const [missed] = (await h.writer.write({ messages: [{ partition: "M", type: "T", payload: "m" }] })).messageIds;
            h.clock.advance(200_000);
            // A fake in front of DynamoDB Local: no emulator fails one index query on demand.
            const dynamodb = {
                send: (command: object) =>
                    command instanceof QueryCommand && command.input.IndexName === EXPIRY_INDEX.indexName
                        ? Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }))
                        : h.ddb.send(command as never),
            };
            await assert.rejects(createSweeper({ ...h.config(), dynamodb })(), (err: unknown) => isOutboxError(err, "THROTTLED") && /expiry index query failed/.test(err.message));
            assert.deepEqual(h.published().map((p) => p.id), [missed]);
        });
    });

    describe("OldestPendingAge", function () {
        /** The OldestPendingAge values of the lines written so far, one per run, and empties the lines. */
        function oldestAges(): number[] {
            const values = h.metricLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((d) => SWEEPER_METRICS.oldestPendingAge in d).map((d) => d[SWEEPER_METRICS.oldestPendingAge] as number);
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
            const line = JSON.parse(h.metricLines.find((l) => l.includes(SWEEPER_METRICS.oldestPendingAge))!) as { _aws: { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] } };
            assert.deepEqual(line._aws.CloudWatchMetrics[0]!.Metrics.find((m) => m.Name === SWEEPER_METRICS.oldestPendingAge), { Name: SWEEPER_METRICS.oldestPendingAge, Unit: "Milliseconds" });
        });

        it("counts a claimed record too, and is not emitted when the ClaimIndex scan fails", async function () {
            h = await createHarness();
            await h.writer.write({ messages: [{ partition: "C", type: "T", payload: "c" }] });
            h.clock.advance(10_000);
            const claimed = await new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock }).claim("C", { owner: "other", version: 1n }, 10);
            assert.equal(claimed.length, 1);
            h.clock.advance(5_000);
            await createSweeper(h.config())();
            assert.deepEqual(oldestAges(), [15_000]);
            // A fake in front of DynamoDB Local: no emulator fails one index scan on demand.
            const dynamodb = {
                send: (command: object) =>
                    command instanceof ScanCommand ? Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" })) : h.ddb.send(command as never),
            };
            await assert.rejects(createSweeper({ ...h.config(), dynamodb })(), (err: unknown) => isOutboxError(err, "THROTTLED") && /claim index scan failed/.test(err.message));
            assert.deepEqual(oldestAges(), [], "no value rather than a wrong one");
        });
    });

    it("rejects an invalid sweep setting with INVALID_CONFIG", async function () {
        h = await createHarness();
        assert.throws(() => createSweeper({ ...h.config(), sweepAfterSeconds: 0 }), (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && /sweepAfterSeconds is 0; expected an integer from 1 to 86400/.test(err.message));
    });
});
