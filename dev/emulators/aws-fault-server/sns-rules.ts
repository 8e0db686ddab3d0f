/**
 * What SNS enforces, and the server with it: topic names, 256 KB per message and per batch, at most 10 distinct
 * entries per PublishBatch, FIFO topics' MessageGroupId and MessageDeduplicationId, and their 5-minute
 * deduplication window (a duplicate is answered with the first message's id and not recorded again).
 *
 * @packageDocumentation
 */
import { ApiError } from "./api-error";
import { recordMessage, type ServerState, type Topic } from "./state";
import type { CallInfo, EntryInfo } from "./types";

const SNS_MAX_MESSAGE_BYTES = 262_144;
const SNS_MAX_BATCH_ENTRIES = 10;
const FIFO_DEDUP_WINDOW_MS = 5 * 60 * 1000;

/** A message's size as SNS counts it: the body and each attribute's name, type and value. */
function entrySize(entry: EntryInfo): number {
    let size = Buffer.byteLength(entry.body, "utf8");
    for (const [name, attribute] of Object.entries(entry.attributes)) {
        size +=
            Buffer.byteLength(name) +
            Buffer.byteLength(attribute.dataType) +
            Buffer.byteLength(attribute.stringValue ?? attribute.binaryValue ?? "");
    }
    return size;
}

/** CreateTopic's checks: the name's characters and length, and `.fifo` if and only if `FifoTopic=true`. */
export function checkTopicName(name: string, attributes: Readonly<Record<string, string>>): void {
    if (!/^[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(name))
        throw new ApiError("InvalidParameter", 400, "Invalid parameter: Topic Name");
    if ((attributes.FifoTopic === "true") !== name.endsWith(".fifo")) {
        throw new ApiError(
            "InvalidParameter",
            400,
            "Invalid parameter: Fifo Topic names must end with .fifo and must be made with FifoTopic=true",
        );
    }
}

/** Checks SNS makes on one entry; throws the error SNS would answer the whole call with. */
export function checkSnsEntry(topic: Topic, entry: EntryInfo): void {
    if (entrySize(entry) > SNS_MAX_MESSAGE_BYTES)
        throw new ApiError("InvalidParameter", 400, "Invalid parameter: Message too long");
    if (topic.fifo && entry.messageGroupId === undefined) {
        throw new ApiError(
            "InvalidParameter",
            400,
            "Invalid parameter: The MessageGroupId parameter is required for FIFO topics",
        );
    }
    if (topic.fifo && entry.messageDeduplicationId === undefined && !topic.contentBasedDeduplication) {
        throw new ApiError(
            "InvalidParameter",
            400,
            "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
        );
    }
}

/** Checks SNS makes on a whole PublishBatch, before any entry is accepted. */
export function checkPublishBatch(topic: Topic, entries: readonly EntryInfo[]): void {
    if (entries.length === 0)
        throw new ApiError("EmptyBatchRequest", 400, "The batch request doesn't contain any entries");
    if (entries.length > SNS_MAX_BATCH_ENTRIES)
        throw new ApiError(
            "TooManyEntriesInBatchRequest",
            400,
            "The batch request contains more entries than permissible",
        );
    if (new Set(entries.map((e) => e.id)).size !== entries.length)
        throw new ApiError(
            "BatchEntryIdsNotDistinct",
            400,
            "Two or more batch entries in the request have the same Id",
        );
    if (entries.reduce((n, e) => n + entrySize(e), 0) > SNS_MAX_MESSAGE_BYTES) {
        throw new ApiError(
            "BatchRequestTooLong",
            400,
            "The length of all the messages put together is more than the limit",
        );
    }
    for (const entry of entries) checkSnsEntry(topic, entry);
}

/** Accept one SNS entry, honouring FIFO deduplication. */
export function acceptSns(
    state: ServerState,
    topic: Topic,
    entry: EntryInfo,
    call: CallInfo,
    acknowledged: boolean,
): { messageId: string; sequenceNumber?: string } {
    const now = Date.now();
    if (topic.fifo && entry.messageDeduplicationId !== undefined) {
        const seen = topic.dedup.get(entry.messageDeduplicationId);
        if (seen !== undefined && now - seen.at < FIFO_DEDUP_WINDOW_MS) return { messageId: seen.messageId };
    }
    const message = recordMessage(
        state,
        { service: "sns", destination: topic.arn, destinationName: topic.name },
        entry,
        call,
        acknowledged,
    );
    if (!topic.fifo) return { messageId: message.messageId };
    if (entry.messageDeduplicationId !== undefined)
        topic.dedup.set(entry.messageDeduplicationId, { messageId: message.messageId, at: now });
    topic.sequence += 1n;
    return { messageId: message.messageId, sequenceNumber: topic.sequence.toString() };
}
