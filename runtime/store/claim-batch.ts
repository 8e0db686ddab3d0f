/**
 * The claim's writes (reference §4.4.5, in fewer round trips): the chosen records are claimed in as few
 * TransactWriteItems as fit, each the FENCE ConditionCheck first and then up to 99 records' claim updates, oldest
 * first. A 100-record claim is two transactions instead of a hundred, one after the other.
 *
 * Why one transaction per chunk and not the two-item transactions sent concurrently: every claim transaction of a
 * partition includes its FENCE row, and DynamoDB cancels a transaction with `TransactionConflict` when an item in
 * it is part of another ongoing transaction. Concurrent claims of one partition would conflict with each other on
 * AWS (DynamoDB Local runs them one at a time, so it would not show it). One transaction also checks the fence
 * once instead of once per record: 2 write units fewer per claimed record.
 *
 * A transaction is all or nothing, so the head-of-line rule holds without a post-check: when it is cancelled
 * because a record's condition failed (someone else took, completed or released it) or the record conflicted, that
 * record is dropped, with the younger records of its ordering key (a sibling must not overtake a head someone
 * else holds), and the rest is sent again. A fault (throttling, a lost fence) ends the claim with what earlier
 * transactions claimed (their records are all older than the failed chunk's), for the caller's truncation rule.
 *
 * A record the claim would take over DynamoDB's 400 KB item limit (one written by another writer within
 * `MAX_RECORD_BYTES`'s margin of the limit: an older version of this package, GoBridge, or a `persist` before the
 * margin) can never be claimed, by anyone. It is dropped like a lost race, its key held for this claim, and handed
 * to the caller's `onUnclaimable`, which dead-letters it (the relay does: `runtime/relay/unclaimable.ts`); without one,
 * the claim ends with an `INVALID_PAYLOAD` error naming it.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import {
    MAX_ITEM_BYTES,
    MAX_RECORD_BYTES,
    MAX_TRANSACTION_ACTIONS,
    MAX_TRANSACTION_BYTES,
    itemSize,
} from "../record/item-size";
import { readString, unmarshalRecord, type OutboxRecord } from "../record/codec";
import { ATTR } from "../schema";
import {
    cancellationCodes,
    isBenignCancellationCode,
    isTransactionCanceled,
    itemSizeCancellations,
    wrapAwsError,
} from "./aws-errors";
import { claimedRecord, fencedCancellationError, type ClaimClock } from "./claim-one";
import { noteUndecodable } from "./observability";
import type { StoreContext } from "./options";
import { transactWrite } from "./send";
import { claimUpdate, fenceConditionCheck, type FencingToken } from "./transitions";

/** A record a claim may take: the item a query returned, and its ordering key. */
export interface ClaimCandidate {
    readonly item: Record<string, AttributeValue>;
    readonly orderingKey: string | undefined;
}

/** Options of one Claim call. */
export interface ClaimCallOptions {
    /** Stops the claim between pages and records; what was already claimed is returned. @default undefined */
    readonly signal?: AbortSignal;
    /**
     * Called when a failure cut the claim short and the records already claimed are returned (the truncation
     * rule): the batch is short, but the partition's backlog is not exhausted. @default undefined
     */
    readonly onTruncated?: (error: unknown) => void;
    /**
     * Called for each record DynamoDB refuses to claim because the claim would take it over the 400 KB item limit
     * (a record another writer wrote within `MAX_RECORD_BYTES`'s margin of it): the record stays pending and
     * unclaimed, the later records of its ordering key are not claimed in this call, and the caller dead-letters
     * it with an update that does not grow it (a completion, which removes `claim_sort`). The error names the
     * record and its size.
     * @default undefined (the claim ends with that error instead, under the truncation rule)
     */
    readonly onUnclaimable?: (record: OutboxRecord, error: OutboxError) => void;
    /**
     * Records this claim leaves alone, pending as they are: the caller holds them back. The relay's drain passes the
     * ordering keys whose head failed earlier in the drain and the keyless records that failed, so that its next
     * claim reaches the partition's other records instead of taking the failed ones again (one record's own fault
     * holds only its own key). @default undefined (none skipped)
     */
    readonly skip?: ClaimSkip;
}

/** What a claim leaves alone ({@link ClaimCallOptions.skip}). */
export interface ClaimSkip {
    /** Every record of these ordering keys. */
    readonly orderingKeys: ReadonlySet<string>;
    /** These records, by record id. */
    readonly recordIds: ReadonlySet<string>;
}

/**
 * Whether `skip` covers a record: one of its ordering key's, or itself. The store's claims and the relay's drain
 * both ask this, so what a drain holds back and what its next claim leaves alone are one rule.
 *
 * @param skip - The claim's {@link ClaimCallOptions.skip}, if any.
 * @param recordId - The record's id.
 * @param orderingKey - Its ordering key; `undefined` or `""` for a keyless record.
 */
