/**
 * What one outbox message may hold, as the writer checks it before any I/O: its id, partition, type and ordering
 * key (non-empty, in characters SNS and the DLQ take, within DynamoDB's key sizes, a type an EventBridge bus takes
 * as its `DetailType` and, for a FIFO topic or queue, the group id rules), its expiry, its headers, its trace
 * context and the attributes it adds up to (`runtime/writer/message-trace.ts`), its payload (`runtime/writer/payload-json.ts`),
 * and its size as an SNS message and as a DLQ message.
 *
 * @packageDocumentation
 */
import { EVENTBRIDGE_NAME_LIMITS } from "../destination/kind";
import type { IdGenerator } from "../ids";
import { MAX_PARTITION_KEY_BYTES, utf8Length } from "../record/item-size";
import {
    DLQ_MAX_MESSAGE_BYTES,
    headerNameProblem,
    LONGEST_SOURCE,
    MAX_HEADERS,
    OUTBOX_BASE_ATTRIBUTES,
    ORIGIN_ID_HEADER,
    SCHEMA_VERSION_HEADER,
    SNS_MAX_ATTRIBUTES,
    SNS_MAX_MESSAGE_BYTES,
    snsMessageSize,
    worstCaseDeadLetterSize,
    type OutboundMessage,
} from "../record/message";
import { checkAttributeBudget, givenTraceContext } from "./message-trace";
import { invalidPayload as invalid } from "../record/payload-error";
import { refuseUnsendable, serializePayload } from "./payload-json";
import type { TraceContext } from "../observability/trace-context";
import { describeValue } from "../record/transact-items";
import { schemaVersionProblem } from "../record/typed-events";
import {
    checkClaimCheckBudget,
    claimCheckOf,
    withTrace,
    type ClaimCheckPlan,
    type PendingPut,
} from "../claim-check/offload";

/** One event to publish, written in the same transaction as the caller's items. */
export interface OutboxMessage {
    /**
     * The partition (`PK`) the record lives in: normally the aggregate's key, e.g. `ORDER#1001`, so the record
     * sits in the aggregate's item collection. Not empty; `#` and `%` are fine; no character SQS or SNS refuse
     * (see {@link unsendableCharacter}).
     */
    readonly partition: string;
    /**
     * The message type, e.g. `OrderCreated`; sent as the `outbox.type` attribute (an EventBridge event's
     * `DetailType`). Not empty, at most 128 characters (`MAX_MESSAGE_TYPE_LENGTH`); no character SQS or SNS
     * refuse.
     */
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
     * non-empty string values without characters SQS or SNS refuse. At most {@link MAX_HEADERS} (7), one fewer
     * for a `traceparent` and one more fewer for a `tracestate`: SNS carries 10 message attributes, and the outbox
     * adds `outbox.id`, `outbox.type`, `outbox.source` and the trace context. Names follow SNS attribute rules, are not
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
    /**
     * The identity of the event this message carries again, when it is not its own `id`: published in its place as
     * `outbox.id` (and `detail.outbox.id` on a bus, and the FIFO `MessageDeduplicationId`), so a consumer that
     * deduplicates on the id sees the same event. `redriveDeadLetters` sets it to the dead-lettered record's
     * identity; set it yourself only to publish an event again under a new record id. Stored as the reserved
     * envelope header `outbox.origin-id`; the id guard still claims `id`, not it. A non-empty string of at most
     * 1024 UTF-8 bytes without characters SQS or SNS refuse; on a FIFO writer (`fifo: true`) 1–128 printable ASCII
     * characters without spaces, as `id`.
     * @default undefined (the message is its own event: `id`)
     */
    readonly originId?: string;
    /**
     * The version of the payload's schema, e.g. `"2"` or `"1.4.0"`: stored as the reserved envelope header
     * `outbox.schema-version`, sent as the `outbox.schema-version` message attribute (`detail.outbox.schemaVersion`
     * on a bus), kept by the DLQ and a redrive, and handed to the inbox's `consume` as `schemaVersion`. It takes one
     * of the 10 attributes a message carries, as a header does. 1 to 64 letters, digits, `.`, `_`, `-` or `+`.
     * @default the writer's `schemaVersions[type]`, else none
     */
    readonly schemaVersion?: string;
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
    /** The schema version the record carries: the message's own, or its type's default. */
    readonly schemaVersion?: string;
    /** The payload to store in S3 before the transaction, when the message is offloaded (`body` is then the pointer). */
    readonly put?: PendingPut;
}

