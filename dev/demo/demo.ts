/**
 * The whole outbox on one machine, as `npm start` runs it:
 *
 * 1. DynamoDB Local (or `--endpoint`), fauxqs (SNS, SQS and S3: the DLQ, the payloads) and the destination of
 *    `--destination` (`./demo-destination.ts`): an SNS topic with the consumer's queue subscribed, an SQS queue, or
 *    an EventBridge bus (the fault server's stand-in) routed to the consumer's queue; with `--fail-rate`, the
 *    fault-injecting server holds the destination and fails a share of its batch calls.
 * 2. The table, created from `runtime/schema.ts`, and `preflight` on it.
 * 3. A producer writing orders at `--rate`: the order item and its event in ONE transaction (`OutboxWriter`).
 * 4. The relay: the local event source mapping (the component's filter, batching and rewind) invoking the
 *    publisher built by `createPublisher`, the same code the Lambda runs, with clients on the local endpoints;
 *    and the sweeper on a short interval.
 * 5. A consumer on its queue that reads each message with the runtime's `parseDelivery` and deduplicates on the
 *    record id, and a reader of the DLQ.
 *
 * @packageDocumentation
 */
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { LOCAL_CREDENTIALS, LOCAL_REGION, localDynamoDbClient, startDynamoDbLocal } from "../emulators/dynamodb-local";
import { startFauxqs } from "../emulators/fauxqs";
import { parseDelivery } from "../../runtime/inbox/delivery-formats";
import type { LambdaSqsRecord } from "../../runtime/inbox/sqs-event";
import { silentLogger } from "../../runtime/ports";
import { createPublisher } from "../../runtime/relay/publisher";
import { startLocalEventSourceMapping } from "../../runtime/testing/event-source-mapping";
import { OutboxStore } from "../../runtime/store";
import { createSweeper } from "../../runtime/relay/sweeper";
import { OutboxWriter } from "../../runtime/writer/writer";
import { instrumentClient, newTally, totalCalls } from "../bench/instrument";
import { percentile } from "../bench/stats";
import { demoOrder, orderWriteRequest, type OrderPlan } from "./demo-orders";
import { startDemoPayloads, type DemoPayloads } from "./demo-payloads";
import {
    followRecording,
    newLedger,
    pollQueue,
    recordDelivery,
    recordIdAttribute,
    type Ledger,
    type Poller,
} from "./demo-consumer";
import { acceptedEntries, callsLabel, startDemoDestination, type DemoDestination } from "./demo-destination";
import type { ProgressLine } from "./progress";
import type { Shutdown } from "./shutdown";
import type { StartOptions } from "./start-args";

/** What a run ended with. */
export interface DemoResult {
    /** Orders written. */
    readonly count: number;
    /** Ids delivered at least once. */
    readonly delivered: number;
    /** Ids neither delivered nor dead-lettered. */
    readonly lost: number;
    /** Deliveries dropped by the consumer as duplicates. */
    readonly duplicates: number;
    /** Ids in the DLQ. */
    readonly dlq: number;
    /** Whether everything expected happened: nothing lost, exactly the expired orders in the DLQ, order kept. */
    readonly ok: boolean;
}

/** How often the sweeper runs in the demo (the component schedules it every minute). */
const SWEEP_INTERVAL_MS = 2000;
/** The demo's `sweepAfter`: short, so records the stream path gave up on are picked up within the run. */
const SWEEP_AFTER_SECONDS = 5;
/** Writes in flight at most. */
const MAX_IN_FLIGHT = 16;
/** Give up waiting for deliveries after this long without progress. */
const STALL_TIMEOUT_MS = 30_000;

function ms(value: number): string {
    return Number.isNaN(value) ? "-" : `${Math.round(value)} ms`;
}

function latencyText(ledger: Ledger): string {
    return `p50 ${ms(percentile(ledger.latencies, 50))} p99 ${ms(percentile(ledger.latencies, 99))}`;
}

/** What the consumer line says of order, by kind: only a bus promises none. */
function orderNote(destination: DemoDestination): string {
    if (destination.kind === "eventbridge")
        return " as the stand-in delivered them (in put order; a real EventBridge bus keeps no order, so this checks the publisher's put order only)";
    return destination.fifo ? " (a FIFO queue, one message group per customer)" : "";
}

