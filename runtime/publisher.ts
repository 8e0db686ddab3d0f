/**
 * The stream publisher: the Lambda handler behind the table's event source mapping. It publishes the outbox
 * records of each stream batch to SNS and completes them, and reports the first record it could not deliver so
 * Lambda retries from there.
 *
 * Per batch, in shard order:
 * 1. An event that is not a DynamoDB stream event fails the invocation (`INVALID_CONFIG`, naming what arrived:
 *    `runtime/stream-source.ts`). A record of another table's stream holds the shard: the batch is reported at it,
 *    with an error log naming its `eventSourceARN`. Records that are not INSERTs of an `OUTBOX#` item are ignored
 *    (the mapping's filter should already drop them; the code does not rely on the deployment).
 * 2. One consistent BatchGetItem reads every record from the table: records already completed or expired (a
 *    redelivered batch), or held by a claimer, are skipped, and what is delivered is the row read, never the
 *    stream image. Skips of terminal records count as `DuplicatesAvoided`.
 * 3. Expired records go to the DLQ with reason `expired` and are marked expired; they are never published.
 * 4. Keyless records are published with PublishBatch, up to 10 per call, then completed conditionally
 *    (pending → completed, `ttl` = now + grace, `claim_sort` and `has_expiry` removed). Up to 100 of them at a
 *    time, their calls run concurrently and each call's completions start when it returns
 *    (`runtime/keyless-publish.ts`); on a FIFO topic one message group's calls still go one after the other.
 * 5. A record with an ordering key is a doorbell: its partition is drained through the store's claim path
 *    (ConsistentRead, head-of-line rule), published and completed in order with the claim's token.
 * 6. A record SNS refuses permanently (InvalidParameter, NotFound…) has the failure counted on the item
 *    (`publish_attempts`); at `maxPublishAttempts` it goes to the DLQ with reason `publish-rejected`.
 *
 * At the first record that cannot be delivered, processing stops: its SequenceNumber (the lowest that failed,
 * whatever order concurrent calls ended in) is the one `batchItemFailures` entry, and no call starts after the
 * failure is known. Records after it that SNS accepted, in the same call or in calls that ran concurrently, are
 * completed (and counted as `PublishedAfterFailure`), so the retry skips them (step 2) instead of sending them
 * twice.
 *
 * A record whose failure is its own never fails the batch: SNS refused it for its content (below
 * `maxPublishAttempts`), or the DLQ could not take it (expired, or at `maxPublishAttempts`; the DLQ is down or
 * refuses it). Retrying the batch would hold every record behind it in the shard for a fault that is not theirs.
 * So it stays pending, with the later records of its ordering key, counts as `LeftForSweeper`, and the sweeper
 * retries it on its runs (counting attempts, dead-lettering at `maxPublishAttempts`) while the batch goes on.
 * What fails the batch is a fault that every later record would meet: SNS throttled or down, a deployment fault
 * (no such topic, an unusable KMS key), a failed DynamoDB read or write, or the invocation running out of time.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { isQueueUrl, isTopicArn, QUEUE_URL_SHAPE, queueUrlRegion, TOPIC_ARN_SHAPE, topicArnRegion } from "./aws-resource-names";
import { drainPartition, type ClaimedDeliveryResult, type ClaimingStore } from "./claimed-delivery";
import {
    afterSend,
    DELIVERY_METRICS,
    completePending,
    countPermanentFailure,
    expirePending,
    isExpired,
    notePublished,
    publishBatches,
    readRecordStates,
    sendToDeadLetterQueue,
    type RecordState,
    type ClientLike,
    type DeliveryContext,
} from "./delivery";
import { createEmfMetrics, type EmfMetrics, type LineWriter } from "./emf";
import { errorCodeOf, isOutboxError, OutboxError } from "./errors";
import { integerIn } from "./integer-setting";
import { KEYLESS_RECORDS_PER_FLUSH, publishAndComplete, type KeylessItem } from "./keyless-publish";
import { HANDLER_LIMITS } from "./limits";
import { HANDLER_FUNCTIONS, handlerDimensions, type HandlerFunction } from "./metric-catalog";
import { outboundMessage, type DeadLetterReason } from "./message";
import { silentLogger, systemClock, type Clock, type Logger, type MetricsSink } from "./ports";
import { unmarshalRecord, type OutboxRecord, type StreamImage } from "./record/codec";
import { RECORD_SK_PREFIX, STATUS } from "./schema";
import { OutboxStore } from "./store";
import { expectedStreamArn, foreignEventProblem, streamTableName } from "./stream-source";
import type { FencingToken } from "./store/transitions";

/** What a stream handler returns: the SequenceNumber of the first record to retry, if any. */
export interface StreamBatchResponse {
    /** At most one entry: the first record that could not be delivered. Lambda retries from it. */
    batchItemFailures: { itemIdentifier: string }[];
}

