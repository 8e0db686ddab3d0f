/**
 * The stream publisher when the destination refuses a record or the deployment is at fault, and on expired
 * records: what holds the shard, what is counted, what reaches the DLQ, and a DLQ that cannot take a record.
 */
import assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import type { LambdaStreamRecord } from "../../../runtime/testing/stream-event";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { marshalRecord, recordKey, unmarshalRecord } from "../../../runtime/record/codec";
import { ATTR } from "../../../runtime/schema";
import * as relay from "../../support/runtime/relay-fixtures";

describe("createPublisher on refused and expired records (DynamoDB Local + AWS fault server)", function () {
    const openHarness = relay.harnessPerTest();

    it("publishes what it reads from its own table, not the stream image: an image that differs from the row never goes out", async function () {
        const h = await openHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "from-the-table" }] });
        const [record] = (await h.streamEvent()).Records;
        const row = unmarshalRecord(record!.dynamodb.NewImage as never);
        const image = marshalRecord({
            ...row,
            envelope: { ...row.envelope, payload: JSON.stringify("from-the-image") },
        });
        const tampered = {
            ...record!,
            dynamodb: { ...record!.dynamodb, NewImage: image },
        } as unknown as LambdaStreamRecord;
        assert.deepEqual(await h.publisher()({ Records: [tampered] }), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => JSON.parse(p.body) as string),
            ["from-the-table"],
        );
    });

    it("a record SNS refuses never holds the shard: its attempt is counted durably, it stays pending for the sweeper, and the sweeper dead-letters it at maxPublishAttempts", async function () {
        const h = await openHarness();
        const messageIds = await relay.writeNumbered(h, 3);
        const poison = messageIds[1]!;
        relay.refuseEntry(h, poison);

        assert.deepEqual(
            await h.publisher({ maxPublishAttempts: 2 })(await h.streamEvent()),
            { batchItemFailures: [] },
            "the batch goes on",
        );
        assert.deepEqual(relay.publishedIds(h).sort(), [messageIds[0]!, messageIds[2]!].sort());
        const item = await h.ddb.send(
            new GetItemCommand({ TableName: h.tableName, Key: recordKey("P", poison, "sns"), ConsistentRead: true }),
        );
        assert.equal(item.Item?.publish_attempts?.N, "1", "counted durably on the item, not in memory");
        assert.equal(item.Item?.status?.S, "pending");
        assert.equal(relay.metric(h, "LeftForSweeper"), 1);
        assert.equal(h.deadLetters().length, 0);

        h.clock.advance(200_000);
        await createSweeper(h.config({ maxPublishAttempts: 2 }))();
        const dl = h.deadLetters();
        assert.equal(dl.length, 1);
        assert.equal(dl[0]!.reason, "publish-rejected");
        assert.equal(dl[0]!.recordId, poison);
        assert.equal(dl[0]!.body.errorCode, "InvalidParameter");
        assert.equal(dl[0]!.body.attempts, 2, "the stream's attempt and the sweeper's");
        assert.deepEqual(dl[0]!.body.payload, 2, "the DLQ keeps the payload for a redrive");
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("a record refused twice by the stream path (a redelivered batch) reaches the DLQ at maxPublishAttempts without the sweeper", async function () {
        const h = await openHarness();
        const messageIds = await relay.writeNumbered(h, 2);
        const poison = messageIds[0]!;
        relay.refuseEntry(h, poison);
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        // A new cold start (a new handler) sees the durable count.
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason, d.body.attempts]),
            [[poison, "publish-rejected", 2]],
        );
        assert.deepEqual(relay.publishedIds(h), [messageIds[1]]);
    });

    it("an entry SNS refuses with an unknown code and SenderFault reaches the DLQ after maxPublishAttempts; the others are published", async function () {
        const h = await openHarness();
        const messageIds = await relay.writeNumbered(h, 3);
        const poison = messageIds[1]!;
        relay.refuseEntry(h, poison, "SomethingSnsAddsLater");
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        assert.equal(h.deadLetters().length, 0);
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason, d.body.errorCode]),
            [[poison, "publish-rejected", "SomethingSnsAddsLater"]],
        );
        assert.deepEqual(relay.publishedIds(h).sort(), [messageIds[0]!, messageIds[2]!].sort());
    });

    it("holds the shard on a fault of the deployment (the topic does not exist, a KMS key it cannot use): nothing counted, nothing dead-lettered", async function () {
        const h = await openHarness();
        await h.writer.write({ messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })) });
        const event = await h.streamEvent();
        const first = { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] };
        const missingTopic = h.publisher({ topicArn: `${h.topicArn}-deleted`, maxPublishAttempts: 1 });
        for (let i = 0; i < 3; i += 1) assert.deepEqual(await missingTopic(event), first);
        h.server.setFaults({ entries: [{ code: "KMSInvalidState", senderFault: true }] });
        for (let i = 0; i < 3; i += 1) assert.deepEqual(await h.publisher({ maxPublishAttempts: 1 })(event), first);
        assert.equal(h.deadLetters().length, 0);
        assert.ok(
            (await h.items())
                .filter((i) => i.SK?.S?.startsWith("OUTBOX#"))
                .every((i) => i.status?.S === "pending" && i.publish_attempts === undefined),
        );

        h.server.setFaults({});
        assert.deepEqual(
            await h.publisher()(event),
            { batchItemFailures: [] },
            "once the deployment is fixed, everything goes out",
        );
        assert.equal(h.published().length, 2);
    });

    it("holds the shard, never dead-letters, when SNS refuses the topic itself (InvalidParameter: Invalid parameter: TopicArn, as for a topic of another region), on the stream path and in the sweeper", async function () {
        const h = await openHarness();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: 1 },
                { partition: "P", type: "T", payload: 2 },
                { partition: "K", type: "T", payload: 3, orderingKey: "k" },
            ],
        });
        const event = await h.streamEvent();
        // A fake SNS client in front of the test server: it answers what real SNS answers for a topic ARN of another
        // region or a malformed one, which the test server cannot (its injected InvalidParameter names no parameter).
        const wrongTopic = {
            send: (command: object) =>
                command instanceof PublishBatchCommand
                    ? Promise.reject(
                          Object.assign(new Error("Invalid parameter: TopicArn"), {
                              name: "InvalidParameterException",
                              $fault: "client",
                              $metadata: { httpStatusCode: 400 },
                          }),
                      )
                    : h.sns.send(command as never),
        };
        const first = { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] };
        for (let i = 0; i < 3; i += 1)
            assert.deepEqual(await h.publisher({ sns: wrongTopic, maxPublishAttempts: 1 })(event), first);
        // The keyed record alone: its drain through the claim path holds too.
        const keyed = { Records: [event.Records[2]!] };
        const keyedFirst = { batchItemFailures: [{ itemIdentifier: event.Records[2]!.dynamodb.SequenceNumber }] };
        for (let i = 0; i < 2; i += 1)
            assert.deepEqual(await h.publisher({ sns: wrongTopic, maxPublishAttempts: 1 })(keyed), keyedFirst);
        h.clock.advance(200_000);
        const swept = await createSweeper(h.config({ sns: wrongTopic, maxPublishAttempts: 1 }))();
        assert.deepEqual([swept.published, swept.deadLettered, swept.failedPartitions], [0, 0, 2]);
        assert.equal(h.deadLetters().length, 0, "nothing dead-lettered as publish-rejected");
        assert.ok(
            (await h.items())
                .filter((i) => i.SK?.S?.startsWith("OUTBOX#"))
                .every((i) => i.status?.S === "pending" && i.publish_attempts === undefined),
            "no attempt counted",
        );

        assert.deepEqual(
            await h.publisher()(event),
            { batchItemFailures: [] },
            "once the topic is right, everything goes out",
        );
        assert.deepEqual(relay.publishedIds(h).sort(), [...messageIds].sort());
    });

    it("sends expired records to the DLQ with reason expired, marks them expired, and never publishes them", async function () {
        const h = await openHarness();
        const now = h.clock.now();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: "keep", expiresAt: new Date(now + 60_000) },
                { partition: "P", type: "T", payload: "late", expiresAt: new Date(now + 1_000) },
                {
                    partition: "Q",
                    type: "T",
                    payload: "late-keyed",
                    orderingKey: "k",
                    expiresAt: new Date(now + 1_000),
                },
            ],
        });
        h.clock.advance(5_000);
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(relay.publishedIds(h), [messageIds[0]]);
        assert.deepEqual(
            relay.deadLetterReasons(h),
            [
                ["expired", messageIds[1]],
                ["expired", messageIds[2]],
            ].sort(),
        );
        const byId = new Map((await h.records()).map((r) => [r.recordId, r]));
        assert.equal(byId.get(messageIds[0]!)?.status, "completed");
        assert.equal(byId.get(messageIds[1]!)?.status, "expired");
        assert.equal(byId.get(messageIds[2]!)?.status, "expired");
        for (const item of await h.items())
            if (item[ATTR.sk]!.S!.startsWith("OUTBOX#")) assert.ok(item[ATTR.ttl]?.N, "terminal records carry ttl");
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
    });

    describe("a DLQ that cannot take a record never holds the shard", function () {
        it("an expired keyless record stays pending for the sweeper (LeftForSweeper) while the records behind it are published; the sweeper dead-letters it after the outage", async function () {
            const h = await openHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const now = h.clock.now();
            const { messageIds } = await h.writer.write({
                messages: [
                    { partition: "P", type: "T", payload: "late", expiresAt: new Date(now + 1_000) },
                    { partition: "P", type: "T", payload: "fine" },
                    { partition: "Q", type: "T", payload: "fine" },
                ],
            });
            h.clock.advance(5_000);
            assert.deepEqual(
                await h.publisher()(await h.streamEvent()),
                { batchItemFailures: [] },
                "no retry of the shard",
            );
            assert.deepEqual(relay.publishedIds(h), messageIds.slice(1));
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.equal(byId.get(messageIds[0]!), "pending", "not lost: left for the sweeper");
            assert.equal(relay.metric(h, "LeftForSweeper"), 1);
            assert.equal(relay.metric(h, "Expired"), 0);

            h.server.setFaults({});
            h.clock.advance(200_000);
            assert.equal((await createSweeper(h.config())()).expired, 1);
            assert.deepEqual(relay.deadLettered(h), [[messageIds[0], "expired"]]);
        });

        it("a keyless record at maxPublishAttempts stays pending when the DLQ is down; the batch goes on", async function () {
            const h = await openHarness();
            const messageIds = await relay.writeNumbered(h, 2);
            const poison = messageIds[0]!;
            relay.refuseEntry(h, poison, "InvalidParameter", [
                { kind: "InternalError", actions: ["SendMessage"], times: 100 },
            ]);
            assert.deepEqual(await h.publisher({ maxPublishAttempts: 1 })(await h.streamEvent()), {
                batchItemFailures: [],
            });
            assert.deepEqual(relay.publishedIds(h), [messageIds[1]]);
            assert.equal(new Map((await h.records()).map((r) => [r.recordId, r.status])).get(poison), "pending");
            assert.equal(relay.metric(h, "LeftForSweeper"), 1);
            assert.equal(h.deadLetters().length, 0);
        });

        it("an expired keyed head the DLQ cannot take holds only its key: its later records stay pending for the sweeper, the shard goes on, and the sweeper delivers the key in order", async function () {
            const h = await openHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const write = async (partition: string, orderingKey?: string, expiresAt?: Date) =>
                (
                    await h.writer.write({
                        messages: [
                            {
                                partition,
                                type: "T",
                                payload: orderingKey ?? partition,
                                ...(orderingKey ? { orderingKey } : {}),
                                ...(expiresAt ? { expiresAt } : {}),
                            },
                        ],
                    })
                ).messageIds[0]!;
            const a1 = await write("K", "a", new Date(h.clock.now() + 1_000));
            const a2 = await write("K", "a");
            const b1 = await write("K", "b");
            const free = await write("F");
            h.clock.advance(5_000);
            const event = await h.streamEvent();
            assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] }, "no retry of the shard");
            assert.deepEqual(relay.publishedIds(h).sort(), [b1, free].sort(), "key b and the keyless record went on");
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                [a1, a2].map((id) => byId.get(id)),
                ["pending", "pending"],
            );
            assert.equal(relay.metric(h, "LeftForSweeper"), 2, "the head and the record behind it, each once");

            h.server.setFaults({});
            h.clock.advance(200_000);
            await createSweeper(h.config())();
            assert.deepEqual(relay.deadLettered(h), [[a1, "expired"]]);
            const published = relay.publishedIds(h);
            assert.deepEqual(
                [...published.slice(0, 2).sort(), ...published.slice(2)],
                [...[b1, free].sort(), a2],
                "key a follows its dead-lettered head",
            );
        });
    });
});
