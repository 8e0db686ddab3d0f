/**
 * One seq allocation from the partition's FENCE row, shared by the store's Persist and by `OutboxWriter`: the
 * sequence range and the `created_at` its records carry, so that `(created_at, seq)` order is allocation order.
 *
 * @packageDocumentation
 */
import type { AttributeValue, UpdateItemCommandInput, UpdateItemCommandOutput } from "@aws-sdk/client-dynamodb";
import type { Logger } from "../ports";
import { unmarshalFence } from "../record/fence";
import { isConditionalCheckFailed } from "./aws-errors";
import { CLOCK_BEHIND_WARN_MS, STORE_WARNINGS } from "./observability";
import { seqAllocationUpdates } from "./transitions";
import { fenceLeadError, MAX_FENCE_LEAD_MS } from "./writer-clock";

/** Sends one `UpdateItem` (the caller adds its own capacity reporting and error wrapping). */
export type SendUpdateItem = (input: UpdateItemCommandInput) => Promise<Pick<UpdateItemCommandOutput, "Attributes">>;

/** What to allocate. */
export interface SeqAllocationRequest {
    /** The outbox table. */
    readonly tableName: string;
    /** The partition key. */
    readonly partition: string;
    /** How many numbers (≥ 1). */
    readonly count: number;
    /** The writer's now, epoch ms (whole). */
    readonly nowMs: number;
    /** The FENCE row ttl, epoch seconds. */
    readonly fenceTtl: number;
}

/** An allocated range: seqs `firstSeq … firstSeq + count − 1`, all for records created at `createdAt`. */
export interface SeqAllocation {
    /** The first seq of the range. */
    readonly firstSeq: bigint;
    /** The `created_at` the range's records carry: max(now, the fence's `last_created_at`). */
    readonly createdAt: number;
}

/**
 * Allocate a seq range with {@link seqAllocationUpdates}: `atNow` first; when its condition fails, `atFence`,
 * and the records take the fence's `last_created_at`. Logs {@link STORE_WARNINGS}.clockBehind when that moves
 * them forward by more than {@link CLOCK_BEHIND_WARN_MS}; refuses (nothing allocated) when the fence is more than
 * {@link MAX_FENCE_LEAD_MS} ahead of now.
 *
 * @param send - Sends one UpdateItem.
 * @param request - The table, partition, count, now and fence ttl.
 * @param logger - Where the clock warning goes (ids and counts only).
 * @throws OutboxError `INVALID_CONFIG` ({@link fenceLeadError}) when the fence's `last_created_at` is more than
 *   {@link MAX_FENCE_LEAD_MS} ahead of now; whatever `send` throws, except the expected ConditionalCheckFailed of `atNow`.
 */
export async function allocateSeqRange(
    send: SendUpdateItem,
    request: SeqAllocationRequest,
    logger: Logger,
): Promise<SeqAllocation> {
    const updates = seqAllocationUpdates(
        request.tableName,
        request.partition,
        request.count,
        request.nowMs,
        request.fenceTtl,
        MAX_FENCE_LEAD_MS,
    );
    let attributes;
    try {
        attributes = (await send(updates.atNow)).Attributes;
    } catch (err) {
        if (!isConditionalCheckFailed(err)) throw err;
        try {
            attributes = (await send(updates.atFence)).Attributes;
        } catch (fenceErr) {
            if (!isConditionalCheckFailed(fenceErr)) throw fenceErr;
            const old = (fenceErr as { Item?: Record<string, AttributeValue> }).Item;
            const fenceMs =
                old === undefined ? request.nowMs + MAX_FENCE_LEAD_MS + 1 : unmarshalFence(old).lastCreatedAt;
            throw fenceLeadError(request.partition, request.nowMs, fenceMs, MAX_FENCE_LEAD_MS);
        }
    }
    const fence = unmarshalFence(attributes ?? {});
    const createdAt = Math.max(request.nowMs, fence.lastCreatedAt);
    const count = BigInt(request.count);
    // Defensive, as in GoBridge: a counter below the range just added cannot be right; start at 1.
    const top = fence.seqCounter < count ? count : fence.seqCounter;
    const carriedForwardMs = createdAt - request.nowMs;
    if (carriedForwardMs > CLOCK_BEHIND_WARN_MS) {
        logger.warn(STORE_WARNINGS.clockBehind, {
            partition_key: request.partition,
            carried_forward_ms: carriedForwardMs,
            records: request.count,
        });
    }
    return { firstSeq: top - count + 1n, createdAt };
}
