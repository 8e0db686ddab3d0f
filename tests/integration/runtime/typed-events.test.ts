/**
 * Typed events on real parts (issue 34): a zod schema (a Standard Schema) refuses an invalid event at write time on
 * DynamoDB Local, with nothing written (no record, no app item, no seq allocation), synchronously and asynchronously;
 * and at consume time, end to end (OutboxWriter → stream → the real publisher → fauxqs SNS → SQS →
 * createInboxHandler), where the invalid event is poison: failed and logged on each receive, never handed to
 * `consume`, no marker written, and moved to the DLQ by the queue's redrive policy. Then the inbox's native items:
 * ElectroDB's and dynamodb-toolbox's `params()` in `documentItems`, applied once with the marker, and a failing
 * ConditionCheck of theirs cancelling the marker.
 */
import assert from "node:assert/strict";
import { GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { z } from "zod";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { isOutboxError, type OutboxError } from "../../../runtime/errors";
import { Inbox } from "../../../runtime/inbox/inbox";
import { createInboxHandler } from "../../../runtime/inbox/handler";
import type { LogAttributes, Logger } from "../../../runtime/ports";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";
import { relayedOutbox, untilDepth } from "../../support/runtime/relay";
import { createConsumerTable, createOutboxTable } from "../../support/runtime/table";
import { pollUntilEmpty, receiveEvent } from "../../support/sqs-lambda";
import { documentLibraries, type DocumentLibraries } from "../../support/writer/document-libraries";
import { fixedClock, rejection, scanAll, WRITER_ADDRESS } from "../../support/writer/world";

interface OrderEvents {
    OrderPlaced: { orderId: string; total: number };
    OrderCancelled: { orderId: string };
}

const orderPlaced = z.object({ orderId: z.string(), total: z.number().nonnegative() });

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe("typed events: zod validators at write and at consume, and the inbox's native items (DynamoDB Local, fauxqs)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, consumerTable: string;
    before(async () => ({ ddb, fauxqs, consumerTable } = await startConsumerWorld("typed-consumer")));
    after(() => stopConsumerWorld(fauxqs));

    describe("the writer", () => {
        let table: string;
        let writer: OutboxWriter<OrderEvents>;
        beforeEach(async () => {
            table = await createOutboxTable(ddb, "typed-writer");
            writer = new OutboxWriter<OrderEvents>({
                client: ddb,
                tableName: table,
                clock: fixedClock(),
                address: WRITER_ADDRESS,
                validators: { OrderPlaced: orderPlaced },
                schemaVersions: { OrderPlaced: "2" },
            });
        });

        it("refuses an event its zod schema refuses (INVALID_PAYLOAD naming the message, the type and the path), and writes nothing: no record, no item, no seq allocation", async () => {
            const appItem = { Put: { TableName: consumerTable, Item: { PK: { S: "APP#1" }, SK: { S: "x" } } } };
            const err = (await rejection(
                writer.write({
                    items: [appItem],
                    messages: [
                        { partition: "ORDER#1", type: "OrderPlaced", payload: { orderId: "o-1", total: 1 } },
                        {
                            partition: "ORDER#2",
                            type: "OrderPlaced",
                            orderingKey: "o-2",
                            // What a caller without the types, or with a cast, can still pass.
                            payload: { orderId: "o-2", total: -5 },
                        },
                    ],
                }),
            )) as OutboxError;
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.equal(err.transient, false);
            assert.match(
                err.message,
                /^write: messages\[1\] \(id "[0-9A-Z]{26}"\): the payload of type "OrderPlaced" fails its zod schema at \$\.total: .*; nothing was written/,
            );
            assert.deepEqual(
                [err.context.type, err.context.path, err.context.messageIndex],
                ["OrderPlaced", "$.total", 1],
            );
            assert.deepEqual(
                await scanAll(ddb, table),
                [],
                "no record, and no FENCE row: the keyed message's seq was not allocated",
            );
            const app = await ddb.send(
                new GetItemCommand({ TableName: consumerTable, Key: { PK: { S: "APP#1" }, SK: { S: "x" } } }),
            );
            assert.equal(app.Item, undefined, "the app's own item is not written either");
        });

        it("writes a valid event, with its type's schema version; a type without a validator passes as before", async () => {
            const { messageIds } = await writer.write({
                messages: [
                    { partition: "ORDER#3", type: "OrderPlaced", payload: { orderId: "o-3", total: 3 } },
                    { partition: "ORDER#3", type: "OrderCancelled", payload: { orderId: "o-3" } },
                ],
            });
            assert.equal(messageIds.length, 2);
            assert.equal((await scanAll(ddb, table)).length, 2);
        });

        it("awaits an asynchronous zod schema (an async refinement) and refuses what it refuses; unvalidatedTypes 'refuse' refuses a type with no validator", async () => {
            const known = new Set(["o-4"]);
            const asyncWriter = new OutboxWriter<OrderEvents>({
                client: ddb,
                tableName: table,
                clock: fixedClock(),
                validators: {
                    OrderPlaced: orderPlaced.refine(async (p) => known.has(p.orderId), {
                        message: "unknown order",
                        path: ["orderId"],
                    }),
                },
                unvalidatedTypes: "refuse",
            });
            await asyncWriter.write({
                messages: [{ partition: "ORDER#4", type: "OrderPlaced", payload: { orderId: "o-4", total: 4 } }],
            });
            const unknownOrder = (await rejection(
                asyncWriter.write({
                    messages: [{ partition: "ORDER#5", type: "OrderPlaced", payload: { orderId: "o-5", total: 5 } }],
                }),
            )) as OutboxError;
            assert.ok(isOutboxError(unknownOrder, "INVALID_PAYLOAD"), String(unknownOrder));
            assert.match(unknownOrder.message, /fails its zod schema at \$\.orderId: unknown order/);
            const unvalidated = (await rejection(
                asyncWriter.write({
                    messages: [{ partition: "ORDER#6", type: "OrderCancelled", payload: { orderId: "o-6" } }],
                }),
            )) as OutboxError;
            assert.ok(isOutboxError(unvalidated, "INVALID_PAYLOAD"), String(unvalidated));
            assert.match(
                unvalidated.message,
                /type "OrderCancelled" has no validator and unvalidatedTypes is "refuse"/,
            );
            assert.equal((await scanAll(ddb, table)).length, 1, "only the valid event");
        });

        it("refuses a schema version outside its alphabet or length, naming the field and what is allowed", async () => {
            for (const schemaVersion of ["", "1 0", "v#1", "x".repeat(65)]) {
                const err = (await rejection(
                    writer.write({
                        messages: [
                            { partition: "P", type: "OrderCancelled", payload: { orderId: "o" }, schemaVersion },
                        ],
                    }),
                )) as OutboxError;
                assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
                assert.match(
                    err.message,
                    /^messages\[0\]\.schemaVersion is .*; a schema version (must be 1 to 64|may hold only)/,
                );
            }
            assert.deepEqual(await scanAll(ddb, table), []);
        });
    });

    it("the inbox: an event its zod schema refuses is poison (logged with the type and the path on each receive, never consumed, no marker) and the queue's redrive policy moves it to the DLQ; the valid event is applied once, with its schema version", async () => {
        const topicArn = await fauxqs.createTopic("typed-events");
        const dlq = await fauxqs.createQueue("typed-events-dlq");
        const queue = await fauxqs.createQueue("typed-events-consumer", {
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: 2 }),
        });
        await fauxqs.subscribe(topicArn, queue.queueArn, { rawMessageDelivery: true });
        // A writer without validators (another service, or an older deploy) is what puts an invalid event on the topic.
        const relayed = await relayedOutbox(ddb, fauxqs, topicArn, false, "typed-inbox");
        try {
            const { messageIds } = await relayed.writer.write({
                messages: [
                    {
                        partition: "ORDER#1",
                        type: "OrderPlaced",
                        payload: { orderId: "o-1", total: 10 },
                        schemaVersion: "2",
                    },
                    { partition: "ORDER#2", type: "OrderPlaced", payload: { orderId: "o-2", total: "10" } },
                ],
            });
            await untilDepth(fauxqs, queue, 2);
            const inbox = new Inbox({ client: ddb, consumer: "typed", tableName: consumerTable });
            const consumed: { outboxId: string; total: number; schemaVersion?: string }[] = [];
            const errors: LogAttributes[] = [];
            const handler = createInboxHandler<OrderEvents>({
                inbox,
                validators: { OrderPlaced: orderPlaced },
                consume: (message) => {
                    if (message.type !== "OrderPlaced") return [];
                    consumed.push({
                        outboxId: message.outboxId,
                        total: message.payload.total,
                        ...(message.schemaVersion !== undefined ? { schemaVersion: message.schemaVersion } : {}),
                    });
                    return [
                        {
                            Put: {
                                TableName: consumerTable,
                                Item: { PK: { S: `TYPED#${message.payload.orderId}` }, SK: { S: "x" } },
                            },
                        },
                    ];
                },
                logger: { ...quiet, error: (_message, attributes = {}) => void errors.push(attributes) },
            });
            assert.deepEqual(await pollUntilEmpty(fauxqs.sqs, queue, handler), { invocations: 2, failures: 2 });
            assert.deepEqual(
                consumed,
                [{ outboxId: messageIds[0], total: 10, schemaVersion: "2" }],
                "only the valid event reached consume",
            );
            assert.equal(errors.length, 2, "the poison is logged on each receive");
            for (const e of errors) {
                assert.equal(e.code, "INVALID_PAYLOAD");
                assert.match(
                    String(e.error),
                    new RegExp(
                        `\\(outbox id "${messageIds[1]}", message-attributes\\): the payload of type "OrderPlaced" fails its zod schema at \\$\\.total: .*; it is poison`,
                    ),
                );
            }
            const marker = await ddb.send(
                new GetItemCommand({
                    TableName: consumerTable,
                    Key: inbox.markerKey({ outboxId: messageIds[1]!, source: relayed.tableName }),
                    ConsistentRead: true,
                }),
            );
            assert.equal(marker.Item, undefined, "no marker for the poison: it was not acknowledged as applied");
            const dead = await receiveEvent(fauxqs.sqs, dlq);
            assert.deepEqual(
                dead.Records.map((r) => r.messageAttributes?.["outbox.id"]?.stringValue),
                [messageIds[1]],
                "the poison is in the DLQ, in plain sight",
            );
        } finally {
            await relayed.mapping.stop();
        }
    });

    describe("the inbox's native items (documentItems)", () => {
        let app: string;
        let inbox: Inbox;
        let libs: DocumentLibraries;

        before(async () => {
            // The app's table holds the markers too, keyed as ElectroDB and dynamodb-toolbox key it: pk and sk.
            app = await createConsumerTable(ddb, "typed-native", { partitionKey: "pk", sortKeyName: "sk" });
            inbox = new Inbox({ client: ddb, consumer: "native", tableName: app, partitionKey: "pk", sortKey: "sk" });
            libs = documentLibraries(ddb, app);
        });

        it("applies an ElectroDB-built and a dynamodb-toolbox-built item with the marker, once: the redelivery is a duplicate", async () => {
            const event = { outboxId: "native-1", source: "orders-outbox" };
            const writes = {
                documentItems: [...libs.createOrder("2001", 42), libs.putCustomer("CUSTOMER#21", "Ada", 1)],
            };
            assert.deepEqual(await inbox.apply(event, writes), { outcome: "applied" });
            assert.deepEqual((await libs.shop.entities.order.get({ orderId: "2001" }).go()).data, {
                orderId: "2001",
                total: 42,
            });
            assert.ok(await libs.exists("CUSTOMER#21", "A"), "dynamodb-toolbox's item is written");
            assert.deepEqual(await inbox.apply(event, writes), { outcome: "duplicate" });
        });

        it("a failing ElectroDB ConditionCheck cancels the toolbox item and the marker: CONDITION_FAILED naming documentItems[1], and the retry applies", async () => {
            const toolboxPut = libs.putCustomer("CUSTOMER#22", "Bob", 1);
            const event = { outboxId: "native-2", source: "orders-outbox" };
            const err = (await rejection(
                inbox.apply(event, { documentItems: [toolboxPut, ...libs.checkOrderTotal("2001", 999)] }),
            )) as OutboxError;
            assert.ok(isOutboxError(err, "CONDITION_FAILED"), String(err));
            assert.match(err.message, new RegExp(`documentItems\\[1\\] \\(ConditionCheck on table "${app}"`));
            assert.equal(await libs.exists("CUSTOMER#22", "A"), false, "no toolbox item");
            const marker = await ddb.send(new GetItemCommand({ TableName: app, Key: inbox.markerKey(event) }));
            assert.equal(marker.Item, undefined, "no marker");
            const toolboxCheck = libs.checkCustomer("CUSTOMER#21", { attr: "visits", eq: 1 });
            assert.deepEqual(await inbox.apply(event, { items: [], documentItems: [toolboxPut, toolboxCheck] }), {
                outcome: "applied",
            });
        });

        it("refuses malformed native items, and native values in items, before sending (INVALID_PAYLOAD naming the item, not transient)", async () => {
            const electroItems = libs.createOrder("2003", 5);
            const event = { outboxId: "native-3", source: "orders-outbox" };
            const cases: [unknown, RegExp][] = [
                [
                    { documentItems: [{ Put: { TableName: app, Item: { pk: "x", sk: "y", at: () => 1 } } }] },
                    /^inbox "native" \(source "orders-outbox", outbox id "native-3"\): documentItems\[0\] \(Put\): Item\.at is a function/,
                ],
                [
                    { documentItems: [{ Put: { TableName: app, Item: { pk: "x", sk: "y", list: [1, undefined] } } }] },
                    /documentItems\[0\] \(Put\) cannot be marshalled: Item\.list\[1\] is undefined/,
                ],
                [
                    { documentItems: [{ Put: { Item: { pk: "x" } } }] },
                    /documentItems\[0\] \(Put\)\.TableName must name a table/,
                ],
                [
                    { documentItems: [{}] },
                    /documentItems\[0\] must hold exactly one of Put, Update, Delete or ConditionCheck/,
                ],
                [{ documentItems: "x" }, /documentItems must be an array/],
                [electroItems, /items\[0\] \(Put\): Item\.orderId is string, not an AttributeValue.*as documentItems$/],
                [
                    { Put: { TableName: app, Item: { pk: { S: "x" } } } },
                    /or \{ items, documentItems \} \(this object has "Put"\)/,
                ],
            ];
            for (const [writes, message] of cases) {
                const err = (await rejection(inbox.apply(event, writes as never))) as OutboxError;
                assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
                assert.equal(err.transient, false);
                assert.match(err.message, message);
            }
            const marker = await ddb.send(new GetItemCommand({ TableName: app, Key: inbox.markerKey(event) }));
            assert.equal(marker.Item, undefined, "nothing was sent");
        });
    });
});
