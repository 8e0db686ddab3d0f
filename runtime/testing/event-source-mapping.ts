/**
 * A local stand-in for Lambda's DynamoDB event source mapping: it polls a table's stream, turns records into
 * the exact event Lambda delivers, applies the same filter the component provisions, batches per shard in
 * order and calls your handler, honouring `batchItemFailures` the way Lambda does. Use it to run the
 * outbox publisher (or your own stream handler) against DynamoDB Local in tests and demos.
 *
 * What it reproduces from Lambda:
 * - every shard is read from TRIM_HORIZON (or LATEST), parents before children, closed shards to their end;
 * - records that do not match the filter are dropped and checkpointed past;
 * - a handler that returns `batchItemFailures` is re-invoked from the LOWEST reported SequenceNumber; an empty
 *   list means success; an identifier that is not in the batch, an empty identifier or a thrown error fails
 *   the whole batch;
 * - retries are bounded by `maximumRetryAttempts`; then the batch's metadata (never its records) goes to
 *   `onFailure`, shaped like Lambda's on-failure destination record, and the mapping skips past it;
 * - `bisectBatchOnFunctionError` halves the batch after a thrown error;
 * - `parallelizationFactor` keeps up to that many batches of a shard in flight, records of one item in one
 *   lane (partition and sort key, as Lambda documents), each lane retried on its own;
 * - expired iterators and `TrimmedDataAccessException` are answered with a fresh iterator.
 *
 * What it does not: tumbling windows, the 6 MB payload cap, maximum record age and invocation timeouts.
 * Shards are served one after the other by a single loop; the lanes of a shard run together.
 *
 * @packageDocumentation
 */
import { listShardsAtStart, drain, runLoop, stop } from "./mapping/lifecycle";
import { mappingSettings, streamToRead } from "./mapping/settings";
import { createMappingState, mappingStats } from "./mapping/state";
import { streamsSdk } from "./mapping/streams-sdk";
import type {
    LocalEventSourceMapping,
    LocalEventSourceMappingOptions,
    LocalMappingDrainOptions,
} from "./mapping/types";

export type {
    LocalBatchInfo,
    LocalEventSourceMapping,
    LocalEventSourceMappingOptions,
    LocalEventSourceMappingStats,
    LocalInvocationContext,
    LocalMappingDrainOptions,
    LocalStreamFailureInfo,
} from "./mapping/types";

/**
 * Start polling a DynamoDB stream and invoking `handler` with Lambda-shaped batches.
 * Resolves once the stream is found and its shards are listed; polling then runs in the background until
 * `stop()`.
 *
 * @param options - See {@link LocalEventSourceMappingOptions}.
 * @throws OutboxError `INVALID_CONFIG` for a bad option, a table without a stream, or
 * `@aws-sdk/client-dynamodb-streams` (an optional peer) not installed; `NOT_FOUND` for a missing table or stream.
 */
export async function startLocalEventSourceMapping(
    options: LocalEventSourceMappingOptions,
): Promise<LocalEventSourceMapping> {
    const settings = mappingSettings(options);
    // Up front: a missing optional peer is named before anything is read.
    streamsSdk();
    const streamArn = await streamToRead(options);
    const state = createMappingState(streamArn, options, settings);
    await listShardsAtStart(state);
    settings.logger.info("local mapping: started", {
        streamArn,
        shards: state.shards.length,
        batchSize: settings.batchSize,
        parallelizationFactor: settings.parallelizationFactor,
    });
    const loop = runLoop(state);
    const drainState = (drainOptions?: LocalMappingDrainOptions): Promise<void> => drain(state, drainOptions);
    return {
        streamArn,
        stats: () => mappingStats(state),
        drain: drainState,
        waitIdle: drainState,
        stop: () => stop(state, loop),
    };
}
