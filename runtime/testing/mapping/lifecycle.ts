/**
 * The life of a local mapping: the first DescribeStream, the poll loop (one cycle serves every shard whose parent
 * is done, lists the shards again when one ended or a second has passed, and pauses when nothing happened),
 * `drain()` waiters settled by the first idle cycle after them or by their deadline, and `stop()`.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../../errors";
import { serveShard } from "./batcher";
import { integerOption, errorName } from "./settings";
import { listShards } from "./shard-reader";
import { isReady, pendingRecords, type DrainWaiter, type MappingState } from "./state";
import type { LocalMappingDrainOptions } from "./types";

const DESCRIBE_INTERVAL_MS = 1000;

/**
 * List the shards before the loop starts, so a missing stream fails the start.
 *
 * @throws OutboxError `NOT_FOUND` for a missing stream, `UNAVAILABLE` for any other DescribeStream failure.
 */
export async function listShardsAtStart(state: MappingState): Promise<void> {
    try {
        await listShards(state);
        state.lastDescribeAt = state.settings.clock.now();
        state.describeWanted = false;
    } catch (err) {
        const name = errorName(err);
        const code = name === "ResourceNotFoundException" ? "NOT_FOUND" : "UNAVAILABLE";
        throw new OutboxError(code, `local event source mapping: DescribeStream ${state.streamArn} failed (${name})`, {
            cause: err,
            context: { streamArn: state.streamArn },
        });
    }
}

/** Resolve the waiters an idle cycle satisfies (`idleCycle`, when this one was idle) and reject the late ones. */
function settleWaiters(state: MappingState, idleCycle: number | undefined): void {
    const { waiters } = state;
    const now = state.settings.clock.now();
    for (let i = waiters.length - 1; i >= 0; i -= 1) {
        const waiter = waiters[i] as DrainWaiter;
        if (idleCycle !== undefined && idleCycle >= waiter.fromCycle && state.lastDescribeCycle >= waiter.fromCycle) {
            waiters.splice(i, 1);
            waiter.resolve();
        } else if (now >= waiter.deadline) {
            waiters.splice(i, 1);
            const pending = pendingRecords(state);
            const message =
                `local event source mapping: stream not drained in time; ${pending} record(s) still pending, ` +
                `${state.counters.failedInvocations} failed invocation(s) so far`;
            waiter.reject(
                new OutboxError("TIMEOUT", message, {
                    context: { streamArn: state.streamArn, pendingRecords: pending },
                }),
            );
        }
    }
}

/** List the shards again when one ended, a waiter needs a fresh list, or the interval passed. Returns success. */
async function describeIfDue(state: MappingState, thisCycle: number): Promise<boolean> {
    const { clock, logger } = state.settings;
    const due =
        state.describeWanted ||
        state.waiters.some((w) => state.lastDescribeCycle < w.fromCycle) ||
        clock.now() - state.lastDescribeAt >= DESCRIBE_INTERVAL_MS;
    if (!due) return true;
    try {
        await listShards(state);
        state.lastDescribeCycle = thisCycle;
        state.lastDescribeAt = clock.now();
        state.describeWanted = false;
        return true;
    } catch (err) {
        state.counters.pollErrors += 1;
        logger.warn("local mapping: DescribeStream failed, will retry", {
            streamArn: state.streamArn,
            error: errorName(err),
        });
        return false;
    }
}

/** One poll cycle over every ready shard. Returns whether anything was read or invoked. */
async function runCycle(state: MappingState): Promise<boolean> {
    state.cycle += 1;
    const thisCycle = state.cycle;
    let idle = await describeIfDue(state, thisCycle);
    let worked = false;
    const served = new Set<string>();
    for (const shard of state.shards) {
        if (state.stopped) return worked;
        if (!isReady(shard, state.shards)) continue;
        served.add(shard.shardId);
        try {
            const outcome = await serveShard(state, shard);
            worked = worked || outcome.worked;
            idle = idle && outcome.idle;
        } catch (err) {
            idle = false;
            state.counters.pollErrors += 1;
            state.settings.logger.error("local mapping: shard loop failed, will retry", {
                shardId: shard.shardId,
                error: errorName(err),
            });
        }
    }
    // A shard that ended in this cycle may have children listed before it that are ready only now.
    if (state.shards.some((s) => isReady(s, state.shards) && !served.has(s.shardId))) idle = false;
    settleWaiters(state, idle ? thisCycle : undefined);
    return worked;
}

/** Poll until `stop()`, pausing `pollIntervalMs` after a cycle that did nothing. */
export async function runLoop(state: MappingState): Promise<void> {
    while (!state.stopped) {
        const worked = await runCycle(state);
        if (!worked && !state.stopped)
            await Promise.race([state.settings.clock.sleep(state.settings.pollIntervalMs), state.stopSignal]);
    }
}

/** A `drain()`: a waiter for the next idle cycle that begins after this call. */
export function drain(state: MappingState, drainOptions: LocalMappingDrainOptions = {}): Promise<void> {
    const timeoutMs = integerOption("timeoutMs", drainOptions.timeoutMs, {
        min: 0,
        max: 86_400_000,
        fallback: 30_000,
        unit: "ms",
    });
    if (state.stopped) {
        return Promise.reject(
            new OutboxError("UNAVAILABLE", "local event source mapping: drain() after stop()", {
                context: { streamArn: state.streamArn },
            }),
        );
    }
    return new Promise<void>((resolve, reject) => {
        state.waiters.push({
            fromCycle: state.cycle + 1,
            deadline: state.settings.clock.now() + timeoutMs,
            resolve,
            reject,
        });
    });
}

/** Stop the loop, wait for it (and the running invocation) to end, and reject the waiters left. */
export async function stop(state: MappingState, loop: Promise<void>): Promise<void> {
    if (!state.stopped) {
        state.stopped = true;
        state.wake();
    }
    await loop;
    for (const waiter of state.waiters.splice(0)) {
        waiter.reject(
            new OutboxError("UNAVAILABLE", "local event source mapping stopped before the stream was drained", {
                context: { streamArn: state.streamArn },
            }),
        );
    }
    state.settings.logger.info("local mapping: stopped", {
        streamArn: state.streamArn,
        invocations: state.counters.invocations,
    });
}
