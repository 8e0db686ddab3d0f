/**
 * What a running local mapping holds: its settings, its counters, the shards it knows with each one's position
 * and buffer, the drain waiters, and the flags the poll loop and `stop()` share. One object, passed to every part
 * (reader, batcher, invoker, lifecycle) instead of a closure over all of them.
 *
 * @packageDocumentation
 */
import type { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import type { LambdaStreamRecord } from "../stream-event";
import type { MappingSettings } from "./settings";
import type { LocalEventSourceMappingOptions, LocalEventSourceMappingStats } from "./types";

/**
 * One of a shard's concurrent batches (`parallelizationFactor`): the records routed to it, in shard order, and the
 * retry state of the record at its head. Lanes of one shard fail, retry and skip independently.
 */
export interface LaneState {
    /** 0-based, below the factor. */
    readonly index: number;
    readonly buffer: LambdaStreamRecord[];
    /** When the oldest buffered record was read (clock ms), for the batching window. */
    bufferedSince: number;
    /** Failures of the record at the head of the buffer. */
    headFailures: number;
    /** Not before this time (clock ms) may the head be retried. */
    retryAt: number;
    /** A smaller batch after a bisect, until the next success. */
    batchLimit: number | undefined;
    /** Whether the next invocation redelivers records. */
    redelivering: boolean;
}

/** One shard: where it is read up to, and its lanes (one per concurrent batch). */
export interface ShardState {
    readonly shardId: string;
    readonly parentShardId: string | undefined;
    iterator: string | undefined;
    /** GetRecords returned no NextShardIterator: the shard is closed and fully read. */
    ended: boolean;
    /** The last SequenceNumber read, to resume after an iterator reset without re-reading. */
    lastReadSequence: string | undefined;
    /** Resets in a row; a second one falls back from AFTER_SEQUENCE_NUMBER to TRIM_HORIZON. */
    consecutiveResets: number;
    /** `parallelizationFactor` lanes; a record goes to the lane its item's key hashes to. */
    readonly lanes: readonly LaneState[];
}

/** A pending `drain()`: settled by the first idle cycle that began after it, or by its deadline. */
export interface DrainWaiter {
    readonly fromCycle: number;
    readonly deadline: number;
    readonly resolve: () => void;
    readonly reject: (err: Error) => void;
}

/** The counters that are not derived from the shards (see {@link mappingStats}). */
export type MappingCounters = {
    -readonly [K in Exclude<keyof LocalEventSourceMappingStats, "shards" | "pendingRecords">]: number;
};

/** The state of one running mapping. */
export interface MappingState {
    readonly streamArn: string;
    readonly streams: DynamoDBStreamsClient;
    /** The caller's options: the handler and the hooks are read from here at each call. */
    readonly options: LocalEventSourceMappingOptions;
    readonly settings: MappingSettings;
    readonly counters: MappingCounters;
    /** Every shard seen, in the order DescribeStream first listed them. */
    readonly shards: ShardState[];
    readonly waiters: DrainWaiter[];
    /** Poll cycles begun. */
    cycle: number;
    /** The cycle of the last successful DescribeStream (0: only the one at start). */
    lastDescribeCycle: number;
    /** When (clock ms) the last successful DescribeStream was. */
    lastDescribeAt: number;
    /** A shard ended (its children may be new): list the shards again next cycle. */
    describeWanted: boolean;
    stopped: boolean;
    /** Resolves {@link MappingState.stopSignal}. */
    readonly wake: () => void;
    /** Resolves when `stop()` is called, to cut a pause short. */
    readonly stopSignal: Promise<void>;
}

/** A new state, with no shard listed yet. */
export function createMappingState(
    streamArn: string,
    options: LocalEventSourceMappingOptions,
    settings: MappingSettings,
): MappingState {
    let wake: () => void = () => undefined;
    const stopSignal = new Promise<void>((resolve) => {
        wake = resolve;
    });
    return {
        streamArn,
        streams: options.streamsClient,
        options,
        settings,
        counters: {
            invocations: 0,
            recordsRead: 0,
            recordsFilteredOut: 0,
            recordsDelivered: 0,
            recordsSucceeded: 0,
            retries: 0,
            forcedRedeliveries: 0,
            failedInvocations: 0,
            recordsDiscarded: 0,
            pollErrors: 0,
            iteratorResets: 0,
        },
        shards: [],
        waiters: [],
        cycle: 0,
        lastDescribeCycle: 0,
        lastDescribeAt: -Infinity,
        describeWanted: true,
        stopped: false,
        wake,
        stopSignal,
    };
}

function newLaneState(index: number): LaneState {
    return {
        index,
        buffer: [],
        bufferedSince: 0,
        headFailures: 0,
        retryAt: 0,
        batchLimit: undefined,
        redelivering: false,
    };
}

/** A shard just listed: nothing read, nothing buffered, `lanes` empty lanes. */
export function newShardState(shardId: string, parentShardId: string | undefined, lanes: number): ShardState {
    return {
        shardId,
        parentShardId,
        iterator: undefined,
        ended: false,
        lastReadSequence: undefined,
        consecutiveResets: 0,
        lanes: Array.from({ length: lanes }, (_, i) => newLaneState(i)),
    };
}

/** Records buffered in the shard's lanes. */
export function bufferedRecords(shard: ShardState): number {
    return shard.lanes.reduce((n, lane) => n + lane.buffer.length, 0);
}

function isDone(shard: ShardState): boolean {
    return shard.ended && bufferedRecords(shard) === 0;
}

/** A shard may be read once its parent is done or gone (trimmed), as Lambda keeps lineage order. */
export function isReady(shard: ShardState, shards: readonly ShardState[]): boolean {
    if (isDone(shard)) return false;
    const parent =
        shard.parentShardId === undefined ? undefined : shards.find((s) => s.shardId === shard.parentShardId);
    return parent === undefined || isDone(parent);
}

/** Filtered records read but not yet accepted, over every shard. */
export function pendingRecords(state: MappingState): number {
    return state.shards.reduce((n, s) => n + bufferedRecords(s), 0);
}

/** A snapshot of the counters. */
export function mappingStats(state: MappingState): LocalEventSourceMappingStats {
    return { ...state.counters, shards: state.shards.length, pendingRecords: pendingRecords(state) };
}
