/**
 * A record no claim can take: one that claiming would take over DynamoDB's 400 KB item limit. The writer keeps
 * every record within `MAX_RECORD_BYTES` (400 KB less what the transitions add, `runtime/record/item-size.ts`), so only
 * another writer leaves one: an older version of this package, GoBridge, or a `persist` before that margin. The
 * store's claim skips such a record (`ClaimCallOptions.onUnclaimable`) and the relay dead-letters it here, in plain
 * sight, instead of holding its shard, partition or key forever:
 * - it goes to the DLQ with reason `item-too-large` (or `expired`, when its expiry has passed), with DynamoDB's
 *   refusal as the error;
 * - it is then marked terminal with an update that does not grow it: completed (or expired), both of which remove
 *   `claim_sort` (50 bytes) and `has_expiry` and add at most `status`'s 2 bytes, `completed_at` and `ttl`.
 *
 * The mark is not fenced by a claim (none can be had): it is conditional on the record still being pending, as the
 * keyless path's completion is. A claimer with a shorter owner that did claim it meanwhile delivers it; the DLQ
 * copy is then counted as `DeadLetteredNotMarked`, a duplicate, never a loss.
 *
 * @packageDocumentation
 */
import {
    afterSend,
    completePending,
    DELIVERY_METRICS,
    expirePending,
    isExpired,
    sendToDeadLetterQueue,
    type DeliveryContext,
} from "./delivery";
import { boundedErrorText } from "../destination/destination";
import { errorCodeOf, type OutboxError } from "../errors";
import type { OutboxRecord } from "../record/codec";

/** A record the claim handed back as unclaimable, with the store's error naming it. */
export interface Unclaimable {
    /** The record, as the claim read it (still pending: no claim took it). */
    readonly record: OutboxRecord;
    /** The store's `INVALID_PAYLOAD` naming the record, its size and the limit; its `cause` is DynamoDB's refusal. */
    readonly error: OutboxError;
}

/** What became of a claim's unclaimable records. */
export interface UnclaimableOutcome {
    /** The ids dead-lettered and marked terminal. */
    readonly handled: readonly string[];
    /** The ordering keys of those the DLQ could not take: each holds its key, as a failed head does. */
    readonly heldKeys: readonly string[];
    /** The ids of those the DLQ could not take. */
    readonly heldRecords: readonly string[];
    /** The first that the DLQ could not take (it stays pending; the next claim tries it again). */
    readonly failure?: { readonly recordId: string; readonly error: unknown };
}

/**
 * Dead-letter each unclaimable record and mark it terminal (see the module comment).
 *
 * @param ctx - The DLQ, the table and this invocation's metrics.
 * @param records - The records the claim handed back, in claim order.
 */
export async function deadLetterUnclaimable(
    ctx: DeliveryContext,
    records: readonly Unclaimable[],
): Promise<UnclaimableOutcome> {
    const handled: string[] = [];
    const heldKeys: string[] = [];
    const heldRecords: string[] = [];
    let failure: UnclaimableOutcome["failure"];
    for (const { record, error } of records) {
        const expired = isExpired(record, ctx.clock.now());
        ctx.logger.error(
            "publisher: an outbox record is too large to claim (another writer wrote it within the writer's margin of DynamoDB's 400 KB); it is dead-lettered",
            { recordId: record.recordId, partition: record.partition, size: error.context.size },
        );
        try {
            await sendToDeadLetterQueue(ctx, record, expired ? "expired" : "item-too-large", {
                attempts: record.replayCount,
                errorCode: "ValidationError",
                errorMessage: boundedErrorText(error),
            });
            if (expired) ctx.metrics.count(DELIVERY_METRICS.expired);
            await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () =>
                expired ? expirePending(ctx, record) : completePending(ctx, record),
            );
            handled.push(record.recordId);
        } catch (err) {
            ctx.logger.error("publisher: an unclaimable record could not be dead-lettered; it stays pending", {
                recordId: record.recordId,
                partition: record.partition,
                code: errorCodeOf(err),
            });
            failure ??= { recordId: record.recordId, error: err };
            if (record.orderingKey !== undefined) heldKeys.push(record.orderingKey);
            heldRecords.push(record.recordId);
        }
    }
    return { handled, heldKeys, heldRecords, ...(failure !== undefined ? { failure } : {}) };
}
