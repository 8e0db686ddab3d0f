/**
 * Which ExpiryIndex partition key value a record's `has_expiry` takes, and which values an expiry reader queries.
 *
 * With `expiryShards` 1 every expiring record shares `has_expiry = "1"`, one partition key value of ExpiryIndex,
 * whose write ceiling caps the whole table's expiring traffic. With N > 1 a record takes `"1#<k>"`, k from its
 * record id, so the choice is stable: every write of the record and every reader agree without a lookup. The
 * readers query `"1"` and every shard value up to the larger of their own N and the table's high-water mark
 * (`runtime/store/expiry-shards-row.ts`), so records written under any setting, or by GoBridge, are found.
 *
 * @packageDocumentation
 */
import { expiryShardValue, HAS_EXPIRY_FLAG } from "../schema";

/**
 * The shard of a record id among `shards`: FNV-1a (32 bit) over the id's UTF-16 code units, modulo `shards`.
 * Stable across processes and versions; only its spread matters, no reader recomputes it.
 *
 * @param recordId - The record id.
 * @param shards - The shard count, at least 1.
 */
export function expiryShardOf(recordId: string, shards: number): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < recordId.length; i++) {
        hash ^= recordId.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0) % shards;
}

/**
 * The `has_expiry` value a writer with `shards` writes for a record: `"1"` when `shards` is 1 (byte for byte what
 * GoBridge writes), else `"1#<k>"`.
 *
 * @param recordId - The record id.
 * @param shards - The writer's `expiryShards`.
 */
export function hasExpiryValue(recordId: string, shards: number): string {
    return shards <= 1 ? HAS_EXPIRY_FLAG : expiryShardValue(expiryShardOf(recordId, shards));
}

/**
 * The ExpiryIndex partition key values a reader queries: `"1"` always (GoBridge's writers and this package's with
 * N = 1 write it), then `"1#0"` … `"1#<shards-1>"` when `shards` is more than 1. One query page at least per value.
 *
 * @param shards - The larger of the reader's own `expiryShards` and the table's high-water mark.
 */
export function expiryReadValues(shards: number): string[] {
    const values = [HAS_EXPIRY_FLAG];
    if (shards > 1) for (let k = 0; k < shards; k++) values.push(expiryShardValue(k));
    return values;
}
