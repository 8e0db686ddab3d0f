/**
 * A tiny SNS (and minimal SQS) server for tests and benchmarks, on `node:http`, that fails on demand.
 *
 * It speaks the wire protocols the real AWS SDK v3 clients use, so the code under test keeps its real
 * `SNSClient`/`SQSClient` and only the endpoint changes:
 * - SNS: awsQuery (form-urlencoded request, XML response): CreateTopic, Publish, PublishBatch;
 * - SQS: JSON 1.0 (`x-amz-target: AmazonSQS.*`): CreateQueue, GetQueueUrl, SendMessage, SendMessageBatch,
 *   ReceiveMessage, DeleteMessage, so a publisher's DLQ can live on the same server.
 *
 * Every accepted message is recorded (topic or queue, message id, body, attributes, MessageGroupId,
 * MessageDeduplicationId). Faults are injected per call or per PublishBatch entry, by predicate or by rate
 * from a seeded RNG, so a failing run replays exactly: 5xx `InternalError`, `Throttling`/`Throttled`,
 * `NotFound`, `InvalidParameter`, a dropped connection, and "accept then time out" (the message is recorded
 * as accepted, the answer never arrives). A fixed latency per call models a real network for benchmarks.
 *
 * This is a fake for what no emulator can show (injected faults); use fauxqs for plain delivery.
 *
 * @packageDocumentation
 */
import { createHash, randomUUID } from "node:crypto";
import * as http from "node:http";
import type { Socket } from "node:net";
import { seededRandom } from "../seeded-random";

/** A message attribute as recorded. */
export interface RecordedAttribute {
    /** `String`, `Number`, `Binary` or `String.Array`. */
    readonly dataType: string;
    /** The value of a String or Number attribute. */
    readonly stringValue?: string;
    /** The base64 value of a Binary attribute. */
    readonly binaryValue?: string;
}

/** A message the server accepted. */
export interface RecordedMessage {
    /** `sns` for a Publish/PublishBatch entry, `sqs` for a SendMessage/SendMessageBatch entry. */
    readonly service: "sns" | "sqs";
    /** The topic ARN (SNS) or queue URL (SQS). */
    readonly destination: string;
    /** The topic or queue name. */
    readonly destinationName: string;
    /** The id the server returned. */
    readonly messageId: string;
    /** The message body. */
    readonly body: string;
    /** The message attributes by name. */
    readonly attributes: Readonly<Record<string, RecordedAttribute>>;
    /** The FIFO message group. */
    readonly messageGroupId?: string;
    /** The FIFO deduplication id. */
    readonly messageDeduplicationId?: string;
    /** The API action that carried it. */
    readonly action: string;
    /** The 1-based number of the call that carried it (see {@link RecordedCall.callNumber}). */
    readonly callNumber: number;
    /** Whether the caller got a success answer; false for "accept then time out" and "accept then reset". */
    readonly acknowledged: boolean;
}

/** A call the server received, whatever its outcome. */
export interface RecordedCall {
    /** 1-based, over every action. */
    readonly callNumber: number;
    /** The API action. */
    readonly action: string;
    /** How many entries it carried (1 for Publish/SendMessage). */
    readonly entries: number;
    /** `ok`, `partial` (some batch entries failed), or the injected or real fault kind. */
    readonly outcome: string;
}

/** The whole-call faults the server can inject. */
export type CallFaultKind =
    /** HTTP 500 `InternalError` (the SDK's `InternalErrorException`, retried by the SDK). */
    | "InternalError"
    /** HTTP 400 `Throttling`, the API rate limit (no modeled class; the SDK retries it as throttling). */
    | "Throttling"
    /** HTTP 400 `Throttled`, the SNS publish rate limit (`ThrottledException`, retried by the SDK). */
    | "Throttled"
    /** HTTP 404 `NotFound` (`NotFoundException`): a permanent error. */
    | "NotFound"
    /** HTTP 400 `InvalidParameter` (`InvalidParameterException`): a permanent error. */
    | "InvalidParameter"
    /** HTTP 403 `AuthorizationError` (`AuthorizationErrorException`): a permanent error. */
    | "AuthorizationError"
    /** Record the messages as accepted, then hold the answer for `holdMs` and drop the connection. */
    | "AcceptThenTimeout"
    /** Record the messages as accepted, then drop the connection without answering. */
    | "AcceptThenReset"
    /** Drop the connection without accepting anything. */
    | "Reset";

