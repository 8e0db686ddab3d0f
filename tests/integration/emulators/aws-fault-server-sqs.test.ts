/**
 * The fault server's SQS side as a destination, driven through the real @aws-sdk/client-sqs: SendMessageBatch
 * with per-entry faults and SQS's own refusals, FIFO queues, DeleteMessageBatch, and whole-call faults by any
 * code, each arriving as the SDK error a publisher would branch on. The SNS side and the DLQ basics are in
 * aws-fault-server.test.ts.
 */
import assert from "node:assert/strict";
import {
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    CreateQueueCommand,
    DeleteMessageBatchCommand,
    EmptyBatchRequest,
    InvalidBatchEntryId,
    KmsAccessDenied,
    PurgeQueueCommand,
    QueueDoesNotExist,
    ReceiveMessageCommand,
    RequestThrottled,
    SendMessageBatchCommand,
    SendMessageCommand,
    SQSServiceException,
    TooManyEntriesInBatchRequest,
    type SendMessageBatchRequestEntry,
} from "@aws-sdk/client-sqs";
import { faultServerEach } from "../../support/fault-server";

const MiB = 1_048_576;

const batch = (n: number, prefix = "m"): SendMessageBatchRequestEntry[] =>
    Array.from({ length: n }, (_, i) => ({ Id: `e${i}`, MessageBody: `${prefix}${i}` }));

