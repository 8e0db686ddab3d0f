/**
 * OutboxWriter on DynamoDB Local: the record layout, atomicity with the caller's items, every limit (rejected
 * with nothing written), cancellation mapping, idempotency tokens, and the write units per message.
 * Not proven here: publishing (publisher tests) and GSI lag (DynamoDB Local's GSIs are synchronous).
 */
import assert from "node:assert/strict";
import { GetItemCommand, ScanCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxWriter, type OutboxMessage } from "../../runtime/writer";
import { isOutboxError } from "../../runtime/errors";
import { unmarshalRecord } from "../../runtime/record/codec";
import { recordKey } from "../../runtime/record/codec";
import { fenceKey } from "../../runtime/record/fence";
import { ATTR, CLAIM_INDEX, EXPIRY_INDEX, RECORD_ID_INDEX } from "../../runtime/schema";
import { dynamoClient } from "../support/dynamodb";
import { createOutboxTable } from "./support/table";

const T0 = Date.UTC(2026, 10, 30, 5, 0, 0);
const fixedClock = (ms = T0) => ({ now: () => ms, sleep: async () => undefined });

async function scanAll(client: DynamoDBClient, table: string) {
    const out = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return out.Items ?? [];
}

async function rejects(promise: Promise<unknown>, code: string, pattern: RegExp): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
        assert.ok(isOutboxError(err), `expected OutboxError, got ${String(err)}`);
        assert.equal(err.code, code, err.message);
        assert.match(err.message, pattern);
        return true;
    });
}

