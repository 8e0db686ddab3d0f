/**
 * The three kinds of destination an outbox publishes to, how each is named by its ARN, and the EventBridge entry's
 * fixed parts (its `Source`, and the `DetailType` of a message without a type). The component, the handlers'
 * environment, the publisher, `doctor` and the policy pack read these; nothing else spells them out.
 *
 * Plain data and pure functions only: the handler factories reach this module, and Pulumi serializes what they
 * reach by value.
 *
 * @packageDocumentation
 */
import {
    EVENT_BUS_ARN_SHAPE,
    isEventBusArn,
    isQueueArn,
    isTopicArn,
    QUEUE_ARN_SHAPE,
    TOPIC_ARN_SHAPE,
} from "./aws-resource-names";

/** The destination kinds: an SNS topic, an SQS queue (standard or FIFO), an EventBridge event bus. */
export const DESTINATION_KINDS = {
    /** An SNS topic (`PublishBatch`). */
    sns: "sns",
    /** An SQS queue (`SendMessageBatch`). */
    sqs: "sqs",
    /** An EventBridge event bus (`PutEvents`). */
    eventBridge: "eventbridge",
} as const;

/** One of {@link DESTINATION_KINDS}' values. */
export type DestinationKind = (typeof DESTINATION_KINDS)[keyof typeof DESTINATION_KINDS];

/** The setting that names each kind's ARN, in `PublisherConfig`, the component's args and the handler environment. */
export const DESTINATION_SETTINGS = {
    sns: "topicArn",
    sqs: "queueArn",
    eventbridge: "eventBusArn",
} as const satisfies Record<DestinationKind, string>;

/** One of {@link DESTINATION_SETTINGS}' values: `topicArn`, `queueArn` or `eventBusArn`. */
export type DestinationSetting = (typeof DESTINATION_SETTINGS)[DestinationKind];

/** What each kind is called in messages and logs. */
export const DESTINATION_LABELS = {
    sns: "SNS",
    sqs: "SQS",
    eventbridge: "EventBridge",
} as const satisfies Record<DestinationKind, string>;

/** What each kind's ARN is called and looks like, and how it is refused: for messages that name the fix. */
export const DESTINATION_ARN_RULES = {
    sns: {
        what: "an SNS topic ARN",
        shape: TOPIC_ARN_SHAPE,
        valid: isTopicArn,
        unit: "topic",
        notThe: "not its name",
        elsewhere: "SNS refuses a topic of another region (InvalidParameter: TopicArn)",
    },
    sqs: {
        what: "an SQS queue ARN",
        shape: QUEUE_ARN_SHAPE,
        valid: isQueueArn,
        unit: "queue",
        notThe: "not its URL or name",
        elsewhere: "SQS refuses a queue of another region",
    },
    eventbridge: {
        what: "an EventBridge event bus ARN",
        shape: EVENT_BUS_ARN_SHAPE,
        valid: isEventBusArn,
        unit: "bus",
        notThe: "not its name",
        elsewhere: "EventBridge refuses a bus of another region",
    },
} as const satisfies Record<
    DestinationKind,
    {
        readonly what: string;
        readonly shape: string;
        readonly valid: (arn: string) => boolean;
        readonly unit: string;
        readonly notThe: string;
        readonly elsewhere: string;
    }
>;

/**
 * The kind a destination ARN names, by its shape: an SNS topic, an SQS queue or an EventBridge bus; `undefined` for
 * anything else.
 *
 * @param arn - A destination ARN.
 */
export function destinationKindOfArn(arn: string): DestinationKind | undefined {
    if (isTopicArn(arn)) return DESTINATION_KINDS.sns;
    if (isQueueArn(arn)) return DESTINATION_KINDS.sqs;
    if (isEventBusArn(arn)) return DESTINATION_KINDS.eventBridge;
    return undefined;
}

/** The EventBridge `Source` of every entry unless one is set: consumers' rules match on it. */
export const DEFAULT_EVENT_SOURCE = "dynamodb-outbox";

/** The EventBridge `DetailType` of a message with no type (EventBridge requires one); a typed message uses its type. */
export const UNTYPED_DETAIL_TYPE = "outbox.message";

/** EventBridge's limits on an entry's `Source` and `DetailType` (PutEventsRequestEntry). */
export const EVENTBRIDGE_NAME_LIMITS = {
    /** `Source`: 1 to 256 characters. */
    sourceMaxLength: 256,
    /** `DetailType`: 1 to 128 characters. */
    detailTypeMaxLength: 128,
} as const;

/**
 * Why `source` cannot be an EventBridge `Source`, or `undefined` when it can: 1 to 256 characters, starting with a
 * letter, digit, `.`, `-`, `_` or `/`, and not with `aws.` (reserved for AWS services). From the
 * PutEventsRequestEntry reference (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsRequestEntry.html).
 *
 * @param source - The configured source.
 */
export function eventSourceProblem(source: string): string | undefined {
    if (source.length === 0 || source.length > EVENTBRIDGE_NAME_LIMITS.sourceMaxLength)
        return `must be 1 to ${EVENTBRIDGE_NAME_LIMITS.sourceMaxLength} characters`;
    if (!/^[/.\-_A-Za-z0-9]/.test(source)) return "must start with a letter, a digit, '.', '-', '_' or '/'";
    if (source.startsWith("aws.")) return "may not start with 'aws.' (reserved for AWS services' events)";
    return undefined;
}
