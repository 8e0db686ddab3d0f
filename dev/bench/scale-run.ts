/**
 * One scenario of `npm run bench:scale`: the writer, the stream publisher and the sweeper, driven on a simulated
 * clock in 100 ms ticks through the per-key capacity model (dev/bench/capacity-model.ts) on DynamoDB Local.
 *
 * Each tick: the tick's share of the offered messages is written (one message per `write()`, as the README's
 * cost model measures it), and writes throttled earlier are retried when their backoff is due (100 ms doubling
 * up to 5 s, as an application retrying `THROTTLED` would); the simulated stream (every outbox record a write
 * inserted, in write order, batches of up to 100 as the event source mapping sends them) is handed to the
 * publisher, and a batch it reports failed is retried from the failed record after a backoff, up to 10 times
 * (the component's `maximumRetryAttempts`), then left to the sweeper as the mapping's on-failure destination
 * would; the sweeper runs every simulated second (sweepAfter 1 s), and a share of the records can be kept from the
 * stream so that it has work under the same throttles. After the offered seconds, the ticks go on without new
 * messages until nothing is pending. Then every written message must have been published or dead-lettered as
 * expired: the counts say whether the retries lost anything.
 *
 * @packageDocumentation
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../runtime/errors";
import { MESSAGE_ATTRIBUTE } from "../../runtime/record/message";
import { silentLogger } from "../../runtime/ports";
import { createPublisher } from "../../runtime/relay/publisher";
import { ATTR, CLAIM_INDEX, GLOBAL_SECONDARY_INDEXES } from "../../runtime/schema";
import { OutboxStore } from "../../runtime/store";
import { createSweeper } from "../../runtime/relay/sweeper";
import { OutboxWriter, type OutboxMessage } from "../../runtime/writer/writer";
import { dateFollowsClock, type MiddlewareStackLike } from "../emulators/dynamodb-local";
import { createCapacityModel, type BackendClient, type KeyUnits } from "./capacity-model";
import { percentile, round } from "./stats";
import { manualClock } from "../../tests/support/runtime/harness";

/** The message mixes. */
export type ScaleMix = "keyless" | "keyed" | "expiring";

/** One scenario. */
export interface ScaleScenario {
    /** Its name in the report. */
    readonly name: string;
    /** What the messages are: keyless over distinct partitions; keyed (8 partitions, 2 ordering keys each); or keyless with an expiry. */
    readonly mix: ScaleMix;
    /** Messages offered per simulated second. */
    readonly ratePerSec: number;
    /** Simulated seconds of offered load. */
    readonly seconds: number;
    /** The writer's and the sweeper's `expiryShards`. */
    readonly expiryShards: number;
    /** Throttle above the ceiling (`false`: account only). */
    readonly throttle: boolean;
    /** In the expiring mix, every n-th message expires 2 s after its write (the others in an hour), so the expiry paths run. @default 0 (none) */
    readonly shortExpiryEvery?: number;
    /**
     * Every n-th inserted record never reaches the publisher (as after a disabled mapping or the stream's retention),
     * so the sweeper must deliver it, under the same throttles. @default 0 (none)
     */
    readonly streamLossEvery?: number;
}

/** Where the units went, and the hottest key value. */
export interface UnitsReport {
    /** Write units, every index. */
    readonly total: number;
    /** The key value with the most units, and its share of `total`. */
    readonly hottest: KeyUnits & { readonly share: number };
    /** Per index (`table`, each GSI): units, and its hottest key value's share of them. */
    readonly byIndex: Record<
        string,
        { readonly units: number; readonly hottestKey: string; readonly hottestShare: number }
    >;
}

