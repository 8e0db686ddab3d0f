/**
 * `npm start -- --destination <kind>`: where the demo's relay publishes, and where its consumer reads.
 *
 * - `sns`: a fauxqs topic, with the consumer's queue subscribed (raw delivery). With `--fail-rate`, the fault
 *   server's topic instead; the consumer then follows what it accepted (the fault server delivers to no subscriber).
 * - `sqs`: a fauxqs queue, given to the publisher by its ARN (the publisher derives the queue's URL from it); the
 *   consumer reads that queue. With `--keys` it is a FIFO queue, one message group per customer, since a standard
 *   queue promises no order. With `--fail-rate`, a queue on the fault server, read there.
 * - `eventbridge`: the fault server's stand-in, because no maintained EventBridge emulator exists: a bus routed to a
 *   queue on the same server (each accepted event lands there as the envelope a rule's SQS target delivers), which
 *   the consumer reads with an SQS client on the fault server's endpoint. A bus keeps no order; the stand-in happens
 *   to deliver in put order.
 *
 * The DLQ is on fauxqs, except beside an SQS destination on the fault server: the publisher's SQS client is both the
 * destination's and the DLQ's, so both queues are there.
 *
 * @packageDocumentation
 */
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DESTINATION_LABELS, type DestinationKind } from "../../runtime/destination/kind";
import type { PublisherConfig } from "../../runtime/relay/publisher";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../emulators/dynamodb-local";
import type { LocalFauxqs } from "../emulators/fauxqs";
import {
    startAwsFaultServer,
    type CallFaultRule,
    type RecordedMessage,
    type AwsFaultServer,
} from "../emulators/aws-fault-server";
import type { PolledQueue } from "./demo-consumer";
import type { Shutdown } from "./shutdown";

/** Where the consumer reads: a queue it polls, or (SNS with `--fail-rate`) what the fault server's topic accepted. */
export type DemoConsumerSource =
    { readonly sqs: SQSClient; readonly queue: PolledQueue } | { readonly recording: () => readonly RecordedMessage[] };

/** The demo's destination, its consumer's source and its DLQ. */
export interface DemoDestination {
    /** Its kind. */
    readonly kind: DestinationKind;
    /** The destination's ARN: the publisher's setting of its kind, and the writer's `address`. */
    readonly arn: string;
    /** Whether it is FIFO (an SQS queue with `--keys`). */
    readonly fifo: boolean;
    /** The publisher's and the sweeper's destination settings and clients. */
    readonly config: Pick<
        PublisherConfig,
        "topicArn" | "queueArn" | "eventBusArn" | "sns" | "sqs" | "eventBridge" | "dlqUrl" | "fifo"
    >;
    /** The destination's client, whose batch calls the summary counts. */
    readonly client: SNSClient | SQSClient | EventBridgeClient;
    /** The SDK command of the kind's batch call: `PublishBatchCommand`, `SendMessageBatchCommand`, `PutEventsCommand`. */
    readonly batchCommand: string;
    /** Where the consumer reads. */
    readonly consumer: DemoConsumerSource;
    /** The DLQ, and the client that reads it. */
    readonly dlq: { readonly sqs: SQSClient; readonly queue: PolledQueue };
    /** The fault server, when one runs (`--fail-rate`, or an EventBridge bus). */
    readonly faultServer?: AwsFaultServer;
    /** What the progress line says about it, after DynamoDB's endpoint. */
    readonly where: string;
    /** What `--keep` prints about it. */
    readonly keepLines: readonly string[];
}

/** What {@link startDemoDestination} needs. */
export interface DemoDestinationOptions {
    readonly kind: DestinationKind;
    /** Share of the batch calls the fault server fails; 0 for none. */
    readonly failRate: number;
    /** Whether orders carry ordering keys (an SQS destination is then FIFO). */
    readonly keyed: boolean;
    /** Keeps this run's names apart. */
    readonly runId: string;
}

/** Each kind's batch call, and the fault `--fail-rate` injects on it (HTTP 500, in the kind's own error code). */
const BATCH_CALLS: Readonly<Record<DestinationKind, { command: string; fault: (rate: number) => CallFaultRule }>> = {
    sns: {
        command: "PublishBatchCommand",
        fault: (rate) => ({ kind: "InternalError", actions: ["PublishBatch"], rate }),
    },
    sqs: {
        command: "SendMessageBatchCommand",
        fault: (rate) => ({ kind: "Error", code: "InternalError", status: 500, actions: ["SendMessageBatch"], rate }),
    },
    eventbridge: {
        command: "PutEventsCommand",
        fault: (rate) => ({ kind: "Error", code: "InternalException", status: 500, actions: ["PutEvents"], rate }),
    },
};

