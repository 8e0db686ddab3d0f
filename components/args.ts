/**
 * The arguments of the {@link Outbox} component. Every default and range quoted here comes from
 * `components/defaults.ts` ({@link OUTBOX_RANGES}, {@link OUTBOX_DEFAULTS}); a test keeps the two in step.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";

/**
 * The table's capacity modes (`OutboxArgs.billingMode`). An as-const object, so that other languages get an
 * enum (Pulumi's schema analyzer takes no union of string literals); a plain string from JavaScript or YAML works
 * too, and the validator refuses any other.
 */
export const OutboxBillingMode = {
    /** On-demand capacity: pay per read and write. */
    PayPerRequest: "PAY_PER_REQUEST",
    /** Provisioned read and write capacity units (`provisionedCapacity`). */
    Provisioned: "PROVISIONED",
} as const;

/** One of `OutboxBillingMode`'s values. */
export type OutboxBillingMode = (typeof OutboxBillingMode)[keyof typeof OutboxBillingMode];

/**
 * The application log levels of the functions (`OutboxArgs.logLevel`), lowest first: those Lambda accepts as
 * `loggingConfig.applicationLogLevel`. An as-const object for the same reason as `OutboxBillingMode`.
 */
export const OutboxLogLevel = {
    /** Every line, `TRACE` and up (the handlers log at `TRACE` what they log at `DEBUG`). */
    Trace: "TRACE",
    /** `DEBUG` and up. */
    Debug: "DEBUG",
    /** `INFO` and up: one line per failure or warning, never per delivered record. */
    Info: "INFO",
    /** `WARN` and up. */
    Warn: "WARN",
    /** `ERROR` and up. */
    Error: "ERROR",
    /** `FATAL` only, which the handlers never write: no line at all. */
    Fatal: "FATAL",
} as const;

/** One of `OutboxLogLevel`'s values. */
export type OutboxLogLevel = (typeof OutboxLogLevel)[keyof typeof OutboxLogLevel];

/**
 * Partial overrides of a child resource's args, merged over what the component computed (top-level keys
 * replace the component's). The escape hatch for settings the component does not expose; overriding a setting
 * the outbox depends on (keys, indexes, stream, filter) is caught by the policy pack.
 */
export interface OutboxTransforms {
    /** Merged into the `aws.dynamodb.Table` args. @default undefined */
    table?: Partial<aws.dynamodb.TableArgs>;
    /**
     * Merged into the created `aws.sns.Topic` args; ignored when `topicArn`, `queueArn` or `eventBusArn` is given,
     * since no topic is created then. @default undefined
     */
    topic?: Partial<aws.sns.TopicArgs>;
    /** Merged into the DLQ's `aws.sqs.Queue` args. @default undefined */
    queue?: Partial<aws.sqs.QueueArgs>;
    /**
     * Merged into the publisher's `aws.lambda.CallbackFunction` args (its `FunctionArgs` part; the code, handler
     * and code path options stay the component's). @default undefined
     */
    publisher?: Partial<aws.lambda.FunctionArgs>;
    /** Merged into the `aws.lambda.EventSourceMapping` args. @default undefined */
    eventSourceMapping?: Partial<aws.lambda.EventSourceMappingArgs>;
    /** Merged into the sweeper's `aws.lambda.CallbackFunction` args, like `publisher`. @default undefined */
    sweeper?: Partial<aws.lambda.FunctionArgs>;
    /** Merged into the sweeper schedule's `aws.cloudwatch.EventRule` args. @default undefined */
    schedule?: Partial<aws.cloudwatch.EventRuleArgs>;
    /**
     * Merged into the publisher log group's `aws.cloudwatch.LogGroup` args, e.g. `{ name: "/aws/lambda/…" }` for a
     * fixed name instead of Pulumi's autonaming. @default undefined
     */
    publisherLogs?: Partial<aws.cloudwatch.LogGroupArgs>;
    /** Merged into the sweeper log group's `aws.cloudwatch.LogGroup` args, like `publisherLogs`. @default undefined */
    sweeperLogs?: Partial<aws.cloudwatch.LogGroupArgs>;
    /**
     * Merged into the `aws.cloudwatch.Dashboard` args (ignored with `dashboard: false`), e.g. `{ dashboardName }` for
     * a name of your own. @default undefined
     */
    dashboard?: Partial<aws.cloudwatch.DashboardArgs>;
}

