/**
 * fauxqs 2 (a real SNS, SQS and S3 emulator) through the wrapper `npm start` and the end-to-end tests use.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { PublishBatchCommand, PublishCommand } from "@aws-sdk/client-sns";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";

const REPO = path.resolve(__dirname, "..", "..", "..");

/** fauxqs for the calling describe's tests, started before them and stopped after; the returned function gives it. */
function fauxqsForDescribe(): () => LocalFauxqs {
    let fauxqs: LocalFauxqs | undefined;
    before(async () => {
        fauxqs = await startFauxqs();
    });
    after(async () => {
        await fauxqs?.stop();
    });
    return () => {
        if (fauxqs === undefined) throw new Error("fauxqs runs only inside the describe's tests");
        return fauxqs;
    };
}

/** Publish one message to the topic, with string message attributes. */
async function publishOne(
    fauxqs: LocalFauxqs,
    topicArn: string,
    message: string,
    attributes: Record<string, string>,
): Promise<void> {
    const MessageAttributes = Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, { DataType: "String", StringValue: value }]),
    );
    await fauxqs.sns.send(new PublishCommand({ TopicArn: topicArn, Message: message, MessageAttributes }));
}

describe("fauxqs wrapper: topic → SQS delivery", () => {
    const started = fauxqsForDescribe();

    it("delivers published messages to a raw-delivery queue subscription, with their attributes", async () => {
        const fauxqs = started();
        assert.match(fauxqs.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
        const topicArn = await fauxqs.createTopic("orders");
        const { queueUrl, queueArn } = await fauxqs.createQueue("orders-consumer");
        assert.match(queueArn, /^arn:aws:sqs:us-east-1:\d+:orders-consumer$/);
        await fauxqs.subscribe(topicArn, queueArn);

        await publishOne(fauxqs, topicArn, '{"orderId":1}', { recordId: "r1" });
        await fauxqs.sns.send(
            new PublishBatchCommand({
                TopicArn: topicArn,
                PublishBatchRequestEntries: [2, 3].map((n) => ({
                    Id: `e${n}`,
                    Message: `{"orderId":${n}}`,
                    MessageAttributes: { recordId: { DataType: "String", StringValue: `r${n}` } },
                })),
            }),
        );
        const received = await fauxqs.receiveAll(queueUrl, { expected: 3 });
        assert.deepEqual(received.map((m) => [m.body, m.attributes.recordId]).sort(), [
            ['{"orderId":1}', "r1"],
            ['{"orderId":2}', "r2"],
            ['{"orderId":3}', "r3"],
        ]);
        assert.deepEqual(await fauxqs.receiveAll(queueUrl), [], "received messages were deleted");
    });

    it("wraps the message in the SNS envelope without raw delivery, and honours a filter policy", async () => {
        const fauxqs = started();
        const topicArn = await fauxqs.createTopic("filtered");
        const { queueUrl, queueArn } = await fauxqs.createQueue("filtered-consumer");
        await fauxqs.subscribe(topicArn, queueArn, {
            rawMessageDelivery: false,
            filterPolicy: { type: ["OrderPlaced"] },
        });
        await publishOne(fauxqs, topicArn, "skip", { type: "Other" });
        await publishOne(fauxqs, topicArn, "keep", { type: "OrderPlaced" });
        const received = await fauxqs.receiveAll(queueUrl, { expected: 1 });
        assert.equal(received.length, 1);
        const envelope = JSON.parse(received[0]?.body ?? "{}") as {
            Type?: string;
            Message?: string;
            TopicArn?: string;
        };
        assert.equal(envelope.Type, "Notification");
        assert.equal(envelope.Message, "keep");
        assert.equal(envelope.TopicArn, topicArn);
    });

    it("FIFO topic → FIFO queue keeps the group order", async () => {
        const fauxqs = started();
        const topicArn = await fauxqs.createTopic("ordered.fifo");
        const { queueUrl, queueArn } = await fauxqs.createQueue("ordered-consumer.fifo");
        await fauxqs.subscribe(topicArn, queueArn);
        for (let n = 0; n < 5; n += 1) {
            await fauxqs.sns.send(
                new PublishCommand({
                    TopicArn: topicArn,
                    Message: `m${n}`,
                    MessageGroupId: "g",
                    MessageDeduplicationId: `d${n}`,
                }),
            );
        }
        const received = await fauxqs.receiveAll(queueUrl, { expected: 5 });
        assert.deepEqual(
            received.map((m) => m.body),
            ["m0", "m1", "m2", "m3", "m4"],
        );
    });
});

describe("fauxqs wrapper: S3 objects", () => {
    const started = fauxqsForDescribe();

    it("stores an object larger than SNS's 256 KB message limit with PutObject and returns it byte for byte with GetObject (@aws-sdk/client-s3, path-style)", async () => {
        const fauxqs = started();
        await fauxqs.s3.send(new CreateBucketCommand({ Bucket: "outbox-payloads" }));
        // Not valid UTF-8 on purpose: the body must come back as bytes, not as text.
        const body = Buffer.alloc(300 * 1024, 0);
        for (let i = 0; i < body.length; i += 1) body[i] = (i * 31 + 7) % 256;
        await fauxqs.s3.send(
            new PutObjectCommand({
                Bucket: "outbox-payloads",
                Key: "ORDER#1001/record-1",
                Body: body,
                ContentType: "application/octet-stream",
            }),
        );
        const head = await fauxqs.s3.send(
            new HeadObjectCommand({ Bucket: "outbox-payloads", Key: "ORDER#1001/record-1" }),
        );
        assert.equal(head.ContentLength, body.length);
        const got = await fauxqs.s3.send(
            new GetObjectCommand({ Bucket: "outbox-payloads", Key: "ORDER#1001/record-1" }),
        );
        assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(body), "the same bytes");
    });

    it("rejects GetObject of a missing key with NoSuchKey, as S3 does", async () => {
        const fauxqs = started();
        await fauxqs.s3.send(new CreateBucketCommand({ Bucket: "outbox-missing" }));
        await assert.rejects(
            fauxqs.s3.send(new GetObjectCommand({ Bucket: "outbox-missing", Key: "nothing" })),
            (err: Error) => err.name === "NoSuchKey",
        );
    });
});

describe("fauxqs wrapper: warnings", () => {
    it("leaves unsaid Node's ExperimentalWarning for the node:sqlite fauxqs loads, and passes every other warning through", () => {
        const program = `require("./dev/emulators/fauxqs").startFauxqs().then((f) => { process.emitWarning("another warning", "ExperimentalWarning"); return f.stop(); });`;
        const ran = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", program], {
            cwd: REPO,
            encoding: "utf8",
            env: { ...process.env, NODE_OPTIONS: "" },
        });
        assert.equal(ran.status, 0, ran.stderr);
        assert.doesNotMatch(ran.stderr, /SQLite is an experimental feature/);
        assert.match(ran.stderr, /ExperimentalWarning: another warning/);
    });
});