/** How many entries a batch call's answer says the destination accepted. */
export function acceptedEntries(command: string, output: Record<string, unknown>): number {
    if (command === "PublishBatchCommand" || command === "SendMessageBatchCommand")
        return (output.Successful as unknown[] | undefined)?.length ?? 0;
    if (command === "PutEventsCommand")
        return ((output.Entries as { EventId?: string; ErrorCode?: string }[] | undefined) ?? []).filter(
            (e) => e.EventId !== undefined && e.ErrorCode === undefined,
        ).length;
    return 0;
}

const local = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

/** Start the fault server (registered with `shutdown` before its start is awaited), failing the kind's batch calls. */
async function startFaultServer(options: DemoDestinationOptions, shutdown: Shutdown): Promise<AwsFaultServer> {
    const starting = startAwsFaultServer({
        seed: 7,
        faults: options.failRate > 0 ? { calls: [BATCH_CALLS[options.kind].fault(options.failRate)] } : {},
    });
    shutdown.add("fault-injecting server", () =>
        starting.then(
            (server) => server.stop(),
            () => undefined,
        ),
    );
    return starting;
}

/** A client of `kind` on `endpoint`, destroyed on the way out. */
function client<T extends { destroy(): void }>(
    make: new (config: typeof local & { endpoint: string }) => T,
    endpoint: string,
    shutdown: Shutdown,
    name: string,
): T {
    const made = new make({ endpoint, ...local });
    shutdown.add(name, () => made.destroy());
    return made;
}

/** The fauxqs DLQ every kind but an SQS destination on the fault server uses. */
async function fauxqsDlq(fauxqs: LocalFauxqs, runId: string): Promise<DemoDestination["dlq"]> {
    return { sqs: fauxqs.sqs, queue: await fauxqs.createQueue(`outbox-demo-dlq-${runId}`) };
}

function failing(options: DemoDestinationOptions, server: AwsFaultServer | undefined): string {
    return server === undefined || options.failRate === 0
        ? ""
        : `, ${Math.round(options.failRate * 100)}% of ${BATCH_CALLS[options.kind].command.replace(/Command$/, "")} calls failing at ${server.endpoint}`;
}

async function demoTopic(o: DemoDestinationOptions, fauxqs: LocalFauxqs, shutdown: Shutdown): Promise<DemoDestination> {
    const consumerQueue = await fauxqs.createQueue(`outbox-demo-consumer-${o.runId}`);
    const dlq = await fauxqsDlq(fauxqs, o.runId);
    const server = o.failRate > 0 ? await startFaultServer(o, shutdown) : undefined;
    const topicArn =
        server === undefined
            ? await fauxqs.createTopic(`outbox-demo-events-${o.runId}`)
            : server.createTopic(`outbox-demo-events-${o.runId}`);
    if (server === undefined) await fauxqs.subscribe(topicArn, consumerQueue.queueArn);
    const sns = server === undefined ? fauxqs.sns : client(SNSClient, server.endpoint, shutdown, "SNS client");
    return {
        kind: "sns",
        arn: topicArn,
        fifo: false,
        config: { sns, sqs: fauxqs.sqs, topicArn, dlqUrl: dlq.queue.queueUrl },
        client: sns,
        batchCommand: BATCH_CALLS.sns.command,
        consumer:
            server === undefined
                ? { sqs: fauxqs.sqs, queue: consumerQueue }
                : { recording: () => server.topicMessages(topicArn) },
        dlq,
        ...(server !== undefined ? { faultServer: server } : {}),
        where: `SNS -> SQS (fauxqs) at ${fauxqs.endpoint}${failing(o, server)}`,
        keepLines: [
            `  SNS/SQS   ${fauxqs.endpoint}  topic ${topicArn}`,
            `            consumer queue ${consumerQueue.queueUrl}`,
            `            DLQ ${dlq.queue.queueUrl}`,
        ],
    };
}

