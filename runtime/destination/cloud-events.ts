/**
 * The opt-in CloudEvents 1.0 format (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/spec.md), in
 * structured mode: the whole event is one JSON object (the JSON event format), the message body on SNS and SQS,
 * the `Detail` on EventBridge.
 *
 * ```json
 * {"specversion":"1.0","id":"01J…","source":"https://orders.example.com","type":"OrderPlaced",
 *  "time":"2026-12-05T23:50:00.123Z","datacontenttype":"application/json",
 *  "outboxsource":"orders","partitionkey":"ORDER#1","traceparent":"00-…-01","tracestate":"congo=t61rcWkgMzE",
 *  "outboxheaders":"{\"tenant\":\"acme\"}","data":{"orderId":"o-1"}}
 * ```
 *
 * How the outbox's fields map:
 * - `id`: the event's identity ({@link eventIdOf}: the record id, or a redriven record's origin id); `source`: the
 *   configured URI-reference; `type`: the message type (`outbox.message` for a record with none, as a bus's
 *   `DetailType`); `time`: the record's creation time (RFC 3339, UTC, milliseconds; left out for a record with
 *   none); `data`: the payload's JSON text as stored, never parsed and written again (a record whose payload is not
 *   JSON, a foreign writer's, carries it as a string with `datacontenttype: "text/plain"`).
 * - Extension attributes, each a name of lowercase letters and digits of at most 20 characters (the spec's naming
 *   rule and its recommended length): `traceparent` and `tracestate` (the Distributed Tracing extension);
 *   `partitionkey` (the Partitioning extension): the ordering key, when the record has one; `outboxsource`: the
 *   outbox's own name (`outbox.source` in the default format), which the inbox keys its markers on with `id`, and
 *   which marks the event as an outbox's; `outboxheaders`: the user headers as the JSON text of one object (header
 *   names take `A-Z`, `.`, `-`, `_` and 256 characters, which attribute names cannot carry), left out when there are
 *   none. The claim check travels as it does by default: `data` is the pointer, and its size headers are among
 *   the headers.
 * - Not carried: the record's `seq` (GoBridge's per-partition number, above 2^53 for keyless records, and no order
 *   across partitions; order is the FIFO group's, whose id is `partitionkey` or the partition).
 *
 * On SNS and SQS the message carries one attribute, `content-type: application/cloudevents+json`, as the HTTP and
 * Kafka bindings' structured mode do; the outbox's own attributes (`outbox.id`, …) are in the body instead, so an
 * SNS subscription filters on the body (`FilterPolicyScope: MessageBody`), not on attributes.
 *
 * Plain data and pure functions only: the publisher's code reaches this module, and Pulumi serializes what it
 * reaches by value.
 *
 * @packageDocumentation
 */
import type { MessageAttributeValue } from "@aws-sdk/client-sns";
import { OutboxError } from "../errors";
import { utf8Length } from "../record/item-size";
import { eventIdOf, type OutboundMessage } from "../record/message";
import { isJsonText } from "./event-detail";
import { UNTYPED_DETAIL_TYPE } from "./kind";

/** The CloudEvents version of every event the outbox sends. */
export const CLOUDEVENTS_SPEC_VERSION = "1.0";

/** The media type of a structured-mode CloudEvent in JSON, the `content-type` attribute's value. */
export const CLOUDEVENTS_CONTENT_TYPE = "application/cloudevents+json";

/** The message attribute that carries {@link CLOUDEVENTS_CONTENT_TYPE} on SNS and SQS. */
export const CONTENT_TYPE_ATTRIBUTE = "content-type";

/** The `datacontenttype` of an event whose payload is JSON (every payload a writer of this package accepts). */
export const JSON_DATA_CONTENT_TYPE = "application/json";

/** The `datacontenttype` of an event whose payload is not JSON (a foreign writer's record): `data` is its text. */
export const TEXT_DATA_CONTENT_TYPE = "text/plain";

