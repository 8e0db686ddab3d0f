/**
 * What each delivery path puts in an SQS record, read back into the outbox message: its outbox id, source, type,
 * headers, trace context and body. A format recognizes its own records and leaves the rest to the next one.
 *
 * - {@link MESSAGE_ATTRIBUTES_DELIVERY}: SNS → SQS with raw message delivery, and an SQS queue as the outbox's own
 *   destination. The body is the payload, and the publisher's attributes (`outbox.id`, `outbox.type`,
 *   `outbox.source`, `traceparent`, `tracestate`, the headers) arrive as SQS message attributes.
 * - {@link SNS_ENVELOPE_DELIVERY}: SNS → SQS without raw delivery. The body is SNS's Notification JSON; the payload
 *   is its `Message`, and the attributes are in its `MessageAttributes` (`{ Type, Value }`).
 * - `CLOUDEVENTS_DELIVERY` (`cloud-event-delivery.ts`): an outbox's structured-mode CloudEvent (the opt-in format),
 *   as the body, SNS's `Message` or a bus event's `detail`. Tried before the SNS envelope, which would otherwise
 *   refuse a notification that carries a CloudEvent and no `outbox.id` attribute.
 * - {@link EVENTBRIDGE_ENVELOPE_DELIVERY}: an EventBridge bus → a rule's SQS target (no input transformer). The body
 *   is the event (`source`, `detail-type`, `detail`, …); the outbox's fields are `detail.outbox` and the payload is
 *   `detail.payload` (`runtime/destination/event-detail.ts`).
 *
 * A path that carries the message differently is one more {@link DeliveryFormat}, in the handler's `formats`.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import type { LambdaSqsRecord } from "./sqs-event";
import { MESSAGE_ATTRIBUTE, userHeaders } from "../record/message";
import { deliveredTraceContext } from "../observability/trace-context";
import { jsonTextAt } from "./json-span";
import { CLOUDEVENTS_DELIVERY } from "./cloud-event-delivery";

/** An outbox message as a delivery path carried it. */
export interface DeliveredOutboxMessage {
    /**
     * The event's identity (`outbox.id`): the record id, or the original record's id for a redriven one. With the
     * source, what the inbox deduplicates on.
     */
    readonly outboxId: string;
    /**
     * The outbox the message comes from (`outbox.source`; `detail.outbox.source` on a bus). Absent on a message
     * from a relay that stamps none (an older publisher, a GoBridge relay), or a record whose attributes left no room
     * for it: the inbox then keys its marker on the outbox id alone.
     * @default undefined
     */
    readonly source?: string;
    /** The message type (`outbox.type`); `""` when the record had none. */
    readonly type: string;
    /**
     * The event's schema version (`outbox.schema-version`; `detail.outbox.schemaVersion` on a bus), when the writer
     * gave it one. @default undefined
     */
    readonly schemaVersion?: string;
    /** The user headers the writer was given (String attributes not reserved by the package). */
    readonly headers: Readonly<Record<string, string>>;
    /**
     * The W3C `traceparent` the writer stored (given to it, or its active OpenTelemetry span's): link the
     * consumer's span to it (`traceLink`). Absent when the message carries none, or one that is not valid W3C.
     * @default undefined
     */
    readonly traceparent?: string;
    /** The W3C `tracestate` that came with the `traceparent`; absent when none, or not valid W3C. @default undefined */
    readonly tracestate?: string;
    /**
     * The event's creation time (RFC 3339), when the format carries it: a CloudEvent's `time`.
     * @default undefined (the outbox's own format does not carry it)
     */
    readonly time?: string;
    /** The body as published: the payload's JSON text. */
    readonly body: string;
}

/** The outbox message read from a delivery's String attributes (name → value) and its body. */
function fromAttributes(
    outboxId: string,
    strings: Readonly<Record<string, string>>,
    body: string,
): DeliveredOutboxMessage {
    const source = strings[MESSAGE_ATTRIBUTE.source];
    const schemaVersion = strings[MESSAGE_ATTRIBUTE.schemaVersion];
    return {
        outboxId,
        ...(source !== undefined ? { source } : {}),
        type: strings[MESSAGE_ATTRIBUTE.type] ?? "",
        ...(schemaVersion !== undefined ? { schemaVersion } : {}),
        headers: userHeaders(strings),
        ...deliveredTraceContext(strings[MESSAGE_ATTRIBUTE.traceparent], strings[MESSAGE_ATTRIBUTE.tracestate]),
        body,
    };
}

