/**
 * One stream batch through the publisher: the records of each batch are published to SNS and completed, and the
 * first record that could not be delivered is reported so Lambda retries from there.
 *
 * Per batch, in shard order:
 * 1. An event that is not a DynamoDB stream event fails the invocation (`INVALID_CONFIG`, naming what arrived:
 *    `runtime/relay/stream-source.ts`). A record of another table's stream holds the shard: the batch is reported at it,
 *    with an error log naming its `eventSourceARN`. Records that are not INSERTs of an `OUTBOX#` item are ignored
 *    (the mapping's filter should already drop them; the code does not rely on the deployment).
 *    (`runtime/relay/stream-candidates.ts`)
 * 2. One consistent BatchGetItem reads every record from the table: records already completed or expired (a
 *    redelivered batch), or held by a claimer, are skipped, and what is delivered is the row read, never the
 *    stream image. Skips of terminal records count as `DuplicatesAvoided`.
 * 3. Expired records go to the DLQ with reason `expired` and are marked expired; they are never published.
 * 4. Keyless records are published with PublishBatch, up to 10 per call, then completed conditionally
 *    (pending → completed, `ttl` = now + grace, `claim_sort` and `has_expiry` removed). Up to 100 of them at a
 *    time, their calls run concurrently and each call's completions start when it returns
 *    (`runtime/relay/keyless-publish.ts`); on a FIFO topic one message group's calls still go one after the other.
 *    Their outcomes are read in shard order (`runtime/relay/keyless-outcomes.ts`).
 * 5. A record with an ordering key is a doorbell: after the walk, the partitions of the batch's doorbells are
 *    drained together through the store's claim path (ConsistentRead, head-of-line rule), published in rounds
 *    that carry the heads of many keys per PublishBatch call and completed in order with the claim's token
 *    (`runtime/relay/keyed-doorbell.ts`, `runtime/relay/claimed-delivery.ts`, `runtime/relay/lane-delivery.ts`).
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
 * Each step returns the SequenceNumber Lambda retries from, or `undefined` when the batch goes on.
 *
 * @packageDocumentation
 */
import type { ClaimingStore } from "./claiming-store";
import {
    afterSend,
    DELIVERY_METRICS,
    expirePending,
    isExpired,
    readRecordStates,
    type DeliveryContext,
    type RecordState,
} from "./delivery";
import { errorCodeOf, isOutboxError, OutboxError } from "../errors";
import {
    answerDoorbells,
    startDoorbells,
    type Doorbell,
    type DoorbellSettings,
    type KeyedDoorbells,
} from "./keyed-doorbell";
import { deadLetterOrLeave, publishKeyless, type BufferedKeyless } from "./keyless-outcomes";
import { KEYLESS_RECORDS_PER_FLUSH } from "./keyless-publish";
import { outboundMessage } from "../record/message";
import { unmarshalRecord, type OutboxRecord } from "../record/codec";
import { STATUS } from "../schema";
import { candidatesOf, type Candidate, type EventCandidates } from "./stream-candidates";
import { expectedStreamArn } from "./stream-source";

/** What a stream handler returns: the SequenceNumber of the first record to retry, if any. */
export interface StreamBatchResponse {
    /** At most one entry: the first record that could not be delivered. Lambda retries from it. */
    batchItemFailures: { itemIdentifier: string }[];
}