/** The extension attributes the outbox sets, by what they carry. */
export const CLOUDEVENT_EXTENSIONS = {
    /** The outbox's name: the inbox's marker key with `id`, and the mark of an outbox's event. */
    outboxSource: "outboxsource",
    /** The user headers, as the JSON text of one object. */
    headers: "outboxheaders",
    /** The ordering key (the Partitioning extension's attribute). */
    partitionKey: "partitionkey",
    /** The W3C `traceparent` (the Distributed Tracing extension's attribute). */
    traceparent: "traceparent",
    /** The W3C `tracestate` (the Distributed Tracing extension's attribute). */
    tracestate: "tracestate",
    /**
     * The event's schema version (`outbox.schema-version` by default). Not `dataschema`, which must be an absolute
     * URI, while a version is a short token such as `2`.
     */
    schemaVersion: "outboxschemaversion",
} as const;

/** The CloudEvents 1.0 context attributes and event members an extension may not be named: the spec's own. */
export const CLOUDEVENT_RESERVED_NAMES = [
    "specversion",
    "id",
    "source",
    "type",
    "datacontenttype",
    "dataschema",
    "subject",
    "time",
    "data",
    "data_base64",
] as const;

/** An extension attribute's name: lowercase ASCII letters and digits (the spec's MUST), at most 20 (its SHOULD). */
export const CLOUDEVENT_EXTENSION_NAME = /^[a-z0-9]{1,20}$/;

/** The longest CloudEvents `source` the outbox takes: it travels in every event. */
export const MAX_CLOUDEVENTS_SOURCE_LENGTH = 1024;

/** The CloudEvents settings of a destination. */
export interface CloudEventsConfig {
    /**
     * Every event's `source`: a non-empty URI-reference (RFC 3986), e.g. `https://orders.example.com`,
     * `urn:example:orders` or `/orders`, at most 1024 characters, with no IP-literal (`[…]`) host.
     */
    readonly source: string;
}

const PCT = "%[\\dA-Fa-f]{2}";
const PCHAR = `(?:[\\w.~!$&'()*+,;=:@-]|${PCT})`;
const AUTHORITY = `//(?:(?:[\\w.~!$&'()*+,;=:-]|${PCT})*@)?(?:[\\w.~!$&'()*+,;=-]|${PCT})*(?::\\d*)?(?:/${PCHAR}*)*`;
/**
 * RFC 3986's URI-reference, but for an IP-literal host (`[…]`): a scheme, or else no `:` before the first `/`, `?`
 * or `#` (a relative reference's first segment); then an authority and a path, or a path; then an optional query
 * and fragment. One expression, built once: the publisher's code reaches it by value.
 */
const URI_REFERENCE = new RegExp(
    `^(?:[A-Za-z][\\w+.-]*:|(?=[^:/?#]*(?:[/?#]|$)))(?:${AUTHORITY}|/?(?:${PCHAR}+(?:/${PCHAR}*)*)?)(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?$`,
);

/**
 * Why a value cannot be a CloudEvents `source`, or `undefined` when it can: a non-empty URI-reference of RFC 3986
 * (an absolute URI such as `https://orders.example.com/api` or `urn:example:orders`, or a relative reference such as
 * `/orders` or `orders`), at most {@link MAX_CLOUDEVENTS_SOURCE_LENGTH} characters; characters outside RFC 3986's
 * (spaces, quotes, non-ASCII) percent-encoded; no IP-literal host.
 *
 * @param value - The candidate.
 */
