/**
 * Per-key order does not depend on the writers' clocks (issue 16 item 4), through `OutboxWriter` on DynamoDB
 * Local: two writers whose clocks disagree by 2 s, claimed through the store; what each path costs; keyless
 * messages keep their zero-extra-write path. The store's Persist side is in tests/integration/store/clock-skew-order.test.ts.
 */
import assert from "node:assert/strict";
import {
    GetItemCommand,
    UpdateItemCommand,
    type AttributeValue,
    type DynamoDBClient,
    type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { itemSize, MAX_TRANSACTION_BYTES } from "../../../runtime/record/item-size";
import { transactionActionSize } from "../../../runtime/record/transact-items";
import { recordKey, unmarshalRecord } from "../../../runtime/record/codec";
import { fenceKey, unmarshalFence } from "../../../runtime/record/fence";
import { claimSort } from "../../../runtime/record/keys";
import { CLOCK_BEHIND_ERROR_MS, MAX_WRITER_CLOCK_MS, OutboxStore, STORE_WARNINGS } from "../../../runtime/store";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { dynamoClient } from "../../support/dynamodb";
import { conditionFailed, FakeDynamoDb } from "../../support/store/fake-client";
import { FakeClock, RecordingLogger } from "../../support/store/helpers";
import { createOutboxTable } from "../../support/runtime/table";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach, publishedIds } from "../../support/runtime/relay-fixtures";

const T0 = Date.UTC(2026, 10, 30, 5, 0, 0);

/** A writer on the shared table with its own clock and logger, counting its calls on the way to DynamoDB Local. */
function writerAt(client: DynamoDBClient, tableName: string, clockMs: number) {
    const counting = new FakeDynamoDb(client);
    const clock = new FakeClock(clockMs);
    const logger = new RecordingLogger();
    const writer = new OutboxWriter({ client: counting as unknown as DynamoDBClient, tableName, clock, logger });
    return { writer, counting, clock, logger };
}

/** Caller Put items adding up to exactly `bytes` (each under 400 KB). */
function padding(bytes: number): TransactWriteItem[] {
    const items: TransactWriteItem[] = [];
    for (let i = 0; bytes > 0; i++) {
        const item = { PK: { S: `PAD#${String(i).padStart(3, "0")}` }, SK: { S: "X" }, big: { S: "" } };
        const room = Math.min(bytes, 390 * 1024) - itemSize(item);
        item.big.S = "x".repeat(room);
        items.push({ Put: { TableName: "business", Item: item } });
        bytes -= itemSize(item);
    }
    return items;
}

/** The item of record `id` of `partition` (its SNS binding), read consistently. */
async function recordItem(
    client: DynamoDBClient,
    table: string,
    id: string,
    partition = "ORDER#1",
): Promise<Record<string, AttributeValue>> {
    const out = await client.send(
        new GetItemCommand({ TableName: table, Key: recordKey(partition, id, "sns"), ConsistentRead: true }),
    );
    return out.Item!;
}

const keyed = (partition: string, payload: string, orderingKey = "k") => ({
    partition,
    type: "T",
    payload,
    orderingKey,
});

