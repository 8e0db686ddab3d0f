/**
 * Where a drain run's relay publishes: the run's SNS topic, an SQS queue, or an EventBridge bus, each on the bench's
 * fault server (the bus is its stand-in: no maintained EventBridge emulator exists). The drain adds the same latency
 * to every call of the destination's client, whatever its kind, and counts the kind's batch calls.
 *
 * @packageDocumentation
 */
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import type { SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../emulators/dynamodb-local";
import type { AwsFaultServer } from "../emulators/aws-fault-server";
import type { DestinationKind } from "../../runtime/destination/kind";

/** A drain's destination. */
export interface DrainDestination {
    /** Its kind. */
    readonly kind: DestinationKind;
    /** The batch action of its kind, as the server logs it: `PublishBatch`, `SendMessageBatch`, `PutEvents`. */
    readonly batchAction: string;
    /** The client the publisher sends its batch calls with (for SQS, also the DLQ's). */
    readonly client: SNSClient | SQSClient | EventBridgeClient;
    /** The publisher's destination setting and client of its kind. */
    readonly config: {
        readonly topicArn?: string;
        readonly queueArn?: string;
        readonly eventBusArn?: string;
        readonly eventBridge?: EventBridgeClient;
    };
    /** Destroy a client it made. */
    close(): void;
}

/** The batch action of each kind. */
export const BATCH_ACTIONS: Readonly<Record<DestinationKind, string>> = {
    sns: "PublishBatch",
    sqs: "SendMessageBatch",
    eventbridge: "PutEvents",
};

/**
 * The destination of `kind` for one drain.
 *
 * @param kind - The kind.
 * @param server - The bench's fault server.
 * @param clients - The run's SNS client and topic, and its SQS client.
 * @param name - A name unique to the run, for a queue or a bus.
 */
export function drainDestination(
    kind: DestinationKind,
    server: AwsFaultServer,
    clients: { readonly sns: SNSClient; readonly sqs: SQSClient; readonly topicArn: string },
    name: string,
): DrainDestination {
    const batchAction = BATCH_ACTIONS[kind];
    if (kind === "sqs") {
        const queueArn = server.queueArn(server.createQueue(name));
        return { kind, batchAction, client: clients.sqs, config: { queueArn }, close: () => undefined };
    }
    if (kind === "eventbridge") {
        const eventBusArn = server.createEventBus(name);
        const eventBridge = new EventBridgeClient({
            endpoint: server.endpoint,
            region: LOCAL_REGION,
            credentials: LOCAL_CREDENTIALS,
        });
        return {
            kind,
            batchAction,
            client: eventBridge,
            config: { eventBusArn, eventBridge },
            close: () => eventBridge.destroy(),
        };
    }
    return { kind, batchAction, client: clients.sns, config: { topicArn: clients.topicArn }, close: () => undefined };
}

/**
 * The entries per batch call the server saw, over its calls of `action` (the bench resets the server before each
 * measured drain, so these are the drain's).
 *
 * @param server - The bench's fault server.
 * @param action - The batch action.
 * @returns the mean entries per call and the number of calls.
 */
export function observedEntriesPerCall(server: AwsFaultServer, action: string): { mean: number; calls: number } {
    const calls = server.calls().filter((c) => c.action === action);
    const entries = calls.reduce((sum, c) => sum + c.entries, 0);
    return { mean: calls.length === 0 ? Number.NaN : entries / calls.length, calls: calls.length };
}
