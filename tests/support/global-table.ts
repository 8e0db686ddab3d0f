/**
 * A two-region outbox world on the global table stand-in (`dev/emulators/global-table.ts`): one outbox table per
 * region, replicated both ways; a writer per region; each region's publisher (`createPublisher`) driven by the local
 * event source mapping on that region's own stream; one destination (an SNS topic on the AWS fault server) that
 * both regions publish to, so every publication of every event is counted in one place.
 */
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";
import { startAwsFaultServer, type AwsFaultServer } from "../../dev/emulators/aws-fault-server";
import { startTwoRegionStandIn, type Replicator, type TwoRegionStandIn } from "../../dev/emulators/global-table";
import { createPublisher, type PublisherConfig } from "../../runtime/relay/publisher";
import { createSweeper, type SweepResult, type SweeperConfig } from "../../runtime/relay/sweeper";
import { startLocalEventSourceMapping, type LocalEventSourceMapping } from "../../runtime/testing/event-source-mapping";
import type { FilterPattern } from "../../runtime/testing/filter-pattern";
import { STREAM_FILTER_PATTERN } from "../../runtime/schema";
import { OutboxStore } from "../../runtime/store";
import { OutboxWriter, type OutboxWriterOptions } from "../../runtime/writer/writer";

/** The two-region world of one test file. */
export interface GlobalWorld {
    readonly standIn: TwoRegionStandIn;
    readonly server: AwsFaultServer;
    readonly topicArn: string;
    readonly dlqUrl: string;
    readonly sns: SNSClient;
    readonly sqs: SQSClient;
    /** Create the outbox table in both regions and start replicating it. */
    table(name: string, delayMs?: number): Promise<{ tableName: string; replicator: Replicator }>;
    /** A writer in `region` on `tableName`. */
    writer(region: string, tableName: string, options?: Partial<OutboxWriterOptions>): OutboxWriter;
    /**
     * Start `region`'s publisher on its own stream through the local mapping, with `filter` (one pattern or the
     * list the component would provision) and publisher settings `overrides`.
     */
    relay(
        region: string,
        tableName: string,
        filter: FilterPattern | readonly FilterPattern[],
        overrides?: Partial<PublisherConfig>,
    ): Promise<LocalEventSourceMapping>;
    /** Run `region`'s sweeper once, with settings `overrides`. */
    sweep(region: string, tableName: string, overrides?: Partial<SweeperConfig>): Promise<SweepResult>;
    /** The record ids the DLQ holds, in order. */
    deadLetteredIds(): string[];
    /** How many times the destination accepted each record id. */
    publications(): Map<string, number>;
    /** The record ids the destination accepted, in order. */
    publishedIds(): string[];
    stop(): Promise<void>;
}

/** Today's single-region filter, as the component provisions it. */
export const SINGLE_REGION_FILTER = STREAM_FILTER_PATTERN as unknown as FilterPattern;

/** Start the world: two DynamoDB Locals and the AWS fault server. */
export async function startGlobalWorld(): Promise<GlobalWorld> {
    const standIn = await startTwoRegionStandIn();
    const server = await startAwsFaultServer({ seed: 37 });
    const topicArn = server.createTopic("events");
    const dlqUrl = server.createQueue("outbox-dlq");
    // One topic for both regions, so every publication is counted in one place; its clients are in its region.
    const clientOptions = { endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const sns = new SNSClient({ ...clientOptions, maxAttempts: 1 });
    const sqs = new SQSClient({ ...clientOptions, maxAttempts: 1 });
    const mappings: LocalEventSourceMapping[] = [];
    // What a region's publisher and sweeper share: its own table, the one topic and the one DLQ.
    const relayConfig = (region: string, tableName: string) => ({
        dynamodb: standIn.region(region).ddb,
        sns,
        sqs,
        tableName,
        topicArn,
        dlqUrl,
        writeMetrics: () => undefined,
    });
    const publishedIds = (): string[] =>
        server.topicMessages(topicArn).map((m) => m.attributes["outbox.id"]?.stringValue ?? "");
    return {
        standIn,
        server,
        topicArn,
        dlqUrl,
        sns,
        sqs,
        async table(name, delayMs = 0) {
            for (const r of standIn.regions) await new OutboxStore({ client: r.ddb, tableName: name }).createTable();
            return { tableName: name, replicator: await standIn.startReplicator(name, { delayMs }) };
        },
        writer(region, tableName, options = {}) {
            return new OutboxWriter({
                client: standIn.region(region).ddb,
                tableName,
                address: topicArn,
                ...options,
            });
        },
        async relay(region, tableName, filter, overrides = {}) {
            const r = standIn.region(region);
            const handler = createPublisher({ ...relayConfig(region, tableName), ...overrides });
            const mapping = await startLocalEventSourceMapping({
                streamsClient: r.streams,
                dynamodbClient: r.ddb,
                tableName,
                handler: (event) => handler(event),
                filterPattern: filter,
                batchSize: 100,
                maximumRetryAttempts: -1,
                retryBackoffMs: 5,
            });
            mappings.push(mapping);
            return mapping;
        },
        async sweep(region, tableName, overrides = {}) {
            return createSweeper({ ...relayConfig(region, tableName), ...overrides })();
        },
        deadLetteredIds() {
            return server
                .queueMessages(dlqUrl)
                .map((m) => String((JSON.parse(m.body) as { recordId?: unknown }).recordId));
        },
        publications() {
            const counts = new Map<string, number>();
            for (const id of publishedIds()) counts.set(id, (counts.get(id) ?? 0) + 1);
            return counts;
        },
        publishedIds,
        async stop() {
            await Promise.all(mappings.splice(0).map((m) => m.stop()));
            sns.destroy();
            sqs.destroy();
            await server.stop();
            await standIn.stop();
        },
    };
}

/** One written event: its id, its region, and its ordering key when it has one. */
export interface WrittenEvent {
    readonly id: string;
    readonly region: string;
    readonly partition: string;
    readonly key?: string;
}

/**
 * Write `count` events, alternating regions, one per transaction: every third keyed (two partitions, two keys each,
 * shared by both regions), the rest keyless over five partitions.
 */
export async function writeAcrossRegions(
    writers: Readonly<Record<string, OutboxWriter>>,
    count: number,
): Promise<WrittenEvent[]> {
    const regions = Object.keys(writers);
    const written: WrittenEvent[] = [];
    for (let n = 0; n < count; n += 1) {
        const region = regions[n % regions.length]!;
        const keyed = n % 3 === 0;
        // Keyed events of both regions share partitions and keys: the case where two regions' orders meet.
        const partition = keyed ? `ACCOUNT#${Math.floor(n / 6) % 2}` : `ORDER#${n % 5}`;
        const key = keyed ? `acct-${Math.floor(n / 12) % 2}` : undefined;
        const { messageIds } = await writers[region]!.write({
            messages: [{ partition, type: "T", payload: { n, region }, ...(key ? { orderingKey: key } : {}) }],
        });
        written.push({ id: messageIds[0]!, region, partition, ...(key ? { key } : {}) });
    }
    return written;
}
