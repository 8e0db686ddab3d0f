/**
 * One drain run: how fast one shard of a relay empties a backlog. On AWS this is the figure that bounds a relay:
 * Lambda runs one batch per shard at a time (times `parallelizationFactor`), so the sequential round trips of a
 * batch set the ceiling, not the CPU of an emulator.
 *
 * - The backlog of `messages` orders is written first, untimed, with no added latency.
 * - Then the local event source mapping (one loop, so one shard at a time, batch size 100, `parallelizationFactor`
 *   batches of that shard at once) drains it through the relay, whose DynamoDB and SNS clients wait a fixed latency before every call, modelling a same-region network.
 * - The clock runs from the mapping's first GetRecords to the relay's last call (its last completion).
 *
 * - The keyed variant then checks per-key order: the order the destination accepted each key's records in, against
 *   the store's allocation order (dev/bench/key-order.ts).
 *
 * Ours publishes to an SNS topic by default, or to an SQS queue or an EventBridge bus (`destination`,
 * dev/bench/drain-destination.ts), each on the same fault server with the same latency added to every call of the
 * destination's client.
 *
 * Every figure comes from the clients: calls are counted by the middleware of dev/bench/instrument.ts, and the
 * sequential round trips of each invocation by dev/bench/critical-path.ts.
 *
 * @packageDocumentation
 */
import type { AwsFaultServer } from "../emulators/aws-fault-server";
import type { DestinationKind } from "../../runtime/destination/kind";
import { startLocalEventSourceMapping } from "../../runtime/testing/event-source-mapping";
import type { LambdaStreamEvent } from "../../runtime/testing/stream-event";
import { silentLogger } from "../../runtime/ports";
import { createPublisher } from "../../runtime/relay/publisher";
import { OutboxWriter } from "../../runtime/writer/writer";
import { demoOrder, orderPartition, orderWriteRequest, type OrderPlan } from "../demo/demo-orders";
import { createCriticalPathCounter } from "./critical-path";
import { drainDestination, observedEntriesPerCall } from "./drain-destination";
import { countInversions } from "./key-order";
import { instrumentClient, newTally, totalCalls } from "./instrument";
import { injectLatency } from "./latency";
import { processCpuMs } from "./process-cpu";
import { createNaiveRelay, naiveOrderOf, naiveWriteOrder, type NaiveCounters } from "./naive-relay";
import { localRelayClients, type RelayKind } from "./relay-clients";
import { acknowledgedIds, MAPPING_SETTINGS } from "./relay-run";
import { round } from "./stats";
import { STALL_TIMEOUT_MS, waitForCount } from "./wait-for-count";

/** What the records and the topic look like: keyless on a standard topic, keyless on a FIFO topic, or keyed. */
export type DrainVariant = "standard" | "fifo" | "keyed";

/** Options of {@link runDrain}. */
export interface DrainRunOptions {
    /** Which relay. The naive relay runs the `standard` variant only (it sets no message group and no key). */
    readonly kind: RelayKind;
    /** The records and topic. @default "standard" */
    readonly variant?: DrainVariant;
    /**
     * Where ours publishes: the run's SNS topic, or an SQS queue or an EventBridge bus on the same server (the
     * `standard` and `keyed` variants; the naive relay publishes to SNS only). @default "sns"
     */
    readonly destination?: DestinationKind;
    /** DynamoDB endpoint (a fresh DynamoDB Local). */
    readonly endpoint: string;
    /** The local SNS. */
    readonly sns: AwsFaultServer;
    /** Records in the backlog. */
    readonly messages: number;
    /** Latency added to every relay call, ms: each DynamoDB call, and each call of the destination's client (`sns`, whatever its kind). */
    readonly latencyMs: { readonly dynamodb: number; readonly sns: number };
    /** Ordering keys (customers) of the `keyed` variant. @default 10 */
    readonly keys?: number;
    /** Table and topic name suffix, unique per run. */
    readonly runId: string;
    /** DynamoDB Local's process id, to read the CPU time it spends during the drain. @default not measured */
    readonly emulatorPid?: number;
    /** The local mapping's batches of one shard at once. @default 1 */
    readonly parallelizationFactor?: number;
}

