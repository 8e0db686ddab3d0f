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
import { DELIVERY_METRICS, countPermanentFailure, expireClaimed, isExpired, notePublished, publishBatch, publishBatches, sendToDeadLetterQueue, type DeliveryContext } from "./delivery";
import { isOutboxError, OutboxError } from "./errors";
import { outboundMessage, type OutboundMessage } from "./message";
import type { OutboxRecord } from "./record/codec";
import type { FencingToken } from "./store/transitions";

/** The part of the store the claim path uses. `OutboxStore` satisfies it. */
export interface ClaimingStore {
    /** Claim up to `limit` of the partition's oldest claimable records, oldest first. */
    claim(partition: string, token: FencingToken, limit: number): Promise<OutboxRecord[]>;
    /** Complete records this token holds. */
    complete(ids: readonly string[], token: FencingToken): Promise<void>;
    /** Release records this token holds back to pending. */
    release(ids: readonly string[], token: FencingToken): Promise<void>;
}

/** How a claimed batch ended. */
export interface ClaimedDeliveryResult {
    /** Ids published and completed, or dead-lettered, in this call. */
    readonly handled: readonly string[];
    /** The first record that could not be delivered, and why; the records from it on were released. */
    readonly failure?: { readonly recordId: string; readonly error: unknown };
    /** Another claimer took over (the token went stale); it delivers the rest. */
    readonly preempted?: boolean;
}

