/**
 * CloudEvents on, end to end on real parts: the writer on DynamoDB Local, the table's real stream read by the local
 * event source mapping, the real publisher with `cloudEvents: { source }` publishing to fauxqs's SNS (delivering to a
 * queue with raw delivery and to one with SNS's envelope) and SQS (standard and FIFO), and to the fault server's
 * EventBridge stand-in routed to a queue as a rule's SQS target is (no maintained EventBridge emulator exists). The
 * consumer parses what each delivers with the `cloudevents` SDK (`HTTP.toEvent` on the structured body, then its
 * validation) and applies it through `createInboxHandler`; every batch is handed to the handler twice, as Lambda
 * does after a lost answer, and each event is applied once.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { CloudEvent, HTTP } from "cloudevents";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startAwsFaultServer, type AwsFaultServer } from "../../../dev/emulators/aws-fault-server";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createInboxHandler, Inbox, type InboxMessage } from "../../../runtime";
import type { DestinationConfig } from "../../../runtime/destination/create";
import { silentLogger, type Logger } from "../../../runtime/ports";
import { createPublisher } from "../../../runtime/relay/publisher";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { appendApplied, appliedList } from "../../support/inbox/rows";
import { startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";
import { untilDepth } from "../../support/runtime/relay";
import { createOutboxTable } from "../../support/runtime/table";
import { receiveEvent, settle, type Queue } from "../../support/sqs-lambda";
import { drainOutboxStream } from "../../support/stream-table";

const SOURCE = "https://orders.example.com/outbox";
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACESTATE = "congo=t61rcWkgMzE";

const MESSAGES: readonly OutboxMessage[] = [
    {
        partition: "ORDER#1",
        orderingKey: "customer-7",
        type: "OrderPlaced",
        payload: { n: 1, total: 12.5 },
        headers: { tenant: "acme", "X-Request.Id": "r-1" },
        traceparent: TRACEPARENT,
        tracestate: TRACESTATE,
    },
    { partition: "ORDER#2", type: "OrderShipped", payload: { n: 2, items: ["a", "b"] } },
    { partition: "ORDER#3", type: "OrderCancelled", payload: { n: 3, reason: null } },
];

/** The structured CloudEvent a delivered SQS body holds, as a consumer unwraps it: as is, SNS's Message, a bus event's detail. */
function structuredBody(body: string, wrapping: "body" | "sns-envelope" | "eventbridge-envelope"): string {
    if (wrapping === "body") return body;
    const parsed = JSON.parse(body) as { Message?: string; detail?: unknown };
    return wrapping === "sns-envelope" ? parsed.Message! : JSON.stringify(parsed.detail);
}

