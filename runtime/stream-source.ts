/**
 * Where a stream event comes from: the publisher's checks that what Lambda hands it is a DynamoDB stream event,
 * and that each record comes from the outbox table's stream. Anything else is a fault of the wiring (a mapping
 * on the wrong queue, stream or table), never data to acknowledge: a foreign event fails the invocation, and a
 * record of another table's stream holds the shard.
 *
 * @packageDocumentation
 */

/** The `eventSource` of every DynamoDB stream record. */
export const DYNAMODB_EVENT_SOURCE = "aws:dynamodb";

/** `arn:<partition>:dynamodb:<region>:<account>:table/<table>/stream/<label>`; group 1 is the table name. */
const STREAM_ARN = /^arn:[a-z-]+:dynamodb:[^:]*:[^:]*:table\/([^/]+)\/stream\/[^/]+$/;

/** At most this many characters of a foreign value go into a message. */
const QUOTED_MAX = 120;

function quoted(value: unknown): string {
    const text = typeof value === "string" ? value : String(value);
    return text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX - 1)}…` : text;
}

function kindOf(value: unknown): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Why `event` is not a DynamoDB stream event, or `undefined` when it is one: it has a `Records` array and each
 * record is an object whose `eventSource` is `aws:dynamodb`. An SQS, Kinesis, SNS or S3 event, an EventBridge
 * (scheduled) event and anything without `Records` are described by what arrived, never by their contents.
 *
 * @param event - What the handler was invoked with.
 */
export function foreignEventProblem(event: unknown): string | undefined {
    const records = (event as { Records?: unknown } | null | undefined)?.Records;
    if (!Array.isArray(records)) {
        if (event === null || event === undefined || typeof event !== "object")
            return `the event has no Records array (it is ${event === undefined ? "undefined" : kindOf(event)})`;
        const keys = Object.keys(event);
        const shown = keys.slice(0, 6).map(quoted).join(", ") + (keys.length > 6 ? ", …" : "");
        return `the event has no Records array (its keys: ${keys.length === 0 ? "none" : shown}); it is not a DynamoDB stream event`;
    }
    for (let i = 0; i < records.length; i += 1) {
        const record = records[i] as Record<string, unknown> | null;
        if (record === null || typeof record !== "object" || Array.isArray(record))
            return `the event's record ${i} is ${kindOf(record)}, not a DynamoDB stream record`;
        // SNS spells it EventSource.
        const source = record.eventSource ?? record.EventSource;
        if (source !== DYNAMODB_EVENT_SOURCE) {
            const arn = record.eventSourceARN ?? record.EventSubscriptionArn;
            const from = source === undefined ? "a source that names no eventSource" : JSON.stringify(quoted(source));
            return `the event's records come from ${from}${typeof arn === "string" ? ` (${quoted(arn)})` : ""}, not from a DynamoDB stream ("${DYNAMODB_EVENT_SOURCE}")`;
        }
    }
    return undefined;
}

/**
 * The table whose stream an `eventSourceARN` names, or `undefined` when it is not a DynamoDB stream ARN.
 *
 * @param eventSourceArn - A stream record's `eventSourceARN`.
 */
export function streamTableName(eventSourceArn: unknown): string | undefined {
    if (typeof eventSourceArn !== "string") return undefined;
    return STREAM_ARN.exec(eventSourceArn)?.[1];
}

/**
 * The stream ARNs a record of `tableName`'s stream may carry, for messages: any partition, region, account and
 * stream label.
 *
 * @param tableName - The outbox table.
 */
export function expectedStreamArn(tableName: string): string {
    return `arn:aws:dynamodb:*:*:table/${tableName}/stream/*`;
}
