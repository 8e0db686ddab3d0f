/**
 * Expire (reference §4.7): pending-only, partition-scoped, lease-fenced sweep of the sparse ExpiryIndex, with an
 * in-memory resume cursor per partition (finding 14) and the partial count reported with any error (finding 15,
 * the conservation law).
 *
 * GoBridge queries `has_expiry = "1"` only. This sweep queries `"1"`, then each shard value `"1#0"` … below the
 * larger of the store's `expiryShards` and the table's expiry shards mark, one after the other, each from its own
 * resume cursor (keyed by partition and value). The cost is that many query pages at least per call, plus one
 * consistent GetItem of the mark. The first error still stops the call: a later value waits for the next call.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError, isOutboxError } from "../errors";
import { ttlSeconds } from "../record/codec";
import { expiryReadValues } from "../record/expiry-shard";
import { ATTR, EXPIRY_INDEX } from "../schema";
import { isTransactionCanceled, wrapAwsError } from "./aws-errors";
import { fencedCancellationError } from "./claim-one";
import { requirePartition } from "./claim";
import { and, expiringBefore, originIs, partitionIs, placeholders } from "./expressions";
import { acceptToken, invalidTokenError } from "./fence-ops";
import { STORE_DEFAULTS, type StoreContext } from "./options";
import { readExpiryShards } from "./expiry-shards-row";
import { getItem, query, transactWrite } from "./send";
import { expirePendingUpdate, fenceConditionCheck, isValidToken, type FencingToken } from "./transitions";

/** Options of one Expire call. */
export interface ExpireCallOptions {
    /** Stops the sweep between pages and records; the count so far travels with the error. @default undefined */
    readonly signal?: AbortSignal;
}

/**
 * How many records an Expire call expired before it failed: the `expired` count on the error it threw
 * (`0` when the error carries none).
 *
 * @param err - The error `expire` threw.
 */
export function expiredCountOf(err: unknown): number {
    const n = isOutboxError(err) ? err.context.expired : undefined;
    return typeof n === "number" ? n : 0;
}

function withCount(err: unknown, expired: number, partition: string): OutboxError {
    if (err instanceof OutboxError) {
        return new OutboxError(err.code, err.message, {
            transient: err.transient,
            cause: err.cause,
            context: { ...err.context, partition, expired },
        });
    }
    // The caller's abort is not reclassified; it is wrapped only so the partial count can travel with it.
    return new OutboxError("TIMEOUT", "outbox expire sweep aborted", {
        transient: true,
        cause: err,
        context: { partition, expired },
    });
}

function saveCursor(ctx: StoreContext, cursorKey: string, cursor: Record<string, AttributeValue>): void {
    if (ctx.expiryCursors.size >= STORE_DEFAULTS.maxExpiryCursors && !ctx.expiryCursors.has(cursorKey))
        ctx.expiryCursors.clear();
    ctx.expiryCursors.set(cursorKey, cursor);
}

async function expireOne(
    ctx: StoreContext,
    partition: string,
    key: Record<string, AttributeValue>,
    token: FencingToken,
    beforeMs: number,
    ttl: number,
): Promise<boolean> {
    try {
        await transactWrite(ctx, "expire.transaction", {
            TransactItems: [
                { ConditionCheck: fenceConditionCheck(ctx.tableName, partition, token.version) },
                { Update: expirePendingUpdate(ctx.tableName, key, beforeMs, ttl, originIs(ctx.origin)) },
            ],
        });
        return true;
    } catch (err) {
        const context = { partition, sk: key[ATTR.sk]?.S ?? "", owner: token.owner };
        if (!isTransactionCanceled(err)) throw wrapAwsError(err, "outbox expire update failed", context);
        const error = fencedCancellationError(ctx, err, "expire", partition, token, context);
        if (error === undefined) return false;
        throw error;
    }
}

/**
 * Expire the partition's pending records whose `expires_at` is before `beforeMs`. Claimed and terminal records are
 * never touched, nor are other partitions. An accepted call raises the fence even when nothing expires.
 *
 * @returns how many records were expired.
 * @throws OutboxError `STALE_FENCING_TOKEN` (invalid token with no I/O, a token below the fence, or a fence lost
 * mid-sweep) or the classified SDK error; `context.expired` (see {@link expiredCountOf}) holds the records
 * expired before the failure.
 */
