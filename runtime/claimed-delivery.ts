/**
 * Delivering records through the store's claim path: claim a partition's oldest records with a fencing token,
 * publish them in order, complete them with the token. The keyed path of the stream publisher and the sweeper
 * both use it.
 *
 * Why a claim for keyed records: DynamoDB Streams orders records per item, and each outbox record is its own
 * item, so a stream batch cannot prove that no older record with the same ordering key is still unpublished.
 * The store's Claim reads the partition with ConsistentRead and applies the head-of-line rule, so what it
 * returns is safe to publish in the order it returns it.
 *
 * @packageDocumentation
 */
import {
    afterSend,
    DELIVERY_METRICS,
    countPermanentFailure,
    expireClaimed,
    isExpired,
    notePublished,
    publishBatch,
    publishBatches,
    sendToDeadLetterQueue,
    type DeliveryContext,
    type PublishResult,
} from "./delivery";
import { isOutboxError, OutboxError } from "./errors";
import { outboundMessage, type OutboundMessage } from "./message";
import type { OutboxRecord } from "./record/codec";
import type { FencingToken } from "./store/transitions";

/** The part of the store the claim path uses. `OutboxStore` satisfies it. */
export interface ClaimingStore {
    /**
     * Claim up to `limit` of the partition's oldest claimable records, oldest first. A store that returns a batch
     * cut short by a failure (the truncation rule) calls `options.onTruncated`, so the drain does not take it for
     * the end of the backlog.
     */
    claim(partition: string, token: FencingToken, limit: number, options?: { readonly onTruncated?: (error: unknown) => void }): Promise<OutboxRecord[]>;
    /** Complete records this token holds. */
    complete(ids: readonly string[], token: FencingToken): Promise<void>;
    /** Release records this token holds back to pending. */
    release(ids: readonly string[], token: FencingToken): Promise<void>;
}

/** How a claimed batch ended. */
export interface ClaimedDeliveryResult {
    /** Ids published and completed, or dead-lettered, in this call. */
    readonly handled: readonly string[];
    /**
     * What went wrong: the fault that stopped the batch when {@link ClaimedDeliveryResult.stopped} (every record
     * not handled was released), else the first record that could not be delivered (it and the later records of
     * its ordering key were released; the other keys went on).
     */
    readonly failure?: { readonly recordId: string; readonly error: unknown };
    /** The ordering keys a failed record holds back: their records were released, not tried. */
    readonly heldKeys: readonly string[];
    /** Whether a fault that is not one record's (SNS or DynamoDB failing) stopped the batch; `failure` is that fault. */
    readonly stopped: boolean;
    /** Another claimer took over (the token went stale); it delivers the rest. */
    readonly preempted?: boolean;
}

interface Item {
    readonly record: OutboxRecord;
    readonly message: OutboundMessage;
}

/** A record that could not be delivered, or the fault that stopped the batch at it. */
interface RecordFailure {
    readonly recordId: string;
    readonly error: unknown;
}

/** One {@link deliverClaimed} call: the claimed records, and what became of them so far. */
interface ClaimedBatch {
    readonly ctx: DeliveryContext;
    readonly store: ClaimingStore;
    readonly token: FencingToken;
    readonly claimed: readonly OutboxRecord[];
    /** Ids published and completed, or dead-lettered. */
    readonly handled: string[];
    /** The ordering keys a failed record holds back. */
    readonly heldKeys: string[];
    /** The first record that could not be delivered. */
    failure: RecordFailure | undefined;
}

/** How a batch ends early: at a fault that stops it, or because another claimer took over. */
interface BatchEnd {
    readonly failure?: RecordFailure;
    readonly preempted?: boolean;
}

/** What one PublishBatch call of claimed records came to. */
interface CallOutcome {
    /** Published or dead-lettered: to complete with the token. */
    readonly toComplete: string[];
    /** Of those, the ones dead-lettered. */
    readonly deadLettered: string[];
    /** The first fault in the call that is not one record's: it stops the batch. */
    stop: RecordFailure | undefined;
}

async function releaseQuietly(ctx: DeliveryContext, store: ClaimingStore, ids: readonly string[], token: FencingToken): Promise<void> {
    if (ids.length === 0) return;
    try {
        await store.release(ids, token);
    } catch (err) {
        // A failed release only delays those records until the stale-claim window lets a claimer take them back.
        ctx.logger.warn("outbox release failed; the records become claimable after the stale-claim window", { count: ids.length, code: isOutboxError(err) ? err.code : "UNKNOWN" });
    }
}

