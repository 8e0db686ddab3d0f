/**
 * The bounded LRU of record id → primary key that Claim fills and Complete/Release read, so they rarely need the
 * eventually consistent RecordIDIndex (findings J2/J3). Eviction is always safe: a miss falls back to the index.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";

/** A bounded least-recently-used map from record id to the record's primary key. */
export class KeyCache {
    private readonly entries: Map<string, Record<string, AttributeValue>>;
    private readonly capacity: number;

    /**
     * @param capacity - The most entries kept (≥ 1); the least recently used entry is evicted beyond it.
     */
    constructor(capacity: number) {
        this.capacity = capacity;
        // Created here, not as a field initializer or module constant: Pulumi serializes runtime code by value.
        this.entries = new Map();
    }

    /** How many entries the cache holds. */
    get size(): number {
        return this.entries.size;
    }

    /** The key for `recordId`, refreshing its recency; `undefined` on a miss. */
    get(recordId: string): Record<string, AttributeValue> | undefined {
        const key = this.entries.get(recordId);
        if (key === undefined) return undefined;
        this.entries.delete(recordId);
        this.entries.set(recordId, key);
        return key;
    }

    /** Remember `key` for `recordId`, evicting the least recently used entry when full. */
    put(recordId: string, key: Record<string, AttributeValue>): void {
        this.entries.delete(recordId);
        this.entries.set(recordId, key);
        while (this.entries.size > this.capacity) {
            const oldest = this.entries.keys().next().value as string;
            this.entries.delete(oldest);
        }
    }

    /** Forget `recordId`. */
    delete(recordId: string): void {
        this.entries.delete(recordId);
    }

    /** Whether `recordId` is cached, without touching its recency. */
    has(recordId: string): boolean {
        return this.entries.has(recordId);
    }
}
