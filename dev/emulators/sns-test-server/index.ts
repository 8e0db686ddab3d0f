/**
 * A tiny SNS (and minimal SQS) server for tests and benchmarks, on `node:http`, that fails on demand.
 *
 * It speaks the wire protocols the real AWS SDK v3 clients use, so the code under test keeps its real
 * `SNSClient`/`SQSClient` and only the endpoint changes:
 * - SNS: awsQuery (form-urlencoded request, XML response): CreateTopic, Publish, PublishBatch;
 * - SQS: JSON 1.0 (`x-amz-target: AmazonSQS.*`): CreateQueue, GetQueueUrl, SendMessage, SendMessageBatch,
 *   ReceiveMessage, DeleteMessage, so a publisher's DLQ can live on the same server.
 *
 * Every accepted message is recorded (topic or queue, message id, body, attributes, MessageGroupId,
 * MessageDeduplicationId). Faults are injected per call or per PublishBatch entry, by predicate or by rate
 * from a seeded RNG, so a failing run replays exactly: 5xx `InternalError`, `Throttling`/`Throttled`,
 * `NotFound`, `InvalidParameter`, a dropped connection, and "accept then time out" (the message is recorded
 * as accepted, the answer never arrives). A fixed latency per call models a real network for benchmarks.
 *
 * This is a fake for what no emulator can show (injected faults); use fauxqs for plain delivery.
 *
 * @packageDocumentation
 */
import { listen } from "./http-server";
import { createQueue, createServerState, createTopic, findQueue, findTopic } from "./state";
import type { FaultPlan, SnsTestServer, SnsTestServerOptions } from "./types";

export type {
    CallFaultKind,
    CallFaultRule,
    CallInfo,
    EntryFaultRule,
    EntryInfo,
    FaultPlan,
    RecordedAttribute,
    RecordedCall,
    RecordedMessage,
    SnsTestServer,
    SnsTestServerOptions,
} from "./types";

/**
 * Start the server on loopback.
 *
 * @param options - See {@link SnsTestServerOptions}.
 */
export async function startSnsTestServer(options: SnsTestServerOptions = {}): Promise<SnsTestServer> {
    const state = createServerState(options);
    const server = await listen(state, options.port);
    state.endpoint = `http://127.0.0.1:${server.port}`;
    const { accepted } = state;
    return {
        endpoint: state.endpoint,
        createTopic: (name) => createTopic(state, name),
        createQueue: (name) => createQueue(state, name),
        messages: () => [...accepted],
        topicMessages: (topic) => {
            const found = findTopic(state, topic);
            return accepted.filter((m) => m.service === "sns" && m.destination === found?.arn);
        },
        queueMessages: (queue) => {
            const found = findQueue(state, queue);
            return accepted.filter((m) => m.service === "sqs" && m.destination === found?.url);
        },
        calls: () => [...state.callLog],
        setFaults: (next: FaultPlan) => state.faults.replace(next),
        clearFaults: () => state.faults.replace({}),
        reset(): void {
            accepted.length = 0;
            state.callLog.length = 0;
            for (const queue of state.queues.values()) queue.messages.length = 0;
            for (const topic of state.topics.values()) topic.dedup.clear();
        },
        stop: () => server.stop(),
    };
}
