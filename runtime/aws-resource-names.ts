/**
 * The shapes of the AWS names the handlers are given (the topic ARN, the DLQ URL) and the region each names, so a
 * wrong one is refused when the handler is built instead of meeting SNS's `InvalidParameter: TopicArn` or an SDK
 * stack trace on every record. The component's arg validation reads the same topic ARN pattern.
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

/** What a topic ARN looks like, for messages. */
export const TOPIC_ARN_SHAPE = "arn:aws:sns:<region>:<account>:<name>";

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
