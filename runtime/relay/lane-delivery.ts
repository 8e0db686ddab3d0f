/**
 * Delivering claimed records in lanes and rounds: the publishing half of the claim path, shared by the stream
 * publisher's keyed path and the sweeper.
 *
 * - **Lanes.** The claimed records of each (partition, ordering key) are a lane, in claim order: oldest first. A
 *   keyless record is a lane of its own (on a FIFO topic a partition's keyless records share its message group, so
 *   they still go one per round, and one refused record holds nothing but itself).
 * - **Rounds.** A round publishes the head of every ready lane, in PublishBatch calls of at most 10 entries (and
 *   256 KB), up to {@link PUBLISH_CALLS_IN_FLIGHT} calls at once, from one partition or several. A round never
 *   holds two heads of one message group (on a standard topic, of one ordering-key string): two partitions that
 *   share a key string are one `MessageGroupId` on a FIFO topic, and AWS documents nothing about a failed entry
 *   followed by an accepted one of the same group, so their lanes take turns.
 * - **A lane's next record is published only after its previous one was accepted** (or dead-lettered), in the
 *   next round. Its completion need not have returned: completions run behind the rounds, one at a time per lane
 *   (completion n+1 is sent only after completion n succeeded), many lanes at once.
 * - **A failed completion stops its lane.** Records of that lane published after it are not completed and are
 *   released, so whoever delivers them next sends them again in order. A crash anywhere leaves a lane as a
 *   completed prefix followed by records that were published or not, in order: the next delivery republishes them
 *   in order. Duplicates, never an inversion: a record's first arrival never comes after a younger one of its key.
 *
 * Failures: SNS refusing one record for its content, or a DLQ that cannot take it, holds that record's lane (its
 * key) only. A fault every record would meet (SNS throttling or down, a failed DynamoDB write) stops the delivery:
 * no round starts after it, and what was not handled is released. A completion refused because the claim is no
 * longer ours (`STALE_FENCING_TOKEN`) ends that partition's lanes: another claimer took over, and this one
 * completes nothing more there. No round starts once `keepGoing` says the time is short.
 *
 * @packageDocumentation
 */
import {
    afterSend,
    countPermanentFailure,
    DELIVERY_METRICS,
    expireClaimed,
    isExpired,
    logTransientRefusal,
    notePublished,
    publishBatch,
    publishBatches,
    sendToDeadLetterQueue,
    type DeliveryContext,
    type PublishResult,
} from "./delivery";
import { DESTINATION_LABELS } from "../destination/kind";
import { isOutboxError, OutboxError } from "../errors";
import { PUBLISH_CALLS_IN_FLIGHT } from "./keyless-publish";
import { fifoMessageGroupId, outboundMessage, type OutboundMessage } from "../record/message";
import type { OutboxRecord } from "../record/codec";
import { callSlots, mapBounded } from "../slots";
import type { FencingToken } from "../store/transitions";
import type { ClaimedDeliveryResult, ClaimingStore } from "./claiming-store";

/** The most releases in flight at once when a delivery hands its unhandled records back. */
const RELEASES_IN_FLIGHT = 25;

/** One partition's claimed records, oldest first, as Claim returned them. */
export interface ClaimedPartition {
    readonly partition: string;
    readonly records: readonly OutboxRecord[];
}

/** A record that could not be delivered, or the fault that stopped the delivery at it. */
interface RecordFailure {
    readonly recordId: string;
    readonly error: unknown;
}

/** What became of one partition's records so far. */
interface PartitionState {
    readonly partition: string;
    readonly claimed: readonly OutboxRecord[];
    readonly handled: string[];
    readonly heldKeys: string[];
    /** The records whose own failure held their lane. */
    readonly heldRecords: string[];
    readonly lanes: Lane[];
    /** The first record (in claim order) whose own failure holds its lane. */
    failure: (RecordFailure & { readonly index: number }) | undefined;
    /** Another claimer took over: nothing more is published or completed here. */
    preempted: boolean;
}

