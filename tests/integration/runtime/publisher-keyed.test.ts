/**
 * The stream publisher's keyed path (the claim path) on DynamoDB Local and the AWS fault server: per-key order,
 * what a keyed failure holds and reports, truncated claims and claim rounds.
 */
import assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { recordKey } from "../../../runtime/record/codec";
import { FakeDynamoDb, PASS, throttled } from "../../support/store/fake-client";
import * as relay from "../../support/runtime/relay-fixtures";

describe("createPublisher on keyed records (DynamoDB Local + AWS fault server)", function () {
    const openHarness = relay.harnessPerTest();

    it("delivers keyed records through the claim path in (created_at, seq) order, whatever order their stream records come in", async function () {
        const h = await openHarness();
        // Some share a millisecond: seq breaks the tie.
        const ids = await relay.writeKeyedOneByOne(h, "ACCOUNT#1", "acct-1", 6, (n) => (n % 2 === 0 ? 0 : 1));
        const event = await h.streamEvent();
        const reversed = { Records: [...event.Records].reverse() };
        assert.deepEqual(await h.publisher()(reversed), { batchItemFailures: [] });
        assert.deepEqual(relay.publishedIds(h), ids);
        assert.equal(
            h.server.calls().filter((c) => c.action === "PublishBatch").length,
            6,
            "one entry per key per call",
        );
        const records = await h.records();
        assert.ok(
            records.every((r) => r.status === "completed" && r.replayCount === 1),
            "each was claimed once, then completed",
        );
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
    });

    it("on a keyed failure releases what it claimed and reports the doorbell record; the retry keeps per-key order", async function () {
        const h = await openHarness();
        const { messageIds } = await h.writer.write({
            messages: [0, 1, 2].map((n) => ({ partition: "A", type: "T", payload: n, orderingKey: "k" })),
        });
        h.server.setFaults({
            entries: [relay.entryFault(messageIds[1], { code: "InternalError", times: 1 })],
        });
        const event = await h.streamEvent();
        const first = await h.publisher()(event);
        assert.deepEqual(first, { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] });
        assert.deepEqual(relay.publishedIds(h), [messageIds[0]]);
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [states.get(messageIds[0]!), states.get(messageIds[1]!), states.get(messageIds[2]!)],
            ["completed", "pending", "pending"],
            "released, not stranded",
        );
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(relay.publishedIds(h), messageIds);
    });

    it("reports the lower of a keyless and a keyed failure in one batch, whichever of the two comes first in the shard", async function () {
        const h = await openHarness();
        const write = async (partition: string, orderingKey?: string) =>
            (
                await h.writer.write({
                    messages: [{ partition, type: "T", payload: partition, ...(orderingKey ? { orderingKey } : {}) }],
                })
            ).messageIds[0]!;
        // Two batches: a keyed record then a keyless one, and a keyless record then a keyed one; SNS fails all four
        // as a fault every record would meet.
        const ids = [await write("A", "k"), await write("B"), await write("C"), await write("D", "k")];
        h.server.setFaults({
            entries: [
                { code: "InternalError", when: (e) => ids.includes(e.attributes["outbox.id"]?.stringValue ?? "") },
            ],
        });
        const event = await h.streamEvent();
        assert.deepEqual(event.Records.map(relay.idOf), ids);
        const keyedFirst = { Records: event.Records.slice(0, 2) };
        const keylessFirst = { Records: event.Records.slice(2, 4) };
        assert.deepEqual(
            await h.publisher()(keyedFirst),
            { batchItemFailures: [{ itemIdentifier: keyedFirst.Records[0]!.dynamodb.SequenceNumber }] },
            "the keyed record, below the keyless failure",
        );
        assert.deepEqual(
            await h.publisher()(keylessFirst),
            { batchItemFailures: [{ itemIdentifier: keylessFirst.Records[0]!.dynamodb.SequenceNumber }] },
            "the keyless record, below the keyed one",
        );
        assert.ok((await h.records()).every((r) => r.status === "pending"));
    });

    it("a keyed head SNS refuses holds only its own key: the partition's other keys are delivered in the same invocation, the shard goes on, and the head reaches the DLQ after maxPublishAttempts", async function () {
        const h = await openHarness();
        const b1 = await relay.writeKeyedOne(h, "b", "b1");
        const a1 = await relay.writeKeyedOne(h, "a", "a1");
        const a2 = await relay.writeKeyedOne(h, "a", "a2");
        const b2 = await relay.writeKeyedOne(h, "b", "b2");
        relay.refuseEntry(h, a1);
        const event = await h.streamEvent();
        const publisher = h.publisher({ maxPublishAttempts: 2 });

        assert.deepEqual(await publisher(event), { batchItemFailures: [] }, "no retry of the shard");
        assert.deepEqual(relay.publishedIds(h), [b1, b2], "key b went on past key a's refused head");
        assert.deepEqual(
            await relay.statusesOf(h, [a1, a2]),
            ["pending", "pending"],
            "key a held and released, in order",
        );
        const head = await h.ddb.send(
            new GetItemCommand({ TableName: h.tableName, Key: recordKey("P", a1, "sns"), ConsistentRead: true }),
        );
        assert.equal(
            head.Item?.publish_attempts?.N,
            "1",
            "the head is tried once per invocation, although two stream records of its key are in the batch",
        );
        assert.equal(relay.metric(h, "LeftForSweeper"), 2, "a1 and a2, each once");

        h.clock.advance(200_000);
        await createSweeper(h.config({ maxPublishAttempts: 2 }))();
        assert.deepEqual(relay.deadLettered(h), [[a1, "publish-rejected"]]);
        assert.deepEqual(relay.publishedIds(h), [b1, b2, a2], "key a follows once its head is dead-lettered");
    });

    it("a claim truncated by a throttled write is not taken for an exhausted partition: the first doorbell not delivered is reported, and the retry delivers the rest in order", async function () {
        const h = await openHarness();
        // 100 records: a claim of 100 is two transactions of 50, so a throttled second one leaves a short batch.
        const ids = await relay.writeKeyRun(h, "K", "k", 100);
        const event = await h.streamEvent();
        // A fake in front of DynamoDB Local, which never throttles: every claim transaction after the first is
        // throttled, so the store's claim comes back truncated (50 of 100) and every later claim fails.
        const db = new FakeDynamoDb(h.ddb).on("TransactWriteItems", (_input, call) =>
            call.nth > 1 ? Promise.reject(throttled()) : PASS,
        );
        const response = await h.publisher({ dynamodb: db as never })(event);
        assert.deepEqual(relay.publishedIds(h), ids.slice(0, 50), "the first transaction's 50 delivered, in order");
        assert.deepEqual(
            response,
            { batchItemFailures: [{ itemIdentifier: event.Records[50]!.dynamodb.SequenceNumber }] },
            "the first doorbell not delivered is reported, not acknowledged",
        );
        assert.equal(relay.metric(h, "DynamoDBOutboxClaimTruncated"), 1);
        assert.deepEqual(await relay.statusesOf(h, ids), [
            ...ids.slice(0, 50).map(() => "completed"),
            ...ids.slice(50).map(() => "pending"),
        ]);
        assert.deepEqual(await h.publisher()(relay.from(event, event.Records[50]!.dynamodb.SequenceNumber)), {
            batchItemFailures: [],
        });
        assert.deepEqual(relay.publishedIds(h), ids, "in order, each once");
    });

    it("a keyed record SNS refused maxPublishAttempts times whose DLQ send then fails holds only its own key: the partition's other keys are published in the same invocation, and the shard goes on", async function () {
        const h = await openHarness();
        const a1 = await relay.writeKeyedOne(h, "a", "a1");
        const b1 = await relay.writeKeyedOne(h, "b", "b1");
        const a2 = await relay.writeKeyedOne(h, "a", "a2");
        const b2 = await relay.writeKeyedOne(h, "b", "b2");
        // a1 and b1 share the first PublishBatch call; b2 is in a later one, which a stopped batch would never send.
        h.server.setFaults({
            entries: [relay.entryFault(a1, { code: "InvalidParameter", senderFault: true })],
            calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }],
        });
        const event = await h.streamEvent();
        assert.deepEqual(
            await h.publisher({ maxPublishAttempts: 1 })(event),
            { batchItemFailures: [] },
            "no retry of the shard",
        );
        assert.deepEqual(relay.publishedIds(h), [b1, b2], "key b went on, in its later call too");
        assert.deepEqual(await relay.statusesOf(h, [a1, a2]), ["pending", "pending"], "key a held, released in order");
        assert.equal(relay.metric(h, "LeftForSweeper"), 2);
        assert.equal(h.deadLetters().length, 0);
    });

    it("reports a keyed doorbell it could not reach within its claim rounds, and the retry finishes in order", async function () {
        const h = await openHarness();
        const ids: string[] = [];
        for (let n = 0; n < 12; n += 1)
            ids.push(
                ...(await h.writer.write({ messages: [{ partition: "K", type: "T", payload: n, orderingKey: "k" }] }))
                    .messageIds,
            );
        const event = await h.streamEvent();
        const newestFirst = { Records: [...event.Records].reverse() };
        const publisher = h.publisher({ claimLimit: 1 });
        assert.deepEqual(
            await publisher(newestFirst),
            { batchItemFailures: [{ itemIdentifier: newestFirst.Records[0]!.dynamodb.SequenceNumber }] },
            "10 rounds of 1 did not reach the newest",
        );
        assert.deepEqual(relay.publishedIds(h), ids.slice(0, 10));
        assert.deepEqual(await publisher(newestFirst), { batchItemFailures: [] });
        assert.deepEqual(relay.publishedIds(h), ids);
    });
});
