/**
 * What the server holds: its topics, queues, event buses and bus-to-queue routes, every message it accepted and
 * every call it received, the call counter, and the fault plan in force. One object, passed to the actions and the
 * HTTP handler.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { createFaultInjector, type FaultInjector } from "./fault-plan";
import type { CallInfo, EntryInfo, RecordedCall, RecordedMessage, AwsFaultServerOptions } from "./types";

/** A topic; FIFO when its name ends in `.fifo`. */
export interface Topic {
    readonly arn: string;
    readonly name: string;
    readonly fifo: boolean;
    readonly contentBasedDeduplication: boolean;
    /** FIFO deduplication: the message id and acceptance time of each deduplication id. */
    readonly dedup: Map<string, { messageId: string; at: number }>;
    /** The last FIFO sequence number given. */
    sequence: bigint;
}

/** A message in a queue, with its receive state. */
export interface QueuedMessage {
    readonly record: RecordedMessage;
    receiptHandle: string | undefined;
    invisibleUntil: number;
    deleted: boolean;
}

/** A queue; FIFO when its name ends in `.fifo`. */
export interface Queue {
    readonly url: string;
    readonly name: string;
    readonly arn: string;
    readonly messages: QueuedMessage[];
    readonly fifo: boolean;
    readonly contentBasedDeduplication: boolean;
    /** FIFO deduplication: the message id and acceptance time of each deduplication id. */
    readonly dedup: Map<string, { messageId: string; at: number }>;
    /** The last FIFO sequence number given. */
    sequence: bigint;
}

/** An event bus, and the queues its events are routed to (by URL). */
export interface EventBus {
    readonly arn: string;
    readonly name: string;
    readonly routes: string[];
}

/** The server's state. */
export interface ServerState {
    readonly region: string;
    readonly accountId: string;
    /** By ARN. */
    readonly topics: Map<string, Topic>;
    /** By URL. */
    readonly queues: Map<string, Queue>;
    /** By ARN; `default` from the start. */
    readonly buses: Map<string, EventBus>;
    /** Every accepted message, in acceptance order. */
    readonly accepted: RecordedMessage[];
    /** Every call, in order. */
    readonly callLog: RecordedCall[];
    /** Calls numbered so far. */
    callCounter: number;
    /** `http://127.0.0.1:<port>`, once listening: the base of queue URLs. */
    endpoint: string;
    readonly faults: FaultInjector;
}

/** The state of a new server: no topic, no queue, the `default` event bus, the options' fault plan. */
export function createServerState(options: AwsFaultServerOptions): ServerState {
    const state: ServerState = {
        region: options.region ?? "us-east-1",
        accountId: options.accountId ?? "000000000000",
        topics: new Map(),
        queues: new Map(),
        buses: new Map(),
        accepted: [],
        callLog: [],
        callCounter: 0,
        endpoint: "",
        faults: createFaultInjector(options.seed ?? 1, options.faults ?? {}),
    };
    createEventBus(state, "default");
    return state;
}

/** Create a topic unless it exists; returns its ARN. */
export function createTopic(state: ServerState, name: string, contentBasedDeduplication = false): string {
    const arn = `arn:aws:sns:${state.region}:${state.accountId}:${name}`;
    if (!state.topics.has(arn)) {
        const fifo = name.endsWith(".fifo");
        state.topics.set(arn, {
            arn,
            name,
            fifo,
            contentBasedDeduplication,
            dedup: new Map(),
            sequence: 10_000_000_000_000_000_000n,
        });
    }
    return arn;
}

/** Create a queue unless it exists (FIFO when its name ends in `.fifo`); returns its URL. */
export function createQueue(state: ServerState, name: string, contentBasedDeduplication = false): string {
    const url = `${state.endpoint}/${state.accountId}/${name}`;
    if (!state.queues.has(url))
        state.queues.set(url, {
            url,
            name,
            arn: `arn:aws:sqs:${state.region}:${state.accountId}:${name}`,
            messages: [],
            fifo: name.endsWith(".fifo"),
            contentBasedDeduplication,
            dedup: new Map(),
            sequence: 10_000_000_000_000_000_000n,
        });
    return url;
}

