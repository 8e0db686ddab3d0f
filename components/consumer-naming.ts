/**
 * The type token of the {@link OutboxConsumer} component and the Pulumi names of its children, derived from the
 * component's name (`<name>-<suffix>`), so two consumers in one stack never collide. Physical AWS names are left to
 * Pulumi's autonaming; for a FIFO queue the AWS provider's autonaming appends the `.fifo` suffix AWS requires. Here
 * rather than in `consumer.ts` so that the policy pack can recognise the children without loading the component.
 *
 * @packageDocumentation
 */

/** The component's type token (`<package>:index:<Class>`). */
export const OUTBOX_CONSUMER_TYPE = "dynamodb-outbox:index:OutboxConsumer";

/** The suffix of each child's Pulumi name. */
export const CONSUMER_CHILD_SUFFIX = {
    queue: "queue",
    dlq: "dlq",
    redrivePolicy: "redrive",
    subscription: "subscription",
    rule: "rule",
    target: "target",
    queuePolicy: "queue-policy",
    inboxTable: "inbox",
    role: "role",
    consumePolicy: "consume-policy",
    logsPolicy: "logs-policy",
    logs: "logs",
    function: "function",
    mapping: "mapping",
    grant: "consume-grant",
    dlqDepthAlarm: "dlq-depth-alarm",
    oldestMessageAlarm: "oldest-message-alarm",
    errorsAlarm: "errors-alarm",
} as const;

/** A child of the consumer. */
export type ConsumerChild = keyof typeof CONSUMER_CHILD_SUFFIX;

/**
 * The Pulumi name of `child` in the consumer named `consumerName`, e.g. `billing-mapping`.
 *
 * @param consumerName - The component's name.
 * @param child - The child.
 */
export function consumerChildName(consumerName: string, child: ConsumerChild): string {
    return `${consumerName}-${CONSUMER_CHILD_SUFFIX[child]}`;
}
