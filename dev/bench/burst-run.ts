/**
 * One measured burst of `npm run bench:burst`: the demo's burst (`npm start -- --count N --rate 0 --keys K`) with
 * every stage of the stream path timed from outside the code under test.
 *
 * - The producer writes `messages` orders as fast as DynamoDB Local takes them, 16 in flight, a customer's orders
 *   one after another (as the demo writes them); keyless orders each have their own partition.
 * - The local event source mapping (one shard, batch size 100, `parallelizationFactor` 1, the bench's settings)
 *   invokes the publisher, and the sweeper runs every 2 s with `sweepAfterSeconds` 5, as in the demo, each with
 *   clients of its own, so every destination acknowledgement is known to be the publisher's or the sweeper's.
 *
 * Each record's latency (write start → its first acknowledgement by the destination) is cut into four stages:
 * the write (start → the writer's answer), the wait for the stream (→ the mapping's `GetRecords` answer that
 * held it), the wait in the mapping's buffer (→ the invocation that holds it starts) and the relay (→ the
 * acknowledgement). A record acknowledged before a stage was reached (a keyed record its partition's claim
 * delivered ahead of its own doorbell, or one the sweeper took) skips the stages after it.
 *
 * The publisher's time is cut by what it waited on: every call of its clients is timed and classed (claims: the
 * ClaimIndex and backlog queries and the claim transactions; completions; releases; the status read; the
 * destination's batch calls, one per round; id look-ups), and each moment of an invocation is shared equally
 * between the classes with a call in flight then, or counted as `none` (the publisher's own code, or a wait for
 * the event loop) when no call was. The mapping's own time is cut the same way: in the handler, in stream calls,
 * or neither (its poll pause and code). CPU comes from `/proc`: DynamoDB Local's, this process's, the load's and
 * the machine's, with the event loop's delay in this process.
 *
 * @packageDocumentation
 */
import { performance, monitorEventLoopDelay } from "node:perf_hooks";
import * as os from "node:os";
import { SNSClient } from "@aws-sdk/client-sns";
import type { AwsFaultServer } from "../emulators/aws-fault-server";
import { LOCAL_CREDENTIALS, LOCAL_REGION, localDynamoDbClient } from "../emulators/dynamodb-local";
import { startLocalEventSourceMapping } from "../../runtime/testing/event-source-mapping";
import type { LambdaStreamEvent } from "../../runtime/testing/stream-event";
import { silentLogger } from "../../runtime/ports";
import { createPublisher } from "../../runtime/relay/publisher";
import { createSweeper } from "../../runtime/relay/sweeper";
import { ATTR, RECORD_ID_INDEX } from "../../runtime/schema";
import { OutboxWriter } from "../../runtime/writer/writer";
import { demoOrder, orderWriteRequest, type OrderPlan } from "../demo/demo-orders";
import type { CpuLoad } from "./cpu-load";
import { instrumentClient, newTally } from "./instrument";
import { machineCpuMs, processCpuMs } from "./process-cpu";
import { localRelayClients } from "./relay-clients";
import { acknowledgedIds, MAPPING_SETTINGS } from "./relay-run";
import { percentile, round } from "./stats";
import { waitForCount } from "./wait-for-count";

/** How often the sweeper runs, as in the demo (`npm start`); the component schedules it every minute. */
export const BURST_SWEEP_INTERVAL_MS = 2000;

/** The classes of the publisher's calls, in the order they are reported. */
export const CALL_CLASSES = [
    "claim",
    "statusRead",
    "destination",
    "completion",
    "release",
    "idLookup",
    "other",
] as const;

/** One class of {@link CALL_CLASSES}. */
export type CallClass = (typeof CALL_CLASSES)[number];

