/**
 * The store's metric names, log messages and the once-per-process warning latch (reference §8).
 *
 * @packageDocumentation
 */
import { errorCodeOf } from "../errors";
import { STORE_METRICS } from "../observability/metric-catalog";
import type { Logger, LogAttributes, MetricsSink } from "../ports";

/** Counter names the store emits, each tagged with `partition`; they live in `metric-catalog.ts`. */
export { STORE_METRICS };

/** The scan path warns and counts pages once it reads more than this many pages in one Claim. */
export const DEEP_BACKLOG_PAGE_WARN = 8;

/**
 * A seq allocation that carries `created_at` forward by more than this many ms logs
 * {@link STORE_WARNINGS}.clockBehind: a writer's clock is that far behind another's.
 */
export const CLOCK_BEHIND_WARN_MS = 1000;

/**
 * A seq allocation that carries `created_at` forward by more than this many ms (5 minutes) logs
 * {@link STORE_WARNINGS}.clockFarBehind at error level instead: no clock kept by time sync is that far off, so one
 * clock of the fleet is broken, and the records are stamped that far ahead of real time (the write still succeeds).
 */
export const CLOCK_BEHIND_ERROR_MS = 5 * 60 * 1000;

/** The store's log messages; those starting `dynamodboutbox:` are verbatim from GoBridge so runbooks and alerts match. */
export const STORE_WARNINGS = {
    orderingBypass:
        "dynamodboutbox: partition carries ordering keys, so Claim reads the base table with ConsistentRead instead of the eventually-consistent ClaimIndex GSI — a lagging index can surface a younger same-key record first. Claim cost is O(partition backlog) for this partition; see ADR 0005",
    deepBacklog:
        "dynamodboutbox: deep outbox backlog; Claim is reading the whole partition (O(backlog)) because this partition carries ordering keys, which no eventually-consistent index can serve — see doc.go / ADR 0005 / docs/runbooks",
    truncated:
        "dynamodboutbox: claim truncated by a mid-batch failure; returning the records already claimed so they are drained instead of stranded until the stale-claim window",
    claimConflict:
        "dynamodb-outbox: a claim transaction lost to a concurrent transaction (OutboxClaimConflicts); the records stay for the next claim",
    ttlEnableFailed: "dynamodboutbox: enabling DynamoDB TTL failed; completed records not compacted",
    undecodable:
        "dynamodb-outbox: an OUTBOX# item cannot be decoded as an outbox record; Claim skips it, and holds the later records of its ordering key behind it; repair or delete the item (its key is logged)",
    clockBehind:
        "dynamodb-outbox: this writer's clock is behind the partition's last created_at, so its records were stamped with that later time to keep per-key order; a writer clock is skewed — check the fleet's time sync",
    clockFarBehind:
        "dynamodb-outbox: this writer's clock is more than 5 minutes behind the partition's last created_at: a clock of the fleet runs ahead (or this one is behind). The write succeeded and its records were stamped with that later time to keep per-key order; they are delivered as usual, but until real time reaches that stamp the age metrics read them as new and the sweeper takes them as due at once. Fix the clock (docs/runtime.md, \"A clock that runs ahead\")",
    preflightAdvisory:
        "dynamodb-outbox: DynamoDB schema preflight skipped (DescribeTable failed) under schemaPreflightAdvisory; production must grant dynamodb:DescribeTable so preflight can enforce the schema",
} as const;

/**
 * Count and log an item Claim cannot decode. Never throws: one unreadable item must not stop the partition.
 *
 * @param ctx - Where to log and count.
 * @param partition - The partition being claimed.
 * @param sk - The item's sort key, logged so an operator can find it (never its payload).
 * @param err - Why it could not be decoded.
 */
export function noteUndecodable(
    ctx: { readonly logger: Logger; readonly metrics: MetricsSink },
    partition: string,
    sk: string | undefined,
    err: unknown,
): void {
    ctx.metrics.count(STORE_METRICS.undecodable, 1, { partition });
    // The code only: a decoder's message can quote the item's text, and logs never carry payloads.
    ctx.logger.error(STORE_WARNINGS.undecodable, {
        partition_key: partition,
        sort_key: sk ?? "",
        code: errorCodeOf(err),
    });
}

/** The deployment warnings that are logged at most once per process. */
export type OnceWarning = "orderingBypass" | "ttlEnableFailed" | "preflightAdvisory";

// A plain object, not a Set: Pulumi serializes runtime code by value and a captured Set would not survive.
const warned: { orderingBypass: boolean; ttlEnableFailed: boolean; preflightAdvisory: boolean } = {
    orderingBypass: false,
    ttlEnableFailed: false,
    preflightAdvisory: false,
};

/**
 * Log a deployment warning the first time it happens in this process; later calls are dropped.
 *
 * @returns whether the warning was logged now.
 */
export function warnOncePerProcess(logger: Logger, which: OnceWarning, attributes: LogAttributes): boolean {
    if (warned[which]) return false;
    warned[which] = true;
    logger.warn(STORE_WARNINGS[which], attributes);
    return true;
}

/** Re-arm the once-per-process warnings. For tests that assert a warning is logged exactly once. */
export function resetStoreWarnings(): void {
    warned.orderingBypass = false;
    warned.ttlEnableFailed = false;
    warned.preflightAdvisory = false;
}