describe("AWS fault server: SQS as a destination, through the real AWS SDK", () => {
    const each = faultServerEach();
    let queueUrl: string;

    beforeEach(async () => {
        queueUrl = (await each.sqs.send(new CreateQueueCommand({ QueueName: "orders" }))).QueueUrl as string;
    });

    it("finds a queue by the AWS-form URL a publisher derives from its ARN, whatever the host", async () => {
        const arn = each.server.queueArn("orders");
        assert.equal(arn, "arn:aws:sqs:us-east-1:000000000000:orders");
        await each.sqs.send(
            new SendMessageCommand({
                QueueUrl: "https://sqs.us-east-1.amazonaws.com/000000000000/orders",
                MessageBody: "by-arn",
            }),
        );
        assert.deepEqual(
            each.server.queueMessages(queueUrl).map((m) => m.body),
            ["by-arn"],
        );
        assert.throws(() => each.server.queueArn("nope"), /the AWS fault server has no queue nope/);
    });

    describe("SendMessageBatch", () => {
        it("an entry fault in the middle comes back in Failed[] with Id, Code, SenderFault; the others are accepted", async () => {
            each.server.setFaults({
                entries: [
                    { actions: ["SendMessageBatch"], when: (e) => e.id === "e2", code: "InternalError" },
                    {
                        actions: ["SendMessageBatch"],
                        when: (e) => e.id === "e3",
                        code: "KMS.ThrottlingException",
                        senderFault: true,
                        message: "slow down",
                    },
                ],
            });
            const out = await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(5) }));
            assert.deepEqual(
                out.Successful?.map((s) => s.Id),
                ["e0", "e1", "e4"],
            );
            assert.ok(out.Successful?.every((s) => typeof s.MessageId === "string" && s.MD5OfMessageBody));
            assert.deepEqual(out.Failed, [
                { Id: "e2", SenderFault: false, Code: "InternalError", Message: "injected failure" },
                { Id: "e3", SenderFault: true, Code: "KMS.ThrottlingException", Message: "slow down" },
            ]);
            assert.deepEqual(
                each.server.queueMessages("orders").map((m) => [m.body, m.messageId, m.action]),
                out.Successful?.map((s, i) => [["m0", "m1", "m4"][i], s.MessageId, "SendMessageBatch"]),
            );
            assert.deepEqual(each.server.calls().at(-1), {
                callNumber: 2,
                action: "SendMessageBatch",
                entries: 5,
                outcome: "partial",
            });
        });

        it("entry rules without actions stay PublishBatch's: SendMessageBatch and SendMessage are untouched", async () => {
            each.server.setFaults({ entries: [{ code: "InternalError" }] });
            const out = await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(3) }));
            assert.equal(out.Successful?.length, 3);
            assert.deepEqual(out.Failed ?? [], []);
            await each.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "single" }));
            each.server.setFaults({ entries: [{ actions: ["SendMessageBatch"], code: "InternalError" }] });
            await each.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "single again" }));
            assert.deepEqual(
                each.server.queueMessages(queueUrl).map((m) => m.body),
                ["m0", "m1", "m2", "single", "single again"],
            );
        });

        it("a character outside SQS's set fails that entry (InvalidMessageContents, the sender's fault), not the batch", async () => {
            const entries = [
                { Id: "ok1", MessageBody: "fine" },
                { Id: "bad", MessageBody: "a\uFFFFb" },
                {
                    Id: "badAttr",
                    MessageBody: "x",
                    MessageAttributes: { h: { DataType: "String", StringValue: "\u0001" } },
                },
                { Id: "ok2", MessageBody: "tab\t é \u{1F600}" },
            ];
            const out = await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
            assert.deepEqual(
                out.Successful?.map((s) => s.Id),
                ["ok1", "ok2"],
            );
            assert.deepEqual(
                out.Failed?.map((f) => [f.Id, f.Code, f.SenderFault]),
                [
                    ["bad", "InvalidMessageContents", true],
                    ["badAttr", "InvalidMessageContents", true],
                ],
            );
            assert.deepEqual(
                each.server.queueMessages(queueUrl).map((m) => m.body),
                ["fine", "tab\t é \u{1F600}"],
            );
        });

        describe("refuses a whole batch as SQS does, accepting nothing", () => {
            const big = (bytes: number): string => "x".repeat(bytes);
            const cases: [string, () => SendMessageBatchRequestEntry[], (err: unknown) => boolean][] = [
                ["more than 10 entries", () => batch(11), (e) => e instanceof TooManyEntriesInBatchRequest],
                ["no entry", () => [], (e) => e instanceof EmptyBatchRequest],
                [
                    "two entries with one Id",
                    () => [
                        { Id: "a", MessageBody: "1" },
                        { Id: "a", MessageBody: "2" },
                    ],
                    (e) => e instanceof BatchEntryIdsNotDistinct,
                ],
                [
                    "an Id SQS does not allow",
                    () => [{ Id: "has space", MessageBody: "1" }],
                    (e) => e instanceof InvalidBatchEntryId,
                ],
                [
                    "1 MiB + 1 byte of bodies and attributes",
                    () => [
                        { Id: "a", MessageBody: big(MiB / 2) },
                        {
                            Id: "b",
                            MessageBody: big(MiB / 2 - 8),
                            // name (1) + type (6) + value (2) = 9 bytes: one over
                            MessageAttributes: { k: { DataType: "String", StringValue: "vv" } },
                        },
                    ],
                    (e) => e instanceof BatchRequestTooLong,
                ],
            ];
            for (const [name, entries, check] of cases) {
                it(name, async () => {
                    await assert.rejects(
                        each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries() })),
                        check,
                    );
                    assert.equal(each.server.queueMessages(queueUrl).length, 0);
                });
            }
            it("accepts exactly 1 MiB", async () => {
                const out = await each.sqs.send(
                    new SendMessageBatchCommand({
                        QueueUrl: queueUrl,
                        Entries: [
                            { Id: "a", MessageBody: big(MiB / 2) },
                            {
                                Id: "b",
                                MessageBody: big(MiB / 2 - 9),
                                MessageAttributes: { k: { DataType: "String", StringValue: "vv" } },
                            },
                        ],
                    }),
                );
                assert.equal(out.Successful?.length, 2);
            });
        });
    });

    describe("FIFO queues", () => {
        let fifoUrl: string;
        /** SendMessageBatch of `entries` to the FIFO queue. */
        const sendFifoBatch = (entries: SendMessageBatchRequestEntry[]) =>
            each.sqs.send(new SendMessageBatchCommand({ QueueUrl: fifoUrl, Entries: entries }));
        beforeEach(async () => {
            fifoUrl = (
                await each.sqs.send(
                    new CreateQueueCommand({ QueueName: "orders.fifo", Attributes: { FifoQueue: "true" } }),
                )
            ).QueueUrl as string;
        });

        it("a batch entry without MessageGroupId or MessageDeduplicationId fails alone; a duplicate in 5 minutes is not enqueued again", async () => {
            const first = await sendFifoBatch([
                { Id: "a", MessageBody: "A", MessageGroupId: "g1", MessageDeduplicationId: "d-a" },
                { Id: "noGroup", MessageBody: "N", MessageDeduplicationId: "d-n" },
                { Id: "noDedup", MessageBody: "D", MessageGroupId: "g1" },
                { Id: "b", MessageBody: "B", MessageGroupId: "g2", MessageDeduplicationId: "d-b" },
            ]);
            assert.deepEqual(
                first.Failed?.map((f) => [f.Id, f.Code, f.SenderFault]),
                [
                    ["noGroup", "MissingParameter", true],
                    ["noDedup", "InvalidParameterValue", true],
                ],
            );
            const [a, b] = first.Successful ?? [];
            assert.ok(BigInt(b?.SequenceNumber ?? "0") > BigInt(a?.SequenceNumber ?? "0"));
            const again = await sendFifoBatch([
                { Id: "a2", MessageBody: "A again", MessageGroupId: "g1", MessageDeduplicationId: "d-a" },
                { Id: "c", MessageBody: "C", MessageGroupId: "g1", MessageDeduplicationId: "d-c" },
            ]);
            assert.equal(again.Successful?.[0]?.MessageId, a?.MessageId, "the duplicate gets the first message's id");
            assert.notEqual(again.Successful?.[1]?.MessageId, a?.MessageId);
            assert.deepEqual(
                each.server.queueMessages(fifoUrl).map((m) => [m.body, m.messageGroupId, m.messageDeduplicationId]),
                [
                    ["A", "g1", "d-a"],
                    ["B", "g2", "d-b"],
                    ["C", "g1", "d-c"],
                ],
            );
            const received = await each.sqs.send(
                new ReceiveMessageCommand({ QueueUrl: fifoUrl, MaxNumberOfMessages: 10 }),
            );
            assert.deepEqual(
                received.Messages?.map((m) => m.Body),
                ["A", "B", "C"],
            );
        });

        it("a group or deduplication id outside 1 to 128 alphanumerics and punctuation fails its entry as SQS answers it; so does a deduplication id on a standard queue", async () => {
            const out = await sendFifoBatch([
                { Id: "space", MessageBody: "S", MessageGroupId: "ORDER 1001", MessageDeduplicationId: "d-s" },
                {
                    Id: "long",
                    MessageBody: "L",
                    MessageGroupId: "g".repeat(129),
                    MessageDeduplicationId: "d-l",
                },
                { Id: "dedup", MessageBody: "D", MessageGroupId: "g", MessageDeduplicationId: "d\u00e9" },
                {
                    Id: "edge",
                    MessageBody: "E",
                    MessageGroupId: "!~".repeat(64),
                    MessageDeduplicationId: "d-e",
                },
            ]);
            assert.deepEqual(
                out.Failed?.map((f) => [f.Id, f.Code, f.SenderFault, f.Message]),
                [
                    [
                        "space",
                        "InvalidParameterValue",
                        true,
                        "Value ORDER 1001 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                    ],
                    [
                        "long",
                        "InvalidParameterValue",
                        true,
                        `Value ${"g".repeat(129)} for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
                    ],
                    [
                        "dedup",
                        "InvalidParameterValue",
                        true,
                        "Value d\u00e9 for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                    ],
                ],
            );
            assert.deepEqual(
                out.Successful?.map((s) => s.Id),
                ["edge"],
                "128 punctuation characters are a valid group id",
            );
            const standard = (await each.sqs.send(new CreateQueueCommand({ QueueName: "plain" }))).QueueUrl as string;
            await assert.rejects(
                each.sqs.send(
                    new SendMessageCommand({ QueueUrl: standard, MessageBody: "x", MessageDeduplicationId: "d" }),
                ),
                (err: unknown) =>
                    err instanceof SQSServiceException &&
                    err.name === "InvalidParameterValue" &&
                    /not valid for this queue type/.test(err.message),
            );
        });

        it("SendMessage without a MessageGroupId is refused whole (MissingParameter)", async () => {
            await assert.rejects(
                each.sqs.send(
                    new SendMessageCommand({ QueueUrl: fifoUrl, MessageBody: "x", MessageDeduplicationId: "d" }),
                ),
                (err: unknown) => err instanceof SQSServiceException && err.name === "MissingParameter",
            );
        });

        it("content-based deduplication: the body's SHA-256 stands for a missing MessageDeduplicationId", async () => {
            const url = (
                await each.sqs.send(
                    new CreateQueueCommand({
                        QueueName: "content.fifo",
                        Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" },
                    }),
                )
            ).QueueUrl as string;
            const one = await each.sqs.send(
                new SendMessageCommand({ QueueUrl: url, MessageBody: "same", MessageGroupId: "g" }),
            );
            const two = await each.sqs.send(
                new SendMessageCommand({ QueueUrl: url, MessageBody: "same", MessageGroupId: "g" }),
            );
            await each.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "other", MessageGroupId: "g" }));
            assert.equal(two.MessageId, one.MessageId);
            assert.deepEqual(
                each.server.queueMessages(url).map((m) => m.body),
                ["same", "other"],
            );
        });
    });

    describe("whole-call faults by code arrive as the SDK's error names", () => {
        const cases: [string, number, (err: unknown) => boolean][] = [
            ["RequestThrottled", 403, (e) => e instanceof RequestThrottled],
            ["ThrottlingException", 400, (e) => e instanceof SQSServiceException && e.name === "ThrottlingException"],
            ["AWS.SimpleQueueService.NonExistentQueue", 400, (e) => e instanceof QueueDoesNotExist],
            ["AccessDenied", 403, (e) => e instanceof SQSServiceException && e.name === "AccessDenied"],
            ["KMS.AccessDeniedException", 400, (e) => e instanceof KmsAccessDenied],
            ["KmsAccessDenied", 400, (e) => e instanceof KmsAccessDenied],
            [
                "InternalError",
                500,
                (e) => e instanceof SQSServiceException && e.name === "InternalError" && e.$fault === "server",
            ],
        ];
        for (const [code, status, check] of cases) {
            it(`${code} (${status})`, async () => {
                each.server.setFaults({
                    calls: [{ kind: "Error", code, status, actions: ["SendMessageBatch"], times: 1 }],
                });
                await assert.rejects(
                    each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(2) })),
                    (err: unknown) => check(err) && (err as SQSServiceException).$metadata.httpStatusCode === status,
                );
                assert.equal(each.server.queueMessages(queueUrl).length, 0, "nothing accepted");
                assert.equal(each.server.calls().at(-1)?.outcome, code);
                await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(1) }));
                assert.equal(each.server.queueMessages(queueUrl).length, 1, "times: 1 fired once");
            });
        }

        it("on the wire as SQS documents it: the query code in x-amzn-query-error, the shape in __type", async () => {
            each.server.setFaults({
                calls: [
                    {
                        kind: "Error",
                        code: "AWS.SimpleQueueService.NonExistentQueue",
                        status: 400,
                        actions: ["SendMessage"],
                    },
                ],
            });
            const res = await fetch(`${each.server.endpoint}/`, {
                method: "POST",
                headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessage" },
                body: JSON.stringify({ QueueUrl: queueUrl, MessageBody: "x" }),
            });
            assert.equal(res.status, 400);
            assert.equal(res.headers.get("x-amzn-query-error"), "AWS.SimpleQueueService.NonExistentQueue;Sender");
            assert.deepEqual(await res.json(), {
                __type: "com.amazonaws.sqs#QueueDoesNotExist",
                message: "AWS.SimpleQueueService.NonExistentQueue (injected)",
            });
        });
    });

    it("DeleteMessageBatch deletes by receipt handle; an unknown handle fails its entry; the batch rules hold", async () => {
        await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(3) }));
        const received = await each.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
        );
        const handles = received.Messages?.map((m) => m.ReceiptHandle as string) ?? [];
        assert.equal(handles.length, 3);
        const out = await each.sqs.send(
            new DeleteMessageBatchCommand({
                QueueUrl: queueUrl,
                Entries: [
                    { Id: "first", ReceiptHandle: handles[0] },
                    { Id: "bogus", ReceiptHandle: "not-a-handle" },
                    { Id: "third", ReceiptHandle: handles[2] },
                ],
            }),
        );
        assert.deepEqual(out.Successful, [{ Id: "first" }, { Id: "third" }]);
        assert.deepEqual(
            out.Failed?.map((f) => [f.Id, f.Code, f.SenderFault]),
            [["bogus", "ReceiptHandleIsInvalid", true]],
        );
        assert.equal(each.server.calls().at(-1)?.outcome, "partial");
        const left = await each.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
        assert.deepEqual(
            left.Messages?.map((m) => m.Body),
            ["m1"],
        );
        const refusals: [{ Id: string; ReceiptHandle: string }[], (err: unknown) => boolean][] = [
            [[], (e) => e instanceof EmptyBatchRequest],
            [
                Array.from({ length: 11 }, (_, i) => ({ Id: `d${i}`, ReceiptHandle: "h" })),
                (e) => e instanceof TooManyEntriesInBatchRequest,
            ],
            [
                [
                    { Id: "same", ReceiptHandle: "h1" },
                    { Id: "same", ReceiptHandle: "h2" },
                ],
                (e) => e instanceof BatchEntryIdsNotDistinct,
            ],
        ];
        for (const [entries, check] of refusals) {
            await assert.rejects(
                each.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries })),
                check,
            );
        }
    });

    it("ReceiveMessage answers at once whatever WaitTimeSeconds, up to MaxNumberOfMessages 10", async () => {
        await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(10) }));
        await each.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch(2, "n") }));
        const started = Date.now();
        const out = await each.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20 }),
        );
        assert.equal(out.Messages?.length, 10);
        const empty = await each.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: `${each.server.endpoint}/000000000000/orders`, WaitTimeSeconds: 20 }),
        );
        assert.equal(empty.Messages?.length, 1, "the two left, one per default MaxNumberOfMessages");
        assert.ok(Date.now() - started < 5000, "no long poll");
    });

    it("an action it does not speak is InvalidAction, naming the ones it does", async () => {
        await assert.rejects(
            each.sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl })),
            (err: unknown) =>
                err instanceof SQSServiceException &&
                err.name === "InvalidAction" &&
                /DeleteMessageBatch .*PutEvents, DescribeEventBus \(EventBridge\)/.test(err.message),
        );
    });
});