interface Item {
    readonly record: OutboxRecord;
    readonly message: OutboundMessage;
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
 * record SNS refuses permanently goes to the DLQ after `maxPublishAttempts` and is completed. At the first
 * record that cannot be delivered, everything not yet handled is released and the failure is returned.
 *
 * @param ctx - Clients, names and metrics.
 * @param store - The store that issued the claim.
 * @param claimed - The claimed records, oldest first, as Claim returned them.
 * @param token - The token that holds them.
 */
export async function deliverClaimed(ctx: DeliveryContext, store: ClaimingStore, claimed: readonly OutboxRecord[], token: FencingToken): Promise<ClaimedDeliveryResult> {
    const handled: string[] = [];
    const unhandled = (): string[] => claimed.map((r) => r.recordId).filter((id) => !handled.includes(id));
    const stop = async (result: { failure?: { recordId: string; error: unknown }; preempted?: boolean }): Promise<ClaimedDeliveryResult> => {
        await releaseQuietly(ctx, store, unhandled(), token);
        return { handled, ...result };
    };
    const complete = async (ids: string[]): Promise<"ok" | "preempted" | { error: unknown }> => {
        if (ids.length === 0) return "ok";
        try {
            await store.complete(ids, token);
            handled.push(...ids);
            return "ok";
        } catch (err) {
            if (isOutboxError(err, "STALE_FENCING_TOKEN")) return "preempted";
            return { error: err };
        }
    };

    let index = 0;
    while (index < claimed.length) {
        const now = ctx.clock.now();
        const record = claimed[index]!;
        if (isExpired(record, now)) {
            try {
                await sendToDeadLetterQueue(ctx, record, "expired", { attempts: record.replayCount });
                ctx.metrics.count(DELIVERY_METRICS.expired);
                if (await expireClaimed(ctx, record, token)) handled.push(record.recordId);
                else return stop({ preempted: true });
            } catch (error) {
                return stop({ failure: { recordId: record.recordId, error } });
            }
            index += 1;
            continue;
        }
        let end = index;
        while (end < claimed.length && !isExpired(claimed[end]!, now)) end += 1;
        const run: Item[] = claimed.slice(index, end).map((r) => ({ record: r, message: outboundMessage(r) }));
        const [batch] = publishBatches(run, true);
        const items = batch!;
        const results = await publishBatch(ctx, items.map((i) => i.message));
        const toComplete: string[] = [];
        let failure: { recordId: string; error: unknown } | undefined;
        for (let j = 0; j < items.length; j += 1) {
            const { record: r } = items[j]!;
            const result = results[j]!;
            if (result.ok) {
                notePublished(ctx, r);
                if (failure !== undefined) ctx.metrics.count(DELIVERY_METRICS.publishedAfterFailure);
                toComplete.push(r.recordId);
                continue;
            }
            if (failure !== undefined) continue;
            ctx.metrics.count(DELIVERY_METRICS.publishFailed);
            try {
                const attempts = result.permanent ? await countPermanentFailure(ctx, r) : undefined;
                if (attempts !== undefined && attempts >= ctx.maxPublishAttempts) {
                    await sendToDeadLetterQueue(ctx, r, "publish-rejected", { attempts, errorCode: result.code, errorMessage: result.message });
                    toComplete.push(r.recordId);
                    continue;
                }
                ctx.logger.warn("outbox publish failed", { recordId: r.recordId, partition: r.partition, code: result.code, permanent: result.permanent, attempts });
                failure = { recordId: r.recordId, error: new OutboxError(result.permanent ? "INVALID_PAYLOAD" : "UNAVAILABLE", `SNS refused record ${r.recordId}: ${result.code}`, { context: { recordId: r.recordId, code: result.code } }) };
            } catch (error) {
                failure = { recordId: r.recordId, error };
            }
        }
        const completed = await complete(toComplete);
        if (completed === "preempted") return stop({ preempted: true });
        if (completed !== "ok") return stop({ failure: { recordId: toComplete[0]!, error: completed.error } });
        if (failure !== undefined) return stop({ failure });
        index += items.length;
    }
    return { handled };
}

/** The outcome of draining one partition through the claim path. */
export interface DrainResult {
    /** Ids delivered (or dead-lettered). */
    readonly handled: readonly string[];
    /** Whether the partition's claimable backlog was exhausted (the last claim came back short). */
    readonly exhausted: boolean;
    /** The first failure, if any. */
    readonly failure?: { readonly recordId: string; readonly error: unknown };
}

/** Options of {@link drainPartition}. */
export interface DrainPartitionOptions {
    /** Records per claim. */
    readonly limit: number;
    /** Stop after this many claims. */
    readonly maxRounds: number;
    /** Stop as soon as this record id has been handled. @default undefined (drain until a claim comes back short) */
    readonly until?: string;
    /** Only deliver records created before this time (epoch ms); younger ones are released at once. @default undefined (all) */
    readonly createdBefore?: number;
    /** Checked before each claim: return false to stop (e.g. the invocation is running out of time). @default always true */
    readonly keepGoing?: () => boolean;
}

/**
 * Claim and deliver a partition's records, round after round, until a claim comes back short, `until` was
 * handled, or `maxRounds` ran out. A stale token (someone else drains the partition) ends the drain quietly.
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
        if (options.keepGoing !== undefined && !options.keepGoing()) return { handled, exhausted: false };
        let claimed: OutboxRecord[];
        try {
            claimed = await store.claim(partition, token, options.limit);
        } catch (error) {
            if (isOutboxError(error, "STALE_FENCING_TOKEN")) return { handled, exhausted: true };
            return { handled, exhausted: false, failure: { recordId: options.until ?? "", error } };
        }
        let deliverable = claimed;
        if (options.createdBefore !== undefined) {
            const cutoff = options.createdBefore;
            deliverable = claimed.filter((r) => r.createdAt < cutoff);
            const young = claimed.filter((r) => r.createdAt >= cutoff).map((r) => r.recordId);
            await releaseQuietly(ctx, store, young, token);
        }
        const result = await deliverClaimed(ctx, store, deliverable, token);
        handled.push(...result.handled);
        if (result.failure !== undefined) return { handled, exhausted: false, failure: result.failure };
        if (result.preempted) return { handled, exhausted: true };
        const short = claimed.length < options.limit || deliverable.length < claimed.length;
        if (short || (options.until !== undefined && handled.includes(options.until))) return { handled, exhausted: short };
    }
    return { handled, exhausted: false };
}