/**
 * The thresholds of the outbox's alarms. Each alarm fires when its statistic is greater than its threshold; the
 * defaults and ranges are `ALARM_THRESHOLD_RANGES` in `components/defaults.ts`, which also says why. Each threshold
 * takes an `Input` (a `StackReference` output, say); the validator checks the plain ones, an Output is used as it
 * resolves.
 */
export interface OutboxAlarmThresholds {
    /**
     * The publisher's stream lag: `IteratorAge` (AWS/Lambda, Maximum per minute, 3 minutes in a row), in ms.
     * From 1000 to 86400000.
     * @default 60000
     */
    iteratorAgeMs?: pulumi.Input<number>;
    /**
     * The oldest record not yet delivered: the sweeper's `OldestPendingAge` (Maximum per 5 minutes, 2 in a row), in
     * ms. From 60000 to 1209600000.
     * @default 600000
     */
    oldestPendingAgeMs?: pulumi.Input<number>;
    /**
     * The publisher's write→publish age: `AgeAtPublish` p99 (per 5 minutes, 2 in a row), in ms. From 100 to 86400000.
     * @default 30000
     */
    ageAtPublishP99Ms?: pulumi.Input<number>;
    /**
     * Messages in the DLQ: `ApproximateNumberOfMessagesVisible` (AWS/SQS, Maximum per 5 minutes). From 0 to 1000000.
     * @default 0
     */
    dlqDepth?: pulumi.Input<number>;
    /**
     * Records the sweeper had to publish because the stream path missed them: the sweeper's `Published` (Sum per
     * 5 minutes). From 0 to 1000000.
     * @default 0
     */
    sweeperPublished?: pulumi.Input<number>;
    /**
     * Failed invocations of the publisher, and of the sweeper: `Errors` (AWS/Lambda, Sum per 5 minutes, one alarm
     * per function). From 0 to 1000000.
     * @default 0
     */
    errors?: pulumi.Input<number>;
    /**
     * Throttled invocations of the publisher: `Throttles` (AWS/Lambda, Sum per 5 minutes). From 0 to 1000000.
     * @default 0
     */
    throttles?: pulumi.Input<number>;
    /**
     * Partitions whose fence is above `claimVersion`, which the outbox can never deliver: `FencedPartitions` of the
     * publisher and the sweeper together (Sum per 5 minutes). From 0 to 1000000.
     * @default 0
     */
    fencedPartitions?: pulumi.Input<number>;
    /**
     * Stream records the event source mapping dropped after `maximumRetryAttempts` or past
     * `maximumRecordAgeInSeconds`: `DroppedEventCount` (AWS/Lambda, by `EventSourceMappingUUID`, Sum per 5 minutes;
     * the mapping's `EventCount` metrics are on). From 0 to 1000000.
     * @default 0
     */
    droppedEvents?: pulumi.Input<number>;
}

/**
 * The arguments of `new Outbox(name, args)`. Every one is optional: `new Outbox("orders")` is a working outbox.
 *
 * An arg typed `Input<…>` also takes an Output (of another resource, or of a `StackReference`) and goes to the
 * child resource as it is: the validator checks a plain value, and leaves an Output alone. The args typed plain
 * (`billingMode`, `fifo`, `importTableName`, `alarms`, `dashboard`, `alarmThresholds` as a whole and `transform`)
 * decide which children exist or how they are shaped while the program runs, so an Output there is refused with
 * `INVALID_CONFIG`.
 */
