/**
 * Publishing the keyless records of a stream batch with the round trips they need and no more: the batch's
 * PublishBatch calls run concurrently (at most {@link PUBLISH_CALLS_IN_FLIGHT} at once), and each call's accepted
 * entries are completed as soon as that call returns. A 100-record batch then costs three sequential round trips
 * (the status read, the publish, the completion) instead of two per call, one after the other.
 *
 * On a FIFO topic SNS keeps a message group in the order it receives it, so a call waits until every earlier call
 * that carries one of its message groups has returned: calls of different groups overlap, one group's calls never
 * overlap. No call starts once an entry failed transiently (Lambda retries from it), so a group never reorders
 * around that entry either. A permanent refusal does not stop the calls: the publisher leaves that record to the
 * sweeper, as it does inside one call.
 *
 * What this does not do is decide what a failure means: the publisher reads the outcomes in shard order
 * (`runtime/relay/keyless-outcomes.ts`), so the failure it reports is the lowest whatever order the calls ended in.
 *
 * @packageDocumentation
 */
import {
    afterSend,
    completePending,
    DELIVERY_METRICS,
    MAX_BATCH_ENTRIES,
    publishBatch,
    type DeliveryContext,
    type PublishResult,
} from "./delivery";
import { fifoMessageGroupId, type OutboundMessage } from "../record/message";
import type { OutboxRecord } from "../record/codec";
import { callSlots } from "../slots";

/** The most PublishBatch calls one invocation has in flight at once. */
export const PUBLISH_CALLS_IN_FLIGHT = 10;

/**
 * The most keyless records published together: a full set of calls in flight. Completions run in each call's
 * wake, so at most this many completion writes are in flight too.
 */
export const KEYLESS_RECORDS_PER_FLUSH = PUBLISH_CALLS_IN_FLIGHT * MAX_BATCH_ENTRIES;

/** A keyless record to publish, with its published form. */
export interface KeylessItem {
    /** The record, completed once SNS accepted it. */
    readonly record: OutboxRecord;
    /** What is published. */
    readonly message: OutboundMessage;
}

/** How one PublishBatch call of {@link publishAndComplete} ended. */
export type KeylessCallOutcome =
    /** Not sent: it was due to start after another call had an entry fail transiently. */
    | { readonly sent: false }
    | {
          readonly sent: true;
          /** Each entry's outcome, in the call's order. */
          readonly results: readonly PublishResult[];
          /** Each entry's completion error, `undefined` when it was completed or never published. */
          readonly completionErrors: readonly ({ readonly error: unknown } | undefined)[];
      };

/** For each call, the earlier calls it must wait for: on a FIFO topic the last earlier call of each of its groups. */
function fifoPredecessors(calls: readonly (readonly KeylessItem[])[]): number[][] {
    const lastCallOfGroup = new Map<string, number>();
    return calls.map((call, i) => {
        const before: number[] = [];
        for (const { message } of call) {
            const j = lastCallOfGroup.get(fifoMessageGroupId(message));
            if (j !== undefined && !before.includes(j)) before.push(j);
        }
        for (const { message } of call) lastCallOfGroup.set(fifoMessageGroupId(message), i);
        return before;
    });
}

/**
 * Publish `calls` (from `publishBatches`, in shard order) concurrently, at most {@link PUBLISH_CALLS_IN_FLIGHT} at
 * once, and complete every entry SNS accepted as soon as its call returns (pending → completed, conditionally).
 * A call due to start after an entry failed transiently is not sent.
 * Never throws for an SNS or DynamoDB failure: each is in the outcome of its call, for the caller to read in
 * shard order. Every call has ended, completions included, when this resolves.
 *
 * @param ctx - Clients, topic, FIFO setting and metrics.
 * @param calls - The entries of each PublishBatch call, at most 10 and 256 KB each.
 * @returns One outcome per call, aligned with `calls`.
 */
export async function publishAndComplete(
    ctx: DeliveryContext,
    calls: readonly (readonly KeylessItem[])[],
): Promise<KeylessCallOutcome[]> {
    const slots = callSlots(PUBLISH_CALLS_IN_FLIGHT);
    const predecessors = ctx.destination.fifo ? fifoPredecessors(calls) : calls.map(() => []);
    const published: Promise<readonly PublishResult[] | undefined>[] = [];
    const outcomes: Promise<KeylessCallOutcome>[] = [];
    let refused = false;
    for (let i = 0; i < calls.length; i += 1) {
        const call = calls[i]!;
        const before = predecessors[i]!.map((j) => published[j]!);
        const publishing = (async (): Promise<readonly PublishResult[] | undefined> => {
            await Promise.all(before);
            await slots.acquire();
            try {
                // No call starts once an entry failed for a reason every later entry could meet (throttled, SNS
                // down): Lambda retries from it, and on a FIFO topic sending this call's entries before it would
                // reorder its group. A permanent refusal is that record's own: it is left to the sweeper, and the
                // batch goes on, as SNS itself goes on past it inside one call.
                if (refused) return undefined;
                const results = await publishBatch(
                    ctx,
                    call.map((item) => item.message),
                );
                if (results.some((r) => !r.ok && !r.permanent)) refused = true;
                return results;
            } finally {
                slots.release();
            }
        })();
        published.push(publishing);
        outcomes.push(
            publishing.then(async (results): Promise<KeylessCallOutcome> => {
                if (results === undefined) return { sent: false };
                const completionErrors = await Promise.all(
                    call.map(async ({ record }, j): Promise<{ error: unknown } | undefined> => {
                        if (!results[j]!.ok) return undefined;
                        try {
                            await afterSend(ctx, DELIVERY_METRICS.publishedNotCompleted, () =>
                                completePending(ctx, record),
                            );
                            return undefined;
                        } catch (error) {
                            return { error };
                        }
                    }),
                );
                return { sent: true, results, completionErrors };
            }),
        );
    }
    // Wait for every call before reporting anything, even a bug's exception: no call may still be running when
    // the invocation answers Lambda.
    const settled = await Promise.allSettled(outcomes);
    const thrown = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (thrown !== undefined) throw thrown.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<KeylessCallOutcome>).value);
}
