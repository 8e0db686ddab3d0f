/**
 * One writer test's world: a fresh outbox table on the shared DynamoDB Local and an `OutboxWriter` on it at a fixed
 * clock; a message builder, a table scan and a way to hold a rejection for the assertions that read its context.
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Clock } from "../../../runtime/ports";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { dynamoClient } from "../dynamodb";
import { createOutboxTable } from "../runtime/table";

/** The writer tests' fixed instant. */
export const T0 = Date.UTC(2026, 10, 30, 5, 0, 0);

/** The writer's topic address in these tests. */
export const WRITER_ADDRESS = "arn:aws:sns:us-east-1:000000000000:t";

/** A clock fixed at `ms`; `sleep` returns at once. */
export const fixedClock = (ms = T0): Clock => ({ now: () => ms, sleep: async () => undefined });

/** A message on partition `P` of type `T`, with `over` laid on top. */
export const message = (over: Partial<OutboxMessage> = {}): OutboxMessage => ({
    partition: "P",
    type: "T",
    payload: { a: 1 },
    ...over,
});

/** The world of one writer test. */
export interface WriterWorld {
    readonly client: DynamoDBClient;
    readonly table: string;
    readonly writer: OutboxWriter;
}

/** A fresh outbox table and a writer on it (fixed clock at {@link T0}, {@link WRITER_ADDRESS}). */
export async function writerOnFreshTable(): Promise<WriterWorld> {
    const client = await dynamoClient();
    const table = await createOutboxTable(client);
    return {
        client,
        table,
        writer: new OutboxWriter({ client, tableName: table, clock: fixedClock(), address: WRITER_ADDRESS }),
    };
}

/** Every item of the table, one consistent scan page (the tests' tables are small). */
export async function scanAll(client: DynamoDBClient, table: string): Promise<Record<string, AttributeValue>[]> {
    const out = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return out.Items ?? [];
}

/** What `promise` rejected with, or `undefined` when it resolved: for assertions on the error's context. */
export function rejection(promise: Promise<unknown>): Promise<unknown> {
    return promise.then(
        () => undefined,
        (e: unknown) => e,
    );
}

/**
 * Write `count` one-message `OrderUpdated` transactions through `writer`, payload `{ n }`: message `n` in partition
 * `account` with ordering key `keyOf(n)` where that gives one, else unkeyed in partition `ORDER#<n mod orders>`.
 * The ids in write order, each with its key.
 *
 * @param layout - The keyed messages' partition and how many unkeyed partitions there are.
 * @default layout `{ account: "ACCOUNT#9", orders: 7 }`
 */
export async function writeKeyedAndKeyless(
    writer: OutboxWriter,
    count: number,
    keyOf: (n: number) => string | undefined,
    layout: { readonly account: string; readonly orders: number } = { account: "ACCOUNT#9", orders: 7 },
): Promise<{ id: string; key?: string }[]> {
    const written: { id: string; key?: string }[] = [];
    for (let n = 0; n < count; n += 1) {
        const key = keyOf(n);
        const { messageIds } = await writer.write({
            messages: [
                {
                    partition: key ? layout.account : `ORDER#${n % layout.orders}`,
                    type: "OrderUpdated",
                    payload: { n },
                    ...(key ? { orderingKey: key } : {}),
                },
            ],
        });
        written.push({ id: messageIds[0]!, ...(key ? { key } : {}) });
    }
    return written;
}
