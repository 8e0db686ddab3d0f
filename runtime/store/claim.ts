/**
 * Claim (reference §4.4): token check with no I/O, fence read → stale check → fence raise, then the ClaimIndex
 * fast path (oldest first, O(limit), finding c13-claim-quadratic), handing off to the ConsistentRead scan path as
 * soon as an ordering key shows up.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { MAX_CLAIM_OWNER_BYTES, utf8Length } from "../record/item-size";
import { readString, type OutboxRecord } from "../record/codec";
import { ATTR, CLAIM_INDEX } from "../schema";
import { wrapAwsError } from "./aws-errors";
import { claimBatch, skipped, type ClaimCallOptions } from "./claim-batch";
import type { ClaimClock } from "./claim-one";
import { claimByScan } from "./claim-scan";
import { and, claimable, originIs, partitionIs, placeholders } from "./expressions";
import { acceptToken, invalidTokenError } from "./fence-ops";
import { warnOncePerProcess } from "./observability";
import { STORE_DEFAULTS, type StoreContext } from "./options";
import { query } from "./send";
import { isValidToken, type FencingToken } from "./transitions";
import { truncatedClaim } from "./truncation";

/** The outcome of the index path: records claimed, or a hand-off to the scan path. */
type IndexOutcome = { readonly claimed: OutboxRecord[] } | { readonly handoff: true };

/** Check a partition argument before any I/O. */
export function requirePartition(verb: string, partition: unknown): asserts partition is string {
    if (typeof partition !== "string" || partition === "") {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `${verb}: partition must be a non-empty string, got ${JSON.stringify(partition)}; pass the records' PK, e.g. "ORDER#1001"`,
        );
    }
}

async function claimByIndex(
    ctx: StoreContext,
    partition: string,
    token: FencingToken,
    limit: number,
    at: ClaimClock,
    options: ClaimCallOptions,
): Promise<IndexOutcome> {
    const key = partitionIs(partition);
    const origin = originIs(ctx.origin);
    const filter =
        origin === undefined ? claimable(token.version, at.staleMs) : and(claimable(token.version, at.staleMs), origin);
    const claimed: OutboxRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    for (;;) {
        let page;
        try {
            options.signal?.throwIfAborted();
            page = await query(ctx, "claim.index-query", {
                TableName: ctx.tableName,
                IndexName: CLAIM_INDEX.indexName,
                KeyConditionExpression: key.text,
                FilterExpression: filter.text,
                ScanIndexForward: true,
                Limit: Math.min(limit, STORE_DEFAULTS.claimIndexPageLimit),
                ExclusiveStartKey: start,
                ...placeholders(and(key, filter)),
            });
        } catch (err) {
            return {
                claimed: truncatedClaim(
                    ctx,
                    partition,
                    claimed,
                    wrapAwsError(err, "outbox claim index query failed", { partition }),
                    options,
                ),
            };
        }
        // Vet the page before claiming any of it: only the first `want` items matter, the rest are younger.
        const candidates = (page.Items ?? [])
            .filter((item) => !skipped(options.skip, item))
            .slice(0, limit - claimed.length);
        if (candidates.some((item) => (readString(item, ATTR.orderingKey) ?? "") !== "")) {
            warnOncePerProcess(ctx.logger, "orderingBypass", {
                partition_key: partition,
                index: CLAIM_INDEX.indexName,
            });
            return claimed.length === 0 ? { handoff: true } : { claimed };
        }
        const batch = await claimBatch(
            ctx,
            partition,
            candidates.map((item) => ({ item, orderingKey: undefined })),
            token,
            at,
            candidates.length,
            options,
        );
        claimed.push(...batch.claimed);
        if (batch.error !== undefined)
            return { claimed: truncatedClaim(ctx, partition, claimed, batch.error, options) };
        if (claimed.length >= limit || page.LastEvaluatedKey === undefined) return { claimed };
        start = page.LastEvaluatedKey;
    }
}

/**
 * Check that a claim owner fits {@link MAX_CLAIM_OWNER_BYTES}: the claim stores it on every record it takes, and the
 * writer leaves room under DynamoDB's item limit for an owner that long, no longer.
 */
function checkOwnerLength(owner: string): void {
    const bytes = utf8Length(owner);
    if (bytes <= MAX_CLAIM_OWNER_BYTES) return;
    throw new OutboxError(
        "INVALID_PAYLOAD",
        `claim: token.owner is ${bytes} bytes (UTF-8); a claim owner is at most ${MAX_CLAIM_OWNER_BYTES}, because the claim stores it on each record and the writer leaves room for no longer one under DynamoDB's 400 KB item limit; use a shorter owner id, e.g. "relay-1"`,
        { context: { size: bytes, maxSize: MAX_CLAIM_OWNER_BYTES } },
    );
}

/**
 * Claim up to `limit` of the partition's oldest claimable records for `token`.
 *
 * @throws OutboxError `STALE_FENCING_TOKEN` for an invalid token (no I/O), a token below the fence, or a fence
 * lost mid-batch (then no records are returned); `INVALID_PAYLOAD` (no I/O) for an owner over
 * {@link MAX_CLAIM_OWNER_BYTES}; a classified error when nothing could be claimed.
 */
export async function claim(
    ctx: StoreContext,
    partition: string,
    token: FencingToken,
    limit: number,
    options: ClaimCallOptions = {},
): Promise<OutboxRecord[]> {
    if (!isValidToken(token)) throw invalidTokenError("claim", token);
    checkOwnerLength(token.owner);
    requirePartition("claim", partition);
    if (typeof limit !== "number" || Number.isNaN(limit)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `claim: limit must be a number, got ${String(limit)}; pass how many records to claim (≤ 0 only advances the fence)`,
        );
    }
    ctx.logger.debug("dynamodboutbox: claim", { partition_key: partition, limit });
    const nowMs = ctx.clock.now();
    const at: ClaimClock = { nowMs, staleMs: ctx.staleClaimMs > 0 ? nowMs - ctx.staleClaimMs : 0 };
    await acceptToken(ctx, partition, token, "claim");
    const whole = Math.floor(limit);
    if (whole <= 0) return [];
    const outcome = await claimByIndex(ctx, partition, token, whole, at, options);
    if ("claimed" in outcome) return outcome.claimed;
    return claimByScan(ctx, partition, token, whole, at, options);
}
