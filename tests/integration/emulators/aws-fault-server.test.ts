/**
 * The AWS fault server, driven through the real @aws-sdk/client-sns and client-sqs: every
 * answer must parse into what a publisher sees from AWS, and every fault must surface as the SDK error a
 * publisher would branch on.
 */
import assert from "node:assert/strict";
import {
    AuthorizationErrorException,
    CreateTopicCommand,
    InternalErrorException,
    InvalidParameterException,
    NotFoundException,
    PublishBatchCommand,
    PublishCommand,
    SNSClient,
    SNSServiceException,
    ThrottledException,
    TooManyEntriesInBatchRequestException,
} from "@aws-sdk/client-sns";
import {
    CreateQueueCommand,
    DeleteMessageCommand,
    ReceiveMessageCommand,
    SendMessageCommand,
    SQSClient,
} from "@aws-sdk/client-sqs";
import { startAwsFaultServer, type AwsFaultServer } from "../../../dev/emulators/aws-fault-server";
import { faultServerEach } from "../../support/fault-server";
import { localClientConfig } from "../../support/local-aws-client";

function snsClient(server: AwsFaultServer, extra: { maxAttempts?: number; requestTimeout?: number } = {}): SNSClient {
    return new SNSClient({
        ...localClientConfig(server.endpoint),
        maxAttempts: extra.maxAttempts ?? 1,
        // Without throwOnRequestTimeout, this smithy version only logs a warning when requestTimeout passes.
        ...(extra.requestTimeout === undefined
            ? {}
            : { requestHandler: { requestTimeout: extra.requestTimeout, throwOnRequestTimeout: true } }),
    });
}

const entries = (n: number, prefix = "m"): { Id: string; Message: string }[] =>
    Array.from({ length: n }, (_, i) => ({ Id: `e${i}`, Message: `${prefix}${i}` }));