/** The Lambda context fields the handlers read. */
export interface HandlerContext {
    /** The invocation's request id; part of the claim owner id. */
    readonly awsRequestId?: string;
    /** Milliseconds left in this invocation; the handler stops starting work when fewer than `reserveMs` remain. */
    getRemainingTimeInMillis?(): number;
}

/** A stream publisher handler. */
export type PublisherHandler = (event: unknown, context?: HandlerContext) => Promise<StreamBatchResponse>;

/** Configuration of {@link createPublisher}. */
export interface PublisherConfig {
    /** DynamoDB client for the outbox table (a `DynamoDBClient`, or anything with its `send`). */
    readonly dynamodb: ClientLike;
    /** SNS client (`SNSClient`). */
    readonly sns: ClientLike;
    /** SQS client for the DLQ (`SQSClient`). */
    readonly sqs: ClientLike;
    /** The outbox table. */
    readonly tableName: string;
    /** The topic to publish to. */
    readonly topicArn: string;
    /** The DLQ URL for expired and undeliverable records. */
    readonly dlqUrl: string;
    /** Whether the topic is FIFO (sets `MessageGroupId` = ordering key or partition, `MessageDeduplicationId` = record id). @default false */
    readonly fifo?: boolean;
    /** Seconds a completed or expired record stays before TTL deletes it. @default 3600 */
    readonly completionGraceSeconds?: number;
    /** Permanent publish failures of one record before it goes to the DLQ (1–100). @default 3 */
    readonly maxPublishAttempts?: number;
    /** Records per claim on the keyed path (1–1000). @default 100 */
    readonly claimLimit?: number;
    /**
     * The fencing version of this function's claims. Every publisher and sweeper of a table uses the same version,
     * so they never steal each other's live claims; a crashed invocation's claims come back after the store's
     * stale-claim window.
     * @default 1n
     */
    readonly claimVersion?: bigint;
    /**
     * The store for the claim path. The default store's counters (`STORE_METRICS`) go into each invocation's EMF
     * line, without their `partition` tag (see {@link StoreMetricsRelay}); an injected store counts into its own sink.
     * @default new OutboxStore({ client: dynamodb, tableName, clock, logger, metrics: the invocation's, compactionGraceSeconds })
     */
    readonly store?: ClaimingStore;
    /** The clock. @default systemClock */
    readonly clock?: Clock;
    /** Logs: ids and counts, never payloads. @default silentLogger */
    readonly logger?: Logger;
    /** Where the EMF metric line of each invocation goes. @default stdout */
    readonly writeMetrics?: LineWriter;
    /**
     * Stop starting work when fewer than this many ms of the invocation remain: the publisher reports the next
     * record as failed (Lambda retries from it) instead of being cut off mid-record.
     * @default 5000 (the sweeper's default is 10000)
     */
    readonly reserveMs?: number;
}

/** What one invocation did, for tests and logs. */
export interface PublishOutcome {
    /** The handler's answer. */
    readonly response: StreamBatchResponse;
    /** Records ignored (not INSERTs of outbox items, or malformed). */
    readonly ignored: number;
}

interface Candidate {
    readonly sequenceNumber: string;
    readonly record: OutboxRecord;
}

interface StreamRecordShape {
    readonly eventName?: unknown;
    readonly eventSourceARN?: unknown;
    readonly dynamodb?: { readonly Keys?: StreamImage; readonly NewImage?: StreamImage; readonly SequenceNumber?: unknown };
}

/** One ordering key of one partition, as a set member. */
function heldKey(partition: string, orderingKey: string): string {
    return `${partition}\u0000${orderingKey}`;
}

/** What the records of a stream event hold for the publisher. */
interface EventCandidates {
    /** The outbox INSERTs, in shard order, up to the first record of another table's stream. */
    readonly candidates: Candidate[];
    /** Records ignored (not INSERTs of outbox items, or undecodable). */
    readonly ignored: number;
    /** Outbox INSERTs whose image cannot be decoded. */
    readonly undecodable: { sequenceNumber: string; error: unknown }[];
    /** The first record that does not come from the outbox table's stream; nothing after it is taken. */
    readonly misrouted?: { readonly sequenceNumber: string; readonly eventSourceARN: unknown };
}

