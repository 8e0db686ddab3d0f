/**
 * A fresh outbox table on the shared DynamoDB Local for one test, with the stream on.
 * TEMPORARY: builds CreateTable from runtime/schema.ts until the store's createTable lands.
 */
import { CreateTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ATTRIBUTE_DEFINITIONS, GLOBAL_SECONDARY_INDEXES, PRIMARY_KEY, STREAM_VIEW_TYPE } from "../../../runtime/schema";
import { uniqueTableName } from "../../support/dynamodb";

/** Create an outbox table and return its name. */
export async function createOutboxTable(client: DynamoDBClient, prefix = "outbox"): Promise<string> {
    const tableName = uniqueTableName(prefix);
    await client.send(
        new CreateTableCommand({
            TableName: tableName,
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: ATTRIBUTE_DEFINITIONS.map((a) => ({ AttributeName: a.attributeName, AttributeType: a.attributeType })),
            KeySchema: PRIMARY_KEY.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
            GlobalSecondaryIndexes: GLOBAL_SECONDARY_INDEXES.map((i) => ({
                IndexName: i.indexName,
                KeySchema: i.keySchema.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
                Projection: { ProjectionType: i.projectionType },
            })),
            StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE },
        }),
    );
    return tableName;
}
