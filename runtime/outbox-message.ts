/**
 * What one outbox message may hold, as the writer checks it before any I/O: its id, partition, type and ordering
 * key (non-empty, in characters SNS and the DLQ take, within DynamoDB's key sizes and, on a FIFO topic, SNS's group
 * id rules), its expiry, its headers, its trace context and the attributes it adds up to (`runtime/message-trace.ts`),
 * its payload (`runtime/payload-json.ts`), and its size as an SNS message and as a DLQ message.
 *
 * @packageDocumentation
 */
import type { IdGenerator } from "./ids";
import { MAX_PARTITION_KEY_BYTES, utf8Length } from "./item-size";
import {
    DLQ_MAX_MESSAGE_BYTES,
    headerNameProblem,
    MAX_HEADERS,
    SNS_MAX_MESSAGE_BYTES,
    snsMessageSize,
    worstCaseDeadLetterSize,
    type OutboundMessage,
} from "./message";
import { checkAttributeBudget, givenTraceContext } from "./message-trace";
import { invalidPayload as invalid, refuseUnsendable, serializePayload } from "./payload-json";
import type { TraceContext } from "./trace-context";
import { describeValue } from "./transact-items";
import {
    checkClaimCheckBudget,
    claimCheckOf,
    withTrace,
    type ClaimCheckPlan,
    type PendingPut,
} from "./claim-check/offload";

/** One event to publish, written in the same transaction as the caller's items. */
export interface OutboxMessage {
    /**
     * The partition (`PK`) the record lives in: normally the aggregate's key, e.g. `ORDER#1001`, so the record
     * sits in the aggregate's item collection. Not empty; `#` and `%` are fine; no character SQS or SNS refuse
     * (see {@link unsendableCharacter}).
     */
    readonly partition: string;
    /** The message type, e.g. `OrderCreated`; sent as the `outbox.type` attribute. Not empty; no character SQS or SNS refuse. */
    readonly type: string;
    /**
     * The payload: plain JSON data, sent as the message body (its `JSON.stringify` text). Refused, with the path
     * named: cycles, BigInt, NaN, ±Infinity, Map, Set and other built-ins JSON writes as `{}`, functions, symbols,
     * `undefined` or holes in arrays, an Invalid Date, and U+FFFE/U+FFFF in strings or keys. A key whose value is
     * `undefined` is left out, as JSON does; a `Date` is written by its `toJSON`.
     */
    readonly payload: unknown;
    /**
     * Headers sent as String message attributes, e.g. `{ tenant: "acme" }`: a plain object (not a Map) of
     * non-empty string values without characters SQS or SNS refuse. At most {@link MAX_HEADERS} (8), one fewer
     * for a `traceparent` and one more fewer for a `tracestate`: SNS carries 10 message attributes, and the outbox
     * adds `outbox.id`, `outbox.type` and the trace context. Names follow SNS attribute rules, are not
     * `__proto__`, `traceparent` or `tracestate` (any case), and may not start with `x-bridge.`, `outbox.`, `AWS.`
     * or `Amazon.`.
     * @default {}
     */
    readonly headers?: Readonly<Record<string, string>>;
    /**
     * The W3C `traceparent` of the work that writes the message (e.g. the incoming request's), so the consumer's
     * span can link to it: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, ids not all zeros
     * (W3C Trace Context Level 1). Stored as the record's `traceparent` envelope header and sent as the
     * `traceparent` String message attribute; the DLQ message and a redrive keep it.
     * @default the active OpenTelemetry span's, when `@opentelemetry/api` is installed, a span is active and
     *   `OutboxWriterOptions.traceContext` is `"active"`; else none
     */
    readonly traceparent?: string;
    /**
     * The W3C `tracestate` that goes with `traceparent` (only with one): comma-separated `key=value` members, at
     * most 32 and 512 characters. Stored and sent as `tracestate`.
     * @default the active span's trace state, when the trace context is the active span's; else none
     */
    readonly tracestate?: string;
    /**
     * Messages with the same ordering key (within one partition) are published strictly in write order, through
     * the store's claim path. Costs one small extra write per partition per `write()`.
     * @default undefined (keyless: batched, no order promised)
     */
    readonly orderingKey?: string;
    /** After this instant the message is not published: it goes to the DLQ with reason `expired`. @default never */
    readonly expiresAt?: Date;
    /**
     * The message id: the record id, the envelope id in the sort key, the SNS FIFO `MessageDeduplicationId` and
     * the id consumers deduplicate on. 1–128 printable ASCII characters without spaces (the SNS FIFO
     * deduplication id alphabet). Unique across the table: the transaction also puts an id guard row that claims
     * it (one more transaction action, 2 WCU), so a write reusing an id held by a record in another partition is
     * refused (`INVALID_PAYLOAD`), and one repeating a write in the same partition is `DUPLICATE_RECORD`.
     * @default a new ULID (sortable, unique; needs no guard)
     */
    readonly id?: string;
}

