/**
 * OutboxWriter on DynamoDB Local: record ids are unique across the table, held by an id guard row per id the
 * writer did not generate, and counted in the transaction's 4 MB and 100 actions as DynamoDB counts them.
 */
import assert from "node:assert/strict";
import {
    DeleteItemCommand,
    GetItemCommand,
    PutItemCommand,
    QueryCommand,
    TransactWriteItemsCommand,
    type AttributeValue,
    type DynamoDBClient,
    type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { recordKey } from "../../../runtime/record/codec";
import { idGuardKey } from "../../../runtime/record/id-guard";
import { itemSize, MAX_TRANSACTION_BYTES } from "../../../runtime/record/item-size";
import { transactionActionSize } from "../../../runtime/record/transact-items";
import { ATTR, RECORD_ID_INDEX } from "../../../runtime/schema";
import { FakeDynamoDb } from "../../support/store/fake-client";
import { rejectsWith } from "../../support/store/helpers";
import { sparseIndexCounts } from "../../support/runtime/table";
import { fixedClock, message, rejection, scanAll, T0, writerOnFreshTable } from "../../support/writer/world";

/** Put actions on a business table whose sizes add up to exactly `bytes`. */
function fill(bytes: number): TransactWriteItem[] {
    const items: TransactWriteItem[] = [];
    for (let left = bytes, i = 0; left > 0; i += 1) {
        const key = { PK: { S: `X${String(i).padStart(3, "0")}` }, SK: { S: "Y" } };
        const overhead = itemSize({ ...key, big: { S: "" } });
        const size = Math.min(left, 380 * 1024);
        assert.ok(size > overhead, "the last filler item can hold its key");
        items.push({ Put: { TableName: "business", Item: { ...key, big: { S: "x".repeat(size - overhead) } } } });
        left -= size;
    }
    assert.equal(
        items.reduce((sum, a) => sum + itemSize(a.Put!.Item!), 0),
        bytes,
    );
    return items;
}

describe("OutboxWriter (DynamoDB Local)", function () {
    let client: DynamoDBClient, table: string, writer: OutboxWriter;
    beforeEach(async () => ({ client, table, writer } = await writerOnFreshTable()));

    describe("record ids are unique across the table: an id guard row per id the writer did not generate", function () {
        const HOUR = 3600;
        const DAYS_30 = 30 * 24 * HOUR;
        const guardOf = async (id: string) =>
            (await client.send(new GetItemCommand({ TableName: table, Key: idGuardKey(id), ConsistentRead: true })))
                .Item;
        const recordsWithId = async (id: string) =>
            (
                await client.send(
                    new QueryCommand({
                        TableName: table,
                        IndexName: RECORD_ID_INDEX.indexName,
                        KeyConditionExpression: "#id = :id",
                        ExpressionAttributeNames: { "#id": ATTR.recordId },
                        ExpressionAttributeValues: { ":id": { S: id } },
                    }),
                )
            ).Items ?? [];

        it("refuses an id a record in another partition holds: INVALID_PAYLOAD naming the id, the holder's partition, the rule and the fix; nothing written, the business item neither", async function () {
            await writer.write({ messages: [{ id: "evt-1", partition: "ORDER#1", type: "OrderCreated", payload: 1 }] });
            const before = await scanAll(client, table);
            const err = await rejection(
                writer.write({
                    items: [{ Put: { TableName: table, Item: { PK: { S: "ORDER#2" }, SK: { S: "META" } } } }],
                    messages: [
                        { partition: "ORDER#2", type: "OrderCreated", payload: 2 },
                        { id: "evt-1", partition: "ORDER#2", type: "OrderCreated", payload: 3 },
                    ],
                }),
            );
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.equal(
                err.message,
                `write: transaction cancelled, nothing was written: messages[1] (id "evt-1", partition "ORDER#2"): id "evt-1" is already taken by a record in partition "ORDER#1", until ${new Date((Math.floor(T0 / 1000) + DAYS_30) * 1000).toISOString().replace(".000Z", "Z")}; ids are unique across the table (the id is the SNS FIFO deduplication id and the outbox.id consumers deduplicate on, so a second record with it would be dropped), and reusing one is allowed only to repeat the same write in the same partition; use a new id, or omit it and the writer generates one`,
            );
            assert.deepEqual(
                {
                    failedAction: err.context.failedAction,
                    messageIndex: err.context.messageIndex,
                    messageId: err.context.messageId,
                    idGuard: err.context.idGuard,
                    heldByPartition: err.context.heldByPartition,
                    reason: err.context.reason,
                },
                {
                    failedAction: 3,
                    messageIndex: 1,
                    messageId: "evt-1",
                    idGuard: true,
                    heldByPartition: "ORDER#1",
                    reason: "ConditionalCheckFailed",
                },
                "actions: the business item, two records, then the id guard",
            );
            assert.deepEqual(await scanAll(client, table), before, "no business item, no record, the guard unchanged");
            assert.deepEqual(
                (await recordsWithId("evt-1")).map((i) => i[ATTR.pk]?.S),
                ["ORDER#1"],
                "RecordIDIndex resolves the id to one record",
            );
        });

        it("outranks another message's DUPLICATE_RECORD: the caller must not read the write as already done", async function () {
            await writer.write({
                messages: [
                    { id: "a", partition: "P", type: "T", payload: 1 },
                    { id: "b", partition: "Q", type: "T", payload: 1 },
                ],
            });
            const err = await rejection(
                writer.write({
                    messages: [
                        { id: "a", partition: "P", type: "T", payload: 1 },
                        { id: "b", partition: "R", type: "T", payload: 1 },
                    ],
                }),
            );
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.match(
                err.message,
                /messages\[0\] \(id "a", partition "P"\): a record with this id already exists in the partition; messages\[1\] \(id "b", partition "R"\): id "b" is already taken by a record in partition "Q"/,
            );
            assert.equal(err.context.messageIndex, 1);
        });

        it("keeps a repeat of the same write (same id, same partition) DUPLICATE_RECORD, also after the record was delivered and deleted", async function () {
            const write = () =>
                writer.write({ messages: [{ id: "evt-2", partition: "ORDER#1", type: "T", payload: 1 }] });
            await write();
            await rejectsWith(
                write(),
                "DUPLICATE_RECORD",
                /^write: transaction cancelled, nothing was written: messages\[0\] \(id "evt-2", partition "ORDER#1"\): a record with this id already exists in the partition$/,
            );
            // DynamoDB TTL reaps a completed record after the grace; the guard lives on.
            await client.send(new DeleteItemCommand({ TableName: table, Key: recordKey("ORDER#1", "evt-2", "sns") }));
            await rejectsWith(
                write(),
                "DUPLICATE_RECORD",
                /^write: transaction cancelled, nothing was written: messages\[0\] \(id "evt-2", partition "ORDER#1"\): a record with this id was already written to the partition \(it may have been delivered and deleted since; the id stays taken until 2026-12-30T05:00:00Z\)$/,
            );
            assert.deepEqual(
                (await scanAll(client, table)).map((i) => i[ATTR.pk]?.S),
                ["OUTBOX_ID#evt-2"],
                "nothing written again",
            );
        });

        it("refuses the id from a writer with another binding in the same partition, naming the binding", async function () {
            await writer.write({ messages: [{ id: "evt-3", partition: "P", type: "T", payload: 1 }] });
            const other = new OutboxWriter({ client, tableName: table, clock: fixedClock(), bindingId: "audit" });
            await rejectsWith(
                other.write({ messages: [{ id: "evt-3", partition: "P", type: "T", payload: 1 }] }),
                "INVALID_PAYLOAD",
                /id "evt-3" is already taken by a record in partition "P" \(binding "sns"\), until /,
            );
            assert.equal((await recordsWithId("evt-3")).length, 1);
        });

        it("writes the guard: PK OUTBOX_ID#<id>, SK ID, the holder's partition, binding and created_at, and a ttl of max(grace, 30 days) after the later of creation and expiry; nothing that puts it in an index or makes it a record", async function () {
            const graceful = new OutboxWriter({
                client,
                tableName: table,
                clock: fixedClock(),
                compactionGraceSeconds: 40 * 24 * HOUR,
            });
            await writer.write({
                messages: [
                    { id: "plain", partition: "P", type: "T", payload: 1 },
                    { id: "short", partition: "P", type: "T", payload: 1, expiresAt: new Date(T0 + 60_000) },
                    {
                        id: "far",
                        partition: "P",
                        type: "T",
                        payload: 1,
                        expiresAt: new Date(T0 + 90 * 24 * HOUR * 1000),
                    },
                ],
            });
            await graceful.write({ messages: [{ id: "graceful", partition: "P", type: "T", payload: 1 }] });
            const t0 = Math.floor(T0 / 1000);
            assert.deepEqual(await guardOf("plain"), {
                [ATTR.pk]: { S: "OUTBOX_ID#plain" },
                [ATTR.sk]: { S: "ID" },
                [ATTR.idOwnerPartition]: { S: "P" },
                [ATTR.bindingId]: { S: "sns" },
                [ATTR.createdAt]: { N: String(T0) },
                [ATTR.ttl]: { N: String(t0 + DAYS_30) },
            });
            assert.equal(
                (await guardOf("short"))?.[ATTR.ttl]?.N,
                String(t0 + 60 + DAYS_30),
                "an expiry pushes the window out",
            );
            assert.equal((await guardOf("far"))?.[ATTR.ttl]?.N, String(t0 + 90 * 24 * HOUR + DAYS_30));
            assert.equal(
                (await guardOf("graceful"))?.[ATTR.ttl]?.N,
                String(t0 + 40 * 24 * HOUR),
                "a grace longer than 30 days wins",
            );
            const counts = await sparseIndexCounts(client, table);
            assert.deepEqual(counts, { claim: 4, expiry: 2 }, "ClaimIndex and ExpiryIndex hold the records only");
            assert.equal((await recordsWithId("plain")).length, 1, "RecordIDIndex holds the record only");
        });

        it("holds the id until the guard's ttl, not until DynamoDB's lazy TTL deletion: a second later the id is free", async function () {
            await writer.write({ messages: [{ id: "evt-4", partition: "P", type: "T", payload: 1 }] });
            const ttl = Number((await guardOf("evt-4"))?.[ATTR.ttl]?.N);
            const at = (seconds: number) =>
                new OutboxWriter({ client, tableName: table, clock: fixedClock(seconds * 1000) });
            await rejectsWith(
                at(ttl).write({ messages: [{ id: "evt-4", partition: "Q", type: "T", payload: 1 }] }),
                "INVALID_PAYLOAD",
                /already taken by a record in partition "P"/,
            );
            await at(ttl + 1).write({ messages: [{ id: "evt-4", partition: "Q", type: "T", payload: 1 }] });
            assert.equal((await guardOf("evt-4"))?.[ATTR.idOwnerPartition]?.S, "Q");
        });

        it("generated ids write no guard (one Put per message); ids from an injected idGenerator get one each, as caller ids do", async function () {
            const messages = [1, 2, 3].map((n) => ({ partition: `P${n}`, type: "T", payload: n }));
            const prepared = await writer.prepare({ messages });
            assert.equal(prepared.input.TransactItems?.length, 3);
            await writer.commit(prepared);
            assert.equal((await scanAll(client, table)).length, 3, "three records and nothing else");
            let n = 0;
            const injected = new OutboxWriter({
                client,
                tableName: table,
                clock: fixedClock(),
                idGenerator: () => `custom-${++n}`,
            });
            const guardedPrepared = await injected.prepare({ messages });
            assert.equal(guardedPrepared.input.TransactItems?.length, 6, "three records and three guards");
            await injected.commit(guardedPrepared);
            assert.ok(await guardOf("custom-1"));
            assert.equal((await scanAll(client, table)).length, 9);
        });

        it("counts the id guards in the transaction's 4 MB: a write that fits with a generated id does not with a caller id of the same length", async function () {
            const recording = { send: async () => ({}) } as unknown as DynamoDBClient;
            const id = "01KB0000000000000000000000";
            const offline = () => new OutboxWriter({ client: recording, tableName: table, clock: fixedClock() });
            const probe = (await offline().prepare({ messages: [message({ id })] })).input.TransactItems!;
            const [recordBytes, guardBytes] = probe.map((a) => transactionActionSize(a));
            assert.equal(probe.length, 2);
            const filler = fill(MAX_TRANSACTION_BYTES - recordBytes! - guardBytes! + 1);
            await offline().prepare({ items: filler, messages: [message()] });
            await rejectsWith(
                offline().prepare({ items: filler, messages: [message({ id })] }),
                "INVALID_PAYLOAD",
                new RegExp(
                    `^write: the transaction adds up to ${MAX_TRANSACTION_BYTES + 1} bytes as DynamoDB counts it \\(items and keys, expressions, and the names and values they use\\) \\(1 id guard included\\); a DynamoDB transaction holds at most ${MAX_TRANSACTION_BYTES} bytes; split the write$`,
                ),
            );
        });

        it("sizes every attribute type as DynamoDB does (numbers in base-100 digits aligned at the point, +1 when negative), measured through DynamoDB Local's 4 MB refusal", async function () {
            const values: AttributeValue[] = [
                ...[
                    "0",
                    "-0",
                    "5",
                    "-3",
                    "10",
                    "99",
                    "123",
                    "1001",
                    "12345",
                    "1.5",
                    "0.5",
                    "0.001",
                    "12.34",
                    "-12.3400",
                    "00012",
                    "1796014800",
                    "1796014800000",
                    "1e5",
                    "1.5E-3",
                    "7e-10",
                    "1E+2",
                    "99999999999999999999999999999999999999",
                ].map((N) => ({ N })),
                { S: "é€😀" },
                { BOOL: true },
                { NULL: true },
                { B: new Uint8Array(10) },
                { SS: ["a", "bc"] },
                { NS: ["1", "23", "1.5"] },
                { BS: [new Uint8Array(3), new Uint8Array(4)] },
                { L: [] },
                { L: [{ S: "a" }, { N: "1.5" }] },
                { M: {} },
                { M: { a: { S: "b" }, cc: { N: "12" } } },
                { L: [{ L: [{ S: "x" }] }] },
                { M: { m: { M: { k: { S: "v" } } } } },
            ];
            const filler = fill(MAX_TRANSACTION_BYTES).map((a) => ({ Put: { ...a.Put!, TableName: table } }));
            for (const value of values) {
                const item = { PK: { S: "N" }, SK: { S: "N" }, v: value };
                const err = await rejection(
                    client.send(
                        new TransactWriteItemsCommand({
                            TransactItems: [...filler, { Put: { TableName: table, Item: item } }],
                        }),
                    ),
                );
                const counted = Number(/Payload Size: (\d+)$/.exec(String(err))?.[1]) - MAX_TRANSACTION_BYTES;
                assert.equal(
                    itemSize(item),
                    counted,
                    `${JSON.stringify(value)}: DynamoDB Local counts ${counted} (${String(err)})`,
                );
            }
        });

        it("counts the 4 MB as DynamoDB does (items and keys, expressions, and their names and values once per use): DynamoDB takes the write at 4194304 bytes, and the writer refuses 4194305 that DynamoDB would refuse", async function () {
            for (const pk of ["ACCOUNT#1", "ACCOUNT#2"])
                await client.send(
                    new PutItemCommand({
                        TableName: table,
                        Item: { PK: { S: pk }, SK: { S: "META" }, balance: { N: "10" } },
                    }),
                );
            const filler = (bytes: number) => fill(bytes).map((a) => ({ Put: { ...a.Put!, TableName: table } }));
            // The caller's actions use expressions: names and values used twice count twice; a Put's condition counts too.
            const callerItems: TransactWriteItem[] = [
                {
                    Update: {
                        TableName: table,
                        Key: { PK: { S: "ACCOUNT#1" }, SK: { S: "META" } },
                        UpdateExpression:
                            "SET #balance = #balance + :amount, #last = :amount, #note = if_not_exists(#note, :note)",
                        ConditionExpression: "#balance >= :zero",
                        ExpressionAttributeNames: { "#balance": "balance", "#last": "last_amount", "#note": "note" },
                        ExpressionAttributeValues: {
                            ":amount": { N: "5" },
                            ":zero": { N: "0" },
                            ":note": { S: "opened-é" },
                        },
                    },
                },
                {
                    ConditionCheck: {
                        TableName: table,
                        Key: { PK: { S: "ACCOUNT#2" }, SK: { S: "META" } },
                        ConditionExpression: "attribute_exists(#pk)",
                        ExpressionAttributeNames: { "#pk": "PK" },
                    },
                },
                {
                    Put: {
                        TableName: table,
                        Item: { PK: { S: "AUDIT#1" }, SK: { S: "1" } },
                        ConditionExpression: "attribute_not_exists(#sk) OR #sk <> :sk",
                        ExpressionAttributeNames: { "#sk": "SK" },
                        ExpressionAttributeValues: { ":sk": { S: "1" } },
                    },
                },
                {
                    Delete: {
                        TableName: table,
                        Key: { PK: { S: "GONE" }, SK: { S: "1" } },
                        ConditionExpression: "attribute_not_exists(#pk)",
                        ExpressionAttributeNames: { "#pk": "PK" },
                    },
                },
            ];
            const messages: OutboxMessage[] = [
                message({ id: "evt-1", orderingKey: "k", headers: { tenant: "acme" } }),
                message({ partition: "Q", expiresAt: new Date(T0 + 60_000) }),
            ];
            const offline = new OutboxWriter({
                client: { send: async () => ({}) } as unknown as DynamoDBClient,
                tableName: table,
                clock: fixedClock(),
            });
            const base = (await offline.prepare({ items: callerItems, messages })).input.TransactItems!.reduce(
                (sum, a) => sum + transactionActionSize(a),
                0,
            );
            const counting = new FakeDynamoDb(client);
            const atLimit = new OutboxWriter({
                client: counting as unknown as DynamoDBClient,
                tableName: table,
                clock: fixedClock(),
            });
            const prepared = await atLimit.prepare({
                items: [...callerItems, ...filler(MAX_TRANSACTION_BYTES - base)],
                messages,
            });
            assert.equal(
                prepared.input.TransactItems!.reduce((sum, a) => sum + transactionActionSize(a), 0),
                MAX_TRANSACTION_BYTES,
            );

            // One byte more, sent past the writer: DynamoDB refuses it and reports the same count.
            const actions = prepared.input.TransactItems!;
            const first = actions[callerItems.length]!.Put!;
            const oneMore = [...actions];
            oneMore[callerItems.length] = {
                Put: { ...first, Item: { ...first.Item, big: { S: `${first.Item!.big!.S}x` } } },
            };
            await assert.rejects(
                client.send(new TransactWriteItemsCommand({ TransactItems: oneMore })),
                new RegExp(`Transaction payload size cannot exceed 4MB\\. Payload Size: ${MAX_TRANSACTION_BYTES + 1}$`),
            );

            await atLimit.commit(prepared);
            const read = async (key: Record<string, { S: string }>) =>
                (await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
            assert.ok(
                (await read({ PK: { S: "AUDIT#1" }, SK: { S: "1" } })) &&
                    (await read(recordKey("P", "evt-1", "sns") as Record<string, { S: string }>)),
                "the write at exactly 4 MB committed",
            );

            counting.calls.length = 0;
            await rejectsWith(
                atLimit.prepare({
                    items: [...callerItems, ...filler(MAX_TRANSACTION_BYTES - base + 1)],
                    messages: [message({ id: "evt-2", orderingKey: "k", headers: { tenant: "acme" } }), messages[1]!],
                }),
                "INVALID_PAYLOAD",
                new RegExp(`the transaction adds up to ${MAX_TRANSACTION_BYTES + 1} bytes as DynamoDB counts it`),
            );
            assert.equal(counting.count("TransactWriteItems"), 0, "refused before sending");
        });

        it("costs one transactional write of an item under 1 KB (any id, a partition up to 800 bytes) in no index: 2 WCU", async function () {
            const prepared = await writer.prepare({
                messages: [message({ id: "x".repeat(128), partition: "P".repeat(800) })],
            });
            const guardPut = prepared.input.TransactItems![1]!;
            assert.equal(guardPut.Put?.Item?.[ATTR.pk]?.S, `OUTBOX_ID#${"x".repeat(128)}`);
            assert.ok(
                itemSize(guardPut.Put!.Item!) < 1024,
                "the longest id and an 800-byte partition still make an item under 1 KB",
            );
            // DynamoDB Local reports one item's worth for a multi-item transaction, so the guard is measured alone.
            const out = await client.send(
                new TransactWriteItemsCommand({ TransactItems: [guardPut], ReturnConsumedCapacity: "INDEXES" }),
            );
            assert.deepEqual(
                out.ConsumedCapacity?.map((c) => [
                    c.CapacityUnits,
                    c.Table?.CapacityUnits,
                    Object.keys(c.GlobalSecondaryIndexes ?? {}),
                ]),
                [[2, 2, []]],
            );
        });

        it("does not see an id written without a guard: store.persist (GoBridge's Persist) writes none", async function () {
            const store = new OutboxStore({ client, tableName: table, clock: fixedClock() });
            await store.persist([
                {
                    partition: "P",
                    recordId: "persisted",
                    bindingId: "sns",
                    address: "",
                    envelope: { id: "persisted", payload: "1" },
                },
            ]);
            assert.deepEqual(
                (await scanAll(client, table)).map((i) => i[ATTR.sk]?.S).sort(),
                ["FENCE", "OUTBOX#persisted#sns"],
                "the record and its FENCE row, no guard",
            );
            await writer.write({ messages: [message({ id: "persisted", partition: "Q" })] });
            assert.equal(
                (await recordsWithId("persisted")).length,
                2,
                "the caller of persist keeps ids unique across the table",
            );
        });

        it("lets 50 caller ids through (100 actions) and counts 51 as 102", async function () {
            const recording = { send: async () => ({}) } as unknown as DynamoDBClient;
            const offline = new OutboxWriter({ client: recording, tableName: table, clock: fixedClock() });
            assert.equal(
                (await offline.prepare({ messages: Array.from({ length: 50 }, (_, i) => message({ id: `m-${i}` })) }))
                    .input.TransactItems?.length,
                100,
            );
            assert.equal(
                (await offline.prepare({ messages: Array.from({ length: 100 }, () => message()) })).input.TransactItems
                    ?.length,
                100,
                "generated ids: 100 messages fit",
            );
            await rejectsWith(
                offline.prepare({ messages: Array.from({ length: 51 }, (_, i) => message({ id: `m-${i}` })) }),
                "INVALID_PAYLOAD",
                /51 id guards = 102 actions/,
            );
        });
    });
});
