/**
 * The inbox's Lambda SQS handler on DynamoDB Local, fed SQS records in the shapes each delivery path produces
 * (built here field by field; tests/integration/relay/inbox.test.ts feeds it what fauxqs really delivered): what the consumer
 * is handed, duplicates, poison messages failed and logged, a failing consumer, the FIFO group rule, a delivery
 * format added through the extension point, and the refused options. The consumer's effect appends the message's
 * number to its group's row, so the row shows both how often and in which order each message was applied.
 */
import * as assert from "node:assert/strict";
import {
    GetItemCommand,
    type AttributeValue,
    type DynamoDBClient,
    type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { Inbox } from "../../../runtime/inbox/inbox";
import {
    createInboxHandler,
    isFifoRecord,
    type InboxConsumer,
    type InboxHandler,
    type InboxMessage,
} from "../../../runtime/inbox/handler";
import { DELIVERY_FORMATS, type DeliveryFormat } from "../../../runtime/inbox/delivery-formats";
import type { LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import { eventDetail } from "../../../runtime/destination/event-detail";
import { OutboxError, isOutboxError } from "../../../runtime/errors";
import type { LogAttributes, Logger } from "../../../runtime/ports";

import { appendApplied, appliedList } from "../../support/inbox/rows";
import { freshConsumerTable } from "../../support/inbox/world";

const STANDARD_QUEUE = "arn:aws:sqs:eu-west-1:111111111111:billing";
const FIFO_QUEUE = "arn:aws:sqs:eu-west-1:111111111111:billing.fifo";

interface Delivered {
    readonly messageId: string;
    readonly outboxId?: string;
    readonly n: number;
    readonly type?: string;
    readonly headers?: Record<string, string>;
    readonly groupId?: string;
    readonly queueArn?: string;
    readonly receiveCount?: number;
}

/** A record as SNS raw delivery leaves it: the payload as the body, the outbox attributes as message attributes. */
function rawRecord(d: Delivered): LambdaSqsRecord {
    const attribute = (value: string) => ({
        stringValue: value,
        stringListValues: [],
        binaryListValues: [],
        dataType: "String",
    });
    const messageAttributes: Record<string, ReturnType<typeof attribute>> = {};
    if (d.outboxId !== undefined) messageAttributes["outbox.id"] = attribute(d.outboxId);
    messageAttributes["outbox.type"] = attribute(d.type ?? "OrderCreated");
    for (const [k, v] of Object.entries(d.headers ?? {})) messageAttributes[k] = attribute(v);
    return {
        messageId: d.messageId,
        receiptHandle: `rh-${d.messageId}`,
        body: JSON.stringify({ n: d.n, note: "é <&>" }),
        attributes: {
            ApproximateReceiveCount: String(d.receiveCount ?? 1),
            SentTimestamp: "1767225600000",
            SenderId: "AIDAEXAMPLE",
            ApproximateFirstReceiveTimestamp: "1767225600000",
            ...(d.groupId !== undefined
                ? {
                      MessageGroupId: d.groupId,
                      MessageDeduplicationId: d.outboxId ?? d.messageId,
                      SequenceNumber: String(d.n),
                  }
                : {}),
        },
        messageAttributes,
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: d.queueArn ?? (d.groupId !== undefined ? FIFO_QUEUE : STANDARD_QUEUE),
        awsRegion: "eu-west-1",
    };
}

/** A record as SNS delivers without raw delivery: its Notification JSON as the body. */
function envelopeRecord(d: Delivered, tweak: (n: Record<string, unknown>) => void = () => undefined): LambdaSqsRecord {
    const attributes: Record<string, { Type: string; Value: string }> = {
        "outbox.type": { Type: "String", Value: d.type ?? "OrderCreated" },
    };
    if (d.outboxId !== undefined) attributes["outbox.id"] = { Type: "String", Value: d.outboxId };
    for (const [k, v] of Object.entries(d.headers ?? {})) attributes[k] = { Type: "String", Value: v };
    attributes["bin"] = { Type: "Binary", Value: Buffer.from("x").toString("base64") };
    const notification: Record<string, unknown> = {
        Type: "Notification",
        MessageId: `sns-${d.messageId}`,
        TopicArn: "arn:aws:sns:eu-west-1:111111111111:orders-events",
        Message: JSON.stringify({ n: d.n, note: "é <&>" }),
        Timestamp: "2026-01-01T00:00:00.000Z",
        SignatureVersion: "1",
        Signature: "EXAMPLE",
        SigningCertURL: "https://sns.eu-west-1.amazonaws.com/cert.pem",
        UnsubscribeURL: "https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe",
        MessageAttributes: attributes,
    };
    tweak(notification);
    return { ...rawRecord({ ...d, outboxId: undefined }), messageAttributes: {}, body: JSON.stringify(notification) };
}

/** A logger that keeps every entry. */
function memoryLogger(): Logger & { entries: { level: string; message: string; attributes: LogAttributes }[] } {
    const entries: { level: string; message: string; attributes: LogAttributes }[] = [];
    const at =
        (level: string) =>
        (message: string, attributes: LogAttributes = {}) =>
            void entries.push({ level, message, attributes });
    return { entries, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

describe("createInboxHandler: the Lambda SQS handler on the inbox (DynamoDB Local)", function () {
    this.timeout(60_000);
    let ddb: DynamoDBClient, table: string;
    before(async () => ({ ddb, table } = await freshConsumerTable("inbox-handler")));

    /** The consumer's effect: append the message's number to its group's row. */
    function appendTo(row: string): (message: InboxMessage) => TransactWriteItem[] {
        return (message) => [appendApplied(table, row, (message.payload as { n: number }).n)];
    }

    const applied = (row: string): Promise<number[]> => appliedList(ddb, table, row);

    async function getMarker(key: Record<string, AttributeValue>) {
        return (await ddb.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
    }

    /** A handler whose consumer keeps what it was handed and appends each message's number to `row`. */
    function recordingHandler(consumer: string, row: string) {
        const seen: InboxMessage[] = [];
        return {
            ...handlerFor(consumer, (m) => {
                seen.push(m);
                return appendTo(row)(m);
            }),
            seen,
        };
    }

    function handlerFor(
        consumer: string,
        consume: InboxConsumer,
        logger = memoryLogger(),
        formats?: readonly DeliveryFormat[],
    ): { handler: InboxHandler; logger: ReturnType<typeof memoryLogger> } {
        const inbox = new Inbox({ client: ddb, consumer, tableName: table });
        return { handler: createInboxHandler({ inbox, consume, logger, ...(formats ? { formats } : {}) }), logger };
    }

    it("hands the consumer the outbox id, type, headers, payload and raw body of a raw delivery; a duplicate in the batch or a later one changes nothing", async () => {
        const row = "RAW#1";
        const { handler, seen } = recordingHandler("raw-1", row);
        const first = rawRecord({ messageId: "m1", outboxId: "id-raw-1", n: 1, headers: { tenant: "acme" } });
        const again = rawRecord({ messageId: "m2", outboxId: "id-raw-1", n: 1, headers: { tenant: "acme" } });
        assert.deepEqual(await handler({ Records: [first, again] }), { batchItemFailures: [] });
        assert.deepEqual(
            await handler({ Records: [rawRecord({ messageId: "m1", outboxId: "id-raw-1", n: 1, receiveCount: 2 })] }),
            { batchItemFailures: [] },
        );
        assert.deepEqual(await applied(row), [1], "applied once");

        const m = seen[0]!;
        assert.equal(m.outboxId, "id-raw-1");
        assert.equal(m.type, "OrderCreated");
        assert.deepEqual(m.headers, { tenant: "acme" }, "the outbox.* attributes are not headers");
        assert.deepEqual(m.payload, { n: 1, note: "é <&>" });
        assert.equal(m.body, '{"n":1,"note":"é <&>"}');
        assert.equal(m.format, "message-attributes");
        assert.equal(m.messageId, "m1");
        assert.equal(m.receiveCount, 1);
        assert.equal(m.groupId, undefined);
        assert.equal(m.record, first);
        assert.equal(seen[2]!.receiveCount, 2);
    });

    it("reads SNS's envelope (raw delivery off) the same way: Message as the body, MessageAttributes as the attributes", async () => {
        const row = "ENV#1";
        const { handler, seen } = recordingHandler("env-1", row);
        const record = envelopeRecord({
            messageId: "e1",
            outboxId: "id-env-1",
            n: 5,
            type: "OrderShipped",
            headers: { tenant: "globex", region: "eu" },
        });
        assert.deepEqual(
            await handler({ Records: [record, envelopeRecord({ messageId: "e2", outboxId: "id-env-1", n: 5 })] }),
            { batchItemFailures: [] },
        );
        assert.deepEqual(await applied(row), [5]);
        assert.equal(seen[0]!.outboxId, "id-env-1");
        assert.equal(seen[0]!.type, "OrderShipped");
        assert.deepEqual(
            seen[0]!.headers,
            { tenant: "globex", region: "eu" },
            "String attributes only: the Binary one is not a header",
        );
        assert.deepEqual(seen[0]!.payload, { n: 5, note: "é <&>" });
        assert.equal(seen[0]!.format, "sns-envelope");
    });

    it("reads an EventBridge event an SQS target delivered: detail.outbox's id, type, headers and trace context, detail.payload as the body", async () => {
        const row = "BUS#1";
        const { handler, logger, seen } = recordingHandler("bus-1", row);
        const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        // The event as EventBridge delivers it to an SQS target: the Detail the publisher put, in the envelope.
        const busRecord = (messageId: string, detail: string) => ({
            ...rawRecord({ messageId, n: 0 }),
            messageAttributes: {},
            body: `${JSON.stringify({
                version: "0",
                id: `ev-${messageId}`,
                "detail-type": "OrderShipped",
                source: "dynamodb-outbox",
                account: "111111111111",
                time: "2026-12-02T05:04:15Z",
                region: "eu-west-1",
                resources: [],
            }).slice(0, -1)},"detail":${detail}}`,
        });
        const detail = eventDetail({
            id: "id-bus-1",
            type: "OrderShipped",
            partition: "P",
            body: '{"n":7,"note":"é <&>","big":12345678901234567890}',
            headers: { tenant: "initech" },
            traceparent,
            createdAt: 0,
            expiresAt: 0,
        });
        assert.deepEqual(
            await handler({
                Records: [
                    busRecord("b1", detail),
                    busRecord("b2", detail),
                    busRecord("b3", '{"outbox":{"type":"T","headers":{}},"payload":1}'),
                ],
            }),
            { batchItemFailures: [{ itemIdentifier: "b3" }] },
        );
        assert.deepEqual(await applied(row), [7], "applied once");
        assert.deepEqual(
            [seen[0]!.outboxId, seen[0]!.type, seen[0]!.headers, seen[0]!.traceparent, seen[0]!.format],
            ["id-bus-1", "OrderShipped", { tenant: "initech" }, traceparent, "eventbridge-envelope"],
        );
        assert.equal(
            seen[0]!.body,
            '{"n":7,"note":"é <&>","big":12345678901234567890}',
            "the payload's own text, a number beyond 2^53 unchanged",
        );
        assert.equal((seen[0]!.payload as { n: number }).n, 7);
        assert.match(
            String(logger.entries.find((e) => e.level === "error")?.attributes.error),
            /SQS message b3 \(eventbridge-envelope\): the event's detail\.outbox has no id string/,
        );
    });

    it("reads the source (outbox.source) in each delivery format and keys the marker on it: the same outbox id from two outboxes applies once each; without a source, the older key", async () => {
        const row = "SOURCES#1";
        const { handler, seen } = recordingHandler("sources-1", row);
        const from = (source: string) => ({ "outbox.source": source });
        const busRecord = (messageId: string, source: string, n: number) => ({
            ...rawRecord({ messageId, n: 0 }),
            messageAttributes: {},
            body: JSON.stringify({
                version: "0",
                id: `ev-${messageId}`,
                "detail-type": "OrderShipped",
                source: "dynamodb-outbox",
                detail: JSON.parse(
                    eventDetail({
                        id: "evt-1001",
                        source,
                        type: "OrderShipped",
                        partition: "P",
                        body: JSON.stringify({ n }),
                        headers: {},
                        createdAt: 0,
                        expiresAt: 0,
                    }),
                ) as unknown,
            }),
        });
        const records = [
            rawRecord({ messageId: "s1", outboxId: "evt-1001", n: 1, headers: from("orders") }),
            envelopeRecord({ messageId: "s2", outboxId: "evt-1001", n: 2, headers: from("payments") }),
            busRecord("s3", "shipping", 3),
            // The same events again, each in another format: duplicates.
            envelopeRecord({ messageId: "s4", outboxId: "evt-1001", n: 1, headers: from("orders") }),
            busRecord("s5", "payments", 2),
            rawRecord({ messageId: "s6", outboxId: "evt-1001", n: 3, headers: from("shipping") }),
            // No source (an older publisher, a GoBridge relay): the older key, a fourth event.
            rawRecord({ messageId: "s7", outboxId: "evt-1001", n: 4 }),
            envelopeRecord({ messageId: "s8", outboxId: "evt-1001", n: 4 }),
        ];
        assert.deepEqual(await handler({ Records: records }), { batchItemFailures: [] });
        assert.deepEqual((await applied(row)).sort(), [1, 2, 3, 4], "four events, each applied once");
        assert.deepEqual(
            seen.map((m) => [m.messageId, m.source, m.format]),
            [
                ["s1", "orders", "message-attributes"],
                ["s2", "payments", "sns-envelope"],
                ["s3", "shipping", "eventbridge-envelope"],
                ["s4", "orders", "sns-envelope"],
                ["s5", "payments", "eventbridge-envelope"],
                ["s6", "shipping", "message-attributes"],
                ["s7", undefined, "message-attributes"],
                ["s8", undefined, "sns-envelope"],
            ],
        );
        assert.deepEqual(seen[0]!.headers, {}, "outbox.source is not a header");
        const markers = new Inbox({ client: ddb, consumer: "sources-1", tableName: table });
        for (const event of ["orders", "payments", "shipping"].map((source) => ({ outboxId: "evt-1001", source })))
            assert.ok(await getMarker(markers.markerKey(event)), `the marker of ${event.source}'s evt-1001`);
        assert.ok(await getMarker(markers.markerKey("evt-1001")), "the older key, for the message without one");
    });

    it("fails a bus event whose detail.outbox.source is not a string, or a message whose source is not one a relay stamps, as poison", async () => {
        const row = "SOURCES#2";
        const { handler, logger } = handlerFor("sources-2", appendTo(row));
        const bus = {
            ...rawRecord({ messageId: "p1", n: 0 }),
            messageAttributes: {},
            body: JSON.stringify({
                "detail-type": "T",
                source: "dynamodb-outbox",
                detail: { outbox: { id: "evt-1", type: "T", source: 7, headers: {} }, payload: { n: 1 } },
            }),
        };
        const raw = rawRecord({ messageId: "p2", outboxId: "evt-2", n: 2, headers: { "outbox.source": "orders#eu" } });
        assert.deepEqual(await handler({ Records: [bus, raw] }), {
            batchItemFailures: [{ itemIdentifier: "p1" }, { itemIdentifier: "p2" }],
        });
        assert.deepEqual(await applied(row), []);
        const errors = logger.entries.filter((e) => e.level === "error").map((e) => String(e.attributes.error));
        assert.match(
            errors[0]!,
            /SQS message p1 \(eventbridge-envelope\): the event's detail\.outbox\.source is not a string/,
        );
        assert.match(errors[1]!, /the message's source \(outbox\.source\) is "orders#eu"; it may hold only letters/);
    });

    it("fails poison messages, logs each at error with its message id and receive count, and handles the rest", async () => {
        const row = "POISON#1";
        const { handler, logger } = handlerFor("poison-1", appendTo(row));
        const noId = rawRecord({ messageId: "no-id", n: 1, receiveCount: 3 });
        const notJson = { ...rawRecord({ messageId: "not-json", outboxId: "id-p-2", n: 2 }), body: "<order/>" };
        const envelopeNoId = envelopeRecord({ messageId: "env-no-id", n: 3 });
        const envelopeNoMessage = envelopeRecord(
            { messageId: "env-no-message", outboxId: "id-p-4", n: 4 },
            (n) => delete n.Message,
        );
        const binaryId = {
            ...rawRecord({ messageId: "binary-id", n: 5 }),
            messageAttributes: { "outbox.id": { binaryValue: "AAE=", dataType: "Binary" } },
        };
        const good = rawRecord({ messageId: "good", outboxId: "id-p-6", n: 6 });
        const response = await handler({ Records: [noId, notJson, envelopeNoId, envelopeNoMessage, binaryId, good] });
        assert.deepEqual(
            response.batchItemFailures.map((f) => f.itemIdentifier),
            ["no-id", "not-json", "env-no-id", "env-no-message", "binary-id"],
        );
        assert.deepEqual(await applied(row), [6]);
        const errors = logger.entries.filter((e) => e.level === "error");
        assert.deepEqual(
            errors.map((e) => e.attributes.messageId),
            ["no-id", "not-json", "env-no-id", "env-no-message", "binary-id"],
        );
        assert.ok(
            errors.every(
                (e) =>
                    /poison message failed; SQS redelivers it until the queue's redrive policy moves it to the DLQ/.test(
                        e.message,
                    ) && e.attributes.code === "INVALID_PAYLOAD",
            ),
        );
        assert.equal(errors[0]!.attributes.receiveCount, "3");
        assert.match(
            String(errors[0]!.attributes.error),
            /SQS message no-id has no outbox\.id: neither a message attribute \(SNS raw delivery, an SQS destination\), an SNS notification carrying it, an EventBridge event with detail\.outbox\.id, nor an outbox's CloudEvent \(tried message-attributes, cloudevents, sns-envelope, eventbridge-envelope\)/,
        );
        assert.match(
            String(errors[1]!.attributes.error),
            /SQS message not-json \(outbox id "id-p-2", message-attributes\): the body \(8 characters\) is not JSON/,
        );
        assert.match(
            String(errors[2]!.attributes.error),
            /SQS message env-no-id \(sns-envelope\): the SNS notification carries no outbox\.id message attribute/,
        );
        assert.match(String(errors[3]!.attributes.error), /the SNS notification has no Message string/);
        assert.match(
            String(errors[4]!.attributes.error),
            /its outbox\.id attribute has no string value \(dataType Binary\)/,
        );
        assert.ok(!JSON.stringify(logger.entries).includes("<order/>"), "no payload in the logs");
    });

    it("fails a message whose consumer throws (logged at error, or warn when transient) and goes on with the others on a standard queue", async () => {
        const row = "THROWS#1";
        const { handler, logger } = handlerFor("throws-1", (m) => {
            const n = (m.payload as { n: number }).n;
            if (n === 2) throw new Error("customer service down");
            if (n === 3) throw new OutboxError("THROTTLED", "our own read was throttled");
            return appendTo(row)(m);
        });
        const records = [1, 2, 3, 4].map((n) => rawRecord({ messageId: `t${n}`, outboxId: `id-t-${n}`, n }));
        assert.deepEqual((await handler({ Records: records })).batchItemFailures, [
            { itemIdentifier: "t2" },
            { itemIdentifier: "t3" },
        ]);
        assert.deepEqual(await applied(row), [1, 4], "a standard queue keeps no order: the others go on");
        const failures = logger.entries.filter((e) => e.message === "inbox: message failed; SQS redelivers it");
        assert.deepEqual(
            failures.map((e) => [e.level, e.attributes.outboxId, e.attributes.code]),
            [
                ["error", "id-t-2", "Error"],
                ["warn", "id-t-3", "THROTTLED"],
            ],
        );
    });

    it("a failed consumer write leaves no marker: the redelivery applies it", async () => {
        const row = "RETRY#1";
        let failOnce = true;
        const { handler } = handlerFor("retry-1", (m) => [
            ...appendTo(row)(m),
            // The consumer's own condition: the first attempt finds no customer row.
            {
                ConditionCheck: {
                    TableName: table,
                    Key: { PK: { S: "CUSTOMER#R1" }, SK: { S: "META" } },
                    ConditionExpression: failOnce ? "attribute_exists(PK)" : "attribute_not_exists(PK)",
                },
            },
        ]);
        const record = rawRecord({ messageId: "r1", outboxId: "id-r-1", n: 1 });
        assert.deepEqual((await handler({ Records: [record] })).batchItemFailures, [{ itemIdentifier: "r1" }]);
        const marker = await ddb.send(
            new GetItemCommand({
                TableName: table,
                Key: { PK: { S: "INBOX#retry-1" }, SK: { S: "id-r-1" } },
                ConsistentRead: true,
            }),
        );
        assert.equal(marker.Item, undefined, "no marker");
        failOnce = false;
        assert.deepEqual(
            (
                await handler({
                    Records: [{ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: "2" } }],
                })
            ).batchItemFailures,
            [],
        );
        assert.deepEqual(await applied(row), [1]);
    });

    describe("on a FIFO queue", () => {
        it("fails the rest of a group after its first failure, without handling them, so they come back after it; other groups go on", async () => {
            let failing = true;
            const handled: string[] = [];
            const { handler, logger } = handlerFor("fifo-1", (m) => {
                handled.push(m.messageId);
                if (m.messageId === "a2" && failing) throw new Error("a2's effect cannot be applied yet");
                return appendTo(`FIFO1#${m.groupId}`)(m);
            });
            const a = [1, 2, 3, 4].map((n) =>
                rawRecord({ messageId: `a${n}`, outboxId: `id-a-${n}`, n, groupId: "A" }),
            );
            const b = [1, 2, 3].map((n) => rawRecord({ messageId: `b${n}`, outboxId: `id-b-${n}`, n, groupId: "B" }));
            // As SQS hands out a FIFO batch: each group's messages in order, groups interleaved.
            const batch = [a[0]!, b[0]!, a[1]!, b[1]!, a[2]!, a[3]!, b[2]!];
            const first = await handler({ Records: batch });
            assert.deepEqual(
                first.batchItemFailures.map((f) => f.itemIdentifier),
                ["a2", "a3", "a4"],
            );
            assert.deepEqual(handled, ["a1", "b1", "a2", "b2", "b3"], "a3 and a4 were not handed to the consumer");
            assert.deepEqual(await applied("FIFO1#A"), [1]);
            assert.deepEqual(await applied("FIFO1#B"), [1, 2, 3], "the other group went on");
            const skipped = logger.entries.filter((e) =>
                /later messages of a FIFO group failed without being handled/.test(e.message),
            );
            assert.deepEqual(
                skipped.map((e) => [e.level, e.attributes.groupId, e.attributes.skipped]),
                [["warn", "A", 2]],
            );

            // The failed messages come back, in order, after the failing one.
            failing = false;
            const retry = await handler({ Records: [a[1]!, a[2]!, a[3]!] });
            assert.deepEqual(retry.batchItemFailures, []);
            assert.deepEqual(await applied("FIFO1#A"), [1, 2, 3, 4], "the group's order held");
        });

        it("is recognized by the queue ARN's .fifo suffix or by a MessageGroupId", () => {
            assert.equal(
                isFifoRecord(rawRecord({ messageId: "x", n: 1, groupId: "g", queueArn: STANDARD_QUEUE })),
                true,
                "a MessageGroupId",
            );
            assert.equal(
                isFifoRecord({ ...rawRecord({ messageId: "x", n: 1 }), eventSourceARN: FIFO_QUEUE }),
                true,
                "the ARN",
            );
            assert.equal(isFifoRecord(rawRecord({ messageId: "x", n: 1 })), false);
        });

        it("a poison message fails its group's later messages too (they wait for the redrive policy to move it)", async () => {
            const { handler } = handlerFor("fifo-2", appendTo("FIFO2"));
            const records = [
                rawRecord({ messageId: "c1", outboxId: "id-c-1", n: 1, groupId: "C" }),
                { ...rawRecord({ messageId: "c2", n: 2, groupId: "C" }) },
                rawRecord({ messageId: "c3", outboxId: "id-c-3", n: 3, groupId: "C" }),
            ];
            assert.deepEqual(
                (await handler({ Records: records })).batchItemFailures.map((f) => f.itemIdentifier),
                ["c2", "c3"],
            );
            assert.deepEqual(await applied("FIFO2"), [1]);
        });
    });

    it("takes another delivery format through `formats` (the extension point, e.g. EventBridge → SQS), before or instead of the built-in ones", async () => {
        const eventBridge: DeliveryFormat = {
            name: "eventbridge-test",
            parse(record) {
                const body = JSON.parse(record.body) as {
                    "detail-type"?: string;
                    detail?: { outboxId: string; payload: unknown };
                };
                if (body["detail-type"] === undefined || body.detail === undefined) return undefined;
                return {
                    outboxId: body.detail.outboxId,
                    type: body["detail-type"],
                    headers: {},
                    body: JSON.stringify(body.detail.payload),
                };
            },
        };
        const seen: InboxMessage[] = [];
        const { handler } = handlerFor("eb-1", (m) => void seen.push(m), memoryLogger(), [
            ...DELIVERY_FORMATS,
            eventBridge,
        ]);
        const body = JSON.stringify({
            version: "0",
            id: "ev-1",
            "detail-type": "OrderCreated",
            source: "orders",
            detail: { outboxId: "id-eb-1", payload: { n: 9 } },
        });
        const record = { ...rawRecord({ messageId: "eb1", n: 9 }), messageAttributes: {}, body };
        assert.deepEqual(await handler({ Records: [record, { ...record, messageId: "eb2" }] }), {
            batchItemFailures: [],
        });
        assert.equal(seen.length, 2, "the consumer runs for the duplicate too; its writes are dropped");
        assert.deepEqual(
            [seen[0]!.outboxId, seen[0]!.type, seen[0]!.format, seen[0]!.payload],
            ["id-eb-1", "OrderCreated", "eventbridge-test", { n: 9 }],
        );
        const marker = await ddb.send(
            new GetItemCommand({
                TableName: table,
                Key: { PK: { S: "INBOX#eb-1" }, SK: { S: "id-eb-1" } },
                ConsistentRead: true,
            }),
        );
        assert.ok(marker.Item, "returning nothing records the message as seen");
    });

    it("takes aws-lambda's SQSEvent and answers an SQSBatchResponse (type-checked), and an empty batch", async () => {
        const { handler } = handlerFor("types-1", () => undefined);
        const typed: (event: SQSEvent) => Promise<SQSBatchResponse> = handler;
        assert.deepEqual(await typed({ Records: [] }), { batchItemFailures: [] });
    });

    it("logs with a JSON-lines logger named after the consumer when none is given", async () => {
        const inbox = new Inbox({ client: ddb, consumer: "default-logger", tableName: table });
        const handler = createInboxHandler({ inbox, consume: () => undefined });
        const lines: string[] = [];
        const write = process.stdout.write;
        process.stdout.write = ((chunk: unknown) => (lines.push(String(chunk)), true)) as typeof process.stdout.write;
        try {
            await handler({ Records: [rawRecord({ messageId: "dl1", n: 1 })] });
        } finally {
            process.stdout.write = write;
        }
        const entry = JSON.parse(lines.find((l) => l.includes("poison"))!) as Record<string, unknown>;
        assert.equal(entry.level, "error");
        assert.equal(entry.function, "inbox default-logger");
        assert.equal(entry.messageId, "dl1");
    });

    describe("refuses bad options (INVALID_CONFIG)", () => {
        const cases: [string, () => unknown, RegExp][] = [
            [
                "no inbox",
                () => createInboxHandler({ consume: () => undefined } as never),
                /createInboxHandler: inbox must be an Inbox/,
            ],
            [
                "no consume",
                () =>
                    createInboxHandler({ inbox: new Inbox({ client: ddb, consumer: "x", tableName: table }) } as never),
                /consume must be a function \(message\) => writes, got undefined/,
            ],
            [
                "empty formats",
                () =>
                    createInboxHandler({
                        inbox: new Inbox({ client: ddb, consumer: "x", tableName: table }),
                        consume: () => undefined,
                        formats: [],
                    }),
                /formats must be a non-empty array of DeliveryFormat/,
            ],
            [
                "a format without parse",
                () =>
                    createInboxHandler({
                        inbox: new Inbox({ client: ddb, consumer: "x", tableName: table }),
                        consume: () => undefined,
                        formats: [{ name: "x" } as DeliveryFormat],
                    }),
                /formats must be a non-empty array/,
            ],
        ];
        for (const [name, run, message] of cases)
            it(name, () =>
                assert.throws(run, (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message)),
            );
    });
});
