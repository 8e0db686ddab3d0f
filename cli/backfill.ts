/**
 * The backfill of GoBridge's migration hazard (reference §12 item 18): records written before ClaimIndex or
 * ExpiryIndex existed carry no `claim_sort` / `has_expiry`, so the sparse indexes never see them and the
 * claim path and the expiry sweep strand them. This pass gives every pending or claimed record the attributes
 * Persist would have written.
 *
 * It is a paged Scan (`Limit` = page size) over the whole table: acceptable for an operator tool run once per
 * migration, never on a hot path. Each update is conditioned on the status still being non-terminal and each
 * attribute it sets still being absent, so the pass is idempotent and a rerun resumes where an interrupted one
 * stopped (finished records no longer match the filter). Records written concurrently by an old-build writer
 * are caught by running it again after every writer is upgraded.
 *
 * @packageDocumentation
 */
import {
    ConditionalCheckFailedException,
    ScanCommand,
    UpdateItemCommand,
    type AttributeValue,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../runtime/errors";
import { readBigInt, readNumber } from "../runtime/record/codec";
import { claimSort } from "../runtime/record/keys";
import { ATTR, HAS_EXPIRY_FLAG, RECORD_SK_PREFIX, STATUS } from "../runtime/schema";

/** Expression attribute names used by the scan filter and the updates. */
const NAMES = {
    "#sk": ATTR.sk,
    "#status": ATTR.status,
    "#claimSort": ATTR.claimSort,
    "#hasExpiry": ATTR.hasExpiry,
    "#expiresAt": ATTR.expiresAt,
    "#createdAt": ATTR.createdAt,
    "#seq": ATTR.seq,
    "#pk": ATTR.pk,
} as const;

const IS_RECORD = "begins_with(#sk, :recordPrefix)";
const IS_NON_TERMINAL = "#status IN (:pending, :claimed)";
const LACKS_CLAIM_SORT = "attribute_not_exists(#claimSort)";
const HAS_AN_EXPIRY = "#expiresAt > :zero";
const LACKS_HAS_EXPIRY = "attribute_not_exists(#hasExpiry)";

/** The Scan filter: records that are pending or claimed and miss an index attribute Persist writes. */
const NEEDS_BACKFILL = `${IS_RECORD} AND ${IS_NON_TERMINAL} AND (${LACKS_CLAIM_SORT} OR (${HAS_AN_EXPIRY} AND ${LACKS_HAS_EXPIRY}))`;

const FILTER_VALUES: Record<string, AttributeValue> = {
    ":recordPrefix": { S: RECORD_SK_PREFIX },
    ":pending": { S: STATUS.pending },
    ":claimed": { S: STATUS.claimed },
    ":zero": { N: "0" },
};

/** Records updated concurrently in one page: bounds the write burst a page causes. */
const UPDATE_CONCURRENCY = 8;

/** Totals of a backfill pass (or of a counting pass, where nothing is updated). */
export interface BackfillTotals {
    /** Scan pages read. */
    pages: number;
    /** Items the Scan read (before the filter). */
    scanned: number;
    /** Records that needed an attribute. */
    matched: number;
    /** Records given `claim_sort`. */
    claimSortSet: number;
    /** Records given `has_expiry`. */
    hasExpirySet: number;
    /** Records whose condition failed: they changed state (or were backfilled) meanwhile. */
    skipped: number;
}

/** Options of a backfill pass. */
export interface BackfillOptions {
    /** Items per Scan page. */
    readonly pageSize: number;
    /** Whether to write (`false`: count only, for the plan). */
    readonly apply: boolean;
    /** Called after each page with the running totals. */
    readonly onPage: (totals: Readonly<BackfillTotals>) => void;
}

function names(...keys: (keyof typeof NAMES)[]): Record<string, string> {
    return Object.fromEntries(keys.map((k) => [k, NAMES[k]]));
}

/** The update that gives one scanned record what it lacks, or `undefined` when it lacks nothing. */
export function backfillUpdate(item: Record<string, AttributeValue>): { set: string[]; conditions: string[]; values: Record<string, AttributeValue>; names: string[] } | undefined {
    const set: string[] = [];
    const conditions = [IS_NON_TERMINAL];
    const values: Record<string, AttributeValue> = { ":pending": FILTER_VALUES[":pending"] as AttributeValue, ":claimed": FILTER_VALUES[":claimed"] as AttributeValue };
    const used: string[] = ["#status"];
    if (item[ATTR.claimSort] === undefined) {
        const createdAt = readNumber(item, ATTR.createdAt);
        const seq = readBigInt(item, ATTR.seq);
        set.push("#claimSort = :claimSort");
        conditions.push(LACKS_CLAIM_SORT);
        values[":claimSort"] = { S: claimSort(createdAt, seq) };
        used.push("#claimSort");
    }
    if (item[ATTR.hasExpiry] === undefined && readNumber(item, ATTR.expiresAt) > 0) {
        set.push("#hasExpiry = :hasExpiry");
        conditions.push(LACKS_HAS_EXPIRY);
        values[":hasExpiry"] = { S: HAS_EXPIRY_FLAG };
        used.push("#hasExpiry");
    }
    if (set.length === 0) return undefined;
    return { set, conditions, values, names: used };
}

async function updateOne(client: DynamoDBClient, tableName: string, item: Record<string, AttributeValue>, totals: BackfillTotals): Promise<void> {
    const update = backfillUpdate(item);
    if (update === undefined) return;
    try {
        await client.send(
            new UpdateItemCommand({
                TableName: tableName,
                Key: { [ATTR.pk]: item[ATTR.pk] as AttributeValue, [ATTR.sk]: item[ATTR.sk] as AttributeValue },
                UpdateExpression: `SET ${update.set.join(", ")}`,
                ConditionExpression: update.conditions.join(" AND "),
                ExpressionAttributeNames: names(...(update.names as (keyof typeof NAMES)[])),
                ExpressionAttributeValues: update.values,
            }),
        );
        if (update.names.includes("#claimSort")) totals.claimSortSet++;
        if (update.names.includes("#hasExpiry")) totals.hasExpirySet++;
    } catch (err) {
        if (err instanceof ConditionalCheckFailedException) {
            totals.skipped++;
            return;
        }
        throw new OutboxError("UNAVAILABLE", `backfill update failed; the pass is idempotent: run migrate --apply again to resume`, {
            cause: err,
            context: { table: tableName, partition: item[ATTR.pk]?.S, sortKey: item[ATTR.sk]?.S },
        });
    }
}

/**
 * Scan the table for pending/claimed records missing `claim_sort` or (with an expiry) `has_expiry`, and with
 * `apply` give them the attributes.
 *
 * @returns The totals.
 * @throws OutboxError `UNAVAILABLE` when a Scan page or an update fails (totals so far were reported by `onPage`).
 */
export async function backfillIndexAttributes(client: DynamoDBClient, tableName: string, options: BackfillOptions): Promise<BackfillTotals> {
    const totals: BackfillTotals = { pages: 0, scanned: 0, matched: 0, claimSortSet: 0, hasExpirySet: 0, skipped: 0 };
    let startKey: Record<string, AttributeValue> | undefined;
    do {
        let page;
        try {
            page = await client.send(
                new ScanCommand({
                    TableName: tableName,
                    Limit: options.pageSize,
                    ExclusiveStartKey: startKey,
                    FilterExpression: NEEDS_BACKFILL,
                    ProjectionExpression: "#pk, #sk, #status, #createdAt, #seq, #expiresAt, #claimSort, #hasExpiry",
                    ExpressionAttributeNames: names("#pk", "#sk", "#status", "#createdAt", "#seq", "#expiresAt", "#claimSort", "#hasExpiry"),
                    ExpressionAttributeValues: FILTER_VALUES,
                    ConsistentRead: true,
                }),
            );
        } catch (err) {
            throw new OutboxError("UNAVAILABLE", `backfill scan failed; run the command again to resume`, { cause: err, context: { table: tableName, page: totals.pages + 1 } });
        }
        const items = page.Items ?? [];
        totals.pages++;
        totals.scanned += page.ScannedCount ?? 0;
        totals.matched += items.length;
        if (options.apply) {
            for (let i = 0; i < items.length; i += UPDATE_CONCURRENCY) {
                await Promise.all(items.slice(i, i + UPDATE_CONCURRENCY).map((item) => updateOne(client, tableName, item, totals)));
            }
        }
        options.onPage(totals);
        startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return totals;
}
