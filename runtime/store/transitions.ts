/**
 * The state transitions of an outbox record as request builders: pure functions from ids, a token and times to
 * the exact DynamoDB request. The store uses them, and so can other code that must move a record the same way
 * (the publisher completes keyless records it published straight from the stream with
 * {@link completePendingUpdate}).
 *
 * Each builder returns the `Update` shape of a TransactWriteItems item; it is also a valid `UpdateItem` input.
 * The exception is {@link seqAllocationUpdates}: its two requests are only ever sent alone, so they are
 * `UpdateItem` inputs with their `ReturnValues`.
 *
 * @packageDocumentation
 */
import type { AttributeValue, ConditionCheck, Update, UpdateItemCommandInput } from "@aws-sdk/client-dynamodb";
import { fenceKey } from "../record/fence";
import { ATTR, STATUS } from "../schema";
import {
    and,
    isPending,
    claimable,
    expiresBefore,
    fenceAllows,
    fenceBelow,
    heldBy,
    lastCreatedAtNotAfter,
    nameRef,
    placeholders,
    updateExpression,
    type Expression,
} from "./expressions";

/** A fencing token: the lease owner and its monotonic version. Valid only with a non-empty owner and version > 0. */
export interface FencingToken {
    /** The lease owner's id. */
    readonly owner: string;
    /** The lease version; higher versions preempt lower ones. */
    readonly version: bigint;
}

/** Whether a token is usable: a non-empty owner and a bigint version above 0. */
export function isValidToken(token: FencingToken | undefined): token is FencingToken {
    return (
        typeof token === "object" &&
        token !== null &&
        typeof token.owner === "string" &&
        token.owner !== "" &&
        typeof token.version === "bigint" &&
        token.version > 0n
    );
}

/** A record's primary key. */
export type ItemKey = Record<string, AttributeValue>;

function update(tableName: string, key: ItemKey, change: Expression, condition: Expression): Update {
    return {
        TableName: tableName,
        Key: key,
        UpdateExpression: change.text,
        ConditionExpression: condition.text,
        ...placeholders(change, condition),
    };
}

/**
 * Claim a record (the Update item of the claim transaction): status `claimed`, owner, version, `claimed_at`,
 * `first_attempted_at` only if absent, `replay_count` + 1; conditional on the claimability predicate.
 *
 * @param tableName - The outbox table.
 * @param key - The record's key.
 * @param token - The claiming token.
 * @param nowMs - The claim time, epoch ms.
 * @param staleMs - Claims older than this (epoch ms) are reclaimable; `0` disables wall-clock reclaim.
 */
export function claimUpdate(
    tableName: string,
    key: ItemKey,
    token: FencingToken,
    nowMs: number,
    staleMs: number,
): Update {
    const change = updateExpression({
        set: [
            { attribute: ATTR.status, value: ":status_claimed" },
            { attribute: ATTR.claimedBy, value: ":token_owner" },
            { attribute: ATTR.claimVersion, value: ":token_version" },
            { attribute: ATTR.claimedAt, value: ":now_ms" },
            { attribute: ATTR.firstAttemptedAt, value: `if_not_exists(#${ATTR.firstAttemptedAt}, :now_ms)` },
            { attribute: ATTR.replayCount, value: `if_not_exists(#${ATTR.replayCount}, :zero) + :one` },
        ],
        values: {
            ":status_claimed": { S: STATUS.claimed },
            ":token_owner": { S: token.owner },
            ":token_version": { N: token.version.toString() },
            ":now_ms": { N: String(nowMs) },
            ":zero": { N: "0" },
            ":one": { N: "1" },
        },
    });
    return update(tableName, key, change, claimable(token.version, staleMs));
}

/**
 * The FENCE ConditionCheck of claim and expire transactions: the partition's fence has not moved past the token.
 *
 * @param tableName - The outbox table.
 * @param partition - The partition key.
 * @param version - The token version.
 */
export function fenceConditionCheck(tableName: string, partition: string, version: bigint): ConditionCheck {
    const condition = fenceAllows(version);
    return {
        TableName: tableName,
        Key: fenceKey(partition),
        ConditionExpression: condition.text,
        ...placeholders(condition),
    };
}

/**
 * Raise the partition fence to `version` (never lowers it) and refresh the FENCE row ttl.
 *
 * @param tableName - The outbox table.
 * @param partition - The partition key.
 * @param version - The token version.
 * @param fenceTtl - The FENCE row ttl, epoch seconds.
 */