/** One (partition, ordering key): its records in order, how far publishing got, and its completions. */
interface Lane {
    readonly state: PartitionState;
    readonly group: string;
    readonly records: OutboxRecord[];
    /** The index of the next record to publish. */
    next: number;
    /** No more records of this lane are published: it is held, stopped, or a completion failed. */
    ended: boolean;
    /** Ended by a failure of its own record (it holds its key). */
    held: boolean;
    /** The lane's completions, in order; resolves to false once one failed (the later ones are not sent). */
    chain: Promise<boolean>;
}

/** One delivery: its lanes, and the fault that stopped it. */
interface LaneRun {
    readonly ctx: DeliveryContext;
    readonly store: ClaimingStore;
    readonly token: FencingToken;
    readonly partitions: PartitionState[];
    readonly lanes: Lane[];
    stop: RecordFailure | undefined;
}

/** A head to publish: its lane, its record and its published form. */
interface Head {
    readonly lane: Lane;
    readonly record: OutboxRecord;
    readonly message: OutboundMessage;
}

/**
 * Deliver claimed records of one partition or several in lanes and rounds (see the module comment), then release
 * what was not handled.
 *
 * @param ctx - Clients, names, limits and metrics.
 * @param store - The store that issued the claims.
 * @param token - The token that holds every claim.
 * @param batches - Each partition's claimed records, oldest first.
 * @param keepGoing - Checked before each round: false stops starting rounds. @default always true
 * @returns One result per batch, aligned with `batches`.
 */
export async function deliverLanes(
    ctx: DeliveryContext,
    store: ClaimingStore,
    token: FencingToken,
    batches: readonly ClaimedPartition[],
    keepGoing: () => boolean = () => true,
): Promise<ClaimedDeliveryResult[]> {
    const run: LaneRun = {
        ctx,
        store,
        token,
        partitions: batches.map((b) => startPartition(ctx, b)),
        lanes: [],
        stop: undefined,
    };
    for (const p of run.partitions) run.lanes.push(...p.lanes);
    try {
        while (run.stop === undefined && keepGoing()) {
            const heads = readyHeads(run);
            if (heads.length === 0) break;
            await deliverRound(run, heads);
        }
    } finally {
        // No completion may still be running when the delivery answers, even after a bug's exception.
        await Promise.allSettled(run.lanes.map((l) => l.chain));
    }
    return Promise.all(run.partitions.map((p) => finishPartition(run, p)));
}

/** A partition's lanes, in the order their first records were claimed. */
function startPartition(ctx: DeliveryContext, batch: ClaimedPartition): PartitionState {
    const state: PartitionState = {
        partition: batch.partition,
        claimed: batch.records,
        handled: [],
        heldKeys: [],
        heldRecords: [],
        lanes: [],
        failure: undefined,
        preempted: false,
    };
    const byLane = new Map<string, Lane>();
    for (const record of batch.records) {
        const id =
            record.orderingKey !== undefined ? `key\u0000${record.orderingKey}` : `record\u0000${record.recordId}`;
        let lane = byLane.get(id);
        if (lane === undefined) {
            const group = ctx.destination.fifo
                ? fifoMessageGroupId(outboundMessage(record))
                : (record.orderingKey ?? `\u0000${record.recordId}`);
            lane = { state, group, records: [], next: 0, ended: false, held: false, chain: Promise.resolve(true) };
            byLane.set(id, lane);
            state.lanes.push(lane);
        }
        lane.records.push(record);
    }
    return state;
}

/** The head of every lane that can publish now, at most one per message group. */
function readyHeads(run: LaneRun): Lane[] {
    const groups = new Set<string>();
    const heads: Lane[] = [];
    for (const lane of run.lanes) {
        if (lane.ended || lane.state.preempted || lane.next >= lane.records.length || groups.has(lane.group)) continue;
        groups.add(lane.group);
        heads.push(lane);
    }
    return heads;
}

