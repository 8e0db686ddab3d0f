/**
 * Persist (reference §4.2): per-record idempotent conditional puts, with `seq` allocated from the FENCE row first.
 * A record without its own creation time takes the store clock's now, carried forward to the partition's
 * `last_created_at` when the clock is behind it, so `(created_at, seq)` order is persist order across stores.
 * No transaction and no 100-item limit: a re-persisted fan-out batch writes its new legs and skips the rest
 * (finding C1), and an SK held by a different record is a transient error, never a silent drop (c13-sk-collision).
 *
 * @packageDocumentation
 */
import type { UpdateItemCommandInput } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { itemSize, MAX_ITEM_BYTES, MAX_RECORD_BYTES, TRANSITION_MARGIN_BYTES } from "../record/item-size";
import {
    marshalRecord,
    pendingRecord,
    readString,
    recordKey,
    validateNewRecord,
    type AttributeMap,
    type NewOutboxRecord,
    type OutboxRecord,
} from "../record/codec";
import { fenceTtlSeconds } from "../record/fence";
import { ATTR } from "../schema";
import { isConditionalCheckFailed, wrapAwsError } from "./aws-errors";
import { placeholders, projection, skAbsent } from "./expressions";
import type { StoreContext } from "./options";
import { getItem, putItem, updateItem } from "./send";
import { raiseExpiryShards } from "./expiry-shards-row";
import { allocateSeqRange } from "./seq-allocation";
import { checkWriterClock } from "./writer-clock";

/** What a Persist call did. */
export interface PersistResult {
    /** Records written now. */
    readonly written: number;
    /** Records skipped because the same (partition, envelope, binding) already existed. */
    readonly duplicates: number;
}

/** A record's allocation: its seq, and the now its `created_at` defaults to. */
interface Stamp {
    readonly seq: bigint;
    readonly nowMs: number;
}

/**
 * Allocate one seq range per distinct partition, in first-appearance order; returns the stamps in batch order.
 * A partition's now is carried forward to its fence's `last_created_at` when the clock is behind it.
 */
async function allocateSeqs(ctx: StoreContext, records: readonly NewOutboxRecord[], nowMs: number): Promise<Stamp[]> {
    const counts = new Map<string, number>();
    for (const r of records) counts.set(r.partition, (counts.get(r.partition) ?? 0) + 1);
    const next = new Map<string, Stamp>();
    const fenceTtl = fenceTtlSeconds(nowMs, ctx.compactionGraceSeconds);
    const send = (input: UpdateItemCommandInput) => updateItem(ctx, "persist.seq", input);
    for (const [partition, count] of counts) {
        try {
            const range = await allocateSeqRange(
                send,
                { tableName: ctx.tableName, partition, count, nowMs, fenceTtl },
                ctx.logger,
            );
            next.set(partition, { seq: range.firstSeq, nowMs: range.createdAt });
        } catch (err) {
            throw wrapAwsError(err, "outbox seq allocation failed", { partition });
        }
    }
    return records.map((r) => {
        const stamp = next.get(r.partition) as Stamp;
        next.set(r.partition, { ...stamp, seq: stamp.seq + 1n });
        return stamp;
    });
}

/** On a failed put condition: is the occupant the same record (a duplicate) or a different one (a collision)? */
async function sameOccupant(ctx: StoreContext, record: OutboxRecord): Promise<boolean> {
    const { recordId, envelopeId, bindingId } = record;
    const identity = projection(ATTR.envelopeId, ATTR.bindingId);
    let item;
    try {
        item = (
            await getItem(ctx, "persist.readback", {
                TableName: ctx.tableName,
                Key: recordKey(record.partition, envelopeId, bindingId),
                ConsistentRead: true,
                ProjectionExpression: identity.text,
                ...placeholders(identity),
            })
        ).Item;
    } catch (err) {
        throw wrapAwsError(err, "outbox persist: resolve sort-key conflict", { recordId, envelopeId, bindingId });
    }
    return (
        item !== undefined &&
        readString(item, ATTR.envelopeId) === envelopeId &&
        readString(item, ATTR.bindingId) === bindingId
    );
}

/**
 * Refuse a record over {@link MAX_RECORD_BYTES}: DynamoDB would store it, but a claim, a count or a completion would
 * take it over the item limit, and the relay could then only dead-letter it.
 */
