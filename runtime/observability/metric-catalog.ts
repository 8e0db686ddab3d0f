/**
 * The one source of truth for the outbox's custom CloudWatch metrics: the namespace, the dimension names, the
 * `Function` dimension's values and every metric name the handlers and the store emit. The runtime's EMF lines
 * and the component's alarms and dashboard (`components/alarms.ts`, `components/dashboard.ts`) both read them
 * from here, and a test runs the real handlers to check that every metric an alarm or a widget names is emitted,
 * with the same dimensions (`tests/integration/component/alarm-metrics.test.ts`).
 *
 * Plain data only (no `@pulumi` import): the handler factories reach this module, and Pulumi serializes what they
 * reach by value.
 *
 * @packageDocumentation
 */

/** The metric namespace every outbox handler writes to. */
export const METRIC_NAMESPACE = "DynamoDBOutbox";

/** The dimension names of every handler metric: each EMF line carries exactly these two. */
export const METRIC_DIMENSIONS = {
    /** Which handler emitted it: a {@link HANDLER_FUNCTIONS} value. */
    function: "Function",
    /** The outbox table's name. */
    table: "Table",
} as const;

/** The values of the {@link METRIC_DIMENSIONS}.function dimension. */
export const HANDLER_FUNCTIONS = {
    /** The stream publisher. */
    publisher: "publisher",
    /** The scheduled sweeper. */
    sweeper: "sweeper",
} as const;

/** A handler, as its `Function` dimension names it. */
export type HandlerFunction = (typeof HANDLER_FUNCTIONS)[keyof typeof HANDLER_FUNCTIONS];

/**
 * The dimensions of a handler's metrics: `{ Function: fn, Table: tableName }`.
 *
 * @param fn - The handler.
 * @param tableName - The outbox table.
 */
export function handlerDimensions(fn: HandlerFunction, tableName: string): Record<string, string> {
    return { [METRIC_DIMENSIONS.function]: fn, [METRIC_DIMENSIONS.table]: tableName };
}

/** Metric names the handlers emit (EMF). */
export const DELIVERY_METRICS = {
    /** Records accepted by SNS. */
    published: "Published",
    /** Entries or calls SNS refused (each failure once). */
    publishFailed: "PublishFailed",
    /** Records sent to the DLQ, for any reason. */
    deadLettered: "DeadLettered",
    /** Records sent to the DLQ because their expiry passed. */
    expired: "Expired",
    /** Redelivered records skipped because the consistent status read found them terminal. */
    duplicatesAvoided: "DuplicatesAvoided",
    /** Entries SNS accepted after a failed entry, in its call or a concurrent one (completed, so never resent). */
    publishedAfterFailure: "PublishedAfterFailure",
    /** Conditional completions/expiries that found the record already moved by someone else. */
    completionRaces: "CompletionRaces",
    /** Stream records that were not INSERTs of readable outbox records. */
    ignored: "IgnoredRecords",
    /** Milliseconds from a record's creation to its publication. */
    ageAtPublish: "AgeAtPublish",
    /** Expired records a sweep could not handle (unreadable, undecodable, refused by the DLQ); retried next run. */
    sweepFailures: "SweepFailures",
    /**
     * Records SNS accepted whose completion then failed (throttled, or another claimer took over): they stay
     * pending and are published again. Each is one duplicate a subscriber will see.
     */
    publishedNotCompleted: "PublishedNotCompleted",
    /**
     * Records the DLQ took whose `expired`/`completed` write then failed: the next attempt sends them to the DLQ
     * again. Each is one duplicate DLQ message.
     */
    deadLetteredNotMarked: "DeadLetteredNotMarked",
    /**
     * Records the stream path left pending for the sweeper because their delivery failed for a reason of their
     * own: SNS refused them (below `maxPublishAttempts`), the DLQ could not take them, or the head of their
     * ordering key failed. The sweeper retries them on its runs, so one bad record never holds a shard.
     */
    leftForSweeper: "LeftForSweeper",
    /**
     * Partitions whose claim was refused because their fence is above the handler's `claimVersion`: another
     * claimer of the table (a GoBridge relay, an `OutboxStore` with a higher version) touched them, and this
     * handler can never deliver their records until `claimVersion` is raised to the fence. +1 per partition per
     * drain; each is logged at error with the partition and both versions.
     */
    fencedPartitions: "FencedPartitions",
} as const;

/** Metric names only the sweeper emits. */
export const SWEEPER_METRICS = {
    /**
     * Milliseconds since the `created_at` of the oldest record not yet delivered (pending or claimed, so in
     * ClaimIndex), one value per run; 0 when none is. Read from the ClaimIndex scan the sweep already makes.
     */
    oldestPendingAge: "OldestPendingAge",
    /**
     * DynamoDB's clock minus the sweeper's, ms (signed), one value per run whose sweep-cursor read returned a `Date`
     * header. Past `SWEEPER_CLOCK_TOLERANCE_MS` either way the sweep uses DynamoDB's time for its cutoff.
     */
    clockOffset: "SweeperClockOffset",
} as const;

/** Counter names the store emits, each tagged with `partition` (the handlers drop the tag). */
export const STORE_METRICS = {
    /** A claim transaction lost to a concurrent transaction (TransactionConflict). +1. */
    claimConflicts: "OutboxClaimConflicts",
    /** The ordering-key scan path read more than 8 pages; the value is the page count. */
    claimScanPages: "DynamoDBOutboxClaimScanPages",
    /** Claim returned a short batch after a mid-batch transient failure. +1. */
    claimTruncated: "DynamoDBOutboxClaimTruncated",
    /** Claim skipped an `OUTBOX#` item it cannot decode (and held its ordering key). +1 per item per claim. */
    undecodable: "DynamoDBOutboxUndecodableRecords",
} as const;
