/**
 * What the docs' examples need to run as a reader would run them on DynamoDB Local: the SDK module they import, with
 * its client aimed at DynamoDB Local, and the tables they write to.
 */
import * as dynamodbSdk from "@aws-sdk/client-dynamodb";
import { CreateTableCommand, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";
import { dynamoClient, dynamoEndpoint } from "./dynamodb";

/** `@aws-sdk/client-dynamodb` as the examples import it, with clients that reach DynamoDB Local. */
export async function localDynamoDbModule(): Promise<Record<string, unknown>> {
    const endpoint = await dynamoEndpoint();
    class DynamoDBClient extends dynamodbSdk.DynamoDBClient {
        constructor(config: DynamoDBClientConfig = {}) {
            super({ ...config, endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
        }
    }
    return { ...dynamodbSdk, DynamoDBClient };
}

/** Create a table keyed on one attribute (and a string sort key), unless a previous run on the same DynamoDB left it. */
export async function ensureTable(name: string, key: string, type: "S" | "N", sortKey?: string): Promise<void> {
    const client = await dynamoClient();
    const attributes = [
        { AttributeName: key, AttributeType: type },
        ...(sortKey ? [{ AttributeName: sortKey, AttributeType: "S" as const }] : []),
    ];
    const schema = [
        { AttributeName: key, KeyType: "HASH" as const },
        ...(sortKey ? [{ AttributeName: sortKey, KeyType: "RANGE" as const }] : []),
    ];
    try {
        await client.send(
            new CreateTableCommand({
                TableName: name,
                AttributeDefinitions: attributes,
                KeySchema: schema,
                BillingMode: "PAY_PER_REQUEST",
            }),
        );
    } catch (err) {
        if ((err as Error).name !== "ResourceInUseException") throw err;
    }
}
