/**
 * The inbox marker's key and item: derived from the consumer's name, the message's source, its outbox id and the
 * inbox's shard count, so the same message seen twice by one consumer lands on the same row, two consumers never
 * share one, two outboxes whose ids collide never share one either, and one consumer's markers can be spread over
 * several partition keys.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { INBOX_MARKER } from "../schema";

/** Where markers live in a table: its key attribute names and its TTL attribute. */
export interface InboxMarkerLayout {
    /** The table's partition key attribute. */
    readonly partitionKey: string;
    /** The table's sort key attribute; `null` when the table has none. */
    readonly sortKey: string | null;
    /** The table's TTL attribute (epoch seconds). */
    readonly ttl: string;
}

/**
 * The shard of an outbox id among `shards`: FNV-1a (32 bit) over the id's UTF-8 bytes, modulo `shards`. The marker
 * of an event must be found again by every later delivery, by every instance and every version of the inbox, so
 * this function is part of the stored layout: it must never change (its values are pinned by tests).
 *
 * @param outboxId - The message's outbox id.
 * @param shards - The inbox's `markerShards`, at least 1.
 */
export function inboxMarkerShard(outboxId: string, shards: number): number {
    let hash = 0x811c9dc5;
    for (const byte of Buffer.from(outboxId, "utf8")) {
        hash ^= byte;
        hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0) % shards;
}

/**
 * The marker's partition, before the outbox id: `INBOX#<consumer>@<source>`, or `INBOX#<consumer>` for a message
 * without a source (the older key); with a shard, followed by `~<shard>`.
 *
 * @param consumer - The consumer's name.
 * @param source - The message's source (`outbox.source`); `undefined` for the older key.
 * @param shard - The marker's shard ({@link inboxMarkerShard}); `undefined` with `markerShards` 1: the key every
 *   marker had before shards. @default undefined
 */
export function inboxMarkerPartition(consumer: string, source: string | undefined, shard?: number): string {
    const partition = `${INBOX_MARKER.partitionPrefix}${consumer}`;
    const sourced = source === undefined ? partition : `${partition}${INBOX_MARKER.sourceSeparator}${source}`;
    return shard === undefined ? sourced : `${sourced}${INBOX_MARKER.shardSeparator}${shard}`;
}

/**
 * The marker's primary key: `PK = INBOX#<consumer>@<source>`, `SK = <outbox id>`; on a table without a sort key,
 * `PK = INBOX#<consumer>@<source>#<outbox id>`. Without a source (a message from an older publisher or a GoBridge
 * relay) the `@<source>` part is left out: the key every marker had before sources. With `shards` N > 1 the
 * partition also ends in `~<shard>`, the shard chosen from the outbox id ({@link inboxMarkerShard}), so one
 * consumer's markers of one source are spread over N partition keys and the same event always lands on the same
 * one. Consumer names and sources hold no `#`, `@` or `~`, so the parts cannot run together and no two forms meet;
 * N = 1 gives the unsharded key byte for byte.
 *
 * @param layout - The table's key attributes.
 * @param consumer - The consumer's name.
 * @param outboxId - The message's outbox id (`outbox.id`).
 * @param source - The message's source (`outbox.source`). @default undefined (the older key)
 * @param shards - How many partition keys the consumer's markers are spread over (`markerShards`). @default 1
 */
export function inboxMarkerKey(
    layout: InboxMarkerLayout,
    consumer: string,
    outboxId: string,
    source?: string,
    shards = 1,
): Record<string, AttributeValue> {
    const partition = inboxMarkerPartition(
        consumer,
        source,
        shards > 1 ? inboxMarkerShard(outboxId, shards) : undefined,
    );
    if (layout.sortKey === null)
        return { [layout.partitionKey]: { S: `${partition}${INBOX_MARKER.idSeparator}${outboxId}` } };
    return { [layout.partitionKey]: { S: partition }, [layout.sortKey]: { S: outboxId } };
}

/**
 * The whole marker: its key, when it was applied (epoch ms) and its TTL (epoch seconds, `ttlSeconds` after
 * `nowMs`, rounded up).
 *
 * @param layout - The table's key and TTL attributes.
 * @param consumer - The consumer's name.
 * @param outboxId - The message's outbox id.
 * @param nowMs - The inbox's clock, epoch ms.
 * @param ttlSeconds - How long the marker stays before TTL may delete it.
 * @param source - The message's source. @default undefined (the older key)
 * @param shards - The inbox's `markerShards`. @default 1
 */
export function inboxMarkerItem(
    layout: InboxMarkerLayout,
    consumer: string,
    outboxId: string,
    nowMs: number,
    ttlSeconds: number,
    source?: string,
    shards = 1,
): Record<string, AttributeValue> {
    return {
        ...inboxMarkerKey(layout, consumer, outboxId, source, shards),
        [INBOX_MARKER.appliedAt]: { N: String(Math.floor(nowMs)) },
        [layout.ttl]: { N: String(Math.ceil(nowMs / 1000) + ttlSeconds) },
    };
}
