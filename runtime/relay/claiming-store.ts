/**
 * What the claim path works with and hands back: the part of the store it claims through, and how a claimed batch
 * ended. Both the drain (`claimed-delivery.ts`) and the lanes it delivers in (`lane-delivery.ts`) use them, so they
 * sit below both.
 *
 * @packageDocumentation
 */
import type { OutboxError } from "../errors";
import type { OutboxRecord } from "../record/codec";
import type { ClaimSkip } from "../store/claim-batch";
import type { FencingToken } from "../store/transitions";

/** The part of the store the claim path uses. `OutboxStore` satisfies it. */
export interface ClaimingStore {
    /**
     * Claim up to `limit` of the partition's oldest claimable records, oldest first. A store that returns a batch
     * cut short by a failure (the truncation rule) calls `options.onTruncated`, so the drain does not take it for
     * the end of the backlog; one that meets a record no claim can take (over the item limit once claimed) skips
     * it and calls `options.onUnclaimable`, and the drain dead-letters it (`runtime/relay/unclaimable.ts`). It leaves
     * alone what `options.skip` names: the keys and records a failure holds back earlier in the drain. A store that
     * returns them anyway has them released again, and the drain may then end before the rest of the partition.
     */
    claim(
        partition: string,
        token: FencingToken,
        limit: number,
        options?: {
            readonly onTruncated?: (error: unknown) => void;
            readonly onUnclaimable?: (record: OutboxRecord, error: OutboxError) => void;
            readonly skip?: ClaimSkip;
        },
    ): Promise<OutboxRecord[]>;
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
    /** The records whose own failure held their lane (their key's, or a keyless record's own). @default [] */
    readonly heldRecords?: readonly string[];
    /** Whether a fault that is not one record's (SNS or DynamoDB failing) stopped the batch; `failure` is that fault. */
    readonly stopped: boolean;
    /** Another claimer took over (the token went stale); it delivers the rest. */
    readonly preempted?: boolean;
    /**
     * Records were left undelivered (released) that no failure holds: the time ran short before their round.
     * @default false
     */
    readonly incomplete?: boolean;
}
