/**
 * What travels: the SNS message built from an outbox record, the DLQ message built when a record cannot be
 * published, and their sizes. The writer measures messages with these same functions before it writes a record,
 * so a record that was accepted always fits SNS and the DLQ.
 *
 * @packageDocumentation
 */
import type { MessageAttributeValue, PublishBatchRequestEntry } from "@aws-sdk/client-sns";
import type { OutboxRecord } from "./codec";
import { definedFields } from "./defined-fields";
import { utf8Length } from "./item-size";

/** SNS's limit for one message, body plus attributes: 256 KB. It is also PublishBatch's limit for all entries together. */
export const SNS_MAX_MESSAGE_BYTES = 256 * 1024;

/** The DLQ message limit this package keeps to (SQS's classic 256 KB), body plus attributes. */
export const DLQ_MAX_MESSAGE_BYTES = 256 * 1024;

/** SNS allows at most 10 message attributes. */
export const SNS_MAX_ATTRIBUTES = 10;

/** The message attributes every published message carries. */
export const MESSAGE_ATTRIBUTE = {
    /**
     * The event's identity, the id consumers deduplicate on: the record id, or, on a record a redrive wrote, the
     * original record's id (its {@link ORIGIN_ID_HEADER}), so a redriven event is the same event to every consumer.
     */
    recordId: "outbox.id",
    /** The message type. Present when the type is not empty. */
    type: "outbox.type",
    /**
     * The outbox the message comes from (the relay's `source`, by default its table name): the inbox keys its
     * markers on it with the outbox id, so two outboxes whose ids collide never drop each other's events. Left out
     * only of a record written under the older budget whose attributes leave no room for it.
     */
    source: "outbox.source",
    /** On DLQ messages: why the record was dead-lettered (`expired`, `publish-rejected` or `item-too-large`). */
    reason: "outbox.reason",
    /**
     * The W3C `traceparent`, when the record carries one. The name W3C's propagator and OpenTelemetry's AWS SDK
     * instrumentation read, and the envelope header GoBridge propagates, so the record stores it under it too.
     */
    traceparent: "traceparent",
    /** The W3C `tracestate`, when the record carries one (only with a `traceparent`). */
    tracestate: "tracestate",
    /** The event's schema version, when the writer gave it one ({@link SCHEMA_VERSION_HEADER}). */
    schemaVersion: "outbox.schema-version",
} as const;

/**
 * The attributes the outbox adds to every message a writer of this package accepts, besides the trace context:
 * `outbox.id`, `outbox.type` (the writer refuses an empty type) and `outbox.source`.
 */
export const OUTBOX_BASE_ATTRIBUTES = [
    MESSAGE_ATTRIBUTE.recordId,
    MESSAGE_ATTRIBUTE.type,
    MESSAGE_ATTRIBUTE.source,
] as const;

/**
 * How many user headers fit next to the outbox's own attributes ({@link OUTBOX_BASE_ATTRIBUTES}) when the message
 * carries no trace context: 7; a `traceparent` takes one more, a `tracestate` another.
 */
export const MAX_HEADERS = SNS_MAX_ATTRIBUTES - OUTBOX_BASE_ATTRIBUTES.length;

/**
 * How many of SNS's attributes a message leaves for a trace context and the claim check's attribute, after the
 * outbox's own ({@link OUTBOX_BASE_ATTRIBUTES}) and its user headers.
 *
 * @param headerCount - The message's user headers (the claim check's among them, when the record holds one).
 */
export function attributesLeft(headerCount: number): number {
    return MAX_HEADERS - headerCount;
}

/**
 * The envelope header in which a record a redrive wrote carries the identity of the event it carries again: the
 * dead-lettered record's own id, or that record's origin id when it was itself a redrive. The relay publishes it
 * as the message's `outbox.id` (and FIFO `MessageDeduplicationId`, and `detail.outbox.id` on a bus), so every
 * consumer that deduplicates on the id sees one event. Reserved (`outbox.`): no user header can carry it.
 */
export const ORIGIN_ID_HEADER = "outbox.origin-id";

/**
 * The envelope header in which a record carries its event's schema version (the writer's `schemaVersion`), under
 * the name of the message attribute it is sent as. Reserved (`outbox.`): no user header can carry it.
 */
export const SCHEMA_VERSION_HEADER = MESSAGE_ATTRIBUTE.schemaVersion;

