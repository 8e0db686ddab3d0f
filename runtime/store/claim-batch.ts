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
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES, itemSize } from "../item-size";
import { unmarshalRecord, type OutboxRecord } from "../record/codec";
import { ATTR } from "../schema";
import { cancellationCodes, isTransactionCanceled, wrapAwsError } from "./aws-errors";
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
    signal?: AbortSignal,
): Promise<BatchClaim> {
    const state: BatchState = { ctx, partition, token, at, rest: [...candidates], lostKeys: new Set(), claimed: [] };
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
