/**
 * The one home of the handler settings' ranges and defaults: the publisher, the sweeper, the environment the
 * component sets for them, the redrive tool, the event source mapping (the component's and the local one), and the
 * inbox and its handler.
 * The runtime's validators and the component's args read these figures; nothing else writes them out.
 *
 * Plain data only: the handler factories reach this module, and Pulumi serializes what they reach by value.
 * No object here may hold a primitive under a `default` key, which makes Pulumi's closure serializer throw
 * (`../shared/reference/test-infra.md` §7); the default is named `fallback`.
 *
 * @packageDocumentation
 */

/** An inclusive integer range and the value used when the setting is omitted. */
export interface IntegerLimit {
    /** The smallest allowed value. */
    readonly min: number;
    /** The largest allowed value. */
    readonly max: number;
    /** The value used when the setting is omitted. */
    readonly fallback: number;
    /** What the value counts, for error messages. */
    readonly unit: string;
}

/** The publisher's and sweeper's settings (`createPublisher`, `createSweeper`, and the `OUTBOX_*` environment). */
export const HANDLER_LIMITS = {
    /** Seconds a terminal record stays before TTL deletes it. */
    completionGraceSeconds: { min: 1, max: 365 * 24 * 3600, fallback: 3600, unit: "seconds" },
    /** Seconds a pending record waits before the sweeper publishes it. */
    sweepAfterSeconds: { min: 1, max: 24 * 3600, fallback: 120, unit: "seconds" },
    /** Permanent publish failures of one record before it goes to the DLQ. */
    maxPublishAttempts: { min: 1, max: 100, fallback: 3, unit: "attempts" },
    /** Records per claim on the keyed path. */
    claimLimit: { min: 1, max: 1000, fallback: 100, unit: "records" },
    /** The publisher stops starting work when fewer ms than this remain in the invocation. */
    publisherReserveMs: { min: 0, max: 900_000, fallback: 5_000, unit: "ms" },
    /** The sweeper stops starting work when fewer ms than this remain in the invocation. */
    sweeperReserveMs: { min: 0, max: 900_000, fallback: 10_000, unit: "ms" },
    /** Partitions the sweeper drains in one run. */
    maxPartitionsPerRun: { min: 1, max: 10_000, fallback: 200, unit: "partitions" },
    /** Expired records the sweeper dead-letters in one run. */
    maxExpiredPerRun: { min: 1, max: 100_000, fallback: 1000, unit: "records" },
    /**
     * ExpiryIndex partition key values expiring records are spread over (`OutboxStore`, `OutboxWriter`, the sweeper
     * and the component). 1 writes `"1"`, as GoBridge does. 64 shards carry 64 times one key's write ceiling, and an
     * expiry sweep queries one more value than the shard count, so more would cost queries for no need.
     */
    expiryShards: { min: 1, max: 64, fallback: 1, unit: "shards" },
    /**
     * The fencing version of the publisher's and the sweeper's claims, as the component and the `OUTBOX_*`
     * environment give it (`createPublisher` takes any bigint from 1n). GoBridge's meaning: a relay's version comes
     * from its lease and only goes up; a claim below a partition's fence (the highest version that claimed it) is
     * refused. Every relay of a table uses one version, at least the highest any claimer of the table ever used.
     * At most 2^53 - 1, the largest integer a component arg carries exactly.
     */
    claimVersion: { min: 1, max: Number.MAX_SAFE_INTEGER, fallback: 1, unit: "version" },
} as const satisfies Record<string, IntegerLimit>;

/** The writer's settings (`OutboxWriter`). */
export const WRITER_LIMITS = {
    /**
     * Seconds of compaction grace: the FENCE row's ttl is max(grace, 30 days) ahead, and so is an id guard's after its
     * record's creation or expiry. Whole seconds, as GoBridge keeps them; a year at most, as the component's
     * `completionGraceSeconds`.
     */
    compactionGraceSeconds: { min: 0, max: 365 * 24 * 3600, fallback: 3600, unit: "seconds" },
} as const satisfies Record<string, IntegerLimit>;

/** The DLQ redrive's settings (`redriveDeadLetters`). */
export const REDRIVE_LIMITS = {
    /** Messages read from the DLQ in one run. */
    maxMessages: { min: 1, max: 1_000_000, fallback: 1000, unit: "messages" },
    /** How long a received message stays invisible while it is written back, in seconds (SQS allows up to 12 h). */
    visibilityTimeoutSeconds: { min: 1, max: 43_200, fallback: 60, unit: "seconds" },
} as const satisfies Record<string, IntegerLimit>;

/**
 * The event source mapping's settings. `min`/`max` are what Lambda accepts; `fallback` is this package's
 * default (Lambda's own retry default, -1, would block a shard for the stream's 24 h retention).
 */
export const MAPPING_LIMITS = {
    /** Records per invocation. */
    batchSize: { min: 1, max: 10_000, fallback: 100, unit: "records" },
    /** How long Lambda gathers records before invoking with fewer than `batchSize`, in seconds. */
    maximumBatchingWindowInSeconds: { min: 0, max: 300, fallback: 0, unit: "seconds" },
    /** Retries of a failed batch before its metadata goes to the on-failure destination; -1 retries forever. */
    maximumRetryAttempts: { min: -1, max: 10_000, fallback: 10, unit: "retries" },
    /** Batches of one shard processed at once; records of one item always share a batch, in order. */
    parallelizationFactor: { min: 1, max: 10, fallback: 1, unit: "batches per shard" },
} as const satisfies Record<string, IntegerLimit>;

/**
 * The inbox's settings (`Inbox`). A marker must outlive every delivery of its outbox id, or a late one applies the
 * consumer's writes again. SQS keeps a message at most 14 days (`MessageRetentionPeriod` 1,209,600 s). The relay
 * can also publish an id again after the first publish (a record whose completion failed after SNS took it is
 * published again by the sweeper, minutes later unless the outbox is down), and that copy has 14 days of its own.
 * So the default is 14 days plus a margin of one day for that repeat and for clocks that disagree. 60 s is SQS's
 * shortest retention; a year is a ceiling for the setting, not a recommendation.
 */
export const INBOX_LIMITS = {
    /** Seconds an inbox marker stays before TTL may delete it. */
    markerTtlSeconds: { min: 60, max: 365 * 24 * 3600, fallback: 15 * 24 * 3600, unit: "seconds" },
    /**
     * Partition keys one consumer's markers of one source are spread over. 1 (the default) is the unsharded key of
     * every earlier version, so an upgrade changes no key; a team opts in with N and a `previousMarkerShards`
     * window. At most 64: 64 keys carry about 32,000 markers a second (64,000 write units with the transaction's
     * doubling), above DynamoDB's default per-table quota of 40,000 write units a second, so more shards could not
     * be used without raising the table's quota; and the same bound as `expiryShards`.
     */
    markerShards: { min: 1, max: 64, fallback: 1, unit: "shards" },
} as const satisfies Record<string, IntegerLimit>;

/**
 * The inbox handler's settings (`createInboxHandler`). The reserve is the time a record may take once it is started
 * (the consumer, a claim check's S3 read, the transaction with the SDK's retries) plus the answer to Lambda: the
 * handler takes no new record when less than that is left. Its default leaves 1 s of work in Lambda's default
 * 3-second timeout; at most 900,000 ms, Lambda's longest timeout.
 */
export const INBOX_HANDLER_LIMITS = {
    /** The inbox handler takes no new record when fewer ms than this remain in the invocation. */
    reserveMs: { min: 0, max: 900_000, fallback: 2_000, unit: "ms" },
} as const satisfies Record<string, IntegerLimit>;
