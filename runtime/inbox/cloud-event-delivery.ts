/**
 * The CloudEvents delivery format: an outbox's structured-mode CloudEvent (`runtime/destination/cloud-events.ts`)
 * read back into the outbox message, whichever way it reached the queue:
 * - as the body: an SQS queue as the outbox's destination, SNS → SQS with raw delivery, or an EventBridge rule
 *   whose SQS target takes `$.detail` (`InputPath`);
 * - as SNS's Notification `Message` (SNS → SQS without raw delivery);
 * - as an EventBridge event's `detail` (a rule's SQS target, no input transformer).
 *
 * A body is taken for a CloudEvent only when it is a JSON object with a string `specversion`, and the record is not
 * one of the default format (an `outbox.id` message attribute, or an SNS notification or bus event carrying the
 * outbox's fields the default way), so a payload that happens to hold a `specversion` key is never misread. A
 * CloudEvent that is not an outbox's (no `outboxsource` extension: a foreign producer's), of another specversion,
 * or without an id or data, is poison, named so: never acknowledged unseen.
 *
 * @packageDocumentation
 */
import { CLOUDEVENT_EXTENSIONS, CLOUDEVENTS_SPEC_VERSION, TEXT_DATA_CONTENT_TYPE } from "../destination/cloud-events";
import { OutboxError } from "../errors";
import { deliveredTraceContext } from "../observability/trace-context";
import { MESSAGE_ATTRIBUTE, userHeaders } from "../record/message";
import { jsonTextAt } from "./json-span";
import type { LambdaSqsRecord } from "./sqs-event";

/** The format's name, in logs and in the consumer's message (`format`). */
export const CLOUDEVENTS_FORMAT = "cloudevents";

/**
 * The outbox message a CloudEvent carries: a `DeliveredOutboxMessage` of `delivery-formats.ts` (declared here, not
 * imported, so the two modules do not import each other).
 */
export interface CloudEventMessage {
    /** The event's `id`: the outbox id. */
    readonly outboxId: string;
    /** The `outboxsource` extension: the outbox the event comes from. */
    readonly source: string;
    /** The event's `type`. */
    readonly type: string;
    /** The user headers (the `outboxheaders` extension). */
    readonly headers: Readonly<Record<string, string>>;
    /** The `traceparent` extension, when valid W3C. @default undefined */
    readonly traceparent?: string;
    /** The `tracestate` extension, when valid W3C and with a `traceparent`. @default undefined */
    readonly tracestate?: string;
    /** The event's `time` (RFC 3339), the record's creation time. @default undefined */
    readonly time?: string;
    /** The `outboxschemaversion` extension: the event's schema version, when it has one. @default undefined */
    readonly schemaVersion?: string;
    /** The payload's JSON text (`data` as the event holds it), or its text with `datacontenttype: text/plain`. */
    readonly body: string;
}

/** A JSON object's parse, or `undefined` for anything else. */
function objectOf(text: string): Record<string, unknown> | undefined {
    if (!text.startsWith("{")) return undefined;
    try {
        const parsed: unknown = JSON.parse(text);
        return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
            ? (parsed as Record<string, unknown>)
            : undefined;
    } catch {
        return undefined;
    }
}

