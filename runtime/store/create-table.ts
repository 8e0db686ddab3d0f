/**
 * CreateTable (reference §4.1): the whole schema from `runtime/schema.ts`, on-demand billing, then wait until the
 * table is ACTIVE and enable TTL on `ttl` (best effort). Idempotent: an existing table is success.
 *
 * @packageDocumentation
 */
import {
    CreateTableCommand,
    DescribeTableCommand,
    UpdateTimeToLiveCommand,
    type CreateTableCommandInput,
    type DescribeTableCommandOutput,
    type StreamSpecification,
    type UpdateTimeToLiveCommandInput,
} from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import {
    ATTRIBUTE_DEFINITIONS,
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
    type KeyElement,
} from "../schema";
import { isResourceInUse, isResourceNotFound, wrapAwsError } from "./aws-errors";
import { warnOncePerProcess } from "./observability";
import type { StoreContext } from "./options";

/** Options of `createTable`. */
export interface CreateTableOptions {
    /**
     * Enable a DynamoDB stream with the view the publisher needs (`NEW_IMAGE`), as the `Outbox` component
     * provisions it. @default true
     */
    readonly stream?: boolean;
    /** How long to wait for the table to become ACTIVE, ms on the store clock. @default 120000 */
    readonly waitTimeoutMs?: number;
}

/** How often the ACTIVE wait polls DescribeTable, ms. */
const WAIT_POLL_MS = 500;

function keySchema(elements: readonly KeyElement[]): { AttributeName: string; KeyType: "HASH" | "RANGE" }[] {
    return elements.map((e) => ({ AttributeName: e.attributeName, KeyType: e.keyType }));
}

/** The stream the publisher reads: enabled, with the view it needs (`NEW_IMAGE`). */
export function outboxStreamSpecification(): StreamSpecification {
    return { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE };
}

/** The UpdateTimeToLive input that turns TTL on, on the schema's `ttl` attribute. */
export function enableTtlInput(tableName: string): UpdateTimeToLiveCommandInput {
    return { TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } };
}

/** The CreateTable input for an outbox table, derived entirely from `runtime/schema.ts`. */
export function createTableInput(tableName: string, options: CreateTableOptions = {}): CreateTableCommandInput {
    return {
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        KeySchema: keySchema(PRIMARY_KEY),
        AttributeDefinitions: ATTRIBUTE_DEFINITIONS.map((a) => ({
            AttributeName: a.attributeName,
            AttributeType: a.attributeType,
        })),
        GlobalSecondaryIndexes: GLOBAL_SECONDARY_INDEXES.map((index) => ({
            IndexName: index.indexName,
            KeySchema: keySchema(index.keySchema),
            Projection: { ProjectionType: index.projectionType },
        })),
        ...(options.stream === false ? {} : { StreamSpecification: outboxStreamSpecification() }),
    };
}

async function waitActive(ctx: StoreContext, timeoutMs: number): Promise<void> {
    const deadline = ctx.clock.now() + timeoutMs;
    for (;;) {
        let status: string | undefined;
        try {
            const out = (await ctx.client.send(
                new DescribeTableCommand({ TableName: ctx.tableName }),
            )) as DescribeTableCommandOutput;
            status = out.Table?.TableStatus;
        } catch (err) {
            if (!isResourceNotFound(err))
                throw wrapAwsError(err, "wait for outbox table to exist failed", { table: ctx.tableName });
        }
        if (status === "ACTIVE") return;
        if (ctx.clock.now() >= deadline) {
            throw new OutboxError("TIMEOUT", "wait for outbox table to exist failed", {
                context: { table: ctx.tableName, status, timeoutMs },
            });
        }
        await ctx.clock.sleep(WAIT_POLL_MS);
    }
}

/**
 * Create the outbox table. An existing table is success at once (no wait, no TTL change), as in GoBridge.
 *
 * @throws OutboxError `create outbox table failed` / `wait for outbox table to exist failed`.
 */
export async function createTable(ctx: StoreContext, options: CreateTableOptions = {}): Promise<void> {
    ctx.logger.debug("dynamodboutbox: create_table", { table: ctx.tableName });
    try {
        await ctx.client.send(new CreateTableCommand(createTableInput(ctx.tableName, options)));
    } catch (err) {
        if (isResourceInUse(err)) return;
        throw wrapAwsError(err, "create outbox table failed", { table: ctx.tableName });
    }
    await waitActive(ctx, options.waitTimeoutMs ?? 120_000);
    try {
        await ctx.client.send(new UpdateTimeToLiveCommand(enableTtlInput(ctx.tableName)));
    } catch (err) {
        warnOncePerProcess(ctx.logger, "ttlEnableFailed", { table: ctx.tableName, error: String(err) });
    }
}
