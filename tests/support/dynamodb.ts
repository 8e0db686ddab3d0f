/**
 * The test run's DynamoDB Local: started lazily on first use (so component-only runs never start Java),
 * shared by every test file, stopped by the root hook at the end. `DYNAMODB_ENDPOINT` reuses a running one.
 * Each test makes its own table with {@link uniqueTableName}.
 */
import { CreateTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { localDynamoDbClient, startDynamoDbLocal, type DynamoDbLocal } from "../../dev/emulators/dynamodb-local";

let running: Promise<DynamoDbLocal> | undefined;
const clients: DynamoDBClient[] = [];

/** The endpoint of the shared DynamoDB Local, started on first call. */
export async function dynamoEndpoint(): Promise<string> {
    const external = process.env.DYNAMODB_ENDPOINT;
    if (external) return external;
    running ??= startDynamoDbLocal();
    return (await running).endpoint;
}

/** A client on the shared DynamoDB Local; destroyed at the end of the run. */
export async function dynamoClient(): Promise<DynamoDBClient> {
    const client = localDynamoDbClient(await dynamoEndpoint());
    clients.push(client);
    return client;
}

let tableCounter = 0;
/** A table name no other test uses. */
export function uniqueTableName(prefix = "outbox"): string {
    tableCounter += 1;
    return `${prefix}-${process.pid}-${Date.now().toString(36)}-${tableCounter}`;
}

/** Stop DynamoDB Local if this run started it. Called by the root hook. */
export async function stopDynamo(): Promise<void> {
    for (const c of clients.splice(0)) c.destroy();
    const r = running;
    running = undefined;
    if (r) await (await r).stop();
}

/** A fresh application table beside the outbox (string `pk` and `sk`, on demand), named {@link uniqueTableName}. */
export async function appTable(client: DynamoDBClient): Promise<string> {
    const TableName = uniqueTableName("app");
    await client.send(
        new CreateTableCommand({
            TableName,
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: [
                { AttributeName: "pk", AttributeType: "S" },
                { AttributeName: "sk", AttributeType: "S" },
            ],
            KeySchema: [
                { AttributeName: "pk", KeyType: "HASH" },
                { AttributeName: "sk", KeyType: "RANGE" },
            ],
        }),
    );
    return TableName;
}