/** What a call fault predicate sees. */
export interface CallInfo {
    /** The API action, e.g. `Publish`. */
    readonly action: string;
    /** 1-based number of this call over every action. */
    readonly callNumber: number;
    /** The topic ARN or queue URL, when the call names one. */
    readonly destination?: string;
    /** The entries the call carries. */
    readonly entries: readonly EntryInfo[];
}

/** What an entry fault predicate sees: one Publish/PublishBatch/SendMessage entry. */
export interface EntryInfo {
    /** The batch entry id (`undefined` for Publish/SendMessage). */
    readonly id?: string;
    /** 0-based position in the call. */
    readonly index: number;
    /** The body. */
    readonly body: string;
    /** The attributes by name. */
    readonly attributes: Readonly<Record<string, RecordedAttribute>>;
    /** The FIFO message group. */
    readonly messageGroupId?: string;
    /** The FIFO deduplication id. */
    readonly messageDeduplicationId?: string;
}

/** A rule that fails a whole call. The first rule that fires wins. */
export interface CallFaultRule {
    /** The fault to inject. */
    readonly kind: CallFaultKind;
    /** Which actions it applies to. @default ["Publish", "PublishBatch"] */
    readonly actions?: readonly string[];
    /** Only calls for which this returns true. @default every call */
    readonly when?: (call: CallInfo) => boolean;
    /** Probability of firing on a matching call, from the server's seeded RNG, 0 to 1. @default 1 */
    readonly rate?: number;
    /** Fire at most this many times. @default unlimited */
    readonly times?: number;
    /** For `AcceptThenTimeout`: how long to hold the answer before dropping the connection, ms. @default 10000 */
    readonly holdMs?: number;
}

/** A rule that fails single PublishBatch entries (they come back in `Failed[]`). The first rule that fires wins. */
export interface EntryFaultRule {
    /** The error code in the `Failed[]` entry. @default "InternalError" */
    readonly code?: string;
    /** The `SenderFault` flag. @default false */
    readonly senderFault?: boolean;
    /** The error message. @default "injected failure" */
    readonly message?: string;
    /** Only entries for which this returns true. @default every entry */
    readonly when?: (entry: EntryInfo, call: CallInfo) => boolean;
    /** Probability of firing on a matching entry, from the server's seeded RNG, 0 to 1. @default 1 */
    readonly rate?: number;
    /** Fire at most this many times. @default unlimited */
    readonly times?: number;
}

/** The fault plan: call rules, batch-entry rules and a fixed latency. */
export interface FaultPlan {
    /** Whole-call faults. @default [] */
    readonly calls?: readonly CallFaultRule[];
    /** PublishBatch entry faults. @default [] */
    readonly entries?: readonly EntryFaultRule[];
    /** Delay before answering every call, ms (e.g. 5 to model a real network in benchmarks). @default 0 */
    readonly latencyMs?: number;
}

/** Options of {@link startSnsTestServer}. */
export interface SnsTestServerOptions {
    /** The port to listen on (loopback only). @default a free port */
    readonly port?: number;
    /** The seed of the RNG that decides rate-based faults. @default 1 */
    readonly seed?: number;
    /** The region in ARNs and queue URLs. @default "us-east-1" */
    readonly region?: string;
    /** The account id in ARNs and queue URLs. @default "000000000000" */
    readonly accountId?: string;
    /** The initial fault plan. @default no faults */
    readonly faults?: FaultPlan;
}