/** What the checks of a message take from its writer. */
export interface MessageRules {
    /** Gives the id of a message that has none. */
    readonly newId: IdGenerator;
    /** Whether the ids `newId` gives need a guard (an injected generator's do, the writer's own ULIDs do not). */
    readonly generatedIdsNeedGuard: boolean;
    /** Whether partitions and ordering keys are FIFO `MessageGroupId`s (an SNS FIFO topic's or an SQS FIFO queue's). */
    readonly fifo: boolean;
    /**
     * The trace context of a message that gives none, for its number of headers (the active OpenTelemetry span's,
     * as far as they leave room); absent when the writer reads none.
     */
    readonly activeTrace?: (headerCount: number, where: string, id: string) => TraceContext | undefined;
    /** Where payloads too large to travel inline go; `undefined` keeps every payload inline. */
    readonly claimCheck?: ClaimCheckPlan;
    /** The schema version of each type's messages that give none (the writer's `schemaVersions`). @default {} */
    readonly schemaVersions?: Readonly<Record<string, string>>;
}

/**
 * The FIFO id alphabet of SNS and SQS (1 to 128 alphanumerics and ASCII punctuation), which message ids (the
 * deduplication id) and, for a FIFO topic or queue, group ids keep to.
 */
const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The longest type the writer takes, in characters: an EventBridge bus takes the type as the event's `DetailType`,
 * 1 to 128 characters, the strictest of the destinations. The writer keeps every message within what every
 * destination takes (as it keeps it within SNS's 256 KiB), so a record written for one destination can be redriven
 * to any.
 */
export const MAX_MESSAGE_TYPE_LENGTH = EVENTBRIDGE_NAME_LIMITS.detailTypeMaxLength;

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
    checkTypeLength(message.type, where, id, index);
    if (rules.fifo) checkFifoGroup(message, where, id);
    const expiresAtMs = expiryOf(message, where, id);
    const headers = checkedHeaders(message, where, id, index);
    const schemaVersion = checkedSchemaVersion(message, rules, where, id, index);
    const given = givenTraceContext(message, where, id, index);
    // The schema version takes an attribute as a header does: the active span's context gets what is left.
    const versionSlots = schemaVersion !== undefined ? 1 : 0;
    const traceWith = (extraHeaders: number) =>
        given ?? rules.activeTrace?.(Object.keys(headers).length + versionSlots + extraHeaders, where, id);
    const trace = traceWith(0);
    const originId = checkedOriginId(message.originId, where, id, index, rules.fifo);
    const body = serializePayload(message.payload, where, id, index);
    const outbound: OutboundMessage = {
        id,
        ...(originId !== undefined ? { originId } : {}),
        // Measured with the longest source a relay may stamp, so the message fits whatever source it gets.
        source: LONGEST_SOURCE,
        type: message.type,
        ...(schemaVersion !== undefined ? { schemaVersion } : {}),
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
        return { index, id, guarded, message, body, expiresAtMs, trace, ...versioned(schemaVersion) };
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
        ...versioned(schemaVersion),
        put: offloaded.put,
    };
}

function versioned(schemaVersion: string | undefined): { schemaVersion?: string } {
    return schemaVersion !== undefined ? { schemaVersion } : {};
}

