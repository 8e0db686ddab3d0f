/**
 * Delivering records through the store's claim path: claim a partition's oldest records with a fencing token,
 * publish them in order, complete them with the token. The keyed path of the stream publisher and the sweeper
 * both use it. Several partitions are drained at once: their claims run concurrently (at most
 * {@link PARTITIONS_IN_FLIGHT} at a time) and their records share one delivery (`runtime/relay/lane-delivery.ts`: lanes
 * and rounds, heads of different keys and partitions in one PublishBatch call).
 *
 * Why a claim for keyed records: DynamoDB Streams orders records per item, and each outbox record is its own
 * item, so a stream batch cannot prove that no older record with the same ordering key is still unpublished.
 * The store's Claim reads the partition with ConsistentRead and applies the head-of-line rule, so what it
 * returns is safe to publish in the order it returns it.
 *
 * @packageDocumentation
 */
import type { DeliveryContext } from "./delivery";
import { isOutboxError } from "../errors";
import type { ClaimedDeliveryResult, ClaimingStore } from "./claiming-store";
import { fencedPartitionError } from "./fenced-partition";
import { deliverLanes, type ClaimedPartition } from "./lane-delivery";
import type { OutboxRecord } from "../record/codec";
import { mapBounded } from "../slots";
import { skips } from "../store/claim-batch";
import type { FencingToken } from "../store/transitions";
import { deadLetterUnclaimable, type Unclaimable, type UnclaimableOutcome } from "./unclaimable";

/**
 * The most partitions whose claims run at once. Measured with `npm start -- --count 3000 --rate 0 --keys 50`
 * (50 partitions): 16 in flight gave a write→delivery p50 of 2.9 s and 38 records left to the sweeper, 25 gave
 * 1.7 s and none. Each claim reads its partition's backlog with ConsistentRead, so the bound also caps the reads
 * one invocation has in flight.
 */
export const PARTITIONS_IN_FLIGHT = 25;

/**
 * Publish one partition's claimed records in order and complete them with the token (see
 * `runtime/relay/lane-delivery.ts`). Keyed records are never batched with a later record of the same key. Expired
 * records go to the DLQ (reason `expired`) and are marked expired; a record SNS refuses permanently goes to the
 * DLQ after `maxPublishAttempts` and is completed.
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
export async function deliverClaimed(
    ctx: DeliveryContext,
    store: ClaimingStore,
    claimed: readonly OutboxRecord[],
    token: FencingToken,
): Promise<ClaimedDeliveryResult> {
    const [result] = await deliverLanes(ctx, store, token, [
        { partition: claimed[0]?.partition ?? "", records: claimed },
    ]);
    return result!;
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
     * Whether the partition's fence is above the token's version (`runtime/relay/fenced-partition.ts`): its claim was
     * refused, logged at error and counted as `FencedPartitions`, and `failure` is the `INVALID_CONFIG` error. A
     * fault of the deployment, never acknowledged as delivered. @default false
     */
    readonly fenced?: boolean;
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
    /** Checked before each claim and each round of publishes: return false to stop (e.g. the invocation is running out of time). @default always true */
    readonly keepGoing?: () => boolean;
}

/** One partition to drain with {@link drainPartitions}. */
export interface DrainTarget {
    /** The partition key. */
    readonly partition: string;
    /** Stop draining it once all these record ids were handled. @default [] (drain until a claim comes back short) */
    readonly until?: readonly string[];
}

/**
 * Claim and deliver a partition's records, round after round, until a claim comes back short, `until` was
 * handled, or `maxRounds` ran out. A claim refused by the partition's fence ends the drain as failed
 * ({@link DrainResult.fenced}); a completion refused because another claimer took the records over ends it
 * quietly. A claim cut short by a failure ends it too, not exhausted ({@link DrainResult.truncated}).
 *
 * @param ctx - Clients, names and metrics.
 * @param store - The store to claim from.
 * @param partition - The partition key.
 * @param token - The claim token.
 * @param options - Limits and stop conditions.
 */
export async function drainPartition(
    ctx: DeliveryContext,
    store: ClaimingStore,
    partition: string,
    token: FencingToken,
    options: DrainPartitionOptions,
): Promise<DrainResult> {
    const [result] = await drainPartitions(
        ctx,
        store,
        [{ partition, ...(options.until !== undefined ? { until: [options.until] } : {}) }],
        token,
        options,
    );
    return result!;
}

/** One partition's drain so far. */
interface Draining {
    readonly target: DrainTarget;
    readonly handled: string[];
    /** What the drain holds back: the keys whose head failed and the keyless records that failed, left pending. */
    readonly held: { readonly orderingKeys: Set<string>; readonly recordIds: Set<string> };
    /** The claimed records left pending because the drain holds them back. */
    readonly heldBack: Set<string>;
    /** The first record failure (in the first round that had one), if any. */
    failure: { readonly recordId: string; readonly error: unknown } | undefined;
    result: DrainResult | undefined;
}