export function fenceRaiseUpdate(tableName: string, partition: string, version: bigint, fenceTtl: number): Update {
    const change = updateExpression({
        set: [
            { attribute: ATTR.maxClaimVersion, value: ":token_version" },
            { attribute: ATTR.ttl, value: ":fence_ttl" },
        ],
        values: { ":token_version": { N: version.toString() }, ":fence_ttl": { N: String(fenceTtl) } },
    });
    return update(tableName, fenceKey(partition), change, fenceBelow(version));
}

/** The two FENCE updates of one seq allocation, as `UpdateItem` inputs: see {@link seqAllocationUpdates}. */
export interface SeqAllocationUpdates {
    /** The normal case: allocate and record this writer's now as the partition's `last_created_at`. */
    readonly atNow: UpdateItemCommandInput;
    /**
     * Sent only when `atNow`'s condition failed: allocate and read the fence's (later) `last_created_at` back,
     * however far ahead of this writer's now it is.
     */
    readonly atFence: UpdateItemCommandInput;
}

/**
 * Allocate `count` sequence numbers from the partition's FENCE row, so that `(created_at, seq)` order is the
 * order of the allocations whatever the writers' clocks say.
 *
 * - `atNow`: `ADD seq_counter count`, `SET ttl, last_created_at = now`, on condition
 *   `attribute_not_exists(last_created_at) OR last_created_at <= now`, returning `UPDATED_NEW`. The records then
 *   carry `created_at = now`.
 * - `atFence`, when that condition failed (an earlier allocation handed out a later time than this writer's
 *   clock reads): `ADD seq_counter count`, `SET ttl, last_created_at = if_not_exists(last_created_at, now)`, with
 *   no condition, returning `ALL_NEW`. The records then carry the returned `last_created_at`, however far ahead of
 *   this clock it is: refusing them would fail every correct writer's keyed writes to the partition for as long as
 *   one fast clock led it.
 *
 * Either way the new `seq_counter` is the top of the allocated range.
 *
 * @param tableName - The outbox table.
 * @param partition - The partition key.
 * @param count - How many numbers to allocate (≥ 1).
 * @param nowMs - The writer's now, epoch ms (whole).
 * @param fenceTtl - The FENCE row ttl, epoch seconds.
 */
export function seqAllocationUpdates(
    tableName: string,
    partition: string,
    count: number,
    nowMs: number,
    fenceTtl: number,
): SeqAllocationUpdates {
    const values = {
        ":fence_ttl": { N: String(fenceTtl) },
        ":count": { N: String(count) },
        ":now_ms": { N: String(nowMs) },
    };
    const add = [{ attribute: ATTR.seqCounter, value: ":count" }];
    const ttl = { attribute: ATTR.ttl, value: ":fence_ttl" };
    const atNow = updateExpression({ set: [ttl, { attribute: ATTR.lastCreatedAt, value: ":now_ms" }], add, values });
    const atFence = updateExpression({
        set: [ttl, { attribute: ATTR.lastCreatedAt, value: `if_not_exists(${nameRef(ATTR.lastCreatedAt)}, :now_ms)` }],
        add,
        values,
    });
    const key = fenceKey(partition);
    return {
        atNow: { ...update(tableName, key, atNow, lastCreatedAtNotAfter(nowMs)), ReturnValues: "UPDATED_NEW" },
        // ALL_NEW, not UPDATED_NEW: the value is needed even when if_not_exists leaves it as it was.
        atFence: {
            TableName: tableName,
            Key: key,
            UpdateExpression: atFence.text,
            ...placeholders(atFence),
            ReturnValues: "ALL_NEW",
        },
    };
}

function completion(nowMs: number, ttl: number): Expression {
    return updateExpression({
        set: [
            { attribute: ATTR.status, value: ":status_completed" },
            { attribute: ATTR.completedAt, value: ":now_ms" },
            { attribute: ATTR.ttl, value: ":ttl" },
        ],
        remove: [ATTR.hasExpiry, ATTR.claimSort],
        values: {
            ":status_completed": { S: STATUS.completed },
            ":now_ms": { N: String(nowMs) },
            ":ttl": { N: String(ttl) },
        },
    });
}

function expiry(ttl: number): Expression {
    return updateExpression({
        set: [
            { attribute: ATTR.status, value: ":status_expired" },
            { attribute: ATTR.ttl, value: ":ttl" },
        ],
        remove: [ATTR.hasExpiry, ATTR.claimSort],
        values: { ":status_expired": { S: STATUS.expired }, ":ttl": { N: String(ttl) } },
    });
}

