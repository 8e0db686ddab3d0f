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
import { UpdateItemCommand, type AttributeValue, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { scanPages } from "../shared/scan-pages";
import { OutboxError } from "../../runtime/errors";
import { readBigInt, readNumber } from "../../runtime/record/codec";
import { claimSort } from "../../runtime/record/keys";
import { hasExpiryValue } from "../../runtime/record/expiry-shard";
import { raiseExpiryShards } from "../../runtime/store/expiry-shards-row";
import { ATTR, RECORD_SK_PREFIX } from "../../runtime/schema";
import { isConditionalCheckFailed } from "../../runtime/store/aws-errors";
import {
    and,
    nameRef,
    nonTerminal,
    or,
    placeholders,
    updateExpression,
    type Expression,
    type SetClause,
} from "../../runtime/store/expressions";

/** `begins_with(SK, "OUTBOX#")`: an outbox record, never a FENCE row. */
function isRecord(): Expression {
    return {
        text: `begins_with(${nameRef(ATTR.sk)}, :record_prefix)`,
        names: { [nameRef(ATTR.sk)]: ATTR.sk },
        values: { ":record_prefix": { S: RECORD_SK_PREFIX } },
    };
}

/** `attribute_not_exists(<attribute>)`. */
function lacks(attribute: string): Expression {
    return {
        text: `attribute_not_exists(${nameRef(attribute)})`,
        names: { [nameRef(attribute)]: attribute },
        values: {},
    };
}

/** `expires_at > 0`: the record has an expiry. */
function hasAnExpiry(): Expression {
    return {
        text: `${nameRef(ATTR.expiresAt)} > :zero`,
        names: { [nameRef(ATTR.expiresAt)]: ATTR.expiresAt },
        values: { ":zero": { N: "0" } },
    };
}

/** The Scan filter: records that are pending or claimed and miss an index attribute Persist writes. */
function needsBackfill(): Expression {
    return and(isRecord(), nonTerminal(), or(lacks(ATTR.claimSort), and(hasAnExpiry(), lacks(ATTR.hasExpiry))));
}

/** What the Scan reads of each record: its key and what the backfill computes from. */
const SCANNED_ATTRIBUTES = [
    ATTR.pk,
    ATTR.sk,
    ATTR.recordId,
    ATTR.status,
    ATTR.createdAt,
    ATTR.seq,
    ATTR.expiresAt,
    ATTR.claimSort,
    ATTR.hasExpiry,
];

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
    /**
     * The writers' `expiryShards`: a record given `has_expiry` gets the value such a writer would have written for
     * its id (`"1"` at 1). Above 1, an applying pass first raises the table's expiry shards mark. @default 1
     */
    readonly expiryShards?: number;
}

/**
 * The update and its condition for one scanned record, or `undefined` when it lacks nothing.
 *
 * @param item - The scanned record.
 * @param expiryShards - The writers' `expiryShards`. @default 1
 */
export function backfillUpdate(
    item: Record<string, AttributeValue>,
    expiryShards = 1,
): { update: Expression; condition: Expression; setsClaimSort: boolean; setsHasExpiry: boolean } | undefined {
    const set: SetClause[] = [];
    const values: Record<string, AttributeValue> = {};
    const conditions = [nonTerminal()];
    const setsClaimSort = item[ATTR.claimSort] === undefined;
    const setsHasExpiry = item[ATTR.hasExpiry] === undefined && readNumber(item, ATTR.expiresAt) > 0;
    if (setsClaimSort) {
        set.push({ attribute: ATTR.claimSort, value: ":claim_sort" });
        values[":claim_sort"] = { S: claimSort(readNumber(item, ATTR.createdAt), readBigInt(item, ATTR.seq)) };
        conditions.push(lacks(ATTR.claimSort));
    }
    if (setsHasExpiry) {
        set.push({ attribute: ATTR.hasExpiry, value: ":has_expiry" });
        values[":has_expiry"] = { S: hasExpiryValue(item[ATTR.recordId]?.S ?? "", expiryShards) };
        conditions.push(lacks(ATTR.hasExpiry));
    }
    if (set.length === 0) return undefined;
    return { update: updateExpression({ set, values }), condition: and(...conditions), setsClaimSort, setsHasExpiry };
}

async function updateOne(
    client: DynamoDBClient,
    tableName: string,
    item: Record<string, AttributeValue>,
    totals: BackfillTotals,
    expiryShards: number,
): Promise<void> {
    const update = backfillUpdate(item, expiryShards);
    if (update === undefined) return;
    try {
        await client.send(
            new UpdateItemCommand({
                TableName: tableName,
                Key: { [ATTR.pk]: item[ATTR.pk] as AttributeValue, [ATTR.sk]: item[ATTR.sk] as AttributeValue },
                UpdateExpression: update.update.text,
                ConditionExpression: update.condition.text,
                ...placeholders(update.update, update.condition),
            }),
        );
        if (update.setsClaimSort) totals.claimSortSet++;
        if (update.setsHasExpiry) totals.hasExpirySet++;
    } catch (err) {
        if (isConditionalCheckFailed(err)) {
            totals.skipped++;
            return;
        }
        throw new OutboxError(
            "UNAVAILABLE",
            `backfill update failed; the pass is idempotent: run migrate --apply again to resume`,
            {
                cause: err,
                context: { table: tableName, partition: item[ATTR.pk]?.S, sortKey: item[ATTR.sk]?.S },
            },
        );
    }
}

/**
 * Scan the table for pending/claimed records missing `claim_sort` or (with an expiry) `has_expiry`, and with
 * `apply` give them the attributes.
 *
 * @returns The totals.
 * @throws OutboxError `UNAVAILABLE` when a Scan page or an update fails (totals so far were reported by `onPage`).
 */
export async function backfillIndexAttributes(
    client: DynamoDBClient,
    tableName: string,
    options: BackfillOptions,
): Promise<BackfillTotals> {
    const totals: BackfillTotals = { pages: 0, scanned: 0, matched: 0, claimSortSet: 0, hasExpirySet: 0, skipped: 0 };
    const filter = needsBackfill();
    const projection: Expression = {
        text: SCANNED_ATTRIBUTES.map(nameRef).join(", "),
        names: Object.fromEntries(SCANNED_ATTRIBUTES.map((a) => [nameRef(a), a])),
        values: {},
    };
    const expiryShards = options.expiryShards ?? 1;
    if (options.apply)
        await raiseExpiryShards((input) => client.send(new UpdateItemCommand(input)), tableName, expiryShards);
    await scanPages(
        client,
        (startKey) => ({
            TableName: tableName,
            Limit: options.pageSize,
            ExclusiveStartKey: startKey,
            FilterExpression: filter.text,
            ProjectionExpression: projection.text,
            ...placeholders(filter, projection),
            ConsistentRead: true,
        }),
        (err) =>
            new OutboxError("UNAVAILABLE", `backfill scan failed; run the command again to resume`, {
                cause: err,
                context: { table: tableName, page: totals.pages + 1 },
            }),
        async (page) => {
            const items = page.Items ?? [];
            totals.pages++;
            totals.scanned += page.ScannedCount ?? 0;
            totals.matched += items.length;
            if (options.apply) {
                for (let i = 0; i < items.length; i += UPDATE_CONCURRENCY) {
                    await Promise.all(
                        items
                            .slice(i, i + UPDATE_CONCURRENCY)
                            .map((item) => updateOne(client, tableName, item, totals, expiryShards)),
                    );
                }
            }
            options.onPage(totals);
        },
    );
    return totals;
}
