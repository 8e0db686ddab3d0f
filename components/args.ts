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

/*
 * The AWS args below hold a union (a policy as JSON text or a document object, a resource or its ARN), which other
 * languages' schemas cannot say: the object form of `transform` takes them with the string only. A callback gets
 * the AWS args type itself.
 */

/** `aws.iam.RoleArgs` with the trust policy as JSON text: the object form of `transform.publisherRole` and `sweeperRole`. */
export interface OutboxRoleArgs extends Omit<aws.iam.RoleArgs, "assumeRolePolicy"> {
    /** The trust policy, as JSON text. @default the Lambda service principal's */
    assumeRolePolicy?: pulumi.Input<string>;
}

/** `aws.iam.RolePolicyAttachmentArgs` with the role as its name: the object form of `transform.*VpcAccess`. */
export interface OutboxRolePolicyAttachmentArgs extends Omit<aws.iam.RolePolicyAttachmentArgs, "role"> {
    /** The role's name. @default the function's role */
    role?: pulumi.Input<string>;
}

/** `aws.lambda.PermissionArgs` with the function as its name or ARN: the object form of `transform.schedulePermission`. */
export interface OutboxPermissionArgs extends Omit<aws.lambda.PermissionArgs, "function"> {
    /** The function's name or ARN. @default the sweeper */
    function?: pulumi.Input<string>;
}

/** `aws.cloudwatch.MetricAlarmArgs` with the actions as ARNs: the object form of the alarms' `transform` keys. */
export interface OutboxMetricAlarmArgs extends Omit<
    aws.cloudwatch.MetricAlarmArgs,
    "alarmActions" | "okActions" | "insufficientDataActions"
> {
    /** The ARNs notified when the alarm fires. @default `alarmActions` */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /** The ARNs notified when the alarm recovers. @default `alarmActions` */
    okActions?: pulumi.Input<pulumi.Input<string>[]>;
    /** The ARNs notified when the alarm has too little data. @default undefined */
    insufficientDataActions?: pulumi.Input<pulumi.Input<string>[]>;
}

/** `aws.s3.BucketArgs` with the policy as JSON text: the object form of `transform.payloadBucket`. */
export interface OutboxBucketArgs extends Omit<aws.s3.BucketArgs, "policy"> {
    /** The bucket policy, as JSON text. @default undefined (the TLS-only policy is its own child) */
    policy?: pulumi.Input<string>;
}

/** `aws.s3.BucketPolicyArgs` with the policy as JSON text: the object form of `transform.payloadBucketPolicy`. */
export interface OutboxBucketPolicyArgs extends Omit<aws.s3.BucketPolicyArgs, "policy"> {
    /** The bucket policy, as JSON text. @default the TLS-only policy */
    policy?: pulumi.Input<string>;
}

/**
 * One key per child resource (named as in `CHILD_SUFFIX`, `components/naming.ts`), each changing the args the
 * component computed for that child. The escape hatch for settings the component does not expose; overriding a
 * setting the outbox depends on (keys, indexes, stream, filter) is caught by the policy pack.
 *
 * Each key takes an object, deep-merged over the computed args: plain objects merge key by key (so `tags` given
 * here are added to the `tags` arg and win over it on the same key, and `environment.variables` adds variables),
 * arrays and every other value replace the computed one whole, and a key set to `undefined` removes the computed
 * value. From TypeScript or JavaScript a key also takes a callback `(args, opts, name) => void`, which may change
 * the args and resource options in place or return new args (wrap it in `transformCallback` for TypeScript's
 * types); a function cannot cross languages, so YAML and Python use objects. Whatever the transform does, the table
 * keeps the `dynamodb-outbox:table` tag the policy pack recognises it by. A key whose child is not declared (the
 * topic with a given destination, the payload bucket without `largePayloads`, the alarms with `alarms: false`, the
 * VPC grants without a VPC) is ignored.
 */