/**
 * Start the consumer: a queue read with `parseDelivery` (claim checks resolved with `--payload-bytes`), or what the
 * fault server's topic accepted. Parallel receivers on a standard queue hand messages over out of publish order,
 * which would count as inversions the publisher never made: with ordering keys, one receiver checks the order the
 * destination delivered in.
 */
function startConsumer(
    destination: DemoDestination,
    ledger: Ledger,
    payloads: DemoPayloads | undefined,
    keyed: boolean,
): Poller {
    const lastSequence = new Map<string, number>();
    const source = destination.consumer;
    if ("recording" in source)
        return followRecording(source.recording, (id, body) =>
            recordDelivery(ledger, lastSequence, id, body, Date.now()),
        );
    return pollQueue(
        source.sqs,
        source.queue,
        async (record: LambdaSqsRecord) => {
            let message;
            try {
                message = parseDelivery(record).message;
            } catch {
                ledger.unidentified += 1;
                return;
            }
            const body = payloads === undefined ? message.body : await payloads.resolveBody(message);
            if (body !== undefined) recordDelivery(ledger, lastSequence, message.outboxId, body, Date.now());
        },
        keyed ? 1 : 3,
    );
}

/**
 * Run the demo; every part it starts is registered with `shutdown`, which stops it on any way out.
 *
 * @param options - The parsed flags.
 * @param shutdown - Stops the parts on exit, Ctrl-C, SIGTERM or a crash.
 * @param progress - Where the live line and the summary go.
 */
