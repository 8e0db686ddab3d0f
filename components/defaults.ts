/**
 * The defaults and allowed ranges of every numeric and enumerated {@link OutboxArgs} value, in one place.
 * The arg TSDoc quotes these figures, the validator enforces them and the tests read them, so a change here
 * is a change everywhere (a test checks that each `@default` in the TSDoc matches).
 *
 * @packageDocumentation
 */
import { HANDLER_LIMITS, MAPPING_LIMITS, type IntegerLimit } from "../runtime/limits";
import { OutboxAttributeType, OutboxBillingMode, OutboxLogLevel, OutboxProjectionType } from "./args";

/** An inclusive integer range with the value used when the arg is omitted (`fallback`), as the runtime's limits. */
export type IntegerRange = IntegerLimit;

/**
 * Integer args: default and allowed range. The handler settings and the mapping's batch size and window are the
 * runtime's own limits (`runtime/limits.ts`). The mapping's retry and age bounds are tighter than AWS's on
 * purpose: `-1` (retry forever) would block the shard for the stream's 24 h retention, and a record older than
 * the retention no longer exists to retry.
 */
export const OUTBOX_RANGES = {
    /** Event source mapping: retries of a failed batch before it goes to the DLQ. AWS allows -1..10000. */
    maximumRetryAttempts: { ...MAPPING_LIMITS.maximumRetryAttempts, min: 0 },
    /** Event source mapping: oldest record Lambda still sends, in seconds. AWS allows -1 or 60..604800. */
    maximumRecordAgeInSeconds: { min: 60, max: 86400, fallback: 3600, unit: "seconds" },
    /** Event source mapping: records per invocation. */
    batchSize: MAPPING_LIMITS.batchSize,
    /** Event source mapping: how long Lambda gathers records before invoking, in seconds. */
    maximumBatchingWindowInSeconds: MAPPING_LIMITS.maximumBatchingWindowInSeconds,
    /** Event source mapping: concurrent batches per shard. */
    parallelizationFactor: MAPPING_LIMITS.parallelizationFactor,
    /** Publisher and sweeper memory, in MB. */
    memorySize: { min: 128, max: 10240, fallback: 256, unit: "MB" },
    /** Publisher and sweeper timeout, in seconds. */
    timeout: { min: 1, max: 900, fallback: 60, unit: "seconds" },
    /** Log retention of both functions' log groups, in days. */
    logRetentionInDays: { min: 1, max: 3653, fallback: 30, unit: "days" },
    /** Seconds a terminal record stays before TTL deletes it (the handlers' `OUTBOX_COMPLETION_GRACE_SECONDS`). */
    completionGraceSeconds: HANDLER_LIMITS.completionGraceSeconds,
    /** Seconds a pending record waits before the sweeper publishes it (`OUTBOX_SWEEP_AFTER_SECONDS`). */
    sweepAfterSeconds: HANDLER_LIMITS.sweepAfterSeconds,
    /** Publish attempts before a permanent error sends a record to the DLQ (`OUTBOX_MAX_PUBLISH_ATTEMPTS`). */
    maxPublishAttempts: HANDLER_LIMITS.maxPublishAttempts,
    /** ExpiryIndex shards expiring records are spread over (the sweeper's `OUTBOX_EXPIRY_SHARDS`). */
    expiryShards: HANDLER_LIMITS.expiryShards,
    /** Partitions the sweeper drains in one run, from its cursor (`OUTBOX_MAX_PARTITIONS_PER_RUN`). */
    maxPartitionsPerRun: HANDLER_LIMITS.maxPartitionsPerRun,
    /** The fencing version of both functions' claims (`OUTBOX_CLAIM_VERSION`). */
    claimVersion: HANDLER_LIMITS.claimVersion,
    /** Read and write capacity units of the table and of each GSI when `billingMode` is `PROVISIONED`. */
    provisionedCapacity: { min: 1, max: 40000, fallback: 5, unit: "capacity units" },
} as const satisfies Record<string, IntegerRange>;

/** The integer args that {@link OUTBOX_RANGES} bounds. */
export type RangedArg = keyof typeof OUTBOX_RANGES;

