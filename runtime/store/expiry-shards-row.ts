/**
 * The expiry shards row: the high-water mark of the `expiryShards` writers have used on the table. A writer with
 * N > 1 raises it (raise-only, conditional) once per instance, before its first sharded record, so the mark is
 * stored before any record under shard N-1 exists. An expiry reader reads it at the start of each sweep and
 * queries `"1"` plus every shard below the larger of its own N and the mark: lowering N, or a reader deployed
 * with an older N than the writers', still finds every record. The cost is one consistent GetItem per sweep.
 *
 * @packageDocumentation
 */
import type {
    AttributeValue,
    GetItemCommandInput,
    GetItemCommandOutput,
    UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { HANDLER_LIMITS } from "../limits";
import { ATTR, EXPIRY_SHARDS_PK, EXPIRY_SHARDS_SK } from "../schema";
import { isConditionalCheckFailed, wrapAwsError } from "./aws-errors";

/** Sends one UpdateItem (the store's wrapper, or a raw client's). */
export type SendUpdateItem = (input: UpdateItemCommandInput) => Promise<unknown>;

/** Sends one GetItem (the store's wrapper, or a raw client's). */
export type SendGetItem = (input: GetItemCommandInput) => Promise<GetItemCommandOutput>;

/** The key of the expiry shards row. */
export function expiryShardsRowKey(): Record<string, AttributeValue> {
    return { [ATTR.pk]: { S: EXPIRY_SHARDS_PK }, [ATTR.sk]: { S: EXPIRY_SHARDS_SK } };
}

/**
 * Raise the table's expiry shards mark to `shards` unless it is already at least that. Nothing to do when
 * `shards` is 1: `"1"` is always read.
 *
 * @throws the classified SDK error (the caller must not write a sharded record then).
 */
export async function raiseExpiryShards(send: SendUpdateItem, tableName: string, shards: number): Promise<void> {
    if (shards <= 1) return;
    const mark = `#${ATTR.maxExpiryShards}`;
    try {
        await send({
            TableName: tableName,
            Key: expiryShardsRowKey(),
            UpdateExpression: `SET ${mark} = :shards`,
            ConditionExpression: `attribute_not_exists(${mark}) OR ${mark} < :shards`,
            ExpressionAttributeNames: { [mark]: ATTR.maxExpiryShards },
            ExpressionAttributeValues: { ":shards": { N: String(shards) } },
        });
    } catch (err) {
        // The mark is already at least `shards`: what the writer needs is there.
        if (isConditionalCheckFailed(err)) return;
        throw wrapAwsError(
            err,
            "outbox: raising the table's expiry shards mark failed; no sharded record was written",
            { table: tableName, expiryShards: shards },
        );
    }
}

/**
 * The table's expiry shards mark (consistent read): 0 when no writer with `expiryShards` > 1 ever wrote.
 *
 * @throws OutboxError `INVALID_CONFIG` when the row holds something other than a shard count; the classified SDK
 * error when it cannot be read.
 */
export async function readExpiryShards(send: SendGetItem, tableName: string): Promise<number> {
    const mark = `#${ATTR.maxExpiryShards}`;
    let out: GetItemCommandOutput;
    try {
        out = await send({
            TableName: tableName,
            Key: expiryShardsRowKey(),
            ConsistentRead: true,
            ProjectionExpression: mark,
            ExpressionAttributeNames: { [mark]: ATTR.maxExpiryShards },
        });
    } catch (err) {
        throw wrapAwsError(err, "outbox: reading the table's expiry shards mark failed", { table: tableName });
    }
    const raw = out.Item?.[ATTR.maxExpiryShards];
    if (raw === undefined) return 0;
    const value = raw.N === undefined ? NaN : Number(raw.N);
    const { min, max } = HANDLER_LIMITS.expiryShards;
    if (!Number.isInteger(value) || value < min || value > max) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `table "${tableName}": the expiry shards row (PK ${EXPIRY_SHARDS_PK}, SK ${EXPIRY_SHARDS_SK}) holds ${ATTR.maxExpiryShards} = ${JSON.stringify(raw)}; expected a number from ${min} to ${max}; set it to the largest expiryShards any writer of the table uses`,
            { context: { table: tableName } },
        );
    }
    return value;
}
