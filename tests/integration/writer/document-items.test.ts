/**
 * Native items, both ways (issue 34), on DynamoDB Local: `documentItems` in the DocumentClient's shape beside
 * `items` in the SDK's AttributeValue shape, the checks that refuse either shape in the other's field up front, and
 * `documentTransactItems`, which hands the outbox's actions to a team's own lib-dynamodb `TransactWriteCommand`.
 */
import assert from "node:assert/strict";
import { GetItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, NumberValue, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import fc from "fast-check";
import { isOutboxError, type OutboxError } from "../../../runtime/errors";
import { ATTR } from "../../../runtime/schema";
import { documentTransactItems } from "../../../runtime/record/document-items";
import { message, rejection, scanAll, writerOnFreshTable, type WriterWorld } from "../../support/writer/world";
import { appTable } from "../../support/dynamodb";

async function readBack(
    w: WriterWorld,
    table: string,
    pk: string,
): Promise<Record<string, AttributeValue> | undefined> {
    const out = await w.client.send(
        new GetItemCommand({ TableName: table, Key: { pk: { S: pk }, sk: { S: "A" } }, ConsistentRead: true }),
    );
    return out.Item;
}

describe("the writer's documentItems and items shapes (DynamoDB Local)", function () {
    let w: WriterWorld;
    let app: string;
    before(async function () {
        w = await writerOnFreshTable();
        app = await appTable(w.client);
    });

    it("writes a native item with an event in one transaction, marshalled as lib-dynamodb marshalls it", async function () {
        const item = {
            pk: "ORDER#1",
            sk: "A",
            total: 42,
            big: new NumberValue("9007199254740993"),
            tags: new Set(["a", "b"]),
            lines: [{ sku: "x", qty: 1 }],
            gift: null,
            paid: true,
        };
        const before = (await scanAll(w.client, w.table)).length;
        await w.writer.write({ messages: [message()], documentItems: [{ Put: { TableName: app, Item: item } }] });
        assert.deepEqual(await readBack(w, app, "ORDER#1"), marshall(item));
        assert.equal(
            (await scanAll(w.client, w.table)).length,
            before + 1,
            "the event's record, in the same transaction",
        );
    });

    it("refuses a native item passed in items, up front, as INVALID_PAYLOAD, not transient, saying to pass it as documentItems", async function () {
        const before = (await scanAll(w.client, w.table)).length;
        const err = (await rejection(
            w.writer.write({
                messages: [message()],
                items: [{ Put: { TableName: app, Item: { pk: "ORDER#2", sk: "A", total: 5 } as never } }],
            }),
        )) as OutboxError;
        assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
        assert.equal(err.transient, false);
        assert.match(err.message, /^write: items\[0\] \(Put\): Item\.pk is string, not an AttributeValue/);
        assert.match(err.message, /pass an item of native values .* as documentItems$/);
        assert.deepEqual(
            [err.context.where, err.context.action, err.context.attribute],
            ["items[0]", "Put", "Item.pk"],
        );
        assert.equal((await scanAll(w.client, w.table)).length, before, "nothing written");
        assert.equal(await readBack(w, app, "ORDER#2"), undefined);
    });

    it("refuses a documentItem marshall cannot send, naming the index, the action, the path, the type and the fix", async function () {
        class Money {
            constructor(readonly cents: number) {}
        }
        const cases: [Record<string, unknown>, string, RegExp][] = [
            [{ pk: "P", sk: "A", note: undefined }, "Item.note", /is undefined/],
            [
                { pk: "P", sk: "A", nested: { f: () => 1 } },
                "Item.nested.f",
                /is a function, which lib-dynamodb's marshall drops without a word/,
            ],
            [{ pk: "P", sk: "A", price: new Money(5) }, "Item.price", /is an instance of Money/],
            [
                { pk: "P", sk: "A", list: [1, 2 ** 60] },
                "Item.list[1]",
                /is the number 1152921504606847000 .*Use NumberValue/,
            ],
        ];
        for (const [item, path, type] of cases) {
            const err = (await rejection(
                w.writer.write({
                    messages: [message()],
                    documentItems: [
                        {
                            ConditionCheck: {
                                TableName: app,
                                Key: { pk: "X", sk: "A" },
                                ConditionExpression: "attribute_not_exists(pk)",
                            },
                        },
                        { Put: { TableName: app, Item: item } },
                    ],
                }),
            )) as OutboxError;
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.equal(err.transient, false);
            assert.deepEqual(
                [err.context.where, err.context.action, err.context.attribute],
                ["documentItems[1]", "Put", path],
            );
            assert.match(err.message, type);
            if (path !== "Item.nested.f")
                assert.match(err.message, /documentItems take what @aws-sdk\/lib-dynamodb's marshall accepts/);
        }
    });

    it("property: any item lib-dynamodb's marshall accepts goes through documentItems and reads back equal", async function () {
        this.timeout(120_000);
        let n = 0;
        const value = fc.letrec((tie) => ({
            leaf: fc.oneof(
                fc.string(),
                fc.integer(),
                // DynamoDB's own range (it refuses a magnitude below 1e-130 on AWS and DynamoDB Local alike), and -0 reads back 0.
                fc
                    .double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 })
                    .filter((x) => (x === 0 ? !Object.is(x, -0) : Math.abs(x) > 1e-100)),
                fc.boolean(),
                fc.constant(null),
                fc.uint8Array({ minLength: 1, maxLength: 8 }),
            ),
            any: fc.oneof(
                { depthSize: "small" },
                tie("leaf"),
                fc.array(tie("any"), { maxLength: 3 }),
                fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), tie("any"), { maxKeys: 3 }),
            ),
        }));
        await fc.assert(
            fc.asyncProperty(
                fc.dictionary(
                    fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "pk" && k !== "sk"),
                    value.any,
                    { maxKeys: 4 },
                ),
                async (attrs) => {
                    const pk = `PROP#${(n += 1)}`;
                    const item = { ...attrs, pk, sk: "A" };
                    let expected: Record<string, AttributeValue>;
                    try {
                        expected = marshall(item) as Record<string, AttributeValue>;
                    } catch {
                        return; // not an item marshall accepts
                    }
                    await w.writer.write({
                        messages: [message()],
                        documentItems: [{ Put: { TableName: app, Item: item } }],
                    });
                    const got = await readBack(w, app, pk);
                    assert.deepEqual(unmarshall(got as never), unmarshall(expected as never));
                },
            ),
            { numRuns: 40 },
        );
    });

    it("documentTransactItems hands the prepared actions to a real lib-dynamodb TransactWriteCommand; seq above 2^53 keeps its precision", async function () {
        const prepared = await w.writer.prepare({ messages: [message()] });
        const doc = DynamoDBDocumentClient.from(w.client);
        const entries = documentTransactItems(prepared.input.TransactItems ?? []);
        const seq = entries[0]!.Put!.Item![ATTR.seq] as NumberValue;
        assert.ok(seq instanceof NumberValue, "a number is wrapped, not a JS number");
        assert.ok(BigInt(seq.toString()) > 2n ** 53n, "a keyless record's seq is above 2^53");
        // No cast: documentTransactItems is typed as the command's TransactItems.
        await doc.send(new TransactWriteCommand({ TransactItems: entries }));
        const sent = prepared.input.TransactItems![0]!.Put!.Item!;
        const row = await w.client.send(
            new GetItemCommand({
                TableName: w.table,
                Key: { [ATTR.pk]: sent[ATTR.pk]!, [ATTR.sk]: sent[ATTR.sk]! },
                ConsistentRead: true,
            }),
        );
        assert.deepEqual(row.Item, sent, "the row is what the writer prepared, byte for byte");
    });

    it("a DocumentClient reader of a keyless record gets seq as a BigInt, which JSON.stringify refuses; wrapNumbers gives a NumberValue with every digit (docs/gobridge.md)", async function () {
        const prepared = await w.writer.prepare({ messages: [message()] });
        await w.writer.commit(prepared);
        const sent = prepared.input.TransactItems![0]!.Put!.Item!;
        const Key = { [ATTR.pk]: sent[ATTR.pk]!.S, [ATTR.sk]: sent[ATTR.sk]!.S };
        const plain = await DynamoDBDocumentClient.from(w.client).send(new GetCommand({ TableName: w.table, Key }));
        assert.equal(typeof plain.Item?.[ATTR.seq], "bigint");
        assert.equal(String(plain.Item?.[ATTR.seq]), sent[ATTR.seq]!.N);
        assert.throws(() => JSON.stringify(plain.Item), /BigInt/);
        const wrapped = await DynamoDBDocumentClient.from(w.client, {
            unmarshallOptions: { wrapNumbers: true },
        }).send(new GetCommand({ TableName: w.table, Key }));
        const seq = wrapped.Item?.[ATTR.seq] as NumberValue;
        assert.ok(seq instanceof NumberValue);
        assert.equal(seq.toString(), sent[ATTR.seq]!.N);
        assert.equal(JSON.parse(JSON.stringify(wrapped.Item))[ATTR.seq].value, sent[ATTR.seq]!.N);
    });
});