export function skips(skip: ClaimSkip | undefined, recordId: string, orderingKey: string | undefined): boolean {
    if (skip === undefined) return false;
    if (orderingKey !== undefined && orderingKey !== "" && skip.orderingKeys.has(orderingKey)) return true;
    return skip.recordIds.has(recordId);
}

/**
 * Whether a claim with `skip` leaves this item alone ({@link skips}, read off the item).
 *
 * @param skip - The claim's {@link ClaimCallOptions.skip}, if any.
 * @param item - A record item as a query returned it.
 */
export function skipped(skip: ClaimSkip | undefined, item: Record<string, AttributeValue>): boolean {
    return skips(skip, readString(item, ATTR.recordId) ?? "", readString(item, ATTR.orderingKey));
}

/** What {@link claimBatch} came to. */
export interface BatchClaim {
    /** The records claimed, oldest first. */
    readonly claimed: OutboxRecord[];
    /** The failure that cut the claim short, for the caller's truncation rule (`truncatedClaim`). */
    readonly error?: unknown;
}

/** Records per transaction: the FENCE check takes one of its 100 actions. */
const RECORDS_PER_TRANSACTION = MAX_TRANSACTION_ACTIONS - 1;

/** The items' bytes one transaction may carry, with room for the FENCE row and the claim attributes. */
const TRANSACTION_BYTES = MAX_TRANSACTION_BYTES - 64 * 1024;

/** How often a chunk is sent again when the cancellation names no record (the FENCE row conflicted). */
const FENCE_CONFLICT_ATTEMPTS = 3;

interface Decoded {
    readonly key: Record<string, AttributeValue>;
    readonly record: OutboxRecord;
    readonly orderingKey: string | undefined;
    /** The item's size as read. */
    readonly bytes: number;
}

/** One claim's progress: the candidates not yet tried, the keys that lost their head, what was claimed. */
interface BatchState {
    readonly ctx: StoreContext;
    readonly partition: string;
    readonly token: FencingToken;
    readonly at: ClaimClock;
    readonly rest: ClaimCandidate[];
    readonly lostKeys: Set<string>;
    readonly claimed: OutboxRecord[];
    readonly onUnclaimable: ClaimCallOptions["onUnclaimable"];
}

/**
 * Claim up to `limit` of `candidates` (oldest first) for `token`, in as few transactions as fit. A candidate that
 * lost its race is skipped with the younger records of its key, and the next candidates fill its place.
 *
 * Never throws for a DynamoDB fault: it ends the claim, and {@link BatchClaim.error} carries it.
 */
export async function claimBatch(
    ctx: StoreContext,
    partition: string,
    candidates: readonly ClaimCandidate[],
    token: FencingToken,
    at: ClaimClock,
    limit: number,
    options: ClaimCallOptions = {},
): Promise<BatchClaim> {
    const { signal } = options;
    const state: BatchState = {
        ctx,
        partition,
        token,
        at,
        rest: [...candidates],
        lostKeys: new Set(),
        claimed: [],
        onUnclaimable: options.onUnclaimable,
    };
    for (;;) {
        const want = limit - state.claimed.length;
        if (want <= 0) break;
        const chunk = nextChunk(state, want);
        if (chunk.length === 0) break;
        try {
            signal?.throwIfAborted();
            await claimChunk(state, chunk);
        } catch (err) {
            return { claimed: state.claimed, error: err };
        }
    }
    return { claimed: state.claimed };
}

/**
 * The next transaction's records: the oldest candidates not held back by a lost key, at most `want`, split evenly
 * over the transactions `want` needs, and within the byte budget. Undecodable items are skipped (counted and
 * logged) and hold their key back, as a lost race does.
 */
function nextChunk(state: BatchState, want: number): Decoded[] {
    const size = Math.ceil(want / Math.ceil(want / RECORDS_PER_TRANSACTION));
    const chunk: Decoded[] = [];
    let bytes = 0;
    while (chunk.length < size && state.rest.length > 0) {
        const candidate = state.rest[0]!;
        if (candidate.orderingKey !== undefined && state.lostKeys.has(candidate.orderingKey)) {
            state.rest.shift();
            continue;
        }
        const bytesOf = itemSize(candidate.item);
        if (chunk.length > 0 && bytes + bytesOf > TRANSACTION_BYTES) break;
        state.rest.shift();
        let record: OutboxRecord;
        try {
            record = unmarshalRecord(candidate.item);
        } catch (err) {
            noteUndecodable(state.ctx, state.partition, candidate.item[ATTR.sk]?.S, err);
            if (candidate.orderingKey !== undefined) state.lostKeys.add(candidate.orderingKey);
            continue;
        }
        // The key from the item itself, not re-derived: a legacy raw-SK row must be addressed by the SK it has.
        chunk.push({
            key: { [ATTR.pk]: candidate.item[ATTR.pk]!, [ATTR.sk]: candidate.item[ATTR.sk]! },
            record,
            orderingKey: candidate.orderingKey,
            bytes: bytesOf,
        });
        bytes += bytesOf;
    }
    return chunk;
}

