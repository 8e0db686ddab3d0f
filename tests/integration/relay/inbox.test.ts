/**
 * End to end on the consumer's side: events written with `OutboxWriter` on DynamoDB Local, published by the real
 * publisher from the table's real stream (through the local event source mapping) to fauxqs, delivered by SNS to
 * SQS queues (raw delivery and SNS's envelope, standard and FIFO), received with ReceiveMessage and handed to
 * `createInboxHandler` as Lambda would (tests/support/sqs-lambda.ts: the failed messages are made visible at once
 * instead of after their visibility timeout). The consumers' effects are counted in their DynamoDB rows.
 *
 * Two shortcuts, said where they are taken: the relay's duplicate publish is made by sending the stored record's
 * own publish entry to the topic again; and fauxqs 1.9.2 hands out at most one message per FIFO group per
 * ReceiveMessage, so the FIFO batch that holds several messages of one group is assembled from messages really
 * received from the FIFO queue.
 */
import assert from "node:assert/strict";
import {
    GetItemCommand,
    PutItemCommand,
    QueryCommand,
    type DynamoDBClient,
    type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import { DeleteMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import {
    createInboxHandler,
    Inbox,
    type InboxMessage,
    type LambdaSqsEvent,
    type LambdaSqsRecord,
} from "../../../runtime";
import { outboundMessage, publishEntry } from "../../../runtime/record/message";
import type { Logger } from "../../../runtime/ports";
import type { OutboxMessage } from "../../../runtime/writer/writer";
import { queueDepth, relayedOutbox, untilDepth, type RelayedOutbox } from "../../support/runtime/relay";
import { scanRecords } from "../../support/runtime/table";
import { pollUntilEmpty, receiveEvent, settle, type Queue } from "../../support/sqs-lambda";
import { rawAndEnveloped, fifoTopicToQueue, startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";
import { appendApplied, appliedList } from "../../support/inbox/rows";

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The outbox side: a table, a writer, and the real publisher on the table's stream, publishing to a fauxqs topic. */
function outbox(ddb: DynamoDBClient, fauxqs: LocalFauxqs, topicArn: string, fifo: boolean): Promise<RelayedOutbox> {
    return relayedOutbox(ddb, fauxqs, topicArn, fifo, "inbox-e2e");
}

describe("end to end: OutboxWriter → stream → publisher → fauxqs SNS → SQS → createInboxHandler → DynamoDB Local", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, consumerTable: string;
    before(async () => ({ ddb, fauxqs, consumerTable } = await startConsumerWorld("inbox-e2e-consumer")));
    after(() => stopConsumerWorld(fauxqs));

    /** A consumer's effect: count the order's applications on its own row (`applied` is 1 when applied once). */
    function countOn(
        prefix: string,
        extra: (m: InboxMessage) => TransactWriteItem[] = () => [],
    ): (m: InboxMessage) => TransactWriteItem[] {
        return (m) => [
            {
                Update: {
                    TableName: consumerTable,
                    Key: { PK: { S: `${prefix}#${(m.payload as { orderId: string }).orderId}` }, SK: { S: "META" } },
                    UpdateExpression: "ADD applied :one SET outboxId = :id, tenant = :tenant",
                    ExpressionAttributeValues: {
                        ":one": { N: "1" },
                        ":id": { S: m.outboxId },
                        ":tenant": { S: m.headers.tenant ?? "" },
                    },
                },
            },
            ...extra(m),
        ];
    }

    async function row(key: string): Promise<Record<string, string>> {
        const out = await ddb.send(
            new GetItemCommand({
                TableName: consumerTable,
                Key: { PK: { S: key }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        return Object.fromEntries(Object.entries(out.Item ?? {}).map(([k, v]) => [k, v.S ?? v.N ?? ""]));
    }

    /** The consumer's markers of the events from one outbox (the source its relay stamps: its table name). */
    async function markers(consumer: string, source: string): Promise<string[]> {
        const out = await ddb.send(
            new QueryCommand({
                TableName: consumerTable,
                KeyConditionExpression: "PK = :pk",
                ExpressionAttributeValues: { ":pk": { S: `INBOX#${consumer}@${source}` } },
                ConsistentRead: true,
            }),
        );
        return (out.Items ?? []).map((i) => i.SK?.S ?? "").sort();
    }

    it("raw and enveloped subscriptions, two consumers: the same message twice (a relay duplicate in one batch, a redelivered batch) applies once per consumer; a failed write leaves no marker and its retry applies", async () => {
        const { topicArn, raw, enveloped } = await rawAndEnveloped(fauxqs, "inbox-orders");
        const { tableName, writer, mapping } = await outbox(ddb, fauxqs, topicArn, false);
        const ids: string[] = [];
        try {
            for (let n = 1; n <= 4; n += 1) {
                const message: OutboxMessage = {
                    partition: `ORDER#${n}`,
                    type: "OrderCreated",
                    payload: { orderId: `o${n}`, total: n * 10 },
                    headers: { tenant: n % 2 === 0 ? "acme" : "globex" },
                };
                const { messageIds } = await writer.write({
                    items: [{ Put: { TableName: tableName, Item: { PK: { S: `ORDER#${n}` }, SK: { S: "META" } } } }],
                    messages: [message],
                });
                ids.push(messageIds[0]!);
            }
            await mapping.drain({ timeoutMs: 30_000 });
        } finally {
            await mapping.stop();
        }
        // The relay publishing order 1 again (as after a completion that failed once SNS had taken it): its stored
        // record's own publish entry, with the source the relay stamps (its table name), sent to the topic a second time.
        const first = (await scanRecords(ddb, tableName)).find((r) => r.recordId === ids[0])!;
        await fauxqs.sns.send(
            new PublishBatchCommand({
                TopicArn: topicArn,
                PublishBatchRequestEntries: [publishEntry(outboundMessage(first, tableName), "again", false)],
            }),
        );
        await untilDepth(fauxqs, raw, 5);
        await untilDepth(fauxqs, enveloped, 5);

        // billing, on raw delivery.
        const billingSeen: InboxMessage[] = [];
        const billing = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer: "billing", tableName: consumerTable }),
            consume: (m) => {
                billingSeen.push(m);
                return countOn("INVOICE")(m);
            },
            logger: quiet,
        });
        const batch = await receiveEvent(fauxqs.sqs, raw);
        assert.equal(batch.Records.length, 5, "one batch holds all five, order 1 twice");
        assert.equal(batch.Records.filter((r) => r.messageAttributes?.["outbox.id"]?.stringValue === ids[0]).length, 2);
        assert.deepEqual(await billing(batch), { batchItemFailures: [] });
        // The invocation's answer is lost (a timeout after the work): nothing is deleted, the batch comes back.
        await settle(fauxqs.sqs, raw, batch, undefined);
        const again = await receiveEvent(fauxqs.sqs, raw);
        assert.deepEqual(
            again.Records.map((r) => r.messageId).sort(),
            batch.Records.map((r) => r.messageId).sort(),
            "the same SQS messages, redelivered",
        );
        assert.ok(again.Records.every((r) => r.attributes?.ApproximateReceiveCount === "2"));
        assert.deepEqual(await billing(again), { batchItemFailures: [] });
        await settle(fauxqs.sqs, raw, again, { batchItemFailures: [] });
        assert.equal(await queueDepth(fauxqs, raw), 0);

        const m1 = billingSeen.find((m) => m.outboxId === ids[0])!;
        assert.deepEqual(
            [m1.format, m1.type, m1.headers, m1.payload],
            ["message-attributes", "OrderCreated", { tenant: "globex" }, { orderId: "o1", total: 10 }],
        );
        for (let n = 1; n <= 4; n += 1) {
            const invoice = await row(`INVOICE#o${n}`);
            assert.equal(
                invoice.applied,
                "1",
                `order ${n} invoiced once (seen ${billingSeen.filter((m) => m.outboxId === ids[n - 1]).length} times)`,
            );
            assert.equal(invoice.outboxId, ids[n - 1]);
            assert.equal(invoice.tenant, n % 2 === 0 ? "acme" : "globex");
        }
        assert.deepEqual(await markers("billing", tableName), [...ids].sort());

        // shipping, on SNS's envelope: its own condition (the warehouse row exists) fails for order 2 at first.
        const warehouse = { PK: { S: "WAREHOUSE#o2" }, SK: { S: "META" } };
        const shippingSeen: InboxMessage[] = [];
        const shipping = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer: "shipping", tableName: consumerTable }),
            consume: (m) => {
                shippingSeen.push(m);
                const orderId = (m.payload as { orderId: string }).orderId;
                return countOn("SHIPMENT", () =>
                    orderId === "o2"
                        ? [
                              {
                                  ConditionCheck: {
                                      TableName: consumerTable,
                                      Key: warehouse,
                                      ConditionExpression: "attribute_exists(PK)",
                                  },
                              },
                          ]
                        : [],
                )(m);
            },
            logger: quiet,
        });
        const envelopedBatch = await receiveEvent(fauxqs.sqs, enveloped);
        assert.equal(envelopedBatch.Records.length, 5);
        const response = await shipping(envelopedBatch);
        const o2 = envelopedBatch.Records.find((r) => JSON.parse(JSON.parse(r.body).Message).orderId === "o2")!;
        assert.deepEqual(response.batchItemFailures, [{ itemIdentifier: o2.messageId }]);
        await settle(fauxqs.sqs, enveloped, envelopedBatch, response);
        assert.equal(
            (
                await ddb.send(
                    new GetItemCommand({
                        TableName: consumerTable,
                        Key: { PK: { S: `INBOX#shipping@${tableName}` }, SK: { S: ids[1]! } },
                        ConsistentRead: true,
                    }),
                )
            ).Item,
            undefined,
            "no marker for the failed write",
        );
        assert.deepEqual(await row("SHIPMENT#o2"), {}, "and none of its effect");

        await ddb.send(new PutItemCommand({ TableName: consumerTable, Item: warehouse }));
        const report = await pollUntilEmpty(fauxqs.sqs, enveloped, shipping);
        assert.deepEqual(report, { invocations: 1, failures: 0 }, "the retry of order 2 applies");
        const retried = shippingSeen.filter((m) => m.outboxId === ids[1]);
        assert.deepEqual(
            retried.map((m) => m.receiveCount),
            [1, 2],
        );
        assert.equal(retried[0]!.format, "sns-envelope");
        assert.deepEqual(retried[0]!.headers, { tenant: "acme" });
        for (let n = 1; n <= 4; n += 1)
            assert.equal((await row(`SHIPMENT#o${n}`)).applied, "1", `order ${n} shipped once`);
        assert.deepEqual(
            await markers("shipping", tableName),
            [...ids].sort(),
            "two consumers, each with its own markers",
        );
    });

    describe("a FIFO topic and queue (per-key MessageGroupId)", () => {
        /** Write `keys` × `perKey` keyed messages on a FIFO outbox and publish them through a FIFO topic to a FIFO queue. */
        async function fifoWorld(
            name: string,
            keys: readonly string[],
            perKey: number,
        ): Promise<{ queue: Queue; ids: Map<string, string> }> {
            const { topicArn, queue } = await fifoTopicToQueue(fauxqs, name);
            const { writer, mapping } = await outbox(ddb, fauxqs, topicArn, true);
            const ids = new Map<string, string>();
            try {
                for (let n = 1; n <= perKey; n += 1) {
                    for (const key of keys) {
                        const { messageIds } = await writer.write({
                            messages: [
                                {
                                    partition: "ACCOUNT#1",
                                    orderingKey: key,
                                    type: "BalanceChanged",
                                    payload: { key, n },
                                },
                            ],
                        });
                        ids.set(`${key}${n}`, messageIds[0]!);
                    }
                }
                await mapping.drain({ timeoutMs: 30_000 });
            } finally {
                await mapping.stop();
            }
            await untilDepth(fauxqs, queue, keys.length * perKey);
            return { queue, ids };
        }

        /** The consumer's effect: append n to the key's row, and log the application. */
        function appendConsumer(prefix: string, log: string[], fail: (m: InboxMessage) => boolean) {
            return (m: InboxMessage): TransactWriteItem[] => {
                const { key, n } = m.payload as { key: string; n: number };
                if (fail(m)) throw new Error(`${key}${n} cannot be applied yet`);
                log.push(`${key}${n}`);
                return [appendApplied(consumerTable, `${prefix}#${key}`, n, "META")];
            };
        }

        const appliedOf = (key: string): Promise<number[]> => appliedList(ddb, consumerTable, key, "META");

        it("the queue itself: a message failing in the middle of a group holds the group's later messages until it applies, and the other groups go on", async () => {
            const { queue, ids } = await fifoWorld("inbox-fifo-q", ["A", "B", "C"], 4);
            const log: string[] = [];
            const attempts = new Map<string, number>();
            const handler = createInboxHandler({
                inbox: new Inbox({ client: ddb, consumer: "ledger-q", tableName: consumerTable }),
                consume: appendConsumer("LEDGERQ", log, (m) => {
                    const id = m.outboxId;
                    attempts.set(id, (attempts.get(id) ?? 0) + 1);
                    return id === ids.get("A2") && attempts.get(id)! <= 2;
                }),
                logger: quiet,
            });
            const seenGroups: string[] = [];
            const report = await pollUntilEmpty(fauxqs.sqs, queue, async (event) => {
                for (const r of event.Records) seenGroups.push(r.attributes?.MessageGroupId ?? "");
                return handler(event);
            });
            assert.equal(report.failures, 2, "A2 failed twice");
            assert.deepEqual(
                [...new Set(seenGroups)].sort(),
                ["A", "B", "C"],
                "every record carries its MessageGroupId: the ordering key",
            );
            for (const key of ["A", "B", "C"])
                assert.deepEqual(
                    await appliedOf(`LEDGERQ#${key}`),
                    [1, 2, 3, 4],
                    `group ${key} applied once each, in order`,
                );
            const before = ["B2", "C2", "B3", "C3"].filter((k) => log.indexOf(k) > log.indexOf("A2"));
            assert.deepEqual(before, [], `the other groups went on while A2 failed: ${log.join(" ")}`);
            assert.ok(log.indexOf("A3") > log.indexOf("A2"), "A3 only after A2");
        });

        it("one batch with several messages of a group (assembled from received messages): after a failure the group's later messages fail unhandled, other groups are applied, and the retry applies the group in order", async () => {
            const { queue, ids } = await fifoWorld("inbox-fifo-b", ["A", "B"], 4);
            // fauxqs hands out one message per group per receive, and locks the group until it is deleted: receive
            // and delete until empty, keeping the records in the order received (each group's in order).
            const received: LambdaSqsRecord[] = [];
            for (
                let event = await receiveEvent(fauxqs.sqs, queue);
                event.Records.length > 0;
                event = await receiveEvent(fauxqs.sqs, queue)
            ) {
                for (const r of event.Records) {
                    received.push(r);
                    await fauxqs.sqs.send(
                        new DeleteMessageCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: r.receiptHandle }),
                    );
                }
            }
            assert.equal(received.length, 8);
            const keyOf = (r: LambdaSqsRecord) => JSON.parse(r.body) as { key: string; n: number };
            assert.deepEqual(
                received.map((r) => `${keyOf(r).key}${keyOf(r).n}`),
                ["A1", "B1", "A2", "B2", "A3", "B3", "A4", "B4"],
            );
            assert.ok(
                received.every(
                    (r) =>
                        r.eventSourceARN?.endsWith(".fifo") &&
                        r.attributes?.MessageGroupId !== undefined &&
                        r.attributes.SequenceNumber !== undefined,
                ),
            );

            const log: string[] = [];
            let failing = true;
            const handler = createInboxHandler({
                inbox: new Inbox({ client: ddb, consumer: "ledger-b", tableName: consumerTable }),
                consume: appendConsumer("LEDGERB", log, (m) => failing && m.outboxId === ids.get("A2")),
                logger: quiet,
            });
            const batch: LambdaSqsEvent = { Records: received };
            const response = await handler(batch);
            const name = (id: string) => received.find((r) => r.messageId === id)!;
            assert.deepEqual(
                response.batchItemFailures.map(
                    (f) => `${keyOf(name(f.itemIdentifier)).key}${keyOf(name(f.itemIdentifier)).n}`,
                ),
                ["A2", "A3", "A4"],
            );
            assert.deepEqual(log, ["A1", "B1", "B2", "B3", "B4"], "A3 and A4 were not handled; B went on");

            // Lambda's next batch: the failed messages again, in group order, received once more.
            failing = false;
            const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
            const retry: LambdaSqsEvent = {
                Records: received
                    .filter((r) => failed.has(r.messageId))
                    .map((r) => ({ ...r, attributes: { ...r.attributes, ApproximateReceiveCount: "2" } })),
            };
            assert.deepEqual(await handler(retry), { batchItemFailures: [] });
            assert.deepEqual(await appliedOf("LEDGERB#A"), [1, 2, 3, 4]);
            assert.deepEqual(await appliedOf("LEDGERB#B"), [1, 2, 3, 4]);
        });
    });

    it("a poison message is failed on every receive until the queue's redrive policy moves it to the DLQ (maxReceiveCount 3); the good message is applied", async () => {
        const dlq = await fauxqs.createQueue("inbox-poison-dlq");
        const queue = await fauxqs.createQueue("inbox-poison", {
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: 3 }),
        });
        await fauxqs.sqs.send(
            new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: JSON.stringify({ orderId: "no-id" }) }),
        );
        await fauxqs.sqs.send(
            new SendMessageCommand({
                QueueUrl: queue.queueUrl,
                MessageBody: JSON.stringify({ orderId: "p1" }),
                MessageAttributes: { "outbox.id": { DataType: "String", StringValue: "poison-test-good-1" } },
            }),
        );
        const errors: string[] = [];
        const handler = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer: "poison", tableName: consumerTable }),
            consume: countOn("POISON"),
            logger: {
                ...quiet,
                error: (message, attributes) => void errors.push(`${message} ${String(attributes?.receiveCount)}`),
            },
        });
        const report = await pollUntilEmpty(fauxqs.sqs, queue, handler);
        assert.deepEqual(report, { invocations: 3, failures: 3 });
        assert.deepEqual(
            errors.map((e) => e.replace(/.* /, "")),
            ["1", "2", "3"],
            "logged on each receive, with its receive count",
        );
        assert.equal((await row("POISON#p1")).applied, "1");
        const dead = await receiveEvent(fauxqs.sqs, dlq);
        assert.deepEqual(
            dead.Records.map((r) => JSON.parse(r.body)),
            [{ orderId: "no-id" }],
            "the poison message is in the DLQ, not dropped",
        );
    });
});
