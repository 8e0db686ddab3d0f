/**
 * An SQS queue as the destination: `SendMessageBatch`, 10 entries and 1 MiB per call, each entry's `Failed[]` read,
 * and what an SQS error is a fault of. The message is what an SNS subscriber with raw delivery receives: the payload
 * as the body, the outbox's attributes and the headers as String message attributes.
 *
 * Errors are mapped from the SendMessageBatch reference's error list
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html#API_SendMessageBatch_Errors)
 * and the common errors (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html).
 * A `Failed[]` entry carries `SenderFault`
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_BatchResultErrorEntry.html); AWS
 * publishes no closed list of entry codes, so `SenderFault` decides what is not named here.
 *
 * A refusal is classified by what it is about. One that names a field of the message (its body, an attribute, its
 * `MessageGroupId` or `MessageDeduplicationId` value: both are 1 to 128 alphanumerics and punctuation,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatchRequestEntry.html) is
 * the message's own: the other messages go on. Only a refusal about the queue itself holds the shard: a parameter
 * only the other queue type takes, a group or deduplication id missing from every message of a FIFO queue
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html), the queue URL.
 *
 * @packageDocumentation
 */
import type { SendMessageBatchCommandOutput } from "@aws-sdk/client-sqs";
import { sqsSdk } from "../sdk-clients";
import { queueUrlOfArn } from "./aws-resource-names";
import { OutboxError } from "../errors";
import {
    eventIdOf,
    fifoMessageGroupId,
    messageAttributes,
    snsMessageSize,
    type OutboundMessage,
} from "../record/message";
import type { ClientLike } from "../ports";
import { readIdBatchAnswer, refusalWithoutValue, type Destination, type PublishFailureKind } from "./destination";
import { DESTINATION_KINDS, DESTINATION_LABELS } from "./kind";
import { keepOwnAttributes } from "./own-attributes";
import type { CloudEventsWriter } from "./cloud-events";

/**
 * SQS's limit for one message and for a whole `SendMessageBatch`, body plus attributes: 1 MiB since August 2025
 * (https://aws.amazon.com/about-aws/whats-new/2025/08/amazon-sqs-max-payload-size-1mib/). A queue's own
 * `MaximumMessageSize` may be lower: a message over it is refused as the message's own fault.
 */
export const SQS_MAX_BATCH_BYTES = 1024 * 1024;

/**
 * An SQS refusal about the queue rather than one message (read without the value it echoes, `refusalWithoutValue`):
 * a parameter only the other queue type takes ("The request include parameter that is not valid for this queue
 * type": `fifo` does not match the queue), a group or deduplication id the relay sends with every message or with
 * none ("The request must contain the parameter MessageGroupId", "The queue should either have
 * ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"), or the queue URL. A value of
 * one message's refused ("Value ORDER 1001 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only
 * include alphanumeric and punctuation characters. 1 to 128 in length.") is not: it is that message's own.
 */
const ABOUT_THE_QUEUE =
    /queue type|QueueUrl|ContentBasedDeduplication|must contain the parameter Message(?:Group|Deduplication)Id/i;

/**
 * Classify an SQS error (a whole call's exception, or one `Failed[]` entry):
 * - `message`: characters SQS refuses, a bad attribute, a message over the queue's size, a batch too long, a group
 *   or deduplication id value SQS refuses (spaces, over 128 characters), any other parameter value of a message;
 * - `deployment`: the queue does not exist, access denied, a KMS key not usable, an unsupported operation, or a
 *   refusal about the queue (`ABOUT_THE_QUEUE`: the `fifo` setting does not match the queue);
 * - `transient`: throttling (`RequestThrottled`, `ThrottlingException`, `KmsThrottled`), internal errors.
 *
 * @param code - The SDK error name or a `Failed[]` entry's `Code`, with or without the `AWS.SimpleQueueService.`
 *   prefix and the `Exception` suffix.
 * @param senderFault - A `Failed[]` entry's `SenderFault`. @default false
 * @param message - The error's message. @default ""
 */