/** What one scenario did. */
export interface ScaleResult {
    readonly name: string;
    readonly mix: ScaleMix;
    readonly expiryShards: number;
    readonly offeredPerSec: number;
    readonly offeredSeconds: number;
    /** Messages written (each counted once, however many attempts it took). */
    readonly messages: number;
    /** Simulated seconds from the first write until nothing was pending. */
    readonly drainedAfterSeconds: number;
    /** Throttled requests: in total, by who sent them, by command, by the index whose key hit the ceiling. */
    readonly throttles: {
        readonly total: number;
        readonly byActor: Record<string, number>;
        readonly byCommand: Record<string, number>;
        readonly byIndex: Record<string, number>;
    };
    /** Records kept from the stream (`streamLossEvery`): only the sweeper could deliver them. */
    readonly streamLost: number;
    /** What the throttles cost: write attempts beyond the first, stream batch retries, batches left to the sweeper, sweeps that failed. */
    readonly retries: {
        readonly writeAttempts: number;
        readonly batchRetries: number;
        readonly batchesLeftToSweeper: number;
        readonly sweeperFailures: number;
    };
    /** Delivery: distinct ids published, extra publishes of an id, ids dead-lettered as expired, ids neither (lost), records still pending. */
    readonly delivery: {
        readonly published: number;
        readonly duplicates: number;
        readonly expired: number;
        readonly lost: number;
        readonly pendingLeft: number;
    };
    /** First write attempt → first publish, simulated ms. */
    readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
    /** Units by index and key value. */
    readonly units: UnitsReport;
    /** The most units one key value took in one simulated second. */
    readonly peakUnitsPerSecond: KeyUnits;
}

const TICK_MS = 100;
const MAX_BACKOFF_MS = 5_000;
const MAPPING_RETRIES = 10;
/** The sweeper runs every simulated second (its schedule is a minute on AWS; the simulation is compressed). */
const SWEEP_EVERY_TICKS = 10;
const BATCH_SIZE = 100;
/** A cap on the drain, in simulated seconds after the offered load, so a scenario that cannot drain still ends. */
const MAX_DRAIN_SECONDS = 600;
const TOPIC_ARN = "arn:aws:sns:us-east-1:000000000000:scale-bench";
const DLQ_URL = "https://sqs.us-east-1.amazonaws.com/000000000000/scale-bench-dlq";

function backoff(attempt: number): number {
    return Math.min(MAX_BACKOFF_MS, TICK_MS * 2 ** Math.max(0, attempt - 1));
}

function unitsReport(totals: readonly KeyUnits[]): UnitsReport {
    const total = totals.reduce((n, t) => n + t.units, 0);
    const hottest = totals.reduce((a, b) => (b.units > a.units ? b : a), { index: "", key: "", units: 0 });
    const byIndex: Record<string, { units: number; hottestKey: string; hottestShare: number }> = {};
    for (const index of ["table", ...GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName)]) {
        const rows = totals.filter((t) => t.index === index);
        const units = rows.reduce((n, t) => n + t.units, 0);
        const top = rows.reduce((a, b) => (b.units > a.units ? b : a), { index, key: "", units: 0 });
        byIndex[index] = { units, hottestKey: top.key, hottestShare: units === 0 ? 0 : round(top.units / units, 4) };
    }
    return { total, hottest: { ...hottest, share: total === 0 ? 0 : round(hottest.units / total, 4) }, byIndex };
}

/**
 * Run one scenario on a fresh table of `backend`.
 *
 * @param backend - A DynamoDB Local client.
 * @param scenario - What to offer.
 * @param progress - Where progress lines go.
 */
