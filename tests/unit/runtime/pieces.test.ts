/**
 * The small pure pieces the writer and the handlers are built from: ids, item sizes, message shapes and their
 * limits, PublishBatch splitting, error classification, EMF lines, the JSON logger, the handlers' environment, and
 * every integer limit of `runtime/limits.ts` at its bounds. No I/O.
 */
import assert from "node:assert/strict";
import {
    classifyPublishFailure,
    isPermanentPublishError,
    isPermanentSqsRefusal,
    publishBatches,
} from "../../../runtime/relay/delivery";
import { createEmfMetrics } from "../../../runtime/observability/emf";
import { createIdGenerator, idTimestamp } from "../../../runtime/ids";
import { attributeValueSize, itemSize } from "../../../runtime/record/item-size";
import { createJsonLogger, createLambdaLogger, parseLogLevel } from "../../../runtime/observability/json-logger";
import {
    deadLetterMessage,
    headerNameProblem,
    messageAttributes,
    publishEntry,
    SNS_MAX_MESSAGE_BYTES,
    snsMessageSize,
    sqsSafeText,
    worstCaseDeadLetterSize,
    type OutboundMessage,
} from "../../../runtime/record/message";

import * as runtime from "../../../runtime";
import { startLocalEventSourceMapping } from "../../../runtime/testing";
import {
    ENV,
    HANDLER_LIMITS,
    INBOX_LIMITS,
    INBOX_HANDLER_LIMITS,
    LARGE_PAYLOAD_LIMITS,
    MAPPING_LIMITS,
    REDRIVE_LIMITS,
    WRITER_LIMITS,
    type IntegerLimit,
} from "../../../runtime";
import { outboundMessage } from "../../support/outbound-message";

const message = outboundMessage;

/** A client that answers every call with nothing: the pieces built on it only run their checks. */
const fakeClient = { send: async () => ({}) } as never;

/** A relay's settings (publisher or sweeper) on {@link fakeClient}, with a topic as the destination. */
function fakeDelivery(tableName: string) {
    return {
        dynamodb: fakeClient,
        sns: fakeClient,
        sqs: fakeClient,
        tableName,
        topicArn: "arn:aws:sns:us-east-1:111111111111:events",
        dlqUrl: "https://sqs.us-east-1.amazonaws.com/111111111111/dlq",
    };
}

