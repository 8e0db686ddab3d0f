/**
 * The sweeper: a scheduled handler (every minute by default) and the outbox's safety net. It finds what the
 * stream path missed (stream retention ran out, the mapping was disabled, a bug) and delivers it through the
 * store's claim path; and it moves pending records past their expiry to the DLQ.
 *
 * Finding the work: ClaimIndex (hash `PK`, range `claim_sort`) is sparse: it holds exactly the non-terminal
 * records, and `claim_sort` starts with the zero-padded `created_at`. A Scan of ClaimIndex (`runtime/relay/sweep-scan.ts`)
 * lists the partitions that have a due record: older than `sweepAfter` (`claim_sort < pad19(now − sweepAfter)`,
 * compared here rather than in a FilterExpression, which would not read less), or stamped more than `sweepAfter`
 * ahead of this clock, which no correct clock does (a writer's fast clock, or a FENCE it carried forward): such a
 * record is due at once instead of as late as that clock is ahead. Its cost is the size of the working set, not of
 * the table: in steady state the stream path completes records within seconds, so the index holds only in-flight
 * records and the scan reads a few KB (0.5 RCU per 4 KB of items read, eventually consistent; the projection
 * shrinks the response, not the read). Completed and expired records, which wait for TTL, are not in it. Each
 * partition found is then drained with `Claim` (ConsistentRead and head-of-line rule for keyed records),
 * delivering only due records and releasing the others to the stream path (with a keyed one, the later records of
 * its key). Partitions are drained in groups of `PARTITIONS_IN_FLIGHT`: their claims run concurrently and their
 * records share one delivery, the heads of many keys per PublishBatch call (`runtime/relay/lane-delivery.ts`).
 *
 * A run drains at most `maxPartitionsPerRun` partitions, in scan order from the sweep cursor kept in the table
 * (`runtime/relay/sweep-cursor.ts`), and moves the cursor past the last one it drained: partitions that never drain
 * cannot keep the ones after them from being reached, and each partition with a due record is drained within
 * ⌈N / maxPartitionsPerRun⌉ runs, N being the partitions with a due record.
 *
 * The sweep's now is its clock, checked against DynamoDB's (`runtime/relay/server-clock.ts`): the `Date` header of the
 * sweep-cursor read, the run's first call of this step. When the two disagree by more than
 * `SWEEPER_CLOCK_TOLERANCE_MS` beyond what the header can tell, the run sweeps by DynamoDB's time and logs a
 * warning, so a sweeper clock that runs slow or fast does not take fresh records for due ones and race the
 * stream path. `SweeperClockOffset` records the difference on each run that read a header.
 *
 * The same scan gives `OldestPendingAge` ({@link SWEEPER_METRICS}), emitted once per run: now minus the oldest
 * `created_at` among the items it read (a stamp too far ahead counts from the record's first claim, or from now),
 * or 0 when the index is empty. It costs no extra read. It is exact when the scan reads the whole index (round
 * from the cursor to it), which it does unless it stopped at `maxPartitionsPerRun` partitions: then it is the
 * oldest of what was read, a lower bound. When the scan fails, no value is emitted.
 *
 * The expiry sweep (`runtime/relay/expiry-sweep.ts`) queries ExpiryIndex (`has_expiry = <value> AND expires_at < now`,
 * also sparse) for `"1"` and each expiry shard, reads each candidate consistently, dead-letters pending ones with
 * reason `expired` and marks them expired.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { drainPartitions, PARTITIONS_IN_FLIGHT, type DrainResult } from "./claimed-delivery";
import type { DeliveryContext } from "./delivery";
import type { EmfMetrics } from "../observability/emf";
import { errorCodeOf } from "../errors";
import { sweepExpired } from "./expiry-sweep";
import { integerIn } from "../integer-setting";
import { HANDLER_LIMITS } from "../limits";
import { DELIVERY_METRICS, HANDLER_FUNCTIONS, SWEEPER_METRICS } from "../observability/metric-catalog";
import {
    assertDeployment,
    resolveDeliveryConfig,
    startInvocation,
    type HandlerContext,
    type PublisherConfig,
    type ResolvedDeliveryConfig,
} from "./publisher";
import { readSweepCursor, sameCursor, writeSweepCursor, type ClaimIndexKey } from "./sweep-cursor";
import { scanDuePartitions, type DuePartition } from "./sweep-scan";
import { SWEEPER_CLOCK_TOLERANCE_MS, sweepTime, type ServerDate } from "./server-clock";
import type { FencingToken } from "../store/transitions";

/** Configuration of {@link createSweeper}: the publisher's, plus the sweep's own limits. */
export interface SweeperConfig extends PublisherConfig {
    /** A pending record older than this many seconds is the sweeper's to deliver (1–86400). @default 120 */
    readonly sweepAfterSeconds?: number;
    /**
     * The most partitions drained per run (1–10000), in ClaimIndex's scan order from the sweep cursor kept in the
     * table, which the run moves past the last partition it drained. @default 200
     */
    readonly maxPartitionsPerRun?: number;
    /** The most expired records dead-lettered per run (1–100000). @default 1000 */
    readonly maxExpiredPerRun?: number;
    /**
     * The writers' ExpiryIndex shard count (1–64). The expiry step queries `"1"` and every shard below the larger
     * of this and the table's expiry shards mark, so a lower value here still finds every record. @default 1
     */
    readonly expiryShards?: number;
}