export async function runScaleScenario(
    backend: DynamoDBClient,
    scenario: ScaleScenario,
    progress: (line: string) => void,
): Promise<ScaleResult> {
    const tableName = `scale-${scenario.name.replace(/[^a-zA-Z0-9]/g, "-")}-${Date.now().toString(36)}`;
    await new OutboxStore({ client: backend, tableName }).createTable({ stream: false });
    const start = Date.UTC(2026, 0, 1);
    const clock = manualClock(start);
    let actor = "";
    const stream: { seq: string; item: Record<string, AttributeValue> }[] = [];
    let streamSeq = 0;
    let streamLost = 0;
    const model = createCapacityModel({
        backend,
        clock,
        tableName,
        throttle: scenario.throttle,
        actor: () => actor,
        onInsert: (item) => {
            streamSeq += 1;
            if (
                scenario.streamLossEvery !== undefined &&
                scenario.streamLossEvery > 0 &&
                streamSeq % scenario.streamLossEvery === 0
            )
                streamLost += 1;
            else stream.push({ seq: String(streamSeq).padStart(21, "0"), item });
        },
    });

    const published = new Map<string, number>();
    const publishedAt = new Map<string, number>();
    const expired = new Set<string>();
    const sns: BackendClient = {
        async send(command: object) {
            const entries =
                (
                    command as {
                        input: {
                            PublishBatchRequestEntries?: {
                                Id: string;
                                MessageAttributes?: Record<string, { StringValue?: string }>;
                            }[];
                        };
                    }
                ).input.PublishBatchRequestEntries ?? [];
            for (const e of entries) {
                const id = e.MessageAttributes?.[MESSAGE_ATTRIBUTE.recordId]?.StringValue ?? "";
                published.set(id, (published.get(id) ?? 0) + 1);
                if (!publishedAt.has(id)) publishedAt.set(id, clock.now());
            }
            return { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}` })), Failed: [] };
        },
    };
    const sqs: BackendClient = {
        async send(command: object) {
            const body = JSON.parse((command as { input: { MessageBody: string } }).input.MessageBody) as {
                recordId: string;
                reason: string;
            };
            if (body.reason === "expired") expired.add(body.recordId);
            return { MessageId: `d-${body.recordId}` };
        },
    };
    const handlerConfig = {
        dynamodb: model.client,
        sns,
        sqs,
        tableName,
        topicArn: TOPIC_ARN,
        dlqUrl: DLQ_URL,
        clock,
        logger: silentLogger,
        writeMetrics: () => undefined,
    };
    const writer = new OutboxWriter({
        client: model.client as unknown as DynamoDBClient,
        tableName,
        clock,
        address: TOPIC_ARN,
        expiryShards: scenario.expiryShards,
    });
    const publisher = createPublisher(handlerConfig);
    // The simulated clock is the world's: DynamoDB's, as the sweeper reads it (the Date header), moves with it.
    const sweeperDynamo: BackendClient = {
        send: (command) => {
            dateFollowsClock((command as { middlewareStack: MiddlewareStackLike }).middlewareStack, clock);
            return model.client.send(command);
        },
    };
    const sweeper = createSweeper({
        ...handlerConfig,
        dynamodb: sweeperDynamo,
        sweepAfterSeconds: 1,
        expiryShards: scenario.expiryShards,
    });

    const message = (n: number, now: number): OutboxMessage => {
        const payload = {
            order: n,
            customer: `customer-${n % 97}`,
            lines: [{ sku: `SKU-${n % 13}`, quantity: 1 + (n % 3) }],
            note: "x".repeat(120),
        };
        if (scenario.mix === "keyed")
            return { partition: `ORDER#${n % 8}`, type: "OrderChanged", payload, orderingKey: `k${n % 2}` };
        if (scenario.mix === "keyless") return { partition: `ORDER#${n}`, type: "OrderPlaced", payload };
        const short =
            scenario.shortExpiryEvery !== undefined &&
            scenario.shortExpiryEvery > 0 &&
            n % scenario.shortExpiryEvery === 0;
        return {
            partition: `ORDER#${n}`,
            type: "OrderPlaced",
            payload,
            expiresAt: new Date(now + (short ? 2_000 : 3_600_000)),
        };
    };

    interface Attempt {
        readonly n: number;
        readonly firstAt: number;
        attempts: number;
        due: number;
    }
    let queue: Attempt[] = [];
    const firstAttemptOf = new Map<string, number>();
    let next = 0;
    let writeAttempts = 0;
    let batchRetries = 0;
    let batchesLeftToSweeper = 0;
    let sweeperFailures = 0;
    let headRetries = 0;
    let streamDue = start;
    const offeredTicks = Math.round((scenario.seconds * 1000) / TICK_MS);
    let carry = 0;
    let tick = 0;
    let drainedAt = Number.NaN;

    const pendingCount = async (): Promise<number> =>
        (
            await backend.send(
                new ScanCommand({ TableName: tableName, IndexName: CLAIM_INDEX.indexName, Select: "COUNT" }),
            )
        ).Count ?? 0;

    for (; ; tick++) {
        const now = clock.now();
        if (tick < offeredTicks) {
            carry += (scenario.ratePerSec * TICK_MS) / 1000;
            for (; carry >= 1; carry -= 1) queue.push({ n: next++, firstAt: now, attempts: 0, due: now });
        }
        actor = "writer";
        const due = queue.filter((q) => q.due <= now);
        queue = queue.filter((q) => q.due > now);
        for (const q of due) {
            q.attempts += 1;
            try {
                const { messageIds } = await writer.write({ messages: [message(q.n, q.firstAt)] });
                firstAttemptOf.set(messageIds[0]!, q.firstAt);
                if (q.attempts > 1) writeAttempts += q.attempts - 1;
            } catch (err) {
                if (!isOutboxError(err, "THROTTLED")) throw err;
                q.due = now + backoff(q.attempts);
                queue.push(q);
            }
        }

        actor = "publisher";
        while (stream.length > 0 && streamDue <= now) {
            const batch = stream.slice(0, BATCH_SIZE);
            const event = {
                Records: batch.map((r) => ({
                    eventID: r.seq,
                    eventName: "INSERT",
                    eventSource: "aws:dynamodb",
                    eventSourceARN: `arn:aws:dynamodb:us-east-1:000000000000:table/${tableName}/stream/scale-bench`,
                    awsRegion: "us-east-1",
                    dynamodb: {
                        Keys: { [ATTR.pk]: r.item[ATTR.pk], [ATTR.sk]: r.item[ATTR.sk] },
                        NewImage: r.item,
                        SequenceNumber: r.seq,
                        SizeBytes: 1,
                        StreamViewType: "NEW_IMAGE",
                    },
                })),
            };
            const response = await publisher(event);
            const failed = response.batchItemFailures[0]?.itemIdentifier;
            if (failed === undefined) {
                stream.splice(0, batch.length);
                headRetries = 0;
                continue;
            }
            const at = Math.max(
                0,
                batch.findIndex((r) => r.seq === failed),
            );
            stream.splice(0, at);
            if (at === 0) headRetries += 1;
            else headRetries = 1;
            if (headRetries > MAPPING_RETRIES) {
                // The mapping gives up on the batch (its metadata goes to the on-failure destination): the sweeper's.
                stream.splice(0, Math.min(BATCH_SIZE, stream.length));
                batchesLeftToSweeper += 1;
                headRetries = 0;
            } else {
                batchRetries += 1;
                streamDue = now + backoff(headRetries);
            }
            break;
        }

        if (tick % SWEEP_EVERY_TICKS === SWEEP_EVERY_TICKS - 1) {
            actor = "sweeper";
            try {
                await sweeper();
            } catch (err) {
                // A step of the sweep could not run; the next run retries it. Counted and reported, never hidden.
                sweeperFailures += 1;
                progress(
                    `${scenario.name}: a sweep failed (${err instanceof Error ? err.message : String(err)}); the next run retries`,
                );
            }
        }
        clock.advance(TICK_MS);

        if (tick >= offeredTicks && queue.length === 0 && stream.length === 0 && tick % 10 === 9) {
            if ((await pendingCount()) === 0) {
                drainedAt = clock.now();
                break;
            }
        }
        if (tick >= offeredTicks + (MAX_DRAIN_SECONDS * 1000) / TICK_MS) break;
        if (tick % 50 === 49)
            progress(
                `${scenario.name}: ${((clock.now() - start) / 1000).toFixed(0)} s simulated, ${firstAttemptOf.size} written, ${queue.length} waiting to retry, ${stream.length} in the stream`,
            );
    }

    const written = [...firstAttemptOf.keys()];
    const latencies = written
        .filter((id) => publishedAt.has(id))
        .map((id) => publishedAt.get(id)! - firstAttemptOf.get(id)!);
    const lost = written.filter((id) => !published.has(id) && !expired.has(id)).length;
    const throttleTotal = Object.values(model.throttledRequests).reduce((a, b) => a + b, 0);
    return {
        name: scenario.name,
        mix: scenario.mix,
        expiryShards: scenario.expiryShards,
        offeredPerSec: scenario.ratePerSec,
        offeredSeconds: scenario.seconds,
        messages: written.length,
        drainedAfterSeconds: Number.isNaN(drainedAt) ? -1 : round((drainedAt - start) / 1000, 1),
        throttles: {
            total: throttleTotal,
            byActor: { ...model.throttledByActor },
            byCommand: { ...model.throttledRequests },
            byIndex: { ...model.throttledBy },
        },
        retries: { writeAttempts, batchRetries, batchesLeftToSweeper, sweeperFailures },
        streamLost,
        delivery: {
            published: written.filter((id) => published.has(id)).length,
            duplicates: [...published.values()].reduce((n, c) => n + c - 1, 0),
            expired: expired.size,
            lost,
            pendingLeft: await pendingCount(),
        },
        latencyMs: {
            p50: percentile(latencies, 50),
            p99: percentile(latencies, 99),
            max: latencies.reduce((a, b) => Math.max(a, b), 0),
        },
        units: unitsReport(model.totals()),
        peakUnitsPerSecond: (({ index, key, units }) => ({ index, key, units }))(model.peak()),
    };
}