/**
 * The outbox INSERTs of an event, in shard order, and how many records were ignored.
 *
 * @throws OutboxError `INVALID_CONFIG` when the event is not a DynamoDB stream event (see {@link foreignEventProblem}).
 */
function candidatesOf(event: unknown, tableName: string, logger: Logger): EventCandidates {
    const problem = foreignEventProblem(event);
    if (problem !== undefined) {
        // Acknowledging it would hide a wiring fault (a mapping on a queue or another stream): fail the invocation.
        const error = new OutboxError(
            "INVALID_CONFIG",
            `publisher: ${problem}, so it is not a DynamoDB stream event of the outbox table ${tableName}; the function is wired to the wrong event source: point the function's event source mapping at the outbox table's stream`,
            { context: { table: tableName } },
        );
        logger.error("publisher: the event is not a DynamoDB stream event of the outbox table; failing the invocation", { code: error.code, problem });
        throw error;
    }
    const records = (event as { Records: StreamRecordShape[] }).Records;
    const candidates: Candidate[] = [];
    const undecodable: { sequenceNumber: string; error: unknown }[] = [];
    let ignored = 0;
    for (const raw of records) {
        const data = raw.dynamodb;
        if (streamTableName(raw.eventSourceARN) !== tableName) {
            // Another table's stream: its images are not our records, and completing the row of the same key in our
            // table would skip our own event. Nothing after it is taken; the shard holds at it.
            return { candidates, ignored, undecodable, misrouted: { sequenceNumber: typeof data?.SequenceNumber === "string" ? data.SequenceNumber : "", eventSourceARN: raw.eventSourceARN } };
        }
        const sk = data?.Keys?.SK?.S;
        const sequenceNumber = data?.SequenceNumber;
        if (raw.eventName !== "INSERT" || typeof sk !== "string" || !sk.startsWith(RECORD_SK_PREFIX) || typeof sequenceNumber !== "string" || data?.NewImage === undefined) {
            ignored += 1;
            continue;
        }
        try {
            candidates.push({ sequenceNumber, record: unmarshalRecord(data.NewImage) });
        } catch (error) {
            undecodable.push({ sequenceNumber, error });
            ignored += 1;
        }
    }
    return { candidates, ignored, undecodable };
}

/** A handler's settings after defaults, with one invocation's delivery context. */
export interface PublisherSettings {
    /** Clients, names, limits and this invocation's metrics. */
    readonly ctx: DeliveryContext;
    /** The store for the claim path. */
    readonly store: ClaimingStore;
    /** Records per claim. */
    readonly claimLimit: number;
    /** The fencing version of this function's claims. */
    readonly claimVersion: bigint;
    /** Stop starting work when fewer than this many ms remain. */
    readonly reserveMs: number;
}

/** {@link PublisherSettings} before an invocation: everything but the metrics. */
export interface ResolvedDeliveryConfig extends Omit<PublisherSettings, "ctx"> {
    /** The delivery context without metrics (each invocation adds its own). */
    readonly base: Omit<DeliveryContext, "metrics">;
    /** What the default store counts into; {@link startInvocation} points it at the invocation's metrics. */
    readonly storeMetrics: StoreMetricsRelay;
    /**
     * The check, started at construction, that the topic and the DLQ are in their clients' regions (read from the
     * SDK clients' config, which resolves asynchronously): the `INVALID_CONFIG` error to throw from every
     * invocation, or `undefined`. It never rejects.
     */
    readonly regionCheck: Promise<OutboxError | undefined>;
}

/**
 * The store's {@link MetricsSink} for a handler: the store is built once per cold start, metrics once per
 * invocation, so the store counts into this relay and the relay adds each count to the invocation that is running
 * (Lambda runs one invocation at a time per instance). Counts made while no invocation is attached are dropped.
 *
 * The store tags its counters with `partition`; the relay drops the tag, so the EMF metric carries only the
 * handler's dimensions (`Function`, `Table`): a dimension per partition would be a custom metric per aggregate,
 * a CloudWatch cost trap. The store logs the partition (`partition_key`) on the line of each such event instead.
 */
export interface StoreMetricsRelay extends MetricsSink {
    /** Send later counts to `metrics` (an invocation's), or drop them (`undefined`). */
    attach(metrics: EmfMetrics | undefined): void;
}

