/**
 * Serving one shard in a poll cycle: read a page when the buffer has room, then invoke while a batch is due, as
 * Lambda's batching does. A batch is due when it is full, when the batching window since the oldest buffered record
 * is over, when the shard has ended (nothing more will come), or when a failed record's retry is due.
 *
 * @packageDocumentation
 */
import { batchLimit, invokeBatch } from "./invoker";
import { readPage } from "./shard-reader";
import type { MappingState, ShardState } from "./state";

function batchDue(state: MappingState, shard: ShardState): boolean {
    const { clock, windowMs } = state.settings;
    const full = shard.buffer.length >= batchLimit(state, shard);
    const windowOver = clock.now() - shard.bufferedSince >= windowMs;
    return full || windowOver || shard.ended || shard.redelivering;
}

/** Read and dispatch one shard. Returns whether it did anything and whether it is idle (nothing left to do). */
export async function serveShard(state: MappingState, shard: ShardState): Promise<{ worked: boolean; idle: boolean }> {
    const { batchSize, clock } = state.settings;
    let read: number | undefined = 0;
    if (!shard.ended && shard.buffer.length < batchSize) read = await readPage(state, shard);
    let worked = (read ?? 0) > 0;
    while (!state.stopped && shard.buffer.length > 0 && clock.now() >= shard.retryAt) {
        if (!batchDue(state, shard)) break;
        worked = true;
        if (!(await invokeBatch(state, shard))) break;
        if (shard.buffer.length < batchSize && !shard.ended) break;
    }
    return { worked, idle: read === 0 && shard.buffer.length === 0 };
}
