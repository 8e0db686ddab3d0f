/**
 * One measured run of a relay, ours or the article's naive one, on the same DynamoDB Local and the same local
 * SNS, with the same orders: write them, relay them through the local event source mapping (same filter, batch
 * size and retry settings for both), and time each message from the start of its write to the moment SNS
 * acknowledged its publish.
 *
 * Every figure comes from the clients, not from the code under test: calls are counted and capacity read by
 * the middleware in dev/bench/instrument.ts.
 *
 * @packageDocumentation
 */
import type { AwsFaultServer } from "../emulators/aws-fault-server";
import { startLocalEventSourceMapping } from "../../runtime/testing/event-source-mapping";
import type { LambdaStreamEvent, LambdaStreamRecord } from "../../runtime/testing/stream-event";
import { MESSAGE_ATTRIBUTE } from "../../runtime/record/message";
import { silentLogger } from "../../runtime/ports";
import { createPublisher } from "../../runtime/relay/publisher";
import { ATTR } from "../../runtime/schema";
import { OutboxWriter } from "../../runtime/writer/writer";
import { demoOrder, orderWriteRequest, type OrderPlan } from "../demo/demo-orders";
import { instrumentClient, newTally, totalCalls, type CallTally } from "./instrument";
import { createNaiveRelay, naiveOrderOf, naiveWriteOrder, type NaiveCounters } from "./naive-relay";
import { localRelayClients, type RelayKind } from "./relay-clients";
import { percentile, round } from "./stats";
import { waitForCount } from "./wait-for-count";

export type { RelayKind } from "./relay-clients";

/** What one run measured. */
export interface RelayRunResult {
    /** Messages written and delivered. */
    readonly messages: number;
    /** Messages SNS acknowledged (must equal `messages`). */
    readonly delivered: number;
    /** The write pace, orders per second; 0 for a burst. */
    readonly ratePerSec: number;
    /** SNS calls (Publish or PublishBatch) per message. */
    readonly snsCallsPerMessage: number;
    /** DynamoDB calls per message, writer and relay (stream reads excluded: Lambda's poller makes those). */
    readonly ddbCallsPerMessage: number;
    /** Write capacity units per message, writer and relay, GSIs included (ReturnConsumedCapacity INDEXES). */
    readonly wcuPerMessage: number;
    /** Read capacity units per message, writer and relay. */
    readonly rcuPerMessage: number;
    /** Messages per second, first write started → last publish acknowledged. */
    readonly msgsPerSec: number;
    /** Write start → SNS acknowledgement, median, ms. */
    readonly p50LatencyMs: number;
    /** Write start → SNS acknowledgement, 99th percentile, ms. */
    readonly p99LatencyMs: number;
    /**
     * Where the latency goes, each part's 99th percentile over the messages (they do not add up): the write
     * (start → the writer's answer), the wait for the relay (the answer → the first invocation holding the record),
     * and the relay (that invocation's start → SNS acknowledgement).
     */
    readonly p99PartsMs: { readonly write: number; readonly waitForRelay: number; readonly relay: number };
    /** The details behind the per-message figures. */
    readonly detail: {
        readonly writer: CallTally;
        readonly relay: CallTally;
        readonly sns: CallTally;
    };
}

/** Options of {@link runRelay}. */
export interface RelayRunOptions {
    /** Which relay to run. */
    readonly kind: RelayKind;
    /** DynamoDB endpoint. */
    readonly endpoint: string;
    /** The local SNS (its latency is set by the caller). */
    readonly sns: AwsFaultServer;
    /** Orders to write. */
    readonly messages: number;
    /** Writes in flight. @default 16 */
    readonly concurrency?: number;
    /**
     * Orders written per second, paced; 0 writes them all as fast as DynamoDB takes them (a burst, which measures
     * the relay's throughput, while a pace below it measures the latency of the pipeline rather than a queue).
     * @default 0
     */
    readonly ratePerSec?: number;
    /** Table name suffix, unique per run. */
    readonly runId: string;
    /** Ordering keys (customers) of ours; 0 writes keyless orders (the naive relay has no keys). @default 0 */
    readonly keys?: number;
}

/** The same settings for both relays: what the Outbox component provisions. */
export const MAPPING_SETTINGS = { batchSize: 100, maximumBatchingWindowMs: 0, pollIntervalMs: 50 } as const;

