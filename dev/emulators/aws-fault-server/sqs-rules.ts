/**
 * What SQS enforces, and the server with it: the characters of a body and its String attributes; a
 * SendMessageBatch's 1 to 10 entries, their distinct well-formed ids and their 1 MiB (1,048,576 bytes) in all;
 * FIFO queues' MessageGroupId and MessageDeduplicationId (or content-based deduplication), their characters and
 * length, a deduplication id sent to a standard queue, and the 5-minute deduplication window (a duplicate is
 * answered with the first message's id and not enqueued again).
 *
 * @packageDocumentation
 */
import { createHash } from "node:crypto";
import { ApiError } from "./api-error";
import type { Queue } from "./state";
import type { EntryInfo } from "./types";

/** SQS's limit on a batch's messages together: 1 MiB, since AWS raised it from 256 KiB (2025). */
const SQS_MAX_BATCH_BYTES = 1_048_576;
const SQS_MAX_BATCH_ENTRIES = 10;
const FIFO_DEDUP_WINDOW_MS = 5 * 60 * 1000;

/** What SQS accepts in a body or a String attribute: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
const SQS_INVALID_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * A MessageGroupId or MessageDeduplicationId: 1 to 128 alphanumerics and ASCII punctuation
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatchRequestEntry.html).
 * A group id is checked on a standard queue too, where it turns on fair queues.
 */
const SQS_FIFO_ID = /^[\x21-\x7e]{1,128}$/;

/** A batch entry id: alphanumerics, hyphens and underscores, 1 to 80 of them. */
const SQS_BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** A message's size as SQS counts it: the body's bytes, and each attribute's name, type and value (decoded binary). */
function sqsMessageSize(entry: EntryInfo): number {
    let size = Buffer.byteLength(entry.body, "utf8");
    for (const [name, attribute] of Object.entries(entry.attributes)) {
        const value =
            attribute.binaryValue !== undefined
                ? Buffer.from(attribute.binaryValue, "base64").length
                : Buffer.byteLength(attribute.stringValue ?? "", "utf8");
        size += Buffer.byteLength(name, "utf8") + Buffer.byteLength(attribute.dataType, "utf8") + value;
    }
    return size;
}

/**
 * SQS's refusal of one message, if any, as an error (whole call for SendMessage, the entry's `Failed[]` in a
 * batch): a character outside SQS's set (`InvalidMessageContents`), a FIFO message without a MessageGroupId
 * (`MissingParameter`), a group or deduplication id outside 1 to 128 alphanumerics and punctuation, a
 * deduplication id sent to a standard queue, or a FIFO message without a MessageDeduplicationId on a queue without
 * content-based deduplication (`InvalidParameterValue`, in SQS's words). All are the sender's fault.
 */
export function sqsMessageRefusal(queue: Queue, entry: EntryInfo): ApiError | undefined {
    const values = [entry.body, ...Object.values(entry.attributes).map((a) => a.stringValue ?? "")];
    if (values.some((v) => SQS_INVALID_CHARACTER.test(v))) {
        return new ApiError(
            "InvalidMessageContents",
            400,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        );
    }
    if (queue.fifo && entry.messageGroupId === undefined)
        return new ApiError("MissingParameter", 400, "The request must contain the parameter MessageGroupId.");
    for (const [name, value] of [
        ["MessageGroupId", entry.messageGroupId],
        ["MessageDeduplicationId", entry.messageDeduplicationId],
    ] as const) {
        if (value !== undefined && !SQS_FIFO_ID.test(value)) {
            return new ApiError(
                "InvalidParameterValue",
                400,
                `Value ${value} for parameter ${name} is invalid. Reason: ${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
            );
        }
    }
    if (!queue.fifo && entry.messageDeduplicationId !== undefined) {
        return new ApiError(
            "InvalidParameterValue",
            400,
            `Value ${entry.messageDeduplicationId} for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.`,
        );
    }
    if (queue.fifo && entry.messageDeduplicationId === undefined && !queue.contentBasedDeduplication) {
        return new ApiError(
            "InvalidParameterValue",
            400,
            "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
        );
    }
    return undefined;
}

/** The checks SQS makes on a whole SendMessageBatch, before any entry is accepted; throws what SQS answers. */
export function checkSendMessageBatch(entries: readonly EntryInfo[]): void {
    checkBatchEntries(entries.map((e) => e.id));
    const total = entries.reduce((n, e) => n + sqsMessageSize(e), 0);
    if (total > SQS_MAX_BATCH_BYTES) {
        throw new ApiError(
            "AWS.SimpleQueueService.BatchRequestTooLong",
            400,
            `Batch requests cannot be longer than ${SQS_MAX_BATCH_BYTES} bytes. You have sent ${total} bytes.`,
        );
    }
}

/** The ids' checks of any SQS batch (SendMessageBatch, DeleteMessageBatch): well-formed, then distinct. */
export function checkBatchEntryIds(ids: readonly (string | undefined)[]): void {
    if (ids.some((id) => id === undefined || !SQS_BATCH_ENTRY_ID.test(id))) {
        throw new ApiError(
            "AWS.SimpleQueueService.InvalidBatchEntryId",
            400,
            "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
        );
    }
    const seen = new Set<string>();
    for (const id of ids as string[]) {
        if (seen.has(id))
            throw new ApiError("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, `Id ${id} repeated.`);
        seen.add(id);
    }
}

/**
 * The checks SQS makes on the entries of any batch (DeleteMessageBatch, and SendMessageBatch before its size): 1 to 10
 * entries, distinct well-formed ids.
 */
export function checkBatchEntries(ids: readonly (string | undefined)[]): void {
    if (ids.length === 0)
        throw new ApiError("AWS.SimpleQueueService.EmptyBatchRequest", 400, "There should be at least one entry.");
    if (ids.length > SQS_MAX_BATCH_ENTRIES) {
        throw new ApiError(
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            400,
            `Maximum number of entries per request are ${SQS_MAX_BATCH_ENTRIES}. You have sent ${ids.length}.`,
        );
    }
    checkBatchEntryIds(ids);
}

/** A FIFO message's deduplication id: its own, or the SHA-256 of its body on a content-based queue. */
function deduplicationId(queue: Queue, entry: EntryInfo): string | undefined {
    if (entry.messageDeduplicationId !== undefined) return entry.messageDeduplicationId;
    return queue.contentBasedDeduplication ? createHash("sha256").update(entry.body, "utf8").digest("hex") : undefined;
}

/**
 * On a FIFO queue, the id of the message this one duplicates within 5 minutes, if any: SQS accepts it again
 * without enqueuing it, and answers with the first message's id.
 */
export function fifoDuplicateOf(queue: Queue, entry: EntryInfo, now: number): string | undefined {
    const id = queue.fifo ? deduplicationId(queue, entry) : undefined;
    const seen = id === undefined ? undefined : queue.dedup.get(id);
    return seen !== undefined && now - seen.at < FIFO_DEDUP_WINDOW_MS ? seen.messageId : undefined;
}

/** Remember a FIFO message's deduplication id, and give it the queue's next sequence number. */
export function rememberFifo(queue: Queue, entry: EntryInfo, messageId: string, now: number): string {
    const id = deduplicationId(queue, entry);
    if (id !== undefined) queue.dedup.set(id, { messageId, at: now });
    queue.sequence += 1n;
    return queue.sequence.toString();
}