/**
 * What one claim of a drain round returned: the records to deliver and what became of the records no claim can
 * take, or the end of the partition's drain.
 */
type ClaimStep =
    | {
          readonly claimed: readonly OutboxRecord[];
          readonly deliverable: OutboxRecord[];
          readonly truncated: boolean;
          readonly unclaimable: UnclaimableOutcome;
      }
    | { readonly end: DrainResult };

/**
 * Drain several partitions at once: each round claims every partition not yet done (at most
 * {@link PARTITIONS_IN_FLIGHT} claims in flight), delivers all the records claimed in one shared delivery (heads
 * of different partitions share PublishBatch calls), and decides, per partition, whether it is done, as
 * {@link drainPartition} does for one. A partition's failure, a claim its fence refuses, or a stale completion
 * ends only its own drain, except for a fault every record would meet, which stops the round's delivery for all.
 *
 * @param ctx - Clients, names and metrics.
 * @param store - The store to claim from.
 * @param targets - The partitions, each at most once.
 * @param token - The claim token.
 * @param options - Limits and stop conditions (`until` is per target).
 * @returns One result per target, aligned with `targets`.
 */
export async function drainPartitions(
    ctx: DeliveryContext,
    store: ClaimingStore,
    targets: readonly DrainTarget[],
    token: FencingToken,
    options: Omit<DrainPartitionOptions, "until">,
): Promise<DrainResult[]> {
    const drains: Draining[] = targets.map((target) => ({
        target,
        handled: [],
        held: { orderingKeys: new Set(), recordIds: new Set() },
        heldBack: new Set(),
        failure: undefined,
        result: undefined,
    }));
    const keepGoing = options.keepGoing ?? (() => true);
    for (let round = 0; round < options.maxRounds; round += 1) {
        const active = drains.filter((d) => d.result === undefined);
        if (active.length === 0) break;
        const steps = await mapBounded(active, PARTITIONS_IN_FLIGHT, (d) =>
            claimStep(ctx, store, d, token, options, keepGoing),
        );
        const claimedOf: { drain: Draining; step: Extract<ClaimStep, { claimed: unknown }> }[] = [];
        steps.forEach((step, i) => {
            if ("end" in step) active[i]!.result = step.end;
            else claimedOf.push({ drain: active[i]!, step });
        });
        const batches: ClaimedPartition[] = claimedOf.map(({ drain, step }) => ({
            partition: drain.target.partition,
            records: step.deliverable,
        }));
        const delivered = await deliverLanes(ctx, store, token, batches, keepGoing);
        claimedOf.forEach(({ drain, step }, i) => {
            drain.handled.push(...step.unclaimable.handled, ...delivered[i]!.handled);
            drain.result = roundVerdict(drain, step, delivered[i]!, options.limit);
        });
    }
    return drains.map((d) => withHeld(d, d.result ?? { handled: d.handled, exhausted: false, heldKeys: [] }));
}

/**
 * A drain's result with the failure and the keys it held in earlier rounds, when it had any. Applied once, to the
 * result the drain ended with: nothing the drain holds changes after it ends.
 */
function withHeld(drain: Draining, result: DrainResult): DrainResult {
    if (drain.failure === undefined) return result;
    const heldKeys = [...new Set([...drain.held.orderingKeys, ...result.heldKeys])];
    return { ...result, heldKeys, failure: result.failure ?? drain.failure, exhausted: false };
}

/**
 * Claim a partition's next records, and dead-letter the ones no claim can take; with `createdBefore`, release the
 * ones not due (and their keys' later ones), and leave an unclaimable one that is not due to the stream path.
 */
async function claimStep(
    ctx: DeliveryContext,
    store: ClaimingStore,
    drain: Draining,
    token: FencingToken,
    options: Omit<DrainPartitionOptions, "until">,
    keepGoing: () => boolean,
): Promise<ClaimStep> {
    const { handled, target } = drain;
    if (!keepGoing()) return { end: { handled, exhausted: false, heldKeys: [] } };
    let claimed: OutboxRecord[];
    let truncated = false;
    const unclaimable: Unclaimable[] = [];
    try {
        claimed = await store.claim(target.partition, token, options.limit, {
            onTruncated: () => {
                truncated = true;
            },
            onUnclaimable: (record, error) => unclaimable.push({ record, error }),
            skip: drain.held,
        });
    } catch (error) {
        // Claim refuses a token only below the partition's fence, which never comes down: not a preemption to
        // wait out, but a claimer of a higher version this relay can never catch up with.
        if (isOutboxError(error, "STALE_FENCING_TOKEN"))
            return {
                end: {
                    handled,
                    exhausted: false,
                    heldKeys: [],
                    fenced: true,
                    failure: {
                        recordId: target.until?.[0] ?? "",
                        error: fencedPartitionError(ctx, target.partition, token, error),
                    },
                },
            };
        return {
            end: {
                handled,
                exhausted: false,
                heldKeys: [],
                stopped: true,
                failure: { recordId: target.until?.[0] ?? "", error },
            },
        };
    }
    claimed = await releaseHeld(ctx, store, drain, claimed, token);
    const { createdBefore, createdAfter } = options;
    const due = (r: OutboxRecord): boolean =>
        createdBefore === undefined ||
        r.createdAt < createdBefore ||
        (createdAfter !== undefined && r.createdAt > createdAfter);
    const settled = await deadLetterUnclaimable(
        ctx,
        unclaimable.filter((u) => due(u.record)),
    );
    if (createdBefore === undefined) return { claimed, deliverable: claimed, truncated, unclaimable: settled };
    // A key waits from its first record that is not due: a later record of the key may not overtake it.
    const waiting = new Set<string>();
    const deliverable: OutboxRecord[] = [];
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
    return { claimed, deliverable, truncated, unclaimable: settled };
}