export interface OutboxTransforms {
    /** The `aws.dynamodb.Table`. @default undefined */
    table?: Partial<aws.dynamodb.TableArgs>;
    /** The created `aws.sns.Topic` (none is created when `topicArn`, `queueArn` or `eventBusArn` is given). @default undefined */
    topic?: Partial<aws.sns.TopicArgs>;
    /** The DLQ's `aws.sqs.Queue` (never a destination queue). @default undefined */
    queue?: Partial<aws.sqs.QueueArgs>;
    /**
     * The publisher's `aws.lambda.CallbackFunction` (its `FunctionArgs` part; the code and handler stay the
     * component's). @default undefined
     */
    publisher?: Partial<aws.lambda.FunctionArgs>;
    /** The publisher's `aws.iam.Role`. @default undefined */
    publisherRole?: Partial<OutboxRoleArgs>;
    /**
     * The publisher's `aws.cloudwatch.LogGroup`, e.g. `{ name: "/aws/lambda/…" }` for a fixed name instead of Pulumi's
     * autonaming. @default undefined
     */
    publisherLogs?: Partial<aws.cloudwatch.LogGroupArgs>;
    /** The `aws.iam.RolePolicyAttachment` of the publisher's VPC grant (only in a VPC). @default undefined */
    publisherVpcAccess?: Partial<OutboxRolePolicyAttachmentArgs>;
    /** The stream's `aws.lambda.EventSourceMapping`. @default undefined */
    eventSourceMapping?: Partial<aws.lambda.EventSourceMappingArgs>;
    /** The sweeper's `aws.lambda.CallbackFunction`, like `publisher`. @default undefined */
    sweeper?: Partial<aws.lambda.FunctionArgs>;
    /** The sweeper's `aws.iam.Role`. @default undefined */
    sweeperRole?: Partial<OutboxRoleArgs>;
    /** The sweeper's `aws.cloudwatch.LogGroup`, like `publisherLogs`. @default undefined */
    sweeperLogs?: Partial<aws.cloudwatch.LogGroupArgs>;
    /** The `aws.iam.RolePolicyAttachment` of the sweeper's VPC grant (only in a VPC). @default undefined */
    sweeperVpcAccess?: Partial<OutboxRolePolicyAttachmentArgs>;
    /** The sweeper schedule's `aws.cloudwatch.EventRule`. @default undefined */
    schedule?: Partial<aws.cloudwatch.EventRuleArgs>;
    /** The schedule's `aws.cloudwatch.EventTarget` (the sweeper). @default undefined */
    scheduleTarget?: Partial<aws.cloudwatch.EventTargetArgs>;
    /** The `aws.lambda.Permission` that lets the schedule invoke the sweeper. @default undefined */
    schedulePermission?: Partial<OutboxPermissionArgs>;
    /** The stream lag alarm (`aws.cloudwatch.MetricAlarm`). @default undefined */
    iteratorAgeAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The oldest pending record alarm. @default undefined */
    oldestPendingAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The write to publish p99 alarm. @default undefined */
    ageAtPublishAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The DLQ depth alarm. @default undefined */
    dlqDepthAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The alarm on records the sweeper had to publish. @default undefined */
    sweeperPublishedAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The publisher's errors alarm. @default undefined */
    publisherErrorsAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The publisher's throttles alarm. @default undefined */
    publisherThrottlesAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The sweeper's errors alarm. @default undefined */
    sweeperErrorsAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The fenced partitions alarm. @default undefined */
    fencedPartitionsAlarm?: Partial<OutboxMetricAlarmArgs>;
    /** The dropped stream records alarm. @default undefined */
    droppedEventsAlarm?: Partial<OutboxMetricAlarmArgs>;
    /**
     * The `aws.cloudwatch.Dashboard` (ignored with `dashboard: false`), e.g. `{ dashboardName }` for a name of your
     * own. @default undefined
     */
    dashboard?: Partial<aws.cloudwatch.DashboardArgs>;
    /** The created payload `aws.s3.Bucket` (`largePayloads`). @default undefined */
    payloadBucket?: Partial<OutboxBucketArgs>;
    /** The payload bucket's `aws.s3.BucketPublicAccessBlock`. @default undefined */
    payloadBucketPublicAccess?: Partial<aws.s3.BucketPublicAccessBlockArgs>;
    /** The payload bucket's TLS-only `aws.s3.BucketPolicy`. @default undefined */
    payloadBucketPolicy?: Partial<OutboxBucketPolicyArgs>;
    /** The payload bucket's `aws.s3.BucketServerSideEncryptionConfiguration`. @default undefined */
    payloadBucketEncryption?: Partial<aws.s3.BucketServerSideEncryptionConfigurationArgs>;
    /** The payload bucket's `aws.s3.BucketLifecycleConfiguration`. @default undefined */
    payloadBucketLifecycle?: Partial<aws.s3.BucketLifecycleConfigurationArgs>;
}