/** Claim one chunk, sending it again without the records that lost their race, until it commits or is empty. */
async function claimChunk(state: BatchState, chunk: readonly Decoded[]): Promise<void> {
    let live = chunk;
    let fenceConflicts = 0;
    while (live.length > 0) {
        const lost = await sendClaim(state, live);
        if (lost === undefined) {
            for (const d of live) {
                state.ctx.keyCache.put(d.record.recordId, d.key);
                state.claimed.push(claimedRecord(d.record, state.token, state.at));
            }
            return;
        }
        if (lost.size === 0) {
            fenceConflicts += 1;
            if (fenceConflicts < FENCE_CONFLICT_ATTEMPTS) continue;
            throw new OutboxError(
                "UNAVAILABLE",
                "outbox claim transaction kept conflicting on the partition's FENCE row",
                {
                    transient: true,
                    context: { partition: state.partition, attempts: String(fenceConflicts) },
                },
            );
        }
        live = withoutLost(state, live, lost);
    }
}

/** Drop the lost records and, behind each, the younger records of its key; the key stays lost for later chunks. */
function withoutLost(state: BatchState, live: readonly Decoded[], lost: ReadonlySet<number>): Decoded[] {
    const kept: Decoded[] = [];
    live.forEach((d, i) => {
        if (lost.has(i)) {
            if (d.orderingKey !== undefined) state.lostKeys.add(d.orderingKey);
            return;
        }
        if (d.orderingKey !== undefined && state.lostKeys.has(d.orderingKey)) return;
        kept.push(d);
    });
    return kept;
}

/**
 * One claim transaction: `undefined` when it committed, else the indexes (into `live`) of the records that lost
 * their race (empty when only the FENCE row conflicted).
 *
 * @throws the classified error of a fault, `STALE_FENCING_TOKEN` for a fence that moved.
 */
async function sendClaim(state: BatchState, live: readonly Decoded[]): Promise<Set<number> | undefined> {
    const { ctx, partition, token, at } = state;
    try {
        await transactWrite(ctx, "claim.transaction", {
            TransactItems: [
                { ConditionCheck: fenceConditionCheck(ctx.tableName, partition, token.version) },
                ...live.map((d) => ({ Update: claimUpdate(ctx.tableName, d.key, token, at.nowMs, at.staleMs) })),
            ],
        });
        return undefined;
    } catch (err) {
        const context = { partition, recordId: live[0]!.record.recordId, owner: token.owner };
        if (!isTransactionCanceled(err)) throw wrapAwsError(err, "outbox claim update failed", context);
        const unclaimable = unclaimableRecords(err, live);
        if (unclaimable.length > 0) {
            for (const i of unclaimable) state.onUnclaimable?.(live[i]!.record, unclaimableError(state, live[i]!, err));
            if (state.onUnclaimable === undefined) throw unclaimableError(state, live[unclaimable[0]!]!, err);
            return new Set(unclaimable);
        }
        const error = fencedCancellationError(ctx, err, "claim", partition, token, context);
        if (error !== undefined) throw error;
        const codes = cancellationCodes(err);
        const lost = new Set<number>();
        live.forEach((_, i) => {
            const code = codes[i + 1];
            if (code === "ConditionalCheckFailed" || code === "TransactionConflict") lost.add(i);
        });
        return lost;
    }
}

/**
 * The records (indexes into `live`) of a cancelled claim transaction that DynamoDB refused because the claim would
 * take them over 400 KB, when that is all that went wrong: the fence held and every other reason is benign.
 */
function unclaimableRecords(err: unknown, live: readonly Decoded[]): number[] {
    const codes = cancellationCodes(err);
    const oversized = itemSizeCancellations(err).filter((i) => i >= 1 && i <= live.length);
    if (oversized.length === 0 || codes[0] === "ConditionalCheckFailed") return [];
    const others = codes.filter((code, i) => !oversized.includes(i) && !isBenignCancellationCode(code));
    return others.length === 0 ? oversized.map((i) => i - 1) : [];
}

/** The error that names a record no claim can take, and why. */
function unclaimableError(state: BatchState, d: Decoded, cause: unknown): OutboxError {
    return new OutboxError(
        "INVALID_PAYLOAD",
        `claim: record ${d.record.recordId} of partition ${JSON.stringify(state.partition)} is ${d.bytes} bytes, and claiming it would take it over DynamoDB's item limit of ${MAX_ITEM_BYTES} bytes, so no claim can take it; the writer keeps records within ${MAX_RECORD_BYTES} bytes, so another writer (an older version, GoBridge, or persist) wrote it; the relay dead-letters it with reason "item-too-large"; a claimer of your own must dead-letter or delete it`,
        {
            cause,
            context: {
                partition: state.partition,
                recordId: d.record.recordId,
                size: d.bytes,
                maxSize: MAX_RECORD_BYTES,
            },
        },
    );
}
