/**
 * docs/consumers.md, run as a reader would run it. Each destination's stack runs under the shared Pulumi mocks and
 * declares what the page says. The one consumer handler then reads, on DynamoDB Local, what the relay really put on
 * each kind of destination: the real publisher on the table's real stream records, publishing to fauxqs's SNS (with a
 * raw-delivery subscription) and fauxqs's SQS, and to the fault server's EventBridge stand-in routed to a queue (no
 * maintained EventBridge emulator exists). Each message is handed to the handler twice, and applied once.
 */
import * as assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type * as pulumi from "@pulumi/pulumi";
import * as packageEntry from "../../../index";
import * as runtimeEntry from "../../../runtime";
import { ENV } from "../../../runtime/config";
import type { InboxHandler, LambdaSqsEvent } from "../../../runtime";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { waitForRPCs } from "../../support/component-harness";
import { publishOrders } from "../../support/consumer-function";
import { ensureTable, localDynamoDbModule } from "../../support/docs-examples";
import { dynamoClient } from "../../support/dynamodb";
import { recorded, unwrap } from "../../support/pulumi-mocks";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { runModule } from "../../support/run-module";
import { tsBlockUnder } from "../../support/markdown";
import { receiveEvent, type Queue } from "../../support/sqs-lambda";

const PAGE = "docs/consumers.md";

/** Run one of the page's stacks under the mocks: what it exported, and the resources it declared. */
async function stack(heading: string): Promise<{ exported: Record<string, unknown>; mine: typeof recorded }> {
    const before = recorded.length;
    const exported = runModule(tsBlockUnder(PAGE, heading), `${PAGE} (${heading}).ts`, {
        "dynamodb-outbox": packageEntry,
    });
    await waitForRPCs();
    return { exported, mine: recorded.slice(before) };
}

function publisherEnvironment(mine: typeof recorded): Record<string, unknown> {
    const fn = mine.find((r) => r.type === "aws:lambda/function:Function" && r.name === "orders-publisher");
    assert.ok(fn, "the outbox's publisher");
    return fn.inputs.environment.variables as Record<string, unknown>;
}

/** The publisher's environment of a stack that must have no topic (a queue or a bus is the destination). */
function topiclessPublisherEnvironment(mine: typeof recorded): Record<string, unknown> {
    assert.equal(mine.filter((r) => r.type === "aws:sns/topic:Topic").length, 0, "no topic");
    return publisherEnvironment(mine);
}

