/**
 * The inbox marker's key and item: derived from the consumer's name, the message's source and its outbox id, so
 * the same message seen twice by one consumer lands on the same row, two consumers never share one, and two
 * outboxes whose ids collide never share one either.
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
 * The marker's partition, before the outbox id: `INBOX#<consumer>@<source>`, or `INBOX#<consumer>` for a message
 * without a source (the older key).
 *
 * @param consumer - The consumer's name.
 * @param source - The message's source (`outbox.source`); `undefined` for the older key.
 */
export function inboxMarkerPartition(consumer: string, source: string | undefined): string {
    const partition = `${INBOX_MARKER.partitionPrefix}${consumer}`;
    return source === undefined ? partition : `${partition}${INBOX_MARKER.sourceSeparator}${source}`;
}

/**
 * The marker's primary key: `PK = INBOX#<consumer>@<source>`, `SK = <outbox id>`; on a table without a sort key,
 * `PK = INBOX#<consumer>@<source>#<outbox id>`. Without a source (a message from an older publisher or a GoBridge
 * relay) the `@<source>` part is left out: the key every marker had before sources. Consumer names and sources
 * hold no `#` or `@`, so the parts cannot run together and the two forms never meet.
 *
 * @param layout - The table's key attributes.
 * @param consumer - The consumer's name.
 * @param outboxId - The message's outbox id (`outbox.id`).
 * @param source - The message's source (`outbox.source`). @default undefined (the older key)
 */
export function inboxMarkerKey(
    layout: InboxMarkerLayout,
    consumer: string,
    outboxId: string,
    source?: string,
): Record<string, AttributeValue> {
    const partition = inboxMarkerPartition(consumer, source);
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
 * @param source - The message's source. @default undefined (the older key)
 */
export function inboxMarkerItem(
    layout: InboxMarkerLayout,
    consumer: string,
    outboxId: string,
    nowMs: number,
    ttlSeconds: number,
    source?: string,
): Record<string, AttributeValue> {
    return {
        ...inboxMarkerKey(layout, consumer, outboxId, source),
        [INBOX_MARKER.appliedAt]: { N: String(Math.floor(nowMs)) },
        [layout.ttl]: { N: String(Math.ceil(nowMs / 1000) + ttlSeconds) },
    };
}
