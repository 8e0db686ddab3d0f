/**
 * Test helpers for the local mapping: an outbox-shaped table with a NEW_IMAGE stream, built from schema.ts,
 * on the shared DynamoDB Local, and a streams client that sees the same database.
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
    STREAM_VIEW_TYPE,
} from "../../runtime/schema";
import { dynamoClient, dynamoEndpoint, uniqueTableName } from "./dynamodb";

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