/** What one sweep did. */
export interface SweepResult {
    /** Records published. */
    readonly published: number;
    /** Records dead-lettered as expired. */
    readonly expired: number;
    /** Records dead-lettered after permanent publish failures. */
    readonly deadLettered: number;
    /** Partitions with records older than the cutoff. */
    readonly partitions: number;
    /** Partitions whose delivery stopped at a failure (retried next run). */
    readonly failedPartitions: number;
    /**
     * Expired records the sweep could not handle (unreadable, undecodable, or the DLQ refused them); each is
     * counted as `SweepFailures`, logged, and retried next run, and the sweep goes on without it.
     */
    readonly failedRecords: number;
}

/** The sweeper's Lambda context: the remaining time tells it when to stop starting work. */
export type SweeperContext = HandlerContext;

/** A sweeper handler. */
export type SweeperHandler = (event?: unknown, context?: SweeperContext) => Promise<SweepResult>;

/**
 * Create the sweeper handler.
 *
 * @param config - Clients, names and limits (the publisher's, plus the sweep's).
 * @throws OutboxError `INVALID_CONFIG` when the config is incomplete.
 */
export function createSweeper(config: SweeperConfig): SweeperHandler {
    const settings: SweepSettings = {
        config,
        resolved: resolveDeliveryConfig(config, "createSweeper"),
        sweepAfterMs:
            integerIn(
                "createSweeper",
                "sweepAfterSeconds",
                config.sweepAfterSeconds,
                HANDLER_LIMITS.sweepAfterSeconds,
            ) * 1000,
        maxPartitions: integerIn(
            "createSweeper",
            "maxPartitionsPerRun",
            config.maxPartitionsPerRun,
            HANDLER_LIMITS.maxPartitionsPerRun,
        ),
        maxExpired: integerIn(
            "createSweeper",
            "maxExpiredPerRun",
            config.maxExpiredPerRun,
            HANDLER_LIMITS.maxExpiredPerRun,
        ),
        expiryShards: integerIn("createSweeper", "expiryShards", config.expiryShards, HANDLER_LIMITS.expiryShards),
    };
    return (_event, context) => sweep(settings, context);
}

/** The sweeper's settings, validated at construction. */
interface SweepSettings {
    readonly config: SweeperConfig;
    readonly resolved: ResolvedDeliveryConfig;
    readonly sweepAfterMs: number;
    readonly maxPartitions: number;
    readonly maxExpired: number;
    readonly expiryShards: number;
}

/** One sweep: its settings, this invocation's metrics and token, and the counts so far. */
interface SweepRun {
    readonly settings: SweepSettings;
    readonly ctx: DeliveryContext;
    readonly metrics: EmfMetrics;
    readonly timeLeft: () => number;
    readonly token: FencingToken;
    partitions: number;
    failedPartitions: number;
    failedRecords: number;
    /**
     * A step that could not run at all (its index query or scan failed), or a partition whose fence is above
     * `claimVersion` (a fault of the deployment): the rest of the run still goes on, then the first such error is
     * thrown so the invocation counts as an error. One record's failure is never a step's.
     */
    stepFailure: unknown;
}

