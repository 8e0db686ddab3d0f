/**
 * EventBridge's PutEvents, answered as EventBridge does: `{ FailedEntryCount, Entries }`, one result per request
 * entry in its order, `{ EventId }` or `{ ErrorCode, ErrorMessage }`. Each accepted event is recorded on its bus
 * and, when the bus is routed to queues, enqueued on each as its event envelope (what an EventBridge rule with an
 * SQS target delivers by default). A stand-in: AWS has no maintained EventBridge emulator.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { ApiError } from "./api-error";
import type { EventEntry } from "./events-json";
import { eventEntries, eventEntryInfo } from "./events-json";
import { checkPutEvents, eventEntryRefusal, type EntryRefusal } from "./events-rules";
import type { ActionResult, ParsedCall } from "./request";
import { enqueueRecord, findBus, findQueue, recordMessage, type EventBus, type ServerState } from "./state";
import type { CallInfo, EntryInfo } from "./types";

/** ISO 8601 UTC without milliseconds, as an event envelope's `time`: `2026-12-02T05:04:15Z`. */
export function envelopeTime(ms: number): string {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The event envelope a rule delivers to an SQS target, its `detail` the entry's `Detail` text as sent. */
export function eventEnvelope(state: ServerState, eventId: string, entry: EventEntry, now: number): string {
    const head = JSON.stringify({
        version: "0",
        id: eventId,
        "detail-type": entry.detailType,
        source: entry.source,
        account: state.accountId,
        time: envelopeTime(entry.timeMs ?? now),
        region: state.region,
        resources: entry.resources,
    });
    return `${head.slice(0, -1)},"detail":${entry.detail as string}}`;
}

/** Enqueue the event's envelope on each queue its bus is routed to, recorded as sent by this PutEvents call. */
function route(state: ServerState, bus: EventBus, envelope: string, call: CallInfo, acknowledged: boolean): void {
    for (const url of bus.routes) {
        const queue = findQueue(state, url);
        if (queue === undefined) continue;
        const copy: EntryInfo = { index: 0, body: envelope, attributes: {} };
        const to = { service: "sqs", destination: queue.url, destinationName: queue.name } as const;
        enqueueRecord(queue, recordMessage(state, to, copy, call, acknowledged));
    }
}

/**
 * Accept one valid entry: a fresh EventId, recorded on its bus and routed. An entry naming a bus that does not
 * exist is accepted and dropped, as AWS does: it answers an EventId and `FailedEntryCount: 0`, and the event goes
 * nowhere (aws/aws-cli issue 9186, aws/aws-sdk issue 186, localstack/localstack pull request 8264, whose test
 * was validated against AWS).
 */
function accept(state: ServerState, entry: EventEntry, index: number, call: CallInfo, acknowledged: boolean): string {
    const eventId = randomUUID();
    const bus = findBus(state, entry.eventBusName);
    if (bus === undefined) return eventId;
    const to = { service: "events", destination: bus.arn, destinationName: bus.name } as const;
    recordMessage(state, to, eventEntryInfo(entry, index), call, acknowledged, eventId);
    route(state, bus, eventEnvelope(state, eventId, entry, Date.now()), call, acknowledged);
    return eventId;
}

/**
 * DescribeEventBus, by `Name` (a name or an ARN; omitted = the default bus): the bus's `Name` and `Arn`, or
 * `ResourceNotFoundException` for a bus that does not exist. The publisher asks it once per cold start, since
 * PutEvents alone accepts events for a missing bus and drops them.
 */
export function describeEventBusAction(state: ServerState, call: ParsedCall): ActionResult {
    const name = typeof call.json.Name === "string" ? call.json.Name : undefined;
    const bus = findBus(state, name);
    if (bus === undefined)
        throw new ApiError("ResourceNotFoundException", 400, `Event bus ${name ?? "default"} does not exist.`);
    return { body: { Name: bus.name, Arn: bus.arn }, outcome: "ok" };
}

/** PutEvents: the request's checks, then each entry refused by EventBridge's rules, failed by an entry rule, or accepted. */
export function putEventsAction(state: ServerState, call: ParsedCall, acknowledged: boolean): ActionResult {
    const entries = eventEntries(call.json);
    checkPutEvents(entries);
    const results: ({ EventId: string } | EntryRefusal)[] = entries.map((entry, index) => {
        const refusal = eventEntryRefusal(entry);
        if (refusal !== undefined) return refusal;
        const rule = state.faults.entryRule(call.info.entries[index] as EntryInfo, call.info);
        if (rule !== undefined)
            return { ErrorCode: rule.code ?? "InternalFailure", ErrorMessage: rule.message ?? "injected failure" };
        return { EventId: accept(state, entry, index, call.info, acknowledged) };
    });
    const failed = results.filter((r) => !("EventId" in r)).length;
    return { body: { FailedEntryCount: failed, Entries: results }, outcome: failed === 0 ? "ok" : "partial" };
}