/** Options of {@link runBurst}. */
export interface BurstRunOptions {
    /** DynamoDB endpoint (a fresh DynamoDB Local). */
    readonly endpoint: string;
    /** DynamoDB Local's process id, for its CPU time. @default not measured */
    readonly emulatorPid?: number;
    /** The local SNS. */
    readonly sns: AwsFaultServer;
    /** Orders to write. */
    readonly messages: number;
    /** Ordering keys (customers, one partition each); 0 writes keyless orders. */
    readonly keys: number;
    /** The sweeper's `sweepAfterSeconds`. */
    readonly sweepAfterSeconds: number;
    /** Table and topic name suffix, unique per run. */
    readonly runId: string;
    /** The CPU load running beside the burst, for its CPU time. @default none */
    readonly load?: CpuLoad;
}

/** A stage's median and mean over the records, ms (the means add up to the mean latency). */
export interface StageFigures {
    readonly p50: number;
    readonly mean: number;
}

/** What one burst measured. */
export interface BurstRunResult {
    readonly messages: number;
    readonly keys: number;
    /** Orders written per second (first write start → last write answer). */
    readonly writesPerSec: number;
    /** Messages per second, first write start → last acknowledgement. */
    readonly msgsPerSec: number;
    /** Write start → first acknowledgement, ms. */
    readonly p50LatencyMs: number;
    readonly p99LatencyMs: number;
    /** The latency's stages (see the module's comment). */
    readonly stagesMs: {
        readonly write: StageFigures;
        readonly waitForStream: StageFigures;
        readonly waitInBuffer: StageFigures;
        readonly relay: StageFigures;
    };
    /** The 99th percentile of write answer → the mapping's `GetRecords` answer, over the records the mapping read before any acknowledgement. */
    readonly p99StreamLagMs: number;
    /** The sweeper's share. */
    readonly sweeper: {
        readonly runs: number;
        /** Records whose first acknowledgement was the sweeper's. */
        readonly published: number;
        /** Of those, how far the stream path had taken each when the sweeper published it. */
        readonly notYetRead: number;
        readonly inBuffer: number;
        readonly inInvocation: number;
        /** Median age (write start → the sweeper's acknowledgement) of the records it published, ms. */
        readonly p50AgeMs: number;
    };
    /** Records acknowledged more than once (the publisher and the sweeper both, or a redelivery). */
    readonly duplicates: number;
    /** The publisher (the stream path). */
    readonly publisher: {
        readonly invocations: number;
        readonly failedInvocations: number;
        /** Mean records per invocation. */
        readonly recordsPerInvocation: number;
        /** Mean invocation time, ms. */
        readonly msPerInvocation: number;
        /** Share of the invocations' time by what was in flight (each moment split equally between classes in flight; `none`: no call). */
        readonly timeShare: Record<CallClass | "none", number>;
        /** Calls per message, by class. */
        readonly callsPerMessage: Record<CallClass, number>;
        /** Mean ms per call, by class (wall time from send to answer). */
        readonly msPerCall: Record<CallClass, number>;
        /** Calls per message by class and command, e.g. `{ "claim:GetItem": 0.3 }`. */
        readonly callsPerMessageByCommand: Record<string, number>;
    };
    /** The local mapping's time over the burst (first write → last acknowledgement), shares. */
    readonly mapping: { readonly inHandler: number; readonly inStreamCalls: number; readonly other: number };
    /** CPU during the burst (first write → last acknowledgement). */
    readonly cpu: {
        /** DynamoDB Local's CPU ms per message (absent where /proc cannot be read). */
        readonly emulatorMsPerMessage: number | undefined;
        /** This process's (the writer, the mapping, the publisher, the sweeper, the local SNS) CPU ms per message. */
        readonly benchMsPerMessage: number;
        /** The load's CPU ms per message (0 without one). */
        readonly loadMsPerMessage: number | undefined;
        /** The machine's busy share of all its cores, 0 to 1. */
        readonly machineBusy: number | undefined;
        /** DynamoDB Local's CPU as a share of one core's time. */
        readonly emulatorCores: number | undefined;
        /** This process's event loop delay, ms: median and 99th percentile. */
        readonly eventLoopDelayP50Ms: number;
        readonly eventLoopDelayP99Ms: number;
    };
    /** The 1-minute load average at the burst's start and end. */
    readonly loadAverage: { readonly start: number; readonly end: number };
}

