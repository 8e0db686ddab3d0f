/**
 * The stream publisher's keyed path. A record with an ordering key is a doorbell: what the stream shows of it is
 * not published; its partition is drained through the store's claim path (`runtime/claimed-delivery.ts`:
 * ConsistentRead, head-of-line rule), published and completed in order with the invocation's claim token, up to
 * the record. One drain answers the later doorbells of its partition in the same batch. A key whose head failed
 * stays held for the rest of the invocation: its records are left to the sweeper, and the partition's other keys
 * go on.
 *
 * @packageDocumentation
 */
import { drainPartition, type ClaimedDeliveryResult, type ClaimingStore, type DrainResult } from "./claimed-delivery";
import { DELIVERY_METRICS, type DeliveryContext } from "./delivery";
import { errorCodeOf } from "./errors";
import type { OutboxRecord } from "./record/codec";
import type { FencingToken } from "./store/transitions";
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
    /** Checked before each claim: false once the invocation is running out of time. */
    readonly keepGoing: () => boolean;
}

/**
 * The keyed path's state at the start of an invocation.
 *
 * @param invocationId - Makes the claim owner id unique per invocation.
 * @param claimVersion - The fencing version of the publisher's claims.
 */
export function startDoorbells(invocationId: string, claimVersion: bigint): KeyedDoorbells {
    return { token: { owner: `publisher/${invocationId}`, version: claimVersion }, drained: new Set(), handledByClaim: new Set(), heldKeys: new Set() };
}

/** One ordering key of one partition, as a set member. */
function heldKey(partition: string, orderingKey: string): string {
    return `${partition}\u0000${orderingKey}`;
}

/** Whether a drain of this invocation already answered the record's doorbell: it handled the record, or exhausted its partition. */
export function answeredByDrain(doorbells: KeyedDoorbells, record: OutboxRecord): boolean {
    return doorbells.handledByClaim.has(record.recordId) || doorbells.drained.has(record.partition);
}

/**
 * Answer a keyed record's doorbell: drain its partition through the claim path until the record was handled.
 *
 * @param settings - The invocation's delivery context, store and claim limit.
 * @param doorbells - The keyed path's state; the drain's outcome is added to it.
 * @param candidate - The keyed record (the row read from the table) and its SequenceNumber.
 * @param orderingKey - The record's ordering key.
 * @returns the SequenceNumber Lambda retries from, or `undefined` when the batch goes on.
 */
export async function ringDoorbell(settings: DoorbellSettings, doorbells: KeyedDoorbells, candidate: Candidate, orderingKey: string): Promise<string | undefined> {
    const { record } = candidate;
    if (doorbells.heldKeys.has(heldKey(record.partition, orderingKey))) {
        // Its key's head failed earlier in this invocation: trying again now would count the same refusal twice.
        leaveKeyed(settings.ctx, record);
        return undefined;
    }
    const result = await drainPartition(settings.ctx, settings.store, record.partition, doorbells.token, {
        limit: settings.claimLimit,
        maxRounds: 10,
        until: record.recordId,
        keepGoing: settings.keepGoing,
    });
    for (const id of result.handled) doorbells.handledByClaim.add(id);
    for (const key of result.heldKeys) doorbells.heldKeys.add(heldKey(record.partition, key));
    return drainVerdict(settings.ctx, doorbells, candidate, orderingKey, result);
}

/** What a drain's outcome means for the doorbell's record: go on, or retry the batch from it. */
function drainVerdict(ctx: DeliveryContext, doorbells: KeyedDoorbells, candidate: Candidate, orderingKey: string, result: DrainResult): string | undefined {
    const { record } = candidate;
    const handled = doorbells.handledByClaim.has(record.recordId);
    if (result.failure !== undefined) {
        const attributes = { recordId: record.recordId, partition: record.partition, failedRecordId: result.failure.recordId, code: errorCodeOf(result.failure.error) };
        if (result.stopped !== true && !handled && doorbells.heldKeys.has(heldKey(record.partition, orderingKey))) {
            leaveKeyed(ctx, record);
            return undefined;
        }
        if (result.stopped === true || !handled) {
            ctx.logger.warn("publisher: keyed delivery failed; retrying from this record", attributes);
            return candidate.sequenceNumber;
        }
        // Another key of the partition failed and is held; this record's key went on and it was delivered.
        ctx.logger.warn("publisher: a record of another ordering key failed and holds its key; this record was delivered", attributes);
        return undefined;
    }
    if (result.exhausted) doorbells.drained.add(record.partition);
    // Out of rounds or time before reaching this record: Lambda retries from it and the drain goes on.
    else if (!handled) return candidate.sequenceNumber;
    return undefined;
}

/** Leave to the sweeper a keyed record whose key is held by a failed head (see {@link ClaimedDeliveryResult.heldKeys}). */
function leaveKeyed(ctx: DeliveryContext, record: OutboxRecord): void {
    ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
    ctx.logger.warn("publisher: the head of this record's ordering key failed; the record stays pending for the sweeper", { recordId: record.recordId, partition: record.partition });
}
