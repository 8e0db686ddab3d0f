/**
 * The stream publisher's keyless path, after the buffer: publish the buffered records (their calls run
 * concurrently, `runtime/relay/keyless-publish.ts`) and read what happened to each, in shard order. A record SNS took is
 * published (and completed in its call's wake); one SNS refuses for its content is counted on the item and left to
 * the sweeper, or dead-lettered at `maxPublishAttempts`; a transient refusal, a failed completion or a call never
 * sent is where Lambda retries from. Only the first failure in shard order counts, whatever order the calls ended in.
 *
 * @packageDocumentation
 */
import {
    afterSend,
    completePending,
    countPermanentFailure,
    DELIVERY_METRICS,
    logTransientRefusal,
    notePublished,
    publishBatches,
    sendToDeadLetterQueue,
    type DeliveryContext,
    type PublishResult,
} from "./delivery";
import { errorCodeOf } from "../errors";
import { publishAndComplete, type KeylessItem } from "./keyless-publish";
import type { DeadLetterReason } from "../record/message";
import type { OutboxRecord } from "../record/codec";
import type { Candidate } from "./stream-candidates";

/** A keyless record waiting in the buffer, with the stream record that named it. */
export interface BufferedKeyless extends KeylessItem {
    readonly candidate: Candidate;
}

/**
 * Publish the buffered keyless records and read each outcome in shard order.
 *
 * @param ctx - Clients, names, limits and this invocation's metrics.
 * @param pending - The buffer, in shard order.
 * @returns the SequenceNumber of the lowest record that failed, if any.
 */
export async function publishKeyless(
    ctx: DeliveryContext,
    pending: readonly BufferedKeyless[],
): Promise<string | undefined> {
    if (pending.length === 0) return undefined;
    const calls = publishBatches(ctx.destination, pending, false);
    const outcomes = await publishAndComplete(ctx, calls);
    // The bookkeeping reads every entry in shard order, whatever order the calls ended in, and only the first
    // failure sets failedAt: a later failure (a refused entry, a failed completion, a call not sent) never
    // replaces it, or Lambda would rewind past a record that was not delivered.
    let failedAt: string | undefined;
    for (let c = 0; c < calls.length; c += 1) {
        const call = calls[c]!;
        const outcome = outcomes[c]!;
        for (let j = 0; j < call.length; j += 1) {
            const { candidate } = call[j]!;
            if (!outcome.sent) {
                // Due to start after an entry was refused, so never sent: it stays pending.
                failedAt ??= candidate.sequenceNumber;
                continue;
            }
            failedAt = await readEntry(ctx, candidate, outcome.results[j]!, outcome.completionErrors[j], failedAt);
        }
    }
    return failedAt;
}

/** One sent entry's outcome, read after the entries before it: returns the batch's first failure so far. */
async function readEntry(
    ctx: DeliveryContext,
    candidate: Candidate,
    result: PublishResult,
    completion: { readonly error: unknown } | undefined,
    failedAt: string | undefined,
): Promise<string | undefined> {
    try {
        if (result.ok) {
            notePublished(ctx, candidate.record);
            if (failedAt !== undefined) ctx.metrics.count(DELIVERY_METRICS.publishedAfterFailure);
            if (completion !== undefined) throw completion.error;
            return failedAt;
        }
        if (failedAt !== undefined) return failedAt;
        return (await refusedEntryStopsBatch(ctx, candidate.record, result)) ? candidate.sequenceNumber : undefined;
    } catch (err) {
        ctx.logger.error("publisher: a step after publishing failed", {
            recordId: candidate.record.recordId,
            code: errorCodeOf(err),
            // An AWS error the store does not recognize names itself here (issue 34): the code alone says UNAVAILABLE.
            error: err instanceof Error ? err.message : String(err),
        });
        return failedAt ?? candidate.sequenceNumber;
    }
}

/**
 * The first refused entry of the batch: a refusal SNS blames on the message is counted on the item
 * (`publish_attempts`), and at `maxPublishAttempts` the record goes to the DLQ; below it, or when the DLQ cannot
 * take it, it is left to the sweeper. Any other refusal is one every later record would meet: the batch retries
 * from it. Returns whether it does.
 */
async function refusedEntryStopsBatch(
    ctx: DeliveryContext,
    record: OutboxRecord,
    result: Extract<PublishResult, { ok: false }>,
): Promise<boolean> {
    ctx.metrics.count(DELIVERY_METRICS.publishFailed);
    if (!result.permanent) {
        logTransientRefusal(ctx, record, result.code);
        return true;
    }
    const attempts = await countPermanentFailure(ctx, record);
    if (attempts === undefined) return false; // already terminal: someone else handled it
    if (attempts >= ctx.maxPublishAttempts) {
        if (
            await deadLetterOrLeave(ctx, record, "publish-rejected", {
                attempts,
                errorCode: result.code,
                errorMessage: result.message,
            })
        ) {
            await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => completePending(ctx, record));
        }
        return false;
    }
    // The refusal is this record's own: retrying the shard would hold every record behind it. The sweeper retries
    // it on its runs until maxPublishAttempts, then dead-letters it.
    ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
    ctx.logger.warn("outbox publish refused; the record stays pending for the sweeper", {
        recordId: record.recordId,
        partition: record.partition,
        code: result.code,
        permanent: true,
        attempts,
    });
    return false;
}

/**
 * Send a keyless record to the DLQ. When the DLQ cannot take it (down, or refusing it), retrying the stream
 * batch would hold every record behind it for a fault that is not theirs: the record stays pending, and the
 * sweeper retries it on its next run. Returns whether it was sent.
 */
export async function deadLetterOrLeave(
    ctx: DeliveryContext,
    record: OutboxRecord,
    reason: DeadLetterReason,
    detail: { attempts?: number; errorCode?: string; errorMessage?: string },
): Promise<boolean> {
    try {
        await sendToDeadLetterQueue(ctx, record, reason, detail);
        return true;
    } catch (err) {
        ctx.metrics.count(DELIVERY_METRICS.leftForSweeper);
        ctx.logger.error("publisher: the DLQ could not take a record; it stays pending for the sweeper", {
            recordId: record.recordId,
            partition: record.partition,
            reason,
            code: errorCodeOf(err),
        });
        return false;
    }
}