/** The longest source: a DynamoDB table name's 255 characters, so every table name is a source. */
export const MAX_SOURCE_LENGTH = 255;

/** A source's alphabet: letters, digits, `_`, `-`, `.` and `:` (no `#` or `@`, which the inbox's marker key uses as separators). */
const SOURCE_NAME = /^[A-Za-z0-9_.:-]+$/;

/**
 * Why a value cannot be a message's source (`outbox.source`), or `undefined` when it can: 1 to
 * {@link MAX_SOURCE_LENGTH} letters, digits, `_`, `-`, `.` or `:`. Every DynamoDB table name is one.
 *
 * @param value - The candidate source.
 */
export function sourceProblem(value: unknown): string | undefined {
    if (typeof value !== "string") return "must be a string";
    if (value.length === 0 || value.length > MAX_SOURCE_LENGTH)
        return `must be 1 to ${MAX_SOURCE_LENGTH} characters (it is ${value.length})`;
    if (!SOURCE_NAME.test(value))
        return "may hold only letters, digits, '_', '-', '.' and ':' (the inbox's marker key uses '#' and '@' as separators)";
    return undefined;
}

/**
 * The longest source a relay may stamp: the writer measures every message with it, so a message it accepts fits
 * SNS, its attribute count and the destination's size, whatever source the relay stamps.
 */
export const LONGEST_SOURCE = "s".repeat(MAX_SOURCE_LENGTH);

/** Header names beginning with these (any case) are reserved: GoBridge's envelope headers and this package's attributes. */
export const RESERVED_HEADER_PREFIXES = ["x-bridge.", "outbox.", "aws.", "amazon."] as const;

/**
 * Header names the outbox carries itself (any case): the W3C trace context, given as the message's `traceparent`
 * and `tracestate` and stored as envelope headers of exactly these names.
 */
export const TRACE_HEADER_NAMES = [MESSAGE_ATTRIBUTE.traceparent, MESSAGE_ATTRIBUTE.tracestate] as const;

/** The published form of one record: everything SNS needs, nothing else. */
export interface OutboundMessage {
    /** The record id (= the message id the writer returned). */
    readonly id: string;
    /**
     * The identity of the event the record carries again, when a redrive wrote it ({@link ORIGIN_ID_HEADER}):
     * published in place of `id` ({@link eventIdOf}). @default undefined (the record's own id)
     */
    readonly originId?: string;
    /**
     * The outbox the message comes from, sent as the `outbox.source` attribute: the relay's `source`. Absent when
     * the record's attributes leave no room for it (a record written under the older budget). @default undefined
     */
    readonly source?: string;
    /** The message type; `""` when none. */
    readonly type: string;
    /** The record's partition. */
    readonly partition: string;
    /** The ordering key, when the record has one. */
    readonly orderingKey?: string;
    /** The message body: the payload's JSON text. */
    readonly body: string;
    /** User headers, sent as String message attributes. */
    readonly headers: Readonly<Record<string, string>>;
    /** The W3C `traceparent` the record carries, sent as the `traceparent` attribute. @default undefined */
    readonly traceparent?: string;
    /** The W3C `tracestate` the record carries, sent as the `tracestate` attribute. @default undefined */
    readonly tracestate?: string;
    /**
     * The event's schema version ({@link SCHEMA_VERSION_HEADER}), sent as the `outbox.schema-version` attribute.
     * @default undefined
     */
    readonly schemaVersion?: string;
    /** Creation time, epoch ms. */
    readonly createdAt: number;
    /** Expiry time, epoch ms; `0` = never. */
    readonly expiresAt: number;
}

/**
 * Why a record went to the DLQ: its expiry passed (`expired`), its destination refused it permanently
 * `maxPublishAttempts` times (`publish-rejected`), or no claim can take it because claiming it would exceed
 * DynamoDB's 400 KB item limit (`item-too-large`: only a record another writer wrote, `runtime/relay/unclaimable.ts`).
 */
export type DeadLetterReason = "expired" | "publish-rejected" | "item-too-large";

function isReservedHeader(name: string): boolean {
    const lower = name.toLowerCase();
    return RESERVED_HEADER_PREFIXES.some((p) => lower.startsWith(p));
}

function isTraceHeader(name: string): boolean {
    return (TRACE_HEADER_NAMES as readonly string[]).includes(name);
}