describe("per-key order across writer clocks (OutboxWriter on DynamoDB Local)", function () {
    let client: DynamoDBClient;
    let table: string;

    beforeEach(async function () {
        client = await dynamoClient();
        table = await createOutboxTable(client);
    });

    async function claimPayloads(partition: string): Promise<string[]> {
        const store = new OutboxStore({ client, tableName: table, clock: new FakeClock(T0 + 60_000) });
        return (await store.claim(partition, { owner: "relay", version: 1n }, 10)).map(
            (r) => JSON.parse(r.envelope.payload) as string,
        );
    }

    it("writer A (clock 2 s fast) writes 'first', then writer B (correct clock) writes 'second' with the same key: claimed first, second", async function () {
        const fast = writerAt(client, table, T0 + 2000);
        const slow = writerAt(client, table, T0);
        await fast.writer.write({ messages: [keyed("ORDER#1", "first")] });
        const [secondId] = (await slow.writer.write({ messages: [keyed("ORDER#1", "second")] })).messageIds;
        assert.deepEqual(await claimPayloads("ORDER#1"), ["first", "second"]);

        const item = await recordItem(client, table, secondId!);
        const second = unmarshalRecord(item);
        assert.equal(second.createdAt, T0 + 2000, "created_at carried forward to the fence's last_created_at");
        assert.equal(second.envelope.createdAt, T0 + 2000, "the envelope's CreatedAt moves with it");
        assert.deepEqual(
            item.claim_sort,
            { S: claimSort(T0 + 2000, second.seq) },
            "claim_sort starts with the carried-forward time (a claimed record keeps its claim_sort)",
        );
        assert.deepEqual(slow.logger.warnings(), [
            {
                level: "warn",
                message: STORE_WARNINGS.clockBehind,
                attributes: { partition_key: "ORDER#1", carried_forward_ms: 2000, records: 1 },
            },
        ]);
        assert.ok(!JSON.stringify(slow.logger.lines).includes("second"), "ids only, never a payload");
    });

    it("a writer whose clock runs a day ahead does not lock a correct writer out: its keyed write to the partition succeeds with its business item, stamped with the fence's time, after the fast record, with an error log naming the skew", async function () {
        const DAY = 24 * 3600_000;
        const fast = writerAt(client, table, T0 + DAY);
        const slow = writerAt(client, table, T0);
        await fast.writer.write({ messages: [keyed("ORDER#1", "from-the-future")] });
        const business = { Put: { TableName: table, Item: { PK: { S: "ORDER#1" }, SK: { S: "META" } } } };
        const [nowId] = (
            await slow.writer.write({ items: [business], messages: [keyed("ORDER#1", "now", "other-key")] })
        ).messageIds;
        const meta = await client.send(
            new GetItemCommand({
                TableName: table,
                Key: { PK: { S: "ORDER#1" }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        assert.ok(meta.Item !== undefined, "the business item of the transaction is written");
        const now = unmarshalRecord(await recordItem(client, table, nowId!));
        assert.equal(now.createdAt, T0 + DAY, "carried forward to the fence's time, however far ahead");
        assert.equal(now.envelope.createdAt, T0 + DAY);
        assert.deepEqual(await claimPayloads("ORDER#1"), ["from-the-future", "now"], "after the fast record");
        assert.deepEqual(slow.logger.lines, [
            {
                level: "error",
                message: STORE_WARNINGS.clockFarBehind,
                attributes: { partition_key: "ORDER#1", carried_forward_ms: DAY, records: 1 },
            },
        ]);
        const fence = unmarshalFence(
            (
                await client.send(
                    new GetItemCommand({ TableName: table, Key: fenceKey("ORDER#1"), ConsistentRead: true }),
                )
            ).Item,
        );
        assert.deepEqual([fence.seqCounter, fence.lastCreatedAt], [2n, T0 + DAY]);

        // Keyless messages and other partitions keep their own clock.
        const [keylessId] = (
            await slow.writer.write({ messages: [{ partition: "ORDER#1", type: "T", payload: "keyless" }] })
        ).messageIds;
        const [otherId] = (await slow.writer.write({ messages: [keyed("ORDER#2", "elsewhere")] })).messageIds;
        for (const [partition, id] of [
            ["ORDER#1", keylessId!],
            ["ORDER#2", otherId!],
        ] as const) {
            const item = await recordItem(client, table, id, partition);
            assert.equal(item.created_at!.N, String(T0));
        }

        // The operator's way to end the lead early: once the records stamped ahead are delivered, removing
        // last_created_at lets correct clocks stamp the partition's records with their own time again.
        const store = new OutboxStore({ client, tableName: table, clock: new FakeClock(T0) });
        const claimed = await store.claim("ORDER#1", { owner: "relay", version: 1n }, 10);
        await store.complete(
            claimed.map((r) => r.recordId),
            { owner: "relay", version: 1n },
        );
        await client.send(
            new UpdateItemCommand({
                TableName: table,
                Key: fenceKey("ORDER#1"),
                UpdateExpression: "REMOVE last_created_at",
            }),
        );
        const [afterId] = (await slow.writer.write({ messages: [keyed("ORDER#1", "after")] })).messageIds;
        const after = unmarshalRecord(await recordItem(client, table, afterId!));
        assert.equal(after.createdAt, T0);
        assert.equal(after.seq, 3n, "the counter goes on: seq stays monotonic");
    });

    it("warns when carrying a clock forward by up to 5 minutes, logs an error past that, and takes the fence's time either way", async function () {
        const ahead = writerAt(client, table, T0 + CLOCK_BEHIND_ERROR_MS);
        await ahead.writer.write({ messages: [keyed("P", "ahead")] });
        const atBound = writerAt(client, table, T0);
        const pastBound = writerAt(client, table, T0 - 1);
        for (const w of [atBound, pastBound]) {
            const [id] = (await w.writer.write({ messages: [keyed("P", "behind")] })).messageIds;
            const item = (
                await client.send(
                    new GetItemCommand({ TableName: table, Key: recordKey("P", id!, "sns"), ConsistentRead: true }),
                )
            ).Item!;
            assert.equal(item.created_at!.N, String(T0 + CLOCK_BEHIND_ERROR_MS));
        }
        assert.deepEqual(
            atBound.logger.lines.map((l) => [l.level, l.message, l.attributes?.carried_forward_ms]),
            [["warn", STORE_WARNINGS.clockBehind, CLOCK_BEHIND_ERROR_MS]],
        );
        assert.deepEqual(
            pastBound.logger.lines.map((l) => [l.level, l.message, l.attributes?.carried_forward_ms]),
            [["error", STORE_WARNINGS.clockFarBehind, CLOCK_BEHIND_ERROR_MS + 1]],
        );
    });

    it("refuses a writer clock no record can carry, naming the clock (a clock in year 9999 used to be blamed on the FENCE seq_counter)", async function () {
        await writerAt(client, table, MAX_WRITER_CLOCK_MS).writer.write({
            messages: [{ partition: "P", type: "T", payload: 1 }, keyed("P", "k")],
        });
        for (const bad of [MAX_WRITER_CLOCK_MS + 1, Date.UTC(9999, 11, 31), Number.NaN, -1]) {
            const w = writerAt(client, table, bad);
            for (const messages of [[keyed("Q", "k")], [{ partition: "Q", type: "T", payload: 1 }]]) {
                await assert.rejects(w.writer.write({ messages }), (err: unknown) => {
                    assert.ok(isOutboxError(err, "INVALID_CONFIG"), String(err));
                    assert.match(
                        err.message,
                        new RegExp(
                            `^OutboxWriter: the clock reads ${bad} \\((not a date|[-+0-9T:.Z]+)\\), which no record can carry: .*fix the clock \\(the clock option, or the machine's time\\)$`,
                        ),
                    );
                    assert.ok(!err.message.includes("seq_counter"), err.message);
                    return true;
                });
            }
            assert.equal(w.counting.calls.length, 0, "refused before any I/O");
        }
    });

    it("the normal path costs one UpdateItem per partition per write, a writer behind the fence two, and one again once its clock passes the fence", async function () {
        const fast = writerAt(client, table, T0 + 2000);
        const slow = writerAt(client, table, T0);
        await slow.writer.write({
            messages: [
                keyed("P", "p1"),
                keyed("P", "p2"),
                keyed("Q", "q1"),
                { partition: "P", type: "T", payload: "keyless" },
            ],
        });
        assert.equal(
            slow.counting.count("UpdateItem"),
            2,
            "fresh fences: one conditional UpdateItem per partition, none for the keyless message",
        );
        await fast.writer.write({ messages: [keyed("P", "p3")] });
        assert.equal(fast.counting.count("UpdateItem"), 1);

        slow.counting.calls.length = 0;
        await slow.writer.write({ messages: [keyed("P", "p4"), keyed("Q", "q2")] });
        assert.deepEqual(
            slow.counting.of("UpdateItem").map((c) => `${c.input.Key.PK.S}:${c.input.ReturnValues}`),
            ["P:UPDATED_NEW", "P:ALL_NEW", "Q:UPDATED_NEW"],
        );
        const fence = async (p: string) =>
            unmarshalFence(
                (await client.send(new GetItemCommand({ TableName: table, Key: fenceKey(p), ConsistentRead: true })))
                    .Item,
            );
        assert.deepEqual([(await fence("P")).lastCreatedAt, (await fence("Q")).lastCreatedAt], [T0 + 2000, T0]);

        slow.counting.calls.length = 0;
        slow.clock.advance(3000);
        await slow.writer.write({ messages: [keyed("P", "p5")] });
        assert.equal(slow.counting.count("UpdateItem"), 1);
        assert.equal((await fence("P")).lastCreatedAt, T0 + 3000);
        assert.deepEqual(
            (await claimPayloads("P")).filter((p) => p !== "keyless"),
            ["p1", "p2", "p3", "p4", "p5"],
        );
    });

    it("keyless messages keep their zero-extra-write path and their own clock, even behind a partition's fence", async function () {
        const fast = writerAt(client, table, T0 + 2000);
        const slow = writerAt(client, table, T0);
        await fast.writer.write({ messages: [keyed("P", "keyed")] });
        const [id] = (await slow.writer.write({ messages: [{ partition: "P", type: "T", payload: "keyless" }] }))
            .messageIds;
        assert.deepEqual(
            slow.counting.calls.map((c) => c.command),
            ["TransactWriteItems"],
        );
        const item = (
            await client.send(
                new GetItemCommand({ TableName: table, Key: recordKey("P", id!, "sns"), ConsistentRead: true }),
            )
        ).Item!;
        assert.equal(item.created_at!.N, String(T0));
        assert.deepEqual(slow.logger.lines, []);
    });

    it("checks the limits again after a carried-forward created_at lengthened a record: a transaction that fit at the writer's now but not at the fence's time is refused", async function () {
        const later = T0 + 2123; // 13 significant digits and a ".123" fraction in the envelope: the widest time text
        const fake = (behind: boolean) =>
            new FakeDynamoDb().on("UpdateItem", (_input, call) => {
                if (behind && call.nth === 1) throw conditionFailed();
                return {
                    Attributes: {
                        seq_counter: { N: "1" },
                        ...(behind ? { last_created_at: { N: String(later) } } : {}),
                    },
                };
            });
        const writerOn = (client: FakeDynamoDb) =>
            new OutboxWriter({
                client: client as unknown as DynamoDBClient,
                tableName: table,
                clock: new FakeClock(T0),
            });
        const message = keyed("P", "x".repeat(1000));
        // The first check measures the record with seq 1 before the allocation, which is what the fake allocates.
        const firstCheck = transactionActionSize(
            (await writerOn(fake(false)).prepare({ messages: [message] })).input.TransactItems![0]!,
        );
        const items = padding(MAX_TRANSACTION_BYTES - firstCheck);
        await writerOn(fake(false)).prepare({ messages: [message], items });
        const behind = fake(true);
        await assert.rejects(writerOn(behind).prepare({ messages: [message], items }), (err: unknown) => {
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            // ".123" in the envelope's CreatedAt (4 bytes) and created_at 1796014802123 (8 bytes, not 6).
            assert.match(
                err.message,
                /the transaction adds up to 4194310 bytes as DynamoDB counts it .*; a DynamoDB transaction holds at most 4194304 bytes/,
            );
            return true;
        });
        assert.deepEqual(
            behind.calls.map((c) => c.command),
            ["UpdateItem", "UpdateItem"],
            "refused after the allocation, before any transaction",
        );
    });

    it("a writer and a store share the fence: a store behind a writer's clock persists after it and is claimed after it", async function () {
        const fast = writerAt(client, table, T0 + 2000);
        await fast.writer.write({ messages: [keyed("P", "from-writer")] });
        const store = new OutboxStore({ client, tableName: table, clock: new FakeClock(T0) });
        await store.persist([
            {
                partition: "P",
                recordId: "from-store",
                bindingId: "sns",
                address: "",
                orderingKey: "k",
                envelope: { id: "from-store", subject: "T", payload: JSON.stringify("from-store") },
            },
        ]);
        assert.deepEqual(await claimPayloads("P"), ["from-writer", "from-store"]);
    });
});

describe("a fast clock does not lock correct writers out (issue 38 item 6: DynamoDB Local, the publisher on real stream records)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("a writer a day ahead writes keyed P; a correct writer's keyed write to P succeeds with its business items, sorts after it, and the publisher delivers both in that order", async function () {
        h = await createHarness();
        const DAY = 24 * 3600_000;
        const fast = new OutboxWriter({
            client: h.ddb,
            tableName: h.tableName,
            clock: { now: () => h.clock.now() + DAY, sleep: async () => undefined },
            address: h.destinationArn,
        });
        const [fastId] = (await fast.write({ messages: [keyed("P", "from-the-future")] })).messageIds;
        h.clock.advance(1_000);
        const business = {
            Put: { TableName: h.tableName, Item: { PK: { S: "CUSTOMER#7" }, SK: { S: "ORDER#1001" } } },
        };
        const [correctId] = (
            await h.writer.write({ items: [business], messages: [keyed("P", "placed-after", "other-key")] })
        ).messageIds;
        const items = await h.items();
        assert.ok(
            items.some((i) => i.PK?.S === "CUSTOMER#7" && i.SK?.S === "ORDER#1001"),
            "the business item of the correct writer's transaction is committed",
        );
        const records = await h.records();
        const fastRecord = records.find((r) => r.recordId === fastId)!;
        const correctRecord = records.find((r) => r.recordId === correctId)!;
        assert.equal(correctRecord.createdAt, fastRecord.createdAt, "the fence's time, a day ahead");
        assert.ok(
            claimSort(correctRecord.createdAt, correctRecord.seq) > claimSort(fastRecord.createdAt, fastRecord.seq),
            "claim_sort (GoBridge's order) puts the correct writer's record after the fast one",
        );

        const event = await h.streamEvent();
        assert.equal(event.Records.length, 2);
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h), [fastId, correctId]);
        assert.deepEqual(
            (await h.records()).map((r) => r.status),
            ["completed", "completed"],
        );
    });
});
