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
import { utf8Length } from "../record/item-size";
import { eventIdOf, type OutboundMessage } from "../record/message";
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

const PCT = "%[0-9A-Fa-f]{2}";
const UNRESERVED = "A-Za-z0-9\\-._~";
const SUB_DELIMS = "!$&'()*+,;=";
const PCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@]|${PCT})`;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const QUERY_OR_FRAGMENT = new RegExp(`^(?:${PCHAR}|[/?])*$`);
const SEGMENTS = new RegExp(`^(?:${PCHAR}|/)*$`);
const USERINFO = new RegExp(`^(?:[${UNRESERVED}${SUB_DELIMS}:]|${PCT})*$`);
const REG_NAME = new RegExp(`^(?:[${UNRESERVED}${SUB_DELIMS}]|${PCT})*$`);

/** Why an authority (`userinfo@host:port`) is not RFC 3986's, or `undefined`. */
function authorityProblem(authority: string): string | undefined {
    const at = authority.lastIndexOf("@");
    const userinfo = at < 0 ? "" : authority.slice(0, at);
    const hostPort = at < 0 ? authority : authority.slice(at + 1);
    if (!USERINFO.test(userinfo)) return "has a userinfo (before '@') with a character RFC 3986 does not allow there";
    if (hostPort.startsWith("["))
        return "has an IP-literal host ('[…]'), which this outbox does not take; name the host instead";
    const colon = hostPort.lastIndexOf(":");
    const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
    const port = colon < 0 ? "" : hostPort.slice(colon + 1);
    if (!/^[0-9]*$/.test(port)) return `has the port ${JSON.stringify(port)}, which is not digits`;
    if (!REG_NAME.test(host)) return `has the host ${JSON.stringify(host)}, with a character RFC 3986 does not allow`;
    return undefined;
}

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
    if (value.length === 0) return "is empty; CloudEvents requires a non-empty source";
    if (value.length > MAX_CLOUDEVENTS_SOURCE_LENGTH)
        return `is ${value.length} characters long; at most ${MAX_CLOUDEVENTS_SOURCE_LENGTH} are taken (it travels in every event)`;
    const hash = value.indexOf("#");
    const beforeFragment = hash < 0 ? value : value.slice(0, hash);
    if (hash >= 0 && !QUERY_OR_FRAGMENT.test(value.slice(hash + 1)))
        return "has a fragment (after '#') with a character RFC 3986 does not allow there (percent-encode it)";
    const question = beforeFragment.indexOf("?");
    const reference = question < 0 ? beforeFragment : beforeFragment.slice(0, question);
    if (question >= 0 && !QUERY_OR_FRAGMENT.test(beforeFragment.slice(question + 1)))
        return "has a query (after '?') with a character RFC 3986 does not allow there (percent-encode it)";
    const scheme = SCHEME.exec(reference);
    const rest = scheme === null ? reference : reference.slice(scheme[0].length);
    let path = rest;
    if (rest.startsWith("//")) {
        const end = rest.indexOf("/", 2);
        const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
        const problem = authorityProblem(authority);
        if (problem !== undefined) return problem;
        path = end < 0 ? "" : rest.slice(end);
    } else if (scheme === null && (path.split("/")[0] ?? "").includes(":")) {
        return "has a ':' in its first segment without a scheme (a scheme is a letter, then letters, digits, '+', '-' or '.'); write it as an absolute URI such as urn:example:orders, or start it with './'";
    }
    if (!SEGMENTS.test(path))
        return "has a path with a character RFC 3986 does not allow (a space, a quote, '<', '>', '\\', '{', '}', '|', '^', '`' or non-ASCII: percent-encode it)";
    return undefined;
}

function isJsonText(text: string): boolean {
    try {
        JSON.parse(text);
        return true;
    } catch {
        return false;
    }
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
    const outbox = message.source ?? outboxSource;
    const attributes: Record<string, string> = {
        specversion: CLOUDEVENTS_SPEC_VERSION,
        id: eventIdOf(message),
        source,
        type: message.type === "" ? UNTYPED_DETAIL_TYPE : message.type,
        ...(message.createdAt > 0 ? { time: new Date(message.createdAt).toISOString() } : {}),
        datacontenttype: json ? JSON_DATA_CONTENT_TYPE : TEXT_DATA_CONTENT_TYPE,
        ...(outbox !== undefined ? { [CLOUDEVENT_EXTENSIONS.outboxSource]: outbox } : {}),
        ...(message.orderingKey !== undefined ? { [CLOUDEVENT_EXTENSIONS.partitionKey]: message.orderingKey } : {}),
        ...(message.traceparent !== undefined ? { [CLOUDEVENT_EXTENSIONS.traceparent]: message.traceparent } : {}),
        ...(message.tracestate !== undefined ? { [CLOUDEVENT_EXTENSIONS.tracestate]: message.tracestate } : {}),
        ...(Object.keys(message.headers).length > 0
            ? { [CLOUDEVENT_EXTENSIONS.headers]: JSON.stringify(message.headers) }
            : {}),
    };
    const head = JSON.stringify(attributes);
    return `${head.slice(0, -1)},"data":${json ? message.body : JSON.stringify(message.body)}}`;
}

/** What a destination sends in CloudEvents mode, made once per destination (the bodies kept per message). */
export interface CloudEventsWriter {
    /** The message's CloudEvent text. */
    body(message: OutboundMessage): string;
    /** The SNS or SQS message attributes: `content-type` alone. */
    attributes(): Record<string, MessageAttributeValue>;
    /** The SNS or SQS size of the message (body plus the attribute's name, data type and value). */
    size(message: OutboundMessage): number;
}

/**
 * A {@link CloudEventsWriter}: each message's body is built once, when the batch is measured, and sent as built.
 *
 * @param config - The CloudEvents settings (checked).
 * @param outboxSource - The relay's source, for messages that carry none. @default undefined
 */
export function cloudEventsWriter(config: CloudEventsConfig, outboxSource?: string): CloudEventsWriter {
    // Made per destination, at cold start: nothing module-level for Pulumi to serialize.
    const bodies = new WeakMap<OutboundMessage, string>();
    const body = (message: OutboundMessage): string => {
        let text = bodies.get(message);
        if (text === undefined) {
            text = cloudEventBody(message, config.source, outboxSource);
            bodies.set(message, text);
        }
        return text;
    };
    const attributes = (): Record<string, MessageAttributeValue> => ({
        [CONTENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: CLOUDEVENTS_CONTENT_TYPE },
    });
    const attributeBytes =
        utf8Length(CONTENT_TYPE_ATTRIBUTE) + utf8Length("String") + utf8Length(CLOUDEVENTS_CONTENT_TYPE);
    return { body, attributes, size: (message) => utf8Length(body(message)) + attributeBytes };
}
