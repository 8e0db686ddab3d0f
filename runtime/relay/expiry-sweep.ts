/**
 * The sweeper's expiry step: pending records past `expires_at` → DLQ with reason `expired`, marked expired.
 *
 * ExpiryIndex is sparse (only non-terminal records with an expiry) and hashed on `has_expiry`. The step reads the
 * table's expiry shards mark, then queries `"1"` and every shard value below the larger of the sweeper's own
 * `expiryShards` and the mark (`runtime/record/expiry-shard.ts`), one page per value in turn, each value from its
 * own cursor, so one deep shard cannot use up the run's budget before the others are read. A value whose query
 * fails is dropped for this run and the others go on; the first such failure is returned for the sweeper to throw.
 *
 * @packageDocumentation
 */
import {
    GetItemCommand,
    QueryCommand,
    type AttributeValue,
    type GetItemCommandOutput,
    type QueryCommandOutput,
} from "@aws-sdk/client-dynamodb";
import {
    afterSend,
    DELIVERY_METRICS,
    expirePending,
    isExpired,
    sendToDeadLetterQueue,
    type DeliveryContext,
} from "./delivery";
import { errorCodeOf } from "../errors";
import { unmarshalRecord } from "../record/codec";
import { expiryReadValues } from "../record/expiry-shard";
import { ATTR, EXPIRY_INDEX, originTaken, STATUS } from "../schema";
import { wrapAwsError } from "../store/aws-errors";
import { readExpiryShards } from "../store/expiry-shards-row";
import { expiringBefore, placeholders, type Expression } from "../store/expressions";

/** The limits and hooks of one expiry step. */
export interface ExpirySweepOptions {
    /** The sweeper's own `expiryShards`; the table's mark raises it. */
    readonly expiryShards: number;
    /** The most ExpiryIndex candidates handled in the step. */
    readonly maxExpired: number;
    /** Whether the invocation still has time to start work. */
    readonly keepGoing: () => boolean;
    /** Called for each candidate that could not be handled; the step goes on without it. */
    readonly recordFailed: (what: string, err: unknown, attributes: Record<string, unknown>) => void;
}

/** What one expiry step did. */
export interface ExpirySweepOutcome {
    /** ExpiryIndex candidates handled (dead-lettered, skipped as no longer pending, or failed). */
    readonly seen: number;
    /** The ExpiryIndex values queried: `"1"` and each shard value. */
    readonly values: number;
    /** The first failure that kept a value (or the mark) from being read; `undefined` when every read worked. */
    readonly failure: unknown;
}

/** One ExpiryIndex value being read, page by page. */
interface Lane {
    readonly value: string;
    readonly key: Expression;
    startKey: Record<string, AttributeValue> | undefined;
    done: boolean;
}

/**
 * Dead-letter one ExpiryIndex candidate if it is still pending and expired: read it consistently, send it to the
 * DLQ with reason `expired`, mark it expired. A record that cannot be read or decoded throws, and the caller
 * counts it and moves on.
 */
async function expireOne(ctx: DeliveryContext, key: Record<string, AttributeValue>): Promise<void> {
    let got: GetItemCommandOutput;
    try {
        got = (await ctx.dynamodb.send(
            new GetItemCommand({
                TableName: ctx.tableName,
                Key: { [ATTR.pk]: key[ATTR.pk]!, [ATTR.sk]: key[ATTR.sk]! },
                ConsistentRead: true,
            }),
        )) as GetItemCommandOutput;
    } catch (err) {
        throw wrapAwsError(err, "sweeper: reading an expiring record failed", { partition: key[ATTR.pk]?.S });
    }
    if (got.Item === undefined) return;
    const record = unmarshalRecord(got.Item);
    // Claimed records belong to their claimer, which dead-letters them (or loses the claim to a stale reclaim);
    // another region's records to that region's sweeper.
    if (record.status !== STATUS.pending || !isExpired(record, ctx.clock.now())) return;
    if (!originTaken(ctx.origin, record.originRegion)) return;
    await sendToDeadLetterQueue(ctx, record, "expired", { attempts: record.replayCount });
    ctx.metrics.count(DELIVERY_METRICS.expired);
    await afterSend(ctx, DELIVERY_METRICS.deadLetteredNotMarked, () => expirePending(ctx, record));
}

/**
 * Run the expiry step: every ExpiryIndex value, round robin, until the candidates run out, `maxExpired` are
 * handled, or the invocation runs short of time.
 *
 * @param ctx - The invocation's delivery context.
 * @param options - The shard count, the budget and the hooks.
 */
export async function sweepExpired(ctx: DeliveryContext, options: ExpirySweepOptions): Promise<ExpirySweepOutcome> {
    const now = ctx.clock.now();
    let failure: unknown;
    let shards = options.expiryShards;
    try {
        shards = Math.max(
            shards,
            await readExpiryShards(
                async (input) => (await ctx.dynamodb.send(new GetItemCommand(input))) as GetItemCommandOutput,
                ctx.tableName,
            ),
        );
    } catch (err) {
        failure = err;
        ctx.logger.error(
            "sweeper: the table's expiry shards mark could not be read; sweeping the sweeper's own expiryShards only",
            { code: errorCodeOf(err), expiryShards: shards },
        );
    }
    const lanes: Lane[] = expiryReadValues(shards).map((value) => ({
        value,
        key: expiringBefore(value, now + 1),
        startKey: undefined,
        done: false,
    }));
    // A page per value per round: a bounded page keeps one deep value from taking the whole budget in one read.
    const pageLimit = Math.max(1, Math.ceil(options.maxExpired / lanes.length));
    let seen = 0;
    const more = (): boolean => seen < options.maxExpired && options.keepGoing();
    while (more() && lanes.some((lane) => !lane.done)) {
        for (const lane of lanes) {
            if (lane.done) continue;
            if (!more()) break;
            let page: QueryCommandOutput;
            try {
                page = (await ctx.dynamodb.send(
                    new QueryCommand({
                        TableName: ctx.tableName,
                        IndexName: EXPIRY_INDEX.indexName,
                        KeyConditionExpression: lane.key.text,
                        ...placeholders(lane.key),
                        Limit: pageLimit,
                        ...(lane.startKey ? { ExclusiveStartKey: lane.startKey } : {}),
                    }),
                )) as QueryCommandOutput;
            } catch (err) {
                lane.done = true;
                const wrapped = wrapAwsError(err, "sweeper: expiry index query failed", {
                    table: ctx.tableName,
                    expiryShard: lane.value,
                });
                failure ??= wrapped;
                ctx.logger.error("sweeper: an expiry index query failed; the other values are still swept", {
                    code: errorCodeOf(wrapped),
                    expiryShard: lane.value,
                });
                continue;
            }
            for (const key of page.Items ?? []) {
                if (!more()) break;
                seen += 1;
                try {
                    await expireOne(ctx, key);
                } catch (err) {
                    options.recordFailed("an expired record could not be dead-lettered", err, {
                        partition: key[ATTR.pk]?.S,
                        sk: key[ATTR.sk]?.S,
                    });
                }
            }
            lane.startKey = page.LastEvaluatedKey;
            if (lane.startKey === undefined) lane.done = true;
        }
    }
    return { seen, values: lanes.length, failure };
}
