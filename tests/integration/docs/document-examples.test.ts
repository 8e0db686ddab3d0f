/**
 * The four examples of docs/runtime.md's "With the DocumentClient, ElectroDB or dynamodb-toolbox", run as a reader
 * would run them, on DynamoDB Local: DocumentClient-shaped actions, ElectroDB's and dynamodb-toolbox's `params()` in
 * `documentItems`, and the outbox's actions in a team's own lib-dynamodb `TransactWriteCommand`
 * (`documentTransactItems`). Each block calls its async function without awaiting it (it compiles as CommonJS, where
 * a top-level await does not): the writer and the DocumentClient the test hands it record each call's promise, and
 * the test waits for them, so a failure fails the test instead of going to the block's `console.error`. The only
 * other change is where their `DynamoDBClient` points.
 */
import * as assert from "node:assert/strict";
import { DeleteItemCommand, GetItemCommand, QueryCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import * as libDynamodb from "@aws-sdk/lib-dynamodb";
import * as dynamodbToolbox from "dynamodb-toolbox";
import * as electrodb from "electrodb";
import * as runtimeEntry from "../../../runtime";
import { OutboxStore } from "../../../runtime";
import { ensureTable, localDynamoDbModule } from "../../support/docs-examples";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { tsBlocksUnder } from "../../support/markdown";
import { runModule } from "../../support/run-module";

const PAGE = "docs/runtime.md";
const HEADING = "### With the DocumentClient, ElectroDB or dynamodb-toolbox";

/** Promises of the calls the blocks make, to wait for. */
const pending: Promise<unknown>[] = [];
const prepared: runtimeEntry.PreparedWrite[] = [];

class RecordingWriter extends runtimeEntry.OutboxWriter {
    override write(...args: Parameters<runtimeEntry.OutboxWriter["write"]>) {
        const written = super.write(...args);
        pending.push(written);
        return written;
    }
    override prepare(...args: Parameters<runtimeEntry.OutboxWriter["prepare"]>) {
        const made = super.prepare(...args);
        pending.push(made.then((p) => prepared.push(p)));
        return made;
    }
}

/** `DynamoDBDocumentClient` as the blocks call it (`from`), its clients' `send` recorded. */
const RecordingDocumentClient = {
    from(...args: Parameters<typeof libDynamodb.DynamoDBDocumentClient.from>): libDynamodb.DynamoDBDocumentClient {
        const documents = libDynamodb.DynamoDBDocumentClient.from(...args);
        const send = documents.send.bind(documents) as (...a: unknown[]) => Promise<unknown>;
        documents.send = ((...a: unknown[]) => {
            const sent = send(...a);
            pending.push(sent);
            return sent;
        }) as typeof documents.send;
        return documents;
    },
};

/** Wait until every recorded call has settled and none was started meanwhile; rethrow the first failure. */
async function settle(): Promise<void> {
    for (let seen = -1; seen !== pending.length;) {
        seen = pending.length;
        await Promise.all(pending);
        await new Promise((resolve) => setImmediate(resolve));
    }
}

describe(`${PAGE}: the DocumentClient, ElectroDB and dynamodb-toolbox examples, on DynamoDB Local`, function () {
    this.timeout(120_000);
    let blocks: string[];
    let modules: Record<string, unknown>;

    before(async () => {
        blocks = tsBlocksUnder(PAGE, HEADING);
        modules = {
            "@aws-sdk/client-dynamodb": await localDynamoDbModule(),
            "@aws-sdk/lib-dynamodb": { ...libDynamodb, DynamoDBDocumentClient: RecordingDocumentClient },
            "dynamodb-outbox/runtime": { ...runtimeEntry, OutboxWriter: RecordingWriter },
            electrodb,
            "dynamodb-toolbox": dynamodbToolbox,
        };
        await ensureTable("orders", "PK", "S", "SK");
        await ensureTable("shop", "pk", "S", "sk");
    });

    afterEach(() => {
        pending.splice(0);
        prepared.splice(0);
        delete process.env.OUTBOX_TABLE_NAME;
    });

    it("has the four examples", () => {
        assert.equal(blocks.length, 4);
    });

    /** Run block `i` on a fresh outbox table; returns the table. */
    async function runBlock(i: number): Promise<string> {
        const outboxTable = uniqueTableName("docs-documents");
        await new OutboxStore({ client: await dynamoClient(), tableName: outboxTable }).createTable();
        process.env.OUTBOX_TABLE_NAME = outboxTable;
        runModule(blocks[i]!, `${PAGE} (${HEADING.slice(4)} ${i + 1}).ts`, modules);
        assert.ok(pending.length > 0, "the block started a write");
        await settle();
        return outboxTable;
    }

    async function records(outboxTable: string, partition: string) {
        const client = await dynamoClient();
        const out = await client.send(
            new QueryCommand({
                TableName: outboxTable,
                KeyConditionExpression: "PK = :pk AND begins_with(SK, :outbox)",
                ExpressionAttributeValues: { ":pk": { S: partition }, ":outbox": { S: "OUTBOX#" } },
                ConsistentRead: true,
            }),
        );
        return out.Items ?? [];
    }

    async function get(table: string, key: Record<string, string>) {
        const client = await dynamoClient();
        const Key = Object.fromEntries(Object.entries(key).map(([k, v]) => [k, { S: v }]));
        return (await client.send(new GetItemCommand({ TableName: table, Key, ConsistentRead: true }))).Item;
    }

    it("DocumentClient-shaped actions: the order (a list, a number) and the customer's counter are written with the event", async () => {
        const client = await dynamoClient();
        await client.send(
            new DeleteItemCommand({ TableName: "orders", Key: { PK: { S: "ORDER#1001" }, SK: { S: "META" } } }),
        );
        const countBefore = Number((await get("orders", { PK: "CUSTOMER#77", SK: "META" }))?.orderCount?.N ?? "0");
        const outbox = await runBlock(0);
        const order = await get("orders", { PK: "ORDER#1001", SK: "META" });
        assert.deepEqual(order?.total, { N: "42" });
        assert.deepEqual(order?.lines, { L: [{ S: "book" }, { S: "pen" }] });
        assert.deepEqual((await get("orders", { PK: "CUSTOMER#77", SK: "META" }))?.orderCount, {
            N: String(countBefore + 1),
        });
        assert.deepEqual(
            (await records(outbox, "ORDER#1001")).map((r) => r.status?.S),
            ["pending"],
        );
    });

    it("ElectroDB's params(): its order item and the event, one transaction", async () => {
        const client = await dynamoClient();
        const scan = async () =>
            (
                await client.send(
                    new ScanCommand({
                        TableName: "shop",
                        FilterExpression: "orderId = :id",
                        ExpressionAttributeValues: { ":id": { S: "1001" } },
                        ConsistentRead: true,
                    }),
                )
            ).Items ?? [];
        // ElectroDB's create is conditional: a previous run on the same DynamoDB left the item.
        for (const old of await scan())
            await client.send(new DeleteItemCommand({ TableName: "shop", Key: { pk: old.pk!, sk: old.sk! } }));
        const outbox = await runBlock(1);
        const items = await scan();
        assert.equal(items.length, 1, "ElectroDB's item");
        assert.deepEqual(items[0]!.total, { N: "42" });
        assert.deepEqual(
            (await records(outbox, "ORDER#1001")).map((r) => r.status?.S),
            ["pending"],
        );
    });

    it("dynamodb-toolbox's PutTransaction params(): the customer and the event, one transaction", async () => {
        const outbox = await runBlock(2);
        const customer = await get("shop", { pk: "CUSTOMER#7", sk: "PROFILE" });
        assert.deepEqual(customer?.name, { S: "Ada" });
        assert.deepEqual(customer?.visits, { N: "0" });
        assert.deepEqual(
            (await records(outbox, "CUSTOMER#7")).map((r) => r.status?.S),
            ["pending"],
        );
    });

    it("documentTransactItems in a team's own lib-dynamodb TransactWriteCommand: the order and the outbox record as prepared, seq with every digit", async () => {
        const outbox = await runBlock(3);
        assert.deepEqual((await get("orders", { PK: "ORDER#1002", SK: "META" }))?.total, { N: "7" });
        const [record] = await records(outbox, "ORDER#1002");
        assert.equal(prepared.length, 1);
        const sent = prepared[0]!.input.TransactItems![0]!.Put!.Item!;
        assert.deepEqual(record, sent, "the record is what the writer prepared, byte for byte");
        assert.ok(BigInt(record!.seq!.N!) > 2n ** 53n, "a keyless record's seq, above 2^53");
    });
});