/** A message that passed every check, with its id and its payload's JSON text. */
export interface PreparedMessage {
    readonly index: number;
    readonly id: string;
    /** The id did not come from the writer's own ULID generator, so the transaction claims it with a guard row. */
    readonly guarded: boolean;
    readonly message: OutboxMessage;
    readonly body: string;
    readonly expiresAtMs: number;
    /** The trace context the record carries: the message's own, or the active span's. */
    readonly trace: TraceContext | undefined;
    /** The payload to store in S3 before the transaction, when the message is offloaded (`body` is then the pointer). */
    readonly put?: PendingPut;
}

/** What the checks of a message take from its writer. */
export interface MessageRules {
    /** Gives the id of a message that has none. */
    readonly newId: IdGenerator;
    /** Whether the ids `newId` gives need a guard (an injected generator's do, the writer's own ULIDs do not). */
    readonly generatedIdsNeedGuard: boolean;
    /** Whether partitions and ordering keys are SNS FIFO `MessageGroupId`s. */
    readonly fifo: boolean;
    /**
     * The longest type the destination carries, when it limits it: an EventBridge bus takes the type as the event's
     * `DetailType`, 1 to 128 characters. @default undefined (no limit but the attribute's)
     */
    readonly maxTypeLength?: number;
    /**
     * The trace context of a message that gives none, for its number of headers (the active OpenTelemetry span's,
     * as far as they leave room); absent when the writer reads none.
     */
    readonly activeTrace?: (headerCount: number, where: string, id: string) => TraceContext | undefined;
    /** Where payloads too large to travel inline go; `undefined` keeps every payload inline. */
    readonly claimCheck?: ClaimCheckPlan;
}

/** The SNS FIFO id alphabet, which message ids and (on a FIFO topic) group ids keep to. */
const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

/** Whether a message with this `id` (possibly `undefined`) gets an id guard: only the writer's own ULIDs go without. */
export function needsIdGuard(id: unknown, rules: MessageRules): boolean {
    return id !== undefined || rules.generatedIdsNeedGuard;
}

/**
 * Check one message of a request and give it its id and its payload's JSON text.
 *
 * @param message - `request.messages[index]`, as the caller passed it.
 * @param index - Its index, for the errors.
 * @param rules - The writer's id generator and FIFO setting.
 * @throws OutboxError `INVALID_PAYLOAD` naming the field, the bad value, what is allowed and the fix.
 */
export function prepareMessage(message: OutboxMessage, index: number, rules: MessageRules): PreparedMessage {
    const where = `messages[${index}]`;
    if (message === null || typeof message !== "object")
        throw invalid(`${where} must be an object with partition, type and payload, got ${describeValue(message)}`);
    const guarded = needsIdGuard(message.id, rules);
    const id: unknown = message.id ?? rules.newId();
    if (typeof id !== "string" || !FIFO_ID.test(id)) {
        throw invalid(
            `${where}.id is ${describeValue(id)}; an id is 1-128 printable ASCII characters without spaces (letters, digits, punctuation); omit it to get a ULID`,
            { index },
        );
    }
    checkKeys(message, where, id, index);
    if (rules.maxTypeLength !== undefined) checkTypeLength(message.type, rules.maxTypeLength, where, id, index);
    if (rules.fifo) checkFifoGroup(message, where, id);
    const expiresAtMs = expiryOf(message, where, id);
    const headers = checkedHeaders(message, where, id, index);
    const given = givenTraceContext(message, where, id, index);
    const traceWith = (extraHeaders: number) =>
        given ?? rules.activeTrace?.(Object.keys(headers).length + extraHeaders, where, id);
    const trace = traceWith(0);
    const body = serializePayload(message.payload, where, id, index);
    const outbound: OutboundMessage = {
        id,
        type: message.type,
        partition: message.partition,
        ...(message.orderingKey !== undefined ? { orderingKey: message.orderingKey } : {}),
        body,
        headers,
        ...trace,
        createdAt: 0,
        expiresAt: expiresAtMs,
    };
    const offloaded = claimCheckOf(rules.claimCheck, outbound, where, index);
    if (offloaded === undefined) {
        checkAttributeBudget(where, index, outbound);
        checkMessageSizes(where, outbound);
        return { index, id, guarded, message, body, expiresAtMs, trace };
    }
    // The claim check's attributes take slots: the active span's context gets what the others leave.
    const claimCheckAttributes = Object.keys(offloaded.outbound.headers).length - Object.keys(headers).length;
    const sentTrace = given !== undefined || trace === undefined ? trace : traceWith(claimCheckAttributes);
    const sent = withTrace(offloaded.outbound, sentTrace);
    checkClaimCheckBudget(where, index, sent);
    checkMessageSizes(where, sent);
    // The record holds the pointer and its header: every reader after the writer carries them as they are.
    return {
        index,
        id,
        guarded,
        message: { ...message, headers: sent.headers },
        body: sent.body,
        expiresAtMs,
        trace: sentTrace,
        put: offloaded.put,
    };
}

