/**
 * An SNS topic as the destination: `PublishBatch`, 10 entries and 256 KB per call, each entry's `Failed[]` read,
 * and what an SNS error is a fault of.
 *
 * Errors are mapped from the PublishBatch reference's error list
 * (https://docs.aws.amazon.com/sns/latest/api/API_PublishBatch.html#API_PublishBatch_Errors) and the common errors
 * (https://docs.aws.amazon.com/sns/latest/api/CommonErrors.html); a `Failed[]` entry carries `SenderFault`
 * (https://docs.aws.amazon.com/sns/latest/api/API_BatchResultErrorEntry.html).
 *
 * A refusal is classified by what it is about. One that names a field of the message (its body, an attribute, its
 * `MessageGroupId` or `MessageDeduplicationId` value: up to 128 alphanumerics and punctuation,
 * https://docs.aws.amazon.com/sns/latest/api/API_PublishBatchRequestEntry.html) is the message's own: the other
 * messages go on. Only a refusal about the topic itself holds the shard: its ARN or name, or a group or
 * deduplication id missing from every message of a FIFO topic ("Every message must include a MessageGroupId",
 * https://docs.aws.amazon.com/sns/latest/api/API_Publish.html), which is a `fifo` setting that does not match it.
 *
 * @packageDocumentation
 */
import type { PublishBatchCommandOutput } from "@aws-sdk/client-sns";
import { snsSdk } from "../sdk-clients";
import { publishEntry, SNS_MAX_MESSAGE_BYTES, snsMessageSize, type OutboundMessage } from "../record/message";
import type { ClientLike } from "../ports";
import { readIdBatchAnswer, refusalWithoutValue, type Destination, type PublishFailureKind } from "./destination";
import { DESTINATION_KINDS, DESTINATION_LABELS } from "./kind";
import { keepOwnAttributes } from "./own-attributes";
import type { CloudEventsWriter } from "./cloud-events";

/**
 * An SNS refusal about the topic rather than one message (read without an echoed value, `refusalWithoutValue`): its
 * ARN or name as the parameter at fault ("Invalid parameter: TopicArn"), a parameter only the other topic type takes,
 * or a group or deduplication id missing from every message of a FIFO topic ("Invalid parameter: The
 * MessageGroupId parameter is required for FIFO topics", "The topic should either have ContentBasedDeduplication
 * enabled or MessageDeduplicationId provided explicitly").
 */
const ABOUT_THE_TOPIC = /\bTopic ?(?:Arn|Name)\b|topic type|required for FIFO topics|ContentBasedDeduplication/i;

/**
 * Classify an SNS error (a whole call's exception, or one `Failed[]` entry):
 * - `message`: bad parameters, too large, or any entry SNS marks `SenderFault` that is not one of the kinds below;
 * - `deployment`: the topic does not exist, AuthorizationError, a KMS key disabled or not usable, an
 *   `InvalidParameter` about the topic (`ABOUT_THE_TOPIC`: its ARN, as SNS answers for a topic of another
 *   region or a malformed ARN, or a `fifo` setting that does not match it);
 * - `transient`: throttling, internal errors, timeouts.
 *
 * @param code - The SDK error name or a `Failed[]` entry's `Code`, with or without the `Exception` suffix.
 * @param senderFault - A `Failed[]` entry's `SenderFault`. @default false (a call's exception: throttling is a sender fault there too)
 * @param message - The error's message (SNS names the parameter it refuses). @default ""
 */
export function classifySnsFailure(code: string, senderFault = false, message = ""): PublishFailureKind {
    const bare = code.replace(/Exception$/, "");
    switch (bare) {
        case "InvalidParameter":
        case "InvalidParameterValue":
            // "Invalid parameter: TopicArn": the topic is the deployment's, whatever the message holds.
            return ABOUT_THE_TOPIC.test(refusalWithoutValue(message)) ? "deployment" : "message";
        case "NotFound":
        case "AuthorizationError":
        case "AccessDenied":
        case "InvalidSecurity":
        case "InvalidClientTokenId":
        case "ExpiredToken":
        case "KMSDisabled":
        case "KMSInvalidState":
        case "KMSNotFound":
        case "KMSOptInRequired":
        case "KMSAccessDenied":
        case "EndpointDisabled":
            return "deployment";
        case "ParameterValueInvalid":
        case "Validation":
        case "ValidationError":
        case "InvalidBatchEntryId":
        case "BatchEntryIdsNotDistinct":
        case "BatchRequestTooLong":
        case "TooManyEntriesInBatchRequest":
        case "EmptyBatchRequest":
            return "message";
        default:
            if (/throttl|internal|unavailable|timeout|KMSThrottling/i.test(bare)) return "transient";
            return senderFault ? "message" : "transient";
    }
}

/**
 * An SNS topic as a {@link Destination}. On a FIFO topic each entry's `MessageGroupId` is the ordering key (else the
 * partition) and its `MessageDeduplicationId` the event's identity (`eventIdOf`: the record id, or a redriven record's origin id).
 *
 * @param sns - The SNS client (`SNSClient`).
 * @param topicArn - The topic.
 * @param fifo - Whether the topic is FIFO.
 * @param cloudEvents - With it, each message is its CloudEvent (`cloud-events.ts`) with a `content-type` attribute
 *   alone. @default undefined (the payload as the body, the outbox's attributes)
 */
export function snsDestination(
    sns: ClientLike,
    topicArn: string,
    fifo: boolean,
    cloudEvents?: CloudEventsWriter,
): Destination {
    return {
        kind: DESTINATION_KINDS.sns,
        arn: topicArn,
        fifo,
        bytesPerCall: SNS_MAX_MESSAGE_BYTES,
        entryBytes: cloudEvents?.size ?? snsMessageSize,
        classify: classifySnsFailure,
        async sendCall(messages: readonly OutboundMessage[]) {
            const command = new (snsSdk().PublishBatchCommand)({
                TopicArn: topicArn,
                PublishBatchRequestEntries: messages.map((m, i) => ({
                    ...publishEntry(m, String(i), fifo),
                    ...(cloudEvents && { Message: cloudEvents.body(m), MessageAttributes: cloudEvents.attributes() }),
                })),
            });
            // OpenTelemetry's AWS SDK instrumentation injects into SNS Publish today, not PublishBatch: kept for when it does.
            keepOwnAttributes(command, (input) => input.PublishBatchRequestEntries);
            const out = (await sns.send(command)) as PublishBatchCommandOutput | undefined;
            return readIdBatchAnswer(
                { label: DESTINATION_LABELS.sns, classify: classifySnsFailure },
                out,
                messages.length,
            );
        },
    };
}
