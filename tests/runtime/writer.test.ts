/**
 * OutboxWriter on DynamoDB Local: the record layout, atomicity with the caller's items, every limit (rejected
 * with nothing written), cancellation mapping, idempotency tokens, and the write units per message.
 * Not proven here: publishing (publisher tests) and GSI lag (DynamoDB Local's GSIs are synchronous).
 */
import assert from "node:assert/strict";
import { GetItemCommand, ScanCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxWriter, type OutboxMessage } from "../../runtime/writer";
import { isOutboxError } from "../../runtime/errors";
import { unsendableCharacter } from "../../runtime/message";
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
            { name: "a BigInt payload, naming its path", request: () => ({ messages: [message({ payload: { n: 1n } })] }), pattern: /messages\[0\]\.payload\.n is a BigInt \(1n\), which JSON cannot hold; convert it to a string/ },
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
            // What SQS (the DLQ) and SNS can never carry: refused up front, naming the field, the character and its index.
            { name: "U+FFFF in a payload string", request: () => ({ messages: [message({ payload: { note: "ab\uFFFF" } })] }), pattern: /messages\[0\]\.payload \(message id "[^"]+"\) would not reach consumers intact: messages\[0\]\.payload\.note holds U\+FFFF at index 2, which SQS \(the DLQ\) and SNS refuse .*remove or replace it/ },
            { name: "U+FFFE in a payload key", request: () => ({ messages: [message({ payload: { ["k\uFFFE"]: 1 } })] }), pattern: /messages\[0\]\.payload key "k\\ufffe" holds U\+FFFE at index 1/ },
            {
                name: "U+FFFF that only the written JSON text shows (a toJSON that answers differently the second time)",
                request: () => {
                    let calls = 0;
                    return { messages: [message({ payload: { toJSON: () => (calls++ === 0 ? "ok" : "\uFFFF") } })] };
                },
                pattern: /messages\[0\]\.payload's JSON text holds U\+FFFF at index 1/,
            },
            { name: "a lone surrogate in the type", request: () => ({ messages: [message({ type: "Order\uD800" })] }), pattern: /messages\[0\]\.type holds U\+D800 at index 5, which SQS \(the DLQ\) and SNS refuse .*\(message id "[^"]+"\)/ },
            { name: "NUL in the type", request: () => ({ messages: [message({ type: "T\u0000" })] }), pattern: /messages\[0\]\.type holds U\+0000 at index 1/ },
            { name: "U+FFFF in the partition", request: () => ({ messages: [message({ partition: "P\uFFFF" })] }), pattern: /messages\[0\]\.partition holds U\+FFFF at index 1/ },
            { name: "a control character in the orderingKey", request: () => ({ messages: [message({ orderingKey: "k\u0001" })] }), pattern: /messages\[0\]\.orderingKey holds U\+0001 at index 1/ },
            { name: "NUL in a header value", request: () => ({ messages: [message({ headers: { tenant: "ac\u0000me" } })] }), pattern: /messages\[0\]\.headers\["tenant"\] holds U\+0000 at index 2/ },
            { name: "a lone surrogate in a header value", request: () => ({ messages: [message({ headers: { tenant: "\uDC00" } })] }), pattern: /messages\[0\]\.headers\["tenant"\] holds U\+DC00 at index 0/ },
            { name: "an empty header value", request: () => ({ messages: [message({ headers: { tenant: "" } })] }), pattern: /messages\[0\]\.headers\["tenant"\] is ""; SNS refuses an empty String attribute value/ },
            // What JSON or a JavaScript object would change or drop silently.
            { name: "Map headers", request: () => ({ messages: [message({ headers: new Map([["tenant", "acme"]]) as unknown as Record<string, string> })] }), pattern: /messages\[0\]\.headers is a Map; its entries would be dropped; pass a plain object/ },
            { name: "a class instance as headers", request: () => ({ messages: [message({ headers: new (class Headers { tenant = "acme"; })() as unknown as Record<string, string> })] }), pattern: /messages\[0\]\.headers is a Headers, not a plain object/ },
            { name: "a __proto__ header", request: () => ({ messages: [message({ headers: JSON.parse('{"__proto__":"acme"}') as Record<string, string> })] }), pattern: /messages\[0\]\.headers name "__proto__" is not allowed/ },
            { name: "NaN deep in the third message's payload", request: () => ({ messages: [message(), message(), message({ payload: { items: [{ at: Number.NaN }] } })] }), pattern: /messages\[2\]\.payload\.items\[0\]\.at is NaN, which JSON writes as null/ },
            { name: "Infinity in a payload", request: () => ({ messages: [message({ payload: { total: Number.POSITIVE_INFINITY } })] }), pattern: /messages\[0\]\.payload\.total is Infinity, which JSON writes as null/ },
            { name: "a Map in a payload", request: () => ({ messages: [message({ payload: { byId: new Map([[1, "a"]]) } })] }), pattern: /messages\[0\]\.payload\.byId is a Map, which JSON writes as \{\}.*Object\.fromEntries/ },
            { name: "a Set in a payload", request: () => ({ messages: [message({ payload: { tags: new Set(["a"]) } })] }), pattern: /messages\[0\]\.payload\.tags is a Set, which JSON writes as \{\}/ },
            { name: "a function in a payload", request: () => ({ messages: [message({ payload: { total: 1, calc: () => 1 } })] }), pattern: /messages\[0\]\.payload\.calc is a function, which JSON drops/ },
            { name: "undefined in a payload array", request: () => ({ messages: [message({ payload: { list: [1, undefined] } })] }), pattern: /messages\[0\]\.payload\.list\[1\] is undefined, which JSON .* writes as null in an array/ },
            // eslint-disable-next-line no-sparse-arrays
            { name: "a hole in a payload array", request: () => ({ messages: [message({ payload: [1, , 3] })] }), pattern: /messages\[0\]\.payload\[1\] is a hole in a sparse array, which JSON writes as null/ },
            { name: "an Invalid Date in a payload", request: () => ({ messages: [message({ payload: { at: new Date("nope") } })] }), pattern: /messages\[0\]\.payload\.at is an Invalid Date, which JSON writes as null/ },
            // eslint-disable-next-line no-sparse-arrays
            { name: "a sparse messages array", request: () => ({ messages: [message(), , message()] as OutboxMessage[] }), pattern: /write: messages\[1\] is a hole in a sparse array/ },
        ];
        for (const c of cases) {
            it(`rejects ${c.name}`, async function () {
                await rejects(writer.write(c.request()), "INVALID_PAYLOAD", c.pattern);
                assert.equal((await scanAll(client, table)).length, 0);
            });
        }

        it("names the bad character and its position in the error's context", async function () {
            const err = await writer.write({ messages: [message(), message({ id: "m-1", headers: { tenant: "a\uFFFFb" } })] }).then(() => undefined, (e: unknown) => e);
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.deepEqual(
                { messageId: err.context.messageId, messageIndex: err.context.messageIndex, character: err.context.character, position: err.context.position },
                { messageId: "m-1", messageIndex: 1, character: "U+FFFF", position: 1 },
            );
            assert.equal((await scanAll(client, table)).length, 0);
        });

        it("checks every case before any I/O: a recording client sees zero calls, even with a keyed message to allocate for", async function () {
            const calls: string[] = [];
            const recording = {
                send: async (command: { constructor: { name: string } }) => {
                    calls.push(command.constructor.name);
                    return { Attributes: { [ATTR.seqCounter]: { N: "1" } } };
                },
            } as unknown as DynamoDBClient;
            const offline = new OutboxWriter({ client: recording, tableName: table, clock: fixedClock() });
            const keyed = message({ partition: "FENCE-ME", orderingKey: "k" });
            for (const c of cases) {
                const request = c.request();
                const messages = request.messages.length > 0 && request.messages.length < 100 ? [keyed].concat(request.messages) : request.messages;
                await assert.rejects(offline.write({ ...request, messages }), (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD"), c.name);
                assert.deepEqual(calls, [], `${c.name}: no call may precede validation`);
            }
            await offline.write({ messages: [keyed] });
            assert.deepEqual(calls, ["UpdateItemCommand", "TransactWriteItemsCommand"], "the control: a valid keyed write does reach the client");
        });

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

    it("accepts the valid edges and round-trips them: U+FFFD, an astral emoji, escaped controls, a Date; a key whose value is undefined is left out", async function () {
        const payload = { text: "\uFFFD😀", escaped: "\u0001\uD800", at: new Date(T0), optional: undefined, top: "\u{10FFFD}" };
        const { messageIds } = await writer.write({ messages: [{ partition: "P😀", type: "Order😀", orderingKey: "k\uFFFD", payload, headers: { tenant: "😀\uFFFD\t" } }] });
        const got = await client.send(new GetItemCommand({ TableName: table, Key: recordKey("P😀", messageIds[0]!, "sns"), ConsistentRead: true }));
        assert.ok(got.Item);
        const record = unmarshalRecord(got.Item);
        assert.deepEqual(JSON.parse(record.envelope.payload), { text: "\uFFFD😀", escaped: "\u0001\uD800", at: new Date(T0).toISOString(), top: "\u{10FFFD}" });
        assert.equal("optional" in (JSON.parse(record.envelope.payload) as object), false, "{ optional: undefined } is accepted and the key is left out, as JSON does");
        assert.equal(record.envelope.subject, "Order😀");
        assert.equal(record.orderingKey, "k\uFFFD");
        assert.equal(record.envelope.headers.tenant, "😀\uFFFD\t");
    });

    it("leaves only a FENCE row, reaped by its ttl (>= 30 days), when the transaction fails on the caller's own condition after the seq allocation", async function () {
        await rejects(
            writer.write({
                items: [{ ConditionCheck: { TableName: table, Key: { PK: { S: "ORDER#9" }, SK: { S: "MISSING" } }, ConditionExpression: "attribute_exists(PK)" } }],
                messages: [{ partition: "ORDER#9", type: "T", payload: 1, orderingKey: "k" }],
            }),
            "CONDITION_FAILED",
            /items\[0\]/,
        );
        const items = await scanAll(client, table);
        assert.deepEqual(items.map((i) => i[ATTR.sk]?.S), [fenceKey("ORDER#9")[ATTR.sk]!.S], "no record, only the partition's FENCE row");
        assert.ok(Number(items[0]![ATTR.ttl]?.N) >= Math.floor(T0 / 1000) + 30 * 24 * 3600, "DynamoDB TTL reaps it after at least 30 days");
    });

    it("draws the SQS/SNS character line exactly at the edges of the allowed ranges", function () {
        const allowed = ["\t", "\n", "\r", " ", "\uD7FF", "\uE000", "\uFFFD", "\u{10000}", "\u{10FFFF}", "😀"];
        const refused = ["\u0000", "\u0008", "\u000B", "\u000C", "\u001F", "\uD800", "\uDBFF", "\uDC00", "\uDFFF", "\uFFFE", "\uFFFF"];
        assert.deepEqual(allowed.filter((c) => unsendableCharacter(`a${c}`) !== undefined), []);
        assert.deepEqual(
            refused.map((c) => unsendableCharacter(`a${c}`)),
            refused.map((c) => ({ codePoint: `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`, index: 1 })),
        );
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
