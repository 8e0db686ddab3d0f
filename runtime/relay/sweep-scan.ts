/**
 * The sweeper's ClaimIndex scan: which partitions hold a record that is due (older than the cutoff, or stamped
 * further ahead of the sweeper's clock than a correct clock can be), in scan order from the sweep cursor, and
 * the oldest pending age it read.
 *
 * The scan starts after the cursor (`runtime/relay/sweep-cursor.ts`), reads to the end of the index, then from its
 * beginning, and stops when it has `maxPartitions` partitions and reaches the first item of another partition,
 * or when it comes back to where it started. ClaimIndex keeps a partition's items together (they share its hash
 * key), so each partition found comes with the key of the item just before it: a cursor that starts the next
 * run exactly there.
 *
 * @packageDocumentation
 */
import { ScanCommand, type AttributeValue, type ScanCommandOutput } from "@aws-sdk/client-dynamodb";
import type { ClientLike } from "./delivery";
import type { ClaimIndexKey } from "./sweep-cursor";
import { ATTR, CLAIM_INDEX } from "../schema";
import { wrapAwsError } from "../store/aws-errors";

/** Digits of the zero-padded `created_at` that `claim_sort` starts with (see `claimSort` in `record/keys.ts`). */
const CREATED_AT_DIGITS = 19;

/** `pad19(ms)`: the `created_at` prefix of `claim_sort`. */
function createdAtPrefix(ms: number): string {
    return String(Math.max(0, Math.floor(ms))).padStart(CREATED_AT_DIGITS, "0");
}

/** The limits of one scan. */
export interface DueScanOptions {
    /** Where to start: after this ClaimIndex key, or at the beginning. */
    readonly cursor: ClaimIndexKey | undefined;
    /** The sweeper's clock when the scan starts, epoch ms. */
    readonly now: number;
    /** A record created before this is due (now − sweepAfter). */
    readonly createdBefore: number;
    /** A record created after this is due too: no correct clock stamps it (now + sweepAfter). */
    readonly createdAfter: number;
    /** The most partitions to return. */
    readonly maxPartitions: number;
}

/** A partition with a due record, and where a scan that starts with it begins. */
export interface DuePartition {
    /** The partition key. */
    readonly partition: string;
    /** The key of the item read just before the partition's first one (`undefined`: the start of the index). */
    readonly startAfter: ClaimIndexKey | undefined;
}

/** What one scan found. */
export interface DueScan {
    /** Partitions with a due record, in scan order from the cursor. */
    readonly partitions: DuePartition[];
    /**
     * Whether the scan read the whole index (from the cursor round to it). Then `oldestCreatedAt` is exact and
     * every partition with a due record is in `partitions`.
     */
    readonly complete: boolean;
    /** Where the next scan starts when every partition found is drained: after this key (`undefined`: the start). */
    readonly next: ClaimIndexKey | undefined;
    /**
     * The oldest creation time among the items read, epoch ms; `undefined` when none was read. A `created_at`
     * further ahead than `createdAfter` counts from the record's first claim (`first_attempted_at`), or from now.
     */
    readonly oldestCreatedAt: number | undefined;
    /** The error that stopped the scan early, if any; `partitions` holds what was found before it. */
    readonly failure?: unknown;
}

function indexKeyOf(item: Record<string, AttributeValue>): ClaimIndexKey {
    return { [ATTR.pk]: item[ATTR.pk]!, [ATTR.sk]: item[ATTR.sk]!, [ATTR.claimSort]: item[ATTR.claimSort]! };
}

