/**
 * The SQS actions, enough for a publisher's DLQ: CreateQueue, GetQueueUrl, SendMessage, SendMessageBatch,
 * ReceiveMessage (with a visibility timeout) and DeleteMessage. SendMessage refuses what SQS refuses: a
 * character outside XML's set, in the body or a String attribute.
 *
 * @packageDocumentation
 */
import { createHash, randomUUID } from "node:crypto";
import { ApiError } from "./api-error";
import type { ActionResult, ParsedCall } from "./request";
import { toJsonAttributes } from "./sqs-json";
import { createQueue, findQueue, recordMessage, type Queue, type ServerState } from "./state";
import type { EntryInfo, RecordedMessage } from "./types";

function md5(text: string): string {
    return createHash("md5").update(text, "utf8").digest("hex");
}

/** What SQS accepts in a body or a String attribute: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
const SQS_INVALID_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** SQS refuses a message holding any other character, whole, with InvalidMessageContents (a sender fault). */
function refuseInvalidSqsCharacters(entry: EntryInfo): void {
    const values = [entry.body, ...Object.values(entry.attributes).map((a) => a.stringValue ?? "")];
    if (values.some((v) => SQS_INVALID_CHARACTER.test(v))) {
        throw new ApiError(
            "InvalidMessageContents",
            400,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        );
    }
}

function queueOf(state: ServerState, call: ParsedCall): Queue {
    const { json } = call;
    const url =
        typeof json.QueueUrl === "string" ? json.QueueUrl : typeof json.QueueName === "string" ? json.QueueName : "";
    const queue = findQueue(state, url);
    if (queue === undefined)
        throw new ApiError("AWS.SimpleQueueService.NonExistentQueue", 400, "The specified queue does not exist.");
    return queue;
}

function enqueue(
    state: ServerState,
    queue: Queue,
    entry: EntryInfo,
    call: ParsedCall,
    acknowledged: boolean,
): RecordedMessage {
    const message = recordMessage(
        state,
        { service: "sqs", destination: queue.url, destinationName: queue.name },
        entry,
        call.info,
        acknowledged,
    );
    queue.messages.push({ record: message, receiptHandle: undefined, invisibleUntil: 0, deleted: false });
    return message;
}

/** CreateQueue. */
export function createQueueAction(state: ServerState, call: ParsedCall): ActionResult {
    const name = typeof call.json.QueueName === "string" ? call.json.QueueName : "";
    if (!/^[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(name)) {
        throw new ApiError(
            "InvalidParameterValue",
            400,
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        );
    }
    return { body: { QueueUrl: createQueue(state, name) }, outcome: "ok" };
}

/** GetQueueUrl. */
export function getQueueUrlAction(state: ServerState, call: ParsedCall): ActionResult {
    return { body: { QueueUrl: queueOf(state, call).url }, outcome: "ok" };
}

/** SendMessage. */
export function sendMessageAction(state: ServerState, call: ParsedCall, acknowledged: boolean): ActionResult {
    const queue = queueOf(state, call);
    const entry = call.info.entries[0] as EntryInfo;
    refuseInvalidSqsCharacters(entry);
    const message = enqueue(state, queue, entry, call, acknowledged);
    return { body: { MessageId: message.messageId, MD5OfMessageBody: md5(entry.body) }, outcome: "ok" };
}

/** SendMessageBatch: every entry accepted. */
export function sendMessageBatchAction(state: ServerState, call: ParsedCall, acknowledged: boolean): ActionResult {
    const queue = queueOf(state, call);
    const successful = call.info.entries.map((entry) => {
        const message = enqueue(state, queue, entry, call, acknowledged);
        return { Id: entry.id, MessageId: message.messageId, MD5OfMessageBody: md5(entry.body) };
    });
    return { body: { Successful: successful, Failed: [] }, outcome: "ok" };
}

/** ReceiveMessage: up to `MaxNumberOfMessages` visible ones, hidden for `VisibilityTimeout` seconds (default 30). */
export function receiveMessageAction(state: ServerState, call: ParsedCall): ActionResult {
    const queue = queueOf(state, call);
    const { json } = call;
    const max = typeof json.MaxNumberOfMessages === "number" ? json.MaxNumberOfMessages : 1;
    const visibilityMs = (typeof json.VisibilityTimeout === "number" ? json.VisibilityTimeout : 30) * 1000;
    const now = Date.now();
    const ready = queue.messages.filter((m) => !m.deleted && m.invisibleUntil <= now).slice(0, max);
    const messages = ready.map((m) => {
        m.receiptHandle = randomUUID();
        m.invisibleUntil = now + visibilityMs;
        const attributes = toJsonAttributes(m.record.attributes);
        return {
            MessageId: m.record.messageId,
            ReceiptHandle: m.receiptHandle,
            MD5OfBody: md5(m.record.body),
            Body: m.record.body,
            ...(Object.keys(attributes).length === 0 ? {} : { MessageAttributes: attributes }),
        };
    });
    return { body: messages.length === 0 ? {} : { Messages: messages }, outcome: "ok" };
}

/** DeleteMessage, by the receipt handle of the last receive. */
export function deleteMessageAction(state: ServerState, call: ParsedCall): ActionResult {
    const queue = queueOf(state, call);
    const found = queue.messages.find(
        (m) => m.receiptHandle !== undefined && m.receiptHandle === call.json.ReceiptHandle,
    );
    if (found === undefined) throw new ApiError("ReceiptHandleIsInvalid", 400, "The input receipt handle is invalid.");
    found.deleted = true;
    return { body: {}, outcome: "ok" };
}
