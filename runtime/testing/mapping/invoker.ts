/**
 * One invocation of the handler with the head of a shard's buffer, and what Lambda does with its answer: on
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
import type { MappingState, ShardState } from "./state";
import type { LocalBatchInfo, LocalInvocationContext } from "./types";

const MAX_BACKOFF_MS = 1000;

/** How one attempt ended. */
interface Attempt {
    readonly requestId: string;
    readonly batch: readonly LambdaStreamRecord[];
    /** The index of the lowest failed record, `undefined` when the whole batch succeeded. */
    readonly failedAt: number | undefined;
    readonly threw: boolean;
}

/** Call the handler with `batch` and read its answer; a thrown error fails the whole batch. */
async function attempt(state: MappingState, shard: ShardState, batch: readonly LambdaStreamRecord[]): Promise<Attempt> {
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
    counters.recordsDelivered += batch.length;
    if (shard.redelivering) counters.retries += 1;
    // A JSON round trip, as Lambda serializes the event: the handler cannot alias the mapping's buffer.
    const event = JSON.parse(JSON.stringify({ Records: batch })) as LambdaStreamEvent;
    try {
        return { requestId, batch, failedAt: lowestFailedIndex(await state.options.handler(event, context), batch), threw: false };
    } catch (err) {
        settings.logger.warn("local mapping: handler threw", { shardId: shard.shardId, requestId, batchSize: batch.length, error: errorName(err) });
        return { requestId, batch, failedAt: 0, threw: true };
    }
}

/** Whether the `redeliverSucceededBatch` hook asks for this successful batch again (fault injection). */
function forcedRedelivery(state: MappingState, shard: ShardState, { requestId, batch }: Attempt): boolean {
    const redeliver = state.options.redeliverSucceededBatch;
    if (redeliver === undefined) return false;
    const info: LocalBatchInfo = {
        shardId: shard.shardId,
        sequenceNumbers: batch.map((r) => r.dynamodb.SequenceNumber),
        invocation: state.counters.invocations,
    };
    if (!redeliver(info)) return false;
    state.counters.forcedRedeliveries += 1;
    shard.batchLimit = batch.length;
    state.settings.logger.debug("local mapping: redelivering a successful batch (fault injection)", {
        shardId: shard.shardId,
        requestId,
        batchSize: batch.length,
    });
    return true;
}

/** The whole batch succeeded: checkpoint past it and clear the retry state. */
function checkpoint(state: MappingState, shard: ShardState, { requestId, batch }: Attempt): void {
    shard.buffer.splice(0, batch.length);
    state.counters.recordsSucceeded += batch.length;
    shard.headFailures = 0;
    shard.batchLimit = undefined;
    shard.redelivering = false;
    shard.bufferedSince = state.settings.clock.now();
    state.settings.logger.debug("local mapping: batch handled", { shardId: shard.shardId, requestId, batchSize: batch.length });
}

/** The batch failed at `failedAt`: checkpoint before it, then schedule a retry from it, or give the rest up. */
async function retryOrGiveUp(state: MappingState, shard: ShardState, outcome: Attempt & { failedAt: number }): Promise<void> {
    const { counters, settings } = state;
    const { requestId, batch, failedAt, threw } = outcome;
    counters.failedInvocations += 1;
    shard.redelivering = true;
    if (failedAt > 0) {
        shard.buffer.splice(0, failedAt);
        counters.recordsSucceeded += failedAt;
        shard.headFailures = 1;
    } else {
        shard.headFailures += 1;
    }
    const failedSequence = (batch[failedAt] as LambdaStreamRecord).dynamodb.SequenceNumber;
    if (settings.maxRetries >= 0 && shard.headFailures > settings.maxRetries) {
        const skipped = shard.buffer.splice(0, batch.length - failedAt);
        const invokeCount = shard.headFailures;
        shard.headFailures = 0;
        shard.batchLimit = undefined;
        shard.redelivering = false;
        await giveUpBatch(state, { shard, skipped, requestId, invokeCount, threw });
        return;
    }
    if (threw && state.options.bisectBatchOnFunctionError !== false && batch.length > 1) shard.batchLimit = Math.ceil(batch.length / 2);
    shard.retryAt = settings.clock.now() + Math.min(MAX_BACKOFF_MS, settings.retryBackoffMs * 2 ** (shard.headFailures - 1));
    settings.logger.warn("local mapping: batch failed, retrying from the lowest failed record", {
        shardId: shard.shardId,
        requestId,
        sequenceNumber: failedSequence,
        attempt: shard.headFailures,
    });
}

/** The records the next invocation of `shard` delivers: its batch limit after a bisect or a forced redelivery. */
export function batchLimit(state: MappingState, shard: ShardState): number {
    const { batchSize } = state.settings;
    return Math.min(batchSize, shard.batchLimit ?? batchSize);
}

/** Invoke the handler with the head of the buffer. Returns whether the whole batch succeeded. */
export async function invokeBatch(state: MappingState, shard: ShardState): Promise<boolean> {
    const outcome = await attempt(state, shard, shard.buffer.slice(0, batchLimit(state, shard)));
    if (outcome.failedAt === undefined) {
        if (forcedRedelivery(state, shard, outcome)) return false;
        checkpoint(state, shard, outcome);
        return true;
    }
    await retryOrGiveUp(state, shard, { ...outcome, failedAt: outcome.failedAt });
    return false;
}
