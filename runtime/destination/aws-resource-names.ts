/**
 * The shapes of the AWS names the handlers are given (the destination's ARN, the DLQ URL) and the region each names,
 * so a wrong one is refused when the handler is built instead of meeting SNS's `InvalidParameter: TopicArn` or an
 * SDK stack trace on every record. The component's arg validation reads the same patterns.
 *
 * @packageDocumentation
 */

/** An SNS topic ARN, `arn:<partition>:sns:<region>:<account>:<name>`; group 1 is the region. */
export const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:([a-z0-9-]+):\d{12}:[A-Za-z0-9_-]{1,251}(\.fifo)?$/;

/**
 * An SQS queue URL: http(s), a host, then `/<account>/<queue name>`. The host is not parsed with the URL standard,
 * which refuses some local emulators' hosts (`sqs.us-east-1.127.0.0.1:4566`).
 */
const SQS_QUEUE_URL = /^https?:\/\/[^\s/]+\/[^\s/]+\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

/** The region of an AWS SQS endpoint host: `sqs.<region>.amazonaws.com` or `<region>.queue.amazonaws.com`. */
const SQS_HOST_REGION = /^https?:\/\/(?:sqs\.([a-z0-9-]+)|([a-z0-9-]+)\.queue)\.amazonaws\.com(?:\.cn)?\//;

/**
 * An SQS queue ARN, `arn:<partition>:sqs:<region>:<account>:<name>`; groups: 1 the partition, 2 the region, 3 the
 * account, 4 the queue name (1 to 80 letters, digits, `-` or `_`, and `.fifo` for a FIFO queue).
 */
export const SQS_QUEUE_ARN = /^arn:(aws[a-z-]*):sqs:([a-z0-9-]+):(\d{12}):([A-Za-z0-9_-]{1,80}(?:\.fifo)?)$/;

/**
 * An EventBridge event bus ARN, `arn:<partition>:events:<region>:<account>:event-bus/<name>`; groups: 1 the
 * partition, 2 the region, 3 the account, 4 the bus name (`default`, a custom name, or a partner bus's
 * `aws.partner/…`: up to 256 of letters, digits, `.`, `-`, `_` and `/`).
 */
export const EVENT_BUS_ARN = /^arn:(aws[a-z-]*):events:([a-z0-9-]+):(\d{12}):event-bus\/([A-Za-z0-9._/-]{1,256})$/;

/** What a topic ARN looks like, for messages. */
export const TOPIC_ARN_SHAPE = "arn:aws:sns:<region>:<account>:<name>";

/** What a queue ARN looks like, for messages. */
export const QUEUE_ARN_SHAPE = "arn:aws:sqs:<region>:<account>:<queue name>";

/** What an event bus ARN looks like, for messages. */
export const EVENT_BUS_ARN_SHAPE = "arn:aws:events:<region>:<account>:event-bus/<bus name>";

/** What a queue URL looks like, for messages. */
export const QUEUE_URL_SHAPE = "https://sqs.<region>.amazonaws.com/<account>/<queue name>";

/**
 * Whether `value` is an SNS topic ARN.
 *
 * @param value - The configured topic ARN.
 */
export function isTopicArn(value: string): boolean {
    return SNS_TOPIC_ARN.test(value);
}

/**
 * The region a topic ARN names, or `undefined` when it is not a topic ARN.
 *
 * @param arn - The topic ARN.
 */
export function topicArnRegion(arn: string): string | undefined {
    return SNS_TOPIC_ARN.exec(arn)?.[1];
}

/**
 * Whether `value` is an SQS queue URL (see {@link QUEUE_URL_SHAPE}; a local emulator's host is accepted).
 *
 * @param value - The configured queue URL.
 */
export function isQueueUrl(value: string): boolean {
    return SQS_QUEUE_URL.test(value);
}

/**
 * The region an SQS queue URL names in its AWS host, or `undefined` when its host is not an AWS regional SQS
 * endpoint (an emulator, a VPC endpoint, the legacy `queue.amazonaws.com`).
 *
 * @param url - The queue URL.
 */
export function queueUrlRegion(url: string): string | undefined {
    const match = SQS_HOST_REGION.exec(url);
    return match === null ? undefined : (match[1] ?? match[2]);
}

/**
 * Whether `value` is an SQS queue ARN (`QUEUE_ARN_SHAPE`).
 *
 * @param value - The configured queue ARN.
 */
export function isQueueArn(value: string): boolean {
    return SQS_QUEUE_ARN.test(value);
}

/**
 * Whether `value` is an EventBridge event bus ARN (`EVENT_BUS_ARN_SHAPE`).
 *
 * @param value - The configured event bus ARN.
 */
export function isEventBusArn(value: string): boolean {
    return EVENT_BUS_ARN.test(value);
}

/**
 * The region a destination ARN names (an SNS topic's, an SQS queue's or an event bus's), or `undefined` when it is
 * none of them.
 *
 * @param arn - The destination's ARN.
 */
export function destinationArnRegion(arn: string): string | undefined {
    return topicArnRegion(arn) ?? (SQS_QUEUE_ARN.exec(arn) ?? EVENT_BUS_ARN.exec(arn))?.[2];
}

/**
 * The queue URL of an SQS queue ARN: `https://sqs.<region>.amazonaws.com/<account>/<name>` (`.amazonaws.com.cn` in
 * the China partition), the form SQS's own `GetQueueUrl` answers, so the publisher needs neither that call nor its
 * permission. An SQS client given its own `endpoint` (a local emulator) sends there and finds the queue by the
 * URL's path; one without sends to this host. `undefined` when `arn` is not a queue ARN.
 *
 * @param arn - The queue ARN.
 */
export function queueUrlOfArn(arn: string): string | undefined {
    const match = SQS_QUEUE_ARN.exec(arn);
    if (match === null) return undefined;
    const [, partition, region, account, name] = match;
    return `https://sqs.${region}.amazonaws.com${partition === "aws-cn" ? ".cn" : ""}/${account}/${name}`;
}