/** The order id of a stream record: ours carries it as the record id, the naive relay in its sort key (`OUTBOX#<id>`). */
function orderIdOf(record: LambdaStreamRecord): string | undefined {
    const image = record.dynamodb.NewImage as Record<string, { S?: string }> | undefined;
    return image?.[ATTR.recordId]?.S ?? image?.[ATTR.sk]?.S?.replace(/^OUTBOX#/, "");
}

/** The record ids of a PutEvents call's entries that EventBridge accepted (an `EventId`, no `ErrorCode`), by position. */
function acceptedEvents(input: Record<string, unknown>, output: Record<string, unknown>): string[] {
    const results = (output.Entries ?? []) as { EventId?: string; ErrorCode?: string }[];
    return ((input.Entries ?? []) as { Detail?: string }[]).flatMap((entry, i) => {
        const result = results[i];
        if (result?.EventId === undefined || result.ErrorCode !== undefined) return [];
        try {
            const id = (JSON.parse(entry.Detail ?? "") as { outbox?: { id?: unknown } }).outbox?.id;
            return typeof id === "string" ? [id] : [];
        } catch {
            return [];
        }
    });
}

/**
 * The order ids a destination acknowledged in one successful call: ours carries the record id (the order id) as a
 * message attribute (SNS, SQS) or in the event's `detail.outbox.id` (EventBridge), the naive relay inside its JSON
 * body. An entry whose id cannot be read is left out.
 *
 * @param command - The SDK command name (`PublishBatchCommand`, `SendMessageBatchCommand`, `PutEventsCommand` or
 *   `PublishCommand`; others acknowledge nothing).
 * @param input - The call's input.
 * @param output - Its answer.
 */
export function acknowledgedIds(
    command: string,
    input: Record<string, unknown>,
    output: Record<string, unknown>,
): string[] {
    const ids: string[] = [];
    if (command === "PutEventsCommand") return acceptedEvents(input, output);
    if (command === "PublishBatchCommand" || command === "SendMessageBatchCommand") {
        const ok = new Set(((output.Successful ?? []) as { Id?: string }[]).map((s) => s.Id));
        const entries = command === "PublishBatchCommand" ? input.PublishBatchRequestEntries : input.Entries;
        for (const entry of (entries ?? []) as {
            Id?: string;
            MessageAttributes?: Record<string, { StringValue?: string }>;
        }[]) {
            const id = entry.MessageAttributes?.[MESSAGE_ATTRIBUTE.recordId]?.StringValue;
            if (ok.has(entry.Id) && id !== undefined) ids.push(id);
        }
    } else if (command === "PublishCommand") {
        let id = (input.MessageAttributes as Record<string, { StringValue?: string }> | undefined)?.[
            MESSAGE_ATTRIBUTE.recordId
        ]?.StringValue;
        if (id === undefined) {
            try {
                id = String((JSON.parse(String(input.Message)) as { id?: unknown }).id);
            } catch {
                // The naive relay's body is its own JSON; a body that is not leaves this message unacknowledged, and the run reports it stalled.
                id = undefined;
            }
        }
        if (id !== undefined) ids.push(id);
    }
    return ids;
}

/** Run one relay over `messages` orders and measure it. */
export async function runRelay(options: RelayRunOptions): Promise<RelayRunResult> {
    const tableName = `bench-${options.kind}-${options.runId}`;
    const clients = await localRelayClients({
        kind: options.kind,
        endpoint: options.endpoint,
        sns: options.sns,
        tableName,
        topicName: `bench-${options.kind}-${options.runId}`,
        queueName: `bench-dlq-${options.kind}-${options.runId}`,
    });
    const { setup, writer: writerClient, relay: relayClient, streams, sns, sqs, topicArn, dlqUrl } = clients;
    try {
        const writerTally = newTally();
        const relayTally = newTally();
        const snsTally = newTally();
        const writer = instrumentClient(writerClient, writerTally, { capacity: true });
        instrumentClient(relayClient, relayTally, { capacity: true });
        const startedAt = new Map<string, number>();
        const writtenAt = new Map<string, number>();
        const invokedAt = new Map<string, number>();
        const deliveredAt = new Map<string, number>();
        const acknowledge = (id: string | undefined): void => {
            if (id !== undefined && !deliveredAt.has(id)) deliveredAt.set(id, Date.now());
        };
        instrumentClient(sns, snsTally, {
            onSuccess: (command, input, output) => {
                for (const id of acknowledgedIds(command, input, output)) acknowledge(id);
            },
        });

        const naiveCounters: NaiveCounters = { ddbCalls: 0, snsCalls: 0, writeUnits: 0 };
        const handler =
            options.kind === "ours"
                ? createPublisher({
                      dynamodb: relayClient,
                      sns,
                      sqs,
                      tableName,
                      topicArn,
                      dlqUrl,
                      logger: silentLogger,
                      writeMetrics: () => undefined,
                  })
                : createNaiveRelay({ dynamodb: relayClient, sns, tableName, topicArn, counters: naiveCounters });
        const mapping = await startLocalEventSourceMapping({
            streamsClient: streams,
            dynamodbClient: setup,
            tableName,
            handler: (event: LambdaStreamEvent) => {
                const now = Date.now();
                for (const r of event.Records) {
                    const id = orderIdOf(r);
                    if (id !== undefined && !invokedAt.has(id)) invokedAt.set(id, now);
                }
                return (handler as (e: unknown) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>)(event);
            },
            ...MAPPING_SETTINGS,
        });
        try {
            if (options.kind === "naive" && (options.keys ?? 0) > 0)
                throw new Error("bench: the naive relay has no keyed variant; it writes keyless orders");
            const plan: OrderPlan = {
                tableName,
                runId: `${options.runId}-`,
                ...((options.keys ?? 0) > 0 ? { keys: options.keys } : {}),
            };
            const ourWriter = new OutboxWriter({ client: writer, tableName });
            let next = 0;
            const firstWrite = Date.now();
            const rate = options.ratePerSec ?? 0;
            const worker = async (): Promise<void> => {
                while (next < options.messages) {
                    const index = next;
                    const order = demoOrder(index, plan);
                    next += 1;
                    if (rate > 0) {
                        const wait = firstWrite + (index * 1000) / rate - Date.now();
                        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
                    }
                    const now = Date.now();
                    startedAt.set(order.id, now);
                    if (options.kind === "ours") await ourWriter.write(orderWriteRequest(order, plan, now));
                    else await naiveWriteOrder(writer, tableName, naiveOrderOf(order, now), naiveCounters);
                    writtenAt.set(order.id, Date.now());
                }
            };
            await Promise.all(Array.from({ length: options.concurrency ?? 16 }, () => worker()));
            await waitForCount(() => deliveredAt.size, options.messages, `bench ${options.kind}: delivered`);
            const lastDelivery = Math.max(...deliveredAt.values());
            // The relay's completion writes may still be running after the last publish: count them too.
            await mapping.drain({ timeoutMs: 30_000 });
            const latencies = [...deliveredAt.entries()].map(([id, at]) => at - (startedAt.get(id) ?? at));
            const part = (from: Map<string, number>, to: Map<string, number>): number =>
                round(
                    percentile(
                        [...deliveredAt.keys()].map((id) => (to.get(id) ?? 0) - (from.get(id) ?? 0)),
                        99,
                    ),
                    1,
                );
            const n = options.messages;
            return {
                messages: n,
                delivered: deliveredAt.size,
                ratePerSec: rate,
                snsCallsPerMessage: round(totalCalls(snsTally) / n, 3),
                ddbCallsPerMessage: round((totalCalls(writerTally) + totalCalls(relayTally)) / n, 3),
                wcuPerMessage: round((writerTally.writeUnits + relayTally.writeUnits) / n, 3),
                rcuPerMessage: round((writerTally.readUnits + relayTally.readUnits) / n, 3),
                msgsPerSec: round((n * 1000) / Math.max(1, lastDelivery - firstWrite), 1),
                p50LatencyMs: round(percentile(latencies, 50), 1),
                p99LatencyMs: round(percentile(latencies, 99), 1),
                p99PartsMs: {
                    write: part(startedAt, writtenAt),
                    waitForRelay: part(writtenAt, invokedAt),
                    relay: part(invokedAt, deliveredAt),
                },
                detail: { writer: writerTally, relay: relayTally, sns: snsTally },
            };
        } finally {
            await mapping.stop();
        }
    } finally {
        // Leave the emulator as it was found (dev/bench/run.ts still gives each run a fresh DynamoDB Local).
        await clients.close();
    }
}
