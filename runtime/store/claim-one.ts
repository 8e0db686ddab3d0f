/**
 * One per-record claim (reference §4.4.5): a two-item TransactWriteItems, the FENCE ConditionCheck first and the
 * record's claim update second, so a fence raised by a newer owner between our fence read and this write stops us
 * (the fence TOCTOU split-brain, finding 5). Cancellations are classified, never silently skipped when they are
 * faults (c13-txn-throttle).
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { unmarshalRecord, type OutboxRecord } from "../record/codec";
import { ATTR, STATUS } from "../schema";
import { cancellationCodes, isBenignCancellationCode, isTransactionCanceled, wrapAwsError } from "./aws-errors";
import { noteUndecodable, STORE_METRICS, STORE_WARNINGS } from "./observability";
import type { StoreContext } from "./options";
import { transactWrite } from "./send";
import { claimUpdate, fenceConditionCheck, type FencingToken } from "./transitions";

/** The per-claim constants: one `now` and one stale threshold for the whole Claim call. */
export interface ClaimClock {
    /** The claim time, epoch ms. */
    readonly nowMs: number;
    /** Claims older than this (epoch ms) are reclaimable at the same version; `0` disables. */
    readonly staleMs: number;
}

/**
 * Map a cancelled fenced transaction (item 0 = FENCE check, item 1 = the record write) to the error to raise, or
 * `undefined` when the record merely lost a race and is skipped.
 *
 * @param verb - `claim` or `expire`, for messages.
 */
export function fencedCancellationError(
    ctx: StoreContext,
    err: unknown,
    verb: "claim" | "expire",
    partition: string,
    token: FencingToken,
    context: Record<string, string>,
): unknown {
    const codes = cancellationCodes(err);
    if (codes.length === 0) {
        const wrapped = wrapAwsError(err, `outbox ${verb} transaction canceled with no reasons`, context);
        if (wrapped instanceof OutboxError && !wrapped.transient) {
            return new OutboxError(wrapped.code, wrapped.message, { transient: true, cause: err, context: wrapped.context });
        }
        return wrapped;
    }
    if (codes[0] === "ConditionalCheckFailed") {
        return new OutboxError("STALE_FENCING_TOKEN", `${verb} aborted: partition fence advanced past token version`, {
            cause: err,
            context: { ...context, givenVersion: token.version.toString(), partition },
        });
    }
    if (codes.some((c) => !isBenignCancellationCode(c))) return wrapAwsError(err, `outbox ${verb} transaction canceled`, context);
    if (verb === "claim" && codes.includes("TransactionConflict")) {
        ctx.metrics.count(STORE_METRICS.claimConflicts, 1, { partition });
        // The partition goes in the log, not in a metric dimension (one per aggregate would be a cost trap).
        ctx.logger.info(STORE_WARNINGS.claimConflict, { partition_key: partition });
    }
    return undefined;
}

/**
 * Claim one record found by a query. Returns the claimed record as written (synthesised from the queried item and
 * the values written), or `undefined` when it lost a race (someone else claimed, completed or released it) or the
 * item cannot be decoded (counted as `DynamoDBOutboxUndecodableRecords` and logged with its key; nothing written).
 *
 * @throws OutboxError `STALE_FENCING_TOKEN` when the fence moved past the token; the classified error for faults.
 */
export async function claimOne(
    ctx: StoreContext,
    partition: string,
    item: Record<string, AttributeValue>,
    token: FencingToken,
    at: ClaimClock,
): Promise<OutboxRecord | undefined> {
    let queried: OutboxRecord;
    try {
        queried = unmarshalRecord(item);
    } catch (err) {
        // Skipped like a lost race: the scan path then holds the item's ordering key behind it.
        noteUndecodable(ctx, partition, item[ATTR.sk]?.S, err);
        return undefined;
    }
    // The key from the item itself, not re-derived: a legacy raw-SK row must be addressed by the SK it has.
    const key = { [ATTR.pk]: item[ATTR.pk], [ATTR.sk]: item[ATTR.sk] };
    try {
        await transactWrite(ctx, "claim.transaction", {
            TransactItems: [
                { ConditionCheck: fenceConditionCheck(ctx.tableName, partition, token.version) },
                { Update: claimUpdate(ctx.tableName, key, token, at.nowMs, at.staleMs) },
            ],
        });
    } catch (err) {
        const context = { partition, recordId: queried.recordId, owner: token.owner };
        if (!isTransactionCanceled(err)) throw wrapAwsError(err, "outbox claim update failed", context);
        const error = fencedCancellationError(ctx, err, "claim", partition, token, context);
        if (error === undefined) return undefined;
        throw error;
    }
    ctx.keyCache.put(queried.recordId, key);
    return {
        ...queried,
        status: STATUS.claimed,
        claimedBy: token.owner,
        claimVersion: token.version,
        claimedAt: at.nowMs,
        firstAttemptedAt: queried.firstAttemptedAt ?? at.nowMs,
        replayCount: queried.replayCount + 1,
    };
}
