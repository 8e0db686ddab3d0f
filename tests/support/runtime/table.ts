/**
 * A fresh outbox table on the shared DynamoDB Local for one test, created by the store (schema from
 * runtime/schema.ts, NEW_IMAGE stream on), and the reads the tests check it with.
 */
import { CreateTableCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { unmarshalRecord, type OutboxRecord } from "../../../runtime/record/codec";
import { ATTR, CLAIM_INDEX, EXPIRY_INDEX, RECORD_SK_PREFIX } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import { uniqueTableName } from "../dynamodb";

/** Create an outbox table and return its name. */
export async function createOutboxTable(client: DynamoDBClient, prefix = "outbox"): Promise<string> {
    const tableName = uniqueTableName(prefix);
    await new OutboxStore({ client, tableName }).createTable();
    return tableName;
}

/** Every item of the table (records, fence rows, business items), read consistently page by page. */
export async function scanItems(ddb: DynamoDBClient, tableName: string): Promise<Record<string, AttributeValue>[]> {
    const items: Record<string, AttributeValue>[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
        const page = await ddb.send(
            new ScanCommand({
                TableName: tableName,
                ConsistentRead: true,
                ...(start ? { ExclusiveStartKey: start } : {}),
            }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
    } while (start);
    return items;
}

/** The outbox record items of the table (SK starts with RECORD_SK_PREFIX). */
export async function scanRecordItems(
    ddb: DynamoDBClient,
    tableName: string,
): Promise<Record<string, AttributeValue>[]> {
    return (await scanItems(ddb, tableName)).filter((item) => item[ATTR.sk]?.S?.startsWith(RECORD_SK_PREFIX));
}

/** The outbox records of the table, decoded. */
export async function scanRecords(ddb: DynamoDBClient, tableName: string): Promise<OutboxRecord[]> {
    return (await scanRecordItems(ddb, tableName)).map((item) => unmarshalRecord(item));
}

/** How many items each sparse index holds: both are empty once every record is terminal. */
export async function sparseIndexCounts(
    ddb: DynamoDBClient,
    tableName: string,
): Promise<{ claim: number; expiry: number }> {
    const claim = await ddb.send(
        new ScanCommand({ TableName: tableName, IndexName: CLAIM_INDEX.indexName, Select: "COUNT" }),
    );
    // A Scan counts every has_expiry value: "1" and the expiry shards alike.
    const expiry = await ddb.send(
        new ScanCommand({ TableName: tableName, IndexName: EXPIRY_INDEX.indexName, Select: "COUNT" }),
    );
    return { claim: claim.Count ?? 0, expiry: expiry.Count ?? 0 };
}

/**
 * A consumer's own table on the shared DynamoDB Local, keyed `PK` (S) and, unless `sortKey` is false, `SK` (S):
 * where an inbox consumer writes its effects, and its inbox markers unless they get a table of their own.
 */
export async function createConsumerTable(
    client: DynamoDBClient,
    prefix = "consumer",
    options: { readonly sortKey?: boolean; readonly partitionKey?: string; readonly sortKeyName?: string } = {},
): Promise<string> {
    const tableName = uniqueTableName(prefix);
    const pk = options.partitionKey ?? "PK";
    const sk = options.sortKeyName ?? "SK";
    const withSort = options.sortKey !== false;
    await client.send(
        new CreateTableCommand({
            TableName: tableName,
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: [
                { AttributeName: pk, AttributeType: "S" },
                ...(withSort ? [{ AttributeName: sk, AttributeType: "S" as const }] : []),
            ],
            KeySchema: [
                { AttributeName: pk, KeyType: "HASH" },
                ...(withSort ? [{ AttributeName: sk, KeyType: "RANGE" as const }] : []),
            ],
        }),
    );
    return tableName;
}