/** The envelope headers of a prepared message's record: the user headers, and the trace context under its W3C names. */
export function envelopeHeaders(p: PreparedMessage): Record<string, string> {
    const headers: Record<string, string> = { ...(p.message.headers ?? {}) };
    if (p.trace !== undefined) {
        headers.traceparent = p.trace.traceparent;
        if (p.trace.tracestate !== undefined) headers.tracestate = p.trace.tracestate;
    }
    return headers;
}

/** The partition, the type and the ordering key: non-empty strings, a partition within DynamoDB's key size, and characters that travel. */
function checkKeys(message: OutboxMessage, where: string, id: string, index: number): void {
    if (typeof message.partition !== "string" || message.partition === "") {
        throw invalid(
            `${where}.partition is ${describeValue(message.partition)}; it must be a non-empty string, usually the aggregate's key, e.g. "ORDER#1001"`,
            { messageId: id },
        );
    }
    const partitionBytes = utf8Length(message.partition);
    if (partitionBytes > MAX_PARTITION_KEY_BYTES) {
        throw invalid(
            `${where}.partition ${describeValue(message.partition)} is ${partitionBytes} bytes (UTF-8); a DynamoDB partition key holds at most ${MAX_PARTITION_KEY_BYTES}; use a shorter key, e.g. the aggregate's id rather than its content, or a hash of it`,
            { messageId: id, messageIndex: index, size: partitionBytes },
        );
    }
    if (typeof message.type !== "string" || message.type === "") {
        throw invalid(
            `${where}.type is ${describeValue(message.type)}; it must be a non-empty string, e.g. "OrderCreated"`,
            { messageId: id },
        );
    }
    if (message.orderingKey !== undefined && (typeof message.orderingKey !== "string" || message.orderingKey === "")) {
        throw invalid(
            `${where}.orderingKey is ${describeValue(message.orderingKey)}; it must be a non-empty string, or omitted for a keyless message`,
            { messageId: id },
        );
    }
    // These travel: type as the outbox.type attribute, partition and ordering key in the DLQ body and as a FIFO group id.
    for (const [field, value] of [
        ["partition", message.partition],
        ["type", message.type],
        ["orderingKey", message.orderingKey],
    ] as const) {
        if (value !== undefined) refuseUnsendable(value, `${where}.${field}`, id, index);
    }
}

/** A type the destination can carry: on an EventBridge bus it is the event's `DetailType`. */
function checkTypeLength(type: string, max: number, where: string, id: string, index: number): void {
    if (type.length > max) {
        throw invalid(
            `${where}.type is ${type.length} characters; the writer's address is an EventBridge bus, whose events carry the type as their DetailType, at most ${max} characters; use a shorter type`,
            { messageId: id, messageIndex: index, size: type.length },
        );
    }
}

/** On a FIFO topic the ordering key (or else the partition) is the `MessageGroupId`. */
function checkFifoGroup(message: OutboxMessage, where: string, id: string): void {
    const group = message.orderingKey ?? message.partition;
    if (!FIFO_ID.test(group)) {
        throw invalid(
            `${where}: ${message.orderingKey !== undefined ? "orderingKey" : "partition"} ${describeValue(group)} is the SNS FIFO MessageGroupId, which must be 1-128 printable ASCII characters without spaces`,
            { messageId: id },
        );
    }
}

