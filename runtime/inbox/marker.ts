/**
 * The inbox marker's key and item: derived from the consumer's name and the outbox id, so the same message seen
 * twice by one consumer lands on the same row, and two consumers never share one.
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
 * The marker's primary key: `PK = INBOX#<consumer>`, `SK = <outbox id>`; on a table without a sort key,
 * `PK = INBOX#<consumer>#<outbox id>` (consumer names hold no `#`, so the two parts cannot run together).
 *
 * @param layout - The table's key attributes.
 * @param consumer - The consumer's name.
 * @param outboxId - The message's outbox id (`outbox.id`).
 */
export function inboxMarkerKey(
    layout: InboxMarkerLayout,
    consumer: string,
    outboxId: string,
): Record<string, AttributeValue> {
    const partition = `${INBOX_MARKER.partitionPrefix}${consumer}`;
    if (layout.sortKey === null) return { [layout.partitionKey]: { S: `${partition}#${outboxId}` } };
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
 */
export function inboxMarkerItem(
    layout: InboxMarkerLayout,
    consumer: string,
    outboxId: string,
    nowMs: number,
    ttlSeconds: number,
): Record<string, AttributeValue> {
    return {
        ...inboxMarkerKey(layout, consumer, outboxId),
        [INBOX_MARKER.appliedAt]: { N: String(Math.floor(nowMs)) },
        [layout.ttl]: { N: String(Math.ceil(nowMs / 1000) + ttlSeconds) },
    };
}
