/**
 * OutboxWriter on DynamoDB Local: the record layout, atomicity with the caller's items, every limit (rejected
 * with nothing written), cancellation mapping, idempotency tokens, and the write units per message.
 * Not proven here: publishing (publisher tests) and GSI lag (DynamoDB Local's GSIs are synchronous).
 */
import assert from "node:assert/strict";
import {
    DeleteItemCommand,
    GetItemCommand,
    PutItemCommand,
    QueryCommand,
    ScanCommand,
    TransactWriteItemsCommand,
    type AttributeValue,
    type DynamoDBClient,
    type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { unsendableCharacter } from "../../../runtime/record/message";
import { unmarshalRecord } from "../../../runtime/record/codec";
import { recordKey } from "../../../runtime/record/codec";
import { fenceKey } from "../../../runtime/record/fence";
import { idGuardKey } from "../../../runtime/record/id-guard";
import { itemSize, MAX_TRANSACTION_BYTES } from "../../../runtime/record/item-size";
import { transactionActionSize } from "../../../runtime/record/transact-items";
import { FakeDynamoDb } from "../../support/store/fake-client";
import { ATTR, CLAIM_INDEX, EXPIRY_INDEX, RECORD_ID_INDEX } from "../../../runtime/schema";
import { dynamoClient } from "../../support/dynamodb";
import { createOutboxTable, sparseIndexCounts } from "../../support/runtime/table";

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

const message = (over: Partial<OutboxMessage> = {}): OutboxMessage => ({
    partition: "P",
    type: "T",
    payload: { a: 1 },
    ...over,
});

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
    let client: DynamoDBClient;
    let table: string;
    let writer: OutboxWriter;

    beforeEach(async function () {
        client = await dynamoClient();
        table = await createOutboxTable(client);
        writer = new OutboxWriter({
            client,
            tableName: table,
            clock: fixedClock(),
            address: "arn:aws:sns:us-east-1:000000000000:t",
        });
    });

    it("commits the business item and the outbox record together, in the store's layout", async function () {
        const result = await writer.write({
            items: [
                { Put: { TableName: table, Item: { PK: { S: "ORDER#1001" }, SK: { S: "META" }, total: { N: "42" } } } },
            ],
            messages: [
                {
                    partition: "ORDER#1001",
                    type: "OrderCreated",
                    payload: { orderId: 1001, note: "<&>" },
                    headers: { tenant: "acme" },
                    expiresAt: new Date(T0 + 60_000),
                },
            ],
        });
        assert.equal(result.messageIds.length, 1);
        const id = result.messageIds[0]!;
        assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
        const items = await scanAll(client, table);
        assert.equal(items.length, 2, "business item + record, and no FENCE row for a keyless message");
        const got = await client.send(
            new GetItemCommand({ TableName: table, Key: recordKey("ORDER#1001", id, "sns"), ConsistentRead: true }),
        );
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
        assert.equal(
            got.Item[ATTR.claimSort]?.S,
            `${String(T0).padStart(19, "0")}#${(BigInt(T0) * 1_000_000n).toString().padStart(20, "0")}`,
        );
        assert.equal(got.Item[ATTR.orderingKey], undefined);
    });

    it("round-trips ids and partitions containing # and %", async function () {
        const { messageIds } = await writer.write({
            messages: [{ id: "a#b%23c%", partition: "TENANT#x%y#1", type: "T", payload: 1 }],
        });
        assert.deepEqual(messageIds, ["a#b%23c%"]);
        const all = await scanAll(client, table);
        assert.deepEqual(
            all.map((i) => i[ATTR.pk]?.S).sort(),
            ["OUTBOX_ID#a#b%23c%", "TENANT#x%y#1"],
            "the record and its id guard, whose key holds the id raw",
        );
        const items = all.filter((i) => i[ATTR.sk]!.S!.startsWith("OUTBOX#"));
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
        const fence = await client.send(
            new GetItemCommand({ TableName: table, Key: fenceKey("P"), ConsistentRead: true }),
        );
        assert.equal(fence.Item?.[ATTR.seqCounter]?.N, "3");
        assert.ok(Number(fence.Item?.[ATTR.ttl]?.N) >= Math.floor(T0 / 1000) + 30 * 24 * 3600);
        const records = (await scanAll(client, table))
            .filter((i) => i[ATTR.sk]!.S!.startsWith("OUTBOX#"))
            .map((i) => unmarshalRecord(i));
        const keyed = records.filter((r) => r.orderingKey === "k").sort((a, b) => Number(a.seq - b.seq));
        assert.deepEqual(
            keyed.map((r) => JSON.parse(r.envelope.payload)),
            [1, 3, 4],
        );
        assert.deepEqual(
            keyed.map((r) => r.seq),
            [1n, 2n, 3n],
        );
        assert.equal(keyed[0]!.envelope.headers["x-bridge.ordering-key"], "k", "the key is in the envelope header too");
    });

    it("writes nothing when a caller's item condition fails, and names that item", async function () {
        await rejects(
            writer.write({
                items: [
                    { Put: { TableName: table, Item: { PK: { S: "ORDER#1" }, SK: { S: "A" } } } },
                    {
                        ConditionCheck: {
                            TableName: table,
                            Key: { PK: { S: "ORDER#1" }, SK: { S: "MISSING" } },
                            ConditionExpression: "attribute_exists(PK)",
                        },
                    },
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
            .then(
                () => undefined,
                (e: unknown) => e,
            );
        assert.ok(isOutboxError(err, "DUPLICATE_RECORD"), String(err));
        assert.match(err.message, /messages\[1\] \(id "dup-1", partition "P"\): a record with this id already exists/);
        assert.equal(err.context.messageId, "dup-1");
        assert.equal(err.context.failedAction, 2);
        assert.equal(err.context.idGuard, undefined, "the record's own failure names it, not its id guard's");
        assert.doesNotMatch(err.message, /already taken/, "a repeat in the same partition is not a reuse");
        assert.equal((await scanAll(client, table)).length, 2, "only the first write's record and its id guard");
    });

    it("makes committing the same prepared write twice with a ClientRequestToken a no-op", async function () {
        const prepared = await writer.prepare({
            clientRequestToken: "token-1",
            messages: [
                { partition: "P", type: "T", payload: 1 },
                { partition: "P", type: "T", payload: 2, orderingKey: "k" },
            ],
        });
        const first = await writer.commit(prepared);
        const retry = await writer.commit(prepared);
        assert.deepEqual(retry.messageIds, first.messageIds);
        assert.equal((await scanAll(client, table)).length, 3, "two records and one FENCE row, once");
    });

    it("rejects a ClientRequestToken reused for a different request, naming the cause", async function () {
        await writer.write({ clientRequestToken: "token-2", messages: [{ partition: "P", type: "T", payload: 1 }] });
        await rejects(
            writer.write({ clientRequestToken: "token-2", messages: [{ partition: "P", type: "T", payload: 2 }] }),
            "INVALID_PAYLOAD",
            /clientRequestToken was already used for a different request/,
        );
        assert.equal((await scanAll(client, table)).length, 1);
    });

    describe("limits: rejected before sending, nothing written", function () {
        const cases: { name: string; request: () => Parameters<OutboxWriter["write"]>[0]; pattern: RegExp }[] = [
            {
                name: "more than 100 actions",
                request: () => ({ messages: Array.from({ length: 101 }, () => message()) }),
                pattern: /101 actions; a DynamoDB transaction holds at most 100/,
            },
            {
                name: "a caller's item over 400 KB",
                request: () => ({
                    items: [
                        {
                            Put: {
                                TableName: table,
                                Item: { PK: { S: "X" }, SK: { S: "Y" }, big: { S: "x".repeat(400 * 1024) } },
                            },
                        },
                    ],
                    messages: [message()],
                }),
                pattern: /items\[0\] is 409\d{3} bytes; DynamoDB items hold at most 409600/,
            },
            {
                name: "a transaction over 4 MB",
                request: () => ({
                    items: Array.from({ length: 14 }, (_, i) => ({
                        Put: {
                            TableName: table,
                            Item: { PK: { S: `X${i}` }, SK: { S: "Y" }, big: { S: "x".repeat(300 * 1024) } },
                        },
                    })),
                    messages: [message()],
                }),
                pattern:
                    /the transaction adds up to \d+ bytes as DynamoDB counts it .*; a DynamoDB transaction holds at most 4194304/,
            },
            {
                name: "an SNS message over 256 KB, blamed on the payload",
                request: () => ({ messages: [message({ payload: "x".repeat(256 * 1024) })] }),
                pattern:
                    /^messages\[0\] \(id "[^"]+"\) is \d+ bytes as an SNS message \(body \+ attributes\): payload 262146 bytes, headers 0 bytes, the outbox's attributes \(id, type, trace context\) \d+ bytes; SNS accepts at most 262144; shrink the payload, or give the writer largePayloads to store payloads this large in S3 \(a claim check\), or store it elsewhere and send a reference$/,
            },
            // Issue 38: a message too large because of its headers was told to shrink its payload.
            {
                name: "an SNS message over 256 KB because of its headers, blamed on the headers",
                request: () => ({
                    messages: [
                        message({
                            headers: Object.fromEntries(
                                Array.from({ length: 7 }, (_, i) => [`h${i}`, "x".repeat(38_000)]),
                            ),
                        }),
                    ],
                }),
                pattern:
                    /is \d+ bytes as an SNS message \(body \+ attributes\): payload 7 bytes, headers 266056 bytes, .*; SNS accepts at most 262144; shrink the headers: they travel as message attributes, which largePayloads does not offload; move large values into the payload$/,
            },
            {
                name: "a DLQ message over 256 KB because its headers' quotes are escaped in its JSON, blamed on the headers",
                request: () => ({ messages: [message({ headers: { quotes: '"'.repeat(140_000) } })] }),
                pattern:
                    /would be \d+ bytes as a DLQ message \(the record, its reason and a 1 KB error\): payload \d+ bytes, headers 28\d{4} bytes, the rest .*; the DLQ accepts at most 262144, \d+ bytes less; shrink the headers/,
            },
            {
                name: "an empty partition",
                request: () => ({ messages: [message({ partition: "" })] }),
                pattern: /messages\[0\]\.partition is ""; it must be a non-empty string/,
            },
            {
                name: "an empty type",
                request: () => ({ messages: [message({ type: "" })] }),
                pattern: /messages\[0\]\.type is ""/,
            },
            {
                name: "a payload with a cycle",
                request: () => {
                    const a: Record<string, unknown> = {};
                    a.self = a;
                    return { messages: [message({ payload: a })] };
                },
                pattern: /messages\[0\]\.payload is not JSON-serializable \(.*circular.*\)/is,
            },
            {
                name: "a BigInt payload, naming its path",
                request: () => ({ messages: [message({ payload: { n: 1n } })] }),
                pattern: /messages\[0\]\.payload\.n is a BigInt \(1n\), which JSON cannot hold; convert it to a string/,
            },
            {
                name: "an undefined payload",
                request: () => ({ messages: [message({ payload: undefined })] }),
                pattern: /payload is undefined, which JSON cannot represent/,
            },
            {
                name: "an invalid expiresAt",
                request: () => ({ messages: [message({ expiresAt: new Date("nope") })] }),
                pattern: /expiresAt is Date\(Invalid Date\); it must be a valid Date/,
            },
            {
                name: "an expiresAt that is not a Date",
                request: () => ({ messages: [message({ expiresAt: 12345 as unknown as Date })] }),
                pattern: /expiresAt is 12345; it must be a valid Date/,
            },
            {
                name: "an id with a space",
                request: () => ({ messages: [message({ id: "a b" })] }),
                pattern: /messages\[0\]\.id is "a b"; an id is 1-128 printable ASCII/,
            },
            {
                name: "too many headers",
                request: () => ({
                    messages: [
                        message({ headers: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`h${i}`, "v"])) }),
                    ],
                }),
                // outbox.source took one of SNS's 10 attributes (issue 33): 7 headers fit, 8 did before.
                pattern: /headers has 8 entries; at most 7 fit/,
            },
            {
                name: "a reserved header",
                request: () => ({ messages: [message({ headers: { "x-bridge.ordering-key": "k" } })] }),
                pattern: /headers name "x-bridge.ordering-key" is reserved/,
            },
            {
                name: "a header value that is not a string",
                request: () => ({ messages: [message({ headers: { n: 1 as unknown as string } })] }),
                pattern: /headers\["n"\] is 1; header values must be strings/,
            },
            {
                name: "an empty orderingKey",
                request: () => ({ messages: [message({ orderingKey: "" })] }),
                pattern: /orderingKey is ""; it must be a non-empty string/,
            },
            {
                name: "two messages with one id in one partition",
                request: () => ({ messages: [message({ id: "same" }), message({ id: "same" })] }),
                pattern: /messages share id "same" in partition "P"/,
            },
            {
                name: "two messages with one id in two partitions",
                request: () => ({
                    messages: [
                        message({ id: "same" }),
                        message({ id: "other" }),
                        message({ id: "same", partition: "Q" }),
                    ],
                }),
                pattern:
                    /^write: messages\[0\] and messages\[2\] share id "same", in partitions "P" and "Q"; ids are unique across the table \(one record per id, in one partition\); use a new id, or omit it and the writer generates one$/,
            },
            {
                name: "more than 100 actions once the id guards are counted",
                request: () => ({ messages: Array.from({ length: 51 }, (_, i) => message({ id: `m-${i}` })) }),
                pattern:
                    /^write: 0 items \+ 51 messages \+ 51 id guards = 102 actions; a DynamoDB transaction holds at most 100; each message whose id the writer did not generate \(a caller-supplied id, or one from an injected idGenerator\) adds one id guard Put, which keeps the id unique across the table; split the write, or omit the ids \(the writer's own ULIDs need no guard\)$/,
            },
            { name: "nothing at all", request: () => ({ messages: [] }), pattern: /nothing to write/ },
            // What SQS (the DLQ) and SNS can never carry: refused up front, naming the field, the character and its index.
            {
                name: "U+FFFF in a payload string",
                request: () => ({ messages: [message({ payload: { note: "ab\uFFFF" } })] }),
                pattern:
                    /messages\[0\]\.payload \(message id "[^"]+"\) would not reach consumers intact: messages\[0\]\.payload\.note holds U\+FFFF at index 2, which SQS \(the DLQ\) and SNS refuse .*remove or replace it/,
            },
            {
                name: "U+FFFE in a payload key",
                request: () => ({ messages: [message({ payload: { ["k\uFFFE"]: 1 } })] }),
                pattern: /messages\[0\]\.payload key "k\\ufffe" holds U\+FFFE at index 1/,
            },
            {
                name: "U+FFFF that only the written JSON text shows (a toJSON that answers differently the second time)",
                request: () => {
                    let calls = 0;
                    return { messages: [message({ payload: { toJSON: () => (calls++ === 0 ? "ok" : "\uFFFF") } })] };
                },
                pattern: /messages\[0\]\.payload's JSON text holds U\+FFFF at index 1/,
            },
            {
                name: "a lone surrogate in the type",
                request: () => ({ messages: [message({ type: "Order\uD800" })] }),
                pattern:
                    /messages\[0\]\.type holds U\+D800 at index 5, which SQS \(the DLQ\) and SNS refuse .*\(message id "[^"]+"\)/,
            },
            {
                name: "NUL in the type",
                request: () => ({ messages: [message({ type: "T\u0000" })] }),
                pattern: /messages\[0\]\.type holds U\+0000 at index 1/,
            },
            {
                name: "U+FFFF in the partition",
                request: () => ({ messages: [message({ partition: "P\uFFFF" })] }),
                pattern: /messages\[0\]\.partition holds U\+FFFF at index 1/,
            },
            {
                name: "a control character in the orderingKey",
                request: () => ({ messages: [message({ orderingKey: "k\u0001" })] }),
                pattern: /messages\[0\]\.orderingKey holds U\+0001 at index 1/,
            },
            {
                name: "NUL in a header value",
                request: () => ({ messages: [message({ headers: { tenant: "ac\u0000me" } })] }),
                pattern: /messages\[0\]\.headers\["tenant"\] holds U\+0000 at index 2/,
            },
            {
                name: "a lone surrogate in a header value",
                request: () => ({ messages: [message({ headers: { tenant: "\uDC00" } })] }),
                pattern: /messages\[0\]\.headers\["tenant"\] holds U\+DC00 at index 0/,
            },
            {
                name: "an empty header value",
                request: () => ({ messages: [message({ headers: { tenant: "" } })] }),
                pattern: /messages\[0\]\.headers\["tenant"\] is ""; SNS refuses an empty String attribute value/,
            },
            // What JSON or a JavaScript object would change or drop silently.
            {
                name: "Map headers",
                request: () => ({
                    messages: [
                        message({ headers: new Map([["tenant", "acme"]]) as unknown as Record<string, string> }),
                    ],
                }),
                pattern: /messages\[0\]\.headers is a Map; its entries would be dropped; pass a plain object/,
            },
            {
                name: "a class instance as headers",
                request: () => ({
                    messages: [
                        message({
                            headers: new (class Headers {
                                tenant = "acme";
                            })() as unknown as Record<string, string>,
                        }),
                    ],
                }),
                pattern: /messages\[0\]\.headers is a Headers, not a plain object/,
            },
            {
                name: "a __proto__ header",
                request: () => ({
                    messages: [message({ headers: JSON.parse('{"__proto__":"acme"}') as Record<string, string> })],
                }),
                pattern: /messages\[0\]\.headers name "__proto__" is not allowed/,
            },
            {
                name: "NaN deep in the third message's payload",
                request: () => ({
                    messages: [message(), message(), message({ payload: { items: [{ at: Number.NaN }] } })],
                }),
                pattern: /messages\[2\]\.payload\.items\[0\]\.at is NaN, which JSON writes as null/,
            },
            {
                name: "Infinity in a payload",
                request: () => ({ messages: [message({ payload: { total: Number.POSITIVE_INFINITY } })] }),
                pattern: /messages\[0\]\.payload\.total is Infinity, which JSON writes as null/,
            },
            {
                name: "a Map in a payload",
                request: () => ({ messages: [message({ payload: { byId: new Map([[1, "a"]]) } })] }),
                pattern: /messages\[0\]\.payload\.byId is a Map, which JSON writes as \{\}.*Object\.fromEntries/,
            },
            {
                name: "a Set in a payload",
                request: () => ({ messages: [message({ payload: { tags: new Set(["a"]) } })] }),
                pattern: /messages\[0\]\.payload\.tags is a Set, which JSON writes as \{\}/,
            },
            {
                name: "a function in a payload",
                request: () => ({ messages: [message({ payload: { total: 1, calc: () => 1 } })] }),
                pattern: /messages\[0\]\.payload\.calc is a function, which JSON drops/,
            },
            {
                name: "undefined in a payload array",
                request: () => ({ messages: [message({ payload: { list: [1, undefined] } })] }),
                pattern: /messages\[0\]\.payload\.list\[1\] is undefined, which JSON .* writes as null in an array/,
            },
            {
                name: "a hole in a payload array",
                request: () => ({ messages: [message({ payload: [1, , 3] })] }),
                pattern: /messages\[0\]\.payload\[1\] is a hole in a sparse array, which JSON writes as null/,
            },
            {
                name: "an Invalid Date in a payload",
                request: () => ({ messages: [message({ payload: { at: new Date("nope") } })] }),
                pattern: /messages\[0\]\.payload\.at is an Invalid Date, which JSON writes as null/,
            },
            {
                name: "a header that makes the record too big, blamed on the headers (Go's JSON writes < as six bytes)",
                request: () => ({ messages: [message({ headers: { note: "<".repeat(70_000) } })] }),
                pattern:
                    /^write: messages\[0\] \(id "[^"]+"\) makes an outbox record of \d+ bytes; an outbox record holds at most 409269 bytes \(DynamoDB's 409600 less 331 for what claiming, counting and completing it adds\); of it: payload 12 bytes \(stored base64, 4\/3 its size\), headers 420011 bytes \(as Go's JSON, which writes <, > and & as six bytes each\), type 3 bytes \(as Go's JSON\); shrink the headers \(or move their content into the payload\)$/,
            },
            {
                name: "a payload that makes the record too big, blamed on the payload",
                request: () => ({
                    messages: [message({ payload: "<".repeat(200_000), headers: { note: "<".repeat(30_000) } })],
                }),
                pattern:
                    /makes an outbox record of \d+ bytes; an outbox record holds at most 409269 bytes .*; of it: payload 266672 bytes .*headers 180011 bytes .*; shrink the payload or store it elsewhere/,
            },
            {
                name: "a partition over DynamoDB's 2048 bytes, echoed shortened",
                request: () => ({ messages: [message({ partition: "é".repeat(1025) })] }),
                pattern:
                    /^messages\[0\]\.partition "é{60}…" is 2050 bytes \(UTF-8\); a DynamoDB partition key holds at most 2048; use a shorter key/,
            },
            // What throws while the payload is read: wrapped, naming the path (issue 28 item 8; these were raw errors).
            {
                name: "a payload whose toJSON throws",
                request: () => ({
                    messages: [
                        message({
                            payload: {
                                at: {
                                    toJSON: () => {
                                        throw new Error("boom");
                                    },
                                },
                            },
                        }),
                    ],
                }),
                pattern:
                    /^messages\[0\]\.payload \(message id "[^"]+"\) cannot be read as JSON: messages\[0\]\.payload\.at toJSON\(\) threw \(Error: boom\); pass plain data/,
            },
            {
                name: "a payload with a throwing getter",
                request: () => ({
                    messages: [
                        message({
                            payload: {
                                ok: 1,
                                get secret(): string {
                                    throw new TypeError("no access");
                                },
                            },
                        }),
                    ],
                }),
                pattern:
                    /cannot be read as JSON: messages\[0\]\.payload\.secret \(its getter\) threw \(TypeError: no access\)/,
            },
            {
                name: "a Proxy payload whose ownKeys trap throws",
                request: () => ({
                    messages: [
                        message({
                            payload: {
                                list: [
                                    new Proxy(
                                        {},
                                        {
                                            ownKeys: () => {
                                                throw new Error("trap");
                                            },
                                        },
                                    ),
                                ],
                            },
                        }),
                    ],
                }),
                pattern:
                    /cannot be read as JSON: messages\[0\]\.payload\.list\[0\] \(listing its keys\) threw \(Error: trap\)/,
            },
            {
                name: "a 20,000-deep array, naming the depth with a shortened path",
                request: () => {
                    let deep: unknown = 1;
                    for (let i = 0; i < 20_000; i++) deep = [deep];
                    return { messages: [message({ payload: deep })] };
                },
                pattern:
                    /would not reach consumers intact: messages\[0\]\.payload(\[0\]){20,}…[[\]0]+ is nested 1001 levels deep; a payload nests at most 1000 levels of objects and arrays .*; flatten it$/,
            },
            {
                name: "a sparse messages array",
                request: () => ({ messages: [message(), , message()] as OutboxMessage[] }),
                pattern: /write: messages\[1\] is a hole in a sparse array/,
            },
        ];
        for (const c of cases) {
            it(`rejects ${c.name}`, async function () {
                await rejects(writer.write(c.request()), "INVALID_PAYLOAD", c.pattern);
                await writer
                    .write(c.request())
                    .catch((e: unknown) =>
                        assert.ok(
                            String((e as Error).message).length < 1200,
                            `a short message: ${String((e as Error).message).length} characters`,
                        ),
                    );
                assert.equal((await scanAll(client, table)).length, 0);
            });
        }

        it("names the bad character and its position in the error's context", async function () {
            const err = await writer
                .write({ messages: [message(), message({ id: "m-1", headers: { tenant: "a\uFFFFb" } })] })
                .then(
                    () => undefined,
                    (e: unknown) => e,
                );
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.deepEqual(
                {
                    messageId: err.context.messageId,
                    messageIndex: err.context.messageIndex,
                    character: err.context.character,
                    position: err.context.position,
                },
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
                const messages =
                    request.messages.length > 0 && request.messages.length < 100
                        ? [keyed].concat(request.messages)
                        : request.messages;
                await assert.rejects(
                    offline.write({ ...request, messages }),
                    (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD"),
                    c.name,
                );
                assert.deepEqual(calls, [], `${c.name}: no call may precede validation`);
                assert.throws(
                    () => offline.check({ ...c.request() }),
                    (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD"),
                    `check() refuses ${c.name} too`,
                );
            }
            offline.check({ messages: [keyed] });
            assert.deepEqual(calls, [], "check() does no I/O");
            await offline.write({ messages: [keyed] });
            assert.deepEqual(
                calls,
                ["UpdateItemCommand", "TransactWriteItemsCommand"],
                "the control: a valid keyed write does reach the client",
            );
        });

        it("rejects a FIFO group id that SNS would refuse when fifo is on", async function () {
            const fifoWriter = new OutboxWriter({ client, tableName: table, fifo: true });
            await rejects(
                fifoWriter.write({ messages: [message({ partition: "ORDER 1" })] }),
                "INVALID_PAYLOAD",
                /messages\[0\]\.partition "ORDER 1" is 7 characters and is the FIFO MessageGroupId \(of an SNS FIFO topic or an SQS FIFO queue\)/,
            );
            assert.equal((await scanAll(client, table)).length, 0);
        });

        it("rejects a keyed message's limit breach before allocating any seq", async function () {
            await rejects(
                writer.write({
                    messages: [message({ orderingKey: "k" }), message({ payload: "x".repeat(300 * 1024) })],
                }),
                "INVALID_PAYLOAD",
                /messages\[1\]/,
            );
            assert.equal((await scanAll(client, table)).length, 0, "no FENCE row either");
        });
    });

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
            const err = await writer
                .write({
                    items: [{ Put: { TableName: table, Item: { PK: { S: "ORDER#2" }, SK: { S: "META" } } } }],
                    messages: [
                        { partition: "ORDER#2", type: "OrderCreated", payload: 2 },
                        { id: "evt-1", partition: "ORDER#2", type: "OrderCreated", payload: 3 },
                    ],
                })
                .then(
                    () => undefined,
                    (e: unknown) => e,
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
            const err = await writer
                .write({
                    messages: [
                        { id: "a", partition: "P", type: "T", payload: 1 },
                        { id: "b", partition: "R", type: "T", payload: 1 },
                    ],
                })
                .then(
                    () => undefined,
                    (e: unknown) => e,
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
            await rejects(
                write(),
                "DUPLICATE_RECORD",
                /^write: transaction cancelled, nothing was written: messages\[0\] \(id "evt-2", partition "ORDER#1"\): a record with this id already exists in the partition$/,
            );
            // DynamoDB TTL reaps a completed record after the grace; the guard lives on.
            await client.send(new DeleteItemCommand({ TableName: table, Key: recordKey("ORDER#1", "evt-2", "sns") }));
            await rejects(
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
            await rejects(
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
            await rejects(
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
            await rejects(
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
                const err = await client
                    .send(
                        new TransactWriteItemsCommand({
                            TransactItems: [...filler, { Put: { TableName: table, Item: item } }],
                        }),
                    )
                    .then(
                        () => undefined,
                        (e: unknown) => e,
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
            await rejects(
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
            await rejects(
                offline.prepare({ messages: Array.from({ length: 51 }, (_, i) => message({ id: `m-${i}` })) }),
                "INVALID_PAYLOAD",
                /51 id guards = 102 actions/,
            );
        });
    });

    it("accepts the valid edges and round-trips them: U+FFFD, an astral emoji, escaped controls, a Date; a key whose value is undefined is left out", async function () {
        const payload = {
            text: "\uFFFD😀",
            escaped: "\u0001\uD800",
            at: new Date(T0),
            optional: undefined,
            top: "\u{10FFFD}",
        };
        const { messageIds } = await writer.write({
            messages: [
                {
                    partition: "P😀",
                    type: "Order😀",
                    orderingKey: "k\uFFFD",
                    payload,
                    headers: { tenant: "😀\uFFFD\t" },
                },
            ],
        });
        const got = await client.send(
            new GetItemCommand({
                TableName: table,
                Key: recordKey("P😀", messageIds[0]!, "sns"),
                ConsistentRead: true,
            }),
        );
        assert.ok(got.Item);
        const record = unmarshalRecord(got.Item);
        assert.deepEqual(JSON.parse(record.envelope.payload), {
            text: "\uFFFD😀",
            escaped: "\u0001\uD800",
            at: new Date(T0).toISOString(),
            top: "\u{10FFFD}",
        });
        assert.equal(
            "optional" in (JSON.parse(record.envelope.payload) as object),
            false,
            "{ optional: undefined } is accepted and the key is left out, as JSON does",
        );
        assert.equal(record.envelope.subject, "Order😀");
        assert.equal(record.orderingKey, "k\uFFFD");
        assert.equal(record.envelope.headers.tenant, "😀\uFFFD\t");
    });

    it("leaves only a FENCE row, reaped by its ttl (>= 30 days), when the transaction fails on the caller's own condition after the seq allocation", async function () {
        await rejects(
            writer.write({
                items: [
                    {
                        ConditionCheck: {
                            TableName: table,
                            Key: { PK: { S: "ORDER#9" }, SK: { S: "MISSING" } },
                            ConditionExpression: "attribute_exists(PK)",
                        },
                    },
                ],
                messages: [{ partition: "ORDER#9", type: "T", payload: 1, orderingKey: "k" }],
            }),
            "CONDITION_FAILED",
            /items\[0\]/,
        );
        const items = await scanAll(client, table);
        assert.deepEqual(
            items.map((i) => i[ATTR.sk]?.S),
            [fenceKey("ORDER#9")[ATTR.sk]!.S],
            "no record, only the partition's FENCE row",
        );
        assert.ok(
            Number(items[0]![ATTR.ttl]?.N) >= Math.floor(T0 / 1000) + 30 * 24 * 3600,
            "DynamoDB TTL reaps it after at least 30 days",
        );
    });

    it("draws the SQS/SNS character line exactly at the edges of the allowed ranges", function () {
        const allowed = ["\t", "\n", "\r", " ", "\uD7FF", "\uE000", "\uFFFD", "\u{10000}", "\u{10FFFF}", "😀"];
        const refused = [
            "\u0000",
            "\u0008",
            "\u000B",
            "\u000C",
            "\u001F",
            "\uD800",
            "\uDBFF",
            "\uDC00",
            "\uDFFF",
            "\uFFFE",
            "\uFFFF",
        ];
        assert.deepEqual(
            allowed.filter((c) => unsendableCharacter(`a${c}`) !== undefined),
            [],
        );
        assert.deepEqual(
            refused.map((c) => unsendableCharacter(`a${c}`)),
            refused.map((c) => ({
                codePoint: `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`,
                index: 1,
            })),
        );
    });

    it("rejects bad options with INVALID_CONFIG", function () {
        assert.throws(
            () => new OutboxWriter({ client, tableName: "" }),
            /tableName must be the outbox table's name, got ""/,
        );
        assert.throws(
            () => new OutboxWriter({ client: {} as DynamoDBClient, tableName: "t" }),
            /client must be a DynamoDBClient/,
        );
    });

    it("refuses a compactionGraceSeconds that is not whole seconds from 0 to a year (NaN and 1e300 used to fail at the first keyed write), and a bindingId too long for a sort key", function () {
        for (const bad of [Number.NaN, 1e300, Number.POSITIVE_INFINITY, -1, 1.5, 365 * 24 * 3600 + 1]) {
            assert.throws(
                () => new OutboxWriter({ client, tableName: "t", compactionGraceSeconds: bad }),
                (e: unknown) =>
                    isOutboxError(e, "INVALID_CONFIG") &&
                    new RegExp(
                        `^OutboxWriter: compactionGraceSeconds is ${String(bad).replace("+", "\\+")}; expected an integer from 0 to 31536000; omit it for the default 3600$`,
                    ).test((e as Error).message),
                String(bad),
            );
        }
        for (const ok of [0, 365 * 24 * 3600]) new OutboxWriter({ client, tableName: "t", compactionGraceSeconds: ok });
        new OutboxWriter({ client, tableName: "t", bindingId: "b".repeat(632) });
        assert.throws(
            () => new OutboxWriter({ client, tableName: "t", bindingId: "b".repeat(633) }),
            /OutboxWriter: bindingId "b{60}…" is too long: with a 128-character id it makes a sort key of 1025 bytes, and a DynamoDB sort key holds at most 1024; use a short name/,
        );
        assert.throws(
            () => new OutboxWriter({ client, tableName: "t", bindingId: 7 as unknown as string }),
            /bindingId must be a string \(the destination's name\), got 7/,
        );
    });

    it("echoes a long partition shortened (60 characters and …), never whole, in the errors that name it", async function () {
        const partition = "r".repeat(2000);
        await writer.write({ messages: [message({ id: "dup-1", partition })] });
        for (const request of [
            { messages: [message({ id: "dup-1", partition })] },
            { messages: [message({ id: "x", partition }), message({ id: "x", partition })] },
        ]) {
            const err = await writer.write(request).then(
                () => undefined,
                (e: unknown) => e as Error,
            );
            assert.ok(err instanceof Error);
            assert.ok(err.message.includes(`partition "${"r".repeat(60)}…"`), err.message.slice(0, 300));
            assert.ok(err.message.length < 400, `${err.message.length} characters`);
        }
    });

    it("measures the write units per message (ReturnConsumedCapacity INDEXES)", async function () {
        const keyless = await writer.write({
            messages: [{ partition: "W", type: "T", payload: { a: 1 } }],
            returnConsumedCapacity: "INDEXES",
        });
        const withExpiry = await writer.write({
            messages: [{ partition: "W", type: "T", payload: { a: 1 }, expiresAt: new Date(T0 + 1000) }],
            returnConsumedCapacity: "INDEXES",
        });
        const keyed = await writer.write({
            messages: [{ partition: "W", type: "T", payload: { a: 1 }, orderingKey: "k" }],
            returnConsumedCapacity: "INDEXES",
        });
        const total = (r: { consumedCapacity: { CapacityUnits?: number }[] }) =>
            r.consumedCapacity.reduce((s, c) => s + (c.CapacityUnits ?? 0), 0);
        const gsi = (
            r: { consumedCapacity: { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> }[] },
            name: string,
        ) => r.consumedCapacity.reduce((s, c) => s + (c.GlobalSecondaryIndexes?.[name]?.CapacityUnits ?? 0), 0);
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