/** What one drain measured. */
export interface DrainRunResult {
    /** Records drained (SNS acknowledged each; must equal the backlog). */
    readonly messages: number;
    /** Records per second through one shard: first poll to last completion. */
    readonly msgsPerSec: number;
    /**
     * The mean of the invocations' critical paths (sequential round trips), over the full 100-record batches.
     * Only at `parallelizationFactor` 1: concurrent invocations share the counter, so it is `NaN` above.
     */
    readonly roundTripsPerBatch: number;
    /** The relay's SNS calls per record (0 when it publishes to another kind). */
    readonly snsCallsPerMessage: number;
    /** Where it published. */
    readonly destination: DestinationKind;
    /** The destination's batch calls (PublishBatch, SendMessageBatch or PutEvents; the naive relay's Publish) per record. */
    readonly destinationCallsPerMessage: number;
    /** Entries per batch call, as the server saw them (the naive relay's Publish: 1). */
    readonly entriesPerCall: number;
    /**
     * The relay's checks that its bus exists (`DescribeEventBus`) per record: one per warm publisher per
     * `BUS_CHECK_INTERVAL_MS` at most (0 for a topic or a queue).
     */
    readonly busChecksPerMessage: number;
    /** The relay's DynamoDB calls per record (the backlog's writes excluded). */
    readonly ddbCallsPerMessage: number;
    /** The relay's write capacity units per record, GSIs included, as DynamoDB reported them (the backlog's writes excluded). */
    readonly relayWcuPerMessage: number;
    /** The relay's read capacity units per record. */
    readonly relayRcuPerMessage: number;
    /** The relay's units per record by where they were spent (`table`, a GSI's name, `read:table`), as a tally's `unitsBy`. */
    readonly relayUnitsByPerMessage: Record<string, number>;
    /** Handler time per record over the full batches, ms: `msPerBatch` over the batch size (what Lambda bills as duration). */
    readonly handlerMsPerMessage: number;
    /** Handler invocations, retries included. */
    readonly invocations: number;
    /** Invocations that failed, wholly or partly (0 in a healthy run). */
    readonly failedInvocations: number;
    /** Stream shards the mapping saw (it serves them one after the other). */
    readonly shards: number;
    /** First poll to last completion, ms. */
    readonly elapsedMs: number;
    /** Mean ms per relay call by command, the added latency included: where a batch's time goes. */
    readonly msPerCall: Record<string, number>;
    /** Mean ms from a full batch's invocation to its handler's answer. */
    readonly msPerBatch: number;
    /** Each full batch's ms from invocation to answer, in order: the first shows a cold emulator. */
    readonly batchMs: readonly number[];
    /** Mean ms between one handler's answer and the next invocation (the mapping's GetRecords and bookkeeping). */
    readonly msBetweenBatches: number;
    /** CPU ms DynamoDB Local spent during the drain, per record; `undefined` when not measured. */
    readonly emulatorCpuMsPerMessage: number | undefined;
    /** CPU ms this bench process (relay, mapping, local SNS) spent during the drain, per record. */
    readonly benchCpuMsPerMessage: number;
    /** The most handler invocations in flight at once (at most `parallelizationFactor` per shard). */
    readonly peakConcurrentBatches: number;
    /**
     * Keyed variant: records the destination accepted out of their key's order (on a bus, the order the publisher put
     * them in); `undefined` for the keyless variants.
     */
    readonly inversions: number | undefined;
}

/** The keyed variant's order check, after the drain (`undefined` for the keyless ones). */
async function keyOrder(
    options: DrainRunOptions,
    plan: OrderPlan,
    client: Parameters<typeof countInversions>[0],
    accepted: Iterable<string>,
): Promise<number | undefined> {
    if (plan.keys === undefined) return undefined;
    const partitions = [
        ...new Set(
            Array.from({ length: Math.min(plan.keys, options.messages) }, (_, i) =>
                orderPartition(demoOrder(i, plan), plan),
            ),
        ),
    ];
    const { inversions, unknown } = await countInversions(client, plan.tableName, partitions, accepted);
    if (unknown > 0)
        throw new Error(
            `bench drain keyed: ${unknown} accepted record(s) not found in ${plan.tableName}; the order check is broken`,
        );
    return inversions;
}

const WRITERS = 16;

