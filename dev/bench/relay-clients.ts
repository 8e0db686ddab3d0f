/**
 * The clients and resources one bench run of a relay needs on the local emulators, set up the same way for ours
 * and the naive relay: DynamoDB clients, the Streams client the local event source mapping reads with, the SNS and
 * SQS clients, the relay's table (ours or the article's), its topic and its DLQ. Used by the drain and the
 * end-to-end runs.
 *
 * @packageDocumentation
 */
import {
    CreateTableCommand,
    DeleteTableCommand,
    DescribeTableCommand,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { LOCAL_CREDENTIALS, LOCAL_REGION, localDynamoDbClient } from "../emulators/dynamodb-local";
import type { AwsFaultServer } from "../emulators/aws-fault-server";
import { ATTR, STREAM_VIEW_TYPE } from "../../runtime/schema";
import { OutboxStore } from "../../runtime/store";

/** Which relay. */
export type RelayKind = "ours" | "naive";

/** Options of {@link localRelayClients}. */
export interface LocalRelayClientsOptions {
    /** Which relay's table to create: ours (`OutboxStore.createTable`) or the article's. */
    readonly kind: RelayKind;
    /** DynamoDB endpoint. */
    readonly endpoint: string;
    /** The local SNS (and SQS). */
    readonly sns: AwsFaultServer;
    /** The table to create (and delete on {@link LocalRelayClients.close}). */
    readonly tableName: string;
    /** The topic to create; a name ending in `.fifo` makes a FIFO topic. */
    readonly topicName: string;
    /** The DLQ to create. */
    readonly queueName: string;
}

/** One run's clients, table, topic and DLQ. */
export interface LocalRelayClients {
    /** For the table's creation and deletion, and the mapping's DescribeTable. */
    readonly setup: DynamoDBClient;
    /** The writer's client (orders and their outbox records). */
    readonly writer: DynamoDBClient;
    /** The relay's client. */
    readonly relay: DynamoDBClient;
    /** The local event source mapping's client. */
    readonly streams: DynamoDBStreamsClient;
    /** The relay's SNS client. */
    readonly sns: SNSClient;
    /** The relay's SQS client (its DLQ). */
    readonly sqs: SQSClient;
    /** The table, created and ACTIVE. */
    readonly tableName: string;
    /** The topic's ARN. */
    readonly topicArn: string;
    /** The DLQ's URL. */
    readonly dlqUrl: string;
    /** Delete the table (leaving the emulator as it was found) and destroy every client. Never throws. */
    close(): Promise<void>;
}

/** The article's table: the key and a NEW_IMAGE stream, nothing else (no GSIs: its relay needs none). Resolves once it is ACTIVE. */
export async function createNaiveTable(client: DynamoDBClient, tableName: string): Promise<void> {
    await client.send(
        new CreateTableCommand({
            TableName: tableName,
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: [
                { AttributeName: ATTR.pk, AttributeType: "S" },
                { AttributeName: ATTR.sk, AttributeType: "S" },
            ],
            KeySchema: [
                { AttributeName: ATTR.pk, KeyType: "HASH" },
                { AttributeName: ATTR.sk, KeyType: "RANGE" },
            ],
            StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE },
        }),
    );
    for (;;) {
        const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
        if (out.Table?.TableStatus === "ACTIVE") return;
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

/**
 * Create one run's clients on the local endpoints, then its table, topic and DLQ. The clients are destroyed
 * again if the table cannot be created.
 *
 * @param options - The relay, the endpoints and the names.
 */
export async function localRelayClients(options: LocalRelayClientsOptions): Promise<LocalRelayClients> {
    const aws = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const setup = localDynamoDbClient(options.endpoint);
    const writer = localDynamoDbClient(options.endpoint);
    const relay = localDynamoDbClient(options.endpoint);
    const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, ...aws });
    const sns = new SNSClient({ endpoint: options.sns.endpoint, ...aws });
    const sqs = new SQSClient({ endpoint: options.sns.endpoint, ...aws });
    const close = async (): Promise<void> => {
        // A table that is already gone (or never made) is no reason to fail the run's report.
        await setup.send(new DeleteTableCommand({ TableName: options.tableName })).catch(() => undefined);
        for (const client of [setup, writer, relay, streams, sns, sqs]) client.destroy();
    };
    try {
        if (options.kind === "ours")
            await new OutboxStore({ client: setup, tableName: options.tableName }).createTable();
        else await createNaiveTable(setup, options.tableName);
    } catch (err) {
        await close();
        throw err;
    }
    const topicArn = options.sns.createTopic(options.topicName);
    const dlqUrl = options.sns.createQueue(options.queueName);
    return { setup, writer, relay, streams, sns, sqs, tableName: options.tableName, topicArn, dlqUrl, close };
}