/** The message's expiry in epoch ms, `0` for never. */
function expiryOf(message: OutboxMessage, where: string, id: string): number {
    if (message.expiresAt === undefined) return 0;
    const ms = message.expiresAt instanceof Date ? message.expiresAt.getTime() : Number.NaN;
    if (!Number.isFinite(ms) || ms <= 0) {
        throw invalid(
            `${where}.expiresAt is ${describeValue(message.expiresAt)}; it must be a valid Date after 1970-01-01, or omitted for a message that never expires`,
            { messageId: id },
        );
    }
    return Math.ceil(ms);
}

/**
 * The message's headers (`{}` when it has none), once they are a plain object of at most {@link MAX_HEADERS} entries
 * SNS takes. How many fit next to its trace context is `checkAttributeBudget`'s to say.
 */
function checkedHeaders(
    message: OutboxMessage,
    where: string,
    id: string,
    index: number,
): Readonly<Record<string, string>> {
    const headers = message.headers ?? {};
    if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
        throw invalid(`${where}.headers must be an object of string values, got ${describeValue(headers)}`, {
            messageId: id,
        });
    }
    if (headers instanceof Map) {
        throw invalid(
            `${where}.headers is a Map; its entries would be dropped; pass a plain object of string values, e.g. Object.fromEntries(map)`,
            { messageId: id },
        );
    }
    const proto: unknown = Object.getPrototypeOf(headers);
    if (proto !== Object.prototype && proto !== null) {
        const kind = (proto as { constructor?: { name?: string } }).constructor?.name ?? "object";
        throw invalid(
            `${where}.headers is a ${kind}, not a plain object; only its own enumerable properties would be sent; pass a plain object of string values, e.g. { tenant: "acme" }`,
            { messageId: id },
        );
    }
    const names = Object.keys(headers);
    // More than SNS carries at all: said before each name is judged.
    if (names.length > MAX_HEADERS) {
        throw invalid(
            `${where}.headers has ${names.length} entries; at most ${MAX_HEADERS} fit (SNS carries 10 message attributes, 2 are the outbox's, and a trace context takes 1 or 2 more); move the rest into the payload`,
            { messageId: id, messageIndex: index, headers: names.length, maxHeaders: MAX_HEADERS },
        );
    }
    for (const name of names) checkHeader(name, headers[name], where, id, index);
    return headers;
}

/** One header: a name SNS takes, and a non-empty string value in characters that travel. */
function checkHeader(name: string, value: unknown, where: string, id: string, index: number): void {
    const problem = headerNameProblem(name);
    if (problem !== undefined)
        throw invalid(`${where}.headers name ${describeValue(name)} ${problem}`, { messageId: id });
    if (typeof value !== "string")
        throw invalid(`${where}.headers["${name}"] is ${describeValue(value)}; header values must be strings`, {
            messageId: id,
        });
    if (value === "")
        throw invalid(
            `${where}.headers["${name}"] is ""; SNS refuses an empty String attribute value; omit the header or give it a value`,
            { messageId: id, messageIndex: index },
        );
    refuseUnsendable(value, `${where}.headers["${name}"]`, id, index);
}

/** The message fits SNS (body and attributes) and, with the largest reason and error text, the DLQ. */
function checkMessageSizes(where: string, outbound: OutboundMessage): void {
    const { id } = outbound;
    const snsSize = snsMessageSize(outbound);
    if (snsSize > SNS_MAX_MESSAGE_BYTES) {
        throw invalid(
            `${where} (id "${id}") is ${snsSize} bytes as an SNS message (body + attributes); SNS accepts at most ${SNS_MAX_MESSAGE_BYTES}; shrink the payload or store it elsewhere and send a reference`,
            { messageId: id, size: snsSize },
        );
    }
    const dlqSize = worstCaseDeadLetterSize(outbound);
    if (dlqSize > DLQ_MAX_MESSAGE_BYTES) {
        throw invalid(
            `${where} (id "${id}") would be ${dlqSize} bytes as a DLQ message; the DLQ accepts at most ${DLQ_MAX_MESSAGE_BYTES}; shrink the payload by ~${dlqSize - DLQ_MAX_MESSAGE_BYTES} bytes`,
            { messageId: id, size: dlqSize },
        );
    }
}
