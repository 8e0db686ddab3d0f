/**
 * The writer's trace context with OpenTelemetry's real AWS SDK instrumentation in the publisher's process, as the
 * ADOT Lambda layer or Node auto-instrumentation runs it: `@opentelemetry/instrumentation-aws-sdk` registered before
 * the AWS SDK loads, in a process of its own (tests/support/otel/), where the real publisher reads the table's
 * real stream on DynamoDB Local and publishes to fauxqs's SNS topic (raw delivery to a queue), to fauxqs's SQS queue,
 * and to the fault server's EventBridge stand-in routed to a queue (no maintained EventBridge emulator exists). The
 * instrumentation injects its own span's context into every SendMessageBatch entry; the consumer, here
 * `createInboxHandler`, must still get the writer's `traceparent` and `tracestate`, and no trace context for a
 * record written without one.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SpanKind } from "@opentelemetry/api";
import { SQSClient } from "@aws-sdk/client-sqs";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { startAwsFaultServer, type AwsFaultServer } from "../../../dev/emulators/aws-fault-server";
import { createInboxHandler, Inbox, type InboxMessage } from "../../../runtime";
import type { DestinationKind } from "../../../runtime/destination/kind";
import { silentLogger } from "../../../runtime/ports";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { runInstrumented, type PublishTask } from "../../support/otel/job";
import { untilDepth } from "../../support/runtime/relay";
import { createConsumerTable, createOutboxTable } from "../../support/runtime/table";
import { pollUntilEmpty, type Queue } from "../../support/sqs-lambda";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;
const TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
const PARENT_ONLY = `00-${TRACE_ID}-b7ad6b7169203331-01`;

/** A pair, a traceparent alone, and no trace context. */
const MESSAGES: readonly OutboxMessage[] = [
    { partition: "ORDER#1", type: "OrderCreated", payload: { n: 1 }, traceparent: TRACEPARENT, tracestate: TRACESTATE },
    { partition: "ORDER#2", type: "OrderCreated", payload: { n: 2 }, traceparent: PARENT_ONLY },
    { partition: "ORDER#3", type: "OrderCreated", payload: { n: 3 } },
];

/** The span the instrumentation makes around each kind's batch call: proof that it ran. */
const BATCH_SPANS: Readonly<Record<DestinationKind, (destinationName: string) => { name: string; kind: SpanKind }>> = {
    sns: () => ({ name: "SNS PublishBatch", kind: SpanKind.CLIENT }),
    sqs: (queue) => ({ name: `${queue} send`, kind: SpanKind.PRODUCER }),
    eventbridge: () => ({ name: "EventBridge.PutEvents", kind: SpanKind.CLIENT }),
};

