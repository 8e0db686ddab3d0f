/**
 * The three destination kinds' pure parts: their ARNs, the checks a handler's destination settings pass, what each
 * kind's errors are a fault of, what an EventBridge event carries, each kind's request and how its answer is read.
 * The batch calls here go to a recording client, not a service: the same calls against the local SNS/SQS/EventBridge
 * stand-in, with real stream records, are in tests/integration/runtime/destinations.test.ts. No I/O.
 */
import assert from "node:assert/strict";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { queueUrlOfArn } from "../../../runtime/destination/aws-resource-names";
import { ENV, readHandlerEnvironment } from "../../../runtime/config";
import { createDestination, givenDestination, type DestinationConfig } from "../../../runtime/destination/create";
import { publishBatch, publishBatches } from "../../../runtime/destination/destination";
import {
    EVENTBRIDGE_MAX_CALL_BYTES,
    classifyEventBridgeFailure,
    eventBridgeDestination,
} from "../../../runtime/destination/eventbridge";
import { eventDetail, eventDetailType, eventEntrySize } from "../../../runtime/destination/event-detail";
import { DEFAULT_EVENT_SOURCE, destinationKindOfArn, eventSourceProblem } from "../../../runtime/destination/kind";
import { classifySnsFailure } from "../../../runtime/destination/sns";
import { SQS_MAX_BATCH_BYTES, classifySqsFailure, sqsDestination } from "../../../runtime/destination/sqs";
import { isOutboxError } from "../../../runtime/errors";
import type { OutboundMessage } from "../../../runtime/record/message";
import type { ClientLike } from "../../../runtime/ports";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { exampleArns } from "../../support/arns";
import { outboundMessage } from "../../support/outbound-message";

const { topic: TOPIC, queue: QUEUE, fifoQueue: FIFO_QUEUE } = exampleArns("events");
const BUS = exampleArns("orders").bus;

const message = (over: Partial<OutboundMessage> = {}): OutboundMessage =>
    outboundMessage({ type: "OrderPlaced", ...over });

/** A client that records each command's input and answers with what `answer` gives. */
function recordingClient(answer: (input: Record<string, unknown>, name: string) => unknown): {
    client: ClientLike;
    sent: { name: string; input: Record<string, unknown> }[];
} {
    const sent: { name: string; input: Record<string, unknown> }[] = [];
    const client: ClientLike = {
        send: async (command: object) => {
            const c = command as { input: Record<string, unknown>; constructor: { name: string } };
            sent.push({ name: c.constructor.name, input: c.input });
            return answer(c.input, c.constructor.name);
        },
    };
    return { client, sent };
}

const anyClient: ClientLike = { send: async () => ({}) };