/** One invocation: the expiry step, then the missed records, with one EMF line. */
async function sweep(settings: SweepSettings, context: SweeperContext | undefined): Promise<SweepResult> {
    const { resolved } = settings;
    await assertDeployment(resolved);
    const { metrics, timeLeft } = startInvocation(
        resolved,
        settings.config.writeMetrics,
        HANDLER_FUNCTIONS.sweeper,
        context,
    );
    const run: SweepRun = {
        settings,
        ctx: { ...resolved.base, metrics },
        metrics,
        timeLeft,
        token: { owner: `sweeper/${context?.awsRequestId ?? randomUUID()}`, version: resolved.claimVersion },
        partitions: 0,
        failedPartitions: 0,
        failedRecords: 0,
        stepFailure: undefined,
    };
    try {
        await expiryStep(run);
        await missedRecordsStep(run);
        if (run.stepFailure !== undefined) throw run.stepFailure;
        return {
            published: metrics.value(DELIVERY_METRICS.published),
            expired: metrics.value(DELIVERY_METRICS.expired),
            deadLettered: metrics.value(DELIVERY_METRICS.deadLettered) - metrics.value(DELIVERY_METRICS.expired),
            partitions: run.partitions,
            failedPartitions: run.failedPartitions,
            failedRecords: run.failedRecords,
        };
    } finally {
        metrics.flush();
    }
}

function keepGoing(run: SweepRun): boolean {
    return run.timeLeft() >= run.settings.resolved.reserveMs;
}

/** One record the sweep could not handle: counted, logged, retried next run. */
function recordFailed(run: SweepRun, what: string, err: unknown, attributes: Record<string, unknown>): void {
    run.failedRecords += 1;
    run.metrics.count(DELIVERY_METRICS.sweepFailures);
    run.settings.resolved.base.logger.warn(`sweeper: ${what}; the sweep goes on and the next run retries it`, {
        ...attributes,
        code: errorCodeOf(err),
    });
}

/** 1. Expiry: pending records past expires_at → DLQ, marked expired, from every ExpiryIndex value. */
async function expiryStep(run: SweepRun): Promise<void> {
    const { expiryShards, maxExpired } = run.settings;
    const expiry = await sweepExpired(run.ctx, {
        expiryShards,
        maxExpired,
        keepGoing: () => keepGoing(run),
        recordFailed: (what, err, attributes) => recordFailed(run, what, err, attributes),
    });
    if (expiry.failure !== undefined) {
        run.stepFailure = expiry.failure;
        run.settings.resolved.base.logger.error("sweeper: the expiry step failed; sweeping missed records anyway", {
            code: errorCodeOf(expiry.failure),
        });
    }
}

/**
 * 2. Missed records: partitions with a due non-terminal record, from the sparse ClaimIndex, in scan order from the
 * sweep cursor, so partitions that never drain cannot keep the ones after them from being reached.
 */
