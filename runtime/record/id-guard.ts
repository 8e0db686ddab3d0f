/**
 * The id guard row (`PK = "OUTBOX_ID#<record id>"`, `SK = "ID"`): claims a record id table-wide. The writer
 * puts one, conditioned on its absence, in the same transaction as every record whose id it did not generate
 * itself (a caller's `id`, or an injected id generator's), so a second record with the same id, in any
 * partition, cannot be written while the guard lives.
 *
 * Why table-wide: the record id is the SNS FIFO `MessageDeduplicationId`, the `outbox.id` attribute consumers
 * deduplicate on, and the RecordIDIndex hash key that Complete and Release resolve with `Limit 1`. Two records
 * sharing an id would make SNS FIFO drop one (while both are marked completed), make consumers drop one, and
 * let a Complete resolve to the wrong record.
 *
 * The row is never a record: its SK does not start with `OUTBOX#` (the stream filter and every
 * `begins_with(SK, "OUTBOX#")` query skip it) and it carries no `record_id`, `claim_sort`, `has_expiry` or
 * `status`, so no index holds it.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { ATTR, ID_GUARD_PK_PREFIX, ID_GUARD_SK } from "../schema";
import { readNumber, readString } from "./codec";
import { fenceTtlSeconds } from "./fence";

/** Who holds an id, as its guard row says. */
export interface IdGuard {
    /** The record id. */
    readonly recordId: string;
    /** The partition (`PK`) of the record that holds the id. */
    readonly partition: string;
    /** The binding id of the record that holds the id. */
    readonly bindingId: string;
    /** That record's creation time, epoch ms. */
    readonly createdAt: number;
    /** When the guard stops holding the id, epoch seconds (its DynamoDB TTL). */
    readonly ttl: number;
}

/**
 * The guard row's primary key.
 *
 * @param recordId - The record id it guards.
 */
export function idGuardKey(recordId: string): Record<string, AttributeValue> {
    return { [ATTR.pk]: { S: `${ID_GUARD_PK_PREFIX}${recordId}` }, [ATTR.sk]: { S: ID_GUARD_SK } };
}

/**
 * The guard's ttl, epoch seconds: max(compaction grace, 30 days) after the later of the record's creation and
 * its expiry, i.e. the FENCE row's retention counted from the last moment the record can still be pending for
 * a reason of its own.
 *
 * Why that long: the guard must outlive the record it stands for, or a second record could take the id while
 * the first still sits in RecordIDIndex. A record is normally delivered within seconds, then lives `grace` more
 * as a completed row; an undeliverable record with an expiry is pending until `expires_at`, then expired for
 * `grace`. The 30-day floor also covers consumers' deduplication windows (docs/runtime.md suggests 48 hours), so a
 * reused id cannot reach them as a "duplicate" of an unrelated message. A record still pending 30 days after
 * that means the outbox has been down for a month; then the guard can lapse first.
 *
 * @param createdAtMs - The record's creation time, epoch ms.
 * @param expiresAtMs - The record's expiry, epoch ms; `0` when it never expires.
 * @param graceSeconds - The compaction grace.
 */
export function idGuardTtlSeconds(createdAtMs: number, expiresAtMs: number, graceSeconds: number): number {
    return fenceTtlSeconds(Math.max(createdAtMs, expiresAtMs), graceSeconds);
}

/** What {@link idGuardItem} needs. */
export interface IdGuardInput {
    /** The record id to hold. */
    readonly recordId: string;
    /** The partition of the record that holds it. */
    readonly partition: string;
    /** The binding id of the record that holds it. */
    readonly bindingId: string;
    /** The record's creation time, epoch ms. */
    readonly createdAt: number;
    /** The record's expiry, epoch ms; `0` when it never expires. */
    readonly expiresAt: number;
    /** The compaction grace, seconds (see {@link idGuardTtlSeconds}). */
    readonly graceSeconds: number;
}

/**
 * The guard row for a record: its key, the holder's partition and binding id, the record's creation time and
 * the ttl of {@link idGuardTtlSeconds}.
 *
 * @param input - The id, the record that holds it, and the grace.
 */
export function idGuardItem(input: IdGuardInput): Record<string, AttributeValue> {
    return {
        ...idGuardKey(input.recordId),
        [ATTR.idOwnerPartition]: { S: input.partition },
        [ATTR.bindingId]: { S: input.bindingId },
        [ATTR.createdAt]: { N: String(input.createdAt) },
        [ATTR.ttl]: { N: String(idGuardTtlSeconds(input.createdAt, input.expiresAt, input.graceSeconds)) },
    };
}

/**
 * Read a guard row, e.g. the one a failed guard Put returns (`ReturnValuesOnConditionCheckFailure: ALL_OLD`).
 * Returns `undefined` for anything that is not a readable guard row (no item, another key, no holder partition,
 * a number that does not parse).
 *
 * @param item - The item, or `undefined`.
 */
export function readIdGuard(item: Record<string, AttributeValue> | undefined): IdGuard | undefined {
    const pk = item?.[ATTR.pk]?.S;
    const partition = item?.[ATTR.idOwnerPartition]?.S;
    if (
        item === undefined ||
        pk === undefined ||
        partition === undefined ||
        !pk.startsWith(ID_GUARD_PK_PREFIX) ||
        item[ATTR.sk]?.S !== ID_GUARD_SK
    )
        return undefined;
    try {
        return {
            recordId: pk.slice(ID_GUARD_PK_PREFIX.length),
            partition,
            bindingId: readString(item, ATTR.bindingId) ?? "",
            createdAt: readNumber(item, ATTR.createdAt),
            ttl: readNumber(item, ATTR.ttl),
        };
    } catch {
        // Read while explaining a failed write: a row edited by hand must not replace that explanation.
        return undefined;
    }
}
