/**
 * A local SNS + SQS (+ S3) for `npm start` and the end-to-end tests: fauxqs 2 (SNS, SQS and S3 in one emulator;
 * Node >=22.5), in process, on loopback, driven through the real `@aws-sdk/client-sns`, `client-sqs` and
 * `client-s3` (path-style: the SDK's default virtual-hosted bucket names would need `*.localhost` in DNS).
 *
 * fauxqs is ESM-only and this package compiles to CommonJS, where TypeScript turns `import()` into
 * `require()`; loading it through `new Function` keeps a real dynamic import.
 *
 * For injected faults use `startAwsFaultServer` (dev/emulators/aws-fault-server/) instead: fauxqs has none
 * (docs/local-testing.md says why both stay).
 *
 * @packageDocumentation
 */
import { CreateTopicCommand, SNSClient, SubscribeCommand } from "@aws-sdk/client-sns";
import {
    CreateQueueCommand,
    DeleteMessageBatchCommand,
    GetQueueAttributesCommand,
    ReceiveMessageCommand,
    SQSClient,
} from "@aws-sdk/client-sqs";
import { S3Client } from "@aws-sdk/client-s3";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "./dynamodb-local";

/** The part of fauxqs's `FauxqsServer` this wrapper uses (typed here: its own .d.ts files import `.ts` paths). */
interface FauxqsServerHandle {
    readonly address: string;
    stop(): Promise<void>;
}

interface FauxqsModule {
    startFauxqs(options: {
        port?: number;
        logger?: boolean;
        host?: string;
        defaultRegion?: string;
    }): Promise<FauxqsServerHandle>;
}

/** A message received from a queue. */
export interface ReceivedMessage {
    /** The SQS message id. */
    readonly messageId: string;
    /** The body: the raw published message with raw delivery, else the SNS envelope JSON. */
    readonly body: string;
    /** String (and Number) message attributes by name. */
    readonly attributes: Readonly<Record<string, string>>;
}

/** Options of {@link LocalFauxqs.receiveAll}. */
export interface ReceiveAllOptions {
    /** Keep polling until at least this many messages arrived (or `timeoutMs` passed). @default 0 (stop at the first empty receive) */
    readonly expected?: number;
    /** Give up waiting for `expected` after this many ms, returning what arrived. @default 10000 */
    readonly timeoutMs?: number;
    /** Delete what was received, so the next call sees only new messages. @default true */
    readonly delete?: boolean;
}

/** Options of {@link LocalFauxqs.subscribe}. */
export interface SubscribeOptions {
    /** Deliver the published message as is, with its attributes as SQS attributes. @default true */
    readonly rawMessageDelivery?: boolean;
    /** An SNS filter policy (fauxqs honours it). @default undefined (every message) */
    readonly filterPolicy?: Readonly<Record<string, unknown>>;
}

/** A running fauxqs and clients on it. */
export interface LocalFauxqs {
    /** `http://127.0.0.1:<port>`: the endpoint of the SNS, SQS and S3 clients. */
    readonly endpoint: string;
    /** An SNS client on it (local credentials and region). */
    readonly sns: SNSClient;
    /** An SQS client on it (local credentials and region). */
    readonly sqs: SQSClient;
    /** An S3 client on it (local credentials and region, path-style bucket addressing). */
    readonly s3: S3Client;
    /** Create a topic (a `.fifo` name makes a FIFO topic). Returns its ARN. */
    createTopic(name: string): Promise<string>;
    /**
     * Create a queue (a `.fifo` name makes a FIFO queue), with optional queue attributes (e.g. `RedrivePolicy`,
     * which fauxqs honours on receive). Returns its URL and ARN.
     */
    createQueue(
        name: string,
        attributes?: Readonly<Record<string, string>>,
    ): Promise<{ readonly queueUrl: string; readonly queueArn: string }>;
    /** Subscribe a queue to a topic. Returns the subscription ARN. */
    subscribe(topicArn: string, queueArn: string, options?: SubscribeOptions): Promise<string>;
    /** Receive messages from a queue until it is empty or `expected` arrived. */
    receiveAll(queueUrl: string, options?: ReceiveAllOptions): Promise<ReceivedMessage[]>;
    /** Destroy the clients and stop the server. Idempotent. */
    stop(): Promise<void>;
}

/** Options of {@link startFauxqs}. */
export interface StartFauxqsOptions {
    /** The port. @default a free port */
    readonly port?: number;
}

const dynamicImport = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;

/** The one warning Node 22 prints when fauxqs loads `node:sqlite` (its store), which says nothing about this code. */
const SQLITE_EXPERIMENTAL = "SQLite is an experimental feature";

