/**
 * What a fenced claim (or expire) transaction's cancellation means, and the record a claim wrote. The claim's
 * transactions themselves are `runtime/store/claim-batch.ts`: the FENCE ConditionCheck first, then the records'
 * claim updates, so a fence raised by a newer owner between our fence read and this write stops us (the fence
 * TOCTOU split-brain, finding 5). Cancellations are classified, never silently skipped when they are faults
 * (c13-txn-throttle).
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import type { OutboxRecord } from "../record/codec";
import { STATUS } from "../schema";
import { cancellationCodes, classifyAwsError, isAbort, isBenignCancellationCode, wrapAwsError } from "./aws-errors";
import { STORE_METRICS, STORE_WARNINGS } from "./observability";
import type { StoreContext } from "./options";
import type { FencingToken } from "./transitions";

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
        if (err instanceof OutboxError || isAbort(err)) return err;
        // DynamoDB said nothing about why: the fence is re-read on the next try, so it is retried (never skipped).
        return new OutboxError(classifyAwsError(err), `outbox ${verb} transaction canceled with no reasons`, {
            transient: true,
            cause: err,
            context,
        });
    }
    if (codes[0] === "ConditionalCheckFailed") {
        return new OutboxError("STALE_FENCING_TOKEN", `${verb} aborted: partition fence advanced past token version`, {
            cause: err,
            context: { ...context, givenVersion: token.version.toString(), partition },
        });
    }
    if (codes.some((c) => !isBenignCancellationCode(c)))
        return wrapAwsError(err, `outbox ${verb} transaction canceled`, context);
    if (verb === "claim" && codes.includes("TransactionConflict")) {
        ctx.metrics.count(STORE_METRICS.claimConflicts, 1, { partition });
        // The partition goes in the log, not in a metric dimension (one per aggregate would be a cost trap).
        ctx.logger.info(STORE_WARNINGS.claimConflict, { partition_key: partition });
    }
    return undefined;
}

/**
 * The claimed record as written: synthesised from the queried item and the values the claim wrote (GoBridge's
 * rule: `replay_count` + 1, `first_attempted_at` = now only if the item lacked it).
 *
 * @param queried - The record as the query returned it.
 * @param token - The token that claimed it.
 * @param at - The claim's clock.
 */
export function claimedRecord(queried: OutboxRecord, token: FencingToken, at: ClaimClock): OutboxRecord {
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