/** A running test server. */
export interface SnsTestServer {
    /** `http://127.0.0.1:<port>`: the endpoint of both the SNS and the SQS client. */
    readonly endpoint: string;
    /** Create a topic without a client call; `.fifo` names become FIFO topics. Returns its ARN. */
    createTopic(name: string): string;
    /** Create a queue without a client call. Returns its URL. */
    createQueue(name: string): string;
    /** Every accepted message, in acceptance order (SNS and SQS). */
    messages(): readonly RecordedMessage[];
    /** Accepted SNS messages of one topic (by ARN or name). */
    topicMessages(topic: string): readonly RecordedMessage[];
    /** Messages sent to one queue (by URL or name), deleted or not. */
    queueMessages(queue: string): readonly RecordedMessage[];
    /** Every call received, in order. */
    calls(): readonly RecordedCall[];
    /** Replace the fault plan (rule counters restart). */
    setFaults(plan: FaultPlan): void;
    /** Remove every fault and the latency. */
    clearFaults(): void;
    /** Forget recorded messages and calls; keep topics, queues and faults. */
    reset(): void;
    /** Stop listening and drop held connections. Idempotent. */
    stop(): Promise<void>;
}

const SNS_XMLNS = "http://sns.amazonaws.com/doc/2010-03-31/";
const SNS_MAX_MESSAGE_BYTES = 262_144;
const SNS_MAX_BATCH_ENTRIES = 10;
const FIFO_DEDUP_WINDOW_MS = 5 * 60 * 1000;

interface CallFaultDefinition {
    readonly status: number;
    readonly type: "Sender" | "Receiver";
    readonly message: string;
}

const CALL_FAULTS: Readonly<Record<string, CallFaultDefinition>> = {
    InternalError: { status: 500, type: "Receiver", message: "Internal error (injected)" },
    Throttling: { status: 400, type: "Sender", message: "Rate exceeded (injected)" },
    Throttled: { status: 400, type: "Sender", message: "Publish rate exceeded (injected)" },
    NotFound: { status: 404, type: "Sender", message: "Topic does not exist (injected)" },
    InvalidParameter: { status: 400, type: "Sender", message: "Invalid parameter (injected)" },
    AuthorizationError: { status: 403, type: "Sender", message: "Not authorized (injected)" },
};

