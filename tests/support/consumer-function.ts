/**
 * One `OutboxConsumer` function test's setup: the environment its serialized function runs with (the component's,
 * and the SDK's own variables aiming it at DynamoDB Local), orders the real publisher delivers, and the check that
 * each order's effect was applied once in the inbox's table.
 */
import * as assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import type { OutboxConsumerArgs } from "../../components/consumer";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";
import { startFauxqs, type LocalFauxqs } from "../../dev/emulators/fauxqs";
import { INBOX_ENV } from "../../runtime/inbox/lambda";
import { dynamoClient, dynamoEndpoint } from "./dynamodb";
import { preserveEnvironment } from "./local-environment";
import { createHarness, type Harness, type HarnessOptions } from "./runtime/harness";

/** The variables a consumer function test sets (for `preserveEnvironment`). */
export const CONSUMER_LAMBDA_ENVIRONMENT: readonly string[] = [
    INBOX_ENV.tableName,
    INBOX_ENV.consumer,
    "AWS_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_LAMBDA_LOG_LEVEL",
];

/**
 * The user's consumer of these tests: per event, one counter (`applied`) on the effect item `EFFECT#<outbox id>` in
 * the inbox's own table (the one the function's environment names), and `field` set to what `fromPayload` reads from the
 * payload. Pulumi serializes it into the function's archive, `field` and `fromPayload` with it.
 *
 * @param field - The effect item's attribute set from the payload.
 * @param fromPayload - The number the payload gives it.
 */
export function effectCounter(field: string, fromPayload: (payload: any) => number): OutboxConsumerArgs["consume"] {
    return (message) => [
        {
            Update: {
                TableName: process.env.OUTBOX_INBOX_TABLE_NAME!,
                Key: { PK: { S: `EFFECT#${message.outboxId}` }, SK: { S: "META" } },
                UpdateExpression: `ADD applied :one SET ${field} = :value`,
                ExpressionAttributeValues: {
                    ":one": { N: "1" },
                    ":value": { N: String(fromPayload(message.payload)) },
                },
            },
        },
    ];
}

/** One `describe`'s local world for a consumer function: fauxqs and the outbox harness, made when first asked for. */
export interface ConsumerWorld {
    /** fauxqs, started on the first call and shared by the describe's tests. */
    fauxqs(): Promise<LocalFauxqs>;
    /**
     * A fresh outbox harness (the one before it closed).
     * @param options - Its destination and settings. @default {}
     */
    harness(options?: HarnessOptions): Promise<Harness>;
}

/**
 * Registers, in the calling `describe`, the hooks of a consumer function test: before its tests the variables the
 * function's environment sets are kept; after them they are put back, the harness closed and fauxqs stopped.
 *
 * @param extraVariables - Further variables the tests set. @default []
 */
export function consumerWorld(extraVariables: readonly string[] = []): ConsumerWorld {
    let fauxqs: LocalFauxqs | undefined;
    let h: Harness | undefined;
    let restoreEnvironment: (() => void) | undefined;
    before(() => {
        restoreEnvironment = preserveEnvironment([...CONSUMER_LAMBDA_ENVIRONMENT, ...extraVariables]);
    });
    after(async () => {
        restoreEnvironment?.();
        await h?.close();
        await fauxqs?.stop();
    });
    return {
        fauxqs: async () => (fauxqs ??= await startFauxqs()),
        async harness(options = {}) {
            await h?.close();
            h = await createHarness(options);
            return h;
        },
    };
}

/**
 * Set the function's environment as the component set it, with the local region, credentials and DynamoDB Local's
 * endpoint, and the error log level.
 *
 * @param componentEnvironment - The function's `environment.variables`, as the component declared them.
 * @param extra - Further variables, applied last. @default {}
 */
export async function useConsumerEnvironment(
    componentEnvironment: Record<string, string>,
    extra: Record<string, string> = {},
): Promise<void> {
    Object.assign(process.env, componentEnvironment, {
        AWS_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        AWS_ENDPOINT_URL_DYNAMODB: await dynamoEndpoint(),
        AWS_LAMBDA_LOG_LEVEL: "ERROR",
        ...extra,
    });
}

/** Two orders written and published: their order IDs, and the outbox IDs the writer gave them, in order. */
export interface PublishedOrders {
    readonly orderIds: number[];
    readonly messageIds: string[];
}

/**
 * Write two `OrderPlaced` orders and let the real publisher deliver them (asserting it reports no failure).
 *
 * @param h - The harness whose outbox table the orders are written to.
 * @param overrides - The publisher's settings beside the harness's (its destination).
 * @param extra - Further payload fields and the messages' headers. @default {}
 */
export async function publishOrders(
    h: Harness,
    overrides: Parameters<Harness["publisher"]>[0],
    extra: { readonly payload?: Record<string, unknown>; readonly headers?: Record<string, string> } = {},
): Promise<PublishedOrders> {
    const orderIds = [Date.now(), Date.now() + 1];
    const { messageIds } = await h.writer.write({
        messages: orderIds.map((orderId) => ({
            partition: `ORDER#${orderId}`,
            type: "OrderPlaced",
            payload: { orderId, ...extra.payload },
            ...(extra.headers === undefined ? {} : { headers: extra.headers }),
        })),
    });
    assert.deepEqual(await h.publisher(overrides)(await h.streamEvent()), { batchItemFailures: [] });
    return { orderIds, messageIds };
}

/**
 * Each order's effect item (`EFFECT#<outbox ID>`) is in `inboxTable`, applied once and for its order.
 *
 * @param inboxTable - The table the consumer writes its effects to.
 * @param orders - What {@link publishOrders} published.
 */
export async function assertAppliedOnce(inboxTable: string, orders: PublishedOrders): Promise<void> {
    const ddb = await dynamoClient();
    for (let i = 0; i < orders.orderIds.length; i += 1) {
        const effect = await ddb.send(
            new GetItemCommand({
                TableName: inboxTable,
                Key: { PK: { S: `EFFECT#${orders.messageIds[i]}` }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        assert.deepEqual([effect.Item?.applied?.N, effect.Item?.orderId?.N], ["1", String(orders.orderIds[i])]);
    }
}
