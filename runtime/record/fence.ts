/**
 * The per-partition FENCE row (`SK = "FENCE"`, reference §2.3): the fencing high-water mark
 * `max_claim_version`, the atomic `seq_counter`, this package's `last_created_at` (the floor of the next seq
 * allocation's `created_at`) and a `ttl` that lets an idle partition's row expire.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { ATTR, FENCE_SK } from "../schema";
import { readBigInt, readNumber } from "./codec";

/** The FENCE row outlives every terminal record: its ttl is at least this far ahead (30 days). */
export const FENCE_RETENTION_FLOOR_SECONDS = 30 * 24 * 60 * 60;

/** The FENCE row's attributes. */
export interface FenceRow {
    /** The highest fencing version accepted for the partition; `undefined` when the attribute is absent (cold). */
    readonly maxClaimVersion: bigint | undefined;
    /** The partition's sequence counter; `0n` when absent. */
    readonly seqCounter: bigint;
    /**
     * The latest `created_at` a seq allocation handed out, epoch ms; `0` when absent (no allocation by this
     * package yet, or a partition only GoBridge writes).
     */
    readonly lastCreatedAt: number;
    /** The row's TTL, epoch seconds; `0` when absent. */
    readonly ttl: number;
}

/**
 * The FENCE row's primary key.
 *
 * @param partition - The partition key.
 */
export function fenceKey(partition: string): Record<string, AttributeValue> {
    return { [ATTR.pk]: { S: partition }, [ATTR.sk]: { S: FENCE_SK } };
}

/**
 * The FENCE row's ttl: now + max(compaction grace, 30 days), epoch seconds.
 *
 * @param nowMs - The store clock's now, epoch ms.
 * @param graceSeconds - The compaction grace.
 */
export function fenceTtlSeconds(nowMs: number, graceSeconds: number): number {
    return Math.floor(nowMs / 1000) + Math.max(Math.floor(graceSeconds), FENCE_RETENTION_FLOOR_SECONDS);
}

/**
 * Read a FENCE row item. A missing item reads as a cold fence with counter 0.
 *
 * @param item - The item, or `undefined` when GetItem found nothing.
 */
export function unmarshalFence(item: Record<string, AttributeValue> | undefined): FenceRow {
    if (item === undefined) return { maxClaimVersion: undefined, seqCounter: 0n, lastCreatedAt: 0, ttl: 0 };
    return {
        maxClaimVersion: item[ATTR.maxClaimVersion] === undefined ? undefined : readBigInt(item, ATTR.maxClaimVersion),
        seqCounter: readBigInt(item, ATTR.seqCounter),
        lastCreatedAt: readNumber(item, ATTR.lastCreatedAt),
        ttl: readNumber(item, ATTR.ttl),
    };
}
