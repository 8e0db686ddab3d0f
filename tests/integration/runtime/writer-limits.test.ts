/**
 * OutboxWriter on DynamoDB Local: every limit of a write is rejected before sending (INVALID_PAYLOAD, a short
 * message), with nothing written and no I/O before the check.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { isOutboxError } from "../../../runtime/errors";
import { ATTR } from "../../../runtime/schema";
import { rejectsWith } from "../../support/store/helpers";
import { fixedClock, message, rejection, scanAll, writerOnFreshTable } from "../../support/writer/world";

describe("OutboxWriter (DynamoDB Local)", function () {
    let client: DynamoDBClient, table: string, writer: OutboxWriter;
    beforeEach(async () => ({ client, table, writer } = await writerOnFreshTable()));

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
                await rejectsWith(writer.write(c.request()), "INVALID_PAYLOAD", c.pattern);
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
            const err = await rejection(
                writer.write({ messages: [message(), message({ id: "m-1", headers: { tenant: "a\uFFFFb" } })] }),
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
            await rejectsWith(
                fifoWriter.write({ messages: [message({ partition: "ORDER 1" })] }),
                "INVALID_PAYLOAD",
                /messages\[0\]\.partition "ORDER 1" is 7 characters and is the FIFO MessageGroupId \(of an SNS FIFO topic or an SQS FIFO queue\)/,
            );
            assert.equal((await scanAll(client, table)).length, 0);
        });

        it("rejects a keyed message's limit breach before allocating any seq", async function () {
            await rejectsWith(
                writer.write({
                    messages: [message({ orderingKey: "k" }), message({ payload: "x".repeat(300 * 1024) })],
                }),
                "INVALID_PAYLOAD",
                /messages\[1\]/,
            );
            assert.equal((await scanAll(client, table)).length, 0, "no FENCE row either");
        });
    });
});
