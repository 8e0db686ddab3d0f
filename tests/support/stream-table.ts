/**
 * Test helpers for the local mapping: an outbox-shaped table with a NEW_IMAGE stream, built from schema.ts,
 * on the shared DynamoDB Local, a streams client that sees the same database, and the mapping that feeds a
 * publisher from an outbox table's stream as the component wires it.
 */
import {
    CreateTableCommand,
    PutItemCommand,
    TransactWriteItemsCommand,
    type AttributeValue,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";
import {
    ATTR,
    ATTRIBUTE_DEFINITIONS,
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    RECORD_SK_PREFIX,
    STREAM_FILTER_PATTERN,
    STREAM_VIEW_TYPE,
} from "../../runtime/schema";
import {
    startLocalEventSourceMapping,
    type LocalEventSourceMapping,
    type LocalEventSourceMappingOptions,
} from "../../runtime/testing/event-source-mapping";
import type { FilterPattern } from "../../runtime/testing/filter-pattern";
import { dynamoClient, dynamoEndpoint, uniqueTableName } from "./dynamodb";
import type { RecordedResource } from "./pulumi-mocks";

/** A fresh outbox table with a stream, and clients on it. */
export interface StreamTable {
    readonly tableName: string;
    readonly streamArn: string;
    readonly ddb: DynamoDBClient;
    readonly streams: DynamoDBStreamsClient;
}

const streamClients: DynamoDBStreamsClient[] = [];

/** A streams client on the shared DynamoDB Local (same fake credentials and region as the tables client). */
export async function streamsClient(): Promise<DynamoDBStreamsClient> {
    const client = new DynamoDBStreamsClient({
        endpoint: await dynamoEndpoint(),
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
    });
    streamClients.push(client);
    return client;
}

/** Destroy the streams clients made by {@link streamsClient}. */
export function destroyStreamsClients(): void {
    for (const c of streamClients.splice(0)) c.destroy();
}

/** What {@link outboxStreamMapping} lets a test choose: any mapping option, the streams client included. */
export type OutboxMappingOptions = Partial<
    Omit<LocalEventSourceMappingOptions, "dynamodbClient" | "tableName" | "handler">
>;

/**
 * Start the local mapping on outbox table `tableName`'s stream, invoking `handler` as the component's mapping
 * would: schema.ts's stream filter, batches of 100, a poll every 10 ms; `options` replace any of these (a
 * component's own filter and batch size, a retry limit) and add the rest. Stop it when done.
 *
 * @param ddb - The DynamoDB client that finds the table's stream.
 * @param tableName - The outbox table.
 * @param handler - What each batch is handed to (the publisher).
 * @param options - More mapping options; `streamsClient` defaults to a new {@link streamsClient}.
 * @default options `{}`
 */
export async function outboxStreamMapping(
    ddb: DynamoDBClient,
    tableName: string,
    handler: LocalEventSourceMappingOptions["handler"],
    options: OutboxMappingOptions = {},
): Promise<LocalEventSourceMapping> {
    return startLocalEventSourceMapping({
        filterPattern: STREAM_FILTER_PATTERN as unknown as FilterPattern,
        batchSize: 100,
        pollIntervalMs: 10,
        ...options,
        streamsClient: options.streamsClient ?? (await streamsClient()),
        dynamodbClient: ddb,
        tableName,
        handler,
    });
}

/**
 * The stream filter and batch size the component gave its event source mapping (a Pulumi mock resource), for a
 * local mapping that reads the stream as the deployed one would.
 *
 * @param mapping - The component's `aws:lambda/eventSourceMapping:EventSourceMapping` resource, as the mocks saw it.
 */
export function componentMappingOptions(mapping: Pick<RecordedResource, "inputs">): {
    filterPattern: FilterPattern;
    batchSize: number;
} {
    return {
        filterPattern: JSON.parse(mapping.inputs.filterCriteria.filters[0].pattern as string) as FilterPattern,
        batchSize: mapping.inputs.batchSize as number,
    };
}

/**
 * Run {@link outboxStreamMapping} until the stream is drained, then stop it (also when the drain fails).
 *
 * @param timeoutMs - How long the drain may take before it fails.
 * @default timeoutMs 30_000
 */
export async function drainOutboxStream(
    ddb: DynamoDBClient,
    tableName: string,
    handler: LocalEventSourceMappingOptions["handler"],
    options: OutboxMappingOptions = {},
    timeoutMs = 30_000,
): Promise<void> {
    const mapping = await outboxStreamMapping(ddb, tableName, handler, options);
    try {
        await mapping.drain({ timeoutMs });
    } finally {
        await mapping.stop();
    }
}

/** Create an outbox table (keys and indexes from schema.ts) with a NEW_IMAGE stream, or with none. */
export async function createStreamTable(options: { stream?: boolean } = {}): Promise<StreamTable> {
    const ddb = await dynamoClient();
    const tableName = uniqueTableName("esm");
    const out = await ddb.send(
        new CreateTableCommand({
            TableName: tableName,
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: ATTRIBUTE_DEFINITIONS.map((d) => ({
                AttributeName: d.attributeName,
                AttributeType: d.attributeType,
            })),
            KeySchema: PRIMARY_KEY.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
            GlobalSecondaryIndexes: GLOBAL_SECONDARY_INDEXES.map((index) => ({
                IndexName: index.indexName,
                KeySchema: index.keySchema.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
                Projection: { ProjectionType: index.projectionType },
            })),
            ...(options.stream === false
                ? {}
                : { StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }),
        }),
    );
    return { tableName, streamArn: out.TableDescription?.LatestStreamArn ?? "", ddb, streams: await streamsClient() };
}

/** The item of outbox record `n` of `partition` (only the keys and an id: the mapping does not read the rest). */
export function outboxItem(partition: string, n: number): Record<string, AttributeValue> {
    return {
        [ATTR.pk]: { S: partition },
        [ATTR.sk]: { S: `${RECORD_SK_PREFIX}${String(n).padStart(6, "0")}` },
        [ATTR.recordId]: { S: `rec-${partition}-${n}` },
        payload: { B: new Uint8Array([n % 256]) },
    };
}

/** Put outbox records 0..count-1 of `partition`, one PutItem each, in order. */
export async function putOutboxRecords(table: StreamTable, partition: string, count: number, from = 0): Promise<void> {
    for (let n = from; n < from + count; n += 1) {
        await table.ddb.send(new PutItemCommand({ TableName: table.tableName, Item: outboxItem(partition, n) }));
    }
}

/** One transaction: a business item and an outbox record, as the writer does. */
export async function writeOrderWithEvent(table: StreamTable, order: number): Promise<void> {
    await table.ddb.send(
        new TransactWriteItemsCommand({
            TransactItems: [
                {
                    Put: {
                        TableName: table.tableName,
                        Item: {
                            [ATTR.pk]: { S: `ORDER#${order}` },
                            [ATTR.sk]: { S: `ORDER#${order}` },
                            total: { N: "10" },
                        },
                    },
                },
                { Put: { TableName: table.tableName, Item: outboxItem(`ORDER#${order}`, order) } },
            ],
        }),
    );
}

/** The record id carried by a Lambda stream record of an outbox item. */
export function recordIdOf(record: { dynamodb: { NewImage?: Record<string, unknown> } }): string {
    const value = record.dynamodb.NewImage?.[ATTR.recordId] as { S?: string } | undefined;
    return value?.S ?? "";
}
