/**
 * A record the writer accepts can always be finished: at `MAX_RECORD_BYTES` (DynamoDB's 400 KB less what the
 * transitions add), on DynamoDB Local and the fault server, through the real publisher and sweeper: claimed,
 * released, claimed again, refused and counted, completed, expired and dead-lettered, on the keyed path, the
 * keyless path and the sweeper; with the longest owner and the largest numbers the store writes. One byte more is
 * refused at write, by the writer and by `OutboxStore.persist`. A record another writer left within the margin of
 * the limit (one no claim can take, or one a count cannot grow) is dead-lettered in plain sight, never held.
 * The fault server refuses entries on demand (a fake for SNS, which no emulator fails per entry).
 */
import assert from "node:assert/strict";
import { GetItemCommand, UpdateItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import type { EntryFaultRule } from "../../../dev/emulators/aws-fault-server";
import { isOutboxError } from "../../../runtime/errors";
import {
    itemSize,
    MAX_CLAIM_OWNER_BYTES,
    MAX_ITEM_BYTES,
    MAX_RECORD_BYTES,
    TRANSITION_MARGIN_BYTES,
} from "../../../runtime/record/item-size";
import { marshalRecord, pendingRecord, recordKey, unmarshalRecord } from "../../../runtime/record/codec";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { createHarness, entryRecordId, type Harness } from "../../support/runtime/harness";
import { closeAfterEach, publishedIds, deadLettered, putRawItem } from "../../support/runtime/relay-fixtures";
import { RecordingLogger } from "../../support/store/helpers";

const REFUSED: EntryFaultRule = { code: "InvalidParameter", senderFault: true, message: "Invalid parameter: Message" };
const TRANSIENT: EntryFaultRule = { code: "InternalError", senderFault: false };

/**
 * A new writer on the harness's table and clock. A keyless record's seq counts the writer's messages within a
 * millisecond, and a number's size depends on its digits: a fresh writer at the same instant makes the same seq.
 */
function fresh(h: Harness): OutboxWriter {
    return new OutboxWriter({ client: h.ddb, tableName: h.tableName, clock: h.clock, address: h.destinationArn });
}

/** The record item a prepared write of `message` makes (the last action of its transaction). */
async function recordBytes(h: Harness, message: OutboxMessage): Promise<number> {
    const prepared = await fresh(h).prepare({ messages: [message] });
    return itemSize(prepared.input.TransactItems!.at(-1)!.Put!.Item!);
}

/** A header of `<` (six bytes each in the record's Go JSON, one in the message) and `a` (one byte each). */
const header = (bytes: number, pad: number): string => "<".repeat(Math.floor((bytes - 2000) / 6)) + "a".repeat(pad);

/** A message whose record is exactly `bytes`, written by a {@link fresh} writer at the harness's clock. */
async function messageOfRecordSize(
    h: Harness,
    bytes: number,
    over: Partial<OutboxMessage> = {},
): Promise<OutboxMessage> {
    const make = (pad: number): OutboxMessage => ({
        partition: "P",
        type: "T",
        payload: { n: 1 },
        ...over,
        headers: { note: header(bytes, pad) },
    });
    const message = make(1 + bytes - (await recordBytes(h, make(1))));
    assert.equal(await recordBytes(h, message), bytes, "the record is exactly the size asked for");
    return message;
}

/** Write one message with a {@link fresh} writer; its id. */
async function write(h: Harness, message: OutboxMessage): Promise<string> {
    return (await fresh(h).write({ messages: [message] })).messageIds[0]!;
}

/**
 * A record item of exactly `bytes`, as another writer (an older version, GoBridge) could have put it: the
 * writer's layout, without its size check.
 */
function foreignRecordItem(
    bytes: number,
    over: { id: string; partition?: string; orderingKey?: string; createdAt: number },
): Record<string, AttributeValue> {
    const make = (pad: number) =>
        marshalRecord(
            pendingRecord(
                {
                    partition: over.partition ?? "P",
                    recordId: over.id,
                    bindingId: "sns",
                    address: "",
                    envelope: {
                        id: over.id,
                        subject: "T",
                        payload: '{"n":1}',
                        headers: { note: header(bytes, pad) },
                        createdAt: over.createdAt,
                    },
                    ...(over.orderingKey !== undefined ? { orderingKey: over.orderingKey } : {}),
                },
                1n,
                over.createdAt,
            ),
        );
    const item = make(1 + bytes - itemSize(make(1)));
    assert.equal(itemSize(item), bytes);
    return item;
}

async function itemOf(h: Harness, id: string, partition = "P"): Promise<Record<string, AttributeValue>> {
    const out = await h.ddb.send(
        new GetItemCommand({ TableName: h.tableName, Key: recordKey(partition, id, "sns"), ConsistentRead: true }),
    );
    assert.ok(out.Item, `record ${id} exists`);
    return out.Item;
}

async function statusOf(h: Harness, id: string, partition = "P"): Promise<string | undefined> {
    return (await itemOf(h, id, partition)).status?.S;
}

function refuse(h: Harness, rule: EntryFaultRule, id: string, times?: number): void {
    h.server.setFaults({
        entries: [
            {
                ...rule,
                actions: [h.batchAction],
                when: (entry) => entryRecordId(entry) === id,
                ...(times !== undefined ? { times } : {}),
            },
        ],
    });
}

describe("a record at the writer's size limit (DynamoDB Local + the fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("the limit is DynamoDB's 400 KB less what the transitions add, 331 bytes", function () {
        assert.equal(TRANSITION_MARGIN_BYTES, 331);
        assert.equal(MAX_RECORD_BYTES, MAX_ITEM_BYTES - 331);
        assert.equal(MAX_RECORD_BYTES, 409_269);
    });

    it("is accepted at exactly MAX_RECORD_BYTES; one byte more is refused at write with the limit and the margin named", async function () {
        h = await createHarness();
        for (const over of [{}, { orderingKey: "k" }]) {
            const atLimit = await messageOfRecordSize(h, MAX_RECORD_BYTES, over);
            const oneMore = {
                ...atLimit,
                headers: { note: `${atLimit.headers!.note!}a` },
            };
            await assert.rejects(fresh(h).write({ messages: [oneMore] }), (err: unknown) => {
                assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
                assert.match(
                    err.message,
                    /makes an outbox record of 409270 bytes; an outbox record holds at most 409269 bytes \(DynamoDB's 409600 less 331 for what claiming, counting and completing it adds\); of it: .*headers \d+ bytes .*; shrink the headers/,
                );
                return true;
            });
            await write(h, atLimit);
        }
    });

    it("refuses the issue's record of 409,515 bytes (a header of '<', six bytes each), which main accepted and no claim could take", async function () {
        h = await createHarness();
        const message = await messageOfRecordSize(h, MAX_RECORD_BYTES, { orderingKey: "k" });
        const issue = {
            ...message,
            headers: { note: `${message.headers!.note!}${"a".repeat(409_515 - MAX_RECORD_BYTES)}` },
        };
        await assert.rejects(fresh(h).write({ messages: [issue] }), /makes an outbox record of 409515 bytes/);
    });

    it("keyed path: claimed, released on a transient refusal, claimed again and completed", async function () {
        h = await createHarness();
        const message = await messageOfRecordSize(h, MAX_RECORD_BYTES, { orderingKey: "k" });
        const id = await write(h, message);
        refuse(h, TRANSIENT, id, 1);
        const event = await h.streamEvent();
        const publisher = h.publisher();
        assert.equal((await publisher(event)).batchItemFailures.length, 1, "the transient refusal retries the batch");
        const released = await itemOf(h, id);
        assert.deepEqual(
            [released.status?.S, released.claimed_by, released.replay_count?.N],
            ["pending", undefined, "1"],
        );
        assert.deepEqual(await publisher(event), { batchItemFailures: [] });
        assert.equal(await statusOf(h, id), "completed");
        assert.deepEqual(publishedIds(h), [id]);
    });

    it("keyed path: refused, counted, and dead-lettered at maxPublishAttempts", async function () {
        h = await createHarness();
        const message = await messageOfRecordSize(h, MAX_RECORD_BYTES, { orderingKey: "k" });
        const id = await write(h, message);
        refuse(h, REFUSED, id);
        const event = await h.streamEvent();
        const publisher = h.publisher({ maxPublishAttempts: 2 });
        assert.deepEqual(await publisher(event), { batchItemFailures: [] }, "held to its key, left to the sweeper");
        assert.equal((await itemOf(h, id)).publish_attempts?.N, "1");
        assert.deepEqual(await publisher(event), { batchItemFailures: [] });
        assert.equal(await statusOf(h, id), "completed");
        assert.deepEqual(deadLettered(h), [[id, "publish-rejected"]]);
    });

    it("keyed path: claimed after its expiry, dead-lettered as expired and marked expired", async function () {
        h = await createHarness();
        const message = await messageOfRecordSize(h, MAX_RECORD_BYTES, {
            orderingKey: "k",
            expiresAt: new Date(h.clock.now() + 1000),
        });
        const id = await write(h, message);
        h.clock.advance(2000);
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        assert.equal(await statusOf(h, id), "expired");
        assert.deepEqual(deadLettered(h), [[id, "expired"]]);
    });

    it("keyless path: refused and counted on the stream path, then claimed by the sweeper, refused, counted and dead-lettered", async function () {
        h = await createHarness();
        const message = await messageOfRecordSize(h, MAX_RECORD_BYTES);
        const id = await write(h, message);
        refuse(h, REFUSED, id);
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(await h.streamEvent()), {
            batchItemFailures: [],
        });
        assert.equal((await itemOf(h, id)).publish_attempts?.N, "1");
        h.clock.advance(121_000);
        const swept = await createSweeper(h.config({ maxPublishAttempts: 2 }))();
        assert.deepEqual([swept.deadLettered, swept.failedPartitions], [1, 0]);
        assert.equal(await statusOf(h, id), "completed");
        assert.deepEqual(deadLettered(h), [[id, "publish-rejected"]]);
    });

    it("sweeper: a keyless and a keyed record whose stream records were lost are claimed, published and completed; an expired one is dead-lettered", async function () {
        h = await createHarness();
        const keyless = await messageOfRecordSize(h, MAX_RECORD_BYTES, { partition: "A" });
        const keyed = await messageOfRecordSize(h, MAX_RECORD_BYTES, { partition: "B", orderingKey: "k" });
        const expiring = await messageOfRecordSize(h, MAX_RECORD_BYTES, {
            partition: "C",
            expiresAt: new Date(h.clock.now() + 1000),
        });
        const ids = [];
        for (const m of [keyless, keyed, expiring]) ids.push(await write(h, m));
        h.clock.advance(121_000);
        const swept = await createSweeper(h.config())();
        assert.deepEqual([swept.published, swept.expired, swept.failedPartitions], [2, 1, 0]);
        assert.deepEqual(
            [await statusOf(h, ids[0]!, "A"), await statusOf(h, ids[1]!, "B"), await statusOf(h, ids[2]!, "C")],
            ["completed", "completed", "expired"],
        );
    });

    it("fits every transition with the longest owner the store takes and the largest numbers DynamoDB stores", async function () {
        h = await createHarness();
        const message = await messageOfRecordSize(h, MAX_RECORD_BYTES, { orderingKey: "k" });
        const id = await write(h, message);
        const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        const token = { owner: "o".repeat(MAX_CLAIM_OWNER_BYTES), version: 10n ** 38n - 1n };
        assert.deepEqual(
            (await store.claim("P", token, 10)).map((r) => r.recordId),
            [id],
        );
        await store.release([id], token);
        await store.claim("P", token, 10);
        // What no run reaches in practice, written directly: every counter at 38 digits, the most DynamoDB stores.
        const biggest = "9".repeat(38);
        await h.ddb.send(
            new UpdateItemCommand({
                TableName: h.tableName,
                Key: recordKey("P", id, "sns"),
                UpdateExpression:
                    "SET replay_count = :n, publish_attempts = :n, claimed_at = :n, first_attempted_at = :n",
                ExpressionAttributeValues: { ":n": { N: biggest } },
            }),
        );
        const peak = itemSize(await itemOf(h, id));
        assert.ok(peak <= MAX_ITEM_BYTES, `claimed and counted at its largest: ${peak} bytes`);
        await store.complete([id], token);
        assert.equal(await statusOf(h, id), "completed");
        await assert.rejects(
            store.claim("P", { owner: "o".repeat(MAX_CLAIM_OWNER_BYTES + 1), version: token.version }, 1),
            /claim: token\.owner is 129 bytes \(UTF-8\); a claim owner is at most 128/,
        );
    });

    it("OutboxStore.persist writes a record of exactly MAX_RECORD_BYTES and refuses one byte more before any write", async function () {
        h = await createHarness();
        const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        const sized = (id: string, bytes: number) => {
            const item = foreignRecordItem(bytes, { id, createdAt: h.clock.now() });
            const record = unmarshalRecord(item);
            return {
                partition: record.partition,
                recordId: record.recordId,
                bindingId: record.bindingId,
                address: record.address,
                envelope: record.envelope,
            };
        };
        // persist stamps its own seq; its digits are the provisional one's here (1).
        await assert.rejects(store.persist([sized("big", MAX_RECORD_BYTES + 1)]), (err: unknown) => {
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.match(
                err.message,
                /outbox record "big" is 409270 bytes as an item; an outbox record holds at most 409269 bytes/,
            );
            return true;
        });
        assert.deepEqual(await h.items(), [], "nothing written, not even the seq allocation");
        assert.deepEqual(await store.persist([sized("fits", MAX_RECORD_BYTES)]), { written: 1, duplicates: 0 });
        assert.equal(itemSize(await itemOf(h, "fits")), MAX_RECORD_BYTES);
    });
});

