/**
 * Complete and Release (reference §4.5, §4.6, §4.8): owner + version + status fenced conditional updates, addressed
 * through the key cache, falling back to the eventually consistent RecordIDIndex with a bounded retry that ends in
 * a transient TIMEOUT (J-N3: a permanent NOT_FOUND would let a just-claimed record be delivered twice).
 *
 * @packageDocumentation
 */
import type { AttributeValue, UpdateItemCommandInput } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { ttlSeconds } from "../record/codec";
import { ATTR, RECORD_ID_INDEX } from "../schema";
import { isConditionalCheckFailed, wrapAwsError } from "./aws-errors";
import { placeholders, recordIdIs } from "./expressions";
import { invalidTokenError } from "./fence-ops";
import type { StoreContext } from "./options";
import { query, updateItem } from "./send";
import { completeClaimedUpdate, isValidToken, releaseUpdate, type FencingToken } from "./transitions";

/**
 * Resolve a record id to its primary key: the key cache first, then RecordIDIndex, retried on the store clock.
 *
 * @throws OutboxError `TIMEOUT` (transient) when the index still has no entry after every attempt.
 */
export async function resolveRecordKey(ctx: StoreContext, recordId: string): Promise<Record<string, AttributeValue>> {
    const cached = ctx.keyCache.get(recordId);
    if (cached !== undefined) return cached;
    const key = recordIdIs(recordId);
    for (let attempt = 1; attempt <= ctx.resolveAttempts; attempt++) {
        let items;
        try {
            items = (
                await query(ctx, "resolve.record-id-query", {
                    TableName: ctx.tableName,
                    IndexName: RECORD_ID_INDEX.indexName,
                    KeyConditionExpression: key.text,
                    Limit: 1,
                    ...placeholders(key),
                })
            ).Items;
        } catch (err) {
            throw wrapAwsError(err, "outbox resolve record keys failed", { recordId });
        }
        const found = items?.[0];
        if (found !== undefined && found[ATTR.pk] !== undefined && found[ATTR.sk] !== undefined) {
            return { [ATTR.pk]: found[ATTR.pk], [ATTR.sk]: found[ATTR.sk] };
        }
        if (attempt < ctx.resolveAttempts) await ctx.clock.sleep(ctx.resolveBackoffMs);
    }
    throw new OutboxError("TIMEOUT", "outbox record key resolution timed out: RecordIDIndex GSI lag", {
        transient: true,
        context: { recordId, attempts: ctx.resolveAttempts },
    });
}

function requireIds(verb: string, recordIds: unknown): asserts recordIds is readonly string[] {
    if (!Array.isArray(recordIds) || recordIds.some((id) => typeof id !== "string" || id === "")) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `${verb}: recordIds must be an array of non-empty record ids, got ${JSON.stringify(recordIds)}`,
        );
    }
}

/** The STALE message of a failed condition, by verb. */
const CLAIM_MISMATCH = {
    complete: "claim version mismatch on complete",
    release: "claim mismatch on release",
} as const;

/** One claim-scoped conditional update of `recordId`: a failed condition means the token does not hold the claim. */
async function updateHeldClaim(
    ctx: StoreContext,
    verb: keyof typeof CLAIM_MISMATCH,
    recordId: string,
    token: FencingToken,
    input: UpdateItemCommandInput,
): Promise<void> {
    try {
        await updateItem(ctx, `${verb}.update`, input);
    } catch (err) {
        if (isConditionalCheckFailed(err)) {
            throw new OutboxError("STALE_FENCING_TOKEN", CLAIM_MISMATCH[verb], {
                cause: err,
                context: { recordId, givenVersion: token.version.toString(), owner: token.owner },
            });
        }
        throw wrapAwsError(err, `outbox ${verb} update failed`, { recordId, ownerId: token.owner });
    }
}

/**
 * {@link updateHeldClaim} of each record in order, addressed through {@link resolveRecordKey}; stops at the first
 * failure. `afterEach` runs once a record's update has succeeded.
 */
async function updateHeldClaims(
    ctx: StoreContext,
    verb: keyof typeof CLAIM_MISMATCH,
    recordIds: readonly string[],
    token: FencingToken,
    inputFor: (key: Record<string, AttributeValue>) => UpdateItemCommandInput,
    afterEach?: (recordId: string) => void,
): Promise<void> {
    for (const recordId of recordIds) {
        const key = await resolveRecordKey(ctx, recordId);
        await updateHeldClaim(ctx, verb, recordId, token, inputFor(key));
        afterEach?.(recordId);
    }
}

/**
 * Complete claimed records, one conditional update each, in order; stops at the first failure (earlier ones stay
 * completed). Does not read the FENCE row: a preempted owner may still complete a record nobody reclaimed.
 *
 * @throws OutboxError `STALE_FENCING_TOKEN` (invalid token, no I/O; or the claim is not held by the token),
 * `TIMEOUT` (transient) when the record id cannot be resolved yet.
 */
export async function complete(ctx: StoreContext, recordIds: readonly string[], token: FencingToken): Promise<void> {
    if (!isValidToken(token)) throw invalidTokenError("complete", token);
    requireIds("complete", recordIds);
    ctx.logger.debug("dynamodboutbox: complete", { count: recordIds.length });
    if (recordIds.length === 0) return;
    const nowMs = ctx.clock.now();
    const ttl = ttlSeconds(nowMs, ctx.compactionGraceSeconds);
    await updateHeldClaims(
        ctx,
        "complete",
        recordIds,
        token,
        (key) => completeClaimedUpdate(ctx.tableName, key, token, nowMs, ttl),
        (recordId) => ctx.keyCache.delete(recordId),
    );
}

/**
 * Release claimed records back to pending (claim-scoped, not idempotent), in order; stops at the first failure.
 * Counters, `claim_sort` and `has_expiry` are untouched; the key cache entry is kept.
 *
 * @throws OutboxError `STALE_FENCING_TOKEN` (invalid token, no I/O; or the claim is not held by the token),
 * `TIMEOUT` (transient) when the record id cannot be resolved yet.
 */
export async function release(ctx: StoreContext, recordIds: readonly string[], token: FencingToken): Promise<void> {
    if (!isValidToken(token)) throw invalidTokenError("release", token);
    requireIds("release", recordIds);
    ctx.logger.debug("dynamodboutbox: release", { count: recordIds.length });
    await updateHeldClaims(ctx, "release", recordIds, token, (key) => releaseUpdate(ctx.tableName, key, token));
}
