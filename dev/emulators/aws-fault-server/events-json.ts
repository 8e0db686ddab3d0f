/**
 * EventBridge's wire format, JSON 1.1 (`x-amz-target: AWSEvents.<Action>`): the entries of a PutEvents request,
 * and the error answer (`{"__type":"<code>","message":…}`, which the SDK reads for the error's name).
 *
 * @packageDocumentation
 */
import type { ApiError } from "./api-error";
import type { EntryInfo } from "./types";

/** The `x-amz-target` prefix of an EventBridge call. */
export const EVENTS_TARGET_PREFIX = "AWSEvents.";

/** The content type of every EventBridge answer. */
export const EVENTS_CONTENT_TYPE = "application/x-amz-json-1.1";

/** One PutEvents request entry, as sent: every field may be missing. */
export interface EventEntry {
    readonly source?: string;
    readonly detailType?: string;
    /** The `Detail` text, as sent. */
    readonly detail?: string;
    /** The `EventBusName`: a name or an ARN; missing for the default bus. */
    readonly eventBusName?: string;
    readonly resources: readonly string[];
    /** The `Time`, epoch ms (the SDK sends epoch seconds). */
    readonly timeMs?: number;
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** `Time` as the SDK sends it (epoch seconds, possibly fractional), or an ISO 8601 text; `undefined` otherwise. */
function timeOf(value: unknown): number | undefined {
    if (typeof value === "number") return value * 1000;
    if (typeof value !== "string") return undefined;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
}

/** Read one PutEvents entry. */
function eventEntry(raw: Record<string, unknown>): EventEntry {
    const resources = Array.isArray(raw.Resources) ? raw.Resources.filter((r) => typeof r === "string") : [];
    const source = text(raw.Source);
    const detailType = text(raw.DetailType);
    const detail = text(raw.Detail);
    const eventBusName = text(raw.EventBusName);
    const timeMs = timeOf(raw.Time);
    return {
        ...(source === undefined ? {} : { source }),
        ...(detailType === undefined ? {} : { detailType }),
        ...(detail === undefined ? {} : { detail }),
        ...(eventBusName === undefined ? {} : { eventBusName }),
        resources,
        ...(timeMs === undefined ? {} : { timeMs }),
    };
}

/** The entries of a PutEvents body (`Entries`); none when it has no list. */
export function eventEntries(json: Record<string, unknown>): EventEntry[] {
    if (!Array.isArray(json.Entries)) return [];
    return (json.Entries as unknown[]).map((e) =>
        eventEntry(typeof e === "object" && e !== null ? (e as Record<string, unknown>) : {}),
    );
}

/** What an entry fault predicate sees of a PutEvents entry. */
export function eventEntryInfo(entry: EventEntry, index: number): EntryInfo {
    return {
        index,
        body: entry.detail ?? "",
        attributes: {},
        ...(entry.source === undefined ? {} : { source: entry.source }),
        ...(entry.detailType === undefined ? {} : { detailType: entry.detailType }),
        ...(entry.eventBusName === undefined ? {} : { eventBusName: entry.eventBusName }),
    };
}

/** The entries an EventBridge call carries: PutEvents' entries; none for any other action. */
export function eventsJsonEntries(action: string, json: Record<string, unknown>): EntryInfo[] {
    return action === "PutEvents" ? eventEntries(json).map(eventEntryInfo) : [];
}

/** The headers and body of an EventBridge error answer. */
export function eventsJsonError(error: ApiError): { headers: Record<string, string>; body: string } {
    return {
        headers: { "content-type": EVENTS_CONTENT_TYPE },
        body: JSON.stringify({ __type: error.code, message: error.message }),
    };
}
