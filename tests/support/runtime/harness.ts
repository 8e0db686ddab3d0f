/**
 * One publisher test's world: a fresh outbox table on the shared DynamoDB Local (stream on), the
 * AWS fault server with the destination (an SNS topic by default, or an SQS queue, or an EventBridge
 * bus: the server's stand-in) and a DLQ queue, real SDK clients on them, a writer, a hand-driven clock, and the
 * table's real stream records in Lambda's event shape.
 */
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
    DescribeStreamCommand,
    GetRecordsCommand,
    GetShardIteratorCommand,
    type DynamoDBStreamsClient,
} from "@aws-sdk/client-dynamodb-streams";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { dateFollowsClock, LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import {
    startAwsFaultServer,
    type EntryInfo,
    type FaultPlan,
    type RecordedMessage,
    type AwsFaultServer,
} from "../../../dev/emulators/aws-fault-server";
import { DESTINATION_SETTINGS, type DestinationKind } from "../../../runtime/destination/kind";
import { matchesFilterPattern, type FilterPattern } from "../../../runtime/testing/filter-pattern";
import {
    toLambdaStreamRecord,
    type LambdaStreamEvent,
    type LambdaStreamRecord,
} from "../../../runtime/testing/stream-event";
import type { Clock } from "../../../runtime/ports";
import { createPublisher, type PublisherConfig, type PublisherHandler } from "../../../runtime/relay/publisher";
import type { OutboxRecord } from "../../../runtime/record/codec";
import { STREAM_FILTER_PATTERN } from "../../../runtime/schema";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { dynamoClient } from "../dynamodb";
import { streamsClient } from "../stream-table";
import { createOutboxTable, scanItems, scanRecords, sparseIndexCounts } from "./table";

/** A clock the test moves by hand; `sleep` advances it instead of waiting. */
export interface ManualClock extends Clock {
    /** Move time forward. */
    advance(ms: number): void;
}

/** A manual clock starting at `startMs`. */
export function manualClock(startMs = Date.now()): ManualClock {
    let now = startMs;
    return {
        now: () => now,
        sleep: async (ms) => {
            now += ms;
        },
        advance: (ms) => {
            now += ms;
        },
    };
}

/** The world of one test. */
export interface Harness {
    readonly ddb: DynamoDBClient;
    readonly streams: DynamoDBStreamsClient;
    readonly tableName: string;
    readonly server: AwsFaultServer;
    readonly sns: SNSClient;
    readonly sqs: SQSClient;
    readonly eventBridge: EventBridgeClient;
    /** The SNS topic (the destination unless another kind was asked for). */
    readonly topicArn: string;
    /** The destination's kind. */
    readonly kind: DestinationKind;
    /** The destination's ARN: the topic's, the queue's or the bus's. */
    readonly destinationArn: string;
    /** The batch action of the destination's kind (`PublishBatch`, `SendMessageBatch`, `PutEvents`). */
    readonly batchAction: string;
    readonly dlqUrl: string;
    readonly clock: ManualClock;
    readonly writer: OutboxWriter;
    /** EMF lines written by handlers made with {@link Harness.publisher}. */
    readonly metricLines: string[];
    /** A publisher on this world; `overrides` replace any setting. */
    publisher(overrides?: Partial<PublisherConfig>): PublisherHandler;
    /** The common config of handlers on this world. */
    config(overrides?: Partial<PublisherConfig>): PublisherConfig;
    /** Every stream record written so far that passes the component's filter, in shard order, in Lambda's shape. */
    streamEvent(): Promise<LambdaStreamEvent>;
    /** Every stream record written so far, unfiltered, in shard order, in Lambda's shape. */
    streamRecords(): Promise<LambdaStreamRecord[]>;
    /** Every outbox record in the table, decoded (consistent scan). */
    records(): Promise<OutboxRecord[]>;
    /** Raw items (consistent scan). */
    items(): Promise<Record<string, import("@aws-sdk/client-dynamodb").AttributeValue>[]>;
    /** How many items ClaimIndex and ExpiryIndex hold. */
    indexCounts(): Promise<{ claim: number; expiry: number }>;
    /**
     * Messages the destination accepted, in order, read back the same way whatever its kind: the record id, the
     * payload's text, the attributes (on a bus: `outbox.id`, `outbox.type` and the headers from the detail), the
     * FIFO group and deduplication id, and whether the publisher got the answer (`false` after an injected
     * "accept then reset" or "accept then time out").
     */
    published(): {
        id: string;
        body: string;
        attributes: Record<string, string>;
        groupId?: string;
        dedupId?: string;
        acknowledged: boolean;
    }[];
    /** Messages in the DLQ, with their bodies parsed. */
    deadLetters(): { reason: string; recordId: string; body: Record<string, unknown> }[];
    /** Stop the SNS server and clients. */
    close(): Promise<void>;
}

/**
 * The record id a destination entry carries, whatever its kind: the `outbox.id` attribute (SNS, SQS), or the
 * PutEvents detail's `outbox.id` (EventBridge). For fault predicates.
 */
export function entryRecordId(entry: Pick<EntryInfo, "attributes" | "body" | "detailType">): string | undefined {
    const attribute = entry.attributes["outbox.id"]?.stringValue;
    if (attribute !== undefined || entry.detailType === undefined) return attribute;
    return (JSON.parse(entry.body) as { outbox?: { id?: string } }).outbox?.id;
}

/** A message the destination accepted, read back as an SNS or SQS message would be. */
function readBack(m: RecordedMessage): ReturnType<Harness["published"]>[number] {
    const group = {
        ...(m.messageGroupId !== undefined ? { groupId: m.messageGroupId } : {}),
        ...(m.messageDeduplicationId !== undefined ? { dedupId: m.messageDeduplicationId } : {}),
        acknowledged: m.acknowledged,
    };
    if (m.service !== "events") {
        return {
            id: m.attributes["outbox.id"]?.stringValue ?? "",
            body: m.body,
            attributes: Object.fromEntries(Object.entries(m.attributes).map(([k, v]) => [k, v.stringValue ?? ""])),
            ...group,
        };
    }
    const detail = JSON.parse(m.body) as {
        outbox: { id: string; type: string; source?: string; headers: Record<string, string> };
    };
    return {
        id: detail.outbox.id,
        body: JSON.stringify((JSON.parse(m.body) as { payload: unknown }).payload),
        attributes: {
            "outbox.id": detail.outbox.id,
            "outbox.type": detail.outbox.type,
            ...(detail.outbox.source !== undefined ? { "outbox.source": detail.outbox.source } : {}),
            ...detail.outbox.headers,
        },
        acknowledged: m.acknowledged,
    };
}

/** The batch action each kind's publisher calls. */
const BATCH_ACTIONS: Readonly<Record<DestinationKind, string>> = {
    sns: "PublishBatch",
    sqs: "SendMessageBatch",
    eventbridge: "PutEvents",
};

/** Options of {@link createHarness}. */
export interface HarnessOptions {
    /** The destination's kind. @default "sns" */
    readonly destination?: DestinationKind;
    /** Make the topic (or the queue) FIFO. @default false */
    readonly fifo?: boolean;
    /** Faults from the start. @default none */
    readonly faults?: FaultPlan;
}

/** Build a test world. */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
    const ddb = await dynamoClient();
    const streams = await streamsClient();
    const tableName = await createOutboxTable(ddb, "pub");
    const server = await startAwsFaultServer({ seed: 11, ...(options.faults ? { faults: options.faults } : {}) });
    const topicArn = server.createTopic(options.fifo ? "events.fifo" : "events");
    const dlqUrl = server.createQueue("outbox-dlq");
    const kind = options.destination ?? "sns";
    const destinationArn =
        kind === "sns"
            ? topicArn
            : kind === "sqs"
              ? server.queueArn(server.createQueue(options.fifo ? "destination.fifo" : "destination"))
              : server.createEventBus("events");
    // One attempt each: the fault server's answer reaches the code under test as it is, never retried by the SDK.
    const onServer = {
        endpoint: server.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
    };
    const sns = new SNSClient(onServer);
    const sqs = new SQSClient(onServer);
    const eventBridge = new EventBridgeClient(onServer);
    const clock = manualClock();
    // The hand-driven clock is the world's: DynamoDB's, as the sweeper reads it, moves with it.
    dateFollowsClock(ddb.middlewareStack, clock);
    const writer = new OutboxWriter({ client: ddb, tableName, clock, address: destinationArn });
    const metricLines: string[] = [];
    const streamArn = (await ddb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.LatestStreamArn ?? "";

    const config = (overrides: Partial<PublisherConfig> = {}): PublisherConfig => ({
        dynamodb: ddb,
        sns,
        sqs,
        eventBridge,
        tableName,
        [DESTINATION_SETTINGS[kind]]: destinationArn,
        dlqUrl,
        fifo: options.fifo ?? false,
        clock,
        writeMetrics: (line) => metricLines.push(line),
        ...overrides,
    });

    /** Every stream record of the table so far, unfiltered, in shard order. */
    async function streamRecords(): Promise<LambdaStreamRecord[]> {
        const shards =
            (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
        const records: LambdaStreamRecord[] = [];
        for (const shard of shards) {
            let iterator = (
                await streams.send(
                    new GetShardIteratorCommand({
                        StreamArn: streamArn,
                        ShardId: shard.ShardId,
                        ShardIteratorType: "TRIM_HORIZON",
                    }),
                )
            ).ShardIterator;
            for (let polls = 0; iterator && polls < 50; polls += 1) {
                const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
                for (const r of page.Records ?? []) records.push(toLambdaStreamRecord(r, streamArn));
                if ((page.Records ?? []).length === 0) break;
                iterator = page.NextShardIterator;
            }
        }
        records.sort((a, b) => (BigInt(a.dynamodb.SequenceNumber) < BigInt(b.dynamodb.SequenceNumber) ? -1 : 1));
        return records;
    }

    return {
        ddb,
        streams,
        tableName,
        server,
        sns,
        sqs,
        eventBridge,
        topicArn,
        kind,
        destinationArn,
        batchAction: BATCH_ACTIONS[kind],
        dlqUrl,
        clock,
        writer,
        metricLines,
        config,
        publisher: (overrides) => createPublisher(config(overrides)),
        async streamEvent() {
            return {
                Records: (await streamRecords()).filter((r) =>
                    matchesFilterPattern(STREAM_FILTER_PATTERN as unknown as FilterPattern, r),
                ),
            };
        },
        streamRecords,
        records: () => scanRecords(ddb, tableName),
        items: () => scanItems(ddb, tableName),
        indexCounts: () => sparseIndexCounts(ddb, tableName),
        published() {
            const accepted =
                kind === "sns"
                    ? server.topicMessages(topicArn)
                    : kind === "sqs"
                      ? server.queueMessages(destinationArn.split(":").at(-1)!)
                      : server.busEvents(destinationArn);
            return accepted.map(readBack);
        },
        deadLetters() {
            return server.queueMessages(dlqUrl).map((m) => {
                const body = JSON.parse(m.body) as Record<string, unknown>;
                return { reason: String(body.reason), recordId: String(body.recordId), body };
            });
        },
        async close() {
            sns.destroy();
            sqs.destroy();
            eventBridge.destroy();
            await server.stop();
        },
    };
}