function checkRecordSize(record: OutboxRecord, item: AttributeMap): void {
    const size = itemSize(item);
    if (size <= MAX_RECORD_BYTES) return;
    throw new OutboxError(
        "INVALID_PAYLOAD",
        `outbox record "${record.recordId}" is ${size} bytes as an item; an outbox record holds at most ${MAX_RECORD_BYTES} bytes (DynamoDB's ${MAX_ITEM_BYTES} less ${TRANSITION_MARGIN_BYTES} for what claiming, counting and completing it adds); shrink its envelope's payload or headers, or store the payload elsewhere and send a reference`,
        { context: { recordId: record.recordId, partition: record.partition, size, maxSize: MAX_RECORD_BYTES } },
    );
}

/**
 * Persist records. Every record is validated before anything is written, its size too (at most
 * {@link MAX_RECORD_BYTES}); its size is checked again with its allocated `seq`, before the first put.
 *
 * Record ids must be unique across the table, not only within their partition: RecordIDIndex resolves an id to
 * one record (`Limit 1`) for Complete and Release, and the publisher sends the id as the SNS FIFO deduplication
 * id and the `outbox.id` consumers deduplicate on. Like GoBridge's Persist, this writes no id guard, so it does
 * not detect an id reused in another partition; the caller must not reuse one (`OutboxWriter` guards the ids it
 * did not generate).
 *
 * @throws OutboxError `DUPLICATE_RECORD` when every record already existed; `UNAVAILABLE` (transient) when a sort
 * key is held by a different record; the classified SDK error otherwise (records already written stay written;
 * re-persisting is safe).
 */
export async function persist(ctx: StoreContext, records: readonly NewOutboxRecord[]): Promise<PersistResult> {
    if (!Array.isArray(records))
        throw new OutboxError("INVALID_PAYLOAD", `persist takes an array of records, got ${typeof records}`);
    if (records.length === 0) return { written: 0, duplicates: 0 };
    for (const r of records) validateNewRecord(r);
    ctx.logger.debug("dynamodboutbox: persist", { count: records.length });
    const nowMs = ctx.clock.now();
    checkWriterClock("OutboxStore.persist", nowMs);
    // Before any write, with the shortest seq a record can get: a record this refuses is too large whatever its seq.
    for (const r of records) {
        const provisional = pendingRecord(r, 1n, nowMs);
        checkRecordSize(provisional, marshalRecord(provisional, ctx.expiryShards));
    }
    const stamps = await allocateSeqs(ctx, records, nowMs);
    const pending = records.map((r, i) => pendingRecord(r, stamps[i].seq, stamps[i].nowMs));
    const items = pending.map((record) => marshalRecord(record, ctx.expiryShards));
    pending.forEach((record, i) => checkRecordSize(record, items[i]!));
    if (
        !ctx.expiryShardsMark.raised &&
        ctx.expiryShards > 1 &&
        records.some((r) => (r.envelope.expiresAt ?? 0) !== 0)
    ) {
        await raiseExpiryShards(
            (input) => updateItem(ctx, "persist.expiry-shards", input),
            ctx.tableName,
            ctx.expiryShards,
        );
        ctx.expiryShardsMark.raised = true;
    }
    const condition = skAbsent();
    let duplicates = 0;
    for (let i = 0; i < records.length; i++) {
        const record = pending[i]!;
        const item = items[i]!;
        const context = {
            recordId: record.recordId,
            envelopeId: record.envelopeId,
            bindingId: record.bindingId,
            partition: record.partition,
        };
        try {
            await putItem(ctx, "persist.put", {
                TableName: ctx.tableName,
                Item: item,
                ConditionExpression: condition.text,
                ...placeholders(condition),
            });
        } catch (err) {
            if (!isConditionalCheckFailed(err)) throw wrapAwsError(err, "outbox persist failed", context);
            if (await sameOccupant(ctx, record)) {
                duplicates++;
                continue;
            }
            throw new OutboxError(
                "UNAVAILABLE",
                "outbox persist: sort key occupied by a DIFFERENT record; a foreign writer shares this table — retrying rather than dropping the message",
                { transient: true, cause: err, context },
            );
        }
    }
    if (duplicates === records.length) {
        throw new OutboxError("DUPLICATE_RECORD", "all records in batch already persisted", {
            context: { recordCount: records.length },
        });
    }
    return { written: records.length - duplicates, duplicates };
}
