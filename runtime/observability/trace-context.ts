/**
 * W3C Trace Context (Level 1, https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate` a message
 * carries from {@link OutboxWriter.write} to the consumer, their validation, and reading them back. Plain strings
 * only: nothing here needs OpenTelemetry (`open-telemetry.ts` holds what does).
 *
 * Plain data and regular expressions without the `g` flag only: the inbox handler reaches this module, and Pulumi
 * serializes what it reaches by value (`../shared/reference/test-infra.md` §7).
 *
 * @packageDocumentation
 */

/** The W3C trace context of one message: what the writer stores and the consumer gets. */
export interface TraceContext {
    /** The W3C `traceparent`: `<version>-<trace id>-<parent id>-<flags>`, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`. */
    readonly traceparent: string;
    /** The W3C `tracestate` (vendor entries, e.g. `congo=t61rcWkgMzE`). @default undefined (none) */
    readonly tracestate?: string;
}

/** The fields of a `traceparent`, as lowercase hex strings. */
export interface TraceparentFields {
    /** The version, `00` for Level 1. */
    readonly version: string;
    /** The trace id: 32 lowercase hex digits, not all zero. */
    readonly traceId: string;
    /** The parent id (the span id of the caller): 16 lowercase hex digits, not all zero. */
    readonly parentId: string;
    /** The trace flags: 2 lowercase hex digits. */
    readonly traceFlags: string;
    /** Whether the `sampled` flag (bit 0 of the flags) is set. */
    readonly sampled: boolean;
}

/** A valid `traceparent`, for examples in error messages and docs. */
export const TRACEPARENT_EXAMPLE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/** The most list members a `tracestate` holds (W3C: a parser discards a longer one whole). */
export const MAX_TRACESTATE_MEMBERS = 32;

/**
 * The longest `tracestate` this package carries, in characters: the length W3C asks every vendor to propagate
 * (longer ones may be cut) and OpenTelemetry JS's own ceiling.
 */
export const MAX_TRACESTATE_LENGTH = 512;

const TRACEPARENT_SHAPE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\s\S]*)?$/;

/**
 * The fields a later version may add after the flags: a `-`, then visible ASCII (U+0021 to U+007E), what an HTTP
 * header carries unchanged and what SNS, SQS (message attributes) and EventBridge (the event's JSON) all carry.
 */
const LATER_VERSION_FIELDS = /^-[\x21-\x7e]*$/;
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** What a `traceparent` looks like, for error messages. */
const TRACEPARENT_FORM = `a W3C traceparent is <version>-<trace id>-<parent id>-<flags>: "00", 32 and 16 lowercase hex digits (neither all zeros), and 2 lowercase hex digits, e.g. "${TRACEPARENT_EXAMPLE}"`;

/**
 * Why a value is not a valid W3C `traceparent` (Level 1), or `undefined` when it is. Version `00` is exactly 55
 * characters. A later version (not `ff`, which W3C forbids) is read as W3C asks of a version it does not know: its
 * first 55 characters as version 00's fields, followed by the end or by a `-` and more fields, which Level 1
 * parsers ignore; those fields must be visible ASCII, so that every destination carries what the writer accepted.
 *
 * @param value - The candidate.
 */
export function traceparentProblem(value: unknown): string | undefined {
    if (typeof value !== "string")
        return `is ${value === null ? "null" : typeof value}, not a string; ${TRACEPARENT_FORM}`;
    const match = TRACEPARENT_SHAPE.exec(value);
    if (match === null)
        return `is ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)}, which is not of that form (uppercase hex and spaces are not allowed either); ${TRACEPARENT_FORM}`;
    const [, version, traceId, parentId, , rest] = match;
    if (version === "ff") return `has version "ff", which W3C forbids; ${TRACEPARENT_FORM}`;
    if (version === "00" && rest !== undefined)
        return `is version "00" but ${value.length} characters long; a version 00 traceparent is exactly 55; ${TRACEPARENT_FORM}`;
    if (rest !== undefined && !LATER_VERSION_FIELDS.test(rest))
        return `is version "${version}" with fields after its flags that hold a character other than visible ASCII (U+0021 to U+007E), which an HTTP header and every destination would not carry as it is; ${TRACEPARENT_FORM}, and a later version's further fields are "-" then visible ASCII`;
    if (/^0+$/.test(traceId!)) return `has an all-zero trace id, which W3C makes invalid; ${TRACEPARENT_FORM}`;
    if (/^0+$/.test(parentId!)) return `has an all-zero parent id, which W3C makes invalid; ${TRACEPARENT_FORM}`;
    return undefined;
}

