/**
 * What a writer's clock may read, for `OutboxWriter` and the store's Persist: a time every record attribute can
 * carry, and at most {@link MAX_FENCE_LEAD_MS} behind the latest `created_at` its partition handed out.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";

/**
 * How far a partition's FENCE `last_created_at` may be ahead of a writer's clock for the writer's keyed records to
 * take that time (5 minutes). Past it the seq allocation is refused (`INVALID_CONFIG`, naming the skew) rather than stamping
 * the records that far in the future: one writer whose clock runs ahead would otherwise carry its time to every
 * later keyed record of the partition, from every writer, without bound.
 */
export const MAX_FENCE_LEAD_MS = 5 * 60 * 1000;

/**
 * The latest time a writer's clock may read, epoch ms (2554-07-21T23:34:33.708Z): a keyless record's `seq` is
 * `created_at × 10^6 + n` (n < 10^6), which must fit in the 20 digits (2^64 − 1) of `claim_sort`.
 */
export const MAX_WRITER_CLOCK_MS = Number((2n ** 64n - 1n - 999_999n) / 1_000_000n);

function iso(ms: number): string {
    return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : "not a date";
}

/**
 * Refuse a clock reading no record can carry.
 *
 * @param who - Who reads the clock, for the message (`OutboxWriter`, `OutboxStore.persist`).
 * @param nowMs - What the clock read, epoch ms.
 * @throws OutboxError `INVALID_CONFIG` naming the clock, its reading and the range.
 */
export function checkWriterClock(who: string, nowMs: number): void {
    if (Number.isSafeInteger(nowMs) && nowMs >= 0 && nowMs <= MAX_WRITER_CLOCK_MS) return;
    throw new OutboxError(
        "INVALID_CONFIG",
        `${who}: the clock reads ${String(nowMs)} (${iso(nowMs)}), which no record can carry: a writer's clock must read epoch milliseconds from 0 (1970) to ${MAX_WRITER_CLOCK_MS} (${iso(MAX_WRITER_CLOCK_MS)}; a keyless record's seq is created_at × 10^6 + n and must fit in 2^64); fix the clock (the clock option, or the machine's time)`,
        { context: { clockMs: String(nowMs) } },
    );
}

/**
 * The refusal of a seq allocation whose partition's fence is more than {@link MAX_FENCE_LEAD_MS} ahead of the
 * writer's clock: it names the partition, both times, the lead, the bound and the ways out.
 *
 * @param partition - The partition key.
 * @param nowMs - The writer's now, epoch ms.
 * @param fenceMs - The fence's `last_created_at`, epoch ms.
 * @param maxLeadMs - The bound.
 */
export function fenceLeadError(partition: string, nowMs: number, fenceMs: number, maxLeadMs: number): OutboxError {
    const shown = JSON.stringify(partition.length > 60 ? `${partition.slice(0, 60)}…` : partition);
    const leadSeconds = (fenceMs - nowMs) / 1000;
    return new OutboxError(
        "INVALID_CONFIG",
        `clock skew: partition ${shown}'s FENCE row says a keyed record was created at ${iso(fenceMs)}, ${leadSeconds} s ahead of this writer's clock (${iso(nowMs)}); a keyed record takes the later of the two to keep per-key order, and is refused past ${maxLeadMs / 1000} s, or it would sit that far in the future, hidden from the sweeper and OldestPendingAge. Either this clock is behind (check its time sync), or a writer whose clock runs ahead wrote to this partition (fix that clock). Nothing was written; keyed writes to the partition pass again once this clock reads ${iso(fenceMs - maxLeadMs)}, or at once after the records stamped ahead were delivered and last_created_at was removed from the FENCE row (docs/runtime.md, "Ordering")`,
        { context: { partition, clockMs: nowMs, fenceCreatedAtMs: fenceMs, leadMs: fenceMs - nowMs, maxLeadMs } },
    );
}
