/**
 * The `OutboxConsumer`'s function exactly as Pulumi serializes it (issue 39): the `CallbackFunction` archive the
 * component declares under the mocks, its `__index.js` loaded as Lambda loads it, with the environment the component
 * set (the SDK's own variables pointing its DynamoDB client at DynamoDB Local). On local SNS/SQS (fauxqs), with the
 * subscription the component declared (raw delivery), the real publisher publishes two records from the outbox
 * table's stream; the serialized consumer applies them, and a redelivery of the same messages (the first invocation's
 * answer lost, so SQS hands them out again) changes nothing. The same from the outbox's own queue (fauxqs's SQS, read
 * as it is), and from an EventBridge bus through a rule's SQS target (the fault server's stand-in: no maintained
 * EventBridge emulator exists; it routes every event of the bus, and the test checks the events carry what the
 * rule's pattern asks for), there handed to the function twice. Lambda's poller itself is
 * `tests/support/sqs-lambda.ts` (no emulator runs it).
 */
import * as assert from "node:assert/strict";
import { OutboxConsumer } from "../../../components/consumer";
import type { InboxHandler } from "../../../runtime/inbox/handler";
import { INBOX_ENV } from "../../../runtime/inbox/lambda";
import { waitForRPCs } from "../../support/component-harness";
import {
    assertAppliedOnce,
    consumerWorld,
    effectCounter,
    publishOrders,
    useConsumerEnvironment,
} from "../../support/consumer-function";
import { dynamoClient } from "../../support/dynamodb";
import { recordedNamed } from "../../support/pulumi-mocks";
import { createConsumerTable } from "../../support/runtime/table";
import { entryText, loadSerialized } from "../../support/serialized";
import { applyThroughRedelivery, receiveEvent } from "../../support/sqs-lambda";

/** The user's consumer: one counter per event, and the order's id, in the inbox's own table. */
const consume = effectCounter("orderId", (payload: { orderId: number }) => payload.orderId);

/**
 * Declare an `OutboxConsumer` on `destinationArn` under the mocks, set the environment it gives its function (and the
 * SDK's own variables for DynamoDB Local), and load the function as Pulumi serialized it.
 */
async function serializedConsumer(
    name: string,
    destinationArn: string,
    inboxTable: string,
): Promise<{ handler: InboxHandler; mine: ReturnType<typeof recordedNamed> }> {
    new OutboxConsumer(name, { destinationArn, consume, inboxTableName: inboxTable });
    await waitForRPCs();
    const mine = recordedNamed(name);
    const fn = mine.find((r) => r.type === "aws:lambda/function:Function")!;
    await useConsumerEnvironment(fn.inputs.environment.variables as Record<string, string>);
    return { handler: loadSerialized<InboxHandler>(await entryText(fn)), mine };
}

