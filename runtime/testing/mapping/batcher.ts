/**
 * Serving one shard in a poll cycle: read a page when the lanes have room, then, in every lane at once, invoke
 * while a batch is due, as Lambda's batching does. A batch is due when it is full, when the batching window since
 * the oldest buffered record is over, when the shard has ended (nothing more will come), or when a failed
 * record's retry is due. A lane waiting for its retry backoff is skipped; the others go on.
 *
 * @packageDocumentation
 */
import { batchLimit, invokeBatch } from "./invoker";
import { readPage } from "./shard-reader";
import { bufferedRecords, type LaneState, type MappingState, type ShardState } from "./state";

function batchDue(state: MappingState, shard: ShardState, lane: LaneState): boolean {
    const { clock, windowMs } = state.settings;
    const full = lane.buffer.length >= batchLimit(state, lane);
    const windowOver = clock.now() - lane.bufferedSince >= windowMs;
    return full || windowOver || shard.ended || lane.redelivering;
}

/** Invoke one lane while its batches are due. Returns whether it invoked at all. */
async function serveLane(state: MappingState, shard: ShardState, lane: LaneState): Promise<boolean> {
    const { batchSize, clock } = state.settings;
    let worked = false;
    while (!state.stopped && lane.buffer.length > 0 && clock.now() >= lane.retryAt) {
        if (!batchDue(state, shard, lane)) break;
        worked = true;
        if (!(await invokeBatch(state, shard, lane))) break;
        if (lane.buffer.length < batchSize && !shard.ended) break;
    }
    return worked;
}

/** Read and dispatch one shard. Returns whether it did anything and whether it is idle (nothing left to do). */
export async function serveShard(state: MappingState, shard: ShardState): Promise<{ worked: boolean; idle: boolean }> {
    const { batchSize } = state.settings;
    let read: number | undefined = 0;
    // Room for a full batch in every lane: with one lane, a read whenever its buffer is short of a batch.
    if (!shard.ended && bufferedRecords(shard) < batchSize * shard.lanes.length) read = await readPage(state, shard);
    const invoked = await Promise.all(shard.lanes.map((lane) => serveLane(state, shard, lane)));
    const worked = (read ?? 0) > 0 || invoked.some(Boolean);
    return { worked, idle: read === 0 && bufferedRecords(shard) === 0 };
}