/** The class of one call of the publisher's clients, from its command and input. */
export function callClass(command: string, input: Record<string, unknown>): CallClass {
    switch (command) {
        case "PublishBatchCommand":
        case "SendMessageBatchCommand":
        case "PutEventsCommand":
            return "destination";
        case "BatchGetItemCommand":
            return "statusRead";
        // A claim: the fence's read (GetItem) and raise (UpdateItem), the ClaimIndex and backlog queries, the
        // claim transaction.
        case "TransactWriteItemsCommand":
        case "GetItemCommand":
            return "claim";
        case "QueryCommand":
            return input.IndexName === RECORD_ID_INDEX.indexName ? "idLookup" : "claim";
        case "UpdateItemCommand": {
            const values = JSON.stringify(input.ExpressionAttributeValues ?? {});
            if (values.includes('"completed"')) return "completion";
            if (values.includes('"pending"')) return "release";
            if (JSON.stringify(input.ExpressionAttributeNames ?? {}).includes(`"${ATTR.maxClaimVersion}"`))
                return "claim";
            return "other";
        }
        default:
            return "other";
    }
}

/** A call in flight, or an invocation: from `start` to `end` (performance.now(), ms). */
interface Span {
    readonly start: number;
    end: number;
    readonly cls: CallClass;
    /** The command, without `Command`. @default "" */
    readonly command?: string;
}

/**
 * Share `windows`' time between the classes of `spans` in flight at each moment, equally, or `none` when none is.
 * Returns ms per class.
 */
export function shareTime(
    windows: readonly { start: number; end: number }[],
    spans: readonly Span[],
): Record<CallClass | "none", number> {
    const out = Object.fromEntries([...CALL_CLASSES, "none"].map((c) => [c, 0])) as Record<CallClass | "none", number>;
    for (const w of windows) {
        const inside = spans.filter((s) => s.end > w.start && s.start < w.end);
        const cuts = [
            ...new Set(
                [w.start, w.end, ...inside.flatMap((s) => [s.start, s.end])].filter((t) => t >= w.start && t <= w.end),
            ),
        ].sort((a, b) => a - b);
        for (let i = 0; i + 1 < cuts.length; i += 1) {
            const from = cuts[i]!;
            const to = cuts[i + 1]!;
            const classes = new Set(inside.filter((s) => s.start <= from && s.end >= to).map((s) => s.cls));
            if (classes.size === 0) out.none += to - from;
            else for (const c of classes) out[c] += (to - from) / classes.size;
        }
    }
    return out;
}

/** Count every call of an AWS SDK v3 client into `spans`, classed, and time it. */
function timeCalls(
    client: object,
    spans: Span[],
    classOf: (command: string, input: Record<string, unknown>) => CallClass,
) {
    (
        client as {
            middlewareStack: { add(m: unknown, o: { step: "initialize"; name: string; override?: boolean }): void };
        }
    ).middlewareStack.add(
        (next: (args: { input: Record<string, unknown> }) => Promise<unknown>, context: { commandName?: string }) =>
            async (args: { input: Record<string, unknown> }) => {
                const span: Span = {
                    start: performance.now(),
                    end: Number.NaN,
                    cls: classOf(context.commandName ?? "", args.input),
                    command: (context.commandName ?? "").replace(/Command$/, ""),
                };
                spans.push(span);
                try {
                    return await next(args);
                } finally {
                    span.end = performance.now();
                }
            },
        { step: "initialize", name: "benchBurstTimer", override: true },
    );
}

function stage(values: readonly number[]): StageFigures {
    const mean = values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
    return { p50: round(percentile(values, 50), 1), mean: round(mean, 1) };
}