describe("a record another writer left at the edge of DynamoDB's item limit (DynamoDB Local + the fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("keyed: no claim can take it, so it is dead-lettered as item-too-large and completed; the next record of its key is delivered, the shard is not held", async function () {
        h = await createHarness();
        const now = h.clock.now();
        await putRawItem(h, foreignRecordItem(409_515, { id: "edge", orderingKey: "k", createdAt: now }));
        h.clock.advance(1);
        const [next] = (
            await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 2, orderingKey: "k" }] })
        ).messageIds;
        const logger = new RecordingLogger();
        assert.deepEqual(await h.publisher({ logger })(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason, d.body.errorCode]),
            [["edge", "item-too-large", "ValidationError"]],
        );
        assert.deepEqual(
            logger.lines
                .filter((l) => l.level === "error" && /too large to claim/.test(l.message))
                .map((l) => [l.attributes?.recordId, l.attributes?.size]),
            [["edge", 409_515]],
            "logged at error, with its id and size",
        );
        assert.match(
            String(h.deadLetters()[0]!.body.errorMessage),
            /record edge of partition "P" is 409515 bytes, and claiming it would take it over DynamoDB's item limit of 409600 bytes/,
        );
        const edge = await itemOf(h, "edge");
        assert.equal(edge.status?.S, "completed");
        assert.ok(itemSize(edge) < 409_515, "the completion shrank it (claim_sort removed)");
        assert.deepEqual(publishedIds(h), [next]);
    });

    it("keyless, its stream record lost: the sweeper dead-letters it as item-too-large and the partition does not fail", async function () {
        h = await createHarness();
        await putRawItem(h, foreignRecordItem(409_515, { id: "edge", createdAt: h.clock.now() }));
        h.clock.advance(121_000);
        const swept = await createSweeper(h.config())();
        assert.deepEqual([swept.deadLettered, swept.failedPartitions], [1, 0]);
        assert.equal(await statusOf(h, "edge"), "completed");
        assert.deepEqual(deadLettered(h), [["edge", "item-too-large"]]);
        const again = await createSweeper(h.config())();
        assert.deepEqual([again.partitions, again.deadLettered], [0, 0], "nothing left for the next sweep");
    });

    it("keyless, refused by the destination: a count would take it over the limit, so it is dead-lettered at once and the shard goes on", async function () {
        h = await createHarness();
        await putRawItem(h, foreignRecordItem(409_590, { id: "edge", createdAt: h.clock.now() }));
        refuse(h, REFUSED, "edge");
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 3 })(await h.streamEvent()), {
            batchItemFailures: [],
        });
        assert.equal(await statusOf(h, "edge"), "completed");
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason, d.body.errorCode]),
            [["edge", "publish-rejected", "InvalidParameter"]],
        );
    });
});