/** Write the backlog, drain it through one relay, and measure the drain. */
export async function runDrain(options: DrainRunOptions): Promise<DrainRunResult> {
    const variant = options.variant ?? "standard";
    const kind = options.destination ?? "sns";
    if (options.kind === "naive" && (variant !== "standard" || kind !== "sns"))
        throw new Error(
            `bench: the naive relay has no ${variant} variant on ${kind}; it publishes keyless records to SNS`,
        );
    if (variant === "fifo" && kind !== "sns")
        throw new Error(`bench: the fifo variant is an SNS FIFO topic, not ${kind}`);
    const tableName = `drain-${options.kind}-${variant}-${kind}-${options.runId}`;
    const clients = await localRelayClients({
        kind: options.kind,
        endpoint: options.endpoint,
        sns: options.sns,
        tableName,
        topicName: `drain-${options.kind}-${options.runId}${variant === "fifo" ? ".fifo" : ""}`,
        queueName: `drain-dlq-${options.kind}-${options.runId}`,
    });
    const { setup, writer: writerClient, relay: relayDynamoDb, streams, sns, sqs, topicArn, dlqUrl } = clients;
    const destination = drainDestination(kind, options.sns, clients, `drain-${kind}-${options.runId}`);
    try {
        const plan: OrderPlan = {
            tableName,
            runId: `${options.runId}-`,
            ...(variant === "keyed" ? { keys: options.keys ?? 10 } : {}),
        };
        const backlogCounters: NaiveCounters = { ddbCalls: 0, snsCalls: 0, writeUnits: 0 };
        const writer = new OutboxWriter({ client: writerClient, tableName });
        let next = 0;
        const write = async (): Promise<void> => {
            while (next < options.messages) {
                const order = demoOrder(next, plan);
                next += 1;
                const now = Date.now();
                if (options.kind === "ours") await writer.write(orderWriteRequest(order, plan, now));
                else await naiveWriteOrder(writerClient, tableName, naiveOrderOf(order, now), backlogCounters);
            }
        };
        await Promise.all(Array.from({ length: WRITERS }, () => write()));

        const relayTally = newTally();
        const destinationTally = newTally();
        const path = createCriticalPathCounter();
        let lastRelayCallAt = 0;
        const acknowledged = new Set<string>();
        const noteCall = (): void => {
            lastRelayCallAt = Date.now();
        };
        path.instrument(
            instrumentClient(injectLatency(relayDynamoDb, options.latencyMs.dynamodb), relayTally, {
                capacity: true,
                onSuccess: noteCall,
            }),
        );
        path.instrument(
            instrumentClient(injectLatency(destination.client, options.latencyMs.sns), destinationTally, {
                onSuccess: (command, input, output) => {
                    noteCall();
                    for (const id of acknowledgedIds(command, input, output)) acknowledged.add(id);
                },
            }),
        );
        let firstPollAt: number | undefined;
        instrumentClient(streams, newTally(), {
            onSuccess: (command) => {
                if (command === "GetRecordsCommand") firstPollAt ??= Date.now();
            },
        });
        const pollStartedAt = Date.now();
        const emulatorCpuAtStart = processCpuMs(options.emulatorPid);
        const benchCpuAtStart = process.cpuUsage();

        const relay =
            options.kind === "ours"
                ? createPublisher({
                      dynamodb: relayDynamoDb,
                      sns,
                      sqs,
                      ...destination.config,
                      tableName,
                      dlqUrl,
                      fifo: variant === "fifo",
                      logger: silentLogger,
                      writeMetrics: () => undefined,
                  })
                : createNaiveRelay({
                      dynamodb: relayDynamoDb,
                      sns,
                      tableName,
                      topicArn,
                      counters: { ddbCalls: 0, snsCalls: 0, writeUnits: 0 },
                  });
        const batches: { records: number; depth: number; startedAt: number; endedAt: number }[] = [];
        const factor = options.parallelizationFactor ?? 1;
        let inFlight = 0;
        let peakConcurrentBatches = 0;
        const mapping = await startLocalEventSourceMapping({
            streamsClient: streams,
            dynamodbClient: setup,
            tableName,
            ...MAPPING_SETTINGS,
            parallelizationFactor: factor,
            handler: async (event: LambdaStreamEvent) => {
                path.begin();
                inFlight += 1;
                peakConcurrentBatches = Math.max(peakConcurrentBatches, inFlight);
                const startedAt = Date.now();
                try {
                    const result = await (
                        relay as (e: unknown) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>
                    )(event);
                    batches.push({
                        records: event.Records.length,
                        depth: path.depth(),
                        startedAt,
                        endedAt: Date.now(),
                    });
                    return result;
                } finally {
                    inFlight -= 1;
                }
            },
        });
        try {
            await waitForCount(
                () => acknowledged.size,
                options.messages,
                `bench drain ${options.kind} ${variant} ${kind}: published`,
            );
            await mapping.drain({ timeoutMs: STALL_TIMEOUT_MS });
            const emulatorCpuAtEnd = processCpuMs(options.emulatorPid);
            const benchCpu = process.cpuUsage(benchCpuAtStart);
            const stats = mapping.stats();
            const elapsedMs = Math.max(1, lastRelayCallAt - (firstPollAt ?? pollStartedAt));
            const full = batches.filter((b) => b.records === MAPPING_SETTINGS.batchSize);
            const counted = full.length > 0 ? full : batches;
            const n = options.messages;
            const gaps = batches.slice(1).map((b, i) => b.startedAt - batches[i]!.endedAt);
            const batchCommand = `${options.kind === "ours" ? destination.batchAction : "Publish"}Command`;
            const observed = observedEntriesPerCall(options.sns, destination.batchAction);
            return {
                messages: acknowledged.size,
                msgsPerSec: round((n * 1000) / elapsedMs, 1),
                roundTripsPerBatch:
                    factor > 1
                        ? Number.NaN
                        : round(counted.reduce((sum, b) => sum + b.depth, 0) / Math.max(1, counted.length), 1),
                snsCallsPerMessage: kind === "sns" ? round(totalCalls(destinationTally) / n, 3) : 0,
                destination: kind,
                destinationCallsPerMessage: round(totalCalls(destinationTally, (c) => c === batchCommand) / n, 3),
                entriesPerCall: options.kind === "ours" ? round(observed.mean, 2) : 1,
                busChecksPerMessage: round(totalCalls(destinationTally, (c) => c === "DescribeEventBusCommand") / n, 4),
                ddbCallsPerMessage: round(totalCalls(relayTally) / n, 3),
                relayWcuPerMessage: round(relayTally.writeUnits / n, 3),
                relayRcuPerMessage: round(relayTally.readUnits / n, 3),
                relayUnitsByPerMessage: Object.fromEntries(
                    Object.entries(relayTally.unitsBy).map(([where, units]) => [where, round(units / n, 3)]),
                ),
                handlerMsPerMessage: round(
                    counted.reduce((sum, b) => sum + (b.endedAt - b.startedAt), 0) /
                        Math.max(
                            1,
                            counted.reduce((sum, b) => sum + b.records, 0),
                        ),
                    3,
                ),
                invocations: stats.invocations,
                failedInvocations: stats.failedInvocations,
                shards: stats.shards,
                elapsedMs,
                msPerCall: Object.fromEntries(
                    [relayTally, destinationTally].flatMap((t) =>
                        Object.entries(t.ms).map(([command, ms]) => [
                            command.replace(/Command$/, ""),
                            round(ms / Math.max(1, t.calls[command] ?? 1), 1),
                        ]),
                    ),
                ),
                msPerBatch: round(
                    counted.reduce((sum, b) => sum + (b.endedAt - b.startedAt), 0) / Math.max(1, counted.length),
                    1,
                ),
                batchMs: counted.map((b) => b.endedAt - b.startedAt),
                msBetweenBatches: round(gaps.reduce((sum, g) => sum + g, 0) / Math.max(1, gaps.length), 1),
                emulatorCpuMsPerMessage:
                    emulatorCpuAtStart === undefined || emulatorCpuAtEnd === undefined
                        ? undefined
                        : round((emulatorCpuAtEnd - emulatorCpuAtStart) / n, 3),
                benchCpuMsPerMessage: round((benchCpu.user + benchCpu.system) / 1000 / n, 3),
                peakConcurrentBatches,
                inversions: await keyOrder(options, plan, setup, acknowledged),
            };
        } finally {
            await mapping.stop();
        }
    } finally {
        destination.close();
        await clients.close();
    }
}
