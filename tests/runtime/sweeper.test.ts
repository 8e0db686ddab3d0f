/**
 * The sweeper on DynamoDB Local and the SNS test server: records whose stream event never reached the
 * publisher are found through the sparse ClaimIndex and delivered within one sweep; expired ones go to the DLQ.
 * Not proven here: the schedule (component tests) and GSI lag (DynamoDB Local's indexes are synchronous).
 */
import assert from "node:assert/strict";
import { isOutboxError } from "../../runtime/errors";
import { OutboxStore } from "../../runtime/store";
import { createSweeper } from "../../runtime/sweeper";
import { createHarness, type Harness } from "./support/harness";

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
        assert.deepEqual(result, { published: 7, expired: 0, deadLettered: 0, partitions: 4, failedPartitions: 0 });
        const published = h.published().map((p) => p.id);
        assert.deepEqual([...published].sort(), [...keyless, ...keyed].sort());
        assert.deepEqual(published.filter((id) => keyed.includes(id)), keyed, "per-key order");
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
        assert.deepEqual(await createSweeper(h.config())(), { published: 0, expired: 0, deadLettered: 0, partitions: 0, failedPartitions: 0 }, "a second sweep finds nothing");
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
        assert.deepEqual(result, { published: 0, expired: 0, deadLettered: 0, partitions: 0, failedPartitions: 0 });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        remaining = 60_000;
        const next = await createSweeper({ ...h.config(), reserveMs: 10_000 })(undefined, { awsRequestId: "r-2", getRemainingTimeInMillis: () => remaining });
        assert.deepEqual([next.expired, next.published], [1, 1]);
    });

    it("rejects an invalid sweep setting with INVALID_CONFIG", async function () {
        h = await createHarness();
        assert.throws(() => createSweeper({ ...h.config(), sweepAfterSeconds: 0 }), (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && /sweepAfterSeconds is 0; expected an integer from 1 to 86400/.test(err.message));
    });
});
