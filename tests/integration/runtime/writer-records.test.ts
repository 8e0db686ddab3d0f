/**
 * OutboxWriter on DynamoDB Local: the record layout, atomicity with the caller's items, the keyed seqs from the
 * FENCE row, duplicates, idempotency tokens, the valid edges, the refused options and the write units per message.
 * Not proven here: publishing (publisher tests) and GSI lag (DynamoDB Local's GSIs are synchronous). The limits
 * are in writer-limits.test.ts, the table-wide id rule in writer-id-guard.test.ts.
 */
import assert from "node:assert/strict";
import { GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { isOutboxError } from "../../../runtime/errors";
import { unsendableCharacter } from "../../../runtime/record/message";
import { recordKey, unmarshalRecord } from "../../../runtime/record/codec";
import { fenceKey } from "../../../runtime/record/fence";
import { ATTR, CLAIM_INDEX, EXPIRY_INDEX, RECORD_ID_INDEX } from "../../../runtime/schema";
import { rejectsWith } from "../../support/store/helpers";
import { message, rejection, scanAll, T0, writerOnFreshTable } from "../../support/writer/world";

describe("OutboxWriter (DynamoDB Local)", function () {
    let client: DynamoDBClient, table: string, writer: OutboxWriter;
    beforeEach(async () => ({ client, table, writer } = await writerOnFreshTable()));

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
        await rejectsWith(
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
        const err = await rejection(
            writer.write({
                items: [{ Put: { TableName: table, Item: { PK: { S: "P" }, SK: { S: "BIZ" } } } }],
                messages: [
                    { id: "fresh", partition: "P", type: "T", payload: 2 },
                    { id: "dup-1", partition: "P", type: "T", payload: 3 },
                ],
            }),
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
        await rejectsWith(
            writer.write({ clientRequestToken: "token-2", messages: [{ partition: "P", type: "T", payload: 2 }] }),
            "INVALID_PAYLOAD",
            /clientRequestToken was already used for a different request/,
        );
        assert.equal((await scanAll(client, table)).length, 1);
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
        await rejectsWith(
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
            const err = await rejection(writer.write(request));
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