/**
 * The types of a key attribute of an extra index (`OutboxTableIndex`), as DynamoDB's `AttributeType`: string, number,
 * binary. An as-const object, so that other languages get an enum.
 */
export const OutboxAttributeType = {
    /** A string. */
    String: "S",
    /** A number. */
    Number: "N",
    /** Binary. */
    Binary: "B",
} as const;

/** One of `OutboxAttributeType`'s values. */
export type OutboxAttributeType = (typeof OutboxAttributeType)[keyof typeof OutboxAttributeType];

/** What an extra index (`OutboxTableIndex`) projects, as DynamoDB's `ProjectionType`. */
export const OutboxProjectionType = {
    /** Every attribute of the item. */
    All: "ALL",
    /** The table's and the index's keys only. */
    KeysOnly: "KEYS_ONLY",
    /** The keys and `nonKeyAttributes`. */
    Include: "INCLUDE",
} as const;

/** One of `OutboxProjectionType`'s values. */
export type OutboxProjectionType = (typeof OutboxProjectionType)[keyof typeof OutboxProjectionType];

/**
 * A global secondary index of your own on the outbox table, beside the outbox's three (`globalSecondaryIndexes`).
 * Its key attributes are added to the table's attribute definitions; with `billingMode` `PROVISIONED` it gets
 * `provisionedCapacity` like the outbox's indexes. Plain: it shapes the table.
 */
export interface OutboxTableIndex {
    /**
     * The index's name: 3 to 255 letters, digits, `_`, `-` or `.`, and none of the outbox's own (`ExpiryIndex`,
     * `RecordIDIndex`, `ClaimIndex`).
     */
    name: string;
    /** The partition key's attribute name (1 to 255 characters). */
    hashKey: string;
    /**
     * The partition key's type. An attribute the outbox already defines (such as `PK`) must keep the outbox's type.
     * @default "S"
     */
    hashKeyType?: OutboxAttributeType;
    /**
     * The sort key's attribute name (1 to 255 characters).
     * @default undefined (no sort key)
     */
    rangeKey?: string;
    /**
     * The sort key's type, like `hashKeyType`. Only with `rangeKey`.
     * @default "S"
     */
    rangeKeyType?: OutboxAttributeType;
    /**
     * What the index projects.
     * @default "ALL"
     */
    projectionType?: OutboxProjectionType;
    /**
     * The attributes an `INCLUDE` index projects besides the keys (1 to 100 names). Only with `INCLUDE`, which needs it.
     * @default undefined
     */
    nonKeyAttributes?: string[];
}

/**
 * The VPC both functions run in (`vpc`): Lambda puts their network interfaces in these subnets with these security
 * groups. The subnets need a route to DynamoDB, the destination, SQS and (with `kmsKeyArn`) KMS: a NAT gateway or
 * VPC endpoints.
 */
export interface OutboxVpc {
    /** The subnets' IDs (`subnet-…`), 1 to 16. */
    subnetIds: pulumi.Input<pulumi.Input<string>[]>;
    /** The security groups' IDs (`sg-…`), 1 to 5. */
    securityGroupIds: pulumi.Input<pulumi.Input<string>[]>;
}

/**
 * The CloudEvents format (`cloudEvents`): every event is sent as a structured-mode CloudEvents 1.0 JSON object (the
 * message body on a topic or a queue, with the one attribute `content-type: application/cloudevents+json`; the
 * `Detail` on a bus). Its `id` is the outbox id, `type` the message type, `time` the record's creation time, `data`
 * the payload; the trace context, the ordering key, the outbox's name and the headers travel as extension
 * attributes (`traceparent`, `tracestate`, `partitionkey`, `outboxsource`, `outboxheaders`). The inbox reads both
 * formats. See docs/destinations.md, "CloudEvents".
 */
