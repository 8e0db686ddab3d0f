/**
 * One seq allocation from the partition's FENCE row, shared by the store's Persist and by `OutboxWriter`: the
 * sequence range and the `created_at` its records carry, so that `(created_at, seq)` order is allocation order.
 *
 * @packageDocumentation
 */
import type { UpdateItemCommandInput, UpdateItemCommandOutput } from "@aws-sdk/client-dynamodb";
import type { Logger } from "../ports";
import { unmarshalFence } from "../record/fence";
import { isConditionalCheckFailed } from "./aws-errors";
import { CLOCK_BEHIND_ERROR_MS, CLOCK_BEHIND_WARN_MS, STORE_WARNINGS } from "./observability";
import { seqAllocationUpdates } from "./transitions";

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
 * and the records take the fence's `last_created_at`, however far ahead of now it is. Logs
 * {@link STORE_WARNINGS}.clockBehind when that moves them forward by more than {@link CLOCK_BEHIND_WARN_MS}, and
 * {@link STORE_WARNINGS}.clockFarBehind (at error level) past {@link CLOCK_BEHIND_ERROR_MS}.
 *
 * @param send - Sends one UpdateItem.
 * @param request - The table, partition, count, now and fence ttl.
 * @param logger - Where the clock warning goes (ids and counts only).
 * @throws whatever `send` throws, except the expected ConditionalCheckFailed of `atNow`.
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
    );
    let attributes;
    try {
        attributes = (await send(updates.atNow)).Attributes;
    } catch (err) {
        if (!isConditionalCheckFailed(err)) throw err;
        attributes = (await send(updates.atFence)).Attributes;
    }
    const fence = unmarshalFence(attributes ?? {});
    const createdAt = Math.max(request.nowMs, fence.lastCreatedAt);
    const count = BigInt(request.count);
    // Defensive, as in GoBridge: a counter below the range just added cannot be right; start at 1.
    const top = fence.seqCounter < count ? count : fence.seqCounter;
    const carriedForwardMs = createdAt - request.nowMs;
    if (carriedForwardMs > CLOCK_BEHIND_WARN_MS) {
        const attributes = {
            partition_key: request.partition,
            carried_forward_ms: carriedForwardMs,
            records: request.count,
        };
        if (carriedForwardMs > CLOCK_BEHIND_ERROR_MS) logger.error(STORE_WARNINGS.clockFarBehind, attributes);
        else logger.warn(STORE_WARNINGS.clockBehind, attributes);
    }
    return { firstSeq: top - count + 1n, createdAt };
}
