/**
 * The SQS actions, enough for a publisher's DLQ and for a queue as a destination: CreateQueue, GetQueueUrl,
 * SendMessage, SendMessageBatch (whose entries SQS's rules or an entry fault rule can fail one by one, into
 * `Failed[]`), ReceiveMessage (with a visibility timeout; `WaitTimeSeconds` is ignored, the answer comes at once),
 * DeleteMessage and DeleteMessageBatch. Each returns its JSON answer and the call's outcome, or throws the
 * {@link ApiError} SQS would answer with.
 *
 * @packageDocumentation
 */
import { createHash, randomUUID } from "node:crypto";
import { ApiError } from "./api-error";
import type { ActionResult, ParsedCall } from "./request";
import { toJsonAttributes } from "./sqs-json";
import {
    checkBatchEntries,
    checkSendMessageBatch,
    fifoDuplicateOf,
    rememberFifo,
    sqsMessageRefusal,
} from "./sqs-rules";
import { createQueue, enqueueRecord, findQueue, recordMessage, type Queue, type ServerState } from "./state";
import type { EntryInfo } from "./types";

function md5(text: string): string {
    return createHash("md5").update(text, "utf8").digest("hex");
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

/** Accept one message: enqueue and record it, unless it duplicates a FIFO message of the last 5 minutes. */
function enqueue(
    state: ServerState,
    queue: Queue,
    entry: EntryInfo,
    call: ParsedCall,
    acknowledged: boolean,
): { messageId: string; sequenceNumber?: string } {
    const now = Date.now();
    const duplicateOf = fifoDuplicateOf(queue, entry, now);
    if (duplicateOf !== undefined) return { messageId: duplicateOf };
    const message = recordMessage(
        state,
        { service: "sqs", destination: queue.url, destinationName: queue.name },
        entry,
        call.info,
        acknowledged,
    );
    enqueueRecord(queue, message);
    if (!queue.fifo) return { messageId: message.messageId };
    return { messageId: message.messageId, sequenceNumber: rememberFifo(queue, entry, message.messageId, now) };
}

/** A sent message's answer fields: `MessageId`, `MD5OfMessageBody` and, on a FIFO queue, `SequenceNumber`. */
function sentJson(out: { messageId: string; sequenceNumber?: string }, entry: EntryInfo): object {
    return {
        MessageId: out.messageId,
        MD5OfMessageBody: md5(entry.body),
        ...(out.sequenceNumber === undefined ? {} : { SequenceNumber: out.sequenceNumber }),
    };
}

/** A `Failed[]` entry of an SQS batch answer. */
function failedJson(id: string | undefined, code: string, message: string, senderFault: boolean): object {
    return { Id: id, SenderFault: senderFault, Code: code, Message: message };
}

/** CreateQueue, with the `ContentBasedDeduplication` attribute of a FIFO queue. */
export function createQueueAction(state: ServerState, call: ParsedCall): ActionResult {
    const name = typeof call.json.QueueName === "string" ? call.json.QueueName : "";
    if (!/^[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(name)) {
        throw new ApiError(
            "InvalidParameterValue",
            400,
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        );
    }
    const attributes = (call.json.Attributes ?? {}) as Record<string, unknown>;
    const url = createQueue(state, name, attributes.ContentBasedDeduplication === "true");
    return { body: { QueueUrl: url }, outcome: "ok" };
}

/** GetQueueUrl. */
export function getQueueUrlAction(state: ServerState, call: ParsedCall): ActionResult {
    return { body: { QueueUrl: queueOf(state, call).url }, outcome: "ok" };
}

/** SendMessage: SQS's refusal of the message fails the whole call. Entry fault rules do not apply. */
export function sendMessageAction(state: ServerState, call: ParsedCall, acknowledged: boolean): ActionResult {
    const queue = queueOf(state, call);
    const entry = call.info.entries[0] as EntryInfo;
    const refusal = sqsMessageRefusal(queue, entry);
    if (refusal !== undefined) throw refusal;
    return { body: sentJson(enqueue(state, queue, entry, call, acknowledged), entry), outcome: "ok" };
}

/**
 * SendMessageBatch: the batch's checks, then each entry refused by SQS's rules or failed by an entry fault rule
 * (into `Failed[]`, the sender's fault for SQS's refusals), or accepted.
 */
export function sendMessageBatchAction(state: ServerState, call: ParsedCall, acknowledged: boolean): ActionResult {
    const queue = queueOf(state, call);
    const { info } = call;
    checkSendMessageBatch(info.entries);
    const successful: object[] = [];
    const failed: object[] = [];
    for (const entry of info.entries) {
        const refusal = sqsMessageRefusal(queue, entry);
        if (refusal !== undefined) {
            failed.push(failedJson(entry.id, refusal.code, refusal.message, refusal.sender));
            continue;
        }
        const rule = state.faults.entryRule(entry, info);
        if (rule !== undefined) {
            const code = rule.code ?? "InternalError";
            failed.push(failedJson(entry.id, code, rule.message ?? "injected failure", rule.senderFault === true));
            continue;
        }
        successful.push({ Id: entry.id, ...sentJson(enqueue(state, queue, entry, call, acknowledged), entry) });
    }
    return { body: { Successful: successful, Failed: failed }, outcome: failed.length === 0 ? "ok" : "partial" };
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

/** Delete the message of this receipt handle (the last receive's); false when no message has it. */
function deleteByReceipt(queue: Queue, receiptHandle: unknown): boolean {
    const found = queue.messages.find((m) => m.receiptHandle !== undefined && m.receiptHandle === receiptHandle);
    if (found === undefined) return false;
    found.deleted = true;
    return true;
}

/** DeleteMessage, by the receipt handle of the last receive. */
export function deleteMessageAction(state: ServerState, call: ParsedCall): ActionResult {
    const queue = queueOf(state, call);
    if (!deleteByReceipt(queue, call.json.ReceiptHandle))
        throw new ApiError("ReceiptHandleIsInvalid", 400, "The input receipt handle is invalid.");
    return { body: {}, outcome: "ok" };
}

/** DeleteMessageBatch: `Entries[{ Id, ReceiptHandle }]`; an unknown receipt handle fails its entry. */
export function deleteMessageBatchAction(state: ServerState, call: ParsedCall): ActionResult {
    const queue = queueOf(state, call);
    const entries = (Array.isArray(call.json.Entries) ? call.json.Entries : []) as Record<string, unknown>[];
    const ids = entries.map((e) => (typeof e.Id === "string" ? e.Id : undefined));
    checkBatchEntries(ids);
    const successful: object[] = [];
    const failed: object[] = [];
    entries.forEach((entry, i) => {
        if (deleteByReceipt(queue, entry.ReceiptHandle)) successful.push({ Id: ids[i] });
        else failed.push(failedJson(ids[i], "ReceiptHandleIsInvalid", "The input receipt handle is invalid.", true));
    });
    return { body: { Successful: successful, Failed: failed }, outcome: failed.length === 0 ? "ok" : "partial" };
}
