/**
 * Which lane (concurrent batch) of a shard a record goes to under `parallelizationFactor`: a hash of its item's
 * key, partition and sort key, so every record of one item goes to the same lane and keeps its order. That is
 * the unit Lambda documents it keeps in order at a factor above 1 ("in-order processing at the item (partition
 * and sort key) level"); it promises nothing for two items of one partition, and neither does this.
 *
 * @packageDocumentation
 */
import type { LambdaStreamRecord } from "../stream-event";

/** FNV-1a, 32 bits: stable across runs and processes, so a test's routing is the same every time. */
function fnv1a(text: string): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i += 1) {
        hash ^= text.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash;
}

/** The item's key as one string, its attributes in name order (the stream does not promise an order). */
function itemKeyText(record: LambdaStreamRecord): string {
    const keys = record.dynamodb.Keys;
    return JSON.stringify(
        Object.keys(keys)
            .sort()
            .map((name) => [name, keys[name]]),
    );
}

/**
 * The lane of `record` among `lanes`, from 0.
 *
 * @param record - A stream record; its `dynamodb.Keys` decide.
 * @param lanes - The factor, 1 to 10.
 */
export function laneOf(record: LambdaStreamRecord, lanes: number): number {
    return lanes === 1 ? 0 : fnv1a(itemKeyText(record)) % lanes;
}