/** Create an event bus unless it exists; returns its ARN. */
export function createEventBus(state: ServerState, name: string): string {
    const arn = `arn:aws:events:${state.region}:${state.accountId}:event-bus/${name}`;
    if (!state.buses.has(arn)) state.buses.set(arn, { arn, name, routes: [] });
    return arn;
}

/**
 * Delete an event bus (by ARN or name), as `DeleteEventBus` does: from then on `DescribeEventBus` answers
 * `ResourceNotFoundException` for it, and PutEvents accepts and drops its events. Its routes go with it.
 *
 * @throws Error when there is no such bus.
 */
export function deleteEventBus(state: ServerState, arnOrName: string): void {
    const bus = findBus(state, arnOrName);
    if (bus === undefined) throw new Error(`deleteEventBus: no event bus ${arnOrName}`);
    state.buses.delete(bus.arn);
}

/** An event bus by ARN or name; the `default` bus when `arnOrName` is `undefined` or empty, as PutEvents reads it. */
export function findBus(state: ServerState, arnOrName: string | undefined): EventBus | undefined {
    const key = arnOrName === undefined || arnOrName === "" ? "default" : arnOrName;
    return state.buses.get(key) ?? [...state.buses.values()].find((b) => b.name === key);
}

/** A topic by ARN or name. */
export function findTopic(state: ServerState, arnOrName: string): Topic | undefined {
    return state.topics.get(arnOrName) ?? [...state.topics.values()].find((t) => t.name === arnOrName);
}

/** A queue by URL, name, or the URL's last path segments. */
export function findQueue(state: ServerState, urlOrName: string): Queue | undefined {
    // A queue URL of any host finds the queue by its path (`/<account>/<name>`), as fauxqs and LocalStack do: a
    // publisher derives the AWS-form URL from the queue's ARN and sends it to this endpoint.
    const path = /^https?:\/\/[^/]+(\/[^/]+\/[^/]+)$/.exec(urlOrName)?.[1];
    return (
        state.queues.get(urlOrName) ??
        [...state.queues.values()].find(
            (q) =>
                q.name === urlOrName || q.url.endsWith(`/${urlOrName}`) || (path !== undefined && q.url.endsWith(path)),
        )
    );
}

/** Put a recorded message on a queue, visible at once. */
export function enqueueRecord(queue: Queue, record: RecordedMessage): void {
    queue.messages.push({ record, receiptHandle: undefined, invisibleUntil: 0, deleted: false });
}

/** Where a message was accepted. */
export interface Destination {
    readonly service: "sns" | "sqs" | "events";
    /** The topic ARN, queue URL or event bus ARN. */
    readonly destination: string;
    /** The topic, queue or event bus name. */
    readonly destinationName: string;
}

/** Record an accepted message, with a fresh id unless `messageId` is given. */
export function recordMessage(
    state: ServerState,
    to: Destination,
    entry: EntryInfo,
    call: CallInfo,
    acknowledged: boolean,
    messageId: string = randomUUID(),
): RecordedMessage {
    const message: RecordedMessage = {
        service: to.service,
        destination: to.destination,
        destinationName: to.destinationName,
        messageId,
        body: entry.body,
        attributes: entry.attributes,
        ...(entry.messageGroupId === undefined ? {} : { messageGroupId: entry.messageGroupId }),
        ...(entry.messageDeduplicationId === undefined ? {} : { messageDeduplicationId: entry.messageDeduplicationId }),
        ...(entry.source === undefined ? {} : { source: entry.source }),
        ...(entry.detailType === undefined ? {} : { detailType: entry.detailType }),
        action: call.action,
        callNumber: call.callNumber,
        acknowledged,
    };
    state.accepted.push(message);
    return message;
}