describe("AWS fault server through the real AWS SDK", () => {
    const each = faultServerEach();
    let sns: SNSClient;
    let topicArn: string;

    beforeEach(async () => {
        sns = each.client(() => snsClient(each.server));
        topicArn = (await sns.send(new CreateTopicCommand({ Name: "events" }))).TopicArn as string;
    });

    it("creates topics, publishes and records the message with its attributes", async () => {
        assert.equal(topicArn, "arn:aws:sns:us-east-1:000000000000:events");
        const out = await sns.send(
            new PublishCommand({
                TopicArn: topicArn,
                Message: '{"orderId":1,"note":"<&>"}',
                MessageAttributes: {
                    recordId: { DataType: "String", StringValue: "r1" },
                    blob: { DataType: "Binary", BinaryValue: new Uint8Array([1, 2]) },
                },
            }),
        );
        assert.match(out.MessageId ?? "", /^[0-9a-f-]{36}$/);
        const [message, ...rest] = each.server.topicMessages("events");
        assert.equal(rest.length, 0);
        assert.deepEqual(message, {
            service: "sns",
            destination: topicArn,
            destinationName: "events",
            messageId: out.MessageId,
            body: '{"orderId":1,"note":"<&>"}',
            attributes: {
                recordId: { dataType: "String", stringValue: "r1" },
                blob: { dataType: "Binary", binaryValue: "AQI=" },
            },
            action: "Publish",
            callNumber: 2,
            acknowledged: true,
        });
    });

    it("PublishBatch: injected entry failures come back in Failed[] with code and SenderFault; the rest are accepted", async () => {
        each.server.setFaults({
            entries: [
                { when: (e) => e.id === "e3" || e.id === "e7", code: "InternalError" },
                { when: (e) => e.id === "e5", code: "InvalidParameter", senderFault: true, message: "bad" },
            ],
        });
        const out = await sns.send(
            new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries(10) }),
        );
        assert.deepEqual(
            out.Successful?.map((s) => s.Id),
            ["e0", "e1", "e2", "e4", "e6", "e8", "e9"],
        );
        assert.ok(out.Successful?.every((s) => typeof s.MessageId === "string"));
        assert.deepEqual(out.Failed, [
            { Id: "e3", Code: "InternalError", Message: "injected failure", SenderFault: false },
            { Id: "e5", Code: "InvalidParameter", Message: "bad", SenderFault: true },
            { Id: "e7", Code: "InternalError", Message: "injected failure", SenderFault: false },
        ]);
        assert.deepEqual(
            each.server.topicMessages(topicArn).map((m) => m.body),
            ["m0", "m1", "m2", "m4", "m6", "m8", "m9"],
        );
        assert.equal(each.server.calls().at(-1)?.outcome, "partial");
    });

    it("PublishBatch: more than 10 entries is rejected whole, as SNS does", async () => {
        await assert.rejects(
            sns.send(new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries(11) })),
            TooManyEntriesInBatchRequestException,
        );
        assert.equal(each.server.topicMessages(topicArn).length, 0);
    });

    it("publishing to a missing topic is a real NotFoundException", async () => {
        await assert.rejects(
            sns.send(new PublishCommand({ TopicArn: `${topicArn}-gone`, Message: "x" })),
            (err: unknown) => err instanceof NotFoundException && err.$fault === "client",
        );
    });

    it("a message over 256 KB is InvalidParameterException (Message too long)", async () => {
        await assert.rejects(
            sns.send(new PublishCommand({ TopicArn: topicArn, Message: "x".repeat(262_145) })),
            (err: unknown) => err instanceof InvalidParameterException && /Message too long/.test(err.message),
        );
    });

    describe("each injected call fault surfaces as the SDK error class a publisher sees", () => {
        const cases: [string, (err: unknown) => boolean][] = [
            [
                "InternalError",
                (err) =>
                    err instanceof InternalErrorException &&
                    err.$fault === "server" &&
                    err.$metadata.httpStatusCode === 500,
            ],
            ["Throttled", (err) => err instanceof ThrottledException && err.$metadata.httpStatusCode === 400],
            [
                "Throttling",
                (err) =>
                    err instanceof SNSServiceException &&
                    err.name === "Throttling" &&
                    err.$metadata.httpStatusCode === 400,
            ],
            ["NotFound", (err) => err instanceof NotFoundException && err.$metadata.httpStatusCode === 404],
            ["InvalidParameter", (err) => err instanceof InvalidParameterException],
            [
                "AuthorizationError",
                (err) => err instanceof AuthorizationErrorException && err.$metadata.httpStatusCode === 403,
            ],
        ];
        for (const [kind, check] of cases) {
            it(`${kind}`, async () => {
                each.server.setFaults({ calls: [{ kind: kind as never, times: 1 }] });
                await assert.rejects(sns.send(new PublishCommand({ TopicArn: topicArn, Message: "x" })), check);
                assert.equal(each.server.topicMessages(topicArn).length, 0, "nothing accepted");
                await sns.send(new PublishCommand({ TopicArn: topicArn, Message: "y" }));
                assert.deepEqual(
                    each.server.topicMessages(topicArn).map((m) => m.body),
                    ["y"],
                    "times: 1 fired once",
                );
            });
        }
    });

    it("the SDK's own retries get past transient faults (5xx, throttling), each attempt being a call", async () => {
        const retrying = snsClient(each.server, { maxAttempts: 3 });
        each.server.setFaults({
            calls: [
                { kind: "InternalError", times: 1 },
                { kind: "Throttling", times: 1 },
            ],
        });
        await retrying.send(new PublishCommand({ TopicArn: topicArn, Message: "x" }));
        retrying.destroy();
        assert.deepEqual(
            each.server
                .calls()
                .slice(-3)
                .map((c) => c.outcome),
            ["InternalError", "Throttling", "ok"],
        );
        assert.equal(each.server.topicMessages(topicArn).length, 1);
    });

    it("accept then time out: the message is recorded, the client gets a TimeoutError", async () => {
        const impatient = snsClient(each.server, { requestTimeout: 200 });
        each.server.setFaults({ calls: [{ kind: "AcceptThenTimeout", times: 1, holdMs: 5000 }] });
        await assert.rejects(
            impatient.send(new PublishCommand({ TopicArn: topicArn, Message: "x" })),
            (err: unknown) => (err as Error).name === "TimeoutError",
        );
        assert.equal(each.server.calls().at(-1)?.outcome, "AcceptThenTimeout");
        impatient.destroy();
        const [message] = each.server.topicMessages(topicArn);
        assert.equal(message?.body, "x");
        assert.equal(message?.acknowledged, false);
    });

    it("accept then reset: recorded, the connection drops, and an SDK retry publishes a duplicate (standard topic)", async () => {
        const retrying = snsClient(each.server, { maxAttempts: 2 });
        each.server.setFaults({ calls: [{ kind: "AcceptThenReset", times: 1 }] });
        await retrying.send(new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries(2) }));
        retrying.destroy();
        assert.deepEqual(
            each.server.topicMessages(topicArn).map((m) => [m.body, m.acknowledged]),
            [
                ["m0", false],
                ["m1", false],
                ["m0", true],
                ["m1", true],
            ],
        );
    });

    it("reset without accepting: nothing is recorded, the client sees a network error", async () => {
        each.server.setFaults({ calls: [{ kind: "Reset" }] });
        await assert.rejects(sns.send(new PublishCommand({ TopicArn: topicArn, Message: "x" })), (err: unknown) =>
            /socket hang up|ECONNRESET/.test(String((err as Error).message) + String((err as { code?: string }).code)),
        );
        assert.equal(each.server.topicMessages(topicArn).length, 0);
    });

    it("rate-based faults replay exactly from the seed", async () => {
        const outcomes = async (seed: number): Promise<string[]> => {
            const s = await startAwsFaultServer({ seed, faults: { calls: [{ kind: "InternalError", rate: 0.3 }] } });
            const c = snsClient(s);
            const arn = s.createTopic("t");
            for (let i = 0; i < 30; i += 1)
                await c.send(new PublishCommand({ TopicArn: arn, Message: `${i}` })).catch(() => undefined);
            c.destroy();
            await s.stop();
            return s.calls().map((call) => call.outcome);
        };
        const first = await outcomes(42);
        assert.deepEqual(await outcomes(42), first);
        const failures = first.filter((o) => o === "InternalError").length;
        assert.ok(failures > 0 && failures < 30, `some but not all calls failed (${failures}/30)`);
        assert.notDeepEqual(await outcomes(43), first);
    });

    it("per-entry rate faults and predicates see the entry's attributes", async () => {
        each.server.setFaults({
            entries: [
                {
                    when: (e) => e.attributes.kind?.stringValue === "poison",
                    code: "InvalidParameter",
                    senderFault: true,
                },
            ],
        });
        const out = await sns.send(
            new PublishBatchCommand({
                TopicArn: topicArn,
                PublishBatchRequestEntries: [
                    { Id: "a", Message: "ok" },
                    {
                        Id: "b",
                        Message: "bad",
                        MessageAttributes: { kind: { DataType: "String", StringValue: "poison" } },
                    },
                ],
            }),
        );
        assert.deepEqual(
            out.Failed?.map((f) => f.Id),
            ["b"],
        );
    });

    it("latencyMs delays every answer (bench mode) without changing results", async () => {
        each.server.setFaults({ latencyMs: 5 });
        const out = await sns.send(
            new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries(3) }),
        );
        assert.equal(out.Successful?.length, 3);
    });

    describe("FIFO topics", () => {
        it("require MessageGroupId, return SequenceNumbers and drop duplicates by MessageDeduplicationId", async () => {
            const fifoArn = (
                await sns.send(new CreateTopicCommand({ Name: "events.fifo", Attributes: { FifoTopic: "true" } }))
            ).TopicArn as string;
            await assert.rejects(
                sns.send(new PublishCommand({ TopicArn: fifoArn, Message: "x", MessageDeduplicationId: "d" })),
                InvalidParameterException,
            );
            const a = await sns.send(
                new PublishCommand({
                    TopicArn: fifoArn,
                    Message: "x",
                    MessageGroupId: "g",
                    MessageDeduplicationId: "d1",
                }),
            );
            const b = await sns.send(
                new PublishBatchCommand({
                    TopicArn: fifoArn,
                    PublishBatchRequestEntries: [
                        { Id: "1", Message: "x", MessageGroupId: "g", MessageDeduplicationId: "d1" },
                        { Id: "2", Message: "y", MessageGroupId: "g", MessageDeduplicationId: "d2" },
                    ],
                }),
            );
            assert.match(a.SequenceNumber ?? "", /^\d{20,}$/);
            assert.equal(b.Successful?.[0]?.MessageId, a.MessageId, "the duplicate gets the first message's id");
            assert.ok(BigInt(b.Successful?.[1]?.SequenceNumber ?? "0") > BigInt(a.SequenceNumber ?? "0"));
            assert.deepEqual(
                each.server.topicMessages(fifoArn).map((m) => [m.body, m.messageGroupId, m.messageDeduplicationId]),
                [
                    ["x", "g", "d1"],
                    ["y", "g", "d2"],
                ],
            );
        });
        it("rejects a FIFO name without FifoTopic=true", async () => {
            await assert.rejects(sns.send(new CreateTopicCommand({ Name: "x.fifo" })), InvalidParameterException);
        });
    });

    it("speaks SQS JSON for a DLQ: CreateQueue, SendMessage, ReceiveMessage (MD5-checked by the SDK), DeleteMessage", async () => {
        const sqs = new SQSClient(localClientConfig(each.server.endpoint));
        try {
            const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: "dlq" }))).QueueUrl as string;
            assert.equal(queueUrl, `${each.server.endpoint}/000000000000/dlq`);
            const sent = await sqs.send(
                new SendMessageCommand({
                    QueueUrl: queueUrl,
                    MessageBody: '{"reason":"expired"}',
                    MessageAttributes: { reason: { DataType: "String", StringValue: "expired" } },
                }),
            );
            const received = await sqs.send(
                new ReceiveMessageCommand({
                    QueueUrl: queueUrl,
                    MaxNumberOfMessages: 10,
                    MessageAttributeNames: ["All"],
                }),
            );
            assert.equal(received.Messages?.length, 1);
            assert.equal(received.Messages?.[0]?.MessageId, sent.MessageId);
            assert.equal(received.Messages?.[0]?.Body, '{"reason":"expired"}');
            assert.equal(received.Messages?.[0]?.MessageAttributes?.reason?.StringValue, "expired");
            assert.equal(
                (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }))).Messages,
                undefined,
                "in flight, invisible",
            );
            await sqs.send(
                new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: received.Messages?.[0]?.ReceiptHandle }),
            );
            assert.deepEqual(
                each.server.queueMessages("dlq").map((m) => m.body),
                ['{"reason":"expired"}'],
            );
            await assert.rejects(
                sqs.send(
                    new SendMessageCommand({ QueueUrl: `${each.server.endpoint}/000000000000/nope`, MessageBody: "x" }),
                ),
                (err: unknown) => /QueueDoesNotExist|NonExistentQueue/.test((err as Error).name),
            );
            each.server.setFaults({ calls: [{ kind: "InternalError", actions: ["SendMessage"], times: 1 }] });
            await assert.rejects(
                sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "x" })),
                (err: unknown) =>
                    (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 500,
            );
            // SQS's character rule, as AWS documents it: U+FFFF in the body or an attribute refuses the whole message.
            each.server.setFaults({});
            for (const bad of [
                { MessageBody: "a\uFFFFb" },
                { MessageBody: "x", MessageAttributes: { h: { DataType: "String", StringValue: "\u0001" } } },
            ]) {
                await assert.rejects(
                    sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, ...bad })),
                    (err: unknown) => (err as Error).name === "InvalidMessageContents",
                );
            }
            await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "tab\t é \u{1F600} \uFFFD" }));
        } finally {
            sqs.destroy();
        }
    });
});
