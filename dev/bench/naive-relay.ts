/**
 * The baseline: the relay most teams write first, reproduced from the Streams outbox article
 * (`shared/seeds/003_a8e3fdfba96eb715.txt`, "El código"). It lives in bench/ only and is never shipped.
 *
 * Faithful to the article, on purpose:
 * - the writer puts the business item and an `OUTBOX#<id>` item holding the event in one transaction;
 * - the relay makes one Publish and one DeleteItem per record, in a loop;
 * - it carries on after a failure and reports the failed record's eventID (not its SequenceNumber), so
 *   Lambda cannot rewind to it and later records may be published before it.
 *
 * @packageDocumentation
 */
import {
    DeleteItemCommand,
    TransactWriteItemsCommand,
    type ConsumedCapacity,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { PublishCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { DemoOrder } from "../demo/demo-orders";

/** An order as the article's writer stores it. */
export interface NaiveOrder {
    readonly id: string;
    readonly eventId: string;
    readonly total: number;
    readonly customer: string;
    readonly createdAtMs: number;
}

/**
 * A demo order as the article's writer stores it: the order id is its event's id too, as in the outbox runs.
 *
 * @param order - The demo order.
 * @param createdAtMs - When it is written.
 */
export function naiveOrderOf(order: DemoOrder, createdAtMs: number): NaiveOrder {
    return { id: order.id, eventId: order.id, total: order.total, customer: order.customer, createdAtMs };
}

/** What the naive writer and relay consumed, for the benchmark. */
export interface NaiveCounters {
    ddbCalls: number;
    snsCalls: number;
    writeUnits: number;
}

function addCapacity(counters: NaiveCounters, consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    for (const c of ([] as ConsumedCapacity[]).concat(consumed ?? [])) counters.writeUnits += c.CapacityUnits ?? 0;
}

/** The article's `crearPedido`: the order and its event in one TransactWriteItems. */
export async function naiveWriteOrder(
    client: DynamoDBClient,
    tableName: string,
    order: NaiveOrder,
    counters: NaiveCounters,
): Promise<void> {
    const event = {
        tipo: "PedidoCreado",
        id: order.id,
        ocurrido: new Date(order.createdAtMs).toISOString(),
        payload: { total: order.total, cliente: order.customer },
    };
    counters.ddbCalls += 1;
    const out = await client.send(
        new TransactWriteItemsCommand({
            ReturnConsumedCapacity: "INDEXES",
            TransactItems: [
                {
                    Put: {
                        TableName: tableName,
                        Item: {
                            PK: { S: `PEDIDO#${order.id}` },
                            SK: { S: "META" },
                            total: { N: String(order.total) },
                            cliente: { S: order.customer },
                        },
                    },
                },
                {
                    Put: {
                        TableName: tableName,
                        Item: {
                            PK: { S: `PEDIDO#${order.id}` },
                            SK: { S: `OUTBOX#${order.eventId}` },
                            evento: { S: JSON.stringify(event) },
                        },
                    },
                },
            ],
        }),
    );
    addCapacity(counters, out.ConsumedCapacity);
}

/** A DynamoDB stream record in the Lambda event shape, as far as the naive relay reads it. */
export interface NaiveStreamRecord {
    readonly eventID?: string;
    readonly eventName?: string;
    readonly dynamodb?: { readonly NewImage?: Record<string, { S?: string }>; readonly SequenceNumber?: string };
}

/** The article's `publicarOutbox`: Publish then DeleteItem per record; on failure, carry on. */
export function createNaiveRelay(deps: {
    dynamodb: DynamoDBClient;
    sns: SNSClient;
    tableName: string;
    topicArn: string;
    counters: NaiveCounters;
}) {
    return async (event: {
        Records: NaiveStreamRecord[];
    }): Promise<{ batchItemFailures: { itemIdentifier: string }[] }> => {
        const failed: { itemIdentifier: string }[] = [];
        for (const r of event.Records) {
            if (r.eventName !== "INSERT") continue;
            const image = r.dynamodb?.NewImage;
            const pk = image?.PK?.S;
            const sk = image?.SK?.S;
            if (!pk || !sk?.startsWith("OUTBOX#")) continue;
            try {
                const evento = JSON.parse(image?.evento?.S ?? "{}") as { tipo?: string };
                deps.counters.snsCalls += 1;
                await deps.sns.send(
                    new PublishCommand({
                        TopicArn: deps.topicArn,
                        Message: image?.evento?.S ?? "{}",
                        MessageAttributes: { tipo: { DataType: "String", StringValue: evento.tipo ?? "unknown" } },
                    }),
                );
                deps.counters.ddbCalls += 1;
                const out = await deps.dynamodb.send(
                    new DeleteItemCommand({
                        TableName: deps.tableName,
                        Key: { PK: { S: pk }, SK: { S: sk } },
                        ReturnConsumedCapacity: "INDEXES",
                    }),
                );
                addCapacity(deps.counters, out.ConsumedCapacity);
            } catch {
                failed.push({ itemIdentifier: r.eventID ?? "" });
            }
        }
        return { batchItemFailures: failed };
    };
}