export function cloudEventsSourceProblem(value: unknown): string | undefined {
    if (typeof value !== "string") return `is ${value === null ? "null" : typeof value}, not a string`;
    if (value.length === 0 || value.length > MAX_CLOUDEVENTS_SOURCE_LENGTH)
        return `is ${value.length} characters long: 1 to ${MAX_CLOUDEVENTS_SOURCE_LENGTH} are taken`;
    if (URI_REFERENCE.test(value)) return undefined;
    const odd = /[^\w.~:/?#@!$&'()*+,;=%-]/.exec(value);
    return odd !== null
        ? `holds ${JSON.stringify(odd[0])} at index ${odd.index}: percent-encode it (an IP-literal host is not taken)`
        : "is not a URI-reference (RFC 3986): a bad '%', a second '#', a port not digits, or a ':' before any '/' with no scheme";
}

/**
 * A message's CloudEvent as JSON text (see the module's documentation). The payload's text goes in as it is.
 *
 * @param message - The published form.
 * @param source - The event's `source` (checked by {@link cloudEventsSourceProblem}).
 * @param outboxSource - The outbox's name, when the message carries none (`outboxsource`). @default undefined
 */
export function cloudEventBody(message: OutboundMessage, source: string, outboxSource?: string): string {
    const json = isJsonText(message.body);
    const x = CLOUDEVENT_EXTENSIONS;
    const attributes: Record<string, string> = {
        specversion: CLOUDEVENTS_SPEC_VERSION,
        id: eventIdOf(message),
        source,
        type: message.type || UNTYPED_DETAIL_TYPE,
    };
    if (message.createdAt > 0) attributes.time = new Date(message.createdAt).toISOString();
    attributes.datacontenttype = json ? JSON_DATA_CONTENT_TYPE : TEXT_DATA_CONTENT_TYPE;
    const headers = Object.keys(message.headers).length > 0 ? JSON.stringify(message.headers) : undefined;
    for (const [name, value] of [
        [x.outboxSource, message.source ?? outboxSource],
        [x.partitionKey, message.orderingKey],
        [x.traceparent, message.traceparent],
        [x.tracestate, message.tracestate],
        [x.schemaVersion, message.schemaVersion],
        [x.headers, headers],
    ] as const)
        if (value !== undefined) attributes[name] = value;
    const head = JSON.stringify(attributes);
    return `${head.slice(0, -1)},"data":${json ? message.body : JSON.stringify(message.body)}}`;
}

/** What a destination sends in CloudEvents mode, made once per destination. */
export interface CloudEventsWriter {
    /** The message's CloudEvent text. */
    body(message: OutboundMessage): string;
    /** The SNS or SQS message attributes: `content-type` alone. */
    attributes(): Record<string, MessageAttributeValue>;
    /** The SNS or SQS size of the message (body plus the attribute's name, data type and value). */
    size(message: OutboundMessage): number;
}

/**
 * A {@link CloudEventsWriter}, its settings checked. A body is built when a batch is measured and again when it is
 * sent (the same text: a pure function of the message); EventBridge keeps each `Detail` it built.
 *
 * @param config - The CloudEvents settings, as given (`cloudEvents`).
 * @param who - The factory's name, for messages (`createPublisher`, `createSweeper`).
 * @param outboxSource - The relay's source, for messages that carry none. @default undefined
 * @returns the writer; its `size` counts the body and the `content-type` attribute's name, data type and value
 *   (12 + 6 + 28 bytes).
 * @throws OutboxError `INVALID_CONFIG` when `config` is not an object whose `source` {@link cloudEventsSourceProblem}
 *   takes, naming the value, what is allowed and the fix.
 */
export function cloudEventsWriter(config: unknown, who: string, outboxSource?: string): CloudEventsWriter {
    const source: unknown = (config as { source?: unknown } | null)?.source;
    const problem = typeof config === "object" ? cloudEventsSourceProblem(source) : "is not in an object";
    if (problem !== undefined)
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: cloudEvents.source (OUTBOX_CLOUDEVENTS_SOURCE) ${JSON.stringify(source) ?? "undefined"} ${problem}; give a URI-reference (RFC 3986), e.g. { source: "https://orders.example.com" }, or omit cloudEvents`,
            { context: { cloudEventsSource: String(source) } },
        );
    const body = (message: OutboundMessage): string => cloudEventBody(message, source as string, outboxSource);
    return {
        body,
        attributes: () => ({ [CONTENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: CLOUDEVENTS_CONTENT_TYPE } }),
        size: (message) => utf8Length(body(message)) + 46,
    };
}