/** One page of ClaimIndex, keys and first-claim times only. */
async function scanPage(
    ctx: { readonly dynamodb: ClientLike; readonly tableName: string },
    startKey: ClaimIndexKey | undefined,
): Promise<ScanCommandOutput> {
    return (await ctx.dynamodb.send(
        new ScanCommand({
            TableName: ctx.tableName,
            IndexName: CLAIM_INDEX.indexName,
            ProjectionExpression: "#pk, #sk, #sort, #first",
            ExpressionAttributeNames: {
                "#pk": ATTR.pk,
                "#sk": ATTR.sk,
                "#sort": ATTR.claimSort,
                "#first": ATTR.firstAttemptedAt,
            },
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
    )) as ScanCommandOutput;
}

/** A created_at no correct clock gives counts from the record's first claim, or from now. */
function aheadCountsFrom(item: Record<string, AttributeValue>, now: number): number {
    const firstAttempt = Number(item[ATTR.firstAttemptedAt]?.N ?? Number.NaN);
    return Number.isFinite(firstAttempt) ? Math.min(firstAttempt, now) : now;
}

/**
 * Scan ClaimIndex for the partitions that hold a due record, starting after the cursor.
 *
 * @param ctx - The DynamoDB client and table.
 * @param options - The cursor, the clock and the limits.
 * @returns What was found; a failed Scan call ends the scan with `failure` set (a failed first page after a
 * cursor is retried once from the start of the index, so a cursor DynamoDB refuses cannot stop every sweep).
 */
export async function scanDuePartitions(
    ctx: { readonly dynamodb: ClientLike; readonly tableName: string },
    options: DueScanOptions,
): Promise<DueScan> {
    const beforePrefix = createdAtPrefix(options.createdBefore);
    const afterPrefix = createdAtPrefix(options.createdAfter);
    const partitions: DuePartition[] = [];
    const found = new Set<string>();
    // Partitions read before the scan went round to the start of the index: meeting one again closes the circle.
    const firstLeg = new Set<string>();
    let cursor = options.cursor;
    let wrapped = cursor === undefined;
    // The last item read, and the item read before the first item of the partition being read.
    let previous: ClaimIndexKey | undefined = cursor;
    let runStart: ClaimIndexKey | undefined = cursor;
    let current: string | undefined;
    let startKey: ClaimIndexKey | undefined = cursor;
    let oldest: number | undefined;
    let firstPage = true;
    for (;;) {
        let page: ScanCommandOutput;
        try {
            page = await scanPage(ctx, startKey);
        } catch (err) {
            const failure = wrapAwsError(err, "sweeper: claim index scan failed", { table: ctx.tableName });
            if (firstPage && cursor !== undefined) {
                // The cursor itself may be what DynamoDB refuses: start over from the beginning, once.
                cursor = undefined;
                wrapped = true;
                previous = undefined;
                runStart = undefined;
                startKey = undefined;
                firstPage = false;
                continue;
            }
            return { partitions, complete: false, next: previous, oldestCreatedAt: oldest, failure };
        }
        firstPage = false;
        for (const item of page.Items ?? []) {
            const pk = item[ATTR.pk]?.S;
            const sort = item[ATTR.claimSort]?.S;
            if (pk === undefined || sort === undefined || item[ATTR.sk]?.S === undefined) continue;
            if (pk !== current) {
                // The first item of another partition: the circle is closed, or the run has its partitions.
                if (wrapped && cursor !== undefined && firstLeg.has(pk))
                    return { partitions, complete: true, next: options.cursor, oldestCreatedAt: oldest };
                if (partitions.length >= options.maxPartitions)
                    return { partitions, complete: false, next: previous, oldestCreatedAt: oldest };
                current = pk;
                runStart = previous;
                if (!wrapped) firstLeg.add(pk);
            }
            // Same-width zero-padded digits: string order is time order.
            const createdAt = sort.slice(0, CREATED_AT_DIGITS);
            const ahead = createdAt > afterPrefix;
            const counted = ahead ? aheadCountsFrom(item, options.now) : Number(createdAt);
            if (oldest === undefined || counted < oldest) oldest = counted;
            if ((createdAt < beforePrefix || ahead) && !found.has(pk)) {
                found.add(pk);
                partitions.push({ partition: pk, startAfter: runStart });
            }
            previous = indexKeyOf(item);
        }
        startKey = page.LastEvaluatedKey;
        if (startKey !== undefined) continue;
        if (wrapped)
            return {
                partitions,
                complete: true,
                next: cursor === undefined ? undefined : options.cursor,
                oldestCreatedAt: oldest,
            };
        // The end of the index: go round to its start, up to where this scan began.
        wrapped = true;
        previous = undefined;
        current = undefined;
    }
}