/** Run one burst and measure it. */
export async function runBurst(options: BurstRunOptions): Promise<BurstRunResult> {
    const tableName = `burst-${options.runId}`;
    const clients = await localRelayClients({
        kind: "ours",
        endpoint: options.endpoint,
        sns: options.sns,
        tableName,
        topicName: `burst-${options.runId}`,
        queueName: `burst-dlq-${options.runId}`,
    });
    const { setup, writer: writerClient, relay: relayClient, streams, sns, sqs, topicArn, dlqUrl } = clients;
    const sweeperDynamo = localDynamoDbClient(options.endpoint);
    const sweeperSns = new SNSClient({
        endpoint: options.sns.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
    });
    const writtenFrom = new Map<string, number>();
    const writtenAt = new Map<string, number>();
    const readAt = new Map<string, number>();
    const invokedAt = new Map<string, number>();
    const ackAt = new Map<string, { at: number; by: "publisher" | "sweeper" }>();
    let duplicates = 0;
    const acknowledge =
        (by: "publisher" | "sweeper") =>
        (command: string, input: Record<string, unknown>, output: Record<string, unknown>) => {
            const now = performance.now();
            for (const id of acknowledgedIds(command, input, output)) {
                if (ackAt.has(id)) duplicates += 1;
                else ackAt.set(id, { at: now, by });
            }
        };
    instrumentClient(sns, newTally(), { onSuccess: acknowledge("publisher") });
    instrumentClient(sweeperSns, newTally(), { onSuccess: acknowledge("sweeper") });
    const publisherSpans: Span[] = [];
    timeCalls(relayClient, publisherSpans, callClass);
    timeCalls(sns, publisherSpans, callClass);
    const streamSpans: Span[] = [];
    timeCalls(streams, streamSpans, () => "other");
    instrumentClient(streams, newTally(), {
        onSuccess: (command, _input, output) => {
            if (command !== "GetRecordsCommand") return;
            const now = performance.now();
            for (const r of (output.Records ?? []) as { dynamodb?: { NewImage?: Record<string, { S?: string }> } }[]) {
                const id = r.dynamodb?.NewImage?.[ATTR.recordId]?.S;
                if (id !== undefined && !readAt.has(id)) readAt.set(id, now);
            }
        },
    });
    const config = { sns, sqs, tableName, topicArn, dlqUrl, logger: silentLogger, writeMetrics: () => undefined };
    const publisher = createPublisher({ ...config, dynamodb: relayClient });
    const sweeper = createSweeper({
        ...config,
        dynamodb: sweeperDynamo,
        sns: sweeperSns,
        sweepAfterSeconds: options.sweepAfterSeconds,
    });
    const invocations: Span[] = [];
    let failedInvocations = 0;
    let recordsInvoked = 0;
    const mapping = await startLocalEventSourceMapping({
        streamsClient: streams,
        dynamodbClient: setup,
        tableName,
        handler: async (event: LambdaStreamEvent, context) => {
            const span: Span = { start: performance.now(), end: Number.NaN, cls: "other" };
            invocations.push(span);
            recordsInvoked += event.Records.length;
            for (const r of event.Records) {
                const id = (r.dynamodb.NewImage as Record<string, { S?: string }> | undefined)?.[ATTR.recordId]?.S;
                if (id !== undefined && !invokedAt.has(id)) invokedAt.set(id, span.start);
            }
            try {
                const answer = await publisher(event, context);
                if (answer.batchItemFailures.length > 0) failedInvocations += 1;
                return answer;
            } finally {
                span.end = performance.now();
            }
        },
        ...MAPPING_SETTINGS,
    });
    let sweeping = true;
    let sweeps = 0;
    let sweepError: unknown;
    const sweepLoop = (async () => {
        while (sweeping) {
            await new Promise((resolve) => setTimeout(resolve, BURST_SWEEP_INTERVAL_MS));
            if (!sweeping) return;
            try {
                await sweeper();
                sweeps += 1;
            } catch (err) {
                // A sweep that throws would be retried by its schedule on AWS; here it fails the run, loudly.
                sweepError = err;
                sweeping = false;
            }
        }
    })();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    try {
        const plan: OrderPlan = {
            tableName,
            runId: `${options.runId}-`,
            ...(options.keys > 0 ? { keys: options.keys } : {}),
        };
        const writer = new OutboxWriter({ client: writerClient, tableName });
        const loadAtStart = os.loadavg()[0]!;
        const emulatorCpuAtStart = processCpuMs(options.emulatorPid);
        const loadCpuAtStart = options.load === undefined ? 0 : options.load.cpuMs();
        const machineAtStart = machineCpuMs();
        const benchCpuAtStart = process.cpuUsage();
        loop.enable();
        const firstWrite = performance.now();
        let next = 0;
        const customerWrites = new Map<string, Promise<unknown>>();
        const worker = async (): Promise<void> => {
            while (next < options.messages) {
                const order = demoOrder(next, plan);
                next += 1;
                const previous = options.keys > 0 ? customerWrites.get(order.customer) : undefined;
                const write = (async () => {
                    if (previous !== undefined) await previous.catch(() => undefined);
                    writtenFrom.set(order.id, performance.now());
                    await writer.write(orderWriteRequest(order, plan, Date.now()));
                    writtenAt.set(order.id, performance.now());
                })();
                if (options.keys > 0) customerWrites.set(order.customer, write);
                await write;
            }
        };
        await Promise.all(Array.from({ length: 16 }, () => worker()));
        const lastWrite = performance.now();
        await waitForCount(
            () => {
                if (sweepError !== undefined) throw sweepError;
                return ackAt.size;
            },
            options.messages,
            `bench:burst ${options.keys > 0 ? "keyed" : "keyless"}: acknowledged`,
        );
        const lastAck = Math.max(...[...ackAt.values()].map((a) => a.at));
        loop.disable();
        const benchCpu = process.cpuUsage(benchCpuAtStart);
        const machineAtEnd = machineCpuMs();
        const emulatorCpuAtEnd = processCpuMs(options.emulatorPid);
        const loadCpuAtEnd = options.load === undefined ? 0 : options.load.cpuMs();
        const loadAtEnd = os.loadavg()[0]!;
        // The publisher's completions may still run after the last acknowledgement: its time is read once they end.
        await mapping.drain({ timeoutMs: 60_000 });
        const wallMs = lastAck - firstWrite;
        const n = options.messages;
        const emulatorCpu =
            emulatorCpuAtStart === undefined || emulatorCpuAtEnd === undefined
                ? undefined
                : emulatorCpuAtEnd - emulatorCpuAtStart;
        const ids = [...ackAt.keys()];
        const latency: number[] = [];
        const parts = {
            write: [] as number[],
            waitForStream: [] as number[],
            waitInBuffer: [] as number[],
            relay: [] as number[],
        };
        const lags: number[] = [];
        for (const id of ids) {
            const ack = ackAt.get(id)!.at;
            const from = writtenFrom.get(id) ?? ack;
            const written = Math.min(writtenAt.get(id) ?? ack, ack);
            const read = Math.min(readAt.get(id) ?? ack, ack);
            const invoked = Math.max(read, Math.min(invokedAt.get(id) ?? ack, ack));
            latency.push(ack - from);
            parts.write.push(written - from);
            parts.waitForStream.push(read - written);
            parts.waitInBuffer.push(invoked - read);
            parts.relay.push(ack - invoked);
            const r = readAt.get(id);
            if (r !== undefined && r <= ack) lags.push(r - written);
        }
        const swept = ids.filter((id) => ackAt.get(id)!.by === "sweeper");
        const before = (map: Map<string, number>, id: string) => (map.get(id) ?? Infinity) < ackAt.get(id)!.at;
        const byClass = (pick: (spans: Span[]) => number) =>
            Object.fromEntries(CALL_CLASSES.map((c) => [c, pick(publisherSpans.filter((s) => s.cls === c))])) as Record<
                CallClass,
                number
            >;
        const invocationMs = invocations.reduce((a, s) => a + (s.end - s.start), 0);
        const share = shareTime(invocations, publisherSpans);
        const burstWindow = [{ start: firstWrite, end: lastAck }];
        const inHandler = shareTime(
            burstWindow,
            invocations.map((s) => ({ ...s, cls: "claim" as const })),
        ).claim;
        const inStream = shareTime(
            burstWindow,
            streamSpans.map((s) => ({ ...s, cls: "claim" as const })),
        ).claim;
        return {
            messages: n,
            keys: options.keys,
            writesPerSec: round((n * 1000) / Math.max(1, lastWrite - firstWrite), 1),
            msgsPerSec: round((n * 1000) / Math.max(1, wallMs), 1),
            p50LatencyMs: round(percentile(latency, 50), 1),
            p99LatencyMs: round(percentile(latency, 99), 1),
            stagesMs: {
                write: stage(parts.write),
                waitForStream: stage(parts.waitForStream),
                waitInBuffer: stage(parts.waitInBuffer),
                relay: stage(parts.relay),
            },
            p99StreamLagMs: round(percentile(lags, 99), 1),
            sweeper: {
                runs: sweeps,
                published: swept.length,
                notYetRead: swept.filter((id) => !before(readAt, id)).length,
                inBuffer: swept.filter((id) => before(readAt, id) && !before(invokedAt, id)).length,
                inInvocation: swept.filter((id) => before(invokedAt, id)).length,
                p50AgeMs: round(
                    percentile(
                        swept.map((id) => ackAt.get(id)!.at - (writtenFrom.get(id) ?? 0)),
                        50,
                    ),
                    1,
                ),
            },
            duplicates,
            publisher: {
                invocations: invocations.length,
                failedInvocations,
                recordsPerInvocation: round(recordsInvoked / Math.max(1, invocations.length), 1),
                msPerInvocation: round(invocationMs / Math.max(1, invocations.length), 1),
                timeShare: Object.fromEntries(
                    Object.entries(share).map(([k, v]) => [k, round(v / Math.max(1, invocationMs), 3)]),
                ) as Record<CallClass | "none", number>,
                callsPerMessage: byClass((spans) => round(spans.length / n, 3)),
                callsPerMessageByCommand: Object.fromEntries(
                    [...new Set(publisherSpans.map((s) => `${s.cls}:${s.command ?? ""}`))]
                        .sort()
                        .map((k) => [
                            k,
                            round(publisherSpans.filter((s) => `${s.cls}:${s.command ?? ""}` === k).length / n, 3),
                        ]),
                ),
                msPerCall: byClass((spans) =>
                    round(spans.reduce((a, s) => a + (s.end - s.start), 0) / Math.max(1, spans.length), 1),
                ),
            },
            mapping: {
                inHandler: round(inHandler / wallMs, 3),
                inStreamCalls: round(inStream / wallMs, 3),
                other: round(Math.max(0, wallMs - inHandler - inStream) / wallMs, 3),
            },
            cpu: {
                emulatorMsPerMessage: emulatorCpu === undefined ? undefined : round(emulatorCpu / n, 2),
                benchMsPerMessage: round((benchCpu.user + benchCpu.system) / 1000 / n, 2),
                loadMsPerMessage:
                    loadCpuAtEnd === undefined || loadCpuAtStart === undefined
                        ? undefined
                        : round((loadCpuAtEnd - loadCpuAtStart) / n, 2),
                machineBusy:
                    machineAtStart === undefined || machineAtEnd === undefined
                        ? undefined
                        : round(
                              (machineAtEnd.busyMs - machineAtStart.busyMs) /
                                  Math.max(
                                      1,
                                      machineAtEnd.busyMs -
                                          machineAtStart.busyMs +
                                          machineAtEnd.idleMs -
                                          machineAtStart.idleMs,
                                  ),
                              3,
                          ),
                emulatorCores: emulatorCpu === undefined ? undefined : round(emulatorCpu / wallMs, 2),
                eventLoopDelayP50Ms: round(loop.percentile(50) / 1e6, 1),
                eventLoopDelayP99Ms: round(loop.percentile(99) / 1e6, 1),
            },
            loadAverage: { start: round(loadAtStart, 2), end: round(loadAtEnd, 2) },
        };
    } finally {
        loop.disable();
        sweeping = false;
        await sweepLoop;
        await mapping.stop();
        sweeperDynamo.destroy();
        sweeperSns.destroy();
        await clients.close();
    }
}
