/**
 * ElectroDB's and dynamodb-toolbox's (v2) `params()` go into the writer's `documentItems` as they are, on DynamoDB
 * Local (issue 34): their items and an event in one transaction, and a failing ConditionCheck of theirs cancels
 * the event. Both libraries are devDependencies, used as their docs show, with a lib-dynamodb DocumentClient.
 */
import assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { ConditionCheck, Entity as ToolboxEntity, item, number, PutTransaction, string, Table } from "dynamodb-toolbox";
import { Entity, Service } from "electrodb";
import { isOutboxError, type OutboxError } from "../../../runtime/errors";
import { message, rejection, scanAll, writerOnFreshTable, type WriterWorld } from "../../support/writer/world";
import { appTable } from "../../support/dynamodb";

describe("ElectroDB and dynamodb-toolbox params() in documentItems (DynamoDB Local)", function () {
    let w: WriterWorld;
    let app: string;
    let shop: ReturnType<typeof electro>;
    let toolbox: ReturnType<typeof toolboxCustomer>;

    function electro(client: DynamoDBDocumentClient, table: string) {
        const order = new Entity(
            {
                model: { entity: "order", version: "1", service: "shop" },
                attributes: { orderId: { type: "string", required: true }, total: { type: "number", required: true } },
                indexes: {
                    primary: { pk: { field: "pk", composite: ["orderId"] }, sk: { field: "sk", composite: [] } },
                },
            },
            { table, client },
        );
        return new Service({ order }, { table, client });
    }

    function toolboxCustomer(documentClient: DynamoDBDocumentClient, name: string) {
        const table = new Table({
            name,
            partitionKey: { name: "pk", type: "string" },
            sortKey: { name: "sk", type: "string" },
            documentClient,
        });
        return new ToolboxEntity({
            name: "Customer",
            schema: item({ pk: string().key(), sk: string().key(), name: string(), visits: number() }),
            table,
        });
    }

    async function exists(pk: string, sk: string): Promise<boolean> {
        const out = await w.client.send(
            new GetItemCommand({ TableName: app, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }),
        );
        return out.Item !== undefined;
    }

    before(async function () {
        w = await writerOnFreshTable();
        app = await appTable(w.client);
        const doc = DynamoDBDocumentClient.from(w.client);
        shop = electro(doc, app);
        toolbox = toolboxCustomer(doc, app);
    });

    it("writes an ElectroDB-built and a dynamodb-toolbox-built item with an event in one transaction, no adapter", async function () {
        const electroParams = shop.transaction
            .write(({ order }) => [order.create({ orderId: "1001", total: 42 }).commit()])
            .params();
        const toolboxPut = toolbox
            .build(PutTransaction)
            .item({ pk: "CUSTOMER#7", sk: "A", name: "Ada", visits: 3 })
            .params();
        const before = (await scanAll(w.client, w.table)).length;
        await w.writer.write({ messages: [message()], documentItems: [...electroParams.TransactItems, toolboxPut] });
        const electroKey = electroParams.TransactItems[0] as { Put: { Item: { pk: string; sk: string } } };
        assert.ok(await exists(electroKey.Put.Item.pk, electroKey.Put.Item.sk), "ElectroDB's item is written");
        assert.ok(await exists("CUSTOMER#7", "A"), "dynamodb-toolbox's item is written");
        const [got] = await shop.entities.order
            .get({ orderId: "1001" })
            .go()
            .then((r) => [r.data]);
        assert.deepEqual(got, { orderId: "1001", total: 42 }, "ElectroDB reads back what it built");
        assert.equal(
            (await scanAll(w.client, w.table)).length,
            before + 1,
            "the event's record, in the same transaction",
        );
    });

    it("a failing ElectroDB ConditionCheck cancels the event and the toolbox item: nothing written, CONDITION_FAILED naming their item", async function () {
        const check = shop.transaction
            .write(({ order }) => [
                order
                    .check({ orderId: "1001" })
                    .where(({ total }, { eq }) => eq(total, 999))
                    .commit(),
            ])
            .params();
        const toolboxPut = toolbox
            .build(PutTransaction)
            .item({ pk: "CUSTOMER#8", sk: "A", name: "Bob", visits: 1 })
            .params();
        const before = (await scanAll(w.client, w.table)).length;
        const err = (await rejection(
            w.writer.write({ messages: [message()], documentItems: [toolboxPut, ...check.TransactItems] }),
        )) as OutboxError;
        assert.ok(isOutboxError(err, "CONDITION_FAILED"), String(err));
        assert.match(err.message, new RegExp(`documentItems\\[1\\] \\(ConditionCheck on table "${app}"`));
        assert.equal((await scanAll(w.client, w.table)).length, before, "no event");
        assert.equal(await exists("CUSTOMER#8", "A"), false, "no toolbox item");
    });

    it("a failing dynamodb-toolbox ConditionCheck cancels the event and the ElectroDB item", async function () {
        const create = shop.transaction
            .write(({ order }) => [order.create({ orderId: "1002", total: 1 }).commit()])
            .params();
        const check = toolbox
            .build(ConditionCheck)
            .key({ pk: "CUSTOMER#7", sk: "A" })
            .condition({ attr: "visits", gt: 100 })
            .params();
        const before = (await scanAll(w.client, w.table)).length;
        const err = (await rejection(
            w.writer.write({ messages: [message()], documentItems: [...create.TransactItems, check] }),
        )) as OutboxError;
        assert.ok(isOutboxError(err, "CONDITION_FAILED"), String(err));
        assert.match(err.message, new RegExp(`documentItems\\[1\\] \\(ConditionCheck on table "${app}"`));
        assert.equal((await scanAll(w.client, w.table)).length, before, "no event");
        assert.deepEqual((await shop.entities.order.get({ orderId: "1002" }).go()).data, null, "no ElectroDB item");
    });

    it("an ElectroDB item passed in items (the AttributeValue field) is INVALID_PAYLOAD, not transient, and says documentItems", async function () {
        const params = shop.transaction
            .write(({ order }) => [order.create({ orderId: "1003", total: 5 }).commit()])
            .params();
        const err = (await rejection(
            w.writer.write({ messages: [message()], items: params.TransactItems as never }),
        )) as OutboxError;
        assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
        assert.equal(err.transient, false);
        assert.match(err.message, /as documentItems$/);
    });
});