async function missedRecordsStep(run: SweepRun): Promise<void> {
    const base = run.settings.resolved.base;
    const sentAt = base.clock.now();
    const serverDate: ServerDate = { dateMs: undefined };
    let cursor: ClaimIndexKey | undefined;
    try {
        cursor = await readSweepCursor(base, serverDate);
    } catch (err) {
        base.logger.error("sweeper: the sweep cursor could not be read; scanning from the start of the claim index", {
            code: errorCodeOf(err),
        });
    }
    const time = sweepTime(sentAt, base.clock.now(), serverDate.dateMs);
    if (time.offsetMs !== undefined) run.metrics.sample(SWEEPER_METRICS.clockOffset, time.offsetMs, "Milliseconds");
    if (time.serverTime) {
        base.logger.warn(
            `sweeper: this clock and DynamoDB's (the Date header of its answer) disagree by more than ${SWEEPER_CLOCK_TOLERANCE_MS / 1000} s; this run sweeps by DynamoDB's time, so fresh records are not taken for due ones; fix this host's time sync`,
            { clock_offset_ms: time.offsetMs },
        );
    }
    const scannedAt = time.nowMs;
    const due: DueWindow = {
        cutoff: scannedAt - run.settings.sweepAfterMs,
        // A created_at further ahead of the sweep's now than sweepAfter comes from a writer's clock that is wrong
        // (or one carried forward from it): trusting it would hold the record back for as long as that clock is
        // ahead, so it is due at once.
        implausibleAfter: scannedAt + run.settings.sweepAfterMs,
    };
    const scan = await scanDuePartitions(base, {
        cursor,
        now: scannedAt,
        createdBefore: due.cutoff,
        createdAfter: due.implausibleAfter,
        maxPartitions: run.settings.maxPartitions,
    });
    if (scan.failure === undefined) {
        run.metrics.sample(
            SWEEPER_METRICS.oldestPendingAge,
            Math.max(0, scannedAt - (scan.oldestCreatedAt ?? scannedAt)),
            "Milliseconds",
        );
    } else {
        run.stepFailure ??= scan.failure;
        base.logger.error("sweeper: the claim index scan failed; draining the partitions found so far", {
            code: errorCodeOf(scan.failure),
            partitions: scan.partitions.length,
        });
    }
    const drainedCount = await drainDuePartitions(run, scan.partitions, due);
    // The next run starts at the first partition this one did not reach, or where the scan stopped.
    const next = drainedCount < scan.partitions.length ? scan.partitions[drainedCount]!.startAfter : scan.next;
    if (!sameCursor(next, cursor)) {
        try {
            await writeSweepCursor(base, next);
        } catch (err) {
            base.logger.error("sweeper: the sweep cursor could not be moved; the next run starts where this one did", {
                code: errorCodeOf(err),
            });
        }
    }
}

/** Which records a sweep delivers: created before the cutoff, or stamped implausibly far ahead of its clock. */
interface DueWindow {
    readonly cutoff: number;
    readonly implausibleAfter: number;
}

/**
 * Drain the partitions found, in scan order, while there is time, {@link PARTITIONS_IN_FLIGHT} at a time (their
 * claims concurrent, their records in one delivery); returns how many were reached. A partition counts as
 * reached once its group started, as each did one at a time before.
 */
async function drainDuePartitions(run: SweepRun, partitions: readonly DuePartition[], due: DueWindow): Promise<number> {
    let drainedCount = 0;
    while (drainedCount < partitions.length) {
        if (!keepGoing(run)) break;
        const group = partitions.slice(drainedCount, drainedCount + PARTITIONS_IN_FLIGHT).map((p) => p.partition);
        run.partitions += group.length;
        drainedCount += group.length;
        await drainDueGroup(run, group, due);
    }
    return drainedCount;
}

/**
 * Deliver a group of partitions' due records through the claim path; a failure or a truncated claim waits for the
 * next run. A partition whose fence is above `claimVersion` also fails the run, after the others.
 */
async function drainDueGroup(run: SweepRun, partitions: readonly string[], due: DueWindow): Promise<void> {
    const { resolved } = run.settings;
    let results: readonly DrainResult[];
    try {
        results = await drainPartitions(
            run.ctx,
            resolved.store,
            partitions.map((partition) => ({ partition })),
            run.token,
            {
                limit: resolved.claimLimit,
                maxRounds: 100,
                createdBefore: due.cutoff,
                createdAfter: due.implausibleAfter,
                keepGoing: () => keepGoing(run),
            },
        );
    } catch (error) {
        results = partitions.map(() => ({
            handled: [],
            exhausted: false,
            heldKeys: [],
            failure: { recordId: "", error },
        }));
    }
    partitions.forEach((partition, i) => {
        const { failure, truncated, fenced } = results[i]!;
        if (failure !== undefined && fenced === true) {
            // A fault of the deployment (logged at error where the claim was refused): the other partitions go
            // on, and the run fails once they are done.
            run.failedPartitions += 1;
            run.stepFailure ??= failure.error;
        } else if (failure !== undefined) {
            run.failedPartitions += 1;
            resolved.base.logger.warn("sweeper: partition delivery stopped at a failure; next run retries", {
                partition,
                recordId: failure.recordId,
                code: errorCodeOf(failure.error),
            });
        } else if (truncated === true) {
            run.failedPartitions += 1;
            resolved.base.logger.warn(
                "sweeper: a claim came back truncated (a claim write failed); the rest of the partition waits for the next run",
                { partition },
            );
        }
    });
}
