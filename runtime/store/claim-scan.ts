/**
 * The scan path (reference §4.4.4): for partitions whose records carry ordering keys, a ConsistentRead query of
 * the whole partition, so no lagging index can surface a younger same-key record before its older sibling
 * (finding 3). It applies the head-of-line rule: a keyed record is not claimed while an older non-terminal record
 * with the same key is held by someone else (finding 4, the stranded head).
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { readBigInt, readNumber, readString, type OutboxRecord } from "../record/codec";
import { ATTR, originTaken, STATUS, statusOf } from "../schema";
import { claimBatch, skipped, type ClaimCallOptions } from "./claim-batch";
import type { ClaimClock } from "./claim-one";
import { nonTerminal, partitionRecordsQuery } from "./expressions";
import { DEEP_BACKLOG_PAGE_WARN, noteUndecodable, STORE_METRICS, STORE_WARNINGS } from "./observability";
import { STORE_DEFAULTS, type StoreContext } from "./options";
import { queryPages } from "./send";
import type { FencingToken } from "./transitions";
import { truncatedClaim } from "./truncation";

/** A record's place in the oldest-first order: (created_at, seq, envelope_id). */
export interface AgePosition {
    /** Creation time, epoch ms. */
    readonly createdAt: number;
    /** Per-partition sequence number. */
    readonly seq: bigint;
    /** The envelope id: the tiebreak of last resort. */
    readonly envelopeId: string;
}

/** Compare two positions oldest-first. */
export function compareAge(a: AgePosition, b: AgePosition): number {
    if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
    if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
    return a.envelopeId < b.envelopeId ? -1 : a.envelopeId > b.envelopeId ? 1 : 0;
}

/** The position of an item. */
export function agePosition(item: Record<string, AttributeValue>): AgePosition {
    return {
        createdAt: readNumber(item, ATTR.createdAt),
        seq: readBigInt(item, ATTR.seq),
        envelopeId: readString(item, ATTR.envelopeId) ?? "",
    };
}

/**
 * The claimability predicate, client side (the same rule the index query filters with):
 * pending, or claimed at an older version, or claimed before the stale threshold.
 */
export function isClaimableItem(item: Record<string, AttributeValue>, version: bigint, staleMs: number): boolean {
    const status = statusOf(readString(item, ATTR.status));
    if (status === STATUS.pending) return true;
    if (status !== STATUS.claimed) return false;
    if (readBigInt(item, ATTR.claimVersion) < version) return true;
    // A missing claimed_at fails `claimed_at < :stale_ms` on the server too.
    return item[ATTR.claimedAt] !== undefined && readNumber(item, ATTR.claimedAt) < staleMs;
}

interface Candidate {
    readonly item: Record<string, AttributeValue>;
    readonly position: AgePosition;
    readonly orderingKey: string | undefined;
}

function byAge(a: Candidate, b: Candidate): number {
    return compareAge(a.position, b.position);
}

/** Claim up to `limit` records of a keyed partition through a ConsistentRead scan. */
export async function claimByScan(
    ctx: StoreContext,
    partition: string,
    token: FencingToken,
    limit: number,
    at: ClaimClock,
    options: ClaimCallOptions,
): Promise<OutboxRecord[]> {
    const retain = Math.max(STORE_DEFAULTS.claimRetentionFactor * limit, limit);
    const scan = await scanPartition(ctx, partition, token, at, retain, options);
    const batch = await claimBatch(ctx, partition, eligible(scan, retain), token, at, limit, options);
    return batch.error === undefined
        ? batch.claimed
        : truncatedClaim(ctx, partition, batch.claimed, batch.error, options);
}

/** What the scan of a partition found. */
interface PartitionScan {
    /** The claimable records; cut to the `retain` oldest whenever they grow past twice that. */
    candidates: Candidate[];
    /** Per ordering key, the oldest record held by a live owner: younger same-key records must wait behind it. */
    readonly blockers: Map<string, AgePosition>;
    /** Ordering keys with an item whose age or claim state cannot be read. */
    readonly unreadableKeys: Set<string>;
}

/** Read the whole partition's non-terminal records, consistently, page by page. */
async function scanPartition(
    ctx: StoreContext,
    partition: string,
    token: FencingToken,
    at: ClaimClock,
    retain: number,
    options: ClaimCallOptions,
): Promise<PartitionScan> {
    const scan: PartitionScan = { candidates: [], blockers: new Map(), unreadableKeys: new Set() };
    let pages = 0;
    let scanned = 0;
    await queryPages(
        ctx,
        "claim.scan-query",
        partitionRecordsQuery(ctx.tableName, partition, nonTerminal()),
        { message: "outbox claim query failed", context: { partition } },
        (page) => {
            pages++;
            scanned += page.Items?.length ?? 0;
            if (pages === DEEP_BACKLOG_PAGE_WARN + 1) {
                ctx.logger.warn(STORE_WARNINGS.deepBacklog, {
                    partition_key: partition,
                    pages,
                    records_scanned: scanned,
                });
            }
            // What the caller holds back is left out before the cut to `retain`: the claim reaches the records after it.
            // Another region's records are neither candidates nor blockers: each region's keys are an order of their own.
            for (const item of page.Items ?? [])
                if (!skipped(options.skip, item) && originTaken(ctx.origin, readString(item, ATTR.originRegion)))
                    noteItem(ctx, partition, scan, item, token, at);
            if (scan.candidates.length > 2 * retain) scan.candidates = scan.candidates.sort(byAge).slice(0, retain);
        },
        options.signal,
    );
    if (pages > DEEP_BACKLOG_PAGE_WARN) ctx.metrics.count(STORE_METRICS.claimScanPages, pages, { partition });
    return scan;
}

/** One scanned item: a candidate if claimable; else, with an ordering key, a possible blocker of its key. */
function noteItem(
    ctx: StoreContext,
    partition: string,
    scan: PartitionScan,
    item: Record<string, AttributeValue>,
    token: FencingToken,
    at: ClaimClock,
): void {
    const orderingKey = readString(item, ATTR.orderingKey) || undefined;
    let position: AgePosition;
    let claimable: boolean;
    try {
        position = agePosition(item);
        claimable = isClaimableItem(item, token.version, at.staleMs);
    } catch (err) {
        // Its place in the order is unknown, so its whole key waits; the other keys go on.
        noteUndecodable(ctx, partition, item[ATTR.sk]?.S, err);
        if (orderingKey !== undefined) scan.unreadableKeys.add(orderingKey);
        return;
    }
    if (claimable) {
        scan.candidates.push({ item, position, orderingKey });
    } else if (orderingKey !== undefined) {
        const prior = scan.blockers.get(orderingKey);
        if (prior === undefined || compareAge(position, prior) < 0) scan.blockers.set(orderingKey, position);
    }
}

/** The `retain` oldest candidates that no unreadable item or older held record of their key blocks, oldest first. */
function eligible(scan: PartitionScan, retain: number): Candidate[] {
    const candidates = scan.candidates.sort(byAge).slice(0, retain);
    // The stranded-head rule runs before the cut to `limit`, so a group whose head is held loses its whole tail.
    return candidates.filter((c) => {
        if (c.orderingKey === undefined) return true;
        if (scan.unreadableKeys.has(c.orderingKey)) return false;
        const blocker = scan.blockers.get(c.orderingKey);
        return blocker === undefined || compareAge(blocker, c.position) > 0;
    });
}
