/**
 * What a writer's clock may read, for `OutboxWriter` and the store's Persist: a time every record attribute can
 * carry. How far it may be behind its partition's last `created_at` is not bounded: the records take that time
 * (`runtime/store/seq-allocation.ts`).
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";

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