/**
 * Complete a claimed record (Complete): status `completed`, `completed_at`, `ttl`; REMOVE `has_expiry` and
 * `claim_sort`; conditional on `status = claimed AND claimed_by = owner AND claim_version = version`.
 *
 * @param tableName - The outbox table.
 * @param key - The record's key.
 * @param token - The token that holds the claim.
 * @param nowMs - The completion time, epoch ms.
 * @param ttl - The terminal ttl, epoch seconds (now + compaction grace).
 */
export function completeClaimedUpdate(
    tableName: string,
    key: ItemKey,
    token: FencingToken,
    nowMs: number,
    ttl: number,
): Update {
    return update(tableName, key, completion(nowMs, ttl), heldBy(token.owner, token.version));
}

/**
 * Complete a record that was never claimed (pending → completed), as the publisher does after publishing a
 * keyless record straight from the stream: the same writes as {@link completeClaimedUpdate}, conditional on
 * `status = pending`. A failed condition means someone else (a claimer, the sweeper) moved it first.
 *
 * @param tableName - The outbox table.
 * @param key - The record's key.
 * @param nowMs - The completion time, epoch ms.
 * @param ttl - The terminal ttl, epoch seconds (now + compaction grace).
 * @param origin - The relay's origin condition (`originIs`), when it has a scope: a record of another region is left alone.
 */
export function completePendingUpdate(
    tableName: string,
    key: ItemKey,
    nowMs: number,
    ttl: number,
    origin?: Expression,
): Update {
    return update(
        tableName,
        key,
        completion(nowMs, ttl),
        origin === undefined ? isPending() : and(isPending(), origin),
    );
}

/**
 * Expire a pending record past its expiry (pending → expired): status `expired`, `ttl`; REMOVE `has_expiry` and
 * `claim_sort`; conditional on `status = pending AND expires_at > 0 AND expires_at < beforeMs`.
 *
 * @param tableName - The outbox table.
 * @param key - The record's key.
 * @param beforeMs - The cutoff, epoch ms: only records with `expires_at` strictly before it expire.
 * @param ttl - The terminal ttl, epoch seconds (cutoff + compaction grace).
 * @param origin - The relay's origin condition (`originIs`), when it has a scope: a record of another region is left alone.
 */
export function expirePendingUpdate(
    tableName: string,
    key: ItemKey,
    beforeMs: number,
    ttl: number,
    origin?: Expression,
): Update {
    const pieces = [isPending(), expiresBefore(beforeMs), ...(origin === undefined ? [] : [origin])];
    return update(tableName, key, expiry(ttl), and(...pieces));
}

/**
 * Expire a record the token holds (claimed → expired): status `expired`, `ttl`, REMOVE `has_expiry` and
 * `claim_sort`; conditional on the owner + version + status fence of Complete and on `expires_at` being
 * past `beforeMs`. The claimed-record twin of {@link expirePendingUpdate}, used by the delivery paths when
 * a claimed record turns out to be expired.
 *
 * @param tableName - The outbox table.
 * @param key - The record's key.
 * @param token - The token that holds the claim.
 * @param beforeMs - Only a record with `0 < expires_at < beforeMs` is expired.
 * @param ttl - The terminal record's TTL, epoch seconds.
 */
export function expireClaimedUpdate(
    tableName: string,
    key: ItemKey,
    token: FencingToken,
    beforeMs: number,
    ttl: number,
): Update {
    return update(tableName, key, expiry(ttl), and(heldBy(token.owner, token.version), expiresBefore(beforeMs)));
}

/**
 * Release a claimed record back to pending (Release): status `pending`, REMOVE `claimed_by` and `claimed_at`;
 * conditional on the same owner + version + status fence as Complete. Counters and index keys are untouched.
 *
 * @param tableName - The outbox table.
 * @param key - The record's key.
 * @param token - The token that holds the claim.
 */
export function releaseUpdate(tableName: string, key: ItemKey, token: FencingToken): Update {
    const change = updateExpression({
        set: [{ attribute: ATTR.status, value: ":status_pending" }],
        remove: [ATTR.claimedBy, ATTR.claimedAt],
        values: { ":status_pending": { S: STATUS.pending } },
    });
    return update(tableName, key, change, heldBy(token.owner, token.version));
}
