/**
 * The truncation rule (reference §4.4.6, finding 10): a mid-batch failure after some records were claimed returns
 * those records (a legal short batch) instead of stranding them as claimed until the stale window.
 *
 * @packageDocumentation
 */
import { isOutboxError } from "../errors";
import type { OutboxRecord } from "../record/codec";
import { STORE_METRICS, STORE_WARNINGS } from "./observability";
import type { StoreContext } from "./options";

/**
 * Apply the truncation rule: with nothing claimed yet, or on a lost fence (`STALE_FENCING_TOKEN`), rethrow (and
 * return no records); otherwise count `DynamoDBOutboxClaimTruncated`, warn, tell the caller (`onTruncated`: a short
 * batch that is not the end of the backlog), and return what was claimed.
 */
export function truncatedClaim(
    ctx: StoreContext,
    partition: string,
    claimed: OutboxRecord[],
    err: unknown,
    options: { readonly onTruncated?: (error: unknown) => void } = {},
): OutboxRecord[] {
    if (claimed.length === 0 || isOutboxError(err, "STALE_FENCING_TOKEN")) throw err;
    ctx.metrics.count(STORE_METRICS.claimTruncated, 1, { partition });
    ctx.logger.warn(STORE_WARNINGS.truncated, {
        partition_key: partition,
        claimed: claimed.length,
        error: String(err),
    });
    options.onTruncated?.(err);
    return claimed;
}
