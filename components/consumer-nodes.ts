/**
 * `OutboxConsumer.nodes`: the consumer's child resources, typed, like `Outbox.nodes`. A child the component did not
 * declare for its kind of destination or its args is `undefined`.
 *
 * @packageDocumentation
 */
import type * as aws from "./aws";

/** The child resources of an `OutboxConsumer`. */
export interface OutboxConsumerNodes {
    /** The queue the component created; `undefined` when the destination is a queue (it is read as it is). */
    readonly queue: aws.sqs.Queue | undefined;
    /** The dead-letter queue. */
    readonly dlq: aws.sqs.Queue;
    /** The redrive policy set on a destination queue read as it is; `undefined` for a topic or a bus (the created queue carries its own). */
    readonly redrivePolicy: aws.sqs.RedrivePolicy | undefined;
    /** The queue's subscription to the topic (raw delivery); `undefined` unless the destination is a topic. */
    readonly subscription: aws.sns.TopicSubscription | undefined;
    /** The rule on the bus; `undefined` unless the destination is a bus. */
    readonly rule: aws.cloudwatch.EventRule | undefined;
    /** The rule's target, the queue; `undefined` unless the destination is a bus. */
    readonly target: aws.cloudwatch.EventTarget | undefined;
    /** The queue policy letting only the topic or the rule send; `undefined` when the destination is a queue. */
    readonly queuePolicy: aws.sqs.QueuePolicy | undefined;
    /** The inbox table the component created; `undefined` when `inboxTableName` is given. */
    readonly inboxTable: aws.dynamodb.Table | undefined;
    /** The function around `consume`; `undefined` with `functionArn`. */
    readonly function: aws.lambda.Function | undefined;
    /** The function's role; `undefined` with `functionArn`. */
    readonly role: aws.iam.Role | undefined;
    /** The function's log group; `undefined` with `functionArn`. */
    readonly logs: aws.cloudwatch.LogGroup | undefined;
    /** The role's logs grant; `undefined` with `functionArn`. */
    readonly logsPolicy: aws.iam.RolePolicy | undefined;
    /** The consumer's grant (`consumerPolicy`'s statements) on the function's role, or on `functionRoleName`; `undefined` with `functionArn` and no `functionRoleName`. */
    readonly consumePolicy: aws.iam.RolePolicy | undefined;
    /** The mapping from the queue to the function. */
    readonly mapping: aws.lambda.EventSourceMapping;
    /** The alarms: the DLQ's depth, the age of the oldest message, the function's errors; empty with `alarms: false`. */
    readonly alarms: readonly aws.cloudwatch.MetricAlarm[];
}
