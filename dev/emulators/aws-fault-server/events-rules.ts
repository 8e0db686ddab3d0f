/**
 * What EventBridge enforces on PutEvents, and the server with it: 1 to 10 entries and their size together (the
 * whole call fails `ValidationException`), and each entry's `Source`, `DetailType` and `Detail` (that entry
 * fails, the others go on).
 *
 * The answers were checked against what AWS is recorded answering, where a record was found: LocalStack's tests
 * validated against AWS (`tests/aws/services/events/test_events.snapshot.json` in localstack/localstack:
 * `test_put_events_without_source`, `test_put_event_without_detail(_type)`, `test_put_event_malformed_detail`,
 * `test_put_event_with_too_big_detail`, `test_put_events_exceed_limit_ten_entries`), and a `put-events` with an
 * `aws.` source answered `NotAuthorizedForSourceException` (aws-samples/serverless-patterns pull request 3089).
 * The messages of the length checks are this server's own.
 *
 * @packageDocumentation
 */
import { ApiError } from "./api-error";
import type { EventEntry } from "./events-json";

/** PutEvents' limit on its entries' size together, since January 2026 (256 KB before). */
const EVENTS_MAX_REQUEST_BYTES = 1_048_576;
const EVENTS_MAX_ENTRIES = 10;
const SOURCE_MAX_CHARACTERS = 256;
const DETAIL_TYPE_MAX_CHARACTERS = 128;

/** A failed PutEvents entry's answer. */
export interface EntryRefusal {
    readonly ErrorCode: string;
    readonly ErrorMessage: string;
}

/**
 * An entry's size as EventBridge counts it ("Calculating PutEvents event entry size"): 14 bytes for a `Time`,
 * the UTF-8 bytes of `Source`, `DetailType`, `Detail` and each of `Resources`.
 */
export function eventEntrySize(entry: EventEntry): number {
    const bytes = (text: string | undefined): number => (text === undefined ? 0 : Buffer.byteLength(text, "utf8"));
    return (
        (entry.timeMs === undefined ? 0 : 14) +
        bytes(entry.source) +
        bytes(entry.detailType) +
        bytes(entry.detail) +
        entry.resources.reduce((n, r) => n + bytes(r), 0)
    );
}

/** The checks EventBridge makes on a whole PutEvents, before any entry; throws what it answers. */
export function checkPutEvents(entries: readonly EventEntry[]): void {
    if (entries.length < 1 || entries.length > EVENTS_MAX_ENTRIES) {
        const bound = entries.length < 1 ? "greater than or equal to 1" : `less than or equal to ${EVENTS_MAX_ENTRIES}`;
        throw new ApiError(
            "ValidationException",
            400,
            `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length ${bound}`,
        );
    }
    if (entries.reduce((n, e) => n + eventEntrySize(e), 0) > EVENTS_MAX_REQUEST_BYTES)
        throw new ApiError("ValidationException", 400, "Total size of the entries in the request is over the limit.");
}

const invalidArgument = (parameter: string, reason: string): EntryRefusal => ({
    ErrorCode: "InvalidArgument",
    ErrorMessage: `Parameter ${parameter} is not valid. Reason: ${reason}`,
});

/** Whether `text` is a JSON object (not an array, a string, a number or `null`). */
function isJsonObject(text: string): boolean {
    try {
        const value: unknown = JSON.parse(text);
        return typeof value === "object" && value !== null && !Array.isArray(value);
    } catch {
        return false;
    }
}

/**
 * EventBridge's refusal of one entry, if any. A missing (or empty) `Source`, `DetailType` or `Detail` fails the
 * entry with `InvalidArgument`, also when no entry of the request has all three. AWS's reference says the whole
 * request then fails; what AWS was recorded answering to a request of one entry without a `Source` (the LocalStack
 * snapshot above) is HTTP 200 with that entry failed, so here every entry fails and the call is answered. Then the
 * lengths (`InvalidArgument`), an `aws.` source (`NotAuthorizedForSourceException`) and a `Detail` that is not a
 * JSON object (`MalformedDetail`).
 */
export function eventEntryRefusal(entry: EventEntry): EntryRefusal | undefined {
    for (const [parameter, value] of [
        ["Source", entry.source],
        ["DetailType", entry.detailType],
        ["Detail", entry.detail],
    ] as const) {
        if (value === undefined || value === "")
            return invalidArgument(parameter, `${parameter} is a required argument.`);
    }
    const source = entry.source as string;
    if ([...source].length > SOURCE_MAX_CHARACTERS)
        return invalidArgument("Source", `Source is longer than ${SOURCE_MAX_CHARACTERS} characters.`);
    if ([...(entry.detailType as string)].length > DETAIL_TYPE_MAX_CHARACTERS)
        return invalidArgument("DetailType", `DetailType is longer than ${DETAIL_TYPE_MAX_CHARACTERS} characters.`);
    if (source.startsWith("aws."))
        return { ErrorCode: "NotAuthorizedForSourceException", ErrorMessage: "Not authorized for the source." };
    if (!isJsonObject(entry.detail as string))
        return { ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed." };
    return undefined;
}