export async function expire(
    ctx: StoreContext,
    beforeMs: number,
    partition: string,
    token: FencingToken,
    options: ExpireCallOptions = {},
): Promise<number> {
    if (!isValidToken(token)) {
        const err = invalidTokenError("expire", token);
        throw new OutboxError(err.code, err.message, {
            context: { givenOwner: err.context.owner, givenVersion: err.context.version },
        });
    }
    requirePartition("expire", partition);
    if (typeof beforeMs !== "number" || !Number.isSafeInteger(beforeMs)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `expire: before must be whole epoch milliseconds, got ${String(beforeMs)}; pass e.g. Date.now()`,
        );
    }
    await acceptToken(ctx, partition, token, "expire");
    const sweep: ExpireSweep = {
        partition,
        token,
        beforeMs,
        ttl: ttlSeconds(beforeMs, ctx.compactionGraceSeconds),
        signal: options.signal,
        expired: 0,
    };
    let values: string[];
    try {
        values = expiryReadValues(
            Math.max(
                ctx.expiryShards,
                await readExpiryShards((input) => getItem(ctx, "expire.shards-mark", input), ctx.tableName),
            ),
        );
    } catch (err) {
        throw withCount(err, sweep.expired, partition);
    }
    for (const value of values) await expireShardValue(ctx, sweep, value);
    return sweep.expired;
}

/** One Expire call's state: what it sweeps, and how many it expired so far (reported with any error). */
interface ExpireSweep {
    readonly partition: string;
    readonly token: FencingToken;
    readonly beforeMs: number;
    readonly ttl: number;
    readonly signal: AbortSignal | undefined;
    expired: number;
}

/** Sweep one ExpiryIndex value of the partition, page after page from its resume cursor. */
async function expireShardValue(ctx: StoreContext, sweep: ExpireSweep, value: string): Promise<void> {
    const { partition } = sweep;
    const key = expiringBefore(value, sweep.beforeMs);
    const filter = partitionIs(partition);
    const cursorKey = `${partition}\u0000${value}`;
    let start = ctx.expiryCursors.get(cursorKey) as Record<string, AttributeValue> | undefined;
    let pagesAdvanced = 0;
    const fail = (err: unknown, pageStart: Record<string, AttributeValue> | undefined): OutboxError => {
        // Resume from the failing page only if this sweep got past where it started; a resume point that itself
        // fails must not pin the sweep forever.
        if (pagesAdvanced > 0 && pageStart !== undefined) saveCursor(ctx, cursorKey, pageStart);
        else ctx.expiryCursors.delete(cursorKey);
        return withCount(err, sweep.expired, partition);
    };
    for (;;) {
        const pageStart = start;
        let page;
        try {
            sweep.signal?.throwIfAborted();
            page = await query(ctx, "expire.index-query", {
                TableName: ctx.tableName,
                IndexName: EXPIRY_INDEX.indexName,
                KeyConditionExpression: key.text,
                FilterExpression: filter.text,
                ExclusiveStartKey: pageStart,
                ...placeholders(and(key, filter)),
            });
        } catch (err) {
            throw fail(
                wrapAwsError(err, "outbox expire query failed", { partition, status: "pending", expiryShard: value }),
                pageStart,
            );
        }
        for (const item of page.Items ?? []) {
            try {
                sweep.signal?.throwIfAborted();
                if (
                    await expireOne(
                        ctx,
                        partition,
                        { [ATTR.pk]: item[ATTR.pk], [ATTR.sk]: item[ATTR.sk] },
                        sweep.token,
                        sweep.beforeMs,
                        sweep.ttl,
                    )
                )
                    sweep.expired++;
            } catch (err) {
                throw fail(err, pageStart);
            }
        }
        if (page.LastEvaluatedKey === undefined) {
            ctx.expiryCursors.delete(cursorKey);
            return;
        }
        start = page.LastEvaluatedKey;
        pagesAdvanced++;
    }
}
