/**
 * One trace from `OutboxWriter.write` to the consumer's handler, on real parts: the writer on DynamoDB Local, the
 * table's real stream read by the local event source mapping, the real publisher publishing to fauxqs's SNS, SNS
 * delivering to SQS queues (raw delivery and SNS's envelope, standard and FIFO), the messages received with
 * ReceiveMessage and handed to `createInboxHandler` as Lambda would (tests/support/sqs-lambda.ts). Once with a
 * `traceparent` given to the writer, once with the active span of a real OpenTelemetry tracer (the SDK's
 * `TracerProvider` with an `InMemorySpanExporter`, the async-hooks context manager), whose exported spans
 * show the consumer's span linked to the writer's.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createInboxHandler, Inbox, parseTraceparent, traceLink, type InboxMessage } from "../../../runtime";
import type { Logger } from "../../../runtime/ports";
import type { OutboxMessage } from "../../../runtime/writer/writer";
import { relayedOutbox, untilDepth, type RelayedOutbox } from "../../support/runtime/relay";
import { pollUntilEmpty, type Queue } from "../../support/sqs-lambda";
import { rawAndEnveloped, fifoTopicToQueue, startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;
const TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

describe("end to end: one trace id from OutboxWriter.write to the consumer's handler (DynamoDB Local → stream → publisher → fauxqs SNS → SQS → createInboxHandler)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, consumerTable: string;
    before(async () => ({ ddb, fauxqs, consumerTable } = await startConsumerWorld("trace-consumer")));
    after(() => stopConsumerWorld(fauxqs));

    /** Write `messages` one write each, and let the real publisher publish them from the stream. */
    async function writeAndRelay(
        outbox: RelayedOutbox,
        messages: readonly OutboxMessage[],
        write: (m: OutboxMessage) => Promise<string> = async (m) =>
            (await outbox.writer.write({ messages: [m] })).messageIds[0]!,
    ): Promise<string[]> {
        const ids: string[] = [];
        try {
            for (const m of messages) ids.push(await write(m));
            await outbox.mapping.drain({ timeoutMs: 30_000 });
        } finally {
            await outbox.mapping.stop();
        }
        return ids;
    }

    /** Consume a queue to the end with an inbox consumer; what its handler was given, by outbox id. */
    async function consumeAll(
        queue: Queue,
        consumer: string,
        count: number,
        consume: (m: InboxMessage) => void = () => undefined,
    ): Promise<Map<string, InboxMessage>> {
        await untilDepth(fauxqs, queue, count);
        const seen = new Map<string, InboxMessage>();
        const handler = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer, tableName: consumerTable }),
            consume: (m) => {
                seen.set(m.outboxId, m);
                consume(m);
            },
            logger: quiet,
        });
        assert.deepEqual(await pollUntilEmpty(fauxqs.sqs, queue, handler), { invocations: 1, failures: 0 });
        assert.equal(seen.size, count);
        return seen;
    }

    it("a traceparent and tracestate given to the writer reach the consumer's handler, through raw delivery and SNS's envelope", async () => {
        const { topicArn, raw, enveloped } = await rawAndEnveloped(fauxqs, "trace-orders");
        const outbox = await relayedOutbox(ddb, fauxqs, topicArn, false, "trace", { traceContext: "none" });
        const [traced, parentOnly, untraced] = await writeAndRelay(outbox, [
            {
                partition: "ORDER#1",
                type: "OrderCreated",
                payload: { orderId: 1 },
                headers: { tenant: "acme" },
                traceparent: TRACEPARENT,
                tracestate: TRACESTATE,
            },
            {
                partition: "ORDER#2",
                type: "OrderCreated",
                payload: { orderId: 2 },
                traceparent: `00-${TRACE_ID}-b7ad6b7169203331-00`,
            },
            { partition: "ORDER#3", type: "OrderCreated", payload: { orderId: 3 } },
        ]);
        for (const [queue, format] of [
            [raw, "message-attributes"],
            [enveloped, "sns-envelope"],
        ] as const) {
            const seen = await consumeAll(queue, `trace-${format}`, 3);
            const one = seen.get(traced!)!;
            assert.equal(one.format, format);
            assert.equal(one.traceparent, TRACEPARENT, `${format}: the writer's traceparent`);
            assert.equal(
                parseTraceparent(one.traceparent)?.traceId,
                TRACE_ID,
                `${format}: one trace id from the write to the handler`,
            );
            assert.equal(one.tracestate, TRACESTATE);
            assert.deepEqual(one.headers, { tenant: "acme" }, `${format}: the trace context is not among the headers`);
            const two = seen.get(parentOnly!)!;
            assert.deepEqual([two.traceparent, two.tracestate], [`00-${TRACE_ID}-b7ad6b7169203331-00`, undefined]);
            const three = seen.get(untraced!)!;
            assert.deepEqual(
                [three.traceparent, three.tracestate],
                [undefined, undefined],
                `${format}: none written, none handed on`,
            );
        }
    });

    it("a FIFO topic and queue carry it too", async () => {
        const { topicArn, queue } = await fifoTopicToQueue(fauxqs, "trace-ledger");
        const outbox = await relayedOutbox(ddb, fauxqs, topicArn, true, "trace", { traceContext: "none" });
        const ids = await writeAndRelay(outbox, [
            {
                partition: "ACCOUNT#1",
                orderingKey: "A",
                type: "BalanceChanged",
                payload: { n: 1 },
                traceparent: TRACEPARENT,
                tracestate: TRACESTATE,
            },
            {
                partition: "ACCOUNT#1",
                orderingKey: "B",
                type: "BalanceChanged",
                payload: { n: 2 },
                traceparent: TRACEPARENT,
            },
        ]);
        const seen = await consumeAll(queue, "trace-fifo", 2);
        assert.deepEqual(
            ids.map((id) => [seen.get(id)!.groupId, seen.get(id)!.traceparent, seen.get(id)!.tracestate]),
            [
                ["A", TRACEPARENT, TRACESTATE],
                ["B", TRACEPARENT, undefined],
            ],
        );
    });

    describe("with OpenTelemetry (@opentelemetry/api, the SDK's in-memory span exporter)", () => {
        const exporter = new InMemorySpanExporter();
        const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
        const tracer = provider.getTracer("trace-context.test");
        const contextManager = new AsyncLocalStorageContextManager();

        before(() =>
            assert.ok(
                context.setGlobalContextManager(contextManager.enable()),
                "no other context manager is registered",
            ),
        );
        after(() => context.disable());

        it("the writer reads the active span's context; the consumer's span, started with traceLink, links to the writer's span, through raw delivery and SNS's envelope", async () => {
            const { topicArn, raw, enveloped } = await rawAndEnveloped(fauxqs, "trace-otel");
            const outbox = await relayedOutbox(ddb, fauxqs, topicArn, false, "trace-otel");
            // The application's request span, active while it writes: the writer is given no traceparent.
            const [id] = await writeAndRelay(
                outbox,
                [{ partition: "ORDER#7", type: "OrderCreated", payload: { orderId: 7 } }],
                (m) =>
                    tracer.startActiveSpan("POST /orders", { kind: SpanKind.SERVER }, async (span) => {
                        try {
                            return (await outbox.writer.write({ messages: [m] })).messageIds[0]!;
                        } finally {
                            span.end();
                        }
                    }),
            );
            // The SDK exports an ended span asynchronously: flushed before it is read.
            await provider.forceFlush();
            const writerSpan = exporter.getFinishedSpans().find((s) => s.name === "POST /orders")!;
            assert.ok(writerSpan !== undefined, "the writer's span was exported");

            // Each consumer processes the message in a CONSUMER span linked to the message's creation context.
            const process = (m: InboxMessage): void => {
                const link = traceLink(m);
                assert.ok(link !== undefined, "the message carries a trace context");
                assert.equal(
                    trace.getActiveSpan(),
                    undefined,
                    "the consumer runs outside the writer's span: only the message links them",
                );
                tracer
                    .startSpan(`process ${m.type}`, {
                        kind: SpanKind.CONSUMER,
                        links: [link],
                        attributes: { "messaging.message.id": m.outboxId, "test.format": m.format },
                    })
                    .end();
            };
            for (const [queue, format] of [
                [raw, "message-attributes"],
                [enveloped, "sns-envelope"],
            ] as const) {
                const seen = await consumeAll(queue, `trace-otel-${format}`, 1, process);
                assert.equal(
                    parseTraceparent(seen.get(id!)?.traceparent)?.traceId,
                    writerSpan.spanContext().traceId,
                    `${format}: the handler got the writer's trace id`,
                );
            }
            await provider.forceFlush();
            const consumerSpans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CONSUMER);
            assert.deepEqual(consumerSpans.map((s) => s.attributes["test.format"]).sort(), [
                "message-attributes",
                "sns-envelope",
            ]);
            for (const span of consumerSpans) {
                assert.equal(span.links.length, 1);
                assert.equal(
                    span.links[0]!.context.traceId,
                    writerSpan.spanContext().traceId,
                    "linked to the writer's trace",
                );
                assert.equal(
                    span.links[0]!.context.spanId,
                    writerSpan.spanContext().spanId,
                    "and to the writer's span itself",
                );
                assert.notEqual(
                    span.spanContext().traceId,
                    writerSpan.spanContext().traceId,
                    "a link, not a parent: the consumer's span starts its own trace",
                );
            }
        });
    });
});
