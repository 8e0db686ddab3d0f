/**
 * The arguments of the {@link OutboxConsumer} component, and the defaults and ranges of its numbers. The arg TSDoc
 * quotes {@link CONSUMER_RANGES}; the validator (`consumer-validation.ts`) enforces them.
 *
 * @packageDocumentation
 */
import type * as pulumi from "@pulumi/pulumi";
import type { IntegerLimit } from "../runtime/limits";
import type { InboxConsumer, InboxMessage } from "../runtime/inbox/handler";

/**
 * The kinds of destination a consumer reads from (`OutboxConsumerArgs.destinationKind`). An as-const object, so
 * that other languages get an enum (Pulumi's schema analyzer takes no union of string literals).
 */
export const OutboxConsumerDestinationKind = {
    /** An SNS topic: the consumer's queue is subscribed to it with raw delivery. */
    Sns: "sns",
    /** An SQS queue: the outbox sends to it, and the consumer's function reads it. */
    Sqs: "sqs",
    /** An EventBridge bus: a rule on it routes the outbox's events to the consumer's queue. */
    EventBridge: "eventbridge",
} as const;

/** One of `OutboxConsumerDestinationKind`'s values. */
export type OutboxConsumerDestinationKind =
    (typeof OutboxConsumerDestinationKind)[keyof typeof OutboxConsumerDestinationKind];

/**
 * The integer args: default and allowed range. `batchSize` is further bounded by the queue (at most 10 on a FIFO
 * queue, and above 10 on a standard one only with a batching window of at least 1 s: Lambda's rules).
 */
export const CONSUMER_RANGES = {
    /** Event source mapping: messages per invocation. */
    batchSize: { min: 1, max: 10000, fallback: 10, unit: "messages" },
    /** Event source mapping: how long Lambda gathers messages before invoking, in seconds. */
    maximumBatchingWindowInSeconds: { min: 0, max: 300, fallback: 0, unit: "seconds" },
    /** The queue's redrive policy: receives before a message moves to the DLQ. */
    maxReceiveCount: { min: 1, max: 1000, fallback: 5, unit: "receives" },
    /** The function's timeout, in seconds; the queue's visibility timeout is {@link VISIBILITY_TIMEOUT_FACTOR} times it. */
    timeout: { min: 1, max: 900, fallback: 60, unit: "seconds" },
    /** The created function's memory, in MB. */
    memorySize: { min: 128, max: 10240, fallback: 256, unit: "MB" },
} as const satisfies Record<string, IntegerLimit>;

/** The integer args {@link CONSUMER_RANGES} bounds. */
export type ConsumerRangedArg = keyof typeof CONSUMER_RANGES;

/** The queue's visibility timeout is this many times the function's timeout, as AWS advises for Lambda (services-sqs-configure). */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/** The largest `batchSize` of a FIFO queue, and of a standard queue without a batching window (Lambda's rule). */
export const SMALL_BATCH_MAX = 10;

/** Retention of the created function's log group, in days. */
export const CONSUMER_LOG_RETENTION_DAYS = 30;

/** The DLQ keeps a message this long (SQS's longest): a standard queue keeps the original enqueue time on the move. */
export const CONSUMER_DLQ_RETENTION_SECONDS = 1_209_600;

/** The oldest-message alarm's threshold, in seconds: a message waiting this long means the consumer is behind or stuck. */
export const OLDEST_MESSAGE_ALARM_SECONDS = 900;

/**
 * The arguments of {@link OutboxConsumer}. Give exactly one of `consume` and `functionArn`.
 */