export interface OutboxArgs {
    /**
     * Table capacity mode: `OutboxBillingMode` (`PAY_PER_REQUEST` or `PROVISIONED`). Plain: it decides whether
     * the table and its indexes declare capacity.
     * @default "PAY_PER_REQUEST"
     */
    billingMode?: OutboxBillingMode;
    /**
     * Read and write capacity units of the table and of each GSI, used only when `billingMode` is
     * `PROVISIONED`. From 1 to 40000.
     * @default 5
     */
    provisionedCapacity?: pulumi.Input<number>;
    /**
     * Point-in-time recovery of the table (it holds undelivered events).
     * @default true
     */
    pointInTimeRecovery?: pulumi.Input<boolean>;
    /**
     * Deletion protection of the table. Turn it on in production.
     * @default false
     */
    deletionProtection?: pulumi.Input<boolean>;
    /**
     * The name of an existing DynamoDB table to adopt instead of creating one: the table child gets this name and
     * Pulumi's `import` resource option with it, so the first `pulumi up` takes the table over. The table must
     * already have the outbox's shape (`dynamodb-outbox verify`, then `migrate`: see docs/component.md). Keep it set
     * afterwards: it is the table's name, and removing it would rename the table, which replaces it. 3 to 255
     * letters, digits, `_`, `-` or `.`. Plain: it is a resource option.
     * @default undefined (a table is created, autonamed)
     */
    importTableName?: string;
    /**
     * A customer managed KMS key ARN. When given it encrypts the table, the DLQ and the created topic, and
     * both functions get `kms:Decrypt` and `kms:GenerateDataKey*` on it (and on nothing else).
     * When omitted: the table uses the AWS owned key, the DLQ SQS-managed SSE, the topic no SSE. A given
     * destination encrypted with another key needs `destinationKmsKeyArn`.
     * @default undefined
     */
    kmsKeyArn?: pulumi.Input<string>;
    /**
     * An existing SNS topic to publish to (`PublishBatch`). When given, the component creates no topic.
     * Set `fifo` to match the topic. An outbox has exactly one destination: at most one of `topicArn`, `queueArn`
     * and `eventBusArn` (with none, a topic is created).
     * @default undefined (a topic is created, unless queueArn or eventBusArn is given)
     */
    topicArn?: pulumi.Input<string>;
    /**
     * An existing SQS queue to send the events to instead of an SNS topic (`SendMessageBatch`): a standard
     * queue, or a FIFO one (a name ending in `.fifo`) with `fifo: true`. The component then creates no topic,
     * and both functions get `sqs:SendMessage` on this queue (besides the DLQ's). At most one of `topicArn`,
     * `queueArn` and `eventBusArn`.
     * @default undefined
     */
    queueArn?: pulumi.Input<string>;
    /**
     * An existing EventBridge event bus to put the events on instead of an SNS topic (`PutEvents`), e.g.
     * `arn:aws:events:<region>:<account>:event-bus/default`. The component then creates no topic, and both
     * functions get `events:PutEvents` on this bus only, and `events:DescribeEventBus` on it: EventBridge accepts and
     * drops events put on a bus that does not exist, so the handlers check that it does (see `checkEventBus`). A bus
     * is never FIFO, so `fifo: true` is refused. At most one of `topicArn`, `queueArn` and `eventBusArn`.
     * @default undefined
     */
    eventBusArn?: pulumi.Input<string>;
    /**
     * With `eventBusArn`: whether the functions confirm with `DescribeEventBus` that the bus exists before they put
     * events on it (before the first invocation's, then at most once a minute while warm; `OUTBOX_CHECK_EVENT_BUS`).
     * A bus that does not exist, or that the role may not describe, holds every invocation with an error log naming
     * the bus and the fix, because EventBridge accepts and drops events put on a missing bus. Set `false` only for a
     * bus whose owner cannot grant the role `events:DescribeEventBus` (a bus in another account whose resource
     * policy does not): nothing then confirms the bus, a missing or deleted one loses every event put on it while
     * the records are completed, and each cold start logs a warning saying so. Only with `eventBusArn`.
     * @default true
     */
    checkEventBus?: pulumi.Input<boolean>;
    /**
     * The EventBridge `Source` of every event the outbox puts on `eventBusArn`, which consumers' rules match on:
     * 1 to 256 characters, not starting with `aws.` (reverse DNS is usual, e.g. `com.acme.orders`). Only with
     * `eventBusArn`.
     * @default "dynamodb-outbox"
     */
    eventSource?: pulumi.Input<string>;
    /**
     * The customer managed KMS key ARN a given destination (`topicArn`, `queueArn` or `eventBusArn`) is
     * encrypted with, when it is not `kmsKeyArn`: both functions then get `kms:GenerateDataKey*` and `kms:Decrypt`
     * on it (and on nothing else). Only with a given destination: a created topic uses `kmsKeyArn`.
     * @default undefined
     */
    destinationKmsKeyArn?: pulumi.Input<string>;
    /**
     * Whether the destination is FIFO: the created or given SNS topic, or the given SQS queue (never an event
     * bus). A created FIFO topic gets a name ending in `.fifo` and content-based deduplication off, because the
     * publisher sends the record id as `MessageDeduplicationId`. A given topic or queue whose ARN is known must
     * match it: a name ending in `.fifo` needs `true`, any other `false`. Plain: it shapes the topic and the
     * publisher.
     * @default false
     */
    fifo?: boolean;
    /**
     * Event source mapping: retries of a failed batch (bisected on each error) before its metadata goes to the
     * DLQ. From 0 to 10000; `-1` (forever) is refused because it blocks the shard for 24 h.
     * @default 10
     */
    maximumRetryAttempts?: pulumi.Input<number>;
    /**
     * Event source mapping: the age in seconds past which Lambda stops retrying a record and sends it to the DLQ.
     * From 60 to 86400 (the stream's retention). The sweeper still publishes such records from the table.
     * @default 3600
     */
    maximumRecordAgeInSeconds?: pulumi.Input<number>;
    /**
     * Event source mapping: the most records per invocation. From 1 to 10000.
     * @default 100
     */
    batchSize?: pulumi.Input<number>;
    /**
     * Event source mapping: seconds Lambda gathers records before invoking. From 0 to 300.
     * @default 0
     */
    maximumBatchingWindowInSeconds?: pulumi.Input<number>;
    /**
     * Event source mapping: concurrent batches per shard. From 1 to 10. Records of one item stay in order at
     * any value; keyed records are ordered by the store's claim path, not by the stream.
     * @default 1
     */
    parallelizationFactor?: pulumi.Input<number>;
    /**
     * Memory of the publisher and the sweeper, in MB. From 128 to 10240.
     * @default 256
     */
    memorySize?: pulumi.Input<number>;
    /**
     * Timeout of the publisher and the sweeper, in seconds. From 1 to 900.
     * @default 60
     */
    timeout?: pulumi.Input<number>;
    /**
     * Retention of both functions' log groups, in days. From 1 to 3653 (CloudWatch accepts only its listed
     * values: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
     * 3288, 3653).
     * @default 30
     */
    logRetentionInDays?: pulumi.Input<number>;
    /**
     * Seconds a completed or expired record stays before TTL deletes it (`OUTBOX_COMPLETION_GRACE_SECONDS`).
     * From 1 to 31536000.
     * @default 3600
     */
    completionGraceSeconds?: pulumi.Input<number>;
    /**
     * Seconds a pending record waits before the sweeper publishes it (`OUTBOX_SWEEP_AFTER_SECONDS`).
     * From 1 to 86400.
     * @default 120
     */
    sweepAfterSeconds?: pulumi.Input<number>;
    /**
     * Publish attempts before a permanent error sends a record to the DLQ (`OUTBOX_MAX_PUBLISH_ATTEMPTS`).
     * From 1 to 100.
     * @default 3
     */
    maxPublishAttempts?: pulumi.Input<number>;
    /**
     * ExpiryIndex partition key values expiring records are spread over (`OUTBOX_EXPIRY_SHARDS`). From 1 to 64.
     * 1 writes `has_expiry = "1"`, as GoBridge does, and caps the table near 500 expiring messages per second.
     * N > 1 spreads them over `"1#0"` … `"1#<N-1>"`; each sweep then queries N + 1 values. Give the application's
     * `OutboxWriter` the same `expiryShards`. A GoBridge drainer sharing the table sees only `"1"`: see docs/scale.md.
     * @default 1
     */
    expiryShards?: pulumi.Input<number>;
    /**
     * Partitions the sweeper drains in one run (`OUTBOX_MAX_PARTITIONS_PER_RUN`). From 1 to 10000. A run takes the
     * partitions with a record past `sweepAfterSeconds` in ClaimIndex's scan order from a cursor kept in the table,
     * and the next run starts after the last one it drained, so partitions that never drain cannot starve the
     * others: each is reached within ceil(N / maxPartitionsPerRun) runs, N being the partitions with such a record
     * (see docs/runtime.md).
     * @default 200
     */
    maxPartitionsPerRun?: pulumi.Input<number>;
    /**
     * The fencing version of the publisher's and the sweeper's claims (`OUTBOX_CLAIM_VERSION`).
     * From 1 to 9007199254740991 (2^53 - 1). In GoBridge a relay's version comes from its lease and only goes up: a claim of a
     * partition raises its fence to the claimer's version, and a claim below the fence is refused. Every relay of the
     * table must use the same version, at least the highest any claimer of the table ever used: a GoBridge relay, or
     * an `OutboxStore` used by hand with a higher version, leaves its partitions' fences where this outbox cannot
     * claim them, and the `fencedPartitionsAlarm` fires (see docs/operations.md). Leave it at 1 unless another
     * claimer shares the table.
     * @default 1
     */
    claimVersion?: pulumi.Input<number>;
    /**
     * The sweeper's EventBridge schedule, `rate(...)` or `cron(...)`. Its interval also decides whether a silent
     * sweeper breaches the oldest-pending alarm (see docs/operations.md).
     * @default "rate(1 minute)"
     */
    sweepSchedule?: pulumi.Input<string>;
    /**
     * The application log level of both functions (`loggingConfig.applicationLogLevel`; the logs are JSON): one of
     * `OutboxLogLevel`, `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`, `FATAL`. Lambda passes it to the handlers as
     * `AWS_LAMBDA_LOG_LEVEL` and they drop lines below it (`TRACE` logs what `DEBUG` does; `FATAL` drops every line).
     * Metrics are not logs: the EMF lines are written at every level.
     * @default "INFO"
     */
    logLevel?: pulumi.Input<OutboxLogLevel>;
    /**
     * Whether to declare the outbox's CloudWatch alarms (stream lag, oldest pending record, write→publish p99, DLQ
     * depth, records the sweeper had to publish, errors and throttles, partitions fenced above `claimVersion`; see
     * `alarmThresholds`). `false` declares none.
     * Plain: it decides which children exist.
     * @default true
     */
    alarms?: boolean;
    /**
     * The alarms' thresholds; each one omitted keeps its production default. The object itself is plain, each
     * threshold an `Input`.
     * @default {}
     */
    alarmThresholds?: OutboxAlarmThresholds;
    /**
     * SNS topic ARNs notified when an alarm fires and when it recovers (its `alarmActions` and `okActions`): pass
     * your on-call topic. A list of Inputs, or one Output of a list (a `StackReference` output, say). With none, the
     * alarms still change state, but only the CloudWatch console shows it.
     * @default []
     */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * Whether to declare a CloudWatch dashboard of the outbox's metrics (stream lag, oldest pending record, age at
     * publish, published and dead-lettered records, DLQ depth, errors, capacity units per published record).
     * Plain: it decides whether the child exists.
     * @default true
     */
    dashboard?: boolean;
    /**
     * Events of any size: create a private S3 bucket for payloads too large to travel inline (past SNS's 256 KiB,
     * or the `OutboxWriter`'s `largePayloads.thresholdBytes`), which the writer stores there before its transaction
     * and whose records then carry a pointer (a claim check). The bucket blocks public access, denies requests
     * without TLS, is encrypted (SSE-KMS with `kmsKeyArn`, else SSE-S3) and expires payloads after
     * `payloadExpirationDays`. `writerPolicy` then grants `s3:PutObject` on the payloads' prefix and `readerPolicy`
     * gives consumers `s3:GetObject` there; the publisher and the sweeper get no S3 permission. The bucket's name is
     * derived from the component's, so the name must be lowercase letters, digits and `-`. Plain: it decides which
     * children exist. See docs/runtime.md, "Large payloads".
     * @default false
     */
    largePayloads?: boolean;
    /**
     * An existing bucket to use for the payloads instead of creating one (an S3 bucket ARN, `arn:aws:s3:::<name>`):
     * turns the claim check on without creating a bucket. Its public access, encryption and lifecycle rule are
     * yours (the policy pack checks a bucket declared in the same stack); give it a rule that expires
     * `outbox-payloads/` after longer than a record can wait plus your consumers' retention. A bucket encrypted
     * with a key other than `kmsKeyArn` needs grants on that key.
     * @default undefined
     */
    payloadBucketArn?: pulumi.Input<string>;
    /**
     * Days the created bucket keeps a payload before its lifecycle rule expires it: longer than a record can wait
     * to be published (`sweepAfterSeconds` + `maximumRecordAgeInSeconds`) plus a consumer's horizon (SQS's default
     * retention, 4 days). From 1 to 3650; only with `largePayloads` (a given bucket's rules are its own).
     * @default 14
     */
    payloadExpirationDays?: pulumi.Input<number>;
    /**
     * Tags added to every child resource that takes tags. The table also gets the outbox tag the policy pack
     * recognises it by.
     * @default {}
     */
    tags?: pulumi.Input<Record<string, pulumi.Input<string>>>;
    /**
     * Partial overrides of each child's args. Plain (each override's values may be Inputs).
     * @default {}
     */
    transform?: OutboxTransforms;
}
