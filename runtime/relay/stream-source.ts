/**
 * Where a stream event comes from: the event the publisher takes ({@link DYNAMODB_STREAM}, which
 * `runtime/event-source.ts` checks an event against), and the check that each record comes from the outbox table's
 * stream. Anything else is a fault of the wiring (a mapping
 * on the wrong queue, stream or table), never data to acknowledge: a foreign event fails the invocation, and a
 * record of another table's stream holds the shard.
 *
 * @packageDocumentation
 */
import type { EventSourceKind } from "../event-source";

/** The `eventSource` of every DynamoDB stream record. */
export const DYNAMODB_EVENT_SOURCE = "aws:dynamodb";

/** `arn:<partition>:dynamodb:<region>:<account>:table/<table>/stream/<label>`; group 1 is the table name. */
const STREAM_ARN = /^arn:[a-z-]+:dynamodb:[^:]*:[^:]*:table\/([^/]+)\/stream\/[^/]+$/;

/** The event the publisher takes (checked by `foreignEventProblem`, `runtime/event-source.ts`): a DynamoDB stream's. */
export const DYNAMODB_STREAM: EventSourceKind = {
    eventSource: DYNAMODB_EVENT_SOURCE,
    event: "a DynamoDB stream event",
    record: "a DynamoDB stream record",
    origin: "a DynamoDB stream",
};

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