/** One way a delivery path lays out an outbox message in an SQS record. */
export interface DeliveryFormat {
    /** Its name, in logs and in the consumer's message (`format`). */
    readonly name: string;
    /**
     * Read a record: `undefined` when it is not in this format, the message when it is.
     *
     * @throws OutboxError `INVALID_PAYLOAD` when it is in this format but unusable (no outbox id, a broken
     *   envelope): the record is poison.
     */
    parse(record: LambdaSqsRecord): DeliveredOutboxMessage | undefined;
}

function poison(record: LambdaSqsRecord, format: string, why: string): OutboxError {
    return new OutboxError("INVALID_PAYLOAD", `SQS message ${record.messageId} (${format}): ${why}`, {
        context: { messageId: record.messageId, format },
    });
}

/** SNS → SQS raw delivery (and any path that sends the outbox attributes as SQS message attributes). */
export const MESSAGE_ATTRIBUTES_DELIVERY: DeliveryFormat = {
    name: "message-attributes",
    parse(record) {
        const attributes = record.messageAttributes ?? {};
        const idAttribute = attributes[MESSAGE_ATTRIBUTE.recordId];
        if (idAttribute === undefined) return undefined;
        const outboxId = idAttribute.stringValue;
        if (typeof outboxId !== "string" || outboxId === "")
            throw poison(
                record,
                "message-attributes",
                `its ${MESSAGE_ATTRIBUTE.recordId} attribute has no string value (dataType ${idAttribute.dataType})`,
            );
        const strings: Record<string, string> = {};
        for (const name of Object.keys(attributes)) {
            const value = attributes[name]?.stringValue;
            if (typeof value === "string") strings[name] = value;
        }
        return fromAttributes(outboxId, strings, record.body);
    },
};

/** The part of SNS's Notification JSON this format reads. */
interface SnsNotification {
    readonly Type?: unknown;
    readonly Message?: unknown;
    readonly TopicArn?: unknown;
    readonly MessageAttributes?: unknown;
}

function notificationOf(body: string): SnsNotification | undefined {
    // Cheap test first: most bodies are payloads, not envelopes.
    if (!body.startsWith("{") || !body.includes('"Notification"')) return undefined;
    try {
        const parsed: unknown = JSON.parse(body);
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
        const n = parsed as SnsNotification;
        return n.Type === "Notification" && typeof n.TopicArn === "string" ? n : undefined;
    } catch {
        return undefined;
    }
}

/** SNS → SQS without raw delivery: SNS's Notification JSON in the body. */
export const SNS_ENVELOPE_DELIVERY: DeliveryFormat = {
    name: "sns-envelope",
    parse(record) {
        const notification = notificationOf(record.body);
        if (notification === undefined) return undefined;
        if (typeof notification.Message !== "string")
            throw poison(record, "sns-envelope", "the SNS notification has no Message string");
        const raw = notification.MessageAttributes ?? {};
        if (raw === null || typeof raw !== "object")
            throw poison(record, "sns-envelope", "the SNS notification's MessageAttributes is not an object");
        const strings: Record<string, string> = {};
        for (const [name, attribute] of Object.entries(raw as Record<string, unknown>)) {
            const a = attribute as { Type?: unknown; Value?: unknown } | null;
            // Binary values are base64 text in the envelope; only String and Number ones are headers.
            if (
                a !== null &&
                typeof a === "object" &&
                typeof a.Value === "string" &&
                typeof a.Type === "string" &&
                !a.Type.startsWith("Binary")
            )
                strings[name] = a.Value;
        }
        const outboxId = strings[MESSAGE_ATTRIBUTE.recordId];
        if (outboxId === undefined || outboxId === "") {
            throw poison(
                record,
                "sns-envelope",
                `the SNS notification carries no ${MESSAGE_ATTRIBUTE.recordId} message attribute, so it was not published by the outbox (or its attributes were stripped)`,
            );
        }
        return fromAttributes(outboxId, strings, notification.Message);
    },
};

/** The part of an EventBridge event, as a rule's SQS target delivers it, this format reads. */
interface BusEvent {
    readonly "detail-type"?: unknown;
    readonly source?: unknown;
    readonly detail?: { readonly outbox?: unknown; readonly payload?: unknown } | null;
}