function isObject(value: unknown): value is Record<string, unknown> {
    return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isCloudEvent(value: unknown): value is Record<string, unknown> {
    return isObject(value) && typeof value.specversion === "string";
}

/** Where the CloudEvent sits in the record: its object, its JSON text, and the wrapping it came in. */
interface Located {
    readonly event: Record<string, unknown>;
    readonly text: string;
    readonly path: readonly string[];
    readonly wrapping: string;
}

/** The CloudEvent a record carries, or `undefined` when it carries none (or carries the default format). */
function locate(record: LambdaSqsRecord): Located | undefined {
    if (record.messageAttributes?.[MESSAGE_ATTRIBUTE.recordId] !== undefined) return undefined;
    // Cheap test first: most bodies of the default format hold no specversion at all (inside SNS's Message its
    // quotes are escaped, so the bare word is looked for).
    if (!record.body.includes("specversion")) return undefined;
    const body = objectOf(record.body);
    if (body === undefined) return undefined;
    if (body.Type === "Notification" && typeof body.TopicArn === "string" && typeof body.Message === "string") {
        const attributes = body.MessageAttributes;
        if (isObject(attributes) && attributes[MESSAGE_ATTRIBUTE.recordId] !== undefined) return undefined;
        const event = objectOf(body.Message);
        return isCloudEvent(event)
            ? { event, text: body.Message, path: [], wrapping: "the SNS notification's Message" }
            : undefined;
    }
    if (typeof body["detail-type"] === "string" && typeof body.source === "string" && isObject(body.detail)) {
        if (body.detail.outbox !== undefined) return undefined;
        return isCloudEvent(body.detail)
            ? { event: body.detail, text: record.body, path: ["detail"], wrapping: "the EventBridge event's detail" }
            : undefined;
    }
    return isCloudEvent(body) ? { event: body, text: record.body, path: [], wrapping: "the body" } : undefined;
}

function poison(record: LambdaSqsRecord, why: string): OutboxError {
    return new OutboxError("INVALID_PAYLOAD", `SQS message ${record.messageId} (${CLOUDEVENTS_FORMAT}): ${why}`, {
        context: { messageId: record.messageId, format: CLOUDEVENTS_FORMAT },
    });
}

/** The user headers of `outboxheaders`: the JSON text of an object of strings. */
function headersOf(record: LambdaSqsRecord, value: unknown): Record<string, string> {
    if (value === undefined) return {};
    const parsed = typeof value === "string" ? objectOf(value) : undefined;
    if (parsed === undefined)
        throw poison(
            record,
            `its ${CLOUDEVENT_EXTENSIONS.headers} extension is not the JSON text of an object, as an outbox writes its headers`,
        );
    const strings: Record<string, string> = {};
    for (const [name, v] of Object.entries(parsed)) if (typeof v === "string") strings[name] = v;
    return userHeaders(strings);
}

function optionalString(value: unknown): string | undefined {
    return typeof value === "string" ? value : undefined;
}

/** The schema version an event's extension carries: a non-empty string, else nothing. */
function schemaVersionOf(value: unknown): { readonly schemaVersion?: string } {
    return typeof value === "string" && value !== "" ? { schemaVersion: value } : {};
}

/** An outbox's CloudEvent, structured mode, as the body, SNS's Message, or a bus event's detail. */
export const CLOUDEVENTS_DELIVERY: {
    readonly name: string;
    parse(record: LambdaSqsRecord): CloudEventMessage | undefined;
} = {
    name: CLOUDEVENTS_FORMAT,
    parse(record) {
        const located = locate(record);
        if (located === undefined) return undefined;
        const { event, wrapping } = located;
        if (event.specversion !== CLOUDEVENTS_SPEC_VERSION)
            throw poison(
                record,
                `${wrapping} is a CloudEvent of specversion ${JSON.stringify(event.specversion)}; the inbox reads CloudEvents ${CLOUDEVENTS_SPEC_VERSION}`,
            );
        const id = event.id;
        const shownId = typeof id === "string" ? JSON.stringify(id) : "(none)";
        if (typeof id !== "string" || id === "") throw poison(record, `${wrapping} is a CloudEvent with no id string`);
        const outboxSource = event[CLOUDEVENT_EXTENSIONS.outboxSource];
        if (typeof outboxSource !== "string" || outboxSource === "")
            throw poison(
                record,
                `${wrapping} is a CloudEvent (id ${shownId}, source ${JSON.stringify(event.source)}) without the ${CLOUDEVENT_EXTENSIONS.outboxSource} extension, so no outbox published it: the inbox applies only an outbox's events, keyed on their outbox and id; route this producer's events to another queue, or consume them with your own DeliveryFormat`,
            );
        if (typeof event.type !== "string" || event.type === "")
            throw poison(record, `${wrapping} is a CloudEvent (id ${shownId}) with no type string`);
        if (!("data" in event))
            throw poison(
                record,
                `${wrapping} is a CloudEvent (id ${shownId}) with no data member${"data_base64" in event ? " (data_base64, binary data, is not an outbox payload)" : ""}`,
            );
        const data = event.data;
        const text = event.datacontenttype === TEXT_DATA_CONTENT_TYPE && typeof data === "string";
        const message: CloudEventMessage = {
            outboxId: id,
            source: outboxSource,
            type: event.type,
            headers: headersOf(record, event[CLOUDEVENT_EXTENSIONS.headers]),
            ...deliveredTraceContext(
                optionalString(event[CLOUDEVENT_EXTENSIONS.traceparent]),
                optionalString(event[CLOUDEVENT_EXTENSIONS.tracestate]),
            ),
            ...(typeof event.time === "string" ? { time: event.time } : {}),
            ...schemaVersionOf(event[CLOUDEVENT_EXTENSIONS.schemaVersion]),
            body: text ? data : (jsonTextAt(located.text, [...located.path, "data"]) ?? JSON.stringify(data)),
        };
        return message;
    },
};
