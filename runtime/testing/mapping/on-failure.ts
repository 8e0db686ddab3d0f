/**
 * Giving up a batch whose retries ran out: the record Lambda sends to a stream source's on-failure destination
 * (metadata only, never the records), handed to `onFailure`, whose errors are logged and never stop the mapping.
 *
 * @packageDocumentation
 */
import type { LambdaStreamRecord } from "../stream-event";
import { errorName } from "./settings";
import type { MappingState, ShardState } from "./state";
import type { LocalStreamFailureInfo } from "./types";

function isoFromSeconds(seconds: number | undefined): string {
    return seconds === undefined ? "" : new Date(seconds * 1000).toISOString();
}

/** A batch given up: which records, and how its last attempt ended. */
export interface GivenUpBatch {
    readonly shard: ShardState;
    /** The records skipped, in order; at least one. */
    readonly skipped: readonly LambdaStreamRecord[];
    /** The last attempt's request id. */
    readonly requestId: string;
    /** How many times the failing record was delivered. */
    readonly invokeCount: number;
    /** Whether the last attempt threw (rather than reported `batchItemFailures`). */
    readonly threw: boolean;
}

function failureInfo(state: MappingState, batch: GivenUpBatch): LocalStreamFailureInfo {
    const { skipped, threw } = batch;
    const first = skipped[0] as LambdaStreamRecord;
    const last = skipped[skipped.length - 1] as LambdaStreamRecord;
    return {
        requestContext: {
            requestId: batch.requestId,
            functionArn: state.settings.functionArn,
            condition: "RetryAttemptsExhausted",
            approximateInvokeCount: batch.invokeCount,
        },
        responseContext: {
            statusCode: 200,
            executedVersion: "$LATEST",
            ...(threw ? { functionError: "Unhandled" } : {}),
        },
        version: "1.0",
        timestamp: new Date(state.settings.clock.now()).toISOString(),
        DDBStreamBatchInfo: {
            shardId: batch.shard.shardId,
            startSequenceNumber: first.dynamodb.SequenceNumber,
            endSequenceNumber: last.dynamodb.SequenceNumber,
            approximateArrivalOfFirstRecord: isoFromSeconds(first.dynamodb.ApproximateCreationDateTime),
            approximateArrivalOfLastRecord: isoFromSeconds(last.dynamodb.ApproximateCreationDateTime),
            batchSize: skipped.length,
            streamArn: state.streamArn,
        },
    };
}

/** Count the skipped records as discarded, log it, and hand the metadata to `onFailure` if there is one. */
export async function giveUpBatch(state: MappingState, batch: GivenUpBatch): Promise<void> {
    const { counters, settings, options } = state;
    const info = failureInfo(state, batch);
    const shardId = batch.shard.shardId;
    counters.recordsDiscarded += batch.skipped.length;
    settings.logger.error("local mapping: retries exhausted, skipping batch", {
        shardId,
        startSequenceNumber: info.DDBStreamBatchInfo.startSequenceNumber,
        endSequenceNumber: info.DDBStreamBatchInfo.endSequenceNumber,
        batchSize: batch.skipped.length,
    });
    if (options.onFailure === undefined) return;
    try {
        await options.onFailure(info);
    } catch (err) {
        settings.logger.error("local mapping: onFailure threw; the batch is skipped anyway", {
            shardId,
            error: errorName(err),
        });
    }
}
