/**
 * The W3C trace context from the writer to the consumer, in pieces, with no I/O: the `traceparent` and
 * `tracestate` validators (every failing input named), the writer's refusals (a bad value, a reserved header name,
 * a message whose attributes would exceed SNS's 10), the record's envelope headers, the published attributes, the
 * DLQ message and its redrive, the inbox's delivery formats, and the active OpenTelemetry context read through the
 * real `@opentelemetry/api` with the SDK's in-memory span exporter. `writer.check` and `writer.prepare` of keyless
 * messages send nothing, so no DynamoDB is needed; the trip through DynamoDB Local, the stream, the publisher and
 * fauxqs is tests/integration/relay/trace-context.test.ts.
 */
import assert from "node:assert/strict";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { context, createTraceState, ROOT_CONTEXT, trace, type Link } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { isOutboxError } from "../../../runtime/errors";
import { MESSAGE_ATTRIBUTES_DELIVERY, SNS_ENVELOPE_DELIVERY } from "../../../runtime/inbox/delivery-formats";
import type { LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import {
    deadLetterMessage,
    headerNameProblem,
    messageAttributes,
    outboundMessage,
    traceHeaders,
    userHeaders,
    type OutboundMessage,
} from "../../../runtime/record/message";
import { activeTraceContext, loadOpenTelemetryApi, traceLink } from "../../../runtime/observability/open-telemetry";
import type { Logger } from "../../../runtime/ports";
import { unmarshalRecord } from "../../../runtime/record/codec";
import { parseDeadLetter } from "../../../runtime/writer/redrive";
import {
    deliveredTraceContext,
    parseTraceparent,
    tracestateProblem,
    traceparentProblem,
    TRACEPARENT_EXAMPLE,
} from "../../../runtime/observability/trace-context";
import { OutboxWriter, type OutboxMessage, type OutboxWriterOptions } from "../../../runtime/writer/writer";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const TP = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TS = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

/** `n` user headers. */
const headers = (n: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`h${i}`, "v"]));

const message = (over: Partial<OutboxMessage> = {}): OutboxMessage => ({
    partition: "ORDER#1",
    type: "OrderCreated",
    payload: { orderId: 1 },
    ...over,
});

function writerWith(options: Partial<OutboxWriterOptions> = {}): OutboxWriter {
    // Never sends: check() and prepare() of keyless messages do no I/O.
    return new OutboxWriter({
        client: new DynamoDBClient({ region: "eu-west-1", credentials: { accessKeyId: "x", secretAccessKey: "x" } }),
        tableName: "orders-outbox",
        ...options,
    });
}

/** The envelope headers of the records a prepared write would put. */
async function storedHeaders(writer: OutboxWriter, messages: OutboxMessage[]): Promise<Record<string, unknown>[]> {
    const prepared = await writer.prepare({ messages });
    // The records come first (no items here), then the id guards of messages with their own id.
    return prepared.input
        .TransactItems!.slice(0, messages.length)
        .map((action) => unmarshalRecord(action.Put!.Item!).envelope.headers);
}

function refuses(run: () => unknown, pattern: RegExp, context: Record<string, unknown> = {}): void {
    assert.throws(run, (err: unknown) => {
        assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), `expected INVALID_PAYLOAD, got ${String(err)}`);
        assert.match(err.message, pattern);
        for (const [key, value] of Object.entries(context)) assert.equal(err.context[key], value, key);
        return true;
    });
}