/** One round: expired heads to the DLQ, the others in concurrent PublishBatch calls. */
async function deliverRound(run: LaneRun, lanes: readonly Lane[]): Promise<void> {
    const now = run.ctx.clock.now();
    const expired = lanes.filter((l) => isExpired(l.records[l.next]!, now));
    const heads: Head[] = lanes
        .filter((l) => !expired.includes(l))
        .map((lane) => ({
            lane,
            record: lane.records[lane.next]!,
            message: outboundMessage(lane.records[lane.next]!, run.ctx.source),
        }));
    const slots = callSlots(PUBLISH_CALLS_IN_FLIGHT);
    await Promise.all([
        ...expired.map((lane) => deadLetterExpired(run, lane)),
        ...publishBatches(run.ctx.destination, heads, true).map(async (call) => {
            await slots.acquire();
            try {
                // No call starts once a fault every record would meet is known.
                if (run.stop === undefined) await publishCall(run, call);
            } finally {
                slots.release();
            }
        }),
    ]);
}

/** Publish one call's heads and read each result: accepted heads move their lane on, refused ones are handled. */
async function publishCall(run: LaneRun, call: readonly Head[]): Promise<void> {
    const { ctx } = run;
    const results = await publishBatch(
        ctx,
        call.map((h) => h.message),
    );
    let failedInCall = false;
    for (let j = 0; j < call.length; j += 1) {
        const { lane, record } = call[j]!;
        const result = results[j]!;
        if (result.ok) {
            notePublished(ctx, record);
            if (failedInCall) ctx.metrics.count(DELIVERY_METRICS.publishedAfterFailure);
            accept(run, lane, record, false);
            continue;
        }
        failedInCall = true;
        await refused(run, lane, record, result);
    }
}

/** The lane's head was published or dead-lettered: its completion joins the lane's chain, and the lane moves on. */
function accept(run: LaneRun, lane: Lane, record: OutboxRecord, deadLettered: boolean): void {
    lane.next += 1;
    lane.chain = lane.chain.then((ok) => ok && completeOne(run, lane, record, deadLettered));
}

/** Complete one record with the token; a failure ends the lane, and a stale token the partition. */
async function completeOne(run: LaneRun, lane: Lane, record: OutboxRecord, deadLettered: boolean): Promise<boolean> {
    const { ctx, store, token } = run;
    try {
        await store.complete([record.recordId], token);
        lane.state.handled.push(record.recordId);
        return true;
    } catch (err) {
        // Sent but not completed: whoever delivers it next sends it again, and the lane's later records after it.
        ctx.metrics.count(
            deadLettered ? DELIVERY_METRICS.deadLetteredNotMarked : DELIVERY_METRICS.publishedNotCompleted,
        );
        lane.ended = true;
        if (isOutboxError(err, "STALE_FENCING_TOKEN")) lane.state.preempted = true;
        else run.stop ??= { recordId: record.recordId, error: err };
        return false;
    }
}

/** Hold the lane at its head: the record and the lane's later records are released, not tried. */
function hold(lane: Lane, record: OutboxRecord, error: unknown): void {
    const { state } = lane;
    lane.ended = true;
    lane.held = true;
    const index = state.claimed.indexOf(record);
    if (state.failure === undefined || index < state.failure.index)
        state.failure = { recordId: record.recordId, error, index };
    state.heldRecords.push(record.recordId);
    if (record.orderingKey !== undefined && !state.heldKeys.includes(record.orderingKey))
        state.heldKeys.push(record.orderingKey);
}

/** A fault that is not the record's: the delivery stops at it. */
function stopAt(run: LaneRun, lane: Lane, record: OutboxRecord, error: unknown): void {
    lane.ended = true;
    run.stop ??= { recordId: record.recordId, error };
}

/**
 * A head SNS refused: a transient refusal stops the delivery; a permanent one is counted on the record, and at
 * `maxPublishAttempts` the record goes to the DLQ (then completed), otherwise it holds its lane.
 */