describe("runtime pieces", function () {
    describe("ids", function () {
        it("are 26-character Crockford ULIDs, strictly increasing within one millisecond and across a clock step back", function () {
            let now = Date.UTC(2026, 0, 1);
            const next = createIdGenerator({ now: () => now, sleep: async () => undefined });
            const ids = Array.from({ length: 1000 }, () => next());
            now -= 5;
            ids.push(next(), next());
            now += 10;
            ids.push(next());
            for (const id of ids) assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
            for (let i = 1; i < ids.length; i += 1) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
            assert.equal(idTimestamp(ids[0]!), Date.UTC(2026, 0, 1));
            assert.equal(idTimestamp("not-an-id"), undefined);
        });
    });

    describe("item size", function () {
        it("counts names and values the way DynamoDB bills them", function () {
            assert.equal(itemSize({ PK: { S: "abc" } }), 5);
            assert.equal(itemSize({ é: { S: "é" } }), 4, "UTF-8 bytes");
            assert.equal(attributeValueSize({ N: "12345" }), 4, "ceil(5/2) + 1");
            assert.equal(attributeValueSize({ N: "0.00100" }), 2, "leading and trailing zeros do not count");
            assert.equal(attributeValueSize({ N: "-0.00100" }), 3, "a negative number takes one byte more");
            assert.equal(attributeValueSize({ N: "1.5" }), 3, "base-100 digits aligned at the point: 01.50 is two");
            assert.equal(attributeValueSize({ N: "0" }), 1);
            assert.equal(attributeValueSize({ BOOL: true }), 1);
            assert.equal(attributeValueSize({ M: { a: { S: "x" } } }), 3 + 2 + 1);
            assert.equal(attributeValueSize({ L: [{ S: "x" }, { S: "yz" }] }), 3 + 2 + 3);
        });
    });

    describe("messages", function () {
        it("carry the record id, the type and the headers as String attributes", function () {
            assert.deepEqual(messageAttributes(message({ headers: { tenant: "acme" } })), {
                "outbox.id": { DataType: "String", StringValue: "id-1" },
                "outbox.type": { DataType: "String", StringValue: "T" },
                tenant: { DataType: "String", StringValue: "acme" },
            });
            assert.equal(snsMessageSize(message()), 7 + ("outbox.id".length + 6 + 4) + ("outbox.type".length + 6 + 1));
        });

        it("set FIFO group and deduplication ids only on FIFO topics", function () {
            assert.deepEqual(publishEntry(message({ orderingKey: "k" }), "0", true).MessageGroupId, "k");
            assert.deepEqual(publishEntry(message(), "0", true).MessageGroupId, "P");
            assert.deepEqual(publishEntry(message(), "0", true).MessageDeduplicationId, "id-1");
            assert.equal(publishEntry(message(), "0", false).MessageGroupId, undefined);
        });

        it("dead-letter with the payload as JSON (no escaping overhead) and the raw text when it is not JSON", function () {
            const dl = deadLetterMessage(message({ body: '{"big":"x"}' }), { reason: "expired", at: 0 });
            assert.deepEqual((JSON.parse(dl.body) as { payload: unknown }).payload, { big: "x" });
            const raw = deadLetterMessage(message({ body: "not json" }), { reason: "expired", at: 0 });
            assert.equal((JSON.parse(raw.body) as { body: string }).body, "not json");
            assert.ok(worstCaseDeadLetterSize(message()) > dl.body.length);
        });

        it("carry a redriven record's origin id as outbox.id and the FIFO deduplication id, and the source as outbox.source; the DLQ body keeps both ids", function () {
            const redriven = message({ id: "redrive.evt-1", originId: "evt-1", source: "orders" });
            assert.deepEqual(messageAttributes(redriven), {
                "outbox.id": { DataType: "String", StringValue: "evt-1" },
                "outbox.type": { DataType: "String", StringValue: "T" },
                "outbox.source": { DataType: "String", StringValue: "orders" },
            });
            assert.equal(publishEntry(redriven, "0", true).MessageDeduplicationId, "evt-1");
            const body = JSON.parse(deadLetterMessage(redriven, { reason: "expired", at: 0 }).body) as {
                recordId: string;
                originId?: string;
            };
            assert.deepEqual([body.recordId, body.originId], ["redrive.evt-1", "evt-1"]);
            assert.equal(
                (JSON.parse(deadLetterMessage(message(), { reason: "expired", at: 0 }).body) as { originId?: string })
                    .originId,
                undefined,
                "a record that is its own event has none",
            );
        });

        it("reject header names SNS would refuse, and reserved prefixes", function () {
            assert.equal(headerNameProblem("tenant-id"), undefined);
            assert.match(headerNameProblem("") ?? "", /1 to 256/);
            assert.match(headerNameProblem("a b") ?? "", /only letters/);
            assert.match(headerNameProblem(".a") ?? "", /start or end with '\.'/);
            assert.match(headerNameProblem("a..b") ?? "", /'\.\.'/);
            assert.match(headerNameProblem("AWS.x") ?? "", /reserved/);
            assert.match(headerNameProblem("X-Bridge.tenant") ?? "", /reserved/);
        });
    });

    describe("a message's origin id, as the writer checks it", function () {
        const base = { id: "redrive.evt-1", partition: "P", type: "T", payload: 1 };
        for (const [name, originId, fifo, why] of [
            ["empty", "", false, /messages\[0\]\.originId is ""; it must be a non-empty string/],
            ["not a string", 7, false, /messages\[0\]\.originId is 7; it must be a non-empty string/],
            ["over 1024 bytes", "é".repeat(513), false, /originId is 1026 bytes \(UTF-8\); it is at most 1024/],
            ["with U+FFFF", "evt-\uFFFF", false, /originId.*U\+FFFF/],
            [
                "with a space, on a FIFO writer",
                "evt 1",
                true,
                /originId "evt 1" is the FIFO MessageDeduplicationId, which must be 1-128 printable ASCII/,
            ],
        ] as const) {
            it(`refuses one ${name} (INVALID_PAYLOAD)`, function () {
                const writer = new runtime.OutboxWriter({ client: fakeClient, tableName: "outbox", fifo });
                assert.throws(
                    () => writer.check({ messages: [{ ...base, originId: originId as string }] }),
                    (e: unknown) => runtime.isOutboxError(e, "INVALID_PAYLOAD") && why.test(e.message),
                );
            });
        }
        it("takes one that a standard topic carries: a GoBridge id with a space", function () {
            new runtime.OutboxWriter({ client: fakeClient, tableName: "outbox" }).check({
                messages: [{ ...base, originId: "GoBridge id 1" }],
            });
        });
    });

    describe("what SQS accepts in a DLQ message", function () {
        it("escapes exactly the characters SQS refuses, so the body parses back to the same value", function () {
            const text = "ok é \u{1F600} \uFFFD | \uFFFE \uFFFF \u0001 \uD800 end";
            assert.equal(sqsSafeText(text), "ok é \u{1F600} \uFFFD | \\ufffe \\uffff \\u0001 \\ud800 end");
            const dl = deadLetterMessage(message({ id: "id-\uFFFF", body: JSON.stringify({ s: "a\uFFFF\uFFFE" }) }), {
                reason: "expired",
                at: 0,
            });
            assert.doesNotMatch(dl.body, /[\uFFFE\uFFFF]/);
            assert.deepEqual((JSON.parse(dl.body) as { payload: unknown; recordId: string }).payload, {
                s: "a\uFFFF\uFFFE",
            });
            assert.equal(
                (JSON.parse(dl.body) as { recordId: string }).recordId,
                "id-\uFFFF",
                "the body keeps the exact id",
            );
            assert.equal(dl.attributes["outbox.id"]!.StringValue, "id-\\uffff");
        });

        it("classifies SQS's content refusals as permanent, and outages as not", function () {
            for (const code of [
                "InvalidMessageContents",
                "AWS.SimpleQueueService.InvalidMessageContents",
                "InvalidAttributeValue",
                "InvalidAttributeName",
                "MessageTooLong",
            ])
                assert.equal(isPermanentSqsRefusal(code), true, code);
            for (const code of ["ThrottlingException", "InternalError", "KmsThrottled", "QueueDoesNotExist", ""])
                assert.equal(isPermanentSqsRefusal(code), false, code);
        });
    });

    describe("PublishBatch splitting", function () {
        const SNS_LIMITS = { bytesPerCall: SNS_MAX_MESSAGE_BYTES, entryBytes: snsMessageSize };
        const items = (specs: Partial<OutboundMessage>[]) =>
            specs.map((s, i) => ({ message: message({ id: `m${i}`, ...s }) }));
        it("cuts at 10 entries and at 256 KB in total, in order", function () {
            assert.deepEqual(
                publishBatches(SNS_LIMITS, items(Array.from({ length: 23 }, () => ({}))), false).map((b) => b.length),
                [10, 10, 3],
            );
            const big = "x".repeat(100 * 1024);
            assert.deepEqual(
                publishBatches(SNS_LIMITS, items([{ body: big }, { body: big }, { body: big }]), false).map(
                    (b) => b.length,
                ),
                [2, 1],
            );
        });
        it("never puts two entries of one ordering key in one call when asked", function () {
            const batches = publishBatches(
                SNS_LIMITS,
                items([{ orderingKey: "a" }, { orderingKey: "b" }, {}, { orderingKey: "a" }, { orderingKey: "c" }]),
                true,
            );
            assert.deepEqual(
                batches.map((b) => b.map((i) => i.message.id)),
                [
                    ["m0", "m1", "m2"],
                    ["m3", "m4"],
                ],
            );
        });
    });

    it("classifies SNS errors: a message's own fault, the deployment's (never dead-lettered), or transient", function () {
        const allAre = (kind: string, codes: string[], senderFault?: boolean, note?: string) =>
            assert.deepEqual(
                codes.map((c) => classifyPublishFailure(c, senderFault)),
                codes.map(() => kind),
                note,
            );
        const message = [
            "InvalidParameter",
            "InvalidParameterException",
            "InvalidParameterValue",
            "BatchRequestTooLongException",
        ];
        allAre("message", message);
        const deployment = [
            "NotFoundException",
            "NotFound",
            "AuthorizationError",
            "KMSDisabledException",
            "KMSInvalidState",
            "KMSNotFoundException",
            "KMSAccessDeniedException",
            "KMSOptInRequired",
            "InvalidSecurity",
        ];
        allAre("deployment", deployment, true, "even when SNS says the sender is at fault");
        const transient = [
            "Throttled",
            "ThrottledException",
            "InternalError",
            "KMSThrottlingException",
            "TimeoutError",
            "ServiceUnavailable",
        ];
        allAre("transient", transient, true);
        // A code this package does not know: SNS's SenderFault decides.
        assert.deepEqual(
            [
                classifyPublishFailure("SomethingNew", true),
                classifyPublishFailure("SomethingNew", false),
                classifyPublishFailure("SomethingNew"),
            ],
            ["message", "transient", "transient"],
        );
        assert.deepEqual(
            [
                isPermanentPublishError("SomethingNew", true),
                isPermanentPublishError("NotFound", true),
                isPermanentPublishError("InvalidParameter"),
            ],
            [true, false, true],
        );
        // SNS names the parameter it refuses: the topic ARN is the deployment's, any other parameter the message's.
        assert.deepEqual(
            [
                "Invalid parameter: TopicArn",
                "Invalid parameter: Topic Name",
                "Invalid parameter: Message too long",
                "Invalid parameter: MessageAttributes",
            ].map((m) => classifyPublishFailure("InvalidParameterException", true, m)),
            ["deployment", "deployment", "message", "message"],
        );
        assert.equal(isPermanentPublishError("InvalidParameter", false, "Invalid parameter: TopicArn"), false);
    });

    it("writes one EMF line per flush, with counters, samples and dimensions, and nothing when empty", function () {
        const lines: string[] = [];
        const metrics = createEmfMetrics({
            dimensions: { Function: "publisher" },
            write: (l) => lines.push(l),
            now: () => 1234,
        });
        metrics.flush();
        assert.equal(lines.length, 0);
        metrics.count("Published", 2);
        metrics.count("Published");
        metrics.sample("AgeAtPublish", 5, "Milliseconds");
        metrics.sample("AgeAtPublish", 7, "Milliseconds");
        assert.equal(metrics.value("Published"), 3);
        metrics.flush();
        assert.deepEqual(JSON.parse(lines[0]!), {
            _aws: {
                Timestamp: 1234,
                CloudWatchMetrics: [
                    {
                        Namespace: "DynamoDBOutbox",
                        Dimensions: [["Function"]],
                        Metrics: [
                            { Name: "Published", Unit: "Count" },
                            { Name: "AgeAtPublish", Unit: "Milliseconds" },
                        ],
                    },
                ],
            },
            Function: "publisher",
            Published: 3,
            AgeAtPublish: [5, 7],
        });
        metrics.flush();
        assert.equal(lines.length, 1, "flushed state starts over");
    });

    it("never drops an EMF value: more than 100 samples of a metric or 100 metrics flush as several valid documents", function () {
        const lines: string[] = [];
        const metrics = createEmfMetrics({
            dimensions: { Function: "publisher", Table: "t" },
            write: (l) => lines.push(l),
            now: () => 1234,
        });
        for (let i = 0; i < 250; i++) metrics.sample("AgeAtPublish", i, "Milliseconds");
        for (let i = 0; i < 150; i++) metrics.count(`Counter${i}`, i + 1);
        metrics.count("Published", 7);
        metrics.flush();
        assert.ok(lines.length >= 3, `several documents, got ${lines.length}`);
        const ages: number[] = [];
        const counts: Record<string, number> = {};
        for (const text of lines) {
            const doc = JSON.parse(text) as Record<string, unknown> & {
                _aws: {
                    Timestamp: number;
                    CloudWatchMetrics: {
                        Namespace: string;
                        Dimensions: string[][];
                        Metrics: { Name: string; Unit: string }[];
                    }[];
                };
            };
            // The EMF specification's shape: one directive, namespace, dimension sets that name root members, ≤ 100 metrics.
            assert.equal(doc._aws.Timestamp, 1234);
            assert.equal(doc._aws.CloudWatchMetrics.length, 1);
            const directive = doc._aws.CloudWatchMetrics[0]!;
            assert.equal(directive.Namespace, "DynamoDBOutbox");
            assert.deepEqual(directive.Dimensions, [["Function", "Table"]]);
            assert.equal(doc.Function, "publisher");
            assert.equal(doc.Table, "t");
            assert.ok(
                directive.Metrics.length >= 1 && directive.Metrics.length <= 100,
                `≤ 100 metrics per directive, got ${directive.Metrics.length}`,
            );
            assert.equal(
                new Set(directive.Metrics.map((m) => m.Name)).size,
                directive.Metrics.length,
                "a metric once per document",
            );
            for (const m of directive.Metrics) {
                const value = doc[m.Name];
                const values = Array.isArray(value) ? (value as number[]) : [value as number];
                assert.ok(
                    values.length >= 1 && values.length <= 100,
                    `≤ 100 values of ${m.Name}, got ${values.length}`,
                );
                for (const v of values) assert.equal(typeof v, "number");
                if (m.Name === "AgeAtPublish") {
                    assert.equal(m.Unit, "Milliseconds");
                    ages.push(...values);
                } else {
                    assert.equal(m.Unit, "Count");
                    counts[m.Name] = (counts[m.Name] ?? 0) + values.reduce((a, b) => a + b, 0);
                }
            }
        }
        assert.deepEqual(
            ages,
            Array.from({ length: 250 }, (_, i) => i),
            "every sample, once, in order",
        );
        assert.equal(Object.keys(counts).length, 151);
        for (let i = 0; i < 150; i++) assert.equal(counts[`Counter${i}`], i + 1);
        assert.equal(counts.Published, 7);
        lines.length = 0;
        metrics.flush();
        assert.equal(lines.length, 0, "flushed state starts over");
    });

    it("logs JSON lines at or above the level, bigint-safe", function () {
        const lines: string[] = [];
        const logger = createJsonLogger({
            level: "warn",
            write: (l) => lines.push(l),
            now: () => 0,
            fields: { function: "f" },
        });
        logger.info("dropped");
        logger.warn("kept", { recordId: "r", version: 3n });
        assert.deepEqual(
            lines.map((l) => JSON.parse(l)),
            [
                {
                    time: "1970-01-01T00:00:00.000Z",
                    level: "warn",
                    message: "kept",
                    function: "f",
                    recordId: "r",
                    version: "3",
                },
            ],
        );
        assert.equal(parseLogLevel("ERROR"), "error");
        assert.equal(parseLogLevel("nonsense"), "info");
        assert.equal(parseLogLevel(undefined, "warn"), "warn");
    });

    it("the handlers' logger honours AWS_LAMBDA_LOG_LEVEL, the level Lambda sets from applicationLogLevel", function () {
        const levelsWritten = (env: Record<string, string | undefined>): string[] => {
            const lines: string[] = [];
            const logger = createLambdaLogger("outbox-publisher", env, (l) => lines.push(l));
            logger.debug("d", { recordId: "r" });
            logger.info("i", { recordId: "r" });
            logger.warn("w", { recordId: "r" });
            logger.error("e", { recordId: "r" });
            return lines.map((l) => {
                const entry = JSON.parse(l) as Record<string, unknown>;
                assert.equal(entry.function, "outbox-publisher");
                assert.equal(entry.recordId, "r", "ids are kept");
                return entry.level as string;
            });
        };
        assert.deepEqual(
            levelsWritten({ AWS_LAMBDA_LOG_LEVEL: "DEBUG" }),
            ["debug", "info", "warn", "error"],
            "DEBUG shows debug",
        );
        assert.deepEqual(levelsWritten({ AWS_LAMBDA_LOG_LEVEL: "TRACE" }), ["debug", "info", "warn", "error"]);
        assert.deepEqual(levelsWritten({ AWS_LAMBDA_LOG_LEVEL: "INFO" }), ["info", "warn", "error"]);
        assert.deepEqual(levelsWritten({ AWS_LAMBDA_LOG_LEVEL: "WARN" }), ["warn", "error"], "WARN hides info");
        assert.deepEqual(levelsWritten({ AWS_LAMBDA_LOG_LEVEL: "ERROR" }), ["error"]);
        assert.deepEqual(levelsWritten({ AWS_LAMBDA_LOG_LEVEL: "FATAL" }), []);
        assert.deepEqual(levelsWritten({}), ["info", "warn", "error"], "unset (Text log format): info");
    });

    describe("the handlers' environment (readHandlerEnvironment)", function () {
        const required = {
            [ENV.tableName]: "outbox",
            [ENV.topicArn]: "arn:aws:sns:us-east-1:111111111111:events",
            [ENV.dlqUrl]: "https://sqs.us-east-1.amazonaws.com/111111111111/outbox-dlq",
        };
        const numeric = [ENV.completionGraceSeconds, ENV.sweepAfterSeconds, ENV.maxPublishAttempts, ENV.expiryShards];

        it("refuses a number not written in decimal digits (0x3, 1e1, 0b11, 0o7, 3.0, +3, Infinity) with INVALID_CONFIG naming the variable and the value", function () {
            for (const name of numeric) {
                for (const raw of ["0x3", "1e1", "0b11", "0o7", "3.0", "+3", "Infinity", "3 4", "٣"]) {
                    assert.throws(
                        () => runtime.readHandlerEnvironment({ ...required, [name]: raw }),
                        (e: unknown) =>
                            runtime.isOutboxError(e, "INVALID_CONFIG") &&
                            e.context.variable === name &&
                            e.context.value === raw &&
                            e.message.startsWith(
                                `environment variable ${name} is ${JSON.stringify(raw)}; expected an integer from `,
                            ) &&
                            e.message.includes(" in decimal digits; unset it to use the default "),
                        `${name}=${raw}`,
                    );
                }
                assert.equal(
                    runtime.readHandlerEnvironment({ ...required, [name]: " 3 " })[envKey(name)],
                    3,
                    "surrounding spaces are fine",
                );
            }
        });

        it("reads OUTBOX_CLAIM_VERSION as a bigint (default 1n), and refuses any other form naming the variable, the value, the range and the fix", function () {
            assert.equal(runtime.readHandlerEnvironment(required).claimVersion, 1n, "unset: 1n");
            assert.equal(runtime.readHandlerEnvironment({ ...required, [ENV.claimVersion]: " 7 " }).claimVersion, 7n);
            assert.equal(
                runtime.readHandlerEnvironment({ ...required, [ENV.claimVersion]: "9007199254740991" }).claimVersion,
                9007199254740991n,
            );
            for (const raw of ["0", "-1", "7n", "0x7", "7.0", "1e3", "seven", "9007199254740992"]) {
                assert.throws(
                    () => runtime.readHandlerEnvironment({ ...required, [ENV.claimVersion]: raw }),
                    (e: unknown) =>
                        runtime.isOutboxError(e, "INVALID_CONFIG") &&
                        e.context.variable === ENV.claimVersion &&
                        e.context.value === raw &&
                        e.message.startsWith(`environment variable OUTBOX_CLAIM_VERSION is ${JSON.stringify(raw)}; `) &&
                        e.message.includes("an integer from 1 to 9007199254740991 in decimal digits") &&
                        e.message.includes("set it so on every publisher and sweeper of the table"),
                    `OUTBOX_CLAIM_VERSION=${raw}`,
                );
            }
        });

        it('reads OUTBOX_CHECK_EVENT_BUS only with a bus: "true" or "false", unset when empty; refused with a topic or another word', function () {
            const bus = {
                ...required,
                [ENV.topicArn]: "",
                [ENV.eventBusArn]: "arn:aws:events:us-east-1:111111111111:event-bus/orders",
            };
            assert.equal(runtime.readHandlerEnvironment(bus).checkEventBus, undefined);
            assert.equal(runtime.readHandlerEnvironment({ ...bus, [ENV.checkEventBus]: "false" }).checkEventBus, false);
            assert.equal(runtime.readHandlerEnvironment({ ...bus, [ENV.checkEventBus]: "true" }).checkEventBus, true);
            for (const [env, why] of [
                [{ ...bus, [ENV.checkEventBus]: "off" }, /expected "true" or "false"/],
                [{ ...required, [ENV.checkEventBus]: "false" }, /the destination is not an EventBridge bus/],
            ] as const)
                assert.throws(
                    () => runtime.readHandlerEnvironment(env),
                    (e: unknown) =>
                        runtime.isOutboxError(e, "INVALID_CONFIG") &&
                        e.context.variable === ENV.checkEventBus &&
                        why.test(e.message),
                );
        });
        it("reads OUTBOX_SOURCE (the source every message names) when set, and refuses one the inbox's marker key cannot hold", function () {
            assert.equal(runtime.readHandlerEnvironment(required).source, undefined, "unset: the table name");
            assert.equal(runtime.readHandlerEnvironment({ ...required, [ENV.source]: " orders " }).source, "orders");
            for (const raw of ["orders#eu", "orders@eu", "the orders", "s".repeat(256)]) {
                assert.throws(
                    () => runtime.readHandlerEnvironment({ ...required, [ENV.source]: raw }),
                    (e: unknown) =>
                        runtime.isOutboxError(e, "INVALID_CONFIG") &&
                        e.context.variable === ENV.source &&
                        e.message.startsWith(`environment variable ${ENV.source} is ${JSON.stringify(raw)}; it `) &&
                        e.message.endsWith("; unset it to use the table name"),
                    raw,
                );
            }
        });
    });

    describe("the source a relay stamps (createPublisher's and createSweeper's source)", function () {
        const delivery = fakeDelivery("orders-outbox");
        it("takes 1 to 255 letters, digits, '_', '-', '.' or ':', and every DynamoDB table name by default", function () {
            runtime.createPublisher(delivery);
            runtime.createPublisher({ ...delivery, tableName: "t".repeat(255) });
            runtime.createSweeper({ ...delivery, source: "orders:eu-west-1.v2_x" });
            assert.equal(runtime.sourceProblem("orders"), undefined);
        });
        for (const [name, source, why] of [
            ["empty", "", /must be 1 to 255 characters \(it is 0\)/],
            ["256 characters", "s".repeat(256), /must be 1 to 255 characters \(it is 256\)/],
            ["with '#'", "orders#eu", /may hold only letters, digits, '_', '-', '\.' and ':'/],
            ["with '@'", "orders@eu", /the inbox's marker key uses '#' and '@' as separators/],
            ["not a string", 7, /must be a string/],
        ] as const) {
            it(`refuses a source ${name} (INVALID_CONFIG naming it and the fix)`, function () {
                for (const create of [runtime.createPublisher, runtime.createSweeper])
                    assert.throws(
                        () => create({ ...delivery, source: source as string }),
                        (e: unknown) =>
                            runtime.isOutboxError(e, "INVALID_CONFIG") &&
                            why.test(e.message) &&
                            /: source is .*; omit it for the table name, or name the outbox, e\.g\. "orders"$/.test(
                                e.message,
                            ),
                    );
            });
        }
    });

    /**
     * Every integer limit, at `min` and `max` (accepted) and at `min - 1` and `max + 1` (refused), through every
     * validator that reads it. Table-driven: a new limit table in runtime/limits.ts, or a new key in one, fails
     * "has a probe for every limit" until it gets a probe here. The component's args (OUTBOX_RANGES, which reuses
     * these tables, and the alarm thresholds) are checked the same way in tests/unit/component/validation.test.ts.
     */
    describe("every integer limit at its bounds", function () {
        type Probe = { readonly who: string; readonly run: (value: number) => unknown };
        const tables: Record<string, Record<string, IntegerLimit>> = {
            HANDLER_LIMITS,
            REDRIVE_LIMITS,
            MAPPING_LIMITS,
            INBOX_LIMITS,
            INBOX_HANDLER_LIMITS,
            WRITER_LIMITS,
            LARGE_PAYLOAD_LIMITS,
        };
        const delivery = fakeDelivery("outbox");
        const env = { [ENV.tableName]: "outbox", [ENV.topicArn]: delivery.topicArn, [ENV.dlqUrl]: delivery.dlqUrl };
        const publisher = (key: string): Probe => ({
            who: "createPublisher",
            run: (v) => runtime.createPublisher({ ...delivery, [key]: v }),
        });
        const sweeper = (key: string): Probe => ({
            who: "createSweeper",
            run: (v) => runtime.createSweeper({ ...delivery, [key]: v }),
        });
        const environment = (variable: string): Probe => ({
            who: `environment ${variable}`,
            run: (v) => runtime.readHandlerEnvironment({ ...env, [variable]: String(v) }),
        });
        const INBOX = { client: fakeClient, consumer: "billing", tableName: "inbox" };
        const inbox = (key: string): Probe => ({
            who: "Inbox",
            run: (v) => new runtime.Inbox({ ...INBOX, [key]: v }),
        });
        const writer = (key: string): Probe => ({
            who: "OutboxWriter",
            run: (v) => new runtime.OutboxWriter({ client: fakeClient, tableName: "outbox", [key]: v }),
        });
        const redrive = (key: string): Probe => ({
            who: "redriveDeadLetters",
            run: (v) =>
                runtime.redriveDeadLetters({
                    sqs: { send: async () => ({ Messages: [] }) },
                    queueUrl: delivery.dlqUrl,
                    writer: new runtime.OutboxWriter({ client: fakeClient, tableName: "outbox" }),
                    [key]: v,
                }),
        });
        // The local mapping checks its settings before it looks at anything else, so a missing handler is the next refusal.
        const mapping = (key: string, scale = 1): Probe => ({
            who: "startLocalEventSourceMapping",
            run: (v) =>
                startLocalEventSourceMapping({
                    streamsClient: fakeClient,
                    streamArn: "arn",
                    handler: undefined as never,
                    [key]: v * scale,
                }),
        });
        const probes: Record<string, Record<string, readonly Probe[]>> = {
            HANDLER_LIMITS: {
                completionGraceSeconds: [
                    publisher("completionGraceSeconds"),
                    sweeper("completionGraceSeconds"),
                    environment(ENV.completionGraceSeconds),
                ],
                sweepAfterSeconds: [sweeper("sweepAfterSeconds"), environment(ENV.sweepAfterSeconds)],
                maxPublishAttempts: [
                    publisher("maxPublishAttempts"),
                    sweeper("maxPublishAttempts"),
                    environment(ENV.maxPublishAttempts),
                ],
                claimLimit: [publisher("claimLimit"), sweeper("claimLimit")],
                publisherReserveMs: [publisher("reserveMs")],
                sweeperReserveMs: [sweeper("reserveMs")],
                maxPartitionsPerRun: [sweeper("maxPartitionsPerRun")],
                claimVersion: [environment(ENV.claimVersion)],
                maxExpiredPerRun: [sweeper("maxExpiredPerRun")],
                expiryShards: [
                    sweeper("expiryShards"),
                    writer("expiryShards"),
                    {
                        who: "OutboxStore",
                        run: (v) =>
                            new runtime.OutboxStore({ client: fakeClient, tableName: "outbox", expiryShards: v }),
                    },
                    environment(ENV.expiryShards),
                ],
            },
            REDRIVE_LIMITS: {
                maxMessages: [redrive("maxMessages")],
                visibilityTimeoutSeconds: [redrive("visibilityTimeoutSeconds")],
            },
            MAPPING_LIMITS: {
                batchSize: [mapping("batchSize")],
                maximumBatchingWindowInSeconds: [mapping("maximumBatchingWindowMs", 1000)],
                maximumRetryAttempts: [mapping("maximumRetryAttempts")],
                parallelizationFactor: [mapping("parallelizationFactor")],
            },
            INBOX_LIMITS: {
                markerTtlSeconds: [inbox("markerTtlSeconds")],
                markerShards: [inbox("markerShards")],
            },
            INBOX_HANDLER_LIMITS: {
                reserveMs: [
                    {
                        who: "createInboxHandler",
                        run: (v) =>
                            runtime.createInboxHandler({
                                inbox: new runtime.Inbox(INBOX),
                                consume: () => undefined,
                                reserveMs: v,
                            }),
                    },
                ],
            },
            WRITER_LIMITS: { compactionGraceSeconds: [writer("compactionGraceSeconds")] },
            LARGE_PAYLOAD_LIMITS: {
                thresholdBytes: [
                    {
                        who: "OutboxWriter",
                        run: (v) =>
                            new runtime.OutboxWriter({
                                client: fakeClient,
                                tableName: "outbox",
                                largePayloads: {
                                    objects: { putObject: async () => ({}), getObject: async () => ({}) },
                                    bucket: "payloads",
                                    thresholdBytes: v,
                                },
                            }),
                    },
                ],
            },
        };

        /** The error `run(value)` throws or rejects with, or `undefined`. */
        async function outcome(probe: Probe, value: number): Promise<unknown> {
            try {
                await probe.run(value);
                return undefined;
            } catch (err) {
                return err;
            }
        }

        /** Whether `err` refuses the setting: INVALID_CONFIG naming it and its range (another refusal, e.g. of a missing handler, is not one). */
        function refuses(err: unknown, limit: IntegerLimit, name: string): boolean {
            return (
                runtime.isOutboxError(err, "INVALID_CONFIG") &&
                err.message.includes(name) &&
                err.message.includes(`from ${limit.min} to ${limit.max}`)
            );
        }

        it("has a probe for every limit of every table runtime/limits.ts exports", function () {
            const exported = Object.entries(runtime).filter(
                ([, value]) =>
                    value !== null &&
                    typeof value === "object" &&
                    Object.values(value).length > 0 &&
                    Object.values(value).every(
                        (l) =>
                            l !== null &&
                            typeof l === "object" &&
                            "min" in l &&
                            "max" in l &&
                            "fallback" in l &&
                            "unit" in l,
                    ),
            );
            assert.deepEqual(
                exported.map(([name]) => name).sort(),
                Object.keys(tables).sort(),
                "a new limit table needs a place in this test",
            );
            for (const [table, limits] of Object.entries(tables)) {
                for (const key of Object.keys(limits))
                    assert.ok(
                        (probes[table]?.[key]?.length ?? 0) > 0,
                        `${table}.${key} has no probe: add the validator that reads it`,
                    );
            }
        });

        for (const [table, limits] of Object.entries(tables)) {
            for (const [key, limit] of Object.entries(limits)) {
                for (const probe of probes[table]?.[key] ?? []) {
                    it(`${table}.${key} through ${probe.who}: ${limit.min} and ${limit.max} accepted, ${limit.min - 1} and ${limit.max + 1} refused`, async function () {
                        const name = probe.who.startsWith("environment ")
                            ? probe.who.slice("environment ".length)
                            : key === "maximumBatchingWindowInSeconds"
                              ? "maximumBatchingWindowMs"
                              : probe.who === "createPublisher" || probe.who === "createSweeper"
                                ? key.endsWith("ReserveMs")
                                    ? "reserveMs"
                                    : key
                                : key;
                        const scaled = (l: IntegerLimit) =>
                            key === "maximumBatchingWindowInSeconds"
                                ? { ...l, min: l.min * 1000, max: l.max * 1000 }
                                : l;
                        for (const accepted of [limit.min, limit.max]) {
                            const err = await outcome(probe, accepted);
                            assert.ok(
                                !refuses(err, scaled(limit), name),
                                `${accepted} must be accepted: ${String(err)}`,
                            );
                        }
                        for (const refused of [limit.min - 1, limit.max + 1]) {
                            const err = await outcome(probe, refused);
                            assert.ok(
                                refuses(err, scaled(limit), name),
                                `${refused} must be refused naming ${name} and its range: ${String(err)}`,
                            );
                        }
                    });
                }
            }
        }
    });
});

/** The HandlerEnvironment key of an environment variable name. */
function envKey(variable: string): keyof ReturnType<typeof runtime.readHandlerEnvironment> {
    const entry = Object.entries(ENV).find(([, name]) => name === variable);
    return entry![0] as keyof ReturnType<typeof runtime.readHandlerEnvironment>;
}