/** Create a {@link StoreMetricsRelay} with nothing attached. */
export function createStoreMetricsRelay(): StoreMetricsRelay {
    let current: EmfMetrics | undefined;
    return {
        attach(metrics) {
            current = metrics;
        },
        count(name, value) {
            current?.count(name, value);
        },
    };
}

function requireText(name: string, value: unknown): void {
    if (typeof value !== "string" || value.trim() === "") {
        throw new OutboxError("INVALID_CONFIG", `${name} must be a non-empty string, got ${JSON.stringify(value)}`);
    }
}

/** A client's configured region: SDK v3 clients keep it as a provider in `config.region`. */
async function clientRegion(client: ClientLike): Promise<string | undefined> {
    const region = (client as { config?: { region?: unknown } }).config?.region;
    try {
        const value: unknown = typeof region === "function" ? await (region as () => unknown)() : region;
        return typeof value === "string" && value !== "" ? value : undefined;
    } catch {
        // No region configured: the client's own calls will say so.
        return undefined;
    }
}

/**
 * Whether the topic and the DLQ are in their clients' regions. SNS refuses a topic of another region
 * (`InvalidParameter: TopicArn`) for every record, and a DLQ the SQS client cannot reach leaves every expired or
 * refused record pending.
 */
async function regionProblem(who: string, config: PublisherConfig): Promise<OutboxError | undefined> {
    const topicRegion = topicArnRegion(config.topicArn);
    const snsRegion = await clientRegion(config.sns);
    if (topicRegion !== undefined && snsRegion !== undefined && topicRegion !== snsRegion) {
        return new OutboxError(
            "INVALID_CONFIG",
            `${who}: topicArn ${config.topicArn} is in region ${topicRegion}, but the SNS client's region is ${snsRegion}; SNS refuses a topic of another region (InvalidParameter: TopicArn); point topicArn at the topic in ${snsRegion}, or give the handler an SNS client of ${topicRegion}`,
            { context: { topicArn: config.topicArn, region: snsRegion } },
        );
    }
    const queueRegion = queueUrlRegion(config.dlqUrl);
    const sqsRegion = await clientRegion(config.sqs);
    if (queueRegion !== undefined && sqsRegion !== undefined && queueRegion !== sqsRegion) {
        return new OutboxError(
            "INVALID_CONFIG",
            `${who}: dlqUrl ${config.dlqUrl} is in region ${queueRegion}, but the SQS client's region is ${sqsRegion}; no record could be dead-lettered; point dlqUrl at the queue in ${sqsRegion}, or give the handler an SQS client of ${queueRegion}`,
            { context: { dlqUrl: config.dlqUrl, region: sqsRegion } },
        );
    }
    return undefined;
}

/**
 * Throw the region check's error, if any, logged at error: every invocation of a handler whose topic or DLQ is in
 * another region fails the same way, so the shard holds (and a sweep fails) until the deployment is fixed.
 *
 * @param resolved - The handler's settings.
 */
export async function assertRegions(resolved: ResolvedDeliveryConfig): Promise<void> {
    const problem = await resolved.regionCheck;
    if (problem === undefined) return;
    resolved.base.logger.error("outbox handler: the topic or the DLQ is in another region than its client; every invocation fails until the deployment is fixed", { code: problem.code, ...problem.context });
    throw problem;
}

function requireClient(name: string, value: unknown): void {
    if (typeof (value as ClientLike | undefined)?.send !== "function") {
        throw new OutboxError("INVALID_CONFIG", `${name} must be an AWS SDK v3 client (an object with send), got ${value === undefined ? "undefined" : typeof value}`);
    }
}

/**
 * Validate a {@link PublisherConfig} and fill its defaults. Shared with the sweeper.
 *
 * @param config - The handler configuration.
 * @param who - The factory's name, for error messages (`createPublisher`, `createSweeper`).
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the bad value and what is allowed.
 */