/**
 * The user headers of an envelope header map: string values whose names are not reserved. GoBridge's
 * `x-bridge.*` headers (the ordering key among them) stay in the record and are not sent; `traceparent` and
 * `tracestate` are the trace context ({@link traceHeaders}), not user headers.
 *
 * @param headers - The envelope's header map.
 */
export function userHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of Object.keys(headers)) {
        const value = headers[name];
        if (typeof value === "string" && !isReservedHeader(name) && !isTraceHeader(name)) out[name] = value;
    }
    return out;
}

/**
 * The trace context of an envelope header map: its `traceparent` and `tracestate` string values, as stored (a
 * record GoBridge or an older writer stored is sent on as it is, not judged here). A `tracestate` without a
 * `traceparent` means nothing (W3C) and is left out.
 *
 * @param headers - The envelope's header map.
 */
export function traceHeaders(headers: Readonly<Record<string, unknown>>): {
    traceparent?: string;
    tracestate?: string;
} {
    const own = (name: string): string | undefined => {
        const value = Object.prototype.hasOwnProperty.call(headers, name) ? headers[name] : undefined;
        return typeof value === "string" && value !== "" ? value : undefined;
    };
    const traceparent = own(MESSAGE_ATTRIBUTE.traceparent);
    if (traceparent === undefined) return {};
    const tracestate = own(MESSAGE_ATTRIBUTE.tracestate);
    return { traceparent, ...(tracestate !== undefined ? { tracestate } : {}) };
}

/**
 * The origin id an envelope header map carries ({@link ORIGIN_ID_HEADER}): a non-empty string, else `undefined`.
 *
 * @param headers - The envelope's header map.
 */