/** The message's schema version: its own, else its type's default; checked against {@link schemaVersionProblem}. */
function checkedSchemaVersion(
    message: OutboxMessage,
    rules: MessageRules,
    where: string,
    id: string,
    index: number,
): string | undefined {
    const own = message.schemaVersion;
    if (own === undefined) {
        const defaults = rules.schemaVersions ?? {};
        return Object.prototype.hasOwnProperty.call(defaults, message.type) ? defaults[message.type] : undefined;
    }
    const problem = schemaVersionProblem(own);
    if (problem !== undefined)
        throw invalid(
            `${where}.schemaVersion is ${describeValue(own)}; a schema version ${problem} (e.g. "2" or "1.4.0"); it travels as the outbox.schema-version message attribute; omit it for none`,
            { messageId: id, messageIndex: index, field: "schemaVersion" },
        );
    return own;
}

/**
 * The envelope headers of a prepared message's record: the user headers, the trace context under its W3C names,
 * the origin id under {@link ORIGIN_ID_HEADER} and the schema version under {@link SCHEMA_VERSION_HEADER}.
 */
export function envelopeHeaders(p: PreparedMessage): Record<string, string> {
    const headers: Record<string, string> = { ...(p.message.headers ?? {}) };
    if (p.trace !== undefined) {
        headers.traceparent = p.trace.traceparent;
        if (p.trace.tracestate !== undefined) headers.tracestate = p.trace.tracestate;
    }
    if (p.message.originId !== undefined) headers[ORIGIN_ID_HEADER] = p.message.originId;
    if (p.schemaVersion !== undefined) headers[SCHEMA_VERSION_HEADER] = p.schemaVersion;
    return headers;
}

/** The longest origin id: the inbox's marker holds an outbox id of up to 1024 bytes in its sort key. */
const MAX_ORIGIN_ID_BYTES = 1024;