export interface OutboxCloudEvents {
    /**
     * Every event's CloudEvents `source`: a non-empty URI-reference (RFC 3986) naming where the events come from,
     * e.g. `https://orders.example.com`, `urn:example:orders` or `/orders`; at most 1024 characters, characters
     * outside RFC 3986's percent-encoded, no IP-literal host. Sent to both functions as `OUTBOX_CLOUDEVENTS_SOURCE`.
     */
    source: pulumi.Input<string>;
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
 * (`billingMode`, `fifo`, `importTableName`, `replicaRegions`, `alarms`, `dashboard`, `largePayloads`,
 * `globalSecondaryIndexes`, `vpc` as a whole, `alarmThresholds` as a whole and `transform`)
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
     * The regions of the table's replicas, besides the component's own region (its provider's, the home region):
     * the table becomes a DynamoDB global table (version 2019.11.21, eventual consistency) with a replica in each,
     * streaming `NEW_AND_OLD_IMAGES`, and each of these regions gets its own relay through a provider of that region
     * (`<name>-<region>-provider`): a DLQ, a publisher mapped to the replica's stream, a sweeper and its schedule,
     * each named `<name>-<region>-<suffix>` and with roles granted on that region's replica, stream, DLQ and log
     * groups only. Every region's relay publishes the records written in its region, and the home region's also
     * those no region's writer stamped (docs/runtime.md, "Global tables"); the writers need `region` and
     * `globalTable: true`. All regions publish to the one destination, which stays in the home region. A taken-over
     * table (`importTableName`) with replicas declares them here. Each is a region name like `us-west-2`, distinct,
     * not the home region; `name` plus `-<region>` is at most 40 characters. Refused with `kmsKeyArn` (a key is
     * regional), `vpc` (subnets are), `queueArn` (a region's relay sends to its DLQ and the queue with one SQS
     * client), `billingMode` `PROVISIONED` (replicas need on-demand or auto scaling) and `transform.table.replicas`.
     * The alarms and the dashboard watch the home region only. Plain strings, not Inputs: each region's children
     * are declared while the program runs, and a child is never declared inside an Output's `apply`.
     * @default [] (a single-region table, and nothing of the above)
     */
    replicaRegions?: string[];
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
     * Send every event as a structured-mode CloudEvents 1.0 JSON object with this `source`, whichever the destination
     * (`OutboxCloudEvents`). Plain object: it decides whether the functions get `OUTBOX_CLOUDEVENTS_SOURCE`; its
     * `source` may be an Output. Without it the outbox's own format is sent, unchanged.
     * @default undefined (the outbox's own format: the payload as the body, the outbox's fields as attributes, or
     *   `{outbox, payload}` as a bus event's detail)
     */
    cloudEvents?: OutboxCloudEvents;
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
     * Global secondary indexes of your own on the outbox table, beside the outbox's three, which stay as they are:
     * each one's key attributes are added to the attribute definitions. A name that is one of the outbox's indexes,
     * a key attribute the outbox defines with another type, or more than 17 (DynamoDB's 20 in all) is refused with
     * `INVALID_CONFIG`. Plain: it shapes the table.
     * @default []
     */
    globalSecondaryIndexes?: OutboxTableIndex[];
    /**
     * The VPC both functions run in: their `vpcConfig` gets these subnets and security groups, and each function's
     * role gets what Lambda needs to manage the functions' network interfaces there, the AWS managed policy
     * `AWSLambdaVPCAccessExecutionRole` (a `RolePolicyAttachment` child, `<name>-publisher-vpc-access` and
     * `<name>-sweeper-vpc-access`). A `vpcConfig` given through `transform.publisher` or `transform.sweeper` gets the
     * same grant. Plain: it decides which children exist (each list may be an Output).
     * @default undefined (the functions run outside any VPC)
     */
    vpc?: OutboxVpc;
    /**
     * Tags added to every child resource that takes tags. The table also gets the outbox tag the policy pack
     * recognises it by (`dynamodb-outbox:table` = `true`), which neither these tags nor `transform.table` can drop or
     * change. A child's `transform` tags are merged over these, and win on the same key.
     * @default {}
     */
    tags?: pulumi.Input<Record<string, pulumi.Input<string>>>;
    /**
     * Changes to each child's args, one key per child (see `OutboxTransforms`): an object deep-merged over the
     * computed args, or from TypeScript and JavaScript a callback. Plain (the values in each object may be Inputs).
     * @default {}
     */
    transform?: OutboxTransforms;
}
