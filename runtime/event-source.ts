/**
 * The handlers' check that what Lambda hands them is the event their wiring promises: the publisher takes a
 * DynamoDB stream's event, the inbox an SQS queue's. Anything else is a fault of the wiring (a mapping on the wrong
 * source, a function subscribed straight to a topic), never data to acknowledge: the handler fails the invocation
 * with what arrived, described by its shape and source, never by its contents.
 *
 * @packageDocumentation
 */

/** The event a handler takes, and how its messages name it. */
export interface EventSourceKind {
    /** The `eventSource` every record of such an event carries (`aws:dynamodb`, `aws:sqs`). */
    readonly eventSource: string;
    /** The event, in a message: `"a DynamoDB stream event"`. */
    readonly event: string;
    /** One record, in a message: `"a DynamoDB stream record"`. */
    readonly record: string;
    /** Where such records come from, in a message: `"a DynamoDB stream"`. */
    readonly origin: string;
}

/** What arrived instead of the event a handler takes. */
export interface ForeignEvent {
    /** What is wrong, naming what arrived: its source and ARN, or its keys. */
    readonly problem: string;
    /**
     * The `eventSource` the records named (SNS spells it `EventSource`), when they named one.
     * @default undefined (no Records, or a record without one)
     */
    readonly eventSource?: string;
}

/** At most this many characters of a foreign value go into a message. */
const QUOTED_MAX = 120;

/**
 * A foreign value for a message, cut to {@link QUOTED_MAX} characters.
 *
 * @param value - What arrived.
 */
export function quoted(value: unknown): string {
    const text = typeof value === "string" ? value : String(value);
    return text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX - 1)}…` : text;
}

/**
 * What kind of value arrived, for a message: `null`, `undefined`, `an array`, `an object`, `a string`…
 *
 * @param value - What arrived.
 */
export function kindOf(value: unknown): string {
    if (value === null) return "null";
    if (value === undefined) return "undefined";
    if (Array.isArray(value)) return "an array";
    return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** An event without `Records`: its keys, and what it is when it is an EventBridge event delivered directly. */
function withoutRecords(event: unknown, kind: EventSourceKind): string {
    if (event === null || event === undefined || typeof event !== "object")
        return `the event has no Records array (it is ${kindOf(event)})`;
    const keys = Object.keys(event);
    const shown = keys.slice(0, 6).map(quoted).join(", ") + (keys.length > 6 ? ", …" : "");
    const fields = event as { source?: unknown; "detail-type"?: unknown; Records?: unknown };
    const bus =
        typeof fields.source === "string" && typeof fields["detail-type"] === "string"
            ? `, but an EventBridge event delivered directly (source ${JSON.stringify(quoted(fields.source))}, detail-type ${JSON.stringify(quoted(fields["detail-type"]))})`
            : "";
    const records = "Records" in event ? ` (its Records is ${kindOf(fields.Records)})` : "";
    return `the event has no Records array (its keys: ${keys.length === 0 ? "none" : shown})${records}; it is not ${kind.event}${bus}`;
}

/**
 * Why `event` is not `kind`'s event, or `undefined` when it is one: it has a `Records` array and each record is an
 * object whose `eventSource` is `kind.eventSource`. An SQS, SNS, Kinesis, S3 or DynamoDB stream event of the wrong
 * kind, an EventBridge event and anything without `Records` are described by what arrived, never by their contents.
 *
 * @param event - What the handler was invoked with.
 * @param kind - The event the handler takes.
 */
export function foreignEventProblem(event: unknown, kind: EventSourceKind): ForeignEvent | undefined {
    const records = (event as { Records?: unknown } | null | undefined)?.Records;
    if (!Array.isArray(records)) return { problem: withoutRecords(event, kind) };
    for (let i = 0; i < records.length; i += 1) {
        const record = records[i] as Record<string, unknown> | null;
        if (record === null || typeof record !== "object" || Array.isArray(record))
            return { problem: `the event's record ${i} is ${kindOf(record)}, not ${kind.record}` };
        // SNS spells it EventSource.
        const source = record.eventSource ?? record.EventSource;
        if (source !== kind.eventSource) {
            const arn = record.eventSourceARN ?? record.EventSubscriptionArn;
            const from = source === undefined ? "a source that names no eventSource" : JSON.stringify(quoted(source));
            return {
                problem: `the event's records come from ${from}${typeof arn === "string" ? ` (${quoted(arn)})` : ""}, not from ${kind.origin} ("${kind.eventSource}")`,
                ...(typeof source === "string" ? { eventSource: source } : {}),
            };
        }
    }
    return undefined;
}