describe("end to end, CloudEvents on: a consumer on the cloudevents SDK reads what each destination delivers, and the inbox applies each event once (DynamoDB Local → stream → publisher → fauxqs SNS/SQS, EventBridge stand-in → SQS → createInboxHandler)", function () {
    this.timeout(180_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, consumerTable: string, server: AwsFaultServer;
    let busSqs: SQSClient, eventBridge: EventBridgeClient;
    before(async () => {
        ({ ddb, fauxqs, consumerTable } = await startConsumerWorld("ce-consumer"));
        server = await startAwsFaultServer();
        const local = { endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
        busSqs = new SQSClient(local);
        eventBridge = new EventBridgeClient({ ...local, maxAttempts: 1 });
    });
    after(async () => {
        busSqs?.destroy();
        eventBridge?.destroy();
        await server?.stop();
        await stopConsumerWorld(fauxqs);
    });

    /** Write the messages, and let the real publisher, CloudEvents on, publish them from the table's stream. */
    async function writeAndRelay(
        name: string,
        destination: Partial<DestinationConfig>,
        address: string,
        fifo: boolean,
    ): Promise<string[]> {
        const tableName = await createOutboxTable(ddb, name);
        const dlq = await fauxqs.createQueue(`${tableName}-dlq${fifo ? ".fifo" : ""}`);
        const publisher = createPublisher({
            dynamodb: ddb,
            sqs: fauxqs.sqs,
            tableName,
            source: name,
            dlqUrl: dlq.queueUrl,
            fifo,
            ...destination,
            cloudEvents: { source: SOURCE },
            logger: silentLogger,
            writeMetrics: () => undefined,
        });
        const writer = new OutboxWriter({ client: ddb, tableName, address, fifo, traceContext: "none" });
        const { messageIds } = await writer.write({ messages: MESSAGES });
        await drainOutboxStream(ddb, tableName, publisher);
        return messageIds;
    }

    /**
     * Consume a queue to the end: each record's CloudEvent parsed by the SDK, its effect applied through the inbox,
     * every batch handed over twice. What the SDK read and what the handler was given, by outbox id.
     */
    async function consume(
        sqs: SQSClient,
        queue: Queue,
        consumer: string,
        wrapping: "body" | "sns-envelope" | "eventbridge-envelope",
    ): Promise<{ sdk: Map<string, CloudEvent<unknown>>; given: Map<string, InboxMessage> }> {
        const sdk = new Map<string, CloudEvent<unknown>>();
        const given = new Map<string, InboxMessage>();
        const handler = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer, tableName: consumerTable }),
            consume: (m) => {
                const event = HTTP.toEvent({
                    headers: { "content-type": "application/cloudevents+json" },
                    body: structuredBody(m.record.body, wrapping),
                }) as CloudEvent<unknown>;
                assert.equal(event.validate(), true);
                sdk.set(event.id, event);
                given.set(m.outboxId, m);
                return [appendApplied(consumerTable, `${consumer}#${m.outboxId}`, (m.payload as { n: number }).n)];
            },
            logger: silentLogger,
        });
        for (let i = 0; i < 10; i += 1) {
            const event = await receiveEvent(sqs, queue);
            if (event.Records.length === 0) return { sdk, given };
            // Lambda hands a batch over again when the first answer is lost: the second applies nothing.
            assert.deepEqual(await handler(event), { batchItemFailures: [] });
            assert.deepEqual(await handler(event), { batchItemFailures: [] });
            await settle(sqs, queue, event, { batchItemFailures: [] });
        }
        throw new Error(`${queue.queueArn} was not empty after 10 receives`);
    }

    /** What every destination must deliver: the SDK's event and the inbox's message agree with what was written. */
    async function check(
        consumer: string,
        ids: readonly string[],
        read: { sdk: Map<string, CloudEvent<unknown>>; given: Map<string, InboxMessage> },
        outboxSource: string,
    ): Promise<void> {
        assert.deepEqual([...read.sdk.keys()].sort(), [...ids].sort(), `${consumer}: the SDK read every event`);
        for (const [i, id] of ids.entries()) {
            const event = read.sdk.get(id)!;
            const message = read.given.get(id)!;
            assert.equal(event.specversion, "1.0");
            assert.equal(event.source, SOURCE);
            assert.equal(event.type, MESSAGES[i]!.type);
            assert.equal(event.datacontenttype, "application/json");
            assert.deepEqual(event.data, MESSAGES[i]!.payload, `${consumer}: the SDK's data is the payload`);
            assert.equal(event.outboxsource, outboxSource);
            assert.equal(typeof event.time, "string");
            assert.equal(message.format, "cloudevents");
            assert.equal(message.source, outboxSource);
            assert.equal(message.type, MESSAGES[i]!.type);
            assert.deepEqual(message.payload, MESSAGES[i]!.payload);
            assert.deepEqual(message.headers, MESSAGES[i]!.headers ?? {});
            assert.equal(message.time, event.time, `${consumer}: the inbox hands on the event's time`);
            assert.equal(message.traceparent, MESSAGES[i]!.traceparent);
            assert.equal(message.tracestate, MESSAGES[i]!.tracestate);
            assert.equal(event.traceparent, MESSAGES[i]!.traceparent);
            assert.deepEqual(
                await appliedList(ddb, consumerTable, `${consumer}#${id}`),
                [i + 1],
                `${consumer}: ${id} applied once, though handed over twice`,
            );
        }
        assert.equal(read.sdk.get(ids[0]!)!.partitionkey, "customer-7", "the ordering key is the partitionkey");
    }

    it("SNS: to a queue with raw delivery (the CloudEvent as the body) and to one with SNS's envelope (as its Message)", async () => {
        const topicArn = await fauxqs.createTopic("ce-orders");
        const raw = await fauxqs.createQueue("ce-orders-raw");
        const enveloped = await fauxqs.createQueue("ce-orders-enveloped");
        await fauxqs.subscribe(topicArn, raw.queueArn, { rawMessageDelivery: true });
        await fauxqs.subscribe(topicArn, enveloped.queueArn, { rawMessageDelivery: false });
        const ids = await writeAndRelay("ce-sns", { topicArn, sns: fauxqs.sns }, topicArn, false);
        await untilDepth(fauxqs, raw, ids.length);
        await untilDepth(fauxqs, enveloped, ids.length);
        await check("ce-sns-raw", ids, await consume(fauxqs.sqs, raw, "ce-sns-raw", "body"), "ce-sns");
        await check(
            "ce-sns-enveloped",
            ids,
            await consume(fauxqs.sqs, enveloped, "ce-sns-enveloped", "sns-envelope"),
            "ce-sns",
        );
    });

    for (const fifo of [false, true]) {
        it(`SQS${fifo ? " FIFO" : ""}: the CloudEvent as the body, content-type as its one attribute`, async () => {
            const queue = await fauxqs.createQueue(`ce-queue${fifo ? ".fifo" : ""}`);
            const ids = await writeAndRelay(
                `ce-sqs${fifo ? "-fifo" : ""}`,
                { queueArn: queue.queueArn },
                queue.queueArn,
                fifo,
            );
            const peek = await receiveEvent(fauxqs.sqs, queue);
            assert.deepEqual(
                peek.Records.map((r) => Object.keys(r.messageAttributes ?? {})),
                ids.map(() => ["content-type"]),
            );
            assert.deepEqual(
                peek.Records.map((r) => r.messageAttributes?.["content-type"]?.stringValue),
                ids.map(() => "application/cloudevents+json"),
            );
            await settle(fauxqs.sqs, queue, peek, {
                batchItemFailures: peek.Records.map((r) => ({ itemIdentifier: r.messageId })),
            });
            const consumer = `ce-sqs${fifo ? "-fifo" : ""}`;
            await check(consumer, ids, await consume(fauxqs.sqs, queue, consumer, "body"), consumer);
        });
    }

    it("EventBridge: the CloudEvent as the event's detail, Source and detail-type as without it", async () => {
        const busArn = server.createEventBus("ce-bus");
        const queueUrl = server.createQueue("ce-bus-rule-target");
        server.routeBusToQueue(busArn, queueUrl);
        const queue: Queue = { queueUrl, queueArn: server.queueArn(queueUrl) };
        const ids = await writeAndRelay("ce-bus", { eventBusArn: busArn, eventBridge }, busArn, false);
        const events = server.busEvents(busArn);
        assert.deepEqual(
            events.map((e) => `${e.source} ${e.detailType}`).sort(),
            MESSAGES.map((m) => `dynamodb-outbox ${m.type}`).sort(),
        );
        await check("ce-bus", ids, await consume(busSqs, queue, "ce-bus", "eventbridge-envelope"), "ce-bus");
    });

    it("a foreign producer's CloudEvent (no outboxsource) is failed and logged as poison, never acknowledged, and nothing is applied", async () => {
        const queue = await fauxqs.createQueue("ce-foreign");
        const foreign = JSON.stringify({
            specversion: "1.0",
            id: "billing-1",
            source: "/billing",
            type: "InvoicePaid",
            datacontenttype: "application/json",
            data: { n: 9 },
        });
        await fauxqs.sqs.send(
            new SendMessageCommand({
                QueueUrl: queue.queueUrl,
                MessageBody: foreign,
                MessageAttributes: {
                    "content-type": { DataType: "String", StringValue: "application/cloudevents+json" },
                },
            }),
        );
        const errors: { message: string; fields: Record<string, unknown> }[] = [];
        const logger: Logger = {
            ...silentLogger,
            error: (message: string, fields?: Record<string, unknown>) =>
                void errors.push({ message, fields: fields ?? {} }),
        };
        let consumed = 0;
        const handler = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer: "ce-foreign", tableName: consumerTable }),
            consume: () => {
                consumed += 1;
            },
            logger,
        });
        const event = await receiveEvent(fauxqs.sqs, queue);
        assert.equal(event.Records.length, 1);
        const messageId = event.Records[0]!.messageId;
        assert.deepEqual(await handler(event), { batchItemFailures: [{ itemIdentifier: messageId }] });
        assert.equal(consumed, 0);
        assert.equal(errors.length, 1);
        assert.match(errors[0]!.message, /poison message failed/);
        assert.match(
            String(errors[0]!.fields.error),
            /\(cloudevents\): the body is a CloudEvent \(id "billing-1", source "\/billing"\) without the outboxsource extension, so no outbox published it/,
        );
        assert.equal(errors[0]!.fields.code, "INVALID_PAYLOAD");
    });
});