export interface OutboxConsumerArgs {
    /**
     * The outbox's destination (`outbox.destinationArn`, in this program or another stack's through a
     * `StackReference`): an SNS topic, an SQS queue or an EventBridge bus. Its kind, and whether it is FIFO, are
     * read from a plain ARN; when it is an Output they come from `destinationKind` and `fifo`, and are checked
     * against the ARN when it resolves at deployment.
     */
    destinationArn: pulumi.Input<string>;
    /**
     * The destination's kind, needed only when `destinationArn` is an Output (not known until deployment): the
     * children differ by kind. With a plain ARN it must match it, or be omitted.
     * @default read from a plain `destinationArn`; `sns` (the Outbox's default destination) for an Output
     */
    destinationKind?: OutboxConsumerDestinationKind;
    /**
     * Whether the destination topic or queue is FIFO, needed only when `destinationArn` is an Output: the
     * consumer's queue and its DLQ are then FIFO too. With a plain ARN it must match its `.fifo` suffix, or be omitted.
     * @default read from a plain `destinationArn` (its name ends in `.fifo`); `false` for an Output
     */
    fifo?: boolean;
    /**
     * The consumer, in TypeScript: given one message, it returns the writes that apply its effect. The component
     * bundles it into a Lambda function like the publisher (serialized by value, inside `createInboxHandler`), which
     * commits the writes with the inbox marker in one transaction, so each event is applied once. Give this or
     * `functionArn`. (A method here, so that Pulumi's schema analyzer leaves it out of the other languages' schema.)
     * @default undefined
     */
    consume?(message: InboxMessage): ReturnType<InboxConsumer>;
    /**
     * An existing Lambda function to map the queue to (any language; `createInboxHandler` or Powertools'
     * idempotency inside it), instead of `consume`. Its role needs the consumer's grant: give `functionRoleName`,
     * call `grantConsume(role)`, or attach the `consumerPolicy` output yourself.
     * @default undefined
     */
    functionArn?: pulumi.Input<string>;
    /**
     * With `functionArn`: the name of that function's role, to which the component attaches the consumer's grant
     * (an `aws.iam.RolePolicy` with `consumerPolicy`'s statements).
     * @default undefined (attach `consumerPolicy` yourself)
     */
    functionRoleName?: pulumi.Input<string>;
    /**
     * The consumer's name in the inbox markers (`Inbox`'s `consumer`): 1 to 128 letters, digits, `-`, `_`, `.` or
     * `:`. Keep it stable: a renamed consumer has no markers and applies redelivered events again. Only with
     * `consume`.
     * @default the component's name
     */
    consumerName?: string;
    /**
     * An existing table for the inbox markers (partition key `PK` and sort key `SK`, strings; TTL on `ttl`), in the
     * function's account and region.
     * @default undefined (a table is created)
     */
    inboxTableName?: pulumi.Input<string>;
    /**
     * Which events reach the consumer: an SNS filter policy (on the message attributes, e.g.
     * `{ "outbox.type": ["OrderPlaced"] }`) for a topic, or an EventBridge event pattern for a bus. A queue has
     * none.
     * @default undefined (every event; on a bus, every event that carries `detail.outbox.id`)
     */
    filter?: { [key: string]: any };
    /**
     * The payload bucket of an `Outbox` with `largePayloads` (its ARN, `arn:aws:s3:::<name>`), so that the consumer
     * reads claim checks: the created function resolves each pointer to its payload from this bucket (and no other),
     * and the role (the created one, or `functionRoleName`) gets the Outbox's reader grant, `s3:GetObject` on the
     * payloads. Without it, a claim-checked event fails with `INVALID_CONFIG` naming this arg, and ends in the DLQ.
     * @default undefined (no claim checks expected)
     */
    payloadBucketArn?: pulumi.Input<string>;
    /**
     * The KMS key the payload bucket is encrypted with (the Outbox's `kmsKeyArn`, when it has one): the role gets
     * `kms:Decrypt` on it. Only with `payloadBucketArn`.
     * @default undefined (the bucket uses no customer managed key)
     */
    payloadKmsKeyArn?: pulumi.Input<string>;
    /** Messages per invocation: 1 to 10,000; at most 10 on a FIFO queue, or without `maximumBatchingWindowInSeconds`. @default 10 */
    batchSize?: number;
    /** How long Lambda gathers messages before invoking, in seconds: 0 to 300. @default 0 */
    maximumBatchingWindowInSeconds?: number;
    /** Receives of a message before the queue's redrive policy moves it to the DLQ: 1 to 1000 (AWS advises 5 or more). @default 5 */
    maxReceiveCount?: number;
    /**
     * The function's timeout in seconds, 1 to 900: the created function's, or the given `functionArn`'s (which the
     * component cannot read). The queue's visibility timeout is 6 times it.
     * @default 60
     */
    timeout?: number;
    /** The created function's memory in MB: 128 to 10240. Only with `consume`. @default 256 */
    memorySize?: number;
    /** Whether to declare the alarms: the DLQ's depth, the age of the oldest message, the function's errors. @default true */
    alarms?: boolean;
    /** ARNs notified when an alarm fires and when it recovers (SNS topics, say). @default [] */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /** Tags on every child that takes them. @default {} */
    tags?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}
