/**
 * What the inbox handler refuses, on DynamoDB Local (issue 33). An event that is not an SQS event fails the
 * invocation with `INVALID_CONFIG`, naming what arrived and how to wire the handler, and nothing of it is applied or
 * acknowledged; a malformed record inside an SQS batch is reported by its `messageId`; an empty `outbox.id` is
 * poison; and an EventBridge event's text payload (`payloadFormat: "text"`) reaches the handler as its text.
 *
 * The foreign events are the shapes Lambda hands a function: the SNS event made of what fauxqs's SNS really sent
 * (its Notification, received from a queue, laid out as @types/aws-lambda's `SNSEvent`), the DynamoDB stream event
 * of DynamoDB Local's real stream, and an EventBridge and a Kinesis event typed as @types/aws-lambda's. The text
 * payload goes through the real publisher to the fault server's EventBridge stand-in, routed to a queue.
 */
import * as assert from "node:assert/strict";
import { GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { PublishCommand } from "@aws-sdk/client-sns";
import type { EventBridgeEvent, KinesisStreamEvent, SNSEvent, SQSRecord } from "aws-lambda";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { Inbox } from "../../../runtime/inbox/inbox";
import { createInboxHandler, type InboxHandler, type InboxMessage } from "../../../runtime/inbox/handler";
import { EVENTBRIDGE_ENVELOPE_DELIVERY } from "../../../runtime/inbox/delivery-formats";
import type { LambdaSqsEvent, LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import { eventDetail } from "../../../runtime/destination/event-detail";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { receiveEvent } from "../../support/sqs-lambda";
import { destroyStreamsClients } from "../../support/stream-table";
import { freshConsumerTable } from "../../support/inbox/world";

const QUEUE_ARN = "arn:aws:sqs:eu-west-1:111111111111:billing";

/** What the handler says it takes, and how to wire it: in every refusal. */
const WIRING =
    /createInboxHandler takes only the SQS event that Lambda's event source mapping delivers, and acknowledges nothing else: subscribe an SQS queue to the SNS topic \(or make the queue an EventBridge rule's target, or the outbox's own destination\), map the queue to this function with functionResponseTypes \["ReportBatchItemFailures"\]/;

/** An SQS record as Lambda delivers a raw SNS delivery (or the outbox's own queue): typed as @types/aws-lambda's. */
function sqsRecord(messageId: string, outboxId: string, body = JSON.stringify({ n: 1 })): SQSRecord {
    const attribute = (stringValue: string) => ({
        stringValue,
        stringListValues: [],
        binaryListValues: [],
        dataType: "String",
    });
    return {
        messageId,
        receiptHandle: `rh-${messageId}`,
        body,
        attributes: {
            ApproximateReceiveCount: "1",
            SentTimestamp: "1767225600000",
            SenderId: "AIDAEXAMPLE",
            ApproximateFirstReceiveTimestamp: "1767225600000",
        },
        messageAttributes: { "outbox.id": attribute(outboxId), "outbox.type": attribute("OrderPlaced") },
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: QUEUE_ARN,
        awsRegion: "eu-west-1",
    };
}

/** A record whose body is all it carries (no message attributes): an SNS envelope or an EventBridge event. */
function bodyOnly(messageId: string, body: string): LambdaSqsRecord {
    return { ...sqsRecord(messageId, "x"), messageAttributes: {}, body };
}

describe("createInboxHandler refuses what it cannot read (DynamoDB Local)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient, table: string;
    before(async () => ({ ddb, table } = await freshConsumerTable("inbox-refusals")));

    /** A handler whose consumer records what it was handed and writes one row per outbox id. */
    function handlerFor(consumer: string): {
        handler: InboxHandler;
        consumed: InboxMessage[];
        logger: RecordingLogger;
    } {
        const consumed: InboxMessage[] = [];
        const logger = new RecordingLogger();
        const handler = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer, tableName: table }),
            logger,
            consume: (m) => {
                consumed.push(m);
                return [
                    {
                        Put: {
                            TableName: table,
                            Item: { PK: { S: `APPLIED#${consumer}#${m.outboxId}` }, SK: { S: "META" } },
                        },
                    },
                ];
            },
        });
        return { handler, consumed, logger };
    }

    async function marker(consumer: string, outboxId: string): Promise<boolean> {
        const out = await ddb.send(
            new GetItemCommand({
                TableName: table,
                Key: { PK: { S: `INBOX#${consumer}` }, SK: { S: outboxId } },
                ConsistentRead: true,
            }),
        );
        return out.Item !== undefined;
    }

    /**
     * The handler rejects `event` with INVALID_CONFIG matching `pattern` and the wiring advice, logged at error once,
     * with no consumer call.
     */
    async function assertRefused(
        consumer: string,
        event: unknown,
        pattern: RegExp,
        eventSource?: string,
    ): Promise<void> {
        const { handler, consumed, logger } = handlerFor(consumer);
        await assert.rejects(
            handler(event as LambdaSqsEvent),
            (err: unknown) => {
                assert.ok(isOutboxError(err, "INVALID_CONFIG"), String(err));
                assert.match(err.message, pattern);
                assert.match(err.message, WIRING);
                assert.match(err.message, new RegExp(`^inbox "${consumer}": `));
                assert.equal(err.context.eventSource, eventSource);
                return true;
            },
            JSON.stringify(event)?.slice(0, 200),
        );
        assert.equal(consumed.length, 0, "nothing was handed to the consumer");
        const errors = logger.lines.filter((e) => e.level === "error");
        assert.deepEqual(
            errors.map((e) => [e.attributes?.code, e.attributes?.eventSource]),
            [["INVALID_CONFIG", eventSource]],
            "logged at error once",
        );
        assert.match(
            errors[0]!.message,
            /not an SQS event it can answer; failing the invocation, nothing acknowledged/,
        );
    }

    describe("an event that is not an SQS event fails the invocation (INVALID_CONFIG), naming what arrived", () => {
        let fauxqs: LocalFauxqs;
        let h: Harness | undefined;
        before(async () => {
            fauxqs = await startFauxqs();
        });
        after(async () => {
            await h?.close();
            await fauxqs?.stop();
            destroyStreamsClients();
        });

        it("SNS invoking the function itself: the event Lambda gets from the topic is refused; the same publish read from a subscribed queue is applied", async () => {
            const topicArn = await fauxqs.createTopic("refusals-orders");
            const enveloped = await fauxqs.createQueue("refusals-enveloped");
            const raw = await fauxqs.createQueue("refusals-raw");
            const subscriptionArn = await fauxqs.subscribe(topicArn, enveloped.queueArn, { rawMessageDelivery: false });
            await fauxqs.subscribe(topicArn, raw.queueArn, { rawMessageDelivery: true });
            await fauxqs.sns.send(
                new PublishCommand({
                    TopicArn: topicArn,
                    Message: JSON.stringify({ orderId: 7 }),
                    MessageAttributes: {
                        "outbox.id": { DataType: "String", StringValue: "sns-direct-1" },
                        "outbox.type": { DataType: "String", StringValue: "OrderPlaced" },
                    },
                }),
            );
            // What SNS sent, as Lambda lays it out when the topic invokes the function (Sns: the notification).
            const [delivered] = (await receiveEvent(fauxqs.sqs, enveloped)).Records;
            const n = JSON.parse(delivered!.body) as Record<string, string> & {
                MessageAttributes: SNSEvent["Records"][0]["Sns"]["MessageAttributes"];
            };
            const snsEvent: SNSEvent = {
                Records: [
                    {
                        EventVersion: "1.0",
                        EventSubscriptionArn: subscriptionArn,
                        EventSource: "aws:sns",
                        Sns: {
                            Type: n.Type!,
                            MessageId: n.MessageId!,
                            TopicArn: n.TopicArn!,
                            Message: n.Message!,
                            Timestamp: n.Timestamp!,
                            SignatureVersion: n.SignatureVersion!,
                            Signature: n.Signature!,
                            SigningCertUrl: n.SigningCertURL!,
                            UnsubscribeUrl: n.UnsubscribeURL!,
                            MessageAttributes: n.MessageAttributes,
                        },
                    },
                ],
            };
            assert.equal(snsEvent.Records[0]!.Sns.MessageAttributes["outbox.id"]?.Value, "sns-direct-1");
            await assertRefused(
                "sns-direct",
                snsEvent,
                new RegExp(
                    `the event's records come from "aws:sns" \\(${subscriptionArn.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\), not from an SQS queue \\("aws:sqs"\\)`,
                ),
                "aws:sns",
            );
            assert.equal(await marker("sns-direct", "sns-direct-1"), false, "not applied");

            const { handler, consumed } = handlerFor("sns-direct");
            assert.deepEqual(await handler(await receiveEvent(fauxqs.sqs, raw)), { batchItemFailures: [] });
            assert.deepEqual(
                consumed.map((m) => m.outboxId),
                ["sns-direct-1"],
            );
            assert.equal(await marker("sns-direct", "sns-direct-1"), true, "the queue's copy was applied");
        });

        it("the outbox table's DynamoDB stream mapped to the inbox: DynamoDB Local's stream event is refused", async () => {
            h = await createHarness();
            await h.writer.write({ messages: [{ partition: "ORDER#1", type: "OrderPlaced", payload: { n: 1 } }] });
            const streamEvent = await h.streamEvent();
            assert.equal(streamEvent.Records.length, 1);
            await assertRefused(
                "stream-direct",
                streamEvent,
                /the event's records come from "aws:dynamodb" \(arn:aws:dynamodb:[^)]*\/stream\/[^)]*\), not from an SQS queue \("aws:sqs"\)/,
                "aws:dynamodb",
            );
        });

        it("an EventBridge rule targeting the function itself, and a Kinesis stream", async () => {
            const detail = JSON.parse(
                eventDetail({
                    id: "bus-direct-1",
                    type: "OrderPlaced",
                    partition: "ORDER#1",
                    body: '{"n":1}',
                    headers: {},
                    createdAt: 0,
                    expiresAt: 0,
                }),
            ) as { outbox: unknown; payload: unknown };
            const busEvent: EventBridgeEvent<"OrderPlaced", typeof detail> = {
                version: "0",
                id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
                "detail-type": "OrderPlaced",
                source: "com.example.orders",
                account: "111111111111",
                time: "2026-01-01T00:00:00Z",
                region: "eu-west-1",
                resources: [],
                detail,
            };
            await assertRefused(
                "bus-direct",
                busEvent,
                /the event has no Records array \(its keys: version, id, detail-type, source, account, time, …\); it is not an SQS event, but an EventBridge event delivered directly \(source "com\.example\.orders", detail-type "OrderPlaced"\)/,
            );
            assert.equal(await marker("bus-direct", "bus-direct-1"), false);

            const kinesis: KinesisStreamEvent = {
                Records: [
                    {
                        kinesis: {
                            kinesisSchemaVersion: "1.0",
                            partitionKey: "ORDER#1",
                            sequenceNumber: "49590338271490256608559692538361571095921575989136588898",
                            data: Buffer.from('{"n":1}').toString("base64"),
                            approximateArrivalTimestamp: 1767225600,
                        },
                        eventSource: "aws:kinesis",
                        eventVersion: "1.0",
                        eventID: "shardId-000000000006:49590338271490256608559692538361571095921575989136588898",
                        eventName: "aws:kinesis:record",
                        invokeIdentityArn: "arn:aws:iam::111111111111:role/consumer",
                        awsRegion: "eu-west-1",
                        eventSourceARN: "arn:aws:kinesis:eu-west-1:111111111111:stream/orders",
                    },
                ],
            };
            await assertRefused(
                "kinesis-direct",
                kinesis,
                /the event's records come from "aws:kinesis" \(arn:aws:kinesis:eu-west-1:111111111111:stream\/orders\), not from an SQS queue/,
                "aws:kinesis",
            );
        });

        it("a malformed event: no Records, Records not an array, not an object, a record that is not an object, or records from two sources", async () => {
            const good = sqsRecord("m-good", "malformed-event-1");
            const cases: [string, unknown, RegExp, string?][] = [
                ["no Records", {}, /the event has no Records array \(its keys: none\); it is not an SQS event/],
                [
                    "Records as a string",
                    { Records: "[]" },
                    /the event has no Records array \(its keys: Records\) \(its Records is a string\); it is not an SQS event/,
                ],
                ["Records null", { Records: null }, /\(its Records is null\)/],
                ["null", null, /the event has no Records array \(it is null\)/],
                ["undefined", undefined, /the event has no Records array \(it is undefined\)/],
                ["a string", "{}", /the event has no Records array \(it is a string\)/],
                ["a null record", { Records: [good, null] }, /the event's record 1 is null, not an SQS record/],
                ["an array record", { Records: [[good]] }, /the event's record 0 is an array, not an SQS record/],
                [
                    "a record naming no eventSource",
                    { Records: [{ ...good, eventSource: undefined }] },
                    /the event's records come from a source that names no eventSource \(arn:aws:sqs:eu-west-1:111111111111:billing\), not from an SQS queue \("aws:sqs"\)/,
                ],
                [
                    "an SQS record beside an S3 one",
                    {
                        Records: [
                            good,
                            { eventSource: "aws:s3", eventName: "ObjectCreated:Put", s3: { bucket: { name: "b" } } },
                        ],
                    },
                    /the event's records come from "aws:s3", not from an SQS queue/,
                    "aws:s3",
                ],
            ];
            for (const [name, event, pattern, source] of cases) {
                await assert.doesNotReject(assertRefused("malformed-event", event, pattern, source), name);
            }
            assert.equal(
                await marker("malformed-event", "malformed-event-1"),
                false,
                "the good record was not applied",
            );
        });

        it("a record without a usable messageId: the whole invocation fails, since batchItemFailures could not name it", async () => {
            const good = sqsRecord("m-good", "no-id-1");
            for (const [messageId, shown] of [
                [undefined, "undefined"],
                ["", "empty"],
                [42, "a number"],
            ] as const) {
                await assertRefused(
                    "no-message-id",
                    { Records: [good, { ...sqsRecord("x", "no-id-2"), messageId }] },
                    new RegExp(
                        `the event's record 1 has no messageId \\(it is ${shown}\\); every record Lambda's SQS event source mapping delivers has one, and batchItemFailures can only name a record by it`,
                    ),
                    "aws:sqs",
                );
            }
            assert.equal(await marker("no-message-id", "no-id-1"), false, "nothing of the batch was applied");
            assert.equal(await marker("no-message-id", "no-id-2"), false);
        });
    });

    it("reports each malformed record of an SQS batch by its messageId, never hands it to the consumer, and applies the others", async () => {
        const { handler, consumed, logger } = handlerFor("malformed-records");
        const records: LambdaSqsRecord[] = [
            sqsRecord("good-1", "mr-1"),
            { ...sqsRecord("body-number", "mr-2"), body: 42 as unknown as string },
            { ...sqsRecord("body-missing", "mr-3"), body: undefined as unknown as string },
            { ...sqsRecord("attributes-string", "mr-4"), attributes: "x" as never },
            { ...sqsRecord("message-attributes-array", "mr-5"), messageAttributes: [] as never },
            {
                ...sqsRecord("message-attribute-null", "mr-6"),
                messageAttributes: { "outbox.id": null as never },
            },
            { ...sqsRecord("arn-number", "mr-7"), eventSourceARN: 7 as unknown as string },
            sqsRecord("good-2", "mr-8"),
        ];
        const response = await handler({ Records: records });
        assert.deepEqual(
            response.batchItemFailures.map((f) => f.itemIdentifier),
            [
                "body-number",
                "body-missing",
                "attributes-string",
                "message-attributes-array",
                "message-attribute-null",
                "arn-number",
            ],
            "reported by id, never as an empty item",
        );
        assert.ok(
            response.batchItemFailures.every((f) => typeof f.itemIdentifier === "string" && f.itemIdentifier !== ""),
        );
        assert.deepEqual(
            consumed.map((m) => m.outboxId),
            ["mr-1", "mr-8"],
        );
        const errors = logger.lines.filter((e) => e.level === "error");
        assert.deepEqual(
            errors.map((e) => [e.attributes?.messageId, e.attributes?.code]),
            response.batchItemFailures.map((f) => [f.itemIdentifier, "INVALID_PAYLOAD"]),
        );
        assert.deepEqual(
            errors.map((e) =>
                String(e.attributes?.error).replace(
                    /; it is not a record as Lambda's SQS event source mapping delivers it$/,
                    "",
                ),
            ),
            [
                "SQS message body-number: its body is a number, not a string",
                "SQS message body-missing: its body is undefined, not a string",
                "SQS message attributes-string: its attributes is a string, not an object",
                "SQS message message-attributes-array: its messageAttributes is an array, not an object",
                'SQS message message-attribute-null: its message attribute "outbox.id" is null, not an object',
                "SQS message arn-number: its eventSourceARN is a number, not a string",
            ],
        );
        assert.ok(errors.every((e) => /poison message failed/.test(e.message)));
    });

    it("refuses an empty outbox.id on each delivery format as poison: reported by id, never handed to the consumer", async () => {
        const { handler, consumed, logger } = handlerFor("empty-id");
        const raw = sqsRecord("raw-empty", "");
        const envelope: LambdaSqsRecord = bodyOnly(
            "envelope-empty",
            JSON.stringify({
                Type: "Notification",
                MessageId: "sns-1",
                TopicArn: "arn:aws:sns:eu-west-1:111111111111:orders",
                Message: '{"n":1}',
                MessageAttributes: { "outbox.id": { Type: "String", Value: "" } },
            }),
        );
        const bus: LambdaSqsRecord = bodyOnly(
            "bus-empty",
            JSON.stringify({
                version: "0",
                id: "ev-1",
                "detail-type": "OrderPlaced",
                source: "dynamodb-outbox",
                detail: { outbox: { id: "", type: "OrderPlaced", headers: {} }, payload: { n: 1 } },
            }),
        );
        const good = sqsRecord("good", "empty-id-good");
        const response = await handler({ Records: [raw, envelope, bus, good] });
        assert.deepEqual(
            response.batchItemFailures.map((f) => f.itemIdentifier),
            ["raw-empty", "envelope-empty", "bus-empty"],
        );
        assert.deepEqual(
            consumed.map((m) => m.outboxId),
            ["empty-id-good"],
            "a message with an empty id never reaches the consumer",
        );
        const poison = logger.lines.filter((e) => e.level === "error" && /poison message failed/.test(e.message));
        assert.deepEqual(
            poison.map((e) => [e.attributes?.messageId, e.attributes?.code]),
            [
                ["raw-empty", "INVALID_PAYLOAD"],
                ["envelope-empty", "INVALID_PAYLOAD"],
                ["bus-empty", "INVALID_PAYLOAD"],
            ],
        );
        assert.match(
            String(poison[0]!.attributes?.error),
            /SQS message raw-empty \(message-attributes\): its outbox\.id attribute/,
        );
        assert.match(
            String(poison[1]!.attributes?.error),
            /\(sns-envelope\): the SNS notification carries no outbox\.id/,
        );
        assert.match(
            String(poison[2]!.attributes?.error),
            /\(eventbridge-envelope\): the event's detail\.outbox has no id string/,
        );
    });

    it('hands on an EventBridge text payload (payloadFormat "text") as its text: published by the real publisher, routed to a queue, it is poison as the same text is on every path, never applied as a JSON string', async () => {
        const h = await createHarness({ destination: "eventbridge" });
        try {
            const queueUrl = h.server.createQueue("refusals-bus-target");
            h.server.routeBusToQueue(h.destinationArn, "refusals-bus-target");
            const text = '<order id="7"/>';
            // A foreign writer's record, whose payload is not JSON: the publisher marks it as text in the detail.
            await new OutboxStore({ client: h.ddb, tableName: h.tableName }).persist([
                {
                    partition: "ORDER#7",
                    recordId: "text-payload-1",
                    bindingId: "eventbridge",
                    address: h.destinationArn,
                    envelope: { id: "text-payload-1", subject: "OrderPlaced", payload: text },
                },
            ]);
            const { messageIds } = await h.writer.write({
                // A JSON string: without the marker it is JSON like any payload, and reaches the consumer parsed.
                messages: [{ partition: "ORDER#8", type: "OrderPlaced", payload: "order 8" }],
            });
            assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });

            const event = await receiveEvent(h.sqs, { queueUrl, queueArn: h.server.queueArn(queueUrl) });
            assert.equal(event.Records.length, 2);
            const textRecord = event.Records.find((r) => r.body.includes("text-payload-1"))!;
            assert.match(textRecord.body, /"payloadFormat":"text"/, "the publisher marked the payload as text");
            assert.equal(
                EVENTBRIDGE_ENVELOPE_DELIVERY.parse(textRecord)?.body,
                text,
                "the body handed on is the stored text, not its JSON string",
            );

            const { handler, consumed, logger } = handlerFor("bus-text");
            const response = await handler(event);
            assert.deepEqual(response.batchItemFailures, [{ itemIdentifier: textRecord.messageId }]);
            assert.deepEqual(
                consumed.map((m) => m.outboxId),
                messageIds,
                "the JSON payload was applied; the text one never reached the consumer",
            );
            assert.deepEqual([consumed[0]!.body, consumed[0]!.payload], ['"order 8"', "order 8"]);
            assert.equal(await marker("bus-text", "text-payload-1"), false);
            const poison = logger.lines.find((e) => e.level === "error");
            assert.match(
                String(poison?.attributes?.error),
                new RegExp(
                    `SQS message ${textRecord.messageId} \\(outbox id "text-payload-1", eventbridge-envelope\\): the body \\(${text.length} characters\\) is not JSON`,
                ),
            );
        } finally {
            await h.close();
        }
    });
});