/** What one invocation did, for tests and logs. */
export interface PublishOutcome {
    /** The handler's answer. */
    readonly response: StreamBatchResponse;
    /** Records ignored (not INSERTs of outbox items, or malformed). */
    readonly ignored: number;
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

/** One invocation's walk over a batch: its settings and what it has done so far. */
interface StreamRun {
    readonly settings: PublisherSettings;
    readonly timeLeft: () => number;
    /** What the keyed path's drains need. */
    readonly doorbell: DoorbellSettings;
    /** What the keyed path has done. */
    readonly doorbells: KeyedDoorbells;
    /** Records (partition, envelope, binding) already taken from this event. */
    readonly seen: Set<string>;
    /** Keyless records waiting to be published, in shard order. */
    keyless: BufferedKeyless[];
    /** The keyed records of the batch, in shard order: their partitions are drained together at the end. */
    readonly rung: Doorbell[];
}

/**
 * Process one stream event with injected clients: the whole publisher except the Lambda wiring.
 *
 * @param settings - From {@link resolveDeliveryConfig}, with this invocation's metrics.
 * @param event - The Lambda DynamoDB stream event (checked defensively).
 * @param invocationId - Makes the claim owner id unique per invocation.
 * @param timeLeft - Milliseconds left in the invocation. @default unlimited
 */
export async function processStreamEvent(
    settings: PublisherSettings,
    event: unknown,
    invocationId: string,
    timeLeft: () => number = () => Number.POSITIVE_INFINITY,
): Promise<PublishOutcome> {
    const { ctx } = settings;
    const read = readCandidates(ctx, event);
    if (read.candidates.length === 0) return outcome(ctx, read, undefined);
    const states = await readStates(ctx, read.candidates);
    if (states === undefined) return outcome(ctx, read, read.candidates[0]!.sequenceNumber);
    const run = startRun(settings, invocationId, timeLeft);
    let stopAt: string | undefined;
    for (let i = 0; i < read.candidates.length && stopAt === undefined; i += 1)
        stopAt = await takeRecord(run, read.candidates[i]!, states[i]!);
    stopAt ??= await flushKeyless(run);
    // Only the doorbells before the first keyless failure ring (no work starts after a known failure), so the
    // first doorbell not delivered, if any, is below it: the lowest failure.
    const position = new Map(read.candidates.map((c, i) => [c.sequenceNumber, i]));
    const limit = stopAt === undefined ? Number.POSITIVE_INFINITY : (position.get(stopAt) ?? Number.POSITIVE_INFINITY);
    const rung = run.rung.filter((d) => (position.get(d.candidate.sequenceNumber) ?? 0) < limit);
    const keyedStop = await answerDoorbells(run.doorbell, run.doorbells, rung);
    return outcome(ctx, read, keyedStop ?? stopAt);
}

/** The event's outbox INSERTs (step 1), with the ignored ones counted and the undecodable ones logged. */
function readCandidates(ctx: DeliveryContext, event: unknown): EventCandidates {
    const read = candidatesOf(event, ctx.tableName, ctx.logger, ctx.origin);
    ctx.metrics.count(DELIVERY_METRICS.ignored, read.ignored);
    for (const u of read.undecodable) {
        // An item under OUTBOX# that is not a record this package can read: nothing to publish or dead-letter.
        ctx.logger.error("publisher: an OUTBOX# item could not be decoded; skipped", {
            sequenceNumber: u.sequenceNumber,
            code: errorCodeOf(u.error),
        });
    }
    return read;
}

/** Every candidate's row, read consistently (step 2); `undefined`, logged, when the read failed. */
async function readStates(ctx: DeliveryContext, candidates: readonly Candidate[]): Promise<RecordState[] | undefined> {
    try {
        return await readRecordStates(
            ctx,
            candidates.map((c) => c.record),
        );
    } catch (err) {
        ctx.logger.error("publisher: status read failed; retrying the batch", { code: errorCodeOf(err) });
        return undefined;
    }
}

/**
 * The invocation's answer: retry from `stopAt`; or, once every record before a misrouted one (if any) was
 * delivered, hold the shard at it.
 */
function outcome(ctx: DeliveryContext, read: EventCandidates, stopAt: string | undefined): PublishOutcome {
    const { ignored, misrouted } = read;
    if (stopAt !== undefined) return { response: failureAt(stopAt), ignored };
    if (misrouted === undefined) return { response: { batchItemFailures: [] }, ignored };
    ctx.logger.error(
        "publisher: a record comes from the stream of another table, not the outbox table's; the shard is held at it until the mapping is fixed: point the function's event source mapping at the outbox table's stream",
        {
            code: "INVALID_CONFIG",
            sequenceNumber: misrouted.sequenceNumber,
            eventSourceARN:
                typeof misrouted.eventSourceARN === "string"
                    ? misrouted.eventSourceARN
                    : String(misrouted.eventSourceARN),
            expected: expectedStreamArn(ctx.tableName),
        },
    );
    return { response: failureAt(misrouted.sequenceNumber), ignored };
}

function failureAt(sequenceNumber: string): StreamBatchResponse {
    return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
}

function startRun(settings: PublisherSettings, invocationId: string, timeLeft: () => number): StreamRun {
    return {
        settings,
        timeLeft,
        doorbell: {
            ctx: settings.ctx,
            store: settings.store,
            claimLimit: settings.claimLimit,
            keepGoing: () => timeLeft() >= settings.reserveMs,
        },
        doorbells: startDoorbells(invocationId, settings.claimVersion),
        seen: new Set(),
        keyless: [],
        rung: [],
    };
}

/**
 * The decision for one record, in shard order: stop for time; skip a repeat; deliver the row read from the table,
 * never the stream image, through the keyed doorbell, the DLQ (expired) or the keyless buffer.
 */
async function takeRecord(run: StreamRun, image: Candidate, state: RecordState): Promise<string | undefined> {
    const { ctx } = run.settings;
    if (run.timeLeft() < run.settings.reserveMs) return stopForTime(run, image);
    if (isRepeat(run, image.record, state)) {
        ctx.metrics.count(DELIVERY_METRICS.duplicatesAvoided);
        return undefined;
    }
    let row: OutboxRecord;
    try {
        row = tableRecord(state);
    } catch (err) {
        return rowNotDelivered(run, image, err);
    }
    const candidate: Candidate = { sequenceNumber: image.sequenceNumber, record: row };
    if (row.orderingKey !== undefined) return keyedRecord(run, candidate, row.orderingKey);
    if (state.status === STATUS.claimed) return undefined; // a claimer holds it and delivers it
    if (isExpired(row, ctx.clock.now())) return expiredRecord(run, candidate, state);
    return bufferKeyless(run, candidate);
}

/** Out of time: what is buffered goes out, and Lambda retries from the first record not delivered. */
async function stopForTime(run: StreamRun, image: Candidate): Promise<string> {
    const failed = await flushKeyless(run);
    run.settings.ctx.logger.warn("publisher: running out of time; Lambda retries the rest of the batch", {
        sequenceNumber: failed ?? image.sequenceNumber,
    });
    return failed ?? image.sequenceNumber;
}

/** A record not to deliver again: the same INSERT twice in one event (publishing it twice would send a duplicate), or a row already terminal. */
function isRepeat(run: StreamRun, record: OutboxRecord, state: RecordState): boolean {
    const identity = `${record.partition}\u0000${record.envelopeId}\u0000${record.bindingId}`;
    if (run.seen.has(identity)) return true;
    run.seen.add(identity);
    return state.status === undefined || state.status === STATUS.completed || state.status === STATUS.expired;
}

/**
 * The record to deliver, decoded from the row the status read returned.
 *
 * @throws OutboxError `INVALID_PAYLOAD` when the row cannot be decoded; `UNAVAILABLE` when it was not read.
 */
function tableRecord(state: RecordState): OutboxRecord {
    if (state.item === undefined)
        throw new OutboxError(
            "UNAVAILABLE",
            "publisher: the consistent status read left the record unread (UnprocessedKeys)",
        );
    return unmarshalRecord(state.item);
}

/** A row that cannot be decoded is skipped; one the read left unread stops the batch at it. */
async function rowNotDelivered(run: StreamRun, image: Candidate, err: unknown): Promise<string | undefined> {
    const { ctx } = run.settings;
    if (isOutboxError(err, "INVALID_PAYLOAD")) {
        ctx.metrics.count(DELIVERY_METRICS.ignored);
        ctx.logger.error("publisher: an OUTBOX# item could not be decoded; skipped", {
            sequenceNumber: image.sequenceNumber,
            code: errorCodeOf(err),
        });
        return undefined;
    }
    const failed = await flushKeyless(run);
    ctx.logger.warn("publisher: the status read left this record unread; retrying from it", {
        sequenceNumber: failed ?? image.sequenceNumber,
        code: errorCodeOf(err),
    });
    return failed ?? image.sequenceNumber;
}

/** A keyed record rings its partition's doorbell (step 5): it is answered with the batch's other doorbells, after the walk. */
function keyedRecord(run: StreamRun, candidate: Candidate, orderingKey: string): undefined {
    run.rung.push({ candidate, orderingKey });
    return undefined;
}

/** An expired keyless record goes to the DLQ and is marked expired (step 3), never published. */
async function expiredRecord(run: StreamRun, candidate: Candidate, state: RecordState): Promise<string | undefined> {
    const { ctx } = run.settings;
    const { record } = candidate;
    const failed = await flushKeyless(run);
    if (failed !== undefined) return failed;
    // An expired record is never published, so nothing waits behind it: if the DLQ cannot take it, the sweeper's expiry pass will.
    if (!(await deadLetterOrLeave(ctx, record, "expired", { attempts: state.publishAttempts }))) return undefined;
    ctx.metrics.count(DELIVERY_METRICS.expired);
    try {
        await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => expirePending(ctx, record));
    } catch (err) {
        ctx.logger.error("publisher: marking a dead-lettered expired record failed", {
            recordId: record.recordId,
            code: errorCodeOf(err),
        });
        return candidate.sequenceNumber;
    }
    return undefined;
}

/** A keyless record joins the buffer (step 4), which goes out when it is full. */
async function bufferKeyless(run: StreamRun, candidate: Candidate): Promise<string | undefined> {
    run.keyless.push({
        candidate,
        record: candidate.record,
        message: outboundMessage(candidate.record, run.settings.ctx.source),
    });
    return run.keyless.length === KEYLESS_RECORDS_PER_FLUSH ? flushKeyless(run) : undefined;
}

/** Publish what is buffered and empty the buffer; returns the SequenceNumber of the lowest record that failed. */
async function flushKeyless(run: StreamRun): Promise<string | undefined> {
    const pending = run.keyless;
    run.keyless = [];
    return publishKeyless(run.settings.ctx, pending);
}