describe("trace context: W3C traceparent and tracestate from the writer to the consumer", function () {
    describe("the traceparent validator (W3C Trace Context Level 1)", function () {
        it("accepts version 00 of exactly 55 characters with any flags, and a later version with more fields", function () {
            for (const ok of [
                TP,
                `00-${TRACE_ID}-${PARENT_ID}-00`,
                `00-${TRACE_ID}-${PARENT_ID}-ff`,
                TRACEPARENT_EXAMPLE,
                `01-${TRACE_ID}-${PARENT_ID}-01`,
                `cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-holds`,
                `01-${TRACE_ID}-${PARENT_ID}-01-`,
                `fe-${TRACE_ID}-${PARENT_ID}-01-!~{}`,
            ]) {
                assert.equal(traceparentProblem(ok), undefined, ok);
            }
            assert.deepEqual(parseTraceparent(TP), {
                version: "00",
                traceId: TRACE_ID,
                parentId: PARENT_ID,
                traceFlags: "01",
                sampled: true,
            });
            assert.equal(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-02`)?.sampled, false);
        });

        it("refuses every malformed input, saying what is wrong and what a traceparent looks like", function () {
            const cases: [unknown, RegExp][] = [
                [TP.toUpperCase(), /not of that form \(uppercase hex/],
                [`00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`, /not of that form/],
                [`00-${"0".repeat(32)}-${PARENT_ID}-01`, /all-zero trace id/],
                [`00-${TRACE_ID}-${"0".repeat(16)}-01`, /all-zero parent id/],
                [`ff-${TRACE_ID}-${PARENT_ID}-01`, /version "ff", which W3C forbids/],
                [
                    `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
                    /version "00" but 61 characters long; a version 00 traceparent is exactly 55/,
                ],
                [`01-${TRACE_ID}-${PARENT_ID}-01extra`, /not of that form/],
                // Issue 38: a later version's fields are visible ASCII, so every destination carries them as they are.
                ...[`a\u0000b`, "\uffff", "\ufffe", " spaced", "tab\t", "line\n", "é", "\u{1F600}"].map(
                    (tail): [unknown, RegExp] => [
                        `01-${TRACE_ID}-${PARENT_ID}-01-${tail}`,
                        /is version "01" with fields after its flags that hold a character other than visible ASCII \(U\+0021 to U\+007E\)/,
                    ],
                ),
                [`00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`, /not of that form/],
                [`00-${TRACE_ID}-${PARENT_ID}-1`, /not of that form/],
                [` ${TP}`, /not of that form \(uppercase hex and spaces/],
                [`${TP} `, /not of that form/],
                [`00_${TRACE_ID}_${PARENT_ID}_01`, /not of that form/],
                ["", /not of that form/],
                [42, /is number, not a string/],
                [null, /is null, not a string/],
            ];
            for (const [value, pattern] of cases) {
                const problem = traceparentProblem(value);
                assert.ok(problem !== undefined, `${String(value)} is refused`);
                assert.match(problem, pattern, String(value));
                assert.match(
                    problem,
                    /a W3C traceparent is <version>-<trace id>-<parent id>-<flags>: "00", 32 and 16 lowercase hex digits/,
                    "the allowed form is named",
                );
                assert.equal(parseTraceparent(value), undefined);
            }
        });
    });

    describe("the tracestate validator", function () {
        it("accepts list members, with spaces and tabs around commas, empty members, multi-tenant keys, 32 members and 512 characters", function () {
            const wide = Array.from({ length: 32 }, (_, i) => `k${i}=${"v".repeat(10)}`).join(",");
            for (const ok of [
                TS,
                "congo=t61rcWkgMzE",
                " a=1 ,\tb=2 ",
                "a=1,,b=2",
                "tenant@system=v",
                "0tenant@sys_tem=v",
                "a=with space inside",
                "k*/_-=!~",
                wide,
                `a=${"x".repeat(256)},b=${"y".repeat(251)}`,
            ]) {
                assert.equal(tracestateProblem(ok), undefined, ok);
            }
        });

        it("refuses every malformed input, naming the bound or the member", function () {
            const cases: [unknown, RegExp][] = [
                [Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), /33 list members; W3C allows at most 32/],
                [`a=${"x".repeat(256)},b=${"y".repeat(252)}`, /513 characters long; at most 512/],
                ["Congo=t61", /member "Congo=t61", whose key is not valid/],
                ["1abc=v", /whose key is not valid/],
                ["a=b=c", /member "a=b=c", whose value is not valid/],
                ["a=", /whose value is not valid/],
                ["novalue", /member "novalue", whose key is not valid/],
                ["a=\u00e9", /whose value is not valid/],
                [`a=${"x".repeat(257)}`, /whose value is not valid/],
                ["a=1,a=2", /the key "a" twice/],
                ["", /holds no list member; omit it/],
                [" , ", /holds no list member/],
                [7, /is number, not a string/],
            ];
            for (const [value, pattern] of cases) {
                const problem = tracestateProblem(value);
                assert.ok(problem !== undefined, `${String(value)} is refused`);
                assert.match(problem, pattern, String(value));
            }
        });

        it("a delivered trace context drops a traceparent that is not W3C with its tracestate, and a bad tracestate alone", function () {
            assert.deepEqual(deliveredTraceContext(TP, TS), { traceparent: TP, tracestate: TS });
            assert.deepEqual(deliveredTraceContext(TP, "Bad=1"), { traceparent: TP });
            assert.equal(deliveredTraceContext("nope", TS), undefined);
            assert.equal(deliveredTraceContext(undefined, TS), undefined);
        });
    });

    describe("the writer", function () {
        it("refuses a traceparent or tracestate that is not W3C, naming the message, the value, the form and the fix", function () {
            const writer = writerWith({ traceContext: "none" });
            refuses(
                () => writer.check({ messages: [message(), message({ id: "evt-2", traceparent: TP.toUpperCase() })] }),
                /^messages\[1\]\.traceparent \(message id "evt-2"\) is "00-4BF92F[^"]*", which is not of that form .*; a W3C traceparent is <version>-<trace id>-<parent id>-<flags>: .*; pass the incoming request's traceparent as it came, or omit it$/,
                { messageId: "evt-2", messageIndex: 1, field: "traceparent" },
            );
            refuses(
                () => writer.check({ messages: [message({ traceparent: `00-${"0".repeat(32)}-${PARENT_ID}-01` })] }),
                /messages\[0\]\.traceparent .* all-zero trace id/,
            );
            refuses(
                () => writer.check({ messages: [message({ traceparent: TP, tracestate: "a=1,a=2" })] }),
                /messages\[0\]\.tracestate .* has the key "a" twice.*; pass the incoming request's tracestate as it came, or omit it/,
                { field: "tracestate" },
            );
            refuses(
                () => writer.check({ messages: [message({ traceparent: TP, tracestate: "" })] }),
                /messages\[0\]\.tracestate .* holds no list member; omit it/,
            );
            refuses(
                () => writer.check({ messages: [message({ tracestate: TS })] }),
                /messages\[0\]\.tracestate is given without a traceparent; .* pass both, or neither/,
            );
            refuses(
                () => writer.check({ messages: [message({ traceparent: 1 as unknown as string })] }),
                /messages\[0\]\.traceparent .* is number, not a string/,
            );
        });

        it("refuses traceparent and tracestate as header names, in any case: they are the message's own fields", function () {
            for (const name of ["traceparent", "TraceParent", "tracestate", "TRACESTATE"]) {
                assert.match(
                    headerNameProblem(name)!,
                    new RegExp(
                        `is the W3C trace context, which the outbox carries itself: pass it as the message's ${name.toLowerCase()} field`,
                    ),
                );
                refuses(
                    () => writerWith().check({ messages: [message({ headers: { [name]: TP } })] }),
                    new RegExp(`messages\\[0\\]\\.headers name "${name}" is the W3C trace context`),
                );
            }
            assert.equal(
                headerNameProblem("traceparent-copy"),
                undefined,
                "only the exact names are the trace context",
            );
        });

        it("refuses, up front, a message whose headers and the outbox's own attributes would exceed SNS's 10, naming the count and the fix", function () {
            const writer = writerWith({ traceContext: "none" });
            // outbox.source takes one of the 10 (issue 33): 7 headers, 6 with a traceparent, 5 with a tracestate too.
            writer.check({ messages: [message({ headers: headers(7) })] });
            writer.check({ messages: [message({ headers: headers(6), traceparent: TP })] });
            writer.check({ messages: [message({ headers: headers(5), traceparent: TP, tracestate: TS })] });
            refuses(
                () => writer.check({ messages: [message({ id: "evt-9", headers: headers(7), traceparent: TP })] }),
                /^messages\[0\]\.headers has 7 entries; at most 6 fit: the message \(id "evt-9"\) would carry 11 message attributes, 4 of them the outbox's \(outbox\.id, outbox\.type, outbox\.source, traceparent\), and SNS carries at most 10 \(raw delivery to SQS drops a message with more\); move 1 into the payload, or drop the trace context$/,
                { messageId: "evt-9", attributes: 11, headers: 7, maxHeaders: 6 },
            );
            refuses(
                () => writer.check({ messages: [message({ headers: headers(6), traceparent: TP, tracestate: TS })] }),
                /has 6 entries; at most 5 fit: .* 11 message attributes, 5 of them the outbox's \(outbox\.id, outbox\.type, outbox\.source, traceparent, tracestate\).*; move 1 into the payload, or drop the tracestate \(or the trace context\)$/,
                { attributes: 11, maxHeaders: 5 },
            );
            refuses(
                () => writer.check({ messages: [message({ headers: headers(8) })] }),
                /^messages\[0\]\.headers has 8 entries; at most 7 fit \(SNS carries 10 message attributes, 3 are the outbox's, outbox\.id, outbox\.type, outbox\.source, and a trace context takes 1 or 2 more\); move the rest into the payload$/,
            );
        });

        it("stores the trace context as the record's traceparent and tracestate envelope headers, next to the user headers", async function () {
            const [first, second, third] = await storedHeaders(writerWith({ traceContext: "none" }), [
                message({ headers: { tenant: "acme" }, traceparent: TP, tracestate: TS }),
                message({ traceparent: TP }),
                message(),
            ]);
            assert.deepEqual(first, { tenant: "acme", traceparent: TP, tracestate: TS });
            assert.deepEqual(second, { traceparent: TP });
            assert.deepEqual(third, {});
        });

        it("refuses a traceContext setting other than active or none", function () {
            assert.throws(
                () => writerWith({ traceContext: "on" as never }),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    /traceContext must be "active" .* or "none", got "on"; omit it for "active"/.test(err.message),
            );
        });
    });

    describe("what travels: the published attributes, the DLQ message and its redrive", function () {
        const base: OutboundMessage = {
            id: "evt-1",
            type: "OrderCreated",
            partition: "ORDER#1",
            body: '{"orderId":1}',
            headers: { tenant: "acme" },
            traceparent: TP,
            tracestate: TS,
            createdAt: Date.UTC(2026, 0, 1),
            expiresAt: 0,
        };

        it("reads a stored record's trace headers back, and sends them as String attributes named traceparent and tracestate", async function () {
            const prepared = await writerWith({ traceContext: "none" }).prepare({
                messages: [message({ headers: { tenant: "acme" }, traceparent: TP, tracestate: TS })],
            });
            const outbound = outboundMessage(unmarshalRecord(prepared.input.TransactItems![0]!.Put!.Item!));
            assert.deepEqual(outbound.headers, { tenant: "acme" }, "the trace context is not a user header");
            assert.equal(outbound.traceparent, TP);
            assert.equal(outbound.tracestate, TS);
            assert.deepEqual(messageAttributes(outbound), {
                "outbox.id": { DataType: "String", StringValue: outbound.id },
                "outbox.type": { DataType: "String", StringValue: "OrderCreated" },
                traceparent: { DataType: "String", StringValue: TP },
                tracestate: { DataType: "String", StringValue: TS },
                tenant: { DataType: "String", StringValue: "acme" },
            });
        });

        it("takes GoBridge's traceparent/tracestate envelope headers as they are stored, and drops a tracestate with no traceparent", function () {
            assert.deepEqual(traceHeaders({ traceparent: "whatever GoBridge stored", "x-bridge.ordering-key": "k" }), {
                traceparent: "whatever GoBridge stored",
            });
            assert.deepEqual(traceHeaders({ tracestate: TS }), {});
            assert.deepEqual(traceHeaders({ traceparent: 7, tracestate: TS }), {});
            assert.deepEqual(
                userHeaders({ traceparent: TP, tracestate: TS, TraceParent: "legacy", tenant: "acme" }),
                { TraceParent: "legacy", tenant: "acme" },
                "only the exact names are the trace context",
            );
        });

        it("keeps the trace context in the DLQ message, body and attributes, and the redrive writes it again", function () {
            const dl = deadLetterMessage(base, { reason: "publish-rejected", at: Date.UTC(2026, 0, 2) });
            const body = JSON.parse(dl.body) as Record<string, unknown>;
            assert.equal(body.traceparent, TP);
            assert.equal(body.tracestate, TS);
            assert.deepEqual(body.headers, { tenant: "acme" });
            assert.deepEqual(dl.attributes.traceparent, { DataType: "String", StringValue: TP });
            assert.deepEqual(dl.attributes.tracestate, { DataType: "String", StringValue: TS });
            const parsed = parseDeadLetter(dl.body);
            assert.ok(!("problem" in parsed));
            assert.equal(parsed.traceparent, TP);
            assert.equal(parsed.tracestate, TS);
            const plain = deadLetterMessage(
                { ...base, traceparent: undefined, tracestate: undefined },
                { reason: "expired", at: 0 },
            );
            assert.ok(
                !("traceparent" in JSON.parse(plain.body)) && !("traceparent" in plain.attributes),
                "no trace context, no field",
            );
        });
    });

    describe("a later version whose further fields hold NUL or U+FFFF (issue 38)", function () {
        const future = [`01-${TRACE_ID}-${PARENT_ID}-01-a\u0000b`, `cc-${TRACE_ID}-${PARENT_ID}-01-\uffff`];
        it("is refused by the writer, naming the field and the rule, before any I/O", function () {
            for (const traceparent of future)
                refuses(
                    () => writerWith().check({ messages: [message({ traceparent })] }),
                    /messages\[0\]\.traceparent \(message id "[^"]+"\) is version "(01|cc)" with fields after its flags that hold a character other than visible ASCII/,
                    { field: "traceparent" },
                );
        });
        it("is refused by redrive's check (the writer's) when another writer's record carried it to the DLQ, and dropped by a receiver", function () {
            for (const traceparent of future) {
                const dl = deadLetterMessage(
                    {
                        id: "id-1",
                        type: "OrderCreated",
                        partition: "ORDER#1",
                        body: '{"orderId":1}',
                        headers: {},
                        traceparent,
                        createdAt: 0,
                        expiresAt: 0,
                    },
                    { reason: "publish-rejected", at: 0 },
                );
                const parsed = parseDeadLetter(dl.body);
                assert.ok(!("problem" in parsed));
                assert.equal(parsed.traceparent, traceparent, "the DLQ body keeps it exactly");
                refuses(
                    () =>
                        writerWith().check({
                            messages: [{ partition: parsed.partition, type: parsed.type, payload: 1, traceparent }],
                        }),
                    /fields after its flags that hold a character other than visible ASCII/,
                );
                assert.equal(deliveredTraceContext(traceparent, undefined), undefined);
            }
        });
    });

    describe("the inbox's delivery formats hand the trace context on", function () {
        const raw = (attributes: Record<string, string>): LambdaSqsRecord => ({
            messageId: "m1",
            body: '{"orderId":1}',
            messageAttributes: Object.fromEntries(
                Object.entries({ "outbox.id": "evt-1", "outbox.type": "OrderCreated", ...attributes }).map(([k, v]) => [
                    k,
                    { dataType: "String", stringValue: v },
                ]),
            ),
        });
        const enveloped = (attributes: Record<string, string>): LambdaSqsRecord => ({
            messageId: "m2",
            body: JSON.stringify({
                Type: "Notification",
                MessageId: "sns-1",
                TopicArn: "arn:aws:sns:eu-west-1:111111111111:orders",
                Message: '{"orderId":1}',
                MessageAttributes: Object.fromEntries(
                    Object.entries({ "outbox.id": "evt-1", "outbox.type": "OrderCreated", ...attributes }).map(
                        ([k, v]) => [k, { Type: "String", Value: v }],
                    ),
                ),
            }),
        });

        it("raw delivery and SNS's envelope: traceparent and tracestate, not among the headers", function () {
            for (const [format, record] of [
                [MESSAGE_ATTRIBUTES_DELIVERY, raw],
                [SNS_ENVELOPE_DELIVERY, enveloped],
            ] as const) {
                const delivered = format.parse(record({ traceparent: TP, tracestate: TS, tenant: "acme" }))!;
                assert.equal(delivered.traceparent, TP, format.name);
                assert.equal(delivered.tracestate, TS, format.name);
                assert.deepEqual(delivered.headers, { tenant: "acme" }, format.name);
                const none = format.parse(record({}))!;
                assert.ok(
                    !("traceparent" in none) && !("tracestate" in none),
                    `${format.name}: none carried, none handed on`,
                );
                const bad = format.parse(record({ traceparent: "00-not-a-trace", tracestate: TS }))!;
                assert.ok(
                    !("traceparent" in bad) && !("tracestate" in bad),
                    `${format.name}: a traceparent that is not W3C is dropped, with its tracestate`,
                );
            }
        });
    });

    describe("OpenTelemetry (the optional peer @opentelemetry/api, with the SDK's in-memory exporter)", function () {
        const exporter = new InMemorySpanExporter();
        const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
        const tracer = provider.getTracer("trace-context.test");
        const contextManager = new AsyncLocalStorageContextManager();
        const warnings: string[] = [];
        const logger: Logger = {
            debug: () => undefined,
            info: () => undefined,
            warn: (m) => void warnings.push(m),
            error: () => undefined,
        };

        before(() =>
            assert.ok(
                context.setGlobalContextManager(contextManager.enable()),
                "no other context manager is registered",
            ),
        );
        after(() => context.disable());
        beforeEach(() => {
            warnings.length = 0;
            exporter.reset();
        });

        /** Run `fn` inside an active span whose parent carries a trace state; returns the span's traceparent too. */
        async function inSpan<T>(fn: () => Promise<T>): Promise<{ result: T; traceparent: string; traceId: string }> {
            const parent = trace.setSpanContext(ROOT_CONTEXT, {
                traceId: TRACE_ID,
                spanId: PARENT_ID,
                traceFlags: 1,
                isRemote: true,
                traceState: createTraceState(TS),
            });
            const span = tracer.startSpan("write order", {}, parent);
            try {
                const result = await context.with(trace.setSpan(parent, span), fn);
                return {
                    result,
                    traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`,
                    traceId: span.spanContext().traceId,
                };
            } finally {
                span.end();
            }
        }

        it("loads the installed @opentelemetry/api, and reads no context when no span is active", function () {
            const api = loadOpenTelemetryApi();
            assert.ok(api !== undefined);
            assert.equal(activeTraceContext(api), undefined);
        });

        it("a message without a traceparent carries the active span's, with its tracestate; its own wins; traceContext none reads none", async function () {
            const writer = writerWith({ logger });
            const { result, traceparent, traceId } = await inSpan(() =>
                storedHeaders(writer, [message(), message({ traceparent: TP })]),
            );
            assert.equal(traceId, TRACE_ID, "the span continues the parent's trace");
            assert.deepEqual(result[0], { traceparent, tracestate: TS });
            assert.deepEqual(
                result[1],
                { traceparent: TP },
                "the message's own traceparent, and no tracestate it did not give",
            );
            const off = await inSpan(() => storedHeaders(writerWith({ traceContext: "none" }), [message()]));
            assert.deepEqual(off.result[0], {});
            assert.deepEqual(await storedHeaders(writer, [message()]), [{}], "outside a span: none");
            assert.deepEqual(warnings, []);
        });

        it("leaves out what the headers leave no room for, with a warning, instead of failing the write", async function () {
            const writer = writerWith({ logger });
            const { result, traceparent } = await inSpan(() =>
                storedHeaders(writer, [message({ headers: headers(6) }), message({ id: "full", headers: headers(7) })]),
            );
            assert.deepEqual(result[0], { ...headers(6), traceparent }, "room for the traceparent only");
            assert.deepEqual(result[1], headers(7), "no room at all");
            assert.equal(warnings.length, 2);
            assert.match(
                warnings[0]!,
                /messages\[0\] .* has 6 headers, which leave 1 of SNS's 10 message attributes for the active trace context; it carries the traceparent without the tracestate; use at most 5 headers to carry it/,
            );
            assert.match(
                warnings[1]!,
                /messages\[1\] \(id "full"\) has 7 headers, which leave 0 .*; it carries no trace context/,
            );
        });

        it("builds a span link to the writer's span from what the consumer got, with the trace state", function () {
            const link: Link | undefined = traceLink({ traceparent: TP, tracestate: TS });
            assert.ok(link !== undefined);
            assert.deepEqual(
                { ...link.context, traceState: link.context.traceState?.serialize() },
                { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1, isRemote: true, traceState: TS },
            );
            assert.equal(traceLink({ traceparent: "nope" }), undefined);
            assert.equal(traceLink({}), undefined);
            assert.ok(
                !("traceState" in traceLink({ traceparent: TP }, undefined)!.context),
                "without the API: no trace state object",
            );
        });

        it("is optional: a missing peer is no OpenTelemetry; a broken or foreign install is INVALID_CONFIG", function () {
            const missing = (name: string) => () => {
                throw Object.assign(new Error(`Cannot find module '${name}'\nRequire stack:\n- x.js`), {
                    code: "MODULE_NOT_FOUND",
                });
            };
            assert.equal(loadOpenTelemetryApi(missing("@opentelemetry/api")), undefined);
            assert.throws(
                () => loadOpenTelemetryApi(missing("./build/src/index.js")),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    /@opentelemetry\/api is installed but could not be loaded \(Cannot find module '\.\/build\/src\/index\.js'\); reinstall it/.test(
                        err.message,
                    ),
            );
            assert.throws(
                () => loadOpenTelemetryApi(() => ({ trace: {} })),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && /is not the 1\.x API/.test(err.message),
            );
        });
    });
});