/**
 * Publish claimed records in order and complete them with the token. Keyed records are never batched with a
 * later record of the same key. Expired records go to the DLQ (reason `expired`) and are marked expired; a
 * record SNS refuses permanently goes to the DLQ after `maxPublishAttempts` and is completed.
 *
 * One record's failure holds only its own ordering key: a refusal SNS blames on the message, or a DLQ that
 * refuses or cannot take the record, releases that record and the later records of its key, and the other keys
 * (and keyless records) of the batch go on. A fault that is not the record's (SNS throttling or down, a
 * deployment fault, a failed DynamoDB write) stops the batch: everything not yet handled is released.
 *
 * @param ctx - Clients, names and metrics.
 * @param store - The store that issued the claim.
 * @param claimed - The claimed records, oldest first, as Claim returned them.
 * @param token - The token that holds them.
 */
export async function deliverClaimed(ctx: DeliveryContext, store: ClaimingStore, claimed: readonly OutboxRecord[], token: FencingToken): Promise<ClaimedDeliveryResult> {
    const batch: ClaimedBatch = { ctx, store, token, claimed, handled: [], heldKeys: [], failure: undefined };
    // Records not yet tried, oldest first; a held key's records stay here and are released at the end.
    let rest = claimed.filter((r) => !isHeld(batch, r));
    while (rest.length > 0) {
        const now = ctx.clock.now();
        const head = rest[0]!;
        let end: BatchEnd | undefined;
        if (isExpired(head, now)) {
            rest = rest.slice(1);
            end = await deadLetterExpired(batch, head);
        } else {
            const items = leadingCall(rest, now);
            const sent = items.map((i) => i.record.recordId);
            rest = rest.filter((r) => !sent.includes(r.recordId));
            end = await publishCall(batch, items);
        }
        if (end !== undefined) return finish(batch, end);
        rest = rest.filter((r) => !isHeld(batch, r));
    }
    return finish(batch, {});
}

function isHeld(batch: ClaimedBatch, r: OutboxRecord): boolean {
    return r.orderingKey !== undefined && batch.heldKeys.includes(r.orderingKey);
}

/** Hold `r`'s ordering key (its later records are released, not tried); the batch's first failure is kept. */
function hold(batch: ClaimedBatch, r: OutboxRecord, error: unknown): void {
    batch.failure ??= { recordId: r.recordId, error };
    if (r.orderingKey !== undefined && !batch.heldKeys.includes(r.orderingKey)) batch.heldKeys.push(r.orderingKey);
}

/** Release what was not handled, and say how the batch ended. */
async function finish(batch: ClaimedBatch, end: BatchEnd): Promise<ClaimedDeliveryResult> {
    const { handled, heldKeys } = batch;
    await releaseQuietly(batch.ctx, batch.store, batch.claimed.map((r) => r.recordId).filter((id) => !handled.includes(id)), batch.token);
    const first = end.failure ?? batch.failure;
    return { handled, heldKeys, stopped: end.failure !== undefined, ...(first !== undefined ? { failure: first } : {}), ...(end.preempted ? { preempted: true } : {}) };
}

/** An expired head goes to the DLQ and is marked expired; a DLQ that cannot take it holds only its key. */
async function deadLetterExpired(batch: ClaimedBatch, head: OutboxRecord): Promise<BatchEnd | undefined> {
    const { ctx, token } = batch;
    try {
        await sendToDeadLetterQueue(ctx, head, "expired", { attempts: head.replayCount });
        ctx.metrics.count(DELIVERY_METRICS.expired);
    } catch (error) {
        hold(batch, head, error);
        return undefined;
    }
    try {
        if (!(await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => expireClaimed(ctx, head, token)))) {
            // Another claimer holds it now and sends it to the DLQ again.
            ctx.metrics.count(DELIVERY_METRICS.deadLetteredNotMarked);
            return { preempted: true };
        }
    } catch (error) {
        return { failure: { recordId: head.recordId, error } };
    }
    batch.handled.push(head.recordId);
    return undefined;
}

/** The records of the next PublishBatch call: the first call's worth of the leading records not expired at `now`. */
function leadingCall(rest: readonly OutboxRecord[], now: number): Item[] {
    const run: Item[] = [];
    for (const r of rest) {
        if (isExpired(r, now)) break;
        run.push({ record: r, message: outboundMessage(r) });
    }
    return publishBatches(run, true)[0]!;
}

