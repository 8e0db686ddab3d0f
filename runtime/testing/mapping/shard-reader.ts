/**
 * Reading the stream as Lambda's poller does: DescribeStream for the shards, GetShardIterator from the starting
 * position (or after the last record read), GetRecords a page at a time through the filter, each record into its
 * lane's buffer. Expired iterators and `TrimmedDataAccessException` are answered with a fresh iterator, including
 * DynamoDB Local's quirk after a cancelled first transaction.
 *
 * @packageDocumentation
 */
import type { Shard } from "@aws-sdk/client-dynamodb-streams";
import { matchesAnyFilterPattern } from "../filter-pattern";
import { toLambdaStreamRecord, type LambdaStreamRecord } from "../stream-event";
import { laneOf } from "./lane-routing";
import { errorName } from "./settings";
import { newShardState, type MappingState, type ShardState } from "./state";
import { streamsSdk } from "./streams-sdk";

const GET_RECORDS_LIMIT = 1000;

/** List the stream's shards (every page) and add the ones not seen yet. Throws what DescribeStream throws. */
export async function listShards(state: MappingState): Promise<void> {
    const found: Shard[] = [];
    let startShardId: string | undefined;
    do {
        const out = await state.streams.send(
            new (streamsSdk().DescribeStreamCommand)({
                StreamArn: state.streamArn,
                ExclusiveStartShardId: startShardId,
            }),
        );
        found.push(...(out.StreamDescription?.Shards ?? []));
        startShardId = out.StreamDescription?.LastEvaluatedShardId;
    } while (startShardId !== undefined);
    for (const shard of found) {
        if (shard.ShardId === undefined || state.shards.some((s) => s.shardId === shard.ShardId)) continue;
        state.shards.push(newShardState(shard.ShardId, shard.ParentShardId, state.settings.parallelizationFactor));
        state.settings.logger.debug("local mapping: shard found", {
            streamArn: state.streamArn,
            shardId: shard.ShardId,
            parentShardId: shard.ParentShardId,
        });
    }
}

async function takeIterator(state: MappingState, shard: ShardState): Promise<string | undefined> {
    const { streamArn } = state;
    const resume = shard.lastReadSequence !== undefined && shard.consecutiveResets < 2;
    const type = shard.lastReadSequence === undefined ? state.settings.startingPosition : ("TRIM_HORIZON" as const);
    const request = resume
        ? {
              StreamArn: streamArn,
              ShardId: shard.shardId,
              ShardIteratorType: "AFTER_SEQUENCE_NUMBER" as const,
              SequenceNumber: shard.lastReadSequence,
          }
        : { StreamArn: streamArn, ShardId: shard.shardId, ShardIteratorType: type };
    const out = await state.streams.send(new (streamsSdk().GetShardIteratorCommand)(request));
    return out.ShardIterator;
}

/** Put the page's records that pass the filter into their lanes' buffers, counting the others. */
function bufferPage(state: MappingState, shard: ShardState, records: readonly LambdaStreamRecord[]): void {
    const { counters, settings } = state;
    for (const record of records) {
        counters.recordsRead += 1;
        shard.lastReadSequence = record.dynamodb.SequenceNumber;
        if (!matchesAnyFilterPattern(settings.patterns, record)) {
            counters.recordsFilteredOut += 1;
            continue;
        }
        const lane = shard.lanes[laneOf(record, shard.lanes.length)]!;
        if (lane.buffer.length === 0) lane.bufferedSince = settings.clock.now();
        lane.buffer.push(record);
    }
}

/** Forget the iterator after a failed read; returns what {@link readPage} returns for it. */
function answerReadError(
    state: MappingState,
    shard: ShardState,
    err: unknown,
    freshIterator: boolean,
): number | undefined {
    const { counters, settings } = state;
    const name = errorName(err);
    if (name === "TrimmedDataAccessException" && shard.lastReadSequence === undefined) {
        // DynamoDB Local throws this after a cancelled transaction was the stream's first write, for any
        // iterator taken before the next successful write (test-infra §1). A fresh iterator that throws
        // means nothing is readable yet (idle); a stale one may hide records, so take a fresh one first.
        shard.iterator = undefined;
        counters.iteratorResets += 1;
        return freshIterator ? 0 : undefined;
    }
    if (name === "ExpiredIteratorException" || name === "TrimmedDataAccessException") {
        // Resume after the last record read; a second failure in a row falls back to TRIM_HORIZON.
        shard.iterator = undefined;
        shard.consecutiveResets += 1;
        counters.iteratorResets += 1;
        settings.logger.debug("local mapping: fresh iterator", { shardId: shard.shardId, reason: name });
        return undefined;
    }
    counters.pollErrors += 1;
    settings.logger.warn("local mapping: read failed, will retry", { shardId: shard.shardId, error: name });
    return undefined;
}

/**
 * Read one page into the shard's lanes. Returns how many records the page held (re-read ones included, so
 * a page of skipped records is not mistaken for the end), or `undefined` when the read failed.
 */
export async function readPage(state: MappingState, shard: ShardState): Promise<number | undefined> {
    const freshIterator = shard.iterator === undefined;
    try {
        shard.iterator ??= await takeIterator(state, shard);
        if (shard.iterator === undefined) {
            shard.ended = true;
            return 0;
        }
        const out = await state.streams.send(
            new (streamsSdk().GetRecordsCommand)({ ShardIterator: shard.iterator, Limit: GET_RECORDS_LIMIT }),
        );
        const page = out.Records ?? [];
        const after = shard.lastReadSequence === undefined ? undefined : BigInt(shard.lastReadSequence);
        // Convert the whole page before touching the shard's position: a record that cannot be converted
        // leaves the page to be read again (and counted as a poll error) instead of silently skipped.
        const fresh = page
            // After falling back to TRIM_HORIZON the shard is re-read from its start: skip what was seen.
            .filter(
                (raw) =>
                    after === undefined ||
                    raw.dynamodb?.SequenceNumber === undefined ||
                    BigInt(raw.dynamodb.SequenceNumber) > after,
            )
            .map((raw) => toLambdaStreamRecord(raw, state.streamArn));
        shard.iterator = out.NextShardIterator;
        shard.consecutiveResets = 0;
        if (shard.iterator === undefined) {
            shard.ended = true;
            state.describeWanted = true;
        }
        bufferPage(state, shard, fresh);
        return page.length;
    } catch (err) {
        return answerReadError(state, shard, err, freshIterator);
    }
}
