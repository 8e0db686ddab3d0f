/**
 * What a consumer receives from an EventBridge bus: the entry the publisher puts for one outbox record. The
 * `detail` carries the payload and, beside it, the outbox's own fields where an event pattern can match them
 * (`detail.outbox.id`, `detail.outbox.headers.<name>`); the `detail-type` is the message type.
 *
 * ```json
 * {
 *   "source": "dynamodb-outbox",
 *   "detail-type": "OrderPlaced",
 *   "detail": {
 *     "outbox": { "id": "01J…", "type": "OrderPlaced", "source": "orders-outbox", "headers": { "tenant": "acme" }, "traceparent": "00-…-01" },
 *     "payload": { "orderId": "o-1", "total": 42 }
 *   }
 * }
 * ```
 *
 * The payload's JSON text is placed in `detail` as it is stored, never parsed and written again by the publisher.
 * A record whose body is not JSON (a foreign writer's) carries it as a JSON string, marked `"payloadFormat":
 * "text"`.
 *
 * @packageDocumentation
 */
import { utf8Length } from "../record/item-size";
import { definedFields } from "../record/defined-fields";
import { eventIdOf, type OutboundMessage } from "../record/message";
import { UNTYPED_DETAIL_TYPE } from "./kind";

/** The outbox's fields in an event's `detail.outbox`. */
export interface OutboxEventMetadata {
    /** The event's identity, the id consumers deduplicate on: the record id, or a redriven record's origin id. */
    readonly id: string;
    /** The message type; `""` when none (the event's `detail-type` is then `outbox.message`). */
    readonly type: string;
    /**
     * The outbox the event comes from (the relay's `source`): the inbox keys its markers on it with the id. Absent
     * when the relay stamped none. @default undefined
     */
    readonly source?: string;
    /** The event's schema version, when the writer gave it one. @default undefined */
    readonly schemaVersion?: string;
    /** The user headers. */
    readonly headers: Readonly<Record<string, string>>;
    /** The W3C `traceparent` the record carries. @default undefined */
    readonly traceparent?: string;
    /** The W3C `tracestate` the record carries (only with a `traceparent`). @default undefined */
    readonly tracestate?: string;
    /** `"text"` when the record's body is not JSON and `payload` holds it as a string. @default undefined */
    readonly payloadFormat?: "text";
}

/** An event's `detail`, as the publisher puts it: the outbox's fields and the payload. */
export interface OutboxEventDetail {
    /** The outbox's fields. */
    readonly outbox: OutboxEventMetadata;
    /** The payload: the record's JSON, as a JSON value (or its text, with `outbox.payloadFormat: "text"`). */
    readonly payload: unknown;
}

/**
 * Whether a message body is JSON text (every payload a writer of this package accepts is).
 *
 * @param text - The body.
 */
export function isJsonText(text: string): boolean {
    try {
        JSON.parse(text);
        return true;
    } catch {
        return false;
    }
}

/**
 * The `DetailType` of a message's event: its type, or `outbox.message` when it has none (EventBridge requires one).
 *
 * @param message - The published form.
 */
export function eventDetailType(message: Pick<OutboundMessage, "type">): string {
    return message.type === "" ? UNTYPED_DETAIL_TYPE : message.type;
}

/**
 * The `Detail` text of a message's event (see {@link OutboxEventDetail}). The body goes in as its own text, so a
 * number beyond 2^53 or a `1.0` is put exactly as the writer stored it.
 *
 * @param message - The published form.
 */
export function eventDetail(message: OutboundMessage): string {
    const json = isJsonText(message.body);
    const metadata: OutboxEventMetadata = {
        id: eventIdOf(message),
        type: message.type,
        ...definedFields(message, "source", "schemaVersion"),
        headers: message.headers,
        ...definedFields(message, "traceparent", "tracestate"),
        ...(json ? {} : { payloadFormat: "text" as const }),
    };
    return `{"outbox":${JSON.stringify(metadata)},"payload":${json ? message.body : JSON.stringify(message.body)}}`;
}

/**
 * The size EventBridge counts for an entry toward its limit: the UTF-8 bytes of `Source`, `DetailType` and `Detail`
 * (no `Time` or `Resources` are sent). From "Calculating PutEvents event entry size"
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/calculate-putevents-entry-size.html).
 *
 * @param source - The entry's `Source`.
 * @param detailType - Its `DetailType`.
 * @param detail - Its `Detail`.
 */
export function eventEntrySize(source: string, detailType: string, detail: string): number {
    return utf8Length(source) + utf8Length(detailType) + utf8Length(detail);
}