/** fauxqs, loaded with Node's SQLite ExperimentalWarning left unsaid; every other warning passes through. */
async function importFauxqs(): Promise<FauxqsModule> {
    const emitWarning = process.emitWarning;
    process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
        if (String(typeof warning === "string" ? warning : warning.message).startsWith(SQLITE_EXPERIMENTAL)) return;
        (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
    } as typeof process.emitWarning;
    try {
        return (await dynamicImport("fauxqs")) as FauxqsModule;
    } finally {
        process.emitWarning = emitWarning;
    }
}

/**
 * Start fauxqs on loopback and build SNS, SQS and S3 clients on it.
 *
 * @param options - See {@link StartFauxqsOptions}.
 */
export async function startFauxqs(options: StartFauxqsOptions = {}): Promise<LocalFauxqs> {
    const fauxqs = await importFauxqs();
    const server = await fauxqs.startFauxqs({
        port: options.port ?? 0,
        host: "127.0.0.1",
        logger: false,
        defaultRegion: LOCAL_REGION,
    });
    const endpoint = server.address.replace("0.0.0.0", "127.0.0.1").replace("localhost", "127.0.0.1");
    const clientConfig = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const sns = new SNSClient(clientConfig);
    const sqs = new SQSClient(clientConfig);
    const s3 = new S3Client({ ...clientConfig, forcePathStyle: true });
    let stopping: Promise<void> | undefined;

    async function receiveAll(queueUrl: string, receiveOptions: ReceiveAllOptions = {}): Promise<ReceivedMessage[]> {
        const expected = receiveOptions.expected ?? 0;
        const deadline = Date.now() + (receiveOptions.timeoutMs ?? 10_000);
        const out: ReceivedMessage[] = [];
        for (;;) {
            const batch = await sqs.send(
                new ReceiveMessageCommand({
                    QueueUrl: queueUrl,
                    MaxNumberOfMessages: 10,
                    WaitTimeSeconds: 0,
                    MessageAttributeNames: ["All"],
                    VisibilityTimeout: 30,
                }),
            );
            const messages = batch.Messages ?? [];
            for (const m of messages) {
                const attributes: Record<string, string> = {};
                for (const [name, value] of Object.entries(m.MessageAttributes ?? {})) {
                    if (value.StringValue !== undefined) attributes[name] = value.StringValue;
                }
                out.push({ messageId: m.MessageId ?? "", body: m.Body ?? "", attributes });
            }
            if (messages.length > 0 && receiveOptions.delete !== false) {
                await sqs.send(
                    new DeleteMessageBatchCommand({
                        QueueUrl: queueUrl,
                        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
                    }),
                );
            }
            if (messages.length > 0) continue;
            if (out.length >= expected || Date.now() >= deadline) return out;
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
    }

    return {
        endpoint,
        sns,
        sqs,
        s3,
        async createTopic(name: string): Promise<string> {
            const fifo = name.endsWith(".fifo");
            const out = await sns.send(
                new CreateTopicCommand({ Name: name, ...(fifo ? { Attributes: { FifoTopic: "true" } } : {}) }),
            );
            return out.TopicArn as string;
        },
        async createQueue(name: string, queueAttributes: Readonly<Record<string, string>> = {}) {
            const fifo = name.endsWith(".fifo");
            const given: Record<string, string> = { ...(fifo ? { FifoQueue: "true" } : {}), ...queueAttributes };
            const created = await sqs.send(
                new CreateQueueCommand({
                    QueueName: name,
                    ...(Object.keys(given).length > 0 ? { Attributes: given } : {}),
                }),
            );
            const queueUrl = created.QueueUrl as string;
            const attributes = await sqs.send(
                new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
            );
            return { queueUrl, queueArn: attributes.Attributes?.QueueArn as string };
        },
        async subscribe(topicArn: string, queueArn: string, subscribeOptions: SubscribeOptions = {}): Promise<string> {
            const attributes: Record<string, string> = {};
            if (subscribeOptions.rawMessageDelivery !== false) attributes.RawMessageDelivery = "true";
            if (subscribeOptions.filterPolicy !== undefined)
                attributes.FilterPolicy = JSON.stringify(subscribeOptions.filterPolicy);
            const out = await sns.send(
                new SubscribeCommand({
                    TopicArn: topicArn,
                    Protocol: "sqs",
                    Endpoint: queueArn,
                    Attributes: attributes,
                    ReturnSubscriptionArn: true,
                }),
            );
            return out.SubscriptionArn as string;
        },
        receiveAll,
        stop(): Promise<void> {
            stopping ??= (async () => {
                sns.destroy();
                sqs.destroy();
                s3.destroy();
                await server.stop();
            })();
            return stopping;
        },
    };
}