export async function runDemo(options: StartOptions, shutdown: Shutdown, progress: ProgressLine): Promise<DemoResult> {
    const startedAt = Date.now();
    // 1. The local parts.
    // Each part is registered BEFORE its start is awaited: a SIGTERM during the start then waits for it and
    // stops it, instead of leaving a Java process behind.
    let endpoint = options.endpoint;
    if (endpoint === undefined) {
        const starting = startDynamoDbLocal();
        shutdown.add("DynamoDB Local", () =>
            starting.then(
                (dynamo) => dynamo.stop(),
                () => undefined,
            ),
        );
        endpoint = (await starting).endpoint;
    }
    const fauxqsStarting = startFauxqs();
    shutdown.add("fauxqs", () =>
        fauxqsStarting.then(
            (f) => f.stop(),
            () => undefined,
        ),
    );
    const fauxqs = await fauxqsStarting;
    const runId = Date.now().toString(36);
    const destination = await startDemoDestination(
        { kind: options.destination, failRate: options.failRate, keyed: options.keys > 0, runId },
        fauxqs,
        shutdown,
    );
    const ddb = localDynamoDbClient(endpoint);
    const streams = new DynamoDBStreamsClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    shutdown.add("DynamoDB clients", () => {
        ddb.destroy();
        streams.destroy();
    });
    const destinationTally = newTally();
    let published = 0;
    instrumentClient(destination.client, destinationTally, {
        onSuccess: (command, _input, output) => {
            if (command === destination.batchCommand) published += acceptedEntries(command, output);
        },
    });

    // 2. The table, from the schema, and preflight.
    const tableName = `outbox-demo-${runId}`;
    // The demo delivers through the stream-triggered publisher, so preflight must refuse a table without one.
    const store = new OutboxStore({ client: ddb, tableName, requireStream: true });
    await store.createTable();
    const preflight = await store.preflight();
    if (options.endpoint !== undefined) {
        // On someone else's DynamoDB, leave nothing behind: the demo table goes when the demo does.
        shutdown.add("demo table", () =>
            ddb.send(new DeleteTableCommand({ TableName: tableName })).then(() => undefined),
        );
    }
    if (preflight !== "verified") throw new Error(`preflight on ${tableName} returned ${preflight}; expected verified`);
    progress.print(`table ${tableName} created from runtime/schema.ts; preflight: ${preflight}`);
    progress.print(`DynamoDB ${options.endpoint === undefined ? "Local" : "at"} ${endpoint}, ${destination.where}`);

    // 4. The relay: the publisher Lambda's code behind the local event source mapping, and the sweeper.
    const handlerConfig = {
        ...destination.config,
        dynamodb: ddb,
        tableName,
        logger: silentLogger,
        writeMetrics: () => undefined,
    };
    const publisher = createPublisher(handlerConfig);
    let discarded = 0;
    const mapping = await startLocalEventSourceMapping({
        streamsClient: streams,
        dynamodbClient: ddb,
        tableName,
        handler: (event, context) => publisher(event, context),
        batchSize: 100,
        parallelizationFactor: options.parallelizationFactor,
        functionName: "outbox-demo-publisher",
        onFailure: (info) => {
            discarded += info.DDBStreamBatchInfo.batchSize;
        },
    });
    shutdown.add("event source mapping", () => mapping.stop());
    const sweeper = createSweeper({ ...handlerConfig, sweepAfterSeconds: SWEEP_AFTER_SECONDS });
    let sweeps = 0;
    let swept = 0;
    let sweeping = true;
    const sweepLoop = (async () => {
        while (sweeping) {
            await new Promise((resolve) => setTimeout(resolve, SWEEP_INTERVAL_MS));
            if (!sweeping) return;
            const result = await sweeper();
            sweeps += 1;
            swept += result.published;
        }
    })();
    shutdown.add("sweeper", async () => {
        sweeping = false;
        await sweepLoop.catch(() => undefined);
    });

    // Events of any size: a bucket on fauxqs's S3 for the payloads the writer offloads.
    const payloads =
        options.payloadBytes > 0 ? await startDemoPayloads(fauxqs.endpoint, options.payloadBytes, runId) : undefined;
    if (payloads !== undefined) shutdown.add("S3 client", () => payloads.stop());

    // 5. The consumer and the DLQ reader.
    const ledger = newLedger();
    const consumer = startConsumer(destination, ledger, payloads, options.keys > 0);
    shutdown.add("consumer", () => consumer.stop());
    const dlqReader = pollQueue(
        destination.dlq.sqs,
        destination.dlq.queue,
        (record) => {
            const id = recordIdAttribute(record);
            if (id === undefined) return;
            let reason = "unknown";
            try {
                reason = String((JSON.parse(record.body) as { reason?: unknown }).reason ?? reason);
            } catch {
                // keep "unknown"
            }
            ledger.deadLettered.set(id, reason);
        },
        1,
    );
    shutdown.add("DLQ reader", () => dlqReader.stop());

    // 3. The producer.
    const plan: OrderPlan = {
        tableName,
        keys: options.keys,
        expireRatio: options.expireRatio,
        runId: `${runId}-`,
        payloadBytes: options.payloadBytes,
    };
    const writer = new OutboxWriter({
        client: ddb,
        tableName,
        address: destination.arn,
        fifo: destination.fifo,
        ...(payloads !== undefined ? { largePayloads: payloads.writerOption } : {}),
    });
    let written = 0;
    let expectedExpired = 0;
    const producerStart = Date.now();
    const show = (): void => {
        const pending = written - ledger.delivered.size - ledger.deadLettered.size;
        progress.update(
            `written ${written}/${options.count}  published ${published}  delivered ${ledger.delivered.size}  pending ${Math.max(0, pending)}  dlq ${ledger.deadLettered.size}  latency ${latencyText(ledger)}`,
        );
    };
    const ticker = setInterval(show, 200);
    shutdown.add("progress", () => clearInterval(ticker));
    let next = 0;
    // A customer's orders are written one after another, as an application writes them: the outbox orders a key
    // by (created_at, seq), and two writes of one key in flight at once have no order to keep.
    const customerWrites = new Map<string, Promise<unknown>>();
    const worker = async (): Promise<void> => {
        for (;;) {
            const index = next;
            if (index >= options.count || shutdown.stopping) return;
            next += 1;
            if (options.rate > 0) {
                const due = producerStart + (index * 1000) / options.rate;
                const wait = due - Date.now();
                if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
            }
            const order = demoOrder(index, plan);
            if (order.expired) expectedExpired += 1;
            const previous = options.keys > 0 ? customerWrites.get(order.customer) : undefined;
            const write = (async () => {
                if (previous !== undefined) await previous.catch(() => undefined);
                const now = Date.now();
                ledger.writtenAt.set(order.id, now);
                await writer.write(orderWriteRequest(order, plan, now));
            })();
            if (options.keys > 0) customerWrites.set(order.customer, write);
            await write;
            written += 1;
        }
    };
    await Promise.all(Array.from({ length: MAX_IN_FLIGHT }, () => worker()));
    const producerMs = Date.now() - producerStart;

    // Wait until every order is delivered or dead-lettered, or nothing moves for a while.
    let lastMoved = Date.now();
    let lastSeen = -1;
    for (;;) {
        const seen = ledger.delivered.size + ledger.deadLettered.size;
        if (seen >= options.count || shutdown.stopping) break;
        if (seen !== lastSeen) {
            lastSeen = seen;
            lastMoved = Date.now();
        } else if (Date.now() - lastMoved > STALL_TIMEOUT_MS) {
            break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Let late redeliveries show up as duplicates rather than after the summary.
    await mapping.drain({ timeoutMs: 10_000 }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const totalMs = Date.now() - producerStart;
    clearInterval(ticker);
    show();
    progress.done();

    // The summary.
    const stats = mapping.stats();
    const deliveredAndDead = [...ledger.deadLettered.keys()].filter((id) => ledger.delivered.has(id)).length;
    const dlqCount = ledger.deadLettered.size;
    const lost = options.count - ledger.delivered.size - dlqCount + deliveredAndDead;
    const unexpectedDead = [...ledger.deadLettered.entries()].filter(([, reason]) => reason !== "expired").length;
    const batchAction = destination.batchCommand.replace(/Command$/, "");
    const failedCalls = (destination.faultServer?.calls() ?? []).filter(
        (c) => c.action === batchAction && c.outcome !== "ok" && c.outcome !== "partial",
    ).length;
    const batchCalls = totalCalls(destinationTally, (command) => command === destination.batchCommand);
    const lines = [
        "",
        "summary",
        `  written    ${options.count} orders, each with its event in one transaction, in ${(producerMs / 1000).toFixed(1)} s (${Math.round((options.count * 1000) / Math.max(1, producerMs))}/s)` +
            (options.keys > 0 ? `, ${options.keys} ordering keys` : ", keyless") +
            (options.parallelizationFactor > 1 ? `, parallelization factor ${options.parallelizationFactor}` : ""),
        `  relay      ${stats.invocations} publisher invocations, ${stats.retries} retries, ${discarded} records sent to on-failure; ` +
            `${callsLabel(destination.kind)} ${batchCalls}${options.failRate === 0 ? "" : ` (${failedCalls} attempts failed by injection and were retried)`}`,
        `  sweeper    ${sweeps} runs, ${swept} records published by the sweep`,
        `  consumer   ${ledger.delivered.size} delivered in ${(totalMs / 1000).toFixed(1)} s, latency write->delivery ${latencyText(ledger)}` +
            (options.keys > 0 ? `, ${ledger.outOfOrder} out of order${orderNote(destination)}` : ""),
        `  dlq        ${dlqCount} (expected ${expectedExpired} expired${unexpectedDead > 0 ? `, ${unexpectedDead} for other reasons` : ""})`,
        ...(payloads !== undefined ? [await payloads.summary()] : []),
        `  total      ${((Date.now() - startedAt) / 1000).toFixed(1)} s including startup`,
        `delivered ${ledger.delivered.size}/${options.count} lost ${lost} duplicates ${ledger.duplicates} dlq ${dlqCount}`,
    ];
    for (const line of lines) progress.print(line);

    if (options.keep) {
        progress.print(
            [
                "",
                "--keep: staying up; Ctrl-C to stop.",
                `  DynamoDB  ${endpoint}  table ${tableName}  (region ${LOCAL_REGION}, access key "${LOCAL_CREDENTIALS.accessKeyId}")`,
                ...destination.keepLines,
            ].join("\n"),
        );
        // Held open by a timer: the pollers alone would keep the process up, but not by contract.
        await new Promise<never>(() => setInterval(() => undefined, 60_000));
    }
    return {
        count: options.count,
        delivered: ledger.delivered.size,
        lost,
        duplicates: ledger.duplicates,
        dlq: dlqCount,
        ok:
            lost === 0 &&
            dlqCount === expectedExpired &&
            unexpectedDead === 0 &&
            ledger.outOfOrder === 0 &&
            (payloads?.failures() ?? 0) === 0,
    };
}