function refuses(config: Partial<DestinationConfig>, pattern: RegExp): void {
    assert.throws(
        () => createDestination({ sqs: anyClient, ...config }, "createPublisher"),
        (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
        JSON.stringify(config),
    );
}

describe("destinations", function () {
    describe("ARNs", function () {
        it("name their kind by their shape", function () {
            assert.equal(destinationKindOfArn(TOPIC), "sns");
            assert.equal(destinationKindOfArn(FIFO_QUEUE), "sqs");
            assert.equal(destinationKindOfArn(BUS), "eventbridge");
            assert.equal(
                destinationKindOfArn("arn:aws:events:us-east-1:111111111111:event-bus/aws.partner/x/y"),
                "eventbridge",
            );
            for (const other of [
                "events",
                "https://sqs.us-east-1.amazonaws.com/111111111111/q",
                "arn:aws:s3:::bucket",
                "",
            ])
                assert.equal(destinationKindOfArn(other), undefined, other);
        });
        it("give a queue its URL, in the China partition too", function () {
            assert.equal(queueUrlOfArn(FIFO_QUEUE), "https://sqs.us-east-1.amazonaws.com/111111111111/events.fifo");
            assert.equal(
                queueUrlOfArn("arn:aws-cn:sqs:cn-north-1:111111111111:q"),
                "https://sqs.cn-north-1.amazonaws.com.cn/111111111111/q",
            );
            assert.equal(queueUrlOfArn(TOPIC), undefined);
        });
    });

    describe("a handler's destination settings", function () {
        it("take exactly one destination, and name the ones given when there are several", function () {
            refuses(
                {},
                /createPublisher: no destination; set exactly one of topicArn \(an SNS topic\), queueArn \(an SQS queue\) or eventBusArn \(an EventBridge bus\)/,
            );
            refuses(
                { topicArn: TOPIC, sns: anyClient, eventBusArn: BUS, eventBridge: anyClient },
                /createPublisher: topicArn and eventBusArn are set; an outbox publishes to exactly one destination; keep only one of them/,
            );
            assert.deepEqual(givenDestination({ queueArn: QUEUE }, "x"), {
                kind: "sqs",
                setting: "queueArn",
                arn: QUEUE,
            });
        });
        it("refuse an ARN of another shape, naming the setting, the value and the shape", function () {
            refuses(
                { queueArn: "https://sqs.us-east-1.amazonaws.com/111111111111/q" },
                /queueArn is "https:\/\/sqs\.us-east-1\.amazonaws\.com\/111111111111\/q"; expected an SQS queue ARN, arn:aws:sqs:<region>:<account>:<queue name>; pass the queue's arn \(not its URL or name\)/,
            );
            refuses(
                { eventBusArn: "orders", eventBridge: anyClient },
                /eventBusArn is "orders"; expected an EventBridge event bus ARN, arn:aws:events:<region>:<account>:event-bus\/<bus name>/,
            );
            refuses(
                { eventBusArn: TOPIC, eventBridge: anyClient },
                /eventBusArn is "arn:aws:sns:us-east-1:111111111111:events"; expected an EventBridge event bus ARN/,
            );
            refuses(
                { topicArn: QUEUE, sns: anyClient },
                /topicArn is "arn:aws:sqs:us-east-1:111111111111:events"; expected an SNS topic ARN/,
            );
        });
        it("need the client of the destination's kind", function () {
            refuses(
                { eventBusArn: BUS },
                /createPublisher: eventBridge must be an AWS SDK v3 client \(an object with send\) when eventBusArn is set, got undefined/,
            );
            refuses(
                { topicArn: TOPIC },
                /sns must be an AWS SDK v3 client \(an object with send\) when topicArn is set/,
            );
        });
        it("refuse a fifo setting that does not match the queue, and fifo on a bus", function () {
            refuses(
                { queueArn: FIFO_QUEUE },
                /fifo is false but queueArn arn:aws:sqs:us-east-1:111111111111:events\.fifo is a FIFO queue \(a name ending in \.fifo\); set fifo to true/,
            );
            refuses({ queueArn: QUEUE, fifo: true }, /fifo is true but queueArn .* is not a FIFO queue/);
            refuses(
                { eventBusArn: BUS, eventBridge: anyClient, fifo: true },
                /fifo is true but the destination is the EventBridge bus .*, which keeps no order; set fifo to false, or publish to an SQS FIFO queue or an SNS FIFO topic for ordered consumers/,
            );
            assert.equal(createDestination({ sqs: anyClient, queueArn: FIFO_QUEUE, fifo: true }, "x").fifo, true);
        });
        it("take an EventBridge source only with a bus, and only one EventBridge takes", function () {
            refuses(
                { queueArn: QUEUE, eventSource: "orders" },
                /eventSource is set, but the destination is not an EventBridge bus; .* remove it/,
            );
            for (const bad of ["", "aws.orders", "x".repeat(257), " orders"])
                refuses(
                    { eventBusArn: BUS, eventBridge: anyClient, eventSource: bad },
                    /eventSource is .*; an EventBridge Source (must|may not)/,
                );
            assert.equal(eventSourceProblem("com.example.orders"), undefined);
            assert.match(eventSourceProblem("aws.orders") ?? "", /may not start with 'aws\.'/);
        });
        it("build the destination of the kind given", function () {
            const sqs = createDestination({ sqs: anyClient, queueArn: QUEUE }, "x");
            assert.deepEqual(
                [sqs.kind, sqs.arn, sqs.fifo, sqs.bytesPerCall],
                ["sqs", QUEUE, false, SQS_MAX_BATCH_BYTES],
            );
            const bus = createDestination({ sqs: anyClient, eventBridge: anyClient, eventBusArn: BUS }, "x");
            assert.deepEqual(
                [bus.kind, bus.fifo, bus.bytesPerCall],
                ["eventbridge", false, EVENTBRIDGE_MAX_CALL_BYTES],
            );
            assert.equal(createDestination({ sqs: anyClient, sns: anyClient, topicArn: TOPIC }, "x").kind, "sns");
        });
    });

    describe("the handlers' environment", function () {
        const base = {
            [ENV.tableName]: "outbox",
            [ENV.dlqUrl]: "https://sqs.us-east-1.amazonaws.com/111111111111/dlq",
        };
        it("names the destination by exactly one of its three variables", function () {
            assert.deepEqual(readHandlerEnvironment({ ...base, [ENV.queueArn]: QUEUE }).destination, {
                setting: "queueArn",
                arn: QUEUE,
            });
            const bus = readHandlerEnvironment({ ...base, [ENV.eventBusArn]: BUS, [ENV.eventSource]: "com.example" });
            assert.deepEqual([bus.destination, bus.eventSource], [{ setting: "eventBusArn", arn: BUS }, "com.example"]);
            const refused = (env: Record<string, string>, pattern: RegExp) =>
                assert.throws(
                    () => readHandlerEnvironment({ ...base, ...env }),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                    JSON.stringify(env),
                );
            refused(
                {},
                /none of the environment variables OUTBOX_TOPIC_ARN, OUTBOX_QUEUE_ARN, OUTBOX_EVENT_BUS_ARN is set; exactly one of them names the destination/,
            );
            refused(
                { [ENV.topicArn]: TOPIC, [ENV.queueArn]: QUEUE },
                /the environment variables OUTBOX_TOPIC_ARN and OUTBOX_QUEUE_ARN are both set; exactly one of them names the destination/,
            );
            refused(
                { [ENV.queueArn]: "events" },
                /environment variable OUTBOX_QUEUE_ARN is "events"; expected an SQS queue ARN/,
            );
            refused(
                { [ENV.eventBusArn]: QUEUE },
                /environment variable OUTBOX_EVENT_BUS_ARN is .*; expected an EventBridge event bus ARN/,
            );
            refused(
                { [ENV.queueArn]: QUEUE, AWS_REGION: "eu-west-1" },
                /OUTBOX_QUEUE_ARN is .*: the queue is in us-east-1, but the function runs in eu-west-1 \(AWS_REGION\); SQS refuses a queue of another region; point it at a queue in eu-west-1/,
            );
        });
    });

    describe("what a failure is a fault of", function () {
        const table = (
            classify: (code: string, senderFault?: boolean, message?: string) => string,
            rows: [string, boolean, string, string][],
        ) => {
            for (const [code, senderFault, text, kind] of rows)
                assert.equal(classify(code, senderFault, text), kind, `${code} ${senderFault} ${text}`);
        };
        it("on SQS, by code, message and SenderFault", function () {
            table(classifySqsFailure, [
                ["InvalidMessageContents", true, "", "message"],
                ["AWS.SimpleQueueService.BatchRequestTooLong", false, "", "message"],
                ["InvalidParameterValue", true, "Message must be shorter than 262144 bytes", "message"],
                [
                    "InvalidParameterValue",
                    true,
                    "The request include parameter that is not valid for this queue type",
                    "deployment",
                ],
                ["MissingParameter", true, "The request must contain the parameter MessageGroupId.", "deployment"],
                [
                    "InvalidParameterValue",
                    true,
                    "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                    "deployment",
                ],
                [
                    "InvalidParameterValue",
                    true,
                    "Value d-1 for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.",
                    "deployment",
                ],
                // Issue 38: a group or deduplication id value SQS refuses is the message's, not the queue's.
                [
                    "InvalidParameterValue",
                    true,
                    "Value ORDER 1001 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                    "message",
                ],
                [
                    "InvalidParameterValue",
                    true,
                    "MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length",
                    "message",
                ],
                [
                    "InvalidParameterValue",
                    true,
                    "Value customer 77 for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                    "message",
                ],
                // The value a refusal echoes is the message's own words, never what the refusal is about.
                [
                    "InvalidParameterValue",
                    true,
                    "Value my queue type QueueUrl for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
                    "message",
                ],
                ["MissingParameter", true, "The request must contain the parameter MessageBody.", "message"],
                ["QueueDoesNotExist", false, "", "deployment"],
                ["AWS.SimpleQueueService.NonExistentQueue", true, "", "deployment"],
                ["KmsAccessDenied", false, "", "deployment"],
                ["AccessDenied", true, "", "deployment"],
                ["RequestThrottled", true, "", "transient"],
                ["ThrottlingException", true, "", "transient"],
                ["KmsThrottled", false, "", "transient"],
                ["InternalError", false, "", "transient"],
                ["SomethingNew", true, "", "message"],
                ["SomethingNew", false, "", "transient"],
            ]);
        });
        it("on EventBridge, by the codes AWS lists as retryable and not", function () {
            table(classifyEventBridgeFailure, [
                ["InvalidArgument", false, "", "message"],
                ["MalformedDetail", false, "", "message"],
                ["RedactionFailure", false, "", "message"],
                ["NotAuthorizedForDetailTypeException", false, "", "message"],
                ["ValidationException", false, "Total size of the entries in the request is over the limit", "message"],
                ["ValidationException", false, "EventBusName is not valid", "deployment"],
                ["NotAuthorizedForSourceException", false, "", "deployment"],
                ["AccessDeniedException", false, "", "deployment"],
                ["InvalidAccountIdException", false, "", "deployment"],
                ["ResourceNotFoundException", false, "Event bus orders does not exist.", "deployment"],
                ["KMSAccessDeniedException", false, "", "deployment"],
                ["InternalFailure", false, "", "transient"],
                ["InternalException", false, "", "transient"],
                ["ThrottlingException", false, "", "transient"],
                ["SomethingNew", false, "", "transient"],
            ]);
        });
        it("on SNS, by what the refusal is about", function () {
            table(classifySnsFailure, [
                ["InvalidParameter", true, "Invalid parameter: Message too long", "message"],
                ["InvalidParameter", false, "Invalid parameter: TopicArn", "deployment"],
                // Issue 38: about the topic (a fifo setting that does not match it), not one message.
                [
                    "InvalidParameter",
                    true,
                    "Invalid parameter: The MessageGroupId parameter is required for FIFO topics",
                    "deployment",
                ],
                [
                    "InvalidParameter",
                    true,
                    "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                    "deployment",
                ],
                ["InvalidParameter", true, "Invalid parameter: MessageGroupId", "message"],
                ["Throttled", true, "", "transient"],
            ]);
        });
    });

    describe("an EventBridge event", function () {
        it("carries the payload's own text beside the outbox's id, type, headers and trace context", function () {
            const body = '{"big":12345678901234567890,"one":1.0,"s":"é"}';
            const detail = eventDetail(
                message({
                    body,
                    headers: { tenant: "acme" },
                    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                }),
            );
            assert.equal(
                detail,
                `{"outbox":{"id":"id-1","type":"OrderPlaced","headers":{"tenant":"acme"},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"payload":${body}}`,
            );
            assert.deepEqual(JSON.parse(detail).outbox.headers, { tenant: "acme" });
        });
        it("carries a body that is not JSON as a string, marked as text", function () {
            const detail = JSON.parse(eventDetail(message({ body: "plain <text>" })));
            assert.deepEqual(detail, {
                outbox: { id: "id-1", type: "OrderPlaced", headers: {}, payloadFormat: "text" },
                payload: "plain <text>",
            });
        });
        it("has the message type as its detail type, or outbox.message when there is none", function () {
            assert.equal(eventDetailType(message()), "OrderPlaced");
            assert.equal(eventDetailType(message({ type: "" })), "outbox.message");
        });
        it("counts its size as EventBridge does: source, detail type and detail in UTF-8 bytes", function () {
            assert.equal(eventEntrySize("src", "Typé", '{"a":1}'), 3 + 5 + 7);
        });
    });

    describe("batch calls", function () {
        it("on SQS: the body, the attributes, and on a FIFO queue the group and the record id; answers read by Id", async function () {
            const { client, sent } = recordingClient(() => ({
                Successful: [
                    { Id: "2", MessageId: "m2" },
                    { Id: "0", MessageId: "m0" },
                ],
                Failed: [{ Id: "1", Code: "InvalidMessageContents", SenderFault: true, Message: "bad" }],
            }));
            const sqs = sqsDestination(client, FIFO_QUEUE, true);
            const results = await sqs.sendCall([
                message({ id: "a", orderingKey: "k1" }),
                message({ id: "b", headers: { tenant: "acme" } }),
                message({ id: "c" }),
                message({ id: "d" }),
            ]);
            assert.equal(sent[0]!.name, SendMessageBatchCommand.name);
            assert.equal(sent[0]!.input.QueueUrl, "https://sqs.us-east-1.amazonaws.com/111111111111/events.fifo");
            const entries = sent[0]!.input.Entries as Record<string, unknown>[];
            assert.deepEqual(entries[0], {
                Id: "0",
                MessageBody: '{"a":1}',
                MessageAttributes: {
                    "outbox.id": { DataType: "String", StringValue: "a" },
                    "outbox.type": { DataType: "String", StringValue: "OrderPlaced" },
                },
                MessageGroupId: "k1",
                MessageDeduplicationId: "a",
            });
            assert.equal(entries[1]!.MessageGroupId, "P", "no ordering key: the partition");
            assert.deepEqual(results, [
                { ok: true, messageId: "m0" },
                { ok: false, code: "InvalidMessageContents", message: "bad", permanent: true },
                { ok: true, messageId: "m2" },
                {
                    ok: false,
                    code: "NoResult",
                    message: "SQS reported neither success nor failure for this entry",
                    permanent: false,
                },
            ]);
            const standard = recordingClient(() => ({ Successful: [{ Id: "0", MessageId: "x" }] }));
            await sqsDestination(standard.client, QUEUE, false).sendCall([message()]);
            const entry = (standard.sent[0]!.input.Entries as Record<string, unknown>[])[0]!;
            assert.equal(
                "MessageGroupId" in entry || "MessageDeduplicationId" in entry,
                false,
                "a standard queue gets no group",
            );
        });
        it("on EventBridge: source, detail type and detail on the bus; answers read by position", async function () {
            const { client, sent } = recordingClient(() => ({
                FailedEntryCount: 1,
                Entries: [
                    { EventId: "e0" },
                    { ErrorCode: "MalformedDetail", ErrorMessage: "bad json" },
                    { ErrorCode: "ThrottlingException" },
                ],
            }));
            const results = await eventBridgeDestination(client, BUS, "com.example").sendCall([
                message({ id: "a" }),
                message({ id: "b", type: "" }),
                message({ id: "c" }),
            ]);
            assert.equal(sent[0]!.name, PutEventsCommand.name);
            const entries = sent[0]!.input.Entries as Record<string, unknown>[];
            assert.deepEqual(entries[1], {
                EventBusName: BUS,
                Source: "com.example",
                DetailType: "outbox.message",
                Detail: '{"outbox":{"id":"b","type":"","headers":{}},"payload":{"a":1}}',
            });
            assert.deepEqual(results, [
                { ok: true, messageId: "e0" },
                { ok: false, code: "MalformedDetail", message: "bad json", permanent: true },
                { ok: false, code: "ThrottlingException", message: "", permanent: false },
            ]);
        });
        it("send each entry alone when a whole call is refused for its messages, and report any other call failure on every entry", async function () {
            let calls = 0;
            const tooLong = Object.assign(new Error("Batch requests cannot be longer than 1048576 bytes"), {
                name: "BatchRequestTooLong",
            });
            const { client, sent } = recordingClient((input) => {
                calls += 1;
                const entries = input.Entries as unknown[];
                if (entries.length > 1) throw tooLong;
                return { Successful: [{ Id: "0", MessageId: `m${calls}` }] };
            });
            const results = await publishBatch(sqsDestination(client, QUEUE, false), [
                message({ id: "a" }),
                message({ id: "b" }),
            ]);
            assert.deepEqual(
                results.map((r) => r.ok),
                [true, true],
            );
            assert.equal(sent.length, 3);
            const down = recordingClient(() => {
                throw Object.assign(new Error("slow down"), { name: "RequestThrottled" });
            });
            const failed = await publishBatch(sqsDestination(down.client, QUEUE, false), [
                message(),
                message({ id: "b" }),
            ]);
            assert.deepEqual(
                failed.map((r) => (r.ok ? "ok" : `${r.code}:${r.permanent}`)),
                ["RequestThrottled:false", "RequestThrottled:false"],
            );
            assert.equal(down.sent.length, 1, "a throttled call is not split");
        });
        it("cut calls at each kind's bytes per call", function () {
            const big = (id: string) => ({ message: message({ id, body: `"${"x".repeat(200 * 1024)}"` }) });
            const items = ["a", "b", "c", "d", "e", "f"].map(big);
            const sizes = (d: Parameters<typeof publishBatches>[0]) =>
                publishBatches(d, items, false).map((b) => b.length);
            assert.deepEqual(sizes(sqsDestination(anyClient, QUEUE, false)), [5, 1], "1 MiB: five 200 KB messages");
            assert.deepEqual(
                sizes(eventBridgeDestination(anyClient, BUS, DEFAULT_EVENT_SOURCE)),
                [4, 2],
                "under 1 MB: four",
            );
        });
        it("leave SNS's request as it was", async function () {
            const { client, sent } = recordingClient(() => ({ Successful: [{ Id: "0", MessageId: "m" }] }));
            await createDestination({ sqs: anyClient, sns: client, topicArn: TOPIC }, "x").sendCall([message()]);
            assert.equal(sent[0]!.name, PublishBatchCommand.name);
            assert.equal(sent[0]!.input.TopicArn, TOPIC);
        });
    });

    describe("the writer's address", function () {
        const written = () => {
            const { client, sent } = recordingClient(() => ({}));
            return { client: client as never, sent };
        };
        const bindingOf = (sent: { input: Record<string, unknown> }[]) =>
            (sent.at(-1)!.input.TransactItems as { Put?: { Item: Record<string, { S?: string }> } }[])[0]!.Put!.Item
                .binding_id!.S;
        it("gives the records the binding of the destination it names, unless a bindingId is given", async function () {
            for (const [address, binding] of [
                [BUS, "eventbridge"],
                [QUEUE, "sqs"],
                [TOPIC, "sns"],
                ["somewhere", "sns"],
            ] as const) {
                const { client, sent } = written();
                await new OutboxWriter({ client, tableName: "t", address }).write({
                    messages: [{ partition: "P", type: "T", payload: 1 }],
                });
                assert.equal(bindingOf(sent), binding, address);
            }
            const { client, sent } = written();
            await new OutboxWriter({ client, tableName: "t", address: BUS, bindingId: "bus" }).write({
                messages: [{ partition: "P", type: "T", payload: 1 }],
            });
            assert.equal(bindingOf(sent), "bus");
        });
        it("refuses a type longer than an EventBridge detail type whatever the address, before anything is written", async function () {
            for (const address of [undefined, QUEUE, TOPIC, FIFO_QUEUE, BUS]) {
                const { client, sent } = written();
                const writer = new OutboxWriter({
                    client,
                    tableName: "t",
                    ...(address !== undefined ? { address } : {}),
                });
                await assert.rejects(
                    writer.write({ messages: [{ partition: "P", type: "T".repeat(129), payload: 1 }] }),
                    (err: unknown) =>
                        isOutboxError(err, "INVALID_PAYLOAD") &&
                        /^messages\[0\]\.type is 129 characters; a type is at most 128 characters, because an EventBridge bus carries it as the event's DetailType \(the strictest destination; the writer keeps every message within what each destination takes, whatever its address\); use a shorter type$/.test(
                            err.message,
                        ),
                    String(address),
                );
                assert.equal(sent.length, 0, "nothing written");
                await writer.write({ messages: [{ partition: "P", type: "T".repeat(128), payload: 1 }] });
                assert.equal(sent.length, 1, "128 characters are taken");
            }
        });
        describe("a FIFO topic or queue as the address, fifo not set", function () {
            const FIFO_TOPIC = "arn:aws:sns:us-east-1:111111111111:events.fifo";
            // The issue's cases: SNS and SQS take a group id of 1 to 128 alphanumerics and ASCII punctuation only.
            const refused: [string, { partition: string; orderingKey?: string }, RegExp][] = [
                [
                    "a partition with a space",
                    { partition: "ORDER 1001" },
                    /^messages\[0\]\.partition "ORDER 1001" is 10 characters and is the FIFO MessageGroupId \(of an SNS FIFO topic or an SQS FIFO queue\), which SNS and SQS take only as 1-128 letters, digits and ASCII punctuation, without spaces; use such a partition, e\.g\. with '-' or '#' instead of spaces$/,
                ],
                [
                    "a partition of 200 characters",
                    { partition: "P".repeat(200) },
                    /^messages\[0\]\.partition "P{60}…" is 200 characters and is the FIFO MessageGroupId/,
                ],
                [
                    "an ordering key with a space",
                    { partition: "CUSTOMER#77", orderingKey: "customer 77" },
                    /^messages\[0\]\.orderingKey "customer 77" is 11 characters and is the FIFO MessageGroupId .*; use such a orderingKey/,
                ],
            ];
            for (const address of [FIFO_QUEUE, FIFO_TOPIC]) {
                for (const [name, keys, pattern] of refused) {
                    it(`${address.includes(":sqs:") ? "queue" : "topic"}: refuses ${name} before any I/O`, async function () {
                        const { client, sent } = written();
                        const writer = new OutboxWriter({ client, tableName: "t", address });
                        await assert.rejects(
                            writer.write({ messages: [{ type: "T", payload: 1, ...keys }] }),
                            (err: unknown) => isOutboxError(err, "INVALID_PAYLOAD") && pattern.test(err.message),
                        );
                        assert.deepEqual(sent, [], "no call reached the client");
                    });
                }
            }
            it("takes them for a standard queue or topic, and for a bus whose name ends in .fifo (a bus is never FIFO)", async function () {
                for (const address of [QUEUE, TOPIC, undefined, `${BUS}.fifo`]) {
                    const { client, sent } = written();
                    const writer = new OutboxWriter({
                        client,
                        tableName: "t",
                        ...(address !== undefined ? { address } : {}),
                    });
                    await writer.write({
                        messages: refused.map(([, keys]) => ({ type: "T", payload: 1, ...keys })),
                    });
                    assert.ok(sent.length > 0, String(address));
                }
            });
            it("refuses fifo: false with a FIFO address at construction; takes fifo: true", function () {
                for (const [address, kind] of [
                    [FIFO_QUEUE, "queue"],
                    [FIFO_TOPIC, "topic"],
                ] as const) {
                    assert.throws(
                        () => new OutboxWriter({ client: written().client, tableName: "t", address, fifo: false }),
                        (err: unknown) =>
                            isOutboxError(err, "INVALID_CONFIG") &&
                            new RegExp(
                                `^OutboxWriter: fifo is false but address "${address.replace(/\./g, "\\.")}" is a FIFO ${kind} \\(a name ending in \\.fifo\\), which takes partitions and ordering keys as MessageGroupIds and refuses a message whose group id breaks its rules; omit fifo \\(the address turns the checks on\\) or set it to true$`,
                            ).test(err.message),
                        address,
                    );
                    assert.doesNotThrow(
                        () => new OutboxWriter({ client: written().client, tableName: "t", address, fifo: true }),
                    );
                }
            });
        });
    });
});