async function demoQueue(o: DemoDestinationOptions, fauxqs: LocalFauxqs, shutdown: Shutdown): Promise<DemoDestination> {
    const name = `outbox-demo-events-${o.runId}${o.keyed ? ".fifo" : ""}`;
    const server = o.failRate > 0 ? await startFaultServer(o, shutdown) : undefined;
    let queue: PolledQueue;
    let dlq: DemoDestination["dlq"];
    let sqs: SQSClient;
    if (server === undefined) {
        queue = await fauxqs.createQueue(name);
        dlq = await fauxqsDlq(fauxqs, o.runId);
        // The publisher's own client, so the summary counts its calls alone (not the consumer's receives).
        sqs = client(SQSClient, fauxqs.endpoint, shutdown, "SQS client");
    } else {
        const url = server.createQueue(name);
        const reader = client(SQSClient, server.endpoint, shutdown, "SQS reader");
        const dlqUrl = server.createQueue(`outbox-demo-dlq-${o.runId}`);
        queue = { queueUrl: url, queueArn: server.queueArn(url) };
        dlq = { sqs: reader, queue: { queueUrl: dlqUrl, queueArn: server.queueArn(dlqUrl) } };
        sqs = client(SQSClient, server.endpoint, shutdown, "SQS client");
    }
    return {
        kind: "sqs",
        arn: queue.queueArn,
        fifo: o.keyed,
        config: { sqs, queueArn: queue.queueArn, dlqUrl: dlq.queue.queueUrl, fifo: o.keyed },
        client: sqs,
        batchCommand: BATCH_CALLS.sqs.command,
        consumer: { sqs: server === undefined ? fauxqs.sqs : dlq.sqs, queue },
        dlq,
        ...(server !== undefined ? { faultServer: server } : {}),
        where:
            server === undefined
                ? `an SQS${o.keyed ? " FIFO" : ""} queue as the destination, and the DLQ, on SQS (fauxqs) at ${fauxqs.endpoint}`
                : `an SQS${o.keyed ? " FIFO" : ""} queue as the destination, and the DLQ, on the fault server${failing(o, server)}; S3 (fauxqs) at ${fauxqs.endpoint}`,
        keepLines: [
            `  SQS       ${server?.endpoint ?? fauxqs.endpoint}  destination queue ${queue.queueUrl} (${queue.queueArn})`,
            `            DLQ ${dlq.queue.queueUrl}`,
        ],
    };
}

async function demoBus(o: DemoDestinationOptions, fauxqs: LocalFauxqs, shutdown: Shutdown): Promise<DemoDestination> {
    const dlq = await fauxqsDlq(fauxqs, o.runId);
    const server = await startFaultServer(o, shutdown);
    const eventBusArn = server.createEventBus(`outbox-demo-events-${o.runId}`);
    const url = server.createQueue(`outbox-demo-consumer-${o.runId}`);
    server.routeBusToQueue(eventBusArn, url);
    const eventBridge = client(EventBridgeClient, server.endpoint, shutdown, "EventBridge client");
    return {
        kind: "eventbridge",
        arn: eventBusArn,
        fifo: false,
        config: { eventBridge, sqs: fauxqs.sqs, eventBusArn, dlqUrl: dlq.queue.queueUrl },
        client: eventBridge,
        batchCommand: BATCH_CALLS.eventbridge.command,
        consumer: {
            sqs: client(SQSClient, server.endpoint, shutdown, "SQS reader"),
            queue: { queueUrl: url, queueArn: server.queueArn(url) },
        },
        dlq,
        faultServer: server,
        where:
            `EventBridge bus at ${server.endpoint} (a stand-in: the fault server, since no maintained EventBridge emulator exists), ` +
            `routed to a queue there as a rule's SQS target; DLQ on SQS (fauxqs) at ${fauxqs.endpoint}${failing(o, server)}`,
        keepLines: [
            `  EventBridge ${server.endpoint} (stand-in)  bus ${eventBusArn}`,
            `            routed to queue ${url}`,
            `  SQS       ${fauxqs.endpoint}  DLQ ${dlq.queue.queueUrl}`,
        ],
    };
}

/**
 * Create the run's destination of `options.kind`, its consumer's queue and its DLQ; every client and server it
 * starts is registered with `shutdown`.
 *
 * @param options - The kind, `--fail-rate`, whether orders are keyed, and the run's id.
 * @param fauxqs - The running fauxqs (SNS, SQS and the payloads' S3).
 * @param shutdown - Stops what it starts.
 */
export async function startDemoDestination(
    options: DemoDestinationOptions,
    fauxqs: LocalFauxqs,
    shutdown: Shutdown,
): Promise<DemoDestination> {
    if (options.kind === "sqs") return demoQueue(options, fauxqs, shutdown);
    if (options.kind === "eventbridge") return demoBus(options, fauxqs, shutdown);
    return demoTopic(options, fauxqs, shutdown);
}

/** What the summary calls the destination's batch calls: `SNS calls`, `SQS calls`, `EventBridge calls`. */
export function callsLabel(kind: DestinationKind): string {
    return `${DESTINATION_LABELS[kind]} calls`;
}