export function resolveDeliveryConfig(config: PublisherConfig, who: string): ResolvedDeliveryConfig {
    if (config === null || typeof config !== "object") throw new OutboxError("INVALID_CONFIG", `${who}: config must be an object`);
    requireClient(`${who}: dynamodb`, config.dynamodb);
    requireClient(`${who}: sns`, config.sns);
    requireClient(`${who}: sqs`, config.sqs);
    requireText(`${who}: tableName`, config.tableName);
    requireText(`${who}: topicArn`, config.topicArn);
    requireText(`${who}: dlqUrl`, config.dlqUrl);
    if (!isTopicArn(config.topicArn)) {
        throw new OutboxError("INVALID_CONFIG", `${who}: topicArn is ${JSON.stringify(config.topicArn)}; expected an SNS topic ARN, ${TOPIC_ARN_SHAPE}; pass the topic's arn (not its name)`, {
            context: { topicArn: config.topicArn },
        });
    }
    if (!isQueueUrl(config.dlqUrl)) {
        throw new OutboxError("INVALID_CONFIG", `${who}: dlqUrl is ${JSON.stringify(config.dlqUrl)}; expected an SQS queue URL, ${QUEUE_URL_SHAPE}; pass the queue's url (not its ARN or name)`, {
            context: { dlqUrl: config.dlqUrl },
        });
    }
    const fifo = config.fifo ?? false;
    if (typeof fifo !== "boolean") throw new OutboxError("INVALID_CONFIG", `${who}: fifo must be true or false, got ${JSON.stringify(fifo)}`);
    if (fifo !== config.topicArn.endsWith(".fifo")) {
        // A mismatch fails every message the same way (SNS refuses the group id, or requires one), so it is a fault
        // of the deployment: refuse it at cold start instead of dead-lettering the whole stream.
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: fifo is ${fifo} but topicArn ${config.topicArn} ${fifo ? "is not" : "is"} a FIFO topic (a name ending in .fifo); set fifo to ${!fifo}, or point topicArn at the matching topic`,
        );
    }
    const clock = config.clock ?? systemClock;
    const logger = config.logger ?? silentLogger;
    const completionGraceSeconds = integerIn(who, "completionGraceSeconds", config.completionGraceSeconds, HANDLER_LIMITS.completionGraceSeconds);
    const claimVersion = config.claimVersion ?? 1n;
    const storeMetrics = createStoreMetricsRelay();
    if (typeof claimVersion !== "bigint" || claimVersion < 1n) throw new OutboxError("INVALID_CONFIG", `${who}: claimVersion must be a bigint ≥ 1n, got ${String(claimVersion)}`);
    return {
        base: {
            dynamodb: config.dynamodb,
            sns: config.sns,
            sqs: config.sqs,
            tableName: config.tableName,
            topicArn: config.topicArn,
            dlqUrl: config.dlqUrl,
            fifo,
            completionGraceSeconds,
            maxPublishAttempts: integerIn(who, "maxPublishAttempts", config.maxPublishAttempts, HANDLER_LIMITS.maxPublishAttempts),
            clock,
            logger,
        },
        store: config.store ?? new OutboxStore({ client: config.dynamodb, tableName: config.tableName, clock, logger, metrics: storeMetrics, compactionGraceSeconds: completionGraceSeconds }),
        storeMetrics,
        claimLimit: integerIn(who, "claimLimit", config.claimLimit, HANDLER_LIMITS.claimLimit),
        reserveMs: integerIn(who, "reserveMs", config.reserveMs, who === "createSweeper" ? HANDLER_LIMITS.sweeperReserveMs : HANDLER_LIMITS.publisherReserveMs),
        claimVersion,
        regionCheck: regionProblem(who, config).catch(() => undefined),
    };
}

/**
 * The record to deliver, decoded from the row the status read returned.
 *
 * @throws OutboxError `INVALID_PAYLOAD` when the row cannot be decoded; `UNAVAILABLE` when it was not read.
 */
function tableRecord(state: RecordState): OutboxRecord {
    if (state.item === undefined) throw new OutboxError("UNAVAILABLE", "publisher: the consistent status read left the record unread (UnprocessedKeys)");
    return unmarshalRecord(state.item);
}

function failureAt(sequenceNumber: string): StreamBatchResponse {
    return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
}

/**
 * Process one stream event with injected clients: the whole publisher except the Lambda wiring.
 *
 * @param settings - From {@link resolveDeliveryConfig}, with this invocation's metrics.
 * @param event - The Lambda DynamoDB stream event (checked defensively).
 * @param invocationId - Makes the claim owner id unique per invocation.
 * @param timeLeft - Milliseconds left in the invocation. @default unlimited
 */
export async function processStreamEvent(settings: PublisherSettings, event: unknown, invocationId: string, timeLeft: () => number = () => Number.POSITIVE_INFINITY): Promise<PublishOutcome> {
    const { ctx, store } = settings;
    const { candidates, ignored, undecodable, misrouted } = candidatesOf(event, ctx.tableName, ctx.logger);
    ctx.metrics.count(DELIVERY_METRICS.ignored, ignored);
    for (const u of undecodable) {
        // An item under OUTBOX# that is not a record this package can read: nothing to publish or dead-letter.
        ctx.logger.error("publisher: an OUTBOX# item could not be decoded; skipped", { sequenceNumber: u.sequenceNumber, code: errorCodeOf(u.error) });
    }
    /** The answer once the records before the misrouted one (if any) were delivered: held at it. */
    const done = (): PublishOutcome => {
        if (misrouted === undefined) return { response: { batchItemFailures: [] }, ignored };
        ctx.logger.error(
            "publisher: a record comes from the stream of another table, not the outbox table's; the shard is held at it until the mapping is fixed: point the function's event source mapping at the outbox table's stream",
            { code: "INVALID_CONFIG", sequenceNumber: misrouted.sequenceNumber, eventSourceARN: typeof misrouted.eventSourceARN === "string" ? misrouted.eventSourceARN : String(misrouted.eventSourceARN), expected: expectedStreamArn(ctx.tableName) },
        );
        return { response: failureAt(misrouted.sequenceNumber), ignored };
    };
    if (candidates.length === 0) return done();

    let states;
    try {
        states = await readRecordStates(ctx, candidates.map((c) => c.record));
    } catch (err) {
        ctx.logger.error("publisher: status read failed; retrying the batch", { code: errorCodeOf(err) });
        return { response: failureAt(candidates[0]!.sequenceNumber), ignored };
    }

    const token: FencingToken = { owner: `publisher/${invocationId}`, version: settings.claimVersion };
    const drained = new Set<string>();
    const handledByClaim = new Set<string>();
    // Ordering keys (partition + key) whose head failed in this invocation.
    const heldKeys = new Set<string>();
    // Records (partition, envelope, binding) already taken from this event.
    const seen = new Set<string>();
    let batch: (KeylessItem & { readonly candidate: Candidate })[] = [];

    /**
     * Send a keyless record to the DLQ. When the DLQ cannot take it (down, or refusing it), retrying the stream
     * batch would hold every record behind it for a fault that is not theirs: the record stays pending, and the
     * sweeper retries it on its next run. Returns whether it was sent.
     */
    const deadLetterOrLeave = async (record: OutboxRecord, reason: DeadLetterReason, detail: { attempts?: number; errorCode?: string; errorMessage?: string }): Promise<boolean> => {
        try {
            await sendToDeadLetterQueue(ctx, record, reason, detail);
            return true;
        } catch (err) {
            ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
            ctx.logger.error("publisher: the DLQ could not take a record; it stays pending for the sweeper", { recordId: record.recordId, partition: record.partition, reason, code: errorCodeOf(err) });
            return false;
        }
    };
    /** Leave to the sweeper a keyed record whose key is held by a failed head (see {@link ClaimedDeliveryResult.heldKeys}). */
    const leaveKeyed = (record: OutboxRecord): void => {
        ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
        ctx.logger.warn("publisher: the head of this record's ordering key failed; the record stays pending for the sweeper", { recordId: record.recordId, partition: record.partition });
    };

    /**
     * Publish the buffered keyless records (their calls run concurrently, see `runtime/keyless-publish.ts`);
     * returns the SequenceNumber of the lowest record that failed, if any.
     */
    const flush = async (): Promise<string | undefined> => {
        const pending = batch;
        batch = [];
        if (pending.length === 0) return undefined;
        const calls = publishBatches(pending, false);
        const outcomes = await publishAndComplete(ctx, calls);
        // The bookkeeping reads every entry in shard order, whatever order the calls ended in, and only the first
        // failure sets failedAt: a later failure (a refused entry, a failed completion, a call not sent) never
        // replaces it, or Lambda would rewind past a record that was not delivered.
        let failedAt: string | undefined;
        for (let c = 0; c < calls.length; c += 1) {
            const call = calls[c]!;
            const outcome = outcomes[c]!;
            for (let j = 0; j < call.length; j += 1) {
                const { candidate } = call[j]!;
                if (!outcome.sent) {
                    // Due to start after an entry was refused, so never sent: it stays pending.
                    failedAt ??= candidate.sequenceNumber;
                    continue;
                }
                const result = outcome.results[j]!;
                try {
                    if (result.ok) {
                        notePublished(ctx, candidate.record);
                        if (failedAt !== undefined) ctx.metrics.count(DELIVERY_METRICS.publishedAfterFailure);
                        const completion = outcome.completionErrors[j];
                        if (completion !== undefined) throw completion.error;
                        continue;
                    }
                    if (failedAt !== undefined) continue;
                    ctx.metrics.count(DELIVERY_METRICS.publishFailed);
                    const attempts = result.permanent ? await countPermanentFailure(ctx, candidate.record) : undefined;
                    if (result.permanent && attempts === undefined) continue; // already terminal: someone else handled it
                    if (attempts !== undefined && attempts >= ctx.maxPublishAttempts) {
                        if (!(await deadLetterOrLeave(candidate.record, "publish-rejected", { attempts, errorCode: result.code, errorMessage: result.message }))) continue;
                        await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => completePending(ctx, candidate.record));
                        continue;
                    }
                    if (result.permanent) {
                        // The refusal is this record's own: retrying the shard would hold every record behind it. The
                        // sweeper retries it on its runs until maxPublishAttempts, then dead-letters it.
                        ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
                        ctx.logger.warn("outbox publish refused; the record stays pending for the sweeper", { recordId: candidate.record.recordId, partition: candidate.record.partition, code: result.code, permanent: true, attempts });
                        continue;
                    }
                    ctx.logger.warn("outbox publish failed", { recordId: candidate.record.recordId, partition: candidate.record.partition, code: result.code, permanent: false });
                    failedAt = candidate.sequenceNumber;
                } catch (err) {
                    ctx.logger.error("publisher: a step after publishing failed", { recordId: candidate.record.recordId, code: errorCodeOf(err) });
                    failedAt ??= candidate.sequenceNumber;
                }
            }
        }
        return failedAt;
    };

    for (let i = 0; i < candidates.length; i += 1) {
        const image = candidates[i]!;
        if (timeLeft() < settings.reserveMs) {
            const failed = await flush();
            ctx.logger.warn("publisher: running out of time; Lambda retries the rest of the batch", { sequenceNumber: failed ?? image.sequenceNumber });
            return { response: failureAt(failed ?? image.sequenceNumber), ignored };
        }
        const state = states[i]!;
        const identity = `${image.record.partition}\u0000${image.record.envelopeId}\u0000${image.record.bindingId}`;
        if (seen.has(identity)) {
            // The same INSERT twice in one event: publishing it twice would send a duplicate.
            ctx.metrics.count(DELIVERY_METRICS.duplicatesAvoided);
            continue;
        }
        seen.add(identity);
        if (state.status === undefined || state.status === STATUS.completed || state.status === STATUS.expired) {
            ctx.metrics.count(DELIVERY_METRICS.duplicatesAvoided);
            continue;
        }
        // What goes out is the row as read from the outbox table, never the stream image: the image only says
        // which row to read.
        let row: OutboxRecord;
        try {
            row = tableRecord(state);
        } catch (err) {
            if (isOutboxError(err, "INVALID_PAYLOAD")) {
                ctx.metrics.count(DELIVERY_METRICS.ignored);
                ctx.logger.error("publisher: an OUTBOX# item could not be decoded; skipped", { sequenceNumber: image.sequenceNumber, code: errorCodeOf(err) });
                continue;
            }
            const failed = await flush();
            ctx.logger.warn("publisher: the status read left this record unread; retrying from it", { sequenceNumber: failed ?? image.sequenceNumber, code: errorCodeOf(err) });
            return { response: failureAt(failed ?? image.sequenceNumber), ignored };
        }
        const candidate: Candidate = { sequenceNumber: image.sequenceNumber, record: row };
        const { record } = candidate;
        if (record.orderingKey !== undefined) {
            if (handledByClaim.has(record.recordId) || drained.has(record.partition)) continue;
            const failed = await flush();
            if (failed !== undefined) return { response: failureAt(failed), ignored };
            if (heldKeys.has(heldKey(record.partition, record.orderingKey))) {
                // Its key's head failed earlier in this invocation: trying again now would count the same refusal twice.
                leaveKeyed(record);
                continue;
            }
            const result = await drainPartition(ctx, store, record.partition, token, { limit: settings.claimLimit, maxRounds: 10, until: record.recordId, keepGoing: () => timeLeft() >= settings.reserveMs });
            for (const id of result.handled) handledByClaim.add(id);
            for (const key of result.heldKeys) heldKeys.add(heldKey(record.partition, key));
            if (result.failure !== undefined) {
                const attributes = { recordId: record.recordId, partition: record.partition, failedRecordId: result.failure.recordId, code: errorCodeOf(result.failure.error) };
                if (result.stopped !== true && !handledByClaim.has(record.recordId) && heldKeys.has(heldKey(record.partition, record.orderingKey))) {
                    leaveKeyed(record);
                    continue;
                }
                if (result.stopped === true || !handledByClaim.has(record.recordId)) {
                    ctx.logger.warn("publisher: keyed delivery failed; retrying from this record", attributes);
                    return { response: failureAt(candidate.sequenceNumber), ignored };
                }
                // Another key of the partition failed and is held; this record's key went on and it was delivered.
                ctx.logger.warn("publisher: a record of another ordering key failed and holds its key; this record was delivered", attributes);
                continue;
            }
            if (result.exhausted) drained.add(record.partition);
            else if (!handledByClaim.has(record.recordId)) {
                // Out of rounds or time before reaching this record: Lambda retries from it and the drain goes on.
                return { response: failureAt(candidate.sequenceNumber), ignored };
            }
            continue;
        }
        if (state.status === STATUS.claimed || handledByClaim.has(record.recordId)) continue; // a claimer holds it and delivers it
        if (isExpired(record, ctx.clock.now())) {
            const failed = await flush();
            if (failed !== undefined) return { response: failureAt(failed), ignored };
            // An expired record is never published, so nothing waits behind it: if the DLQ cannot take it, the sweeper's expiry pass will.
            if (!(await deadLetterOrLeave(record, "expired", { attempts: state.publishAttempts }))) continue;
            ctx.metrics.count(DELIVERY_METRICS.expired);
            try {
                await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => expirePending(ctx, record));
            } catch (err) {
                ctx.logger.error("publisher: marking a dead-lettered expired record failed", { recordId: record.recordId, code: errorCodeOf(err) });
                return { response: failureAt(candidate.sequenceNumber), ignored };
            }
            continue;
        }
        batch.push({ candidate, record, message: outboundMessage(record) });
        if (batch.length === KEYLESS_RECORDS_PER_FLUSH) {
            const failed = await flush();
            if (failed !== undefined) return { response: failureAt(failed), ignored };
        }
    }
    const failed = await flush();
    if (failed !== undefined) return { response: failureAt(failed), ignored };
    return done();
}

/**
 * What each invocation of a handler starts with: its own metrics (the caller flushes them as EMF lines; the
 * default store's counters are attached to them too) and the milliseconds it has left. Shared with the sweeper.
 *
 * @param resolved - The handler's settings, for the table name and the clock.
 * @param writeMetrics - Where the EMF line goes. @default stdout
 * @param fn - The `Function` dimension.
 * @param context - The Lambda context; without one, time is unlimited.
 */
export function startInvocation(
    resolved: ResolvedDeliveryConfig,
    writeMetrics: LineWriter | undefined,
    fn: HandlerFunction,
    context: HandlerContext | undefined,
): { metrics: EmfMetrics; timeLeft: () => number } {
    const metrics = createEmfMetrics({
        dimensions: handlerDimensions(fn, resolved.base.tableName),
        now: () => resolved.base.clock.now(),
        ...(writeMetrics !== undefined ? { write: writeMetrics } : {}),
    });
    resolved.storeMetrics.attach(metrics);
    const timeLeft = () => (context?.getRemainingTimeInMillis ? context.getRemainingTimeInMillis() : Number.POSITIVE_INFINITY);
    return { metrics, timeLeft };
}

/**
 * Create the stream publisher handler. Clients and the store are built by the caller once per cold start;
 * each invocation gets its own metrics, flushed as one EMF line.
 *
 * @param config - Clients, names and limits.
 * @returns `(event, context?) => Promise<{ batchItemFailures }>` for a Lambda function subscribed to the table's stream with `ReportBatchItemFailures`.
 * @throws OutboxError `INVALID_CONFIG` when the config is incomplete.
 * @example
 * export const handler = createPublisher({
 *   dynamodb: new DynamoDBClient({}), sns: new SNSClient({}), sqs: new SQSClient({}),
 *   tableName: process.env.OUTBOX_TABLE_NAME!, topicArn: process.env.OUTBOX_TOPIC_ARN!, dlqUrl: process.env.OUTBOX_DLQ_URL!,
 * });
 */
export function createPublisher(config: PublisherConfig): PublisherHandler {
    const resolved = resolveDeliveryConfig(config, "createPublisher");
    return async (event, context) => {
        await assertRegions(resolved);
        const { metrics, timeLeft } = startInvocation(resolved, config.writeMetrics, HANDLER_FUNCTIONS.publisher, context);
        try {
            const outcome = await processStreamEvent({ ...resolved, ctx: { ...resolved.base, metrics } }, event, context?.awsRequestId ?? randomUUID(), timeLeft);
            return outcome.response;
        } finally {
            metrics.flush();
        }
    };
}
