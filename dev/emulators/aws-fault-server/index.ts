/**
 * A tiny SNS, SQS and EventBridge server for tests and benchmarks, on `node:http`, that fails on demand.
 *
 * It speaks the wire protocols the real AWS SDK v3 clients use, so the code under test keeps its real
 * `SNSClient`/`SQSClient`/`EventBridgeClient` and only the endpoint changes:
 * - SNS: awsQuery (form-urlencoded request, XML response): CreateTopic, Publish, PublishBatch;
 * - SQS: JSON 1.0 (`x-amz-target: AmazonSQS.*`): CreateQueue, GetQueueUrl, SendMessage, SendMessageBatch,
 *   ReceiveMessage, DeleteMessage, DeleteMessageBatch, for a publisher's DLQ or a queue as a destination;
 * - EventBridge: JSON 1.1 (`x-amz-target: AWSEvents.*`): PutEvents, on the `default` bus and the buses made with
 *   `createEventBus` (and deleted with `deleteEventBus`), and a bus can be routed to a queue (`routeBusToQueue`), as a rule with an SQS target
 *   delivers, so a consumer can count deliveries. A stand-in: AWS has no maintained EventBridge emulator.
 *
 * Every accepted message is recorded (topic, queue or bus, message id, body, attributes, MessageGroupId,
 * MessageDeduplicationId, an event's Source and DetailType). It enforces what the services enforce (batch sizes
 * and ids, FIFO rules and deduplication, SQS's characters, PutEvents' entries). Faults are injected per call or
 * per batch entry (PublishBatch, SendMessageBatch, PutEvents), by predicate or by rate from a seeded RNG, so a
 * failing run replays exactly: 5xx `InternalError`, `Throttling`/`Throttled`, `NotFound`, `InvalidParameter`, any
 * AWS error code with its HTTP status answered in the call's protocol, a dropped connection, and "accept then time
 * out" (the message is recorded as accepted, the answer never arrives). A fixed latency per call models a real
 * network for benchmarks.
 *
 * This is a fake for what no emulator can show (injected faults); use fauxqs for plain SNS/SQS delivery.
 *
 * @packageDocumentation
 */
import { listen } from "./http-server";
import {
    createEventBus,
    createQueue,
    createServerState,
    createTopic,
    deleteEventBus,
    findBus,
    findQueue,
    findTopic,
    type ServerState,
} from "./state";
import type { FaultPlan, AwsFaultServer, AwsFaultServerOptions } from "./types";

export type {
    CallFaultKind,
    CallFaultRule,
    CallFaultRuleBase,
    CallInfo,
    EntryFaultRule,
    EntryInfo,
    ErrorCallFaultRule,
    FaultPlan,
    NamedCallFaultRule,
    RecordedAttribute,
    RecordedCall,
    RecordedMessage,
    AwsFaultServer,
    AwsFaultServerOptions,
} from "./types";

/** Route `bus` to `queue` (see {@link AwsFaultServer.routeBusToQueue}). */
function routeBusToQueue(state: ServerState, bus: string, queue: string): void {
    const foundBus = findBus(state, bus);
    if (foundBus === undefined) throw new Error(`routeBusToQueue: no event bus ${bus}`);
    const foundQueue = findQueue(state, queue);
    if (foundQueue === undefined) throw new Error(`routeBusToQueue: no queue ${queue}`);
    if (foundQueue.fifo) throw new Error(`routeBusToQueue: ${queue} is a FIFO queue (a rule needs a MessageGroupId)`);
    if (!foundBus.routes.includes(foundQueue.url)) foundBus.routes.push(foundQueue.url);
}

/** Forget recorded messages, calls, queue contents and FIFO deduplication (see {@link AwsFaultServer.reset}). */
function reset(state: ServerState): void {
    state.accepted.length = 0;
    state.callLog.length = 0;
    for (const queue of state.queues.values()) {
        queue.messages.length = 0;
        queue.dedup.clear();
    }
    for (const topic of state.topics.values()) topic.dedup.clear();
}

/**
 * Start the server on loopback.
 *
 * @param options - See {@link AwsFaultServerOptions}.
 */
export async function startAwsFaultServer(options: AwsFaultServerOptions = {}): Promise<AwsFaultServer> {
    const state = createServerState(options);
    const server = await listen(state, options.port);
    state.endpoint = `http://127.0.0.1:${server.port}`;
    const { accepted } = state;
    return {
        endpoint: state.endpoint,
        createTopic: (name) => createTopic(state, name),
        createQueue: (name) => createQueue(state, name),
        queueArn: (queue) => {
            const found = findQueue(state, queue);
            if (found === undefined) throw new Error(`the AWS fault server has no queue ${queue}`);
            return found.arn;
        },
        createEventBus: (name) => createEventBus(state, name),
        deleteEventBus: (bus) => deleteEventBus(state, bus),
        routeBusToQueue: (bus, queue) => routeBusToQueue(state, bus, queue),
        messages: () => [...accepted],
        topicMessages: (topic) => {
            const found = findTopic(state, topic);
            return accepted.filter((m) => m.service === "sns" && m.destination === found?.arn);
        },
        queueMessages: (queue) => {
            const found = findQueue(state, queue);
            return accepted.filter((m) => m.service === "sqs" && m.destination === found?.url);
        },
        busEvents: (bus) => {
            const found = bus === "" ? undefined : findBus(state, bus);
            // A deleted bus is found by its ARN no more: its events are still recorded under it.
            const arn = found?.arn ?? (bus.startsWith("arn:") ? bus : undefined);
            return accepted.filter((m) => m.service === "events" && m.destination === arn);
        },
        calls: () => [...state.callLog],
        setFaults: (next: FaultPlan) => state.faults.replace(next),
        clearFaults: () => state.faults.replace({}),
        reset: () => reset(state),
        stop: () => server.stop(),
    };
}
