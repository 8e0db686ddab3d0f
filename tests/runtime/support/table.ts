/**
 * A fresh outbox table on the shared DynamoDB Local for one test, created by the store (schema from
 * runtime/schema.ts, NEW_IMAGE stream on).
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxStore } from "../../../runtime/store";
import { uniqueTableName } from "../../support/dynamodb";

/** Create an outbox table and return its name. */
export async function createOutboxTable(client: DynamoDBClient, prefix = "outbox"): Promise<string> {
    const tableName = uniqueTableName(prefix);
    await new OutboxStore({ client, tableName }).createTable();
    return tableName;
}
