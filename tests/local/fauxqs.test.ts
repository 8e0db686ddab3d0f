/**
 * fauxqs (a real SNS/SQS emulator) through the wrapper `npm start` and the end-to-end tests use.
 */
import assert from "node:assert/strict";
import { PublishBatchCommand, PublishCommand } from "@aws-sdk/client-sns";
import { startFauxqs, type LocalFauxqs } from "../../local/fauxqs";

describe("fauxqs wrapper: topic → SQS delivery", () => {
    let fauxqs: LocalFauxqs;
    before(async () => {
        fauxqs = await startFauxqs();
    });
    after(async () => {
        await fauxqs.stop();
    });

    it("delivers published messages to a raw-delivery queue subscription, with their attributes", async () => {
        assert.match(fauxqs.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
        const topicArn = await fauxqs.createTopic("orders");
        const { queueUrl, queueArn } = await fauxqs.createQueue("orders-consumer");
        assert.match(queueArn, /^arn:aws:sqs:us-east-1:\d+:orders-consumer$/);
        await fauxqs.subscribe(topicArn, queueArn);

        await fauxqs.sns.send(new PublishCommand({ TopicArn: topicArn, Message: '{"orderId":1}', MessageAttributes: { recordId: { DataType: "String", StringValue: "r1" } } }));
        await fauxqs.sns.send(
            new PublishBatchCommand({
                TopicArn: topicArn,
                PublishBatchRequestEntries: [2, 3].map((n) => ({ Id: `e${n}`, Message: `{"orderId":${n}}`, MessageAttributes: { recordId: { DataType: "String", StringValue: `r${n}` } } })),
            }),
        );
        const received = await fauxqs.receiveAll(queueUrl, { expected: 3 });
        assert.deepEqual(
            received.map((m) => [m.body, m.attributes.recordId]).sort(),
            [['{"orderId":1}', "r1"], ['{"orderId":2}', "r2"], ['{"orderId":3}', "r3"]],
        );
        assert.deepEqual(await fauxqs.receiveAll(queueUrl), [], "received messages were deleted");
    });

    it("wraps the message in the SNS envelope without raw delivery, and honours a filter policy", async () => {
        const topicArn = await fauxqs.createTopic("filtered");
        const { queueUrl, queueArn } = await fauxqs.createQueue("filtered-consumer");
        await fauxqs.subscribe(topicArn, queueArn, { rawMessageDelivery: false, filterPolicy: { type: ["OrderPlaced"] } });
        await fauxqs.sns.send(new PublishCommand({ TopicArn: topicArn, Message: "skip", MessageAttributes: { type: { DataType: "String", StringValue: "Other" } } }));
        await fauxqs.sns.send(new PublishCommand({ TopicArn: topicArn, Message: "keep", MessageAttributes: { type: { DataType: "String", StringValue: "OrderPlaced" } } }));
        const received = await fauxqs.receiveAll(queueUrl, { expected: 1 });
        assert.equal(received.length, 1);
        const envelope = JSON.parse(received[0]?.body ?? "{}") as { Type?: string; Message?: string; TopicArn?: string };
        assert.equal(envelope.Type, "Notification");
        assert.equal(envelope.Message, "keep");
        assert.equal(envelope.TopicArn, topicArn);
    });

    it("FIFO topic → FIFO queue keeps the group order", async () => {
        const topicArn = await fauxqs.createTopic("ordered.fifo");
        const { queueUrl, queueArn } = await fauxqs.createQueue("ordered-consumer.fifo");
        await fauxqs.subscribe(topicArn, queueArn);
        for (let n = 0; n < 5; n += 1) {
            await fauxqs.sns.send(new PublishCommand({ TopicArn: topicArn, Message: `m${n}`, MessageGroupId: "g", MessageDeduplicationId: `d${n}` }));
        }
        const received = await fauxqs.receiveAll(queueUrl, { expected: 5 });
        assert.deepEqual(received.map((m) => m.body), ["m0", "m1", "m2", "m3", "m4"]);
    });
});