export function originIdHeader(headers: Readonly<Record<string, unknown>>): string | undefined {
    const value = Object.prototype.hasOwnProperty.call(headers, ORIGIN_ID_HEADER)
        ? headers[ORIGIN_ID_HEADER]
        : undefined;
    return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The schema version an envelope header map carries ({@link SCHEMA_VERSION_HEADER}): a non-empty string, else
 * `undefined`.
 *
 * @param headers - The envelope's header map.
 */
export function schemaVersionHeader(headers: Readonly<Record<string, unknown>>): string | undefined {
    const value = Object.prototype.hasOwnProperty.call(headers, SCHEMA_VERSION_HEADER)
        ? headers[SCHEMA_VERSION_HEADER]
        : undefined;
    return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The identity a message is published under: its origin id when a redrive wrote it, else its record id. It is the
 * `outbox.id` attribute, `detail.outbox.id` on a bus, and the FIFO `MessageDeduplicationId`.
 *
 * @param message - The published form.
 */
export function eventIdOf(message: Pick<OutboundMessage, "id" | "originId">): string {
    return message.originId ?? message.id;
}

/**
 * The published form of a stored record. With a `source`, it carries it (`outbox.source`) unless that would
 * break SNS's attribute limit or its size limit: a record written under the older budget (8 headers next to
 * `outbox.id` and `outbox.type`) is published without its source, never refused.
 *
 * @param record - A decoded outbox record.
 * @param source - The relay's source. @default undefined (none: a DLQ message, a check)
 */
export function outboundMessage(record: OutboxRecord, source?: string): OutboundMessage {
    const originId = originIdHeader(record.envelope.headers);
    const schemaVersion = schemaVersionHeader(record.envelope.headers);
    const message: OutboundMessage = {
        id: record.recordId,
        ...(originId !== undefined ? { originId } : {}),
        ...(schemaVersion !== undefined ? { schemaVersion } : {}),
        type: record.envelope.subject,
        partition: record.partition,
        ...(record.orderingKey !== undefined ? { orderingKey: record.orderingKey } : {}),
        body: record.envelope.payload,
        headers: userHeaders(record.envelope.headers),
        ...traceHeaders(record.envelope.headers),
        createdAt: record.createdAt,
        expiresAt: record.expiresAt,
    };
    if (source === undefined) return message;
    const sourced = { ...message, source };
    // Stamped only where it fits: a record the writer accepted under the older budget is sent as it was accepted.
    const fits = attributeBudgetOverrun(sourced) === undefined && snsMessageSize(sourced) <= SNS_MAX_MESSAGE_BYTES;
    return fits ? sourced : message;
}

function stringAttribute(value: string): MessageAttributeValue {
    return { DataType: "String", StringValue: value };
}

/**
 * The attributes the outbox adds to a message, name and value, in order: `outbox.id` (the event's identity,
 * {@link eventIdOf}), `outbox.type` (when the type is not empty), `outbox.source` (when the relay stamped one),
 * `outbox.schema-version`, `traceparent` and `tracestate` (when present).
 *
 * @param message - The published form (or the parts of it that decide).
 */
export function outboxAttributes(
    message: Pick<
        OutboundMessage,
        "id" | "originId" | "type" | "source" | "schemaVersion" | "traceparent" | "tracestate"
    >,
): [string, string][] {
    const out: [string, string][] = [[MESSAGE_ATTRIBUTE.recordId, eventIdOf(message)]];
    if (message.type !== "") out.push([MESSAGE_ATTRIBUTE.type, message.type]);
    if (message.source !== undefined) out.push([MESSAGE_ATTRIBUTE.source, message.source]);
    if (message.schemaVersion !== undefined) out.push([MESSAGE_ATTRIBUTE.schemaVersion, message.schemaVersion]);
    if (message.traceparent !== undefined) out.push([MESSAGE_ATTRIBUTE.traceparent, message.traceparent]);
    if (message.tracestate !== undefined) out.push([MESSAGE_ATTRIBUTE.tracestate, message.tracestate]);
    return out;
}

/** How a message would break SNS's attribute limit: its count, what the outbox adds, and how many headers fit. */
export interface AttributeBudgetOverrun {
    /** The attributes the message would carry. */
    readonly count: number;
    /** The names of the ones the outbox adds. */
    readonly outbox: readonly string[];
    /** The user headers it has. */
    readonly headers: number;
    /** The user headers that would fit next to the outbox's attributes. */
    readonly headersThatFit: number;
}

/**
 * Whether a message's attributes (the outbox's, {@link outboxAttributes}, and the user headers) exceed
 * {@link SNS_MAX_ATTRIBUTES}: SNS refuses more, and raw delivery to SQS drops such a message. `undefined` when
 * they fit.
 *
 * @param message - The published form.
 */
export function attributeBudgetOverrun(
    message: Pick<
        OutboundMessage,
        "id" | "originId" | "type" | "source" | "schemaVersion" | "traceparent" | "tracestate" | "headers"
    >,
): AttributeBudgetOverrun | undefined {
    const outbox = outboxAttributes(message).map(([name]) => name);
    const headers = Object.keys(message.headers).length;
    const count = outbox.length + headers;
    return count <= SNS_MAX_ATTRIBUTES
        ? undefined
        : { count, outbox, headers, headersThatFit: SNS_MAX_ATTRIBUTES - outbox.length };
}

/**
 * The message attributes of a published message: its identity, type, source, the trace context, then the user
 * headers.
 *
 * @param message - The published form.
 */
export function messageAttributes(message: OutboundMessage): Record<string, MessageAttributeValue> {
    const attributes: Record<string, MessageAttributeValue> = {};
    for (const [name, value] of outboxAttributes(message)) attributes[name] = stringAttribute(value);
    for (const name of Object.keys(message.headers)) attributes[name] = stringAttribute(message.headers[name]!);
    return attributes;
}

/** Attribute names, data types and values, in UTF-8 bytes. */
function attributesSize(attributes: Readonly<Record<string, MessageAttributeValue>>): number {
    let total = 0;
    for (const name of Object.keys(attributes)) {
        const a = attributes[name]!;
        total +=
            utf8Length(name) +
            utf8Length(a.DataType ?? "") +
            utf8Length(a.StringValue ?? "") +
            (a.BinaryValue?.byteLength ?? 0);
    }
    return total;
}

/**
 * The SNS size of a message: body plus attribute names, types and values (how SNS counts its 256 KB).
 *
 * @param message - The published form.
 */
export function snsMessageSize(message: OutboundMessage): number {
    return utf8Length(message.body) + attributesSize(messageAttributes(message));
}

/**
 * The FIFO message group of a message: its ordering key, else its partition.
 *
 * @param message - The published form.
 */
export function fifoMessageGroupId(message: OutboundMessage): string {
    return message.orderingKey ?? message.partition;
}

/**
 * One PublishBatch entry. On a FIFO topic `MessageGroupId` is {@link fifoMessageGroupId} (the ordering key, else
 * the partition), and `MessageDeduplicationId` is the event's identity ({@link eventIdOf}: the record id, or a
 * redriven record's origin id).
 *
 * @param message - The published form.
 * @param entryId - The entry's id inside its batch (unique per call).
 * @param fifo - Whether the topic is FIFO.
 */
export function publishEntry(message: OutboundMessage, entryId: string, fifo: boolean): PublishBatchRequestEntry {
    return {
        Id: entryId,
        Message: message.body,
        MessageAttributes: messageAttributes(message),
        ...(fifo ? { MessageGroupId: fifoMessageGroupId(message), MessageDeduplicationId: eventIdOf(message) } : {}),
    };
}

/** Details of a DLQ message besides the record. */
export interface DeadLetterDetails {
    /** Why. */
    readonly reason: DeadLetterReason;
    /**
     * Delivery attempts so far: on the stream path the permanent publish failures counted on the record
     * (`publish_attempts`); on the claim path (keyed records, the sweeper) the record's claims (`replay_count`),
     * which is what GoBridge reports as attempts when it dead-letters an expired record.
     * @default 0
     */
    readonly attempts?: number;
    /** The last error's code, e.g. `InvalidParameter`. @default undefined */
    readonly errorCode?: string;
    /** The last error's message (from AWS, never a payload). @default undefined */
    readonly errorMessage?: string;
    /** When it was dead-lettered, epoch ms. */
    readonly at: number;
}

/** An SQS message for the DLQ. */
export interface DeadLetterMessage {
    /**
     * The JSON body: the record's id (`recordId`) and, for a record a redrive wrote, the event's identity
     * (`originId`), the reason and the original payload, so it can be redriven as the same event.
     */
    readonly body: string;
    /** String attributes: record id and reason, and the trace context when the record carries one. */
    readonly attributes: Record<string, { DataType: "String"; StringValue: string }>;
}

/** The original body inside the DLQ JSON: as JSON (no escaping overhead) when it reads back identically, else as a string. */
function payloadField(body: string): { payload: unknown } | { body: string } {
    try {
        const payload: unknown = JSON.parse(body);
        // Only JSON that reads back byte-identical: an integer beyond 2^53 (GoBridge writes int64 exactly) or a
        // number written as 1.0 would change, and a redrive would publish the changed payload.
        if (JSON.stringify(payload) === body) return { payload };
    } catch {
        // Not JSON: kept as text.
    }
    return { body };
}

/**
 * One character SQS refuses in a body or a String attribute (it accepts #x9 | #xA | #xD | #x20-#xD7FF |
 * #xE000-#xFFFD | #x10000-#x10FFFF; SNS the same), as RegExp source for the `u` flag. A string, not a RegExp
 * object, so no `lastIndex` state is shared between calls.
 */
const SQS_REFUSED_CHARACTER = "[^\\t\\n\\r\\u0020-\\uD7FF\\uE000-\\uFFFD\\u{10000}-\\u{10FFFF}]";

/**
 * Text with every character SQS refuses (anything outside #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD |
 * #x10000-#x10FFFF: U+FFFE, U+FFFF, C0 controls, lone surrogates) written as a `\uXXXX` escape. In JSON text those
 * characters only occur inside strings, so the escaped JSON reads back to the same value; SQS refuses a whole
 * message for one such character (InvalidMessageContents), which would keep a record out of the DLQ forever.
 *
 * @param text - A DLQ body (JSON) or attribute value.
 */
export function sqsSafeText(text: string): string {
    return text.replace(new RegExp(SQS_REFUSED_CHARACTER, "gu"), (c) =>
        Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
    );
}

/**
 * The DLQ message of a record. The body is JSON: identity, reason, error, and the original payload under
 * `payload` (or the raw text under `body` when it is not JSON, or is JSON that would not read back byte-identical,
 * such as an integer beyond 2^53), so the message can be redriven without changing a digit. Characters SQS refuses
 * are escaped ({@link sqsSafeText}), so no record's content can keep it out of the DLQ.
 *
 * @param message - The published form of the record.
 * @param details - The reason and the error.
 */
export function deadLetterMessage(message: OutboundMessage, details: DeadLetterDetails): DeadLetterMessage {
    const body = {
        reason: details.reason,
        recordId: message.id,
        ...definedFields(message, "originId"),
        partition: message.partition,
        type: message.type,
        ...definedFields(message, "schemaVersion", "orderingKey"),
        headers: message.headers,
        ...definedFields(message, "traceparent", "tracestate"),
        createdAt: new Date(message.createdAt).toISOString(),
        ...(message.expiresAt !== 0 ? { expiresAt: new Date(message.expiresAt).toISOString() } : {}),
        deadLetteredAt: new Date(details.at).toISOString(),
        attempts: details.attempts ?? 0,
        ...definedFields(details, "errorCode", "errorMessage"),
        ...payloadField(message.body),
    };
    return {
        body: sqsSafeText(JSON.stringify(body)),
        attributes: {
            // The body holds the id exactly; the attribute is for filtering, so a character SQS refuses is escaped.
            [MESSAGE_ATTRIBUTE.recordId]: { DataType: "String", StringValue: sqsSafeText(message.id) },
            [MESSAGE_ATTRIBUTE.reason]: { DataType: "String", StringValue: details.reason },
            // Kept on the DLQ message too, so a consumer of the DLQ can link to the writer's span.
            ...(message.traceparent !== undefined
                ? {
                      [MESSAGE_ATTRIBUTE.traceparent]: {
                          DataType: "String" as const,
                          StringValue: sqsSafeText(message.traceparent),
                      },
                  }
                : {}),
            ...(message.tracestate !== undefined
                ? {
                      [MESSAGE_ATTRIBUTE.tracestate]: {
                          DataType: "String" as const,
                          StringValue: sqsSafeText(message.tracestate),
                      },
                  }
                : {}),
        },
    };
}

/**
 * The size of a record's DLQ message at its largest (the longest reason and an error text of 1 KB), so the
 * writer can guarantee that any record it accepts can be dead-lettered.
 *
 * @param message - The published form.
 */
export function worstCaseDeadLetterSize(message: OutboundMessage): number {
    const dl = deadLetterMessage(message, {
        reason: "publish-rejected",
        attempts: 999,
        errorCode: "x".repeat(64),
        errorMessage: "x".repeat(1024),
        at: Math.max(message.createdAt, Date.UTC(9999, 0)),
    });
    // SQS counts attributes as SNS does: name, data type and value.
    return utf8Length(dl.body) + attributesSize(dl.attributes);
}

/**
 * SNS message attribute name rules: 1–256 characters of letters, digits, `_`, `-` and `.`; no leading or
 * trailing `.`, no `..`; and not `__proto__`. Returns why a name is invalid, or `undefined`.
 *
 * @param name - A header name.
 */
export function headerNameProblem(name: string): string | undefined {
    if (name.length === 0 || name.length > 256) return "must be 1 to 256 characters";
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) return "may hold only letters, digits, '_', '-' and '.'";
    if (name.startsWith(".") || name.endsWith(".") || name.includes(".."))
        return "may not start or end with '.' or contain '..'";
    if (isReservedHeader(name)) return `is reserved (prefixes ${RESERVED_HEADER_PREFIXES.join(", ")})`;
    if (isTraceHeader(name.toLowerCase()))
        return `is the W3C trace context, which the outbox carries itself: pass it as the message's ${name.toLowerCase()} field instead of a header`;
    // SNS would take it, but assigning it to a plain object sets the prototype instead: the header would vanish.
    if (name === "__proto__")
        return "is not allowed: a JavaScript object cannot carry it as a header (it would be dropped); use another name";
    return undefined;
}

/** A character SQS and SNS refuse in a message body or attribute value, and where it is. */
export interface UnsendableCharacter {
    /** The code point as `U+XXXX` (at least four hex digits). */
    readonly codePoint: string;
    /** Its index in the string (UTF-16 code units, as JavaScript counts). */
    readonly index: number;
}

/**
 * The first character SQS refuses in a message body or attribute value (InvalidMessageContents), or `undefined`.
 * SQS accepts only `#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF`: so U+FFFE, U+FFFF, the
 * other C0 controls (NUL among them) and lone surrogates are refused. SNS refuses the same in message bodies and
 * String attributes, so one check covers both: a record whose fields pass always reaches the topic and the DLQ.
 *
 * @param text - A string that travels as (part of) a message body or an attribute value.
 */
export function unsendableCharacter(text: string): UnsendableCharacter | undefined {
    const match = new RegExp(SQS_REFUSED_CHARACTER, "u").exec(text);
    if (match === null) return undefined;
    const codePoint = match[0].codePointAt(0)!;
    return { codePoint: `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`, index: match.index };
}