async function refused(
    run: LaneRun,
    lane: Lane,
    record: OutboxRecord,
    result: Extract<PublishResult, { ok: false }>,
): Promise<void> {
    const { ctx } = run;
    ctx.metrics.count(DELIVERY_METRICS.publishFailed);
    const error = new OutboxError(
        result.permanent ? "INVALID_PAYLOAD" : "UNAVAILABLE",
        `${DESTINATION_LABELS[ctx.destination.kind]} refused record ${record.recordId}: ${result.code}`,
        {
            context: { recordId: record.recordId, code: result.code },
        },
    );
    if (!result.permanent) {
        logTransientRefusal(ctx, record, result.code);
        return stopAt(run, lane, record, error);
    }
    let attempts: number | undefined;
    try {
        attempts = await countPermanentFailure(ctx, record);
    } catch (err) {
        return stopAt(run, lane, record, err);
    }
    if (attempts !== undefined && attempts >= ctx.maxPublishAttempts) {
        try {
            await sendToDeadLetterQueue(ctx, record, "publish-rejected", {
                attempts,
                errorCode: result.code,
                errorMessage: result.message,
            });
        } catch (err) {
            return hold(lane, record, err);
        }
        return accept(run, lane, record, true);
    }
    ctx.logger.warn("outbox publish failed", {
        recordId: record.recordId,
        partition: record.partition,
        code: result.code,
        permanent: true,
        attempts,
    });
    hold(lane, record, error);
}

/** An expired head goes to the DLQ and is marked expired (in the lane's chain); a DLQ that cannot take it holds its lane. */
async function deadLetterExpired(run: LaneRun, lane: Lane): Promise<void> {
    const { ctx, token } = run;
    const head = lane.records[lane.next]!;
    try {
        await sendToDeadLetterQueue(ctx, head, "expired", { attempts: head.replayCount });
        ctx.metrics.count(DELIVERY_METRICS.expired);
    } catch (error) {
        return hold(lane, head, error);
    }
    lane.next += 1;
    lane.chain = lane.chain.then(async (ok) => {
        if (!ok) return false;
        try {
            if (await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => expireClaimed(ctx, head, token))) {
                lane.state.handled.push(head.recordId);
                return true;
            }
            // Another claimer holds it now and sends it to the DLQ again.
            ctx.metrics.count(DELIVERY_METRICS.deadLetteredNotMarked);
            lane.state.preempted = true;
        } catch (error) {
            run.stop ??= { recordId: head.recordId, error };
        }
        lane.ended = true;
        return false;
    });
}

/** Release a partition's unhandled records and say how its delivery ended. */
async function finishPartition(run: LaneRun, state: PartitionState): Promise<ClaimedDeliveryResult> {
    const handled = new Set(state.handled);
    const unhandled = state.claimed.filter((r) => !handled.has(r.recordId)).map((r) => r.recordId);
    await releaseAll(run, unhandled);
    // Records left that no failure of their own holds: the delivery stopped, or ran out of time, before them.
    const incomplete =
        !state.preempted && state.lanes.some((l) => !l.held && l.records.some((r) => !handled.has(r.recordId)));
    const stopped = incomplete && run.stop !== undefined;
    const failure = stopped ? run.stop : state.failure;
    return {
        handled: state.handled,
        heldKeys: state.heldKeys,
        heldRecords: state.heldRecords,
        stopped,
        ...(failure !== undefined ? { failure: { recordId: failure.recordId, error: failure.error } } : {}),
        ...(state.preempted ? { preempted: true } : {}),
        ...(incomplete && !stopped ? { incomplete: true } : {}),
    };
}

/** Hand records back to pending, a few at a time; a failure only delays them until the stale-claim window. */
async function releaseAll(run: LaneRun, ids: readonly string[]): Promise<void> {
    let failed = 0;
    let code = "";
    await mapBounded(ids, RELEASES_IN_FLIGHT, async (id) => {
        try {
            await run.store.release([id], run.token);
        } catch (err) {
            failed += 1;
            code ||= isOutboxError(err) ? err.code : "UNKNOWN";
        }
    });
    if (failed > 0)
        run.ctx.logger.warn("outbox release failed; the records become claimable after the stale-claim window", {
            count: failed,
            code,
        });
}