/**
 * The claimed records the drain does not hold back. A store that does not honour `skip` hands held records back:
 * they are released, pending as the drain left them.
 */
async function releaseHeld(
    ctx: DeliveryContext,
    store: ClaimingStore,
    drain: Draining,
    claimed: OutboxRecord[],
    token: FencingToken,
): Promise<OutboxRecord[]> {
    const kept: OutboxRecord[] = [];
    const heldBack: string[] = [];
    for (const r of claimed)
        if (isHeld(drain, r)) heldBack.push(r.recordId);
        else kept.push(r);
    if (heldBack.length === 0) return claimed;
    for (const id of heldBack) drain.heldBack.add(id);
    await releaseQuietly(ctx, store, heldBack, token);
    return kept;
}

/** Whether the drain holds this record back: its key's head failed, or it failed itself. */
function isHeld(drain: Draining, record: OutboxRecord): boolean {
    return skips(drain.held, record.recordId, record.orderingKey);
}

/**
 * After a round's delivery: the partition's drain result if it is done, else `undefined` (claim again). A record's
 * own failure does not end the drain: its key (or the keyless record) is held back, and the next claim skips what is
 * held, so the partition's other keys beyond this claim go on. A fault every record would meet ends it.
 */
function roundVerdict(
    drain: Draining,
    step: Extract<ClaimStep, { claimed: unknown }>,
    result: ClaimedDeliveryResult,
    limit: number,
): DrainResult | undefined {
    const { handled, target } = drain;
    const { unclaimable } = step;
    if (result.failure !== undefined && result.stopped)
        return {
            handled,
            exhausted: false,
            heldKeys: [...result.heldKeys, ...unclaimable.heldKeys],
            stopped: true,
            failure: result.failure,
        };
    const failure = result.failure ?? unclaimable.failure;
    if (failure !== undefined) {
        drain.failure ??= failure;
        for (const key of [...result.heldKeys, ...unclaimable.heldKeys]) drain.held.orderingKeys.add(key);
        for (const id of [...(result.heldRecords ?? []), ...unclaimable.heldRecords]) drain.held.recordIds.add(id);
    }
    if (result.preempted) return { handled, exhausted: true, heldKeys: [] };
    // Out of time before every record's round: not exhausted, whatever the claim's length says.
    if (result.incomplete) return { handled, exhausted: false, heldKeys: [] };
    // Short because a write failed, not because the backlog ended: the rest is not reached, so the caller must
    // not acknowledge what it has not delivered.
    if (step.truncated) return { handled, exhausted: false, heldKeys: [], truncated: true };
    const short = step.claimed.length < limit || step.deliverable.length < step.claimed.length;
    // A record held back behind its key's failed head is as far as this drain can take it.
    for (const r of step.claimed) if (isHeld(drain, r)) drain.heldBack.add(r.recordId);
    const reached =
        target.until !== undefined &&
        target.until.length > 0 &&
        target.until.every((id) => handled.includes(id) || drain.heldBack.has(id));
    if (reached) return { handled, exhausted: short, heldKeys: [] };
    // A record no claim could take was dead-lettered: the later records of its key waited behind it, claim again.
    if (short && unclaimable.handled.length === 0) return { handled, exhausted: true, heldKeys: [] };
    return undefined;
}

async function releaseQuietly(
    ctx: DeliveryContext,
    store: ClaimingStore,
    ids: readonly string[],
    token: FencingToken,
): Promise<void> {
    if (ids.length === 0) return;
    try {
        await store.release(ids, token);
    } catch (err) {
        // A failed release only delays those records until the stale-claim window lets a claimer take them back.
        ctx.logger.warn("outbox release failed; the records become claimable after the stale-claim window", {
            count: ids.length,
            code: isOutboxError(err) ? err.code : "UNKNOWN",
        });
    }
}