/** The retention periods CloudWatch Logs accepts, in days. */
export const LOG_RETENTION_DAYS = [
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/** The billing modes the table accepts: the values of {@link OutboxBillingMode}. */
export const BILLING_MODES: readonly OutboxBillingMode[] = Object.values(OutboxBillingMode);

/** The application log levels Lambda accepts (`loggingConfig.applicationLogLevel`), lowest first: {@link OutboxLogLevel}'s. */
export const LOG_LEVELS: readonly OutboxLogLevel[] = Object.values(OutboxLogLevel);

/**
 * The functions' system (platform) log level: `INFO` keeps Lambda's START, END and REPORT lines (duration,
 * memory, init time), which cost one line each per invocation.
 */
export const SYSTEM_LOG_LEVEL = "INFO";

/** Defaults of the non-numeric args. */
export const OUTBOX_DEFAULTS = {
    /** On-demand capacity: an outbox's write rate follows the application's. */
    billingMode: OutboxBillingMode.PayPerRequest,
    /** Point-in-time recovery on: the table holds undelivered events. */
    pointInTimeRecovery: true,
    /** Deletion protection off, so that a stack can be torn down; turn it on in production. */
    deletionProtection: false,
    /** Not FIFO: a standard topic or queue (a bus is never FIFO). */
    fifo: false,
    /** The sweeper runs every minute. */
    sweepSchedule: "rate(1 minute)",
    /** The SQS DLQ keeps messages for the SQS maximum, 14 days. */
    dlqMessageRetentionSeconds: 14 * 24 * 3600,
    /** The mapping reads from the oldest record: LATEST would skip records written before it existed. */
    startingPosition: "TRIM_HORIZON",
    /** The handlers log at info and above: one line per failure or warning, never per delivered record. */
    logLevel: OutboxLogLevel.Info,
    /** The alarms are declared: an outbox fails quietly, and these are what make it loud. */
    alarms: true,
    /** The dashboard is declared, one per outbox (CloudWatch bills dashboards past its free tier by the month). */
    dashboard: true,
    /** A bus's existence is checked before events go on it: EventBridge drops events put on a missing bus. */
    checkEventBus: true,
    /** A key attribute of an extra index (`globalSecondaryIndexes`) is a string unless its type is given. */
    extraIndexKeyType: OutboxAttributeType.String,
    /** An extra index projects every attribute unless told otherwise, as DynamoDB's console does. */
    extraIndexProjectionType: OutboxProjectionType.All,
} as const;

/**
 * The alarm thresholds ({@link OutboxAlarmThresholds}): default and allowed range of each. Each alarm fires when its
 * statistic is *greater than* the threshold. The defaults are for production: a healthy outbox never crosses them.
 * - The stream path publishes a record within a second or two of its write, so its lag (`iteratorAgeMs`) and the
 *   p99 write→publish age (`ageAtPublishP99Ms`) stay far below a minute; past one the stream path is falling
 *   behind (a poison batch retrying, throttling, a slow topic), long before the 24 h stream retention is at risk.
 * - A record stays in ClaimIndex only while in flight. Ten minutes (`oldestPendingAgeMs`) is five times the
 *   sweeper's default `sweepAfterSeconds` of 120 s: past it, neither path is delivering that record.
 * - The counts are 0: one dead-lettered message, one record the sweeper had to publish (the stream path missed
 *   it), one failed or throttled invocation, one stream record the mapping dropped is already worth a look; one
 *   partition fenced above `claimVersion` is a partition the outbox no longer delivers.
 */
export const ALARM_THRESHOLD_RANGES = {
    /** The publisher's `IteratorAge` (Maximum over a minute), in ms. */
    iteratorAgeMs: { min: 1000, max: 86_400_000, fallback: 60_000, unit: "milliseconds" },
    /** The sweeper's `OldestPendingAge` (Maximum over five minutes), in ms. */
    oldestPendingAgeMs: { min: 60_000, max: 1_209_600_000, fallback: 600_000, unit: "milliseconds" },
    /** The publisher's `AgeAtPublish` p99 over five minutes, in ms. */
    ageAtPublishP99Ms: { min: 100, max: 86_400_000, fallback: 30_000, unit: "milliseconds" },
    /** The DLQ's `ApproximateNumberOfMessagesVisible` (Maximum over five minutes). */
    dlqDepth: { min: 0, max: 1_000_000, fallback: 0, unit: "messages" },
    /** The sweeper's `Published` (Sum over five minutes). */
    sweeperPublished: { min: 0, max: 1_000_000, fallback: 0, unit: "records" },
    /** `Errors` of the publisher, and of the sweeper (Sum over five minutes each). */
    errors: { min: 0, max: 1_000_000, fallback: 0, unit: "invocations" },
    /** The publisher's `Throttles` (Sum over five minutes). */
    throttles: { min: 0, max: 1_000_000, fallback: 0, unit: "invocations" },
    /** `FencedPartitions` of the publisher and the sweeper (Sum over five minutes). */
    fencedPartitions: { min: 0, max: 1_000_000, fallback: 0, unit: "partitions" },
    /** The stream mapping's `DroppedEventCount` (Sum over five minutes). */
    droppedEvents: { min: 0, max: 1_000_000, fallback: 0, unit: "records" },
} as const satisfies Record<string, IntegerRange>;

/** The thresholds {@link ALARM_THRESHOLD_RANGES} bounds. */
export type AlarmThreshold = keyof typeof ALARM_THRESHOLD_RANGES;