function xmlEscape(value: string): string {
    return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

function md5(text: string): string {
    return createHash("md5").update(text, "utf8").digest("hex");
}

/** What SQS accepts in a body or a String attribute: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
const SQS_INVALID_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** SQS refuses a message holding any other character, whole, with InvalidMessageContents (a sender fault). */
function refuseInvalidSqsCharacters(entry: EntryInfo): void {
    const values = [entry.body, ...Object.values(entry.attributes).map((a) => a.stringValue ?? "")];
    if (values.some((v) => SQS_INVALID_CHARACTER.test(v))) {
        throw new ApiError("InvalidMessageContents", 400, "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF");
    }
}

class ApiError extends Error {
    constructor(
        readonly code: string,
        readonly status: number,
        message: string,
        readonly sender = true,
    ) {
        super(message);
    }
}

/** Read `Prefix.entry.N.Name` / `Prefix.entry.N.Value.*` query attributes. */
function queryAttributes(params: URLSearchParams, prefix: string): Record<string, RecordedAttribute> {
    const out: Record<string, RecordedAttribute> = {};
    for (let n = 1; params.has(`${prefix}.entry.${n}.Name`); n += 1) {
        const base = `${prefix}.entry.${n}`;
        const name = params.get(`${base}.Name`) as string;
        const stringValue = params.get(`${base}.Value.StringValue`);
        const binaryValue = params.get(`${base}.Value.BinaryValue`);
        out[name] = {
            dataType: params.get(`${base}.Value.DataType`) ?? "String",
            ...(stringValue === null ? {} : { stringValue }),
            ...(binaryValue === null ? {} : { binaryValue }),
        };
    }
    return out;
}

/** Read SQS JSON `MessageAttributes`. */
function jsonAttributes(raw: unknown): Record<string, RecordedAttribute> {
    const out: Record<string, RecordedAttribute> = {};
    if (typeof raw !== "object" || raw === null) return out;
    for (const [name, value] of Object.entries(raw as Record<string, { DataType?: string; StringValue?: string; BinaryValue?: string }>)) {
        out[name] = {
            dataType: value.DataType ?? "String",
            ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
            ...(value.BinaryValue === undefined ? {} : { binaryValue: value.BinaryValue }),
        };
    }
    return out;
}

function entrySize(entry: EntryInfo): number {
    let size = Buffer.byteLength(entry.body, "utf8");
    for (const [name, attribute] of Object.entries(entry.attributes)) {
        size += Buffer.byteLength(name) + Buffer.byteLength(attribute.dataType) + Buffer.byteLength(attribute.stringValue ?? attribute.binaryValue ?? "");
    }
    return size;
}

interface Topic {
    readonly arn: string;
    readonly name: string;
    readonly fifo: boolean;
    readonly contentBasedDeduplication: boolean;
    readonly dedup: Map<string, { messageId: string; at: number }>;
    sequence: bigint;
}

interface QueuedMessage {
    readonly record: RecordedMessage;
    receiptHandle: string | undefined;
    invisibleUntil: number;
    deleted: boolean;
}

interface Queue {
    readonly url: string;
    readonly name: string;
    readonly arn: string;
    readonly messages: QueuedMessage[];
}

/** A parsed request, protocol aside. */
interface ParsedCall {
    readonly info: CallInfo;
    readonly protocol: "query" | "json";
    readonly params: URLSearchParams;
    readonly json: Record<string, unknown>;
}

/**
 * Start the server on loopback.
 *
 * @param options - See {@link SnsTestServerOptions}.
 */
export async function startSnsTestServer(options: SnsTestServerOptions = {}): Promise<SnsTestServer> {
    const region = options.region ?? "us-east-1";
    const accountId = options.accountId ?? "000000000000";
    const random = seededRandom(options.seed ?? 1);
    const topics = new Map<string, Topic>();
    const queues = new Map<string, Queue>();
    const accepted: RecordedMessage[] = [];
    const callLog: RecordedCall[] = [];
    const sockets = new Set<Socket>();
    const holds = new Set<NodeJS.Timeout>();
    let plan: FaultPlan = options.faults ?? {};
    let fired = new Map<object, number>();
    let callCounter = 0;
    let endpoint = "";

    function fires(rule: { rate?: number; times?: number }): boolean {
        const count = fired.get(rule) ?? 0;
        if (rule.times !== undefined && count >= rule.times) return false;
        if (rule.rate !== undefined && rule.rate < 1 && random() >= rule.rate) return false;
        fired.set(rule, count + 1);
        return true;
    }

    function createTopic(name: string, contentBasedDeduplication = false): string {
        const arn = `arn:aws:sns:${region}:${accountId}:${name}`;
        if (!topics.has(arn)) {
            topics.set(arn, { arn, name, fifo: name.endsWith(".fifo"), contentBasedDeduplication, dedup: new Map(), sequence: 10_000_000_000_000_000_000n });
        }
        return arn;
    }

    function createQueue(name: string): string {
        const url = `${endpoint}/${accountId}/${name}`;
        if (!queues.has(url)) queues.set(url, { url, name, arn: `arn:aws:sqs:${region}:${accountId}:${name}`, messages: [] });
        return url;
    }

    function findTopic(arnOrName: string): Topic | undefined {
        return topics.get(arnOrName) ?? [...topics.values()].find((t) => t.name === arnOrName);
    }

    function findQueue(urlOrName: string): Queue | undefined {
        return queues.get(urlOrName) ?? [...queues.values()].find((q) => q.name === urlOrName || q.url.endsWith(`/${urlOrName}`));
    }

    function parse(action: string, protocol: "query" | "json", params: URLSearchParams, json: Record<string, unknown>): ParsedCall {
        const entries: EntryInfo[] = [];
        let destination: string | undefined;
        if (protocol === "query") {
            destination = params.get("TopicArn") ?? undefined;
            if (action === "Publish") {
                entries.push({
                    index: 0,
                    body: params.get("Message") ?? "",
                    attributes: queryAttributes(params, "MessageAttributes"),
                    ...(params.has("MessageGroupId") ? { messageGroupId: params.get("MessageGroupId") as string } : {}),
                    ...(params.has("MessageDeduplicationId") ? { messageDeduplicationId: params.get("MessageDeduplicationId") as string } : {}),
                });
            } else if (action === "PublishBatch") {
                for (let n = 1; params.has(`PublishBatchRequestEntries.member.${n}.Id`); n += 1) {
                    const base = `PublishBatchRequestEntries.member.${n}`;
                    entries.push({
                        id: params.get(`${base}.Id`) as string,
                        index: n - 1,
                        body: params.get(`${base}.Message`) ?? "",
                        attributes: queryAttributes(params, `${base}.MessageAttributes`),
                        ...(params.has(`${base}.MessageGroupId`) ? { messageGroupId: params.get(`${base}.MessageGroupId`) as string } : {}),
                        ...(params.has(`${base}.MessageDeduplicationId`) ? { messageDeduplicationId: params.get(`${base}.MessageDeduplicationId`) as string } : {}),
                    });
                }
            }
        } else {
            destination = typeof json.QueueUrl === "string" ? json.QueueUrl : undefined;
            const fromJson = (raw: Record<string, unknown>, index: number): EntryInfo => ({
                ...(typeof raw.Id === "string" ? { id: raw.Id } : {}),
                index,
                body: typeof raw.MessageBody === "string" ? raw.MessageBody : "",
                attributes: jsonAttributes(raw.MessageAttributes),
                ...(typeof raw.MessageGroupId === "string" ? { messageGroupId: raw.MessageGroupId } : {}),
                ...(typeof raw.MessageDeduplicationId === "string" ? { messageDeduplicationId: raw.MessageDeduplicationId } : {}),
            });
            if (action === "SendMessage") entries.push(fromJson(json, 0));
            if (action === "SendMessageBatch" && Array.isArray(json.Entries)) (json.Entries as Record<string, unknown>[]).forEach((e, i) => entries.push(fromJson(e, i)));
        }
        callCounter += 1;
        return { info: { action, callNumber: callCounter, ...(destination === undefined ? {} : { destination }), entries }, protocol, params, json };
    }

    function record(service: "sns" | "sqs", destination: string, destinationName: string, entry: EntryInfo, call: CallInfo, acknowledged: boolean): RecordedMessage {
        const message: RecordedMessage = {
            service,
            destination,
            destinationName,
            messageId: randomUUID(),
            body: entry.body,
            attributes: entry.attributes,
            ...(entry.messageGroupId === undefined ? {} : { messageGroupId: entry.messageGroupId }),
            ...(entry.messageDeduplicationId === undefined ? {} : { messageDeduplicationId: entry.messageDeduplicationId }),
            action: call.action,
            callNumber: call.callNumber,
            acknowledged,
        };
        accepted.push(message);
        return message;
    }

    /** Checks SNS makes on one entry; throws the error SNS would answer the whole call with. */
    function checkSnsEntry(topic: Topic, entry: EntryInfo): void {
        if (entrySize(entry) > SNS_MAX_MESSAGE_BYTES) throw new ApiError("InvalidParameter", 400, "Invalid parameter: Message too long");
        if (topic.fifo && entry.messageGroupId === undefined) throw new ApiError("InvalidParameter", 400, "Invalid parameter: The MessageGroupId parameter is required for FIFO topics");
        if (topic.fifo && entry.messageDeduplicationId === undefined && !topic.contentBasedDeduplication) {
            throw new ApiError("InvalidParameter", 400, "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly");
        }
    }

    /** Accept one SNS entry, honouring FIFO deduplication. */
    function acceptSns(topic: Topic, entry: EntryInfo, call: CallInfo, acknowledged: boolean): { messageId: string; sequenceNumber?: string } {
        const now = Date.now();
        if (topic.fifo && entry.messageDeduplicationId !== undefined) {
            const seen = topic.dedup.get(entry.messageDeduplicationId);
            if (seen !== undefined && now - seen.at < FIFO_DEDUP_WINDOW_MS) return { messageId: seen.messageId };
        }
        const message = record("sns", topic.arn, topic.name, entry, call, acknowledged);
        if (!topic.fifo) return { messageId: message.messageId };
        if (entry.messageDeduplicationId !== undefined) topic.dedup.set(entry.messageDeduplicationId, { messageId: message.messageId, at: now });
        topic.sequence += 1n;
        return { messageId: message.messageId, sequenceNumber: topic.sequence.toString() };
    }

    function snsTopicOf(call: ParsedCall): Topic {
        const arn = call.params.get("TopicArn");
        const topic = arn === null ? undefined : topics.get(arn);
        if (topic === undefined) throw new ApiError("NotFound", 404, "Topic does not exist");
        return topic;
    }

    function queueOf(call: ParsedCall): Queue {
        const url = typeof call.json.QueueUrl === "string" ? call.json.QueueUrl : typeof call.json.QueueName === "string" ? call.json.QueueName : "";
        const queue = findQueue(url);
        if (queue === undefined) throw new ApiError("AWS.SimpleQueueService.NonExistentQueue", 400, "The specified queue does not exist.");
        return queue;
    }

    /** Run the action; returns the response body (XML for SNS, an object for SQS) and the outcome. */
    function execute(call: ParsedCall, acknowledged: boolean): { body: string | object; outcome: string } {
        const { info } = call;
        const requestId = randomUUID();
        const meta = `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata>`;
        switch (info.action) {
            case "CreateTopic": {
                const name = call.params.get("Name") ?? "";
                if (!/^[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(name)) throw new ApiError("InvalidParameter", 400, "Invalid parameter: Topic Name");
                const attributes: Record<string, string> = {};
                for (let n = 1; call.params.has(`Attributes.entry.${n}.key`); n += 1) {
                    attributes[call.params.get(`Attributes.entry.${n}.key`) as string] = call.params.get(`Attributes.entry.${n}.value`) ?? "";
                }
                if ((attributes.FifoTopic === "true") !== name.endsWith(".fifo")) {
                    throw new ApiError("InvalidParameter", 400, "Invalid parameter: Fifo Topic names must end with .fifo and must be made with FifoTopic=true");
                }
                const arn = createTopic(name, attributes.ContentBasedDeduplication === "true");
                return { body: `<CreateTopicResponse xmlns="${SNS_XMLNS}"><CreateTopicResult><TopicArn>${xmlEscape(arn)}</TopicArn></CreateTopicResult>${meta}</CreateTopicResponse>`, outcome: "ok" };
            }
            case "Publish": {
                const topic = snsTopicOf(call);
                const entry = info.entries[0] as EntryInfo;
                checkSnsEntry(topic, entry);
                const out = acceptSns(topic, entry, info, acknowledged);
                const sequence = out.sequenceNumber === undefined ? "" : `<SequenceNumber>${out.sequenceNumber}</SequenceNumber>`;
                return { body: `<PublishResponse xmlns="${SNS_XMLNS}"><PublishResult><MessageId>${out.messageId}</MessageId>${sequence}</PublishResult>${meta}</PublishResponse>`, outcome: "ok" };
            }
            case "PublishBatch": {
                const topic = snsTopicOf(call);
                const entries = info.entries;
                if (entries.length === 0) throw new ApiError("EmptyBatchRequest", 400, "The batch request doesn't contain any entries");
                if (entries.length > SNS_MAX_BATCH_ENTRIES) throw new ApiError("TooManyEntriesInBatchRequest", 400, "The batch request contains more entries than permissible");
                if (new Set(entries.map((e) => e.id)).size !== entries.length) throw new ApiError("BatchEntryIdsNotDistinct", 400, "Two or more batch entries in the request have the same Id");
                if (entries.reduce((n, e) => n + entrySize(e), 0) > SNS_MAX_MESSAGE_BYTES) throw new ApiError("BatchRequestTooLong", 400, "The length of all the messages put together is more than the limit");
                for (const entry of entries) checkSnsEntry(topic, entry);
                const successful: string[] = [];
                const failed: string[] = [];
                for (const entry of entries) {
                    const rule = (plan.entries ?? []).find((r) => (r.when === undefined || r.when(entry, info)) && fires(r));
                    if (rule !== undefined) {
                        failed.push(
                            `<member><Id>${xmlEscape(entry.id ?? "")}</Id><Code>${xmlEscape(rule.code ?? "InternalError")}</Code><Message>${xmlEscape(rule.message ?? "injected failure")}</Message><SenderFault>${rule.senderFault === true}</SenderFault></member>`,
                        );
                        continue;
                    }
                    const out = acceptSns(topic, entry, info, acknowledged);
                    const sequence = out.sequenceNumber === undefined ? "" : `<SequenceNumber>${out.sequenceNumber}</SequenceNumber>`;
                    successful.push(`<member><Id>${xmlEscape(entry.id ?? "")}</Id><MessageId>${out.messageId}</MessageId>${sequence}</member>`);
                }
                return {
                    body: `<PublishBatchResponse xmlns="${SNS_XMLNS}"><PublishBatchResult><Successful>${successful.join("")}</Successful><Failed>${failed.join("")}</Failed></PublishBatchResult>${meta}</PublishBatchResponse>`,
                    outcome: failed.length === 0 ? "ok" : "partial",
                };
            }
            case "CreateQueue": {
                const name = typeof call.json.QueueName === "string" ? call.json.QueueName : "";
                if (!/^[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(name)) throw new ApiError("InvalidParameterValue", 400, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length");
                return { body: { QueueUrl: createQueue(name) }, outcome: "ok" };
            }
            case "GetQueueUrl":
                return { body: { QueueUrl: queueOf(call).url }, outcome: "ok" };
            case "SendMessage": {
                const queue = queueOf(call);
                const entry = info.entries[0] as EntryInfo;
                refuseInvalidSqsCharacters(entry);
                const message = record("sqs", queue.url, queue.name, entry, info, acknowledged);
                queue.messages.push({ record: message, receiptHandle: undefined, invisibleUntil: 0, deleted: false });
                return { body: { MessageId: message.messageId, MD5OfMessageBody: md5(entry.body) }, outcome: "ok" };
            }
            case "SendMessageBatch": {
                const queue = queueOf(call);
                const successful = info.entries.map((entry) => {
                    const message = record("sqs", queue.url, queue.name, entry, info, acknowledged);
                    queue.messages.push({ record: message, receiptHandle: undefined, invisibleUntil: 0, deleted: false });
                    return { Id: entry.id, MessageId: message.messageId, MD5OfMessageBody: md5(entry.body) };
                });
                return { body: { Successful: successful, Failed: [] }, outcome: "ok" };
            }
            case "ReceiveMessage": {
                const queue = queueOf(call);
                const max = typeof call.json.MaxNumberOfMessages === "number" ? call.json.MaxNumberOfMessages : 1;
                const visibilityMs = (typeof call.json.VisibilityTimeout === "number" ? call.json.VisibilityTimeout : 30) * 1000;
                const now = Date.now();
                const ready = queue.messages.filter((m) => !m.deleted && m.invisibleUntil <= now).slice(0, max);
                const messages = ready.map((m) => {
                    m.receiptHandle = randomUUID();
                    m.invisibleUntil = now + visibilityMs;
                    const attributes = Object.fromEntries(
                        Object.entries(m.record.attributes).map(([name, a]) => [
                            name,
                            { DataType: a.dataType, ...(a.stringValue === undefined ? {} : { StringValue: a.stringValue }), ...(a.binaryValue === undefined ? {} : { BinaryValue: a.binaryValue }) },
                        ]),
                    );
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
            case "DeleteMessage": {
                const queue = queueOf(call);
                const found = queue.messages.find((m) => m.receiptHandle !== undefined && m.receiptHandle === call.json.ReceiptHandle);
                if (found === undefined) throw new ApiError("ReceiptHandleIsInvalid", 400, "The input receipt handle is invalid.");
                found.deleted = true;
                return { body: {}, outcome: "ok" };
            }
            default:
                throw new ApiError("InvalidAction", 400, `The action ${info.action} is not valid for this endpoint (the SNS test server supports CreateTopic, Publish, PublishBatch, CreateQueue, GetQueueUrl, SendMessage, SendMessageBatch, ReceiveMessage, DeleteMessage)`);
        }
    }

    function sendError(res: http.ServerResponse, protocol: "query" | "json", error: ApiError): void {
        if (protocol === "query") {
            res.writeHead(error.status, { "content-type": "text/xml" });
            res.end(
                `<ErrorResponse xmlns="${SNS_XMLNS}"><Error><Type>${error.sender ? "Sender" : "Receiver"}</Type><Code>${xmlEscape(error.code)}</Code><Message>${xmlEscape(error.message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
            );
            return;
        }
        res.writeHead(error.status, { "content-type": "application/x-amz-json-1.0", "x-amzn-query-error": `${error.code};${error.sender ? "Sender" : "Receiver"}` });
        res.end(JSON.stringify({ __type: `com.amazonaws.sqs#${error.code}`, message: error.message }));
    }

    function send(res: http.ServerResponse, protocol: "query" | "json", body: string | object): void {
        res.writeHead(200, { "content-type": protocol === "query" ? "text/xml" : "application/x-amz-json-1.0" });
        res.end(typeof body === "string" ? body : JSON.stringify(body));
    }

    async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
        const target = req.headers["x-amz-target"];
        const protocol: "query" | "json" = typeof target === "string" && target.startsWith("AmazonSQS.") ? "json" : "query";
        const params = protocol === "query" ? new URLSearchParams(raw) : new URLSearchParams();
        let json: Record<string, unknown> = {};
        if (protocol === "json") {
            try {
                json = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
            } catch {
                sendError(res, protocol, new ApiError("InvalidParameterValue", 400, "the request body is not JSON"));
                return;
            }
        }
        const action = protocol === "json" ? (target as string).slice("AmazonSQS.".length) : (params.get("Action") ?? "");
        const call = parse(action, protocol, params, json);
        const log = (outcome: string): void => void callLog.push({ callNumber: call.info.callNumber, action, entries: call.info.entries.length, outcome });

        const latency = plan.latencyMs ?? 0;
        if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));

        const rule = (plan.calls ?? []).find(
            (r) => (r.actions ?? ["Publish", "PublishBatch"]).includes(action) && (r.when === undefined || r.when(call.info)) && fires(r),
        );
        if (rule !== undefined && rule.kind === "Reset") {
            log("Reset");
            req.socket.destroy();
            return;
        }
        if (rule !== undefined && rule.kind !== "AcceptThenTimeout" && rule.kind !== "AcceptThenReset") {
            const fault = CALL_FAULTS[rule.kind] as CallFaultDefinition;
            log(rule.kind);
            sendError(res, protocol, new ApiError(rule.kind, fault.status, fault.message, fault.type === "Sender"));
            return;
        }
        const acknowledged = rule === undefined;
        let result: { body: string | object; outcome: string };
        try {
            result = execute(call, acknowledged);
        } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            log(err.code);
            sendError(res, protocol, err);
            return;
        }
        if (rule === undefined) {
            log(result.outcome);
            send(res, protocol, result.body);
            return;
        }
        log(rule.kind);
        if (rule.kind === "AcceptThenReset") {
            req.socket.destroy();
            return;
        }
        const hold = setTimeout(() => {
            holds.delete(hold);
            req.socket.destroy();
        }, rule.holdMs ?? 10_000);
        holds.add(hold);
    }

    const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            handle(req, res, Buffer.concat(chunks).toString("utf8")).catch((err: unknown) => {
                res.writeHead(500, { "content-type": "text/plain" });
                res.end(`SNS test server bug: ${err instanceof Error ? err.stack : String(err)}`);
            });
        });
    });
    server.on("connection", (socket: Socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    endpoint = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;

    let stopping: Promise<void> | undefined;
    return {
        endpoint,
        createTopic: (name) => createTopic(name),
        createQueue,
        messages: () => [...accepted],
        topicMessages: (topic) => {
            const found = findTopic(topic);
            return accepted.filter((m) => m.service === "sns" && m.destination === found?.arn);
        },
        queueMessages: (queue) => {
            const found = findQueue(queue);
            return accepted.filter((m) => m.service === "sqs" && m.destination === found?.url);
        },
        calls: () => [...callLog],
        setFaults(next: FaultPlan): void {
            plan = next;
            fired = new Map();
        },
        clearFaults(): void {
            plan = {};
            fired = new Map();
        },
        reset(): void {
            accepted.length = 0;
            callLog.length = 0;
            for (const queue of queues.values()) queue.messages.length = 0;
            for (const topic of topics.values()) topic.dedup.clear();
        },
        stop(): Promise<void> {
            stopping ??= new Promise<void>((resolve) => {
                for (const hold of holds) clearTimeout(hold);
                holds.clear();
                server.close(() => resolve());
                for (const socket of sockets) socket.destroy();
            });
            return stopping;
        },
    };
}
