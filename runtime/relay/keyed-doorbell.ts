/**
 * The stream publisher's keyed path. A record with an ordering key is a doorbell: what the stream shows of it is
 * not published; its partition is drained through the store's claim path (`runtime/relay/claimed-delivery.ts`:
 * ConsistentRead, head-of-line rule), published and completed in order with the invocation's claim token, up to
 * the record. The batch's doorbells are collected first and their partitions drained together
 * ({@link answerDoorbells}): claims run concurrently and the heads of all of them share PublishBatch calls. A
 * partition's drain answers all its doorbells. A key whose head failed stays held for the rest of the
 * invocation: its records are left to the sweeper, and the partition's other keys go on. The verdicts are read
 * afterwards in shard order, so the SequenceNumber reported is the lowest that was not delivered, whatever order
 * the concurrent drains ended in.
 *
 * @packageDocumentation
 */
import { drainPartitions, type DrainResult } from "./claimed-delivery";
import type { ClaimedDeliveryResult, ClaimingStore } from "./claiming-store";
import { DELIVERY_METRICS, type DeliveryContext } from "./delivery";
import { errorCodeOf } from "../errors";
import type { OutboxRecord } from "../record/codec";
import type { FencingToken } from "../store/transitions";
import type { Candidate } from "./stream-candidates";

/** What the keyed path has done in one invocation. */
export interface KeyedDoorbells {
    /** This invocation's claim token. */
    readonly token: FencingToken;
    /** Partitions whose claimable backlog a drain exhausted. */
    readonly drained: Set<string>;
    /** Records a drain delivered or dead-lettered. */
    readonly handledByClaim: Set<string>;
    /** Ordering keys (partition + key) whose head failed in this invocation. */
    readonly heldKeys: Set<string>;
}

/** What a doorbell's drain needs of the invocation. */
export interface DoorbellSettings {
    /** Clients, names, limits and this invocation's metrics. */
    readonly ctx: DeliveryContext;
    /** The store for the claim path. */
    readonly store: ClaimingStore;
    /** Records per claim. */
    readonly claimLimit: number;
    /** Checked before each claim and each round of publishes: false once the invocation is running out of time. */
    readonly keepGoing: () => boolean;
}

/**
 * The keyed path's state at the start of an invocation.
 *
 * @param invocationId - Makes the claim owner id unique per invocation.
 * @param claimVersion - The fencing version of the publisher's claims.
 */
export function startDoorbells(invocationId: string, claimVersion: bigint): KeyedDoorbells {
    return {
        token: { owner: `publisher/${invocationId}`, version: claimVersion },
        drained: new Set(),
        handledByClaim: new Set(),
        heldKeys: new Set(),
    };
}

/** One ordering key of one partition, as a set member. */
function heldKey(partition: string, orderingKey: string): string {
    return `${partition}\u0000${orderingKey}`;
}

/** A keyed record of the batch: its candidate (the row read from the table, its SequenceNumber) and its key. */
export interface Doorbell {
    readonly candidate: Candidate;
    readonly orderingKey: string;
}

/**
 * Answer the batch's doorbells: drain their partitions concurrently, each until its doorbells were handled, then
 * read each doorbell's verdict in shard order.
 *
 * @param settings - The invocation's delivery context, store and claim limit.
 * @param doorbells - The keyed path's state; the drains' outcomes are added to it.
 * @param rung - The batch's keyed records, in shard order.
 * @returns the SequenceNumber Lambda retries from (the first doorbell not delivered), or `undefined` when the batch goes on.
 */
export async function answerDoorbells(
    settings: DoorbellSettings,
    doorbells: KeyedDoorbells,
    rung: readonly Doorbell[],
): Promise<string | undefined> {
    if (rung.length === 0) return undefined;
    const until = new Map<string, string[]>();
    for (const { candidate } of rung) {
        const ids = until.get(candidate.record.partition) ?? [];
        ids.push(candidate.record.recordId);
        until.set(candidate.record.partition, ids);
    }
    const targets = [...until].map(([partition, ids]) => ({ partition, until: ids }));
    const results = await drainPartitions(settings.ctx, settings.store, targets, doorbells.token, {
        limit: settings.claimLimit,
        maxRounds: 10,
        keepGoing: settings.keepGoing,
    });
    const byPartition = new Map<string, DrainResult>();
    targets.forEach((t, i) => {
        const result = results[i]!;
        byPartition.set(t.partition, result);
        for (const id of result.handled) doorbells.handledByClaim.add(id);
        for (const key of result.heldKeys) doorbells.heldKeys.add(heldKey(t.partition, key));
        if (result.failure === undefined && result.exhausted) doorbells.drained.add(t.partition);
    });
    for (const { candidate, orderingKey } of rung) {
        const stopAt = drainVerdict(
            settings.ctx,
            doorbells,
            candidate,
            orderingKey,
            byPartition.get(candidate.record.partition)!,
        );
        if (stopAt !== undefined) return stopAt;
    }
    return undefined;
}

/** What a drain's outcome means for the doorbell's record: go on, or retry the batch from it. */
function drainVerdict(
    ctx: DeliveryContext,
    doorbells: KeyedDoorbells,
    candidate: Candidate,
    orderingKey: string,
    result: DrainResult,
): string | undefined {
    const { record } = candidate;
    const handled = doorbells.handledByClaim.has(record.recordId);
    if (result.failure !== undefined) {
        const attributes = {
            recordId: record.recordId,
            partition: record.partition,
            failedRecordId: result.failure.recordId,
            code: errorCodeOf(result.failure.error),
        };
        if (result.stopped !== true && !handled && doorbells.heldKeys.has(heldKey(record.partition, orderingKey))) {
            leaveKeyed(ctx, record);
            return undefined;
        }
        if (result.stopped === true || !handled) {
            ctx.logger.warn("publisher: keyed delivery failed; retrying from this record", attributes);
            return candidate.sequenceNumber;
        }
        // Another key of the partition failed and is held; this record's key went on and it was delivered.
        ctx.logger.warn(
            "publisher: a record of another ordering key failed and holds its key; this record was delivered",
            attributes,
        );
        return undefined;
    }
    // Out of rounds or time before reaching this record: Lambda retries from it and the drain goes on.
    if (!result.exhausted && !handled) return candidate.sequenceNumber;
    return undefined;
}

/** Leave to the sweeper a keyed record whose key is held by a failed head (see {@link ClaimedDeliveryResult.heldKeys}). */
function leaveKeyed(ctx: DeliveryContext, record: OutboxRecord): void {
    ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
    ctx.logger.warn(
        "publisher: the head of this record's ordering key failed; the record stays pending for the sweeper",
        { recordId: record.recordId, partition: record.partition },
    );
}