describe("docs/consumers.md's examples", function () {
    this.timeout(120_000);

    describe("the stacks, under Pulumi's mocks", () => {
        it("OutboxConsumer: the outbox's topic, a consumer queue subscribed to it with raw delivery, the mapping and the grant", async () => {
            const { exported, mine } = await stack("## In one declaration: `OutboxConsumer`");
            const topic = mine.find((r) => r.type === "aws:sns/topic:Topic" && r.name === "orders-topic");
            assert.ok(topic, "the outbox created its topic");
            const queue = mine.find((r) => r.type === "aws:sqs/queue:Queue" && r.name === "billing-queue");
            assert.equal(queue?.inputs.visibilityTimeoutSeconds, 360);
            assert.equal(JSON.parse(queue?.inputs.redrivePolicy as string).maxReceiveCount, 5);
            const subscription = mine.find((r) => r.type === "aws:sns/topicSubscription:TopicSubscription");
            assert.deepEqual(
                [subscription?.inputs.topic, subscription?.inputs.endpoint, subscription?.inputs.rawMessageDelivery],
                [topic.computed?.arn, queue?.computed?.arn, true],
            );
            const mapping = mine.find(
                (r) => r.type === "aws:lambda/eventSourceMapping:EventSourceMapping" && r.name === "billing-mapping",
            );
            assert.deepEqual(mapping?.inputs.functionResponseTypes, ["ReportBatchItemFailures"]);
            assert.ok(
                mine.some((r) => r.type === "aws:iam/rolePolicy:RolePolicy" && r.name === "billing-consume-policy"),
            );
            assert.equal(
                mine.filter((r) => r.type === "aws:cloudwatch/metricAlarm:MetricAlarm" && r.name.startsWith("billing-"))
                    .length,
                3,
            );
            assert.equal(await unwrap(exported.queueUrl as pulumi.Output<string>), queue?.computed?.url);
        });

        it("from an SNS topic: the outbox's topic, a raw-delivery subscription of the queue, and a policy letting the topic send", async () => {
            const { exported, mine } = await stack("## From an SNS topic");
            const topic = mine.find((r) => r.type === "aws:sns/topic:Topic" && r.name === "orders-topic");
            assert.ok(topic, "the outbox created its topic");
            const subscription = mine.find((r) => r.type === "aws:sns/topicSubscription:TopicSubscription");
            assert.equal(subscription?.inputs.topic, topic.computed?.arn);
            assert.equal(subscription?.inputs.rawMessageDelivery, true);
            assert.ok(exported.queueUrl);
        });

        it("from an SQS queue: no topic, the publisher's environment and grant name the FIFO queue", async () => {
            const { exported, mine } = await stack("## From an SQS queue");
            const queue = mine.find((r) => r.type === "aws:sqs/queue:Queue" && r.name === "billing");
            assert.ok(queue?.computed?.arn);
            const env = topiclessPublisherEnvironment(mine);
            assert.equal(env[ENV.queueArn], queue.computed.arn);
            assert.equal(env[ENV.fifo], "true");
            assert.equal(env[ENV.topicArn], undefined);
            assert.equal(await unwrap(exported.destinationArn as pulumi.Output<string>), queue.computed.arn);
        });

        it("from an EventBridge bus: no topic, the publisher's environment names the bus and the source, a rule on detail.outbox", async () => {
            const { exported, mine } = await stack("## From an EventBridge bus");
            const bus = mine.find((r) => r.type === "aws:cloudwatch/eventBus:EventBus" && r.name === "orders");
            assert.ok(bus?.computed?.arn);
            const env = topiclessPublisherEnvironment(mine);
            assert.deepEqual(
                [env[ENV.eventBusArn], env[ENV.eventSource], env[ENV.topicArn]],
                [bus.computed.arn, "com.example.orders", undefined],
            );
            const rule = mine.find((r) => r.type === "aws:cloudwatch/eventRule:EventRule" && r.name === "billing");
            assert.deepEqual(JSON.parse(rule?.inputs.eventPattern as string).detail, {
                outbox: { headers: { tenant: ["acme"] } },
            });
            assert.equal(await unwrap(exported.destinationArn as pulumi.Output<string>), bus.computed.arn);
        });
    });

    describe("the consumer, on what each destination delivered (DynamoDB Local)", () => {
        let handler: InboxHandler;
        let fauxqs: LocalFauxqs;
        let h: Harness | undefined;
        before(async () => {
            await ensureTable("billing", "PK", "S", "SK");
            const consumer = runModule(
                tsBlockUnder(PAGE, "## The consumer: one handler for the three"),
                `${PAGE} (the consumer).ts`,
                {
                    "@aws-sdk/client-dynamodb": await localDynamoDbModule(),
                    "dynamodb-outbox/runtime": runtimeEntry,
                },
            );
            handler = consumer.handler as InboxHandler;
            fauxqs = await startFauxqs();
        });
        afterEach(async () => {
            await h?.close();
            h = undefined;
        });
        after(async () => {
            await fauxqs?.stop();
        });

        /** Each order with a total and one tenant's header, as the page's consumer reads them. */
        const ONE_TENANTS = { payload: { total: 42 }, headers: { tenant: "acme" } };

        /** Hand what the queue holds to the handler twice; each invoice is written once, by its outbox id. */
        async function consume(sqs: SQSClient, queue: Queue, orders: { orderIds: number[]; messageIds: string[] }) {
            const event: LambdaSqsEvent = await receiveEvent(sqs, queue);
            assert.equal(event.Records.length, 2, "both orders reached the queue");
            assert.deepEqual(await handler(event), { batchItemFailures: [] });
            assert.deepEqual(await handler(event), { batchItemFailures: [] }, "the repeat changes nothing");
            const client = await dynamoClient();
            for (let i = 0; i < 2; i += 1) {
                const item = await client.send(
                    new GetItemCommand({
                        TableName: "billing",
                        Key: { PK: { S: `INVOICE#${orders.orderIds[i]}` }, SK: { S: orders.messageIds[i]! } },
                        ConsistentRead: true,
                    }),
                );
                assert.deepEqual([item.Item?.type?.S, item.Item?.total?.N], ["OrderPlaced", "42"]);
            }
            return event;
        }

        it("from an SNS topic, through a raw-delivery subscription", async () => {
            h = await createHarness();
            const topicArn = await fauxqs.createTopic(`consumers-doc-${Date.now()}`);
            const queue = await fauxqs.createQueue(`consumers-doc-sns-${Date.now()}`);
            await fauxqs.subscribe(topicArn, queue.queueArn, { rawMessageDelivery: true });
            const dlq = await fauxqs.createQueue(`consumers-doc-dlq-${Date.now()}`);
            const orders = await publishOrders(
                h,
                {
                    sns: fauxqs.sns,
                    sqs: fauxqs.sqs,
                    topicArn,
                    dlqUrl: dlq.queueUrl,
                },
                ONE_TENANTS,
            );
            const event = await consume(fauxqs.sqs, queue, orders);
            assert.deepEqual(
                event.Records.map((r) => r.messageAttributes?.["outbox.id"]?.stringValue).sort(),
                [...orders.messageIds].sort(),
                "raw delivery: the id as an attribute",
            );
        });

        it("from the outbox's own SQS FIFO queue", async () => {
            h = await createHarness({ destination: "sqs", fifo: true });
            const queue = await fauxqs.createQueue(`consumers-doc-${Date.now()}.fifo`, {
                FifoQueue: "true",
                ContentBasedDeduplication: "false",
            });
            const dlq = await fauxqs.createQueue(`consumers-doc-dlq-${Date.now()}`);
            const orders = await publishOrders(
                h,
                {
                    sqs: fauxqs.sqs,
                    queueArn: queue.queueArn,
                    dlqUrl: dlq.queueUrl,
                    fifo: true,
                },
                ONE_TENANTS,
            );
            await consume(fauxqs.sqs, queue, orders);
        });

        it("from an EventBridge bus, through a rule's SQS target (the fault server's stand-in)", async () => {
            h = await createHarness({ destination: "eventbridge" });
            const queueUrl = h.server.createQueue("billing-rule-target");
            h.server.routeBusToQueue(h.destinationArn, "billing-rule-target");
            const orders = await publishOrders(h, { eventSource: "com.example.orders" }, ONE_TENANTS);
            const event = await consume(h.sqs, { queueUrl, queueArn: h.server.queueArn(queueUrl) }, orders);
            const envelope = JSON.parse(event.Records[0]!.body) as Record<string, unknown>;
            assert.deepEqual([envelope.source, envelope["detail-type"]], ["com.example.orders", "OrderPlaced"]);
        });
    });
});