export function classifySqsFailure(code: string, senderFault = false, message = ""): PublishFailureKind {
    const bare = code.replace(/^AWS\.SimpleQueueService\./, "").replace(/Exception$/, "");
    switch (bare) {
        case "InvalidParameterValue":
        case "MissingParameter":
            return ABOUT_THE_QUEUE.test(refusalWithoutValue(message)) ? "deployment" : "message";
        case "QueueDoesNotExist":
        case "NonExistentQueue":
        case "QueueDeletedRecently":
        case "AccessDenied":
        case "InvalidSecurity":
        case "InvalidAddress":
        case "InvalidClientTokenId":
        case "UnrecognizedClient":
        case "ExpiredToken":
        case "UnsupportedOperation":
        case "KmsAccessDenied":
        case "KmsDisabled":
        case "KmsInvalidKeyUsage":
        case "KmsInvalidState":
        case "KmsNotFound":
        case "KmsOptInRequired":
            return "deployment";
        case "InvalidMessageContents":
        case "InvalidAttributeName":
        case "InvalidAttributeValue":
        case "MessageTooLong":
        case "BatchRequestTooLong":
        case "BatchEntryIdsNotDistinct":
        case "InvalidBatchEntryId":
        case "TooManyEntriesInBatchRequest":
        case "EmptyBatchRequest":
            return "message";
        default:
            // RequestThrottled, ThrottlingException, KmsThrottled, InternalError, ServiceUnavailable: retried,
            // whatever SenderFault says (a throttle may come flagged as the sender's).
            if (/throttl|internal|unavailable|timeout/i.test(bare)) return "transient";
            return senderFault ? "message" : "transient";
    }
}

/**
 * An SQS queue as a {@link Destination}. On a FIFO queue each entry's `MessageGroupId` is the ordering key (else the
 * partition) and its `MessageDeduplicationId` the event's identity (`eventIdOf`); on a standard queue neither is sent (a group id there
 * would turn on SQS's fair queues).
 *
 * @param sqs - The SQS client (`SQSClient`).
 * @param queueArn - The queue; its URL is derived from it (`queueUrlOfArn`).
 * @param fifo - Whether the queue is FIFO.
 * @param cloudEvents - With it, each message is its CloudEvent (`cloud-events.ts`) with a `content-type` attribute
 *   alone. @default undefined (the payload as the body, the outbox's attributes)
 * @throws OutboxError `INVALID_CONFIG` when `queueArn` is not a queue ARN.
 */
export function sqsDestination(
    sqs: ClientLike,
    queueArn: string,
    fifo: boolean,
    cloudEvents?: CloudEventsWriter,
): Destination {
    const queueUrl = queueUrlOfArn(queueArn);
    if (queueUrl === undefined)
        throw new OutboxError("INVALID_CONFIG", `queueArn ${JSON.stringify(queueArn)} is not an SQS queue ARN`);
    return {
        kind: DESTINATION_KINDS.sqs,
        arn: queueArn,
        fifo,
        bytesPerCall: SQS_MAX_BATCH_BYTES,
        // SQS counts a message as SNS does: the body plus each attribute's name, data type and value.
        entryBytes: cloudEvents?.size ?? snsMessageSize,
        classify: classifySqsFailure,
        async sendCall(messages: readonly OutboundMessage[]) {
            const command = new (sqsSdk().SendMessageBatchCommand)({
                QueueUrl: queueUrl,
                Entries: messages.map((m, i) => ({
                    Id: String(i),
                    MessageBody: m.body,
                    MessageAttributes: messageAttributes(m),
                    ...(cloudEvents && {
                        MessageBody: cloudEvents.body(m),
                        MessageAttributes: cloudEvents.attributes(),
                    }),
                    ...(fifo ? { MessageGroupId: fifoMessageGroupId(m), MessageDeduplicationId: eventIdOf(m) } : {}),
                })),
            });
            // An instrumented process (OpenTelemetry's AWS SDK instrumentation) would send its own trace context.
            keepOwnAttributes(command, (input) => input.Entries);
            const out = (await sqs.send(command)) as SendMessageBatchCommandOutput | undefined;
            return readIdBatchAnswer(
                { label: DESTINATION_LABELS.sqs, classify: classifySqsFailure },
                out,
                messages.length,
            );
        },
    };
}
