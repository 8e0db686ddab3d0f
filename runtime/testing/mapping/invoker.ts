/**
 * One invocation of the handler with the head of a shard lane's buffer, and what Lambda does with its answer: on
 * success, checkpoint past the batch; on a `batchItemFailures` answer, checkpoint up to the lowest failed record
 * and retry from it; on a thrown error, retry the whole batch, halved when `bisectBatchOnFunctionError` is on;
 * with backoff, until `maximumRetryAttempts` runs out and the rest goes to the on-failure destination.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import type { LambdaStreamEvent, LambdaStreamRecord } from "../stream-event";
import { lowestFailedIndex } from "./batch-item-failures";
import { giveUpBatch } from "./on-failure";
import { errorName } from "./settings";
import type { LaneState, MappingState, ShardState } from "./state";
import type { LocalBatchInfo, LocalInvocationContext } from "./types";

const MAX_BACKOFF_MS = 1000;

/** How one attempt ended. */
interface Attempt {
    readonly requestId: string;
    /** The 1-based number of this invocation over the mapping's life (read before lanes run concurrently). */
    readonly invocation: number;
    readonly batch: readonly LambdaStreamRecord[];
    /** The index of the lowest failed record, `undefined` when the whole batch succeeded. */
    readonly failedAt: number | undefined;
    readonly threw: boolean;
}

/** Call the handler with `batch` and read its answer; a thrown error fails the whole batch. */
async function attempt(
    state: MappingState,
    shard: ShardState,
    lane: LaneState,
    batch: readonly LambdaStreamRecord[],
): Promise<Attempt> {
    const { counters, settings } = state;
    const requestId = randomUUID();
    const startedAt = settings.clock.now();
    const context: LocalInvocationContext = {
        functionName: settings.functionName,
        invokedFunctionArn: settings.functionArn,
        awsRequestId: requestId,
        getRemainingTimeInMillis: () => Math.max(0, settings.invocationTimeoutMs - (settings.clock.now() - startedAt)),
    };
    counters.invocations += 1;
    const invocation = counters.invocations;
    counters.recordsDelivered += batch.length;
    if (lane.redelivering) counters.retries += 1;
    // A JSON round trip, as Lambda serializes the event: the handler cannot alias the mapping's buffer.
    const event = JSON.parse(JSON.stringify({ Records: batch })) as LambdaStreamEvent;
    try {
        return {
            requestId,
            invocation,
            batch,
            failedAt: lowestFailedIndex(await state.options.handler(event, context), batch),
            threw: false,
        };
    } catch (err) {
        settings.logger.warn("local mapping: handler threw", {
            shardId: shard.shardId,
            lane: lane.index,
            requestId,
            batchSize: batch.length,
            error: errorName(err),
        });
        return { requestId, invocation, batch, failedAt: 0, threw: true };
    }
}

/** Whether the `redeliverSucceededBatch` hook asks for this successful batch again (fault injection). */
function forcedRedelivery(
    state: MappingState,
    shard: ShardState,
    lane: LaneState,
    { requestId, invocation, batch }: Attempt,
): boolean {
    const redeliver = state.options.redeliverSucceededBatch;
    if (redeliver === undefined) return false;
    const info: LocalBatchInfo = {
        shardId: shard.shardId,
        lane: lane.index,
        sequenceNumbers: batch.map((r) => r.dynamodb.SequenceNumber),
        invocation,
    };
    if (!redeliver(info)) return false;
    state.counters.forcedRedeliveries += 1;
    lane.batchLimit = batch.length;
    state.settings.logger.debug("local mapping: redelivering a successful batch (fault injection)", {
        shardId: shard.shardId,
        lane: lane.index,
        requestId,
        batchSize: batch.length,
    });
    return true;
}

/** The whole batch succeeded: checkpoint past it and clear the retry state. */
function checkpoint(state: MappingState, shard: ShardState, lane: LaneState, { requestId, batch }: Attempt): void {
    lane.buffer.splice(0, batch.length);
    state.counters.recordsSucceeded += batch.length;
    lane.headFailures = 0;
    lane.batchLimit = undefined;
    lane.redelivering = false;
    lane.bufferedSince = state.settings.clock.now();
    state.settings.logger.debug("local mapping: batch handled", {
        shardId: shard.shardId,
        lane: lane.index,
        requestId,
        batchSize: batch.length,
    });
}

/** The batch failed at `failedAt`: checkpoint before it, then schedule a retry from it, or give the rest up. */
async function retryOrGiveUp(
    state: MappingState,
    shard: ShardState,
    lane: LaneState,
    outcome: Attempt & { failedAt: number },
): Promise<void> {
    const { counters, settings } = state;
    const { requestId, batch, failedAt, threw } = outcome;
    counters.failedInvocations += 1;
    lane.redelivering = true;
    if (failedAt > 0) {
        lane.buffer.splice(0, failedAt);
        counters.recordsSucceeded += failedAt;
        lane.headFailures = 1;
    } else {
        lane.headFailures += 1;
    }
    const failedSequence = (batch[failedAt] as LambdaStreamRecord).dynamodb.SequenceNumber;
    if (settings.maxRetries >= 0 && lane.headFailures > settings.maxRetries) {
        const skipped = lane.buffer.splice(0, batch.length - failedAt);
        const invokeCount = lane.headFailures;
        lane.headFailures = 0;
        lane.batchLimit = undefined;
        lane.redelivering = false;
        await giveUpBatch(state, { shard, skipped, requestId, invokeCount, threw });
        return;
    }
    if (threw && state.options.bisectBatchOnFunctionError !== false && batch.length > 1)
        lane.batchLimit = Math.ceil(batch.length / 2);
    lane.retryAt =
        settings.clock.now() + Math.min(MAX_BACKOFF_MS, settings.retryBackoffMs * 2 ** (lane.headFailures - 1));
    settings.logger.warn("local mapping: batch failed, retrying from the lowest failed record", {
        shardId: shard.shardId,
        lane: lane.index,
        requestId,
        sequenceNumber: failedSequence,
        attempt: lane.headFailures,
    });
}

/** The records the next invocation of `lane` delivers: its batch limit after a bisect or a forced redelivery. */
export function batchLimit(state: MappingState, lane: LaneState): number {
    const { batchSize } = state.settings;
    return Math.min(batchSize, lane.batchLimit ?? batchSize);
}

/** Invoke the handler with the head of the lane's buffer. Returns whether the whole batch succeeded. */
export async function invokeBatch(state: MappingState, shard: ShardState, lane: LaneState): Promise<boolean> {
    const outcome = await attempt(state, shard, lane, lane.buffer.slice(0, batchLimit(state, lane)));
    if (outcome.failedAt === undefined) {
        if (forcedRedelivery(state, shard, lane, outcome)) return false;
        checkpoint(state, shard, lane, outcome);
        return true;
    }
    await retryOrGiveUp(state, shard, lane, { ...outcome, failedAt: outcome.failedAt });
    return false;
}
