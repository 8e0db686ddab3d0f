/**
 * The stream publisher's refusals of a wrong setup: events that are not its table's stream, settings of the
 * wrong shape or region, a fifo setting that does not match the topic, an incomplete config.
 */
import assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import { createPublisher } from "../../../runtime/relay/publisher";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach } from "../../support/runtime/relay-fixtures";

describe("createPublisher refuses what is not its own (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("fails loudly (INVALID_CONFIG, naming what arrived) on an event that is not a DynamoDB stream event: SQS-, Kinesis- or EventBridge-shaped, no Records, or a record that is not a stream record", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const [ours] = (await h.streamEvent()).Records;
        const sqs = {
            Records: [
                {
                    messageId: "m-1",
                    body: "{}",
                    eventSource: "aws:sqs",
                    eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:orders",
                    awsRegion: "us-east-1",
                },
            ],
        };
        const kinesis = {
            Records: [
                {
                    eventSource: "aws:kinesis",
                    eventSourceARN: "arn:aws:kinesis:us-east-1:000000000000:stream/orders",
                    kinesis: { data: "e30=", sequenceNumber: "1", partitionKey: "p" },
                },
            ],
        };
        const scheduled = { source: "aws.events", "detail-type": "Scheduled Event", detail: {} };
        const cases: [unknown, RegExp][] = [
            [
                sqs,
                /the event's records come from "aws:sqs" \(arn:aws:sqs:us-east-1:000000000000:orders\), not from a DynamoDB stream/,
            ],
            [
                kinesis,
                /the event's records come from "aws:kinesis" \(arn:aws:kinesis:us-east-1:000000000000:stream\/orders\), not from a DynamoDB stream/,
            ],
            [
                scheduled,
                /the event has no Records array \(its keys: source, detail-type, detail\); it is not a DynamoDB stream event/,
            ],
            [{ nothing: true }, /the event has no Records array \(its keys: nothing\)/],
            [undefined, /the event has no Records array \(it is undefined\)/],
            [{ Records: [ours, null] }, /the event's record 1 is null, not a DynamoDB stream record/],
            [{ Records: [42] }, /the event's record 0 is a number, not a DynamoDB stream record/],
        ];
        for (const [event, pattern] of cases) {
            const logger = new RecordingLogger();
            await assert.rejects(
                h.publisher({ logger })(event),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    pattern.test(err.message) &&
                    /point the function's event source mapping at the outbox table's stream/.test(err.message),
                JSON.stringify(event),
            );
            assert.deepEqual(
                logger.lines.filter((l) => l.level === "error").map((l) => l.attributes?.code),
                ["INVALID_CONFIG"],
                "logged at error too",
            );
        }
        assert.equal(h.server.calls().length, 0, "nothing published, nothing acknowledged");
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("checks every record of an event for its source, not only the first: an outbox stream record followed by an SQS or Kinesis record fails the invocation (INVALID_CONFIG naming the later one), and nothing is published", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const [ours] = (await h.streamEvent()).Records;
        const later: [Record<string, unknown>, RegExp][] = [
            [
                { messageId: "m-1", body: "{}", eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:0:q" },
                /the event's records come from "aws:sqs" \(arn:aws:sqs:us-east-1:0:q\), not from a DynamoDB stream/,
            ],
            [
                { ...ours!, eventSource: "aws:kinesis" },
                /the event's records come from "aws:kinesis" \(arn:aws:dynamodb:.*\), not from a DynamoDB stream/,
            ],
        ];
        for (const [record, pattern] of later) {
            const event = { Records: [ours, record] };
            await assert.rejects(
                h.publisher()(event),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                JSON.stringify(record),
            );
        }
        assert.equal(h.server.calls().length, 0, "nothing published, nothing acknowledged");
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("refuses records from another table's stream (a misrouted mapping): INVALID_CONFIG logged with both ARNs, the shard held at the first such record, and that table's payload never published under our ids", async function () {
        h = await createHarness();
        const other = await createHarness();
        try {
            const message = { id: "shared-id", partition: "ORDER#1", type: "T" };
            await h.writer.write({ messages: [{ ...message, payload: "ours" }] });
            await other.writer.write({
                messages: [
                    { ...message, payload: "theirs" },
                    { ...message, id: "other-keyed", payload: "theirs-keyed", orderingKey: "k" },
                ],
            });
            const [ours] = (await h.streamEvent()).Records;
            const foreign = (await other.streamEvent()).Records;
            const logger = new RecordingLogger();
            const publisher = h.publisher({ logger });

            assert.deepEqual(
                await publisher({ Records: foreign }),
                { batchItemFailures: [{ itemIdentifier: foreign[0]!.dynamodb.SequenceNumber }] },
                "held at the first foreign record",
            );
            assert.deepEqual(h.published(), [], "the other table's payload is not published");
            assert.equal((await h.records())[0]!.status, "pending", "our record of the same key is not completed");
            const refusal = logger.lines.find((l) => l.level === "error" && l.attributes?.code === "INVALID_CONFIG");
            assert.ok(refusal, "logged at error");
            assert.equal(refusal.attributes?.eventSourceARN, foreign[0]!.eventSourceARN);
            assert.equal(
                refusal.attributes?.expected,
                ours!.eventSourceARN.replace(/\/stream\/.*$/, "/stream/*").replace(/:ddblocal:\d+:/, ":*:*:"),
            );
            assert.match(refusal.message, /comes from the stream of another table/);

            // A batch that starts with our records delivers them, then holds at the first foreign one.
            assert.deepEqual(await publisher({ Records: [ours!, ...foreign] }), {
                batchItemFailures: [{ itemIdentifier: foreign[0]!.dynamodb.SequenceNumber }],
            });
            assert.deepEqual(
                h.published().map((p) => JSON.parse(p.body) as string),
                ["ours"],
            );

            // A record that names no stream cannot prove it is ours either.
            const { eventSourceARN: _dropped, ...unnamed } = foreign[1]!;
            assert.deepEqual(await publisher({ Records: [unnamed] }), {
                batchItemFailures: [{ itemIdentifier: foreign[1]!.dynamodb.SequenceNumber }],
            });
            assert.equal(h.published().length, 1);
        } finally {
            await other.close();
        }
    });

    it("refuses at construction a topicArn or dlqUrl of the wrong shape (INVALID_CONFIG naming the setting), and on the first invocation one in another region than its client", async function () {
        h = await createHarness();
        const cases: [Record<string, unknown>, RegExp][] = [
            [
                { topicArn: "events" },
                /createPublisher: topicArn is "events"; expected an SNS topic ARN, arn:aws:sns:<region>:<account>:<name>; pass the topic's arn \(not its name\)/,
            ],
            [
                { topicArn: "arn:aws:sns:us-east-1:000000000000" },
                /topicArn is "arn:aws:sns:us-east-1:000000000000"; expected an SNS topic ARN/,
            ],
            [
                { topicArn: "arn:aws:sqs:us-east-1:000000000000:events" },
                /topicArn is "arn:aws:sqs:us-east-1:000000000000:events"; expected an SNS topic ARN/,
            ],
            [
                { dlqUrl: "not-a-url" },
                /createPublisher: dlqUrl is "not-a-url"; expected an SQS queue URL, https:\/\/sqs\.<region>\.amazonaws\.com\/<account>\/<queue name>; pass the queue's url \(not its ARN or name\)/,
            ],
            [
                { dlqUrl: "arn:aws:sqs:us-east-1:000000000000:dlq" },
                /dlqUrl is "arn:aws:sqs:us-east-1:000000000000:dlq"; expected an SQS queue URL/,
            ],
            [
                { dlqUrl: "https://sqs.us-east-1.amazonaws.com/dlq" },
                /dlqUrl is "https:\/\/sqs\.us-east-1\.amazonaws\.com\/dlq"; expected an SQS queue URL/,
            ],
        ];
        for (const [change, pattern] of cases) {
            assert.throws(
                () => h.publisher(change as never),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                JSON.stringify(change),
            );
            assert.throws(
                () => createSweeper(h.config(change as never)),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    pattern.test(err.message.replace("createSweeper", "createPublisher")),
                JSON.stringify(change),
            );
        }
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const event = await h.streamEvent();
        // The clients are in us-east-1 (the harness's region); these name another region.
        const elsewhere: [Record<string, unknown>, RegExp][] = [
            [
                { topicArn: "arn:aws:sns:eu-west-1:000000000000:events" },
                /topicArn arn:aws:sns:eu-west-1:000000000000:events is in region eu-west-1, but the SNS client's region is us-east-1; SNS refuses a topic of another region \(InvalidParameter: TopicArn\); point topicArn at the topic in us-east-1, or give the handler an SNS client of eu-west-1/,
            ],
            [
                { dlqUrl: "https://sqs.eu-west-1.amazonaws.com/000000000000/outbox-dlq" },
                /dlqUrl https:\/\/sqs\.eu-west-1\.amazonaws\.com\/000000000000\/outbox-dlq is in region eu-west-1, but the SQS client's region is us-east-1/,
            ],
        ];
        for (const [change, pattern] of elsewhere) {
            const publisher = h.publisher(change as never);
            for (let i = 0; i < 2; i += 1)
                await assert.rejects(
                    publisher(event),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                    JSON.stringify(change),
                );
            await assert.rejects(
                createSweeper(h.config(change as never))(),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    pattern.test(err.message.replace("createSweeper", "createPublisher")),
            );
        }
        assert.equal(h.server.calls().length, 0, "nothing was sent");
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("refuses at construction a fifo setting that does not match the topic, instead of dead-lettering every message", async function () {
        h = await createHarness();
        assert.throws(
            () => h.publisher({ fifo: true }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /fifo is true but topicArn .*:events is not a FIFO topic .*set fifo to false/.test(err.message),
        );
        const fifoTopic = h.server.createTopic("orders.fifo");
        assert.throws(
            () => h.publisher({ topicArn: fifoTopic }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /fifo is false but topicArn .*orders\.fifo is a FIFO topic/.test(err.message),
        );
        assert.throws(
            () => h.publisher({ fifo: "yes" as never }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") && /fifo must be true or false, got "yes"/.test(err.message),
        );
    });

    it("rejects an incomplete config with INVALID_CONFIG naming the setting", function () {
        const base = {
            dynamodb: { send: async () => ({}) },
            sns: { send: async () => ({}) },
            sqs: { send: async () => ({}) },
            tableName: "orders-outbox",
            topicArn: "arn:aws:sns:us-east-1:000000000000:events",
            dlqUrl: "https://sqs.us-east-1.amazonaws.com/000000000000/dlq",
        };
        const cases: [Record<string, unknown>, RegExp][] = [
            [{ tableName: "" }, /tableName must be a non-empty string/],
            [{ sns: undefined }, /sns must be an AWS SDK v3 client/],
            [{ maxPublishAttempts: 0 }, /maxPublishAttempts is 0; expected an integer from 1 to 100/],
            [{ claimLimit: 5000 }, /claimLimit is 5000; expected an integer from 1 to 1000/],
            [{ claimVersion: 0n }, /claimVersion must be a bigint ≥ 1n/],
        ];
        for (const [change, pattern] of cases) {
            assert.throws(
                () => createPublisher({ ...base, ...change } as never),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
            );
        }
    });
});