describe("OutboxConsumer's function, as Pulumi serializes it", function () {
    this.timeout(120_000);
    const world = consumerWorld();

    it("loads, and applies each event of an SNS topic once, through a redelivery of the same messages", async () => {
        const fauxqs = await world.fauxqs();
        const topicArn = await fauxqs.createTopic(`consumer-serialized-${Date.now()}`);
        const ddb = await dynamoClient();
        const inboxTable = await createConsumerTable(ddb, "consumer-serialized");

        // The component, under the mocks: the archive and the subscription's settings are what it declared.
        new OutboxConsumer("cserial", { destinationArn: topicArn, consume, inboxTableName: inboxTable });
        await waitForRPCs();
        const mine = recordedNamed("cserial");
        const fn = mine.find((r) => r.type === "aws:lambda/function:Function")!;
        const subscription = mine.find((r) => r.type === "aws:sns/topicSubscription:TopicSubscription")!;
        assert.equal(subscription.inputs.topic, topicArn);
        const environment = fn.inputs.environment.variables as Record<string, string>;
        assert.deepEqual(environment, { [INBOX_ENV.tableName]: inboxTable, [INBOX_ENV.consumer]: "cserial" });

        // The local world: a queue subscribed as the component subscribes it.
        const queue = await fauxqs.createQueue(`consumer-serialized-${Date.now()}`);
        await fauxqs.subscribe(topicArn, queue.queueArn, {
            rawMessageDelivery: subscription.inputs.rawMessageDelivery as boolean,
        });

        // The function's environment as the component set it, and the SDK's own variables for DynamoDB Local.
        await useConsumerEnvironment(environment);
        const text = await entryText(fn);
        assert.match(text, /OUTBOX_INBOX_CONSUMER/, "the runtime's factory travels by value");
        assert.doesNotMatch(text, /require\("@pulumi\//, "nothing of Pulumi is loaded in Lambda");
        const handler = loadSerialized<InboxHandler>(text);
        assert.equal(typeof handler, "function");

        // The real publisher, from the outbox table's stream to the topic.
        const h = await world.harness();
        const dlq = await fauxqs.createQueue(`consumer-serialized-dlq-${Date.now()}`);
        const orders = await publishOrders(h, { sns: fauxqs.sns, sqs: fauxqs.sqs, topicArn, dlqUrl: dlq.queueUrl });

        // First delivery: applied; its answer is lost, so nothing is deleted and SQS hands the messages out again.
        await applyThroughRedelivery(fauxqs.sqs, queue, handler, 2);
        await assertAppliedOnce(inboxTable, orders);
        assert.equal((await receiveEvent(fauxqs.sqs, queue)).Records.length, 0, "the queue is empty");
    });

    it("from the outbox's own SQS queue: the queue read as it is, each event applied once through a redelivery", async () => {
        const fauxqs = await world.fauxqs();
        const queue = await fauxqs.createQueue(`consumer-serialized-own-${Date.now()}`);
        const inboxTable = await createConsumerTable(await dynamoClient(), "consumer-serialized-sqs");
        const { handler, mine } = await serializedConsumer("cserialq", queue.queueArn, inboxTable);
        const mapping = mine.find((r) => r.type === "aws:lambda/eventSourceMapping:EventSourceMapping")!;
        assert.equal(mapping.inputs.eventSourceArn, queue.queueArn, "the mapping reads the outbox's queue itself");

        const h = await world.harness({ destination: "sqs" });
        const dlq = await fauxqs.createQueue(`consumer-serialized-own-dlq-${Date.now()}`);
        const orders = await publishOrders(h, { sqs: fauxqs.sqs, queueArn: queue.queueArn, dlqUrl: dlq.queueUrl });
        await applyThroughRedelivery(fauxqs.sqs, queue, handler, 2);
        await assertAppliedOnce(inboxTable, orders);
    });

    it("from an EventBridge bus, through a rule's SQS target (the fault server's stand-in), each event applied once when handed twice", async () => {
        const h = await world.harness({ destination: "eventbridge" });
        const inboxTable = await createConsumerTable(await dynamoClient(), "consumer-serialized-bus");
        const { handler, mine } = await serializedConsumer("cserialb", h.destinationArn, inboxTable);
        const rule = mine.find((r) => r.type === "aws:cloudwatch/eventRule:EventRule")!;
        assert.equal(rule.inputs.eventBusName, h.destinationArn);

        // The stand-in routes every event of the bus to the queue; the rule's pattern matches every outbox event.
        const queueUrl = h.server.createQueue("cserialb-target");
        h.server.routeBusToQueue(h.destinationArn, "cserialb-target");
        const orders = await publishOrders(h, { eventSource: "com.example.orders" });
        const event = await receiveEvent(h.sqs, { queueUrl, queueArn: h.server.queueArn(queueUrl) });
        assert.equal(event.Records.length, 2);
        assert.deepEqual(JSON.parse(rule.inputs.eventPattern as string), {
            detail: { outbox: { id: [{ exists: true }] } },
        });
        assert.ok(
            event.Records.every((r) => typeof JSON.parse(r.body).detail?.outbox?.id === "string"),
            "each event carries detail.outbox.id, which the rule's pattern asks for",
        );
        assert.deepEqual(await handler(event), { batchItemFailures: [] });
        assert.deepEqual(await handler(event), { batchItemFailures: [] }, "the same messages again change nothing");
        await assertAppliedOnce(inboxTable, orders);
    });
});
