/**
 * Reading and raising the partition fence (reference §4.4.1, §4.4.2).
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { readBigInt } from "../record/codec";
import { fenceKey, fenceTtlSeconds, unmarshalFence } from "../record/fence";
import { ATTR } from "../schema";
import { isConditionalCheckFailed, wrapAwsError } from "./aws-errors";
import { partitionRecords, placeholders, projection } from "./expressions";
import type { StoreContext } from "./options";
import { getItem, queryPages, updateItem } from "./send";
import { fenceRaiseUpdate, type FencingToken } from "./transitions";

/**
 * The partition's fence: `max_claim_version` from the FENCE row (one consistent GetItem). When the attribute is
 * absent (no row, a Persist-only row, or a row TTL reaped), seed it once from the highest `claim_version` of the
 * partition's records and raise the fence to that.
 */
export async function readFence(ctx: StoreContext, partition: string): Promise<bigint> {
    let item: Record<string, AttributeValue> | undefined;
    try {
        item = (
            await getItem(ctx, "fence.read", {
                TableName: ctx.tableName,
                Key: fenceKey(partition),
                ConsistentRead: true,
            })
        ).Item;
    } catch (err) {
        throw wrapAwsError(err, "outbox fence read failed", { partition });
    }
    const fence = unmarshalFence(item);
    if (fence.maxClaimVersion !== undefined) return fence.maxClaimVersion;
    const seed = await coldSeed(ctx, partition);
    if (seed > 0n) await raiseFence(ctx, partition, seed);
    return seed;
}

async function coldSeed(ctx: StoreContext, partition: string): Promise<bigint> {
    const key = partitionRecords(partition);
    const versionOnly = projection(ATTR.claimVersion);
    let max = 0n;
    await queryPages(
        ctx,
        "fence.cold-seed",
        {
            TableName: ctx.tableName,
            KeyConditionExpression: key.text,
            ProjectionExpression: versionOnly.text,
            ConsistentRead: true,
            ...placeholders(key, versionOnly),
        },
        { message: "outbox max claim version query failed", context: { partition } },
        (page) => {
            for (const item of page.Items ?? []) {
                const version = readBigInt(item, ATTR.claimVersion);
                if (version > max) max = version;
            }
        },
    );
    return max;
}

/**
 * Raise the fence to `version`. Someone having raised it as high or higher already is fine (the failed condition
 * is swallowed; the FENCE ttl is then not refreshed, as in GoBridge).
 */
export async function raiseFence(ctx: StoreContext, partition: string, version: bigint): Promise<void> {
    try {
        await updateItem(
            ctx,
            "fence.raise",
            fenceRaiseUpdate(
                ctx.tableName,
                partition,
                version,
                fenceTtlSeconds(ctx.clock.now(), ctx.compactionGraceSeconds),
            ),
        );
    } catch (err) {
        if (isConditionalCheckFailed(err)) return;
        throw wrapAwsError(err, "outbox fence raise failed", { partition });
    }
}

/**
 * Fence read → stale check → fence raise, shared by Claim and Expire. The raise is sent only when the token is
 * above the fence read: at the fence's own version its condition (strictly below) cannot hold, so the write could
 * only fail, leaving the row as it was, and a failed conditional write still costs a write unit and a round trip.
 * A publisher's claims all carry one version, so without this every claim but a partition's first sent one
 * (`npm run bench:burst`: 0.32 such writes per keyed message, each a sequential step of the claim).
 *
 * @param verb - `claim` or `expire`, for the stale message.
 * @throws OutboxError `STALE_FENCING_TOKEN` when the token is below the fence.
 */
export async function acceptToken(
    ctx: StoreContext,
    partition: string,
    token: FencingToken,
    verb: "claim" | "expire",
): Promise<void> {
    const latest = await readFence(ctx, partition);
    if (token.version < latest) {
        throw new OutboxError("STALE_FENCING_TOKEN", `${verb} rejected: token version is stale`, {
            context: { partition, givenVersion: token.version.toString(), latestVersion: latest.toString() },
        });
    }
    if (token.version > latest) await raiseFence(ctx, partition, token.version);
}

/**
 * The STALE error for an invalid token, raised before any I/O.
 *
 * @param verb - The operation (`claim`, `complete`, `release`, `expire`).
 */
export function invalidTokenError(verb: string, token: FencingToken | undefined): OutboxError {
    const owner = typeof token?.owner === "string" ? token.owner : undefined;
    const version = typeof token?.version === "bigint" ? token.version.toString() : String(token?.version);
    return new OutboxError("STALE_FENCING_TOKEN", `${verb} rejected: invalid (zero-value) fencing token`, {
        context: { owner, version },
    });
}
