/**
 * The inbox handler's check that it was handed an SQS event it can answer: every record from an SQS queue, each
 * with the `messageId` that `batchItemFailures` names it by, and each laid out as Lambda delivers it. An event that
 * fails the first two is a fault of the wiring (the function subscribed straight to a topic, mapped to a stream, a
 * rule's target) or of a caller other than Lambda; a record that fails the third is poison.
 *
 * @packageDocumentation
 */
import { foreignEventProblem, kindOf, quoted, type EventSourceKind, type ForeignEvent } from "../event-source";

/** The `eventSource` of every record of Lambda's SQS event. */
export const SQS_EVENT_SOURCE = "aws:sqs";

/** The event the inbox handler takes (checked by `foreignEventProblem`, `runtime/event-source.ts`): an SQS queue's. */
export const SQS_QUEUE: EventSourceKind = {
    eventSource: SQS_EVENT_SOURCE,
    event: "an SQS event",
    record: "an SQS record",
    origin: "an SQS queue",
};

/**
 * Why `event` is not an SQS event a handler can answer, or `undefined` when it is one: a `Records` array of objects
 * whose `eventSource` is `aws:sqs` (see `foreignEventProblem`), each with a `messageId` (a non-empty string).
 * `batchItemFailures` names a record by its `messageId` alone, so a record without one could only be acknowledged
 * or fail with the whole batch.
 *
 * @param event - What the handler was invoked with.
 */
export function sqsEventProblem(event: unknown): ForeignEvent | undefined {
    const foreign = foreignEventProblem(event, SQS_QUEUE);
    if (foreign !== undefined) return foreign;
    const records = (event as { Records: readonly { readonly messageId?: unknown }[] }).Records;
    for (let i = 0; i < records.length; i += 1) {
        const id = records[i]!.messageId;
        if (typeof id !== "string" || id === "")
            return {
                problem: `the event's record ${i} has no messageId (it is ${id === "" ? "empty" : kindOf(id)}); every record Lambda's SQS event source mapping delivers has one, and batchItemFailures can only name a record by it`,
                eventSource: SQS_EVENT_SOURCE,
            };
    }
    return undefined;
}

/** Whether a value is a plain object (not null, not an array). */
function isObject(value: unknown): value is object {
    return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Why a record of an SQS event (one {@link sqsEventProblem} passed) is not laid out as Lambda delivers it, or
 * `undefined`: its `body` is a string; `attributes` and `messageAttributes`, when present, are objects, and each
 * message attribute is an object; `eventSourceARN`, when present, is a string.
 *
 * @param record - One record of the event.
 */
export function sqsRecordProblem(record: object): string | undefined {
    const r = record as Record<string, unknown>;
    if (typeof r.body !== "string") return `its body is ${kindOf(r.body)}, not a string`;
    for (const field of ["attributes", "messageAttributes"] as const)
        if (r[field] !== undefined && !isObject(r[field])) return `its ${field} is ${kindOf(r[field])}, not an object`;
    for (const [name, value] of Object.entries((r.messageAttributes ?? {}) as Record<string, unknown>))
        if (!isObject(value))
            return `its message attribute ${JSON.stringify(quoted(name))} is ${kindOf(value)}, not an object`;
    if (r.eventSourceARN !== undefined && typeof r.eventSourceARN !== "string")
        return `its eventSourceARN is ${kindOf(r.eventSourceARN)}, not a string`;
    return undefined;
}