/** Publish one call's records, read each result in order, and complete what was published or dead-lettered. */
async function publishCall(batch: ClaimedBatch, items: readonly Item[]): Promise<BatchEnd | undefined> {
    const { ctx } = batch;
    const results = await publishBatch(ctx, items.map((i) => i.message));
    const call: CallOutcome = { toComplete: [], deadLettered: [], stop: undefined };
    let failedInCall = false;
    for (let j = 0; j < items.length; j += 1) {
        const { record: r } = items[j]!;
        const result = results[j]!;
        if (result.ok) {
            notePublished(ctx, r);
            if (failedInCall) ctx.metrics.count(DELIVERY_METRICS.publishedAfterFailure);
            call.toComplete.push(r.recordId);
            continue;
        }
        failedInCall = true;
        await refusedInCall(batch, call, r, result);
    }
    const end = await completeCall(batch, call);
    if (end !== undefined) return end;
    return call.stop !== undefined ? { failure: call.stop } : undefined;
}

/**
 * A record SNS refused: a transient refusal stops the batch; a permanent one is counted on the record, and at
 * `maxPublishAttempts` the record goes to the DLQ (to complete), otherwise it holds its key.
 */
async function refusedInCall(batch: ClaimedBatch, call: CallOutcome, r: OutboxRecord, result: Extract<PublishResult, { ok: false }>): Promise<void> {
    const { ctx } = batch;
    ctx.metrics.count(DELIVERY_METRICS.publishFailed);
    const error = new OutboxError(result.permanent ? "INVALID_PAYLOAD" : "UNAVAILABLE", `SNS refused record ${r.recordId}: ${result.code}`, { context: { recordId: r.recordId, code: result.code } });
    if (!result.permanent) {
        // Not this record's fault: every later record would meet the same SNS.
        ctx.logger.warn("outbox publish failed", { recordId: r.recordId, partition: r.partition, code: result.code, permanent: false });
        call.stop ??= { recordId: r.recordId, error };
        return;
    }
    let attempts: number | undefined;
    try {
        attempts = await countPermanentFailure(ctx, r);
    } catch (err) {
        call.stop ??= { recordId: r.recordId, error: err };
        return;
    }
    if (attempts !== undefined && attempts >= ctx.maxPublishAttempts) {
        try {
            await sendToDeadLetterQueue(ctx, r, "publish-rejected", { attempts, errorCode: result.code, errorMessage: result.message });
            call.toComplete.push(r.recordId);
            call.deadLettered.push(r.recordId);
        } catch (err) {
            hold(batch, r, err);
        }
        return;
    }
    ctx.logger.warn("outbox publish failed", { recordId: r.recordId, partition: r.partition, code: result.code, permanent: true, attempts });
    hold(batch, r, error);
}

/** Complete the call's published and dead-lettered records with the token; a failure or a stale token ends the batch. */
async function completeCall(batch: ClaimedBatch, call: CallOutcome): Promise<BatchEnd | undefined> {
    const { ctx, store, token } = batch;
    const ids = call.toComplete;
    if (ids.length === 0) return undefined;
    try {
        await store.complete(ids, token);
        batch.handled.push(...ids);
        return undefined;
    } catch (err) {
        // Sent but not completed: whoever delivers these next sends them again.
        const deadLettered = ids.filter((id) => call.deadLettered.includes(id)).length;
        if (ids.length > deadLettered) ctx.metrics.count(DELIVERY_METRICS.publishedNotCompleted, ids.length - deadLettered);
        if (deadLettered > 0) ctx.metrics.count(DELIVERY_METRICS.deadLetteredNotMarked, deadLettered);
        return isOutboxError(err, "STALE_FENCING_TOKEN") ? { preempted: true } : { failure: { recordId: ids[0]!, error: err } };
    }
}