function busEventOf(body: string): BusEvent | undefined {
    // Cheap test first: only an event envelope holds both keys.
    if (!body.startsWith("{") || !body.includes('"detail-type"') || !body.includes('"outbox"')) return undefined;
    try {
        const parsed: unknown = JSON.parse(body);
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
        const event = parsed as BusEvent;
        return typeof event.source === "string" && typeof event["detail-type"] === "string" ? event : undefined;
    } catch {
        return undefined;
    }
}

/** The string values of an object (the headers of `detail.outbox`). */
function stringValues(value: unknown): Record<string, string> {
    const out: Record<string, string> = {};
    if (value === null || typeof value !== "object") return out;
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) if (typeof v === "string") out[name] = v;
    return out;
}

/**
 * An EventBridge bus → an SQS target: the event envelope in the body, the outbox's fields in `detail.outbox`. The
 * body handed on is the text of `detail.payload` as the envelope holds it (`jsonTextAt`), not parsed and written
 * again, so a number beyond 2^53 arrives as EventBridge delivered it (EventBridge parses `Detail` and renders it
 * itself: whether it keeps such a number is EventBridge's); a payload the publisher sent as text (`payloadFormat:
 * "text"`) is that text.
 */
export const EVENTBRIDGE_ENVELOPE_DELIVERY: DeliveryFormat = {
    name: "eventbridge-envelope",
    parse(record) {
        const event = busEventOf(record.body);
        if (event === undefined) return undefined;
        const outbox = event.detail?.outbox;
        if (outbox === null || typeof outbox !== "object") return undefined;
        const fields = outbox as Record<string, unknown>;
        if (typeof fields.id !== "string" || fields.id === "")
            throw poison(record, "eventbridge-envelope", "the event's detail.outbox has no id string");
        if (fields.source !== undefined && typeof fields.source !== "string")
            throw poison(record, "eventbridge-envelope", "the event's detail.outbox.source is not a string");
        const payload = event.detail?.payload;
        return {
            outboxId: fields.id,
            ...(typeof fields.source === "string" ? { source: fields.source } : {}),
            type: typeof fields.type === "string" ? fields.type : "",
            ...(typeof fields.schemaVersion === "string" ? { schemaVersion: fields.schemaVersion } : {}),
            headers: userHeaders(stringValues(fields.headers)),
            ...deliveredTraceContext(
                typeof fields.traceparent === "string" ? fields.traceparent : undefined,
                typeof fields.tracestate === "string" ? fields.tracestate : undefined,
            ),
            body:
                fields.payloadFormat === "text" && typeof payload === "string"
                    ? payload
                    : (jsonTextAt(record.body, ["detail", "payload"]) ?? JSON.stringify(payload)),
        };
    },
};

/** The formats the inbox handler tries, in order. */
export const DELIVERY_FORMATS: readonly DeliveryFormat[] = [
    MESSAGE_ATTRIBUTES_DELIVERY,
    CLOUDEVENTS_DELIVERY,
    SNS_ENVELOPE_DELIVERY,
    EVENTBRIDGE_ENVELOPE_DELIVERY,
];

/**
 * Read a record with the first format that recognizes it.
 *
 * @param record - One SQS record.
 * @param formats - The formats to try, in order.
 * @returns the message and the name of the format that read it.
 * @throws OutboxError `INVALID_PAYLOAD` when a format finds it unusable, or none recognizes it.
 */
export function parseDelivery(
    record: LambdaSqsRecord,
    formats: readonly DeliveryFormat[] = DELIVERY_FORMATS,
): { readonly message: DeliveredOutboxMessage; readonly format: string } {
    for (const format of formats) {
        const message = format.parse(record);
        if (message !== undefined) return { message, format: format.name };
    }
    throw new OutboxError(
        "INVALID_PAYLOAD",
        `SQS message ${record.messageId} has no ${MESSAGE_ATTRIBUTE.recordId}: neither a message attribute (SNS raw delivery, an SQS destination), an SNS notification carrying it, an EventBridge event with detail.outbox.id, nor an outbox's CloudEvent (tried ${formats.map((f) => f.name).join(", ")}); it was not published by the outbox, or its subscription drops message attributes`,
        { context: { messageId: record.messageId } },
    );
}