describe("OutboxWriter (DynamoDB Local)", function () {
    let client: DynamoDBClient;
    let table: string;
    let writer: OutboxWriter;

    beforeEach(async function () {
        client = await dynamoClient();
        table = await createOutboxTable(client);
        writer = new OutboxWriter({ client, tableName: table, clock: fixedClock(), address: "arn:aws:sns:us-east-1:000000000000:t" });
    });

    it("commits the business item and the outbox record together, in the store's layout", async function () {
        const result = await writer.write({
            items: [{ Put: { TableName: table, Item: { PK: { S: "ORDER#1001" }, SK: { S: "META" }, total: { N: "42" } } } }],
            messages: [{ partition: "ORDER#1001", type: "OrderCreated", payload: { orderId: 1001, note: "<&>" }, headers: { tenant: "acme" }, expiresAt: new Date(T0 + 60_000) }],
        });
        assert.equal(result.messageIds.length, 1);
        const id = result.messageIds[0]!;
        assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
        const items = await scanAll(client, table);
        assert.equal(items.length, 2, "business item + record, and no FENCE row for a keyless message");
        const got = await client.send(new GetItemCommand({ TableName: table, Key: recordKey("ORDER#1001", id, "sns"), ConsistentRead: true }));
        assert.ok(got.Item);
        const record = unmarshalRecord(got.Item);
        assert.equal(record.recordId, id);
        assert.equal(record.envelopeId, id);
        assert.equal(record.status, "pending");
        assert.equal(record.envelope.subject, "OrderCreated");
        assert.deepEqual(JSON.parse(record.envelope.payload), { orderId: 1001, note: "<&>" });
        assert.deepEqual(record.envelope.headers, { tenant: "acme" });
        assert.equal(record.createdAt, T0);
        assert.equal(record.expiresAt, T0 + 60_000);
        assert.equal(record.address, "arn:aws:sns:us-east-1:000000000000:t");
        assert.equal(got.Item[ATTR.hasExpiry]?.S, "1");
        assert.equal(got.Item[ATTR.ttl], undefined, "a pending record never carries ttl");
        assert.equal(record.seq, BigInt(T0) * 1_000_000n, "keyless seq is derived from created_at, no FENCE write");
        assert.equal(got.Item[ATTR.claimSort]?.S, `${String(T0).padStart(19, "0")}#${(BigInt(T0) * 1_000_000n).toString().padStart(20, "0")}`);
        assert.equal(got.Item[ATTR.orderingKey], undefined);
    });

    it("round-trips ids and partitions containing # and %", async function () {
        const { messageIds } = await writer.write({ messages: [{ id: "a#b%23c%", partition: "TENANT#x%y#1", type: "T", payload: 1 }] });
        assert.deepEqual(messageIds, ["a#b%23c%"]);
        const items = await scanAll(client, table);
        assert.equal(items.length, 1);
        assert.equal(items[0]![ATTR.sk]?.S, "OUTBOX#a%23b%2523c%25#sns");
        const record = unmarshalRecord(items[0]!);
        assert.equal(record.envelopeId, "a#b%23c%");
        assert.equal(record.recordId, "a#b%23c%");
        assert.equal(record.partition, "TENANT#x%y#1");
    });

    it("allocates strict per-partition seqs for keyed messages from the FENCE row", async function () {
        await writer.write({
            messages: [
                { partition: "P", type: "T", payload: 1, orderingKey: "k" },
                { partition: "P", type: "T", payload: 2 },
                { partition: "P", type: "T", payload: 3, orderingKey: "k" },
            ],
        });
        await writer.write({ messages: [{ partition: "P", type: "T", payload: 4, orderingKey: "k" }] });
        const fence = await client.send(new GetItemCommand({ TableName: table, Key: fenceKey("P"), ConsistentRead: true }));
        assert.equal(fence.Item?.[ATTR.seqCounter]?.N, "3");
        assert.ok(Number(fence.Item?.[ATTR.ttl]?.N) >= Math.floor(T0 / 1000) + 30 * 24 * 3600);
        const records = (await scanAll(client, table)).filter((i) => i[ATTR.sk]!.S!.startsWith("OUTBOX#")).map((i) => unmarshalRecord(i));
        const keyed = records.filter((r) => r.orderingKey === "k").sort((a, b) => Number(a.seq - b.seq));
        assert.deepEqual(keyed.map((r) => JSON.parse(r.envelope.payload)), [1, 3, 4]);
        assert.deepEqual(keyed.map((r) => r.seq), [1n, 2n, 3n]);
        assert.equal(keyed[0]!.envelope.headers["x-bridge.ordering-key"], "k", "the key is in the envelope header too");
    });

    it("writes nothing when a caller's item condition fails, and names that item", async function () {
        await rejects(
            writer.write({
                items: [
                    { Put: { TableName: table, Item: { PK: { S: "ORDER#1" }, SK: { S: "A" } } } },
                    { ConditionCheck: { TableName: table, Key: { PK: { S: "ORDER#1" }, SK: { S: "MISSING" } }, ConditionExpression: "attribute_exists(PK)" } },
                ],
                messages: [{ partition: "ORDER#1", type: "T", payload: {} }],
            }),
            "CONDITION_FAILED",
            /items\[1\] \(ConditionCheck on table "[^"]+" PK=ORDER#1, SK=MISSING\): ConditionalCheckFailed/,
        );
        assert.equal((await scanAll(client, table)).length, 0, "neither the business item nor the record");
    });

    it("rejects a message id that already exists in its partition as DUPLICATE_RECORD naming the message, with nothing written", async function () {
        await writer.write({ messages: [{ id: "dup-1", partition: "P", type: "T", payload: 1 }] });
        const err = await writer
            .write({
                items: [{ Put: { TableName: table, Item: { PK: { S: "P" }, SK: { S: "BIZ" } } } }],
                messages: [
                    { id: "fresh", partition: "P", type: "T", payload: 2 },
                    { id: "dup-1", partition: "P", type: "T", payload: 3 },
                ],
            })
            .then(() => undefined, (e: unknown) => e);
        assert.ok(isOutboxError(err, "DUPLICATE_RECORD"), String(err));
        assert.match(err.message, /messages\[1\] \(id "dup-1", partition "P"\): a record with this id already exists/);
        assert.equal(err.context.messageId, "dup-1");
        assert.equal(err.context.failedAction, 2);
        assert.equal((await scanAll(client, table)).length, 1, "only the first write's record");
    });

    it("makes committing the same prepared write twice with a ClientRequestToken a no-op", async function () {
        const prepared = await writer.prepare({ clientRequestToken: "token-1", messages: [{ partition: "P", type: "T", payload: 1 }, { partition: "P", type: "T", payload: 2, orderingKey: "k" }] });
        const first = await writer.commit(prepared);
        const retry = await writer.commit(prepared);
        assert.deepEqual(retry.messageIds, first.messageIds);
        assert.equal((await scanAll(client, table)).length, 3, "two records and one FENCE row, once");
    });

    it("rejects a ClientRequestToken reused for a different request, naming the cause", async function () {
        await writer.write({ clientRequestToken: "token-2", messages: [{ partition: "P", type: "T", payload: 1 }] });
        await rejects(writer.write({ clientRequestToken: "token-2", messages: [{ partition: "P", type: "T", payload: 2 }] }), "INVALID_PAYLOAD", /clientRequestToken was already used for a different request/);
        assert.equal((await scanAll(client, table)).length, 1);
    });

    describe("limits: rejected before sending, nothing written", function () {
        const message = (over: Partial<OutboxMessage> = {}): OutboxMessage => ({ partition: "P", type: "T", payload: { a: 1 }, ...over });
        const cases: { name: string; request: () => Parameters<OutboxWriter["write"]>[0]; pattern: RegExp }[] = [
            { name: "more than 100 actions", request: () => ({ messages: Array.from({ length: 101 }, () => message()) }), pattern: /101 actions; a DynamoDB transaction holds at most 100/ },
            {
                name: "a caller's item over 400 KB",
                request: () => ({ items: [{ Put: { TableName: table, Item: { PK: { S: "X" }, SK: { S: "Y" }, big: { S: "x".repeat(400 * 1024) } } } }], messages: [message()] }),
                pattern: /items\[0\] is 409\d{3} bytes; DynamoDB items hold at most 409600/,
            },
            {
                name: "a transaction over 4 MB",
                request: () => ({
                    items: Array.from({ length: 14 }, (_, i) => ({ Put: { TableName: table, Item: { PK: { S: `X${i}` }, SK: { S: "Y" }, big: { S: "x".repeat(300 * 1024) } } } })),
                    messages: [message()],
                }),
                pattern: /add up to \d+ bytes; a DynamoDB transaction holds at most 4194304/,
            },
            { name: "an SNS message over 256 KB", request: () => ({ messages: [message({ payload: "x".repeat(256 * 1024) })] }), pattern: /as an SNS message \(body \+ attributes\); SNS accepts at most 262144/ },
            { name: "an empty partition", request: () => ({ messages: [message({ partition: "" })] }), pattern: /messages\[0\]\.partition is ""; it must be a non-empty string/ },
            { name: "an empty type", request: () => ({ messages: [message({ type: "" })] }), pattern: /messages\[0\]\.type is ""/ },
            { name: "a payload with a cycle", request: () => { const a: Record<string, unknown> = {}; a.self = a; return { messages: [message({ payload: a })] }; }, pattern: /messages\[0\]\.payload is not JSON-serializable \(.*circular.*\)/is },
            { name: "a BigInt payload", request: () => ({ messages: [message({ payload: { n: 1n } })] }), pattern: /payload is not JSON-serializable .*BigInt/ },
            { name: "an undefined payload", request: () => ({ messages: [message({ payload: undefined })] }), pattern: /payload is undefined, which JSON cannot represent/ },
            { name: "an invalid expiresAt", request: () => ({ messages: [message({ expiresAt: new Date("nope") })] }), pattern: /expiresAt is Date\(Invalid Date\); it must be a valid Date/ },
            { name: "an expiresAt that is not a Date", request: () => ({ messages: [message({ expiresAt: 12345 as unknown as Date })] }), pattern: /expiresAt is 12345; it must be a valid Date/ },
            { name: "an id with a space", request: () => ({ messages: [message({ id: "a b" })] }), pattern: /messages\[0\]\.id is "a b"; an id is 1-128 printable ASCII/ },
            { name: "too many headers", request: () => ({ messages: [message({ headers: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`h${i}`, "v"])) })] }), pattern: /headers has 9 entries; at most 8 fit/ },
            { name: "a reserved header", request: () => ({ messages: [message({ headers: { "x-bridge.ordering-key": "k" } })] }), pattern: /headers name "x-bridge.ordering-key" is reserved/ },
            { name: "a header value that is not a string", request: () => ({ messages: [message({ headers: { n: 1 as unknown as string } })] }), pattern: /headers\["n"\] is 1; header values must be strings/ },
            { name: "an empty orderingKey", request: () => ({ messages: [message({ orderingKey: "" })] }), pattern: /orderingKey is ""; it must be a non-empty string/ },
            { name: "two messages with one id in one partition", request: () => ({ messages: [message({ id: "same" }), message({ id: "same" })] }), pattern: /messages share id "same" in partition "P"/ },
            { name: "nothing at all", request: () => ({ messages: [] }), pattern: /nothing to write/ },
        ];
        for (const c of cases) {
            it(`rejects ${c.name}`, async function () {
                await rejects(writer.write(c.request()), "INVALID_PAYLOAD", c.pattern);
                assert.equal((await scanAll(client, table)).length, 0);
            });
        }

        it("rejects a FIFO group id that SNS would refuse when fifo is on", async function () {
            const fifoWriter = new OutboxWriter({ client, tableName: table, fifo: true });
            await rejects(fifoWriter.write({ messages: [message({ partition: "ORDER 1" })] }), "INVALID_PAYLOAD", /partition "ORDER 1" is the SNS FIFO MessageGroupId/);
            assert.equal((await scanAll(client, table)).length, 0);
        });

        it("rejects a keyed message's limit breach before allocating any seq", async function () {
            await rejects(writer.write({ messages: [message({ orderingKey: "k" }), message({ payload: "x".repeat(300 * 1024) })] }), "INVALID_PAYLOAD", /messages\[1\]/);
            assert.equal((await scanAll(client, table)).length, 0, "no FENCE row either");
        });
    });

    it("rejects bad options with INVALID_CONFIG", function () {
        assert.throws(() => new OutboxWriter({ client, tableName: "" }), /tableName must be the outbox table's name, got ""/);
        assert.throws(() => new OutboxWriter({ client: {} as DynamoDBClient, tableName: "t" }), /client must be a DynamoDBClient/);
    });

    it("measures the write units per message (ReturnConsumedCapacity INDEXES)", async function () {
        const keyless = await writer.write({ messages: [{ partition: "W", type: "T", payload: { a: 1 } }], returnConsumedCapacity: "INDEXES" });
        const withExpiry = await writer.write({ messages: [{ partition: "W", type: "T", payload: { a: 1 }, expiresAt: new Date(T0 + 1000) }], returnConsumedCapacity: "INDEXES" });
        const keyed = await writer.write({ messages: [{ partition: "W", type: "T", payload: { a: 1 }, orderingKey: "k" }], returnConsumedCapacity: "INDEXES" });
        const total = (r: { consumedCapacity: { CapacityUnits?: number }[] }) => r.consumedCapacity.reduce((s, c) => s + (c.CapacityUnits ?? 0), 0);
        const gsi = (r: { consumedCapacity: { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> }[] }, name: string) =>
            r.consumedCapacity.reduce((s, c) => s + (c.GlobalSecondaryIndexes?.[name]?.CapacityUnits ?? 0), 0);
        // Transactional writes cost double: table 2 + RecordIDIndex 2 + ClaimIndex 2 (+ ExpiryIndex 2 with an expiry).
        assert.equal(total(keyless), 6);
        assert.equal(gsi(keyless, CLAIM_INDEX.indexName), 2);
        assert.equal(gsi(keyless, RECORD_ID_INDEX.indexName), 2);
        assert.equal(gsi(keyless, EXPIRY_INDEX.indexName), 0);
        assert.equal(total(withExpiry), 8);
        assert.equal(gsi(withExpiry, EXPIRY_INDEX.indexName), 2);
        // Keyed: the same transaction plus one non-transactional UpdateItem on the FENCE row (in no index).
        assert.equal(total(keyed), 7);
        assert.equal(keyed.consumedCapacity.length, 2);
        assert.equal(keyed.consumedCapacity[0]!.CapacityUnits, 1, "the FENCE allocation is one plain write");
        // Not asserted: multi-message transactions. DynamoDB Local reports one record's worth for a transaction of
        // several (10 puts report 6), while AWS bills each item; per message the figures above hold.
    });
});
