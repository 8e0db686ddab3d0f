/**
 * The SQS event exactly as Lambda hands it to a function, the batch response it takes back, and the conversion
 * from what `ReceiveMessage` returns (through `@aws-sdk/client-sqs`) to that shape, so a consumer can be fed what
 * a queue really delivered.
 *
 * The SDK and Lambda disagree on the spelling: the SDK's `MessageId`, `Body`, `Attributes` and
 * `MessageAttributes` (`StringValue`, binary values as `Uint8Array`) are Lambda's `messageId`, `body`,
 * `attributes` and `messageAttributes` (`stringValue`, binary values as base64 text), and Lambda adds
 * `eventSource`, `eventSourceARN` and `awsRegion`.
 *
 * @packageDocumentation
 */
import type { Message as SdkSqsMessage } from "@aws-sdk/client-sqs";
import { OutboxError } from "../errors";
import { SQS_EVENT_SOURCE } from "./sqs-event-check";

/** One message attribute of an SQS record, as Lambda delivers it. */
export interface LambdaSqsMessageAttribute {
    /** The value of a `String` or `Number` attribute (and their custom `String.x` / `Number.x` types). */
    readonly stringValue?: string;
    /** The value of a `Binary` attribute, base64. */
    readonly binaryValue?: string;
    /** Reserved by SQS, always empty. */
    readonly stringListValues?: readonly string[];
    /** Reserved by SQS, always empty. */
    readonly binaryListValues?: readonly string[];
    /** `String`, `Number`, `Binary`, optionally with a custom suffix (`String.json`). */
    readonly dataType: string;
}

/** The system attributes of an SQS record (the ones this package reads, and the rest Lambda sends). */
export interface LambdaSqsRecordAttributes {
    /** How many times the message was received, this time included. */
    readonly ApproximateReceiveCount?: string;
    /** When it was sent, epoch ms. */
    readonly SentTimestamp?: string;
    /** Who sent it. */
    readonly SenderId?: string;
    /** When it was first received, epoch ms. */
    readonly ApproximateFirstReceiveTimestamp?: string;
    /** FIFO queues: the message group. */
    readonly MessageGroupId?: string;
    /** FIFO queues: the deduplication id. */
    readonly MessageDeduplicationId?: string;
    /** FIFO queues: the sequence number. */
    readonly SequenceNumber?: string;
    /** The X-Ray trace header, when the sender set one. */
    readonly AWSTraceHeader?: string;
    /** Set on a message moved to a dead-letter queue: the queue it came from. */
    readonly DeadLetterQueueSourceArn?: string;
}

/** One record of a Lambda SQS event. `aws-lambda`'s `SQSRecord` is assignable to it. */
export interface LambdaSqsRecord {
    /** The SQS message id: the `itemIdentifier` a handler reports in `batchItemFailures`. */
    readonly messageId: string;
    /** The receipt handle Lambda deletes the message with. */
    readonly receiptHandle?: string;
    /** The body. */
    readonly body: string;
    /** The system attributes. */
    readonly attributes?: LambdaSqsRecordAttributes;
    /** The message attributes, by name. */
    readonly messageAttributes?: { readonly [name: string]: LambdaSqsMessageAttribute };
    /** The MD5 of the body. */
    readonly md5OfBody?: string;
    /** Always `aws:sqs` (`SQS_EVENT_SOURCE`); `createInboxHandler` refuses an event whose records name another, or none. */
    readonly eventSource?: string;
    /** The queue's ARN; it ends in `.fifo` for a FIFO queue. */
    readonly eventSourceARN?: string;
    /** The queue's region. */
    readonly awsRegion?: string;
}

/** The event Lambda passes to a function subscribed to an SQS queue. `aws-lambda`'s `SQSEvent` is assignable to it. */
export interface LambdaSqsEvent {
    /** The batch, at most the mapping's batch size; in order within each message group on a FIFO queue. */
    readonly Records: readonly LambdaSqsRecord[];
}

/**
 * What an SQS handler returns with `ReportBatchItemFailures` on the mapping: the messages that failed, by
 * `messageId`. Lambda deletes the others; the failed ones come back after their visibility timeout.
 */
export interface LambdaSqsBatchResponse {
    /** The failed messages. */
    readonly batchItemFailures: { readonly itemIdentifier: string }[];
}

function base64(bytes: Uint8Array): string {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * Convert a received message to the record Lambda delivers. Receive with `MessageAttributeNames: ["All"]` and
 * `MessageSystemAttributeNames: ["All"]` (or `AttributeNames`), as Lambda does, so nothing is missing.
 *
 * @param message - A message from `ReceiveMessageCommand`.
 * @param queueArn - The queue it was received from (`arn:aws:sqs:<region>:<account>:<name>`).
 * @throws OutboxError `INVALID_PAYLOAD` when the message has no `MessageId` (ReceiveMessage always sets it).
 */
export function toLambdaSqsRecord(message: SdkSqsMessage, queueArn: string): LambdaSqsRecord {
    if (message.MessageId === undefined) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `an SQS message from ${queueArn} has no MessageId; ReceiveMessage always sets it, so this is not a received message`,
            { context: { queueArn } },
        );
    }
    const messageAttributes: { [name: string]: LambdaSqsMessageAttribute } = {};
    for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        messageAttributes[name] = {
            ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
            ...(value.BinaryValue !== undefined ? { binaryValue: base64(value.BinaryValue) } : {}),
            stringListValues: [],
            binaryListValues: [],
            dataType: value.DataType ?? "String",
        };
    }
    return {
        messageId: message.MessageId,
        receiptHandle: message.ReceiptHandle ?? "",
        body: message.Body ?? "",
        attributes: { ...(message.Attributes ?? {}) },
        messageAttributes,
        md5OfBody: message.MD5OfBody ?? "",
        eventSource: SQS_EVENT_SOURCE,
        eventSourceARN: queueArn,
        awsRegion: queueArn.split(":")[3] ?? "",
    };
}