/** The outcome of draining one partition through the claim path. */
export interface DrainResult {
    /** Ids delivered (or dead-lettered). */
    readonly handled: readonly string[];
    /** Whether the partition's claimable backlog was exhausted (the last claim came back short). */
    readonly exhausted: boolean;
    /** The first failure, if any. */
    readonly failure?: { readonly recordId: string; readonly error: unknown };
    /** The ordering keys a failed record holds back (see {@link ClaimedDeliveryResult.heldKeys}). */
    readonly heldKeys: readonly string[];
    /** Whether the drain ended at a fault that is not one record's (see {@link ClaimedDeliveryResult.stopped}). @default false */
    readonly stopped?: boolean;
    /**
     * Whether the drain ended at a claim a failure cut short (a throttled claim write): what was claimed was
     * delivered, the rest of the partition was not reached. Not exhausted. @default false
     */
    readonly truncated?: boolean;
}

/** Options of {@link drainPartition}. */
export interface DrainPartitionOptions {
    /** Records per claim. */
    readonly limit: number;
    /** Stop after this many claims. */
    readonly maxRounds: number;
    /** Stop as soon as this record id has been handled. @default undefined (drain until a claim comes back short) */
    readonly until?: string;
    /**
     * Only deliver records created before this time (epoch ms); younger ones are released at once, and with a
     * younger keyed record the later records of its key. @default undefined (all)
     */
    readonly createdBefore?: number;
    /**
     * With `createdBefore`: deliver records created after this time too (epoch ms), whose `created_at` no correct
     * clock gives, so that a writer's fast clock cannot hold them back. @default undefined (none)
     */
    readonly createdAfter?: number;
    /** Checked before each claim: return false to stop (e.g. the invocation is running out of time). @default always true */
    readonly keepGoing?: () => boolean;
}

/**
 * Claim and deliver a partition's records, round after round, until a claim comes back short, `until` was
 * handled, or `maxRounds` ran out. A stale token (someone else drains the partition) ends the drain quietly. A
 * claim cut short by a failure ends it too, not exhausted ({@link DrainResult.truncated}).
 *
 * @param ctx - Clients, names and metrics.
 * @param store - The store to claim from.
 * @param partition - The partition key.
 * @param token - The claim token.
 * @param options - Limits and stop conditions.
 */
export async function drainPartition(ctx: DeliveryContext, store: ClaimingStore, partition: string, token: FencingToken, options: DrainPartitionOptions): Promise<DrainResult> {
    const handled: string[] = [];
    for (let round = 0; round < options.maxRounds; round += 1) {
        if (options.keepGoing !== undefined && !options.keepGoing()) return { handled, exhausted: false, heldKeys: [] };
        let claimed: OutboxRecord[];
        let truncated = false;
        try {
            claimed = await store.claim(partition, token, options.limit, {
                onTruncated: () => {
                    truncated = true;
                },
            });
        } catch (error) {
            if (isOutboxError(error, "STALE_FENCING_TOKEN")) return { handled, exhausted: true, heldKeys: [] };
            return { handled, exhausted: false, heldKeys: [], stopped: true, failure: { recordId: options.until ?? "", error } };
        }
        let deliverable = claimed;
        if (options.createdBefore !== undefined) {
            const { createdBefore, createdAfter } = options;
            const due = (r: OutboxRecord): boolean => r.createdAt < createdBefore || (createdAfter !== undefined && r.createdAt > createdAfter);
            // A key waits from its first record that is not due: a later record of the key may not overtake it.
            const waiting = new Set<string>();
            deliverable = [];
            const young: string[] = [];
            for (const r of claimed) {
                if (due(r) && (r.orderingKey === undefined || !waiting.has(r.orderingKey))) {
                    deliverable.push(r);
                    continue;
                }
                young.push(r.recordId);
                if (r.orderingKey !== undefined) waiting.add(r.orderingKey);
            }
            await releaseQuietly(ctx, store, young, token);
        }
        const result = await deliverClaimed(ctx, store, deliverable, token);
        handled.push(...result.handled);
        // A failure ends the drain: another round would claim the held key's records and try its head again.
        if (result.failure !== undefined) return { handled, exhausted: false, heldKeys: result.heldKeys, stopped: result.stopped, failure: result.failure };
        if (result.preempted) return { handled, exhausted: true, heldKeys: [] };
        // Short because a write failed, not because the backlog ended: the rest is not reached, so the caller must
        // not acknowledge what it has not delivered.
        if (truncated) return { handled, exhausted: false, heldKeys: [], truncated: true };
        const short = claimed.length < options.limit || deliverable.length < claimed.length;
        if (short || (options.until !== undefined && handled.includes(options.until))) return { handled, exhausted: short, heldKeys: [] };
    }
    return { handled, exhausted: false, heldKeys: [] };
}