/**
 * Why a value is not a valid W3C `tracestate`, or `undefined` when it is: list members `key=value` separated by
 * commas (spaces and tabs around them allowed, empty members ignored), at most {@link MAX_TRACESTATE_MEMBERS},
 * keys unique, and at most {@link MAX_TRACESTATE_LENGTH} characters in all.
 *
 * @param value - The candidate.
 */
export function tracestateProblem(value: unknown): string | undefined {
    const form = `a W3C tracestate is a comma-separated list of key=value members, e.g. "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7": keys of lowercase letters, digits, '_', '-', '*', '/' (optionally tenant@system), values of printable ASCII without ',' and '=', not ending in a space`;
    if (typeof value !== "string") return `is ${value === null ? "null" : typeof value}, not a string; ${form}`;
    if (value.length > MAX_TRACESTATE_LENGTH)
        return `is ${value.length} characters long; at most ${MAX_TRACESTATE_LENGTH} are carried (W3C asks vendors to propagate that much, and may cut a longer one); drop members`;
    const members = value
        .split(",")
        .map((m) => m.replace(/^[ \t]+|[ \t]+$/g, ""))
        .filter((m) => m !== "");
    if (members.length === 0) return `holds no list member; omit it instead, or ${form}`;
    if (members.length > MAX_TRACESTATE_MEMBERS)
        return `has ${members.length} list members; W3C allows at most ${MAX_TRACESTATE_MEMBERS} (a parser discards a longer one whole); drop members`;
    const keys: string[] = [];
    for (const member of members) {
        const eq = member.indexOf("=");
        const key = eq < 0 ? member : member.slice(0, eq);
        const shown = JSON.stringify(member.length > 60 ? `${member.slice(0, 60)}…` : member);
        if (eq < 0 || !TRACESTATE_KEY.test(key)) return `has the member ${shown}, whose key is not valid; ${form}`;
        if (!TRACESTATE_VALUE.test(member.slice(eq + 1)))
            return `has the member ${shown}, whose value is not valid; ${form}`;
        if (keys.includes(key)) return `has the key "${key}" twice; W3C keys are unique within a tracestate`;
        keys.push(key);
    }
    return undefined;
}

/**
 * The fields of a valid `traceparent`, or `undefined` when it is not one ({@link traceparentProblem}).
 *
 * @param value - A `traceparent`, e.g. from {@link InboxMessage.traceparent}.
 * @example
 * parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")?.traceId; // "4bf92f3577b34da6a3ce929d0e0e4736"
 */
export function parseTraceparent(value: unknown): TraceparentFields | undefined {
    if (traceparentProblem(value) !== undefined) return undefined;
    const [version, traceId, parentId, traceFlags] = (value as string).split("-") as [string, string, string, string];
    return { version, traceId, parentId, traceFlags, sampled: (Number.parseInt(traceFlags, 16) & 1) === 1 };
}

/**
 * The trace context a delivered message carries, read the way W3C asks a receiver to: a `traceparent` that is
 * not valid is dropped, and its `tracestate` with it; a `tracestate` that is not valid is dropped alone.
 *
 * @param traceparent - The `traceparent` attribute's value, if any.
 * @param tracestate - The `tracestate` attribute's value, if any.
 */
export function deliveredTraceContext(
    traceparent: string | undefined,
    tracestate: string | undefined,
): TraceContext | undefined {
    if (traceparent === undefined || traceparentProblem(traceparent) !== undefined) return undefined;
    return {
        traceparent,
        ...(tracestate !== undefined && tracestateProblem(tracestate) === undefined ? { tracestate } : {}),
    };
}