describe("the trace with OpenTelemetry's AWS SDK instrumentation in the publisher's process (the real instrumentation-aws-sdk, registered first, in a process of its own)", function () {
    this.timeout(240_000);
    let ddb: DynamoDBClient;
    let fauxqs: LocalFauxqs;
    let server: AwsFaultServer;
    let consumerTable: string;

    before(async () => {
        ddb = await dynamoClient();
        fauxqs = await startFauxqs();
        server = await startAwsFaultServer();
        consumerTable = await createConsumerTable(ddb, "otel-consumer");
    });
    after(async () => {
        await fauxqs?.stop();
        await server?.stop();
    });

    /** The destination of a kind, the queue its consumer reads, and the publisher's settings for it. */
    async function destinationOf(kind: DestinationKind, name: string) {
        const dlq = await fauxqs.createQueue(`${name}-dlq`);
        const base = { sqsEndpoint: fauxqs.endpoint, dlqUrl: dlq.queueUrl };
        if (kind === "sns") {
            const topicArn = await fauxqs.createTopic(name);
            const queue = await fauxqs.createQueue(`${name}-consumer`);
            await fauxqs.subscribe(topicArn, queue.queueArn, { rawMessageDelivery: true });
            const settings = { ...base, destination: { topicArn }, snsEndpoint: fauxqs.endpoint };
            return { arn: topicArn, queue, sqs: fauxqs.sqs, settings, destinationName: name };
        }
        if (kind === "sqs") {
            const queue = await fauxqs.createQueue(name);
            return {
                arn: queue.queueArn,
                queue,
                sqs: fauxqs.sqs,
                settings: { ...base, destination: { queueArn: queue.queueArn } },
                destinationName: name,
            };
        }
        const busArn = server.createEventBus(name);
        const queueUrl = server.createQueue(`${name}-rule-target`);
        server.routeBusToQueue(busArn, queueUrl);
        const sqs = new SQSClient({ endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
        return {
            arn: busArn,
            queue: { queueUrl, queueArn: server.queueArn(queueUrl) } as Queue,
            sqs,
            settings: { ...base, destination: { eventBusArn: busArn }, eventBridgeEndpoint: server.endpoint },
            destinationName: name,
        };
    }

    for (const kind of ["sns", "sqs", "eventbridge"] as const) {
        it(`${kind}: the consumer gets the writer's traceparent and tracestate, and no trace context where the writer gave none`, async () => {
            const name = `otel-${kind}-${Date.now()}`;
            const d = await destinationOf(kind, name);
            const tableName = await createOutboxTable(ddb, name);
            const writer = new OutboxWriter({ client: ddb, tableName, address: d.arn, traceContext: "none" });
            const { messageIds } = await writer.write({ messages: MESSAGES });

            const task: PublishTask = {
                kind: "publish",
                dynamoEndpoint: await dynamoEndpoint(),
                tableName,
                ...d.settings,
            };
            const report = await runInstrumented({ instrument: { awsSdk: {} }, task });
            const expected = BATCH_SPANS[kind](d.destinationName);
            assert.ok(
                report.spans.some((s) => s.name === expected.name && s.kind === expected.kind),
                `the instrumentation traced the batch call (${expected.name}); spans: ${report.spans.map((s) => s.name).join(", ")}`,
            );

            if (kind === "sns") await untilDepth(fauxqs, d.queue, MESSAGES.length);
            const seen = new Map<string, InboxMessage>();
            const handler = createInboxHandler({
                inbox: new Inbox({ client: ddb, consumer: name, tableName: consumerTable }),
                consume: (m) => void seen.set(m.outboxId, m),
                logger: silentLogger,
            });
            assert.deepEqual(await pollUntilEmpty(d.sqs, d.queue, handler), { invocations: 1, failures: 0 });
            assert.deepEqual(
                messageIds.map((id) => [seen.get(id)?.traceparent, seen.get(id)?.tracestate]),
                [
                    [TRACEPARENT, TRACESTATE],
                    [PARENT_ONLY, undefined],
                    [undefined, undefined],
                ],
                "the writer's pair, the traceparent alone, and nothing: as written",
            );
        });
    }

    it("the DLQ message of a record that expired before it was published keeps the writer's pair too (SendMessage, which the instrumentation also injects into)", async () => {
        const name = `otel-dlq-${Date.now()}`;
        const d = await destinationOf("sqs", name);
        const tableName = await createOutboxTable(ddb, name);
        const writer = new OutboxWriter({ client: ddb, tableName, address: d.arn, traceContext: "none" });
        await writer.write({ messages: [{ ...MESSAGES[0]!, expiresAt: new Date(Date.now() + 1000) }] });
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const task: PublishTask = { kind: "publish", dynamoEndpoint: await dynamoEndpoint(), tableName, ...d.settings };
        const report = await runInstrumented({ instrument: { awsSdk: {} }, task });
        assert.ok(
            report.spans.some((s) => s.name === `${name}-dlq send`),
            "the instrumentation traced the DLQ send",
        );
        const [dead] = await fauxqs.receiveAll(d.settings.dlqUrl, { expected: 1 });
        assert.equal(JSON.parse(dead!.body).reason, "expired");
        assert.deepEqual([dead!.attributes.traceparent, dead!.attributes.tracestate], [TRACEPARENT, TRACESTATE]);
    });
});