/** The message's origin id, when it gives one: a non-empty string that travels, within the marker's key size and, on FIFO, the id alphabet. */
function checkedOriginId(
    originId: unknown,
    where: string,
    id: string,
    index: number,
    fifo: boolean,
): string | undefined {
    if (originId === undefined) return undefined;
    if (typeof originId !== "string" || originId === "")
        throw invalid(
            `${where}.originId is ${describeValue(originId)}; it must be a non-empty string (the id of the event the message carries again), or omitted`,
            { messageId: id, messageIndex: index, field: "originId" },
        );
    const bytes = utf8Length(originId);
    if (bytes > MAX_ORIGIN_ID_BYTES)
        throw invalid(
            `${where}.originId is ${bytes} bytes (UTF-8); it is at most ${MAX_ORIGIN_ID_BYTES} (the inbox's marker holds it in a sort key); use the original record's id`,
            { messageId: id, messageIndex: index, field: "originId", size: bytes },
        );
    if (fifo && !FIFO_ID.test(originId))
        throw invalid(
            `${where}.originId ${describeValue(originId)} is the FIFO MessageDeduplicationId, which must be 1-128 printable ASCII characters without spaces`,
            { messageId: id, messageIndex: index, field: "originId" },
        );
    refuseUnsendable(originId, `${where}.originId`, id, index);
    return originId;
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

/** A type every destination can carry: on an EventBridge bus it is the event's `DetailType`, at most 128 characters. */
function checkTypeLength(type: string, where: string, id: string, index: number): void {
    if (type.length > MAX_MESSAGE_TYPE_LENGTH) {
        throw invalid(
            `${where}.type is ${type.length} characters; a type is at most ${MAX_MESSAGE_TYPE_LENGTH} characters, because an EventBridge bus carries it as the event's DetailType (the strictest destination; the writer keeps every message within what each destination takes, whatever its address); use a shorter type`,
            { messageId: id, messageIndex: index, size: type.length, maxSize: MAX_MESSAGE_TYPE_LENGTH },
        );
    }
}

/** For a FIFO topic or queue the ordering key (or else the partition) is the `MessageGroupId`. */
function checkFifoGroup(message: OutboxMessage, where: string, id: string): void {
    const group = message.orderingKey ?? message.partition;
    if (!FIFO_ID.test(group)) {
        const field = message.orderingKey !== undefined ? "orderingKey" : "partition";
        throw invalid(
            `${where}.${field} ${describeValue(group)} is ${group.length} characters and is the FIFO MessageGroupId (of an SNS FIFO topic or an SQS FIFO queue), which SNS and SQS take only as 1-128 letters, digits and ASCII punctuation, without spaces; use such a ${field}, e.g. with '-' or '#' instead of spaces`,
            { messageId: id, field },
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
            `${where}.headers has ${names.length} entries; at most ${MAX_HEADERS} fit (SNS carries ${SNS_MAX_ATTRIBUTES} message attributes, ${OUTBOX_BASE_ATTRIBUTES.length} are the outbox's, ${OUTBOX_BASE_ATTRIBUTES.join(", ")}, and a trace context takes 1 or 2 more); move the rest into the payload`,
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

/** What of a message's size is spent on what: its payload, its headers, and the outbox's own attributes. */
interface SizeParts {
    readonly payload: number;
    readonly headers: number;
    readonly outbox: number;
}

/** The fix of a message too large for SNS or the DLQ, aimed at the part that takes the most of it. */
function sizeFix(parts: SizeParts): string {
    if (parts.payload >= parts.headers && parts.payload >= parts.outbox)
        return "shrink the payload, or give the writer largePayloads to store payloads this large in S3 (a claim check), or store it elsewhere and send a reference";
    if (parts.headers >= parts.outbox)
        return "shrink the headers: they travel as message attributes, which largePayloads does not offload; move large values into the payload";
    return "use a shorter type, id or trace context";
}

/** The parts, in words; `rest` names what the outbox adds. */
function describeParts(parts: SizeParts, rest: string): string {
    return `payload ${parts.payload} bytes, headers ${parts.headers} bytes, ${rest} ${parts.outbox} bytes`;
}

/** The message fits SNS (body and attributes) and, with the largest reason and error text, the DLQ. */
function checkMessageSizes(where: string, outbound: OutboundMessage): void {
    const { id } = outbound;
    const snsSize = snsMessageSize(outbound);
    if (snsSize > SNS_MAX_MESSAGE_BYTES) {
        const payload = utf8Length(outbound.body);
        const headers = snsSize - snsMessageSize({ ...outbound, headers: {} });
        const parts = { payload, headers, outbox: snsSize - payload - headers };
        throw invalid(
            `${where} (id "${id}") is ${snsSize} bytes as an SNS message (body + attributes): ${describeParts(parts, "the outbox's attributes (id, type, trace context)")}; SNS accepts at most ${SNS_MAX_MESSAGE_BYTES}; ${sizeFix(parts)}`,
            { messageId: id, size: snsSize, ...parts },
        );
    }
    const dlqSize = worstCaseDeadLetterSize(outbound);
    if (dlqSize > DLQ_MAX_MESSAGE_BYTES) {
        // Each part's share: what the DLQ message loses without it (its JSON escaping included).
        const payload = dlqSize - worstCaseDeadLetterSize({ ...outbound, body: "null" });
        const headers = dlqSize - worstCaseDeadLetterSize({ ...outbound, headers: {} });
        const parts = { payload, headers, outbox: dlqSize - payload - headers };
        throw invalid(
            `${where} (id "${id}") would be ${dlqSize} bytes as a DLQ message (the record, its reason and a 1 KB error): ${describeParts(parts, "the rest (id, partition, type, trace context, reason, error)")}; the DLQ accepts at most ${DLQ_MAX_MESSAGE_BYTES}, ${dlqSize - DLQ_MAX_MESSAGE_BYTES} bytes less; ${sizeFix(parts)}`,
            { messageId: id, size: dlqSize, ...parts },
        );
    }
}
