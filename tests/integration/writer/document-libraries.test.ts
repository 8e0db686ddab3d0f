/**
 * ElectroDB's and dynamodb-toolbox's (v2) `params()` go into the writer's `documentItems` as they are, on DynamoDB
 * Local (issue 34): their items and an event in one transaction, and a failing ConditionCheck of theirs cancels
 * the event. Both libraries are devDependencies, used as their docs show, with a lib-dynamodb DocumentClient.
 */
import assert from "node:assert/strict";
import { isOutboxError, type OutboxError } from "../../../runtime/errors";
import type { DocumentTransactWriteItem } from "../../../runtime/record/document-items";
import { message, rejection, scanAll, writerOnFreshTable, type WriterWorld } from "../../support/writer/world";
import { documentLibraries, type DocumentLibraries } from "../../support/writer/document-libraries";
import { appTable } from "../../support/dynamodb";

describe("ElectroDB and dynamodb-toolbox params() in documentItems (DynamoDB Local)", function () {
    let w: WriterWorld;
    let app: string;
    let libs: DocumentLibraries;

    before(async function () {
        w = await writerOnFreshTable();
        app = await appTable(w.client);
        libs = documentLibraries(w.client, app);
    });

    /** Write one event with `documentItems`: the error it is refused with, the outbox table's size unchanged. */
    async function refusedWithNoEvent(documentItems: DocumentTransactWriteItem[]): Promise<OutboxError> {
        const before = (await scanAll(w.client, w.table)).length;
        const err = (await rejection(w.writer.write({ messages: [message()], documentItems }))) as OutboxError;
        assert.ok(isOutboxError(err, "CONDITION_FAILED"), String(err));
        assert.match(err.message, new RegExp(`documentItems\\[1\\] \\(ConditionCheck on table "${app}"`));
        assert.equal((await scanAll(w.client, w.table)).length, before, "no event");
        return err;
    }

    it("writes an ElectroDB-built and a dynamodb-toolbox-built item with an event in one transaction, no adapter", async function () {
        const electroItems = libs.createOrder("1001", 42);
        const toolboxPut = libs.putCustomer("CUSTOMER#7", "Ada", 3);
        const before = (await scanAll(w.client, w.table)).length;
        await w.writer.write({ messages: [message()], documentItems: [...electroItems, toolboxPut] });
        const electroKey = electroItems[0] as unknown as { Put: { Item: { pk: string; sk: string } } };
        assert.ok(await libs.exists(electroKey.Put.Item.pk, electroKey.Put.Item.sk), "ElectroDB's item is written");
        assert.ok(await libs.exists("CUSTOMER#7", "A"), "dynamodb-toolbox's item is written");
        const [got] = await libs.shop.entities.order
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
        await refusedWithNoEvent([libs.putCustomer("CUSTOMER#8", "Bob", 1), ...libs.checkOrderTotal("1001", 999)]);
        assert.equal(await libs.exists("CUSTOMER#8", "A"), false, "no toolbox item");
    });

    it("a failing dynamodb-toolbox ConditionCheck cancels the event and the ElectroDB item", async function () {
        await refusedWithNoEvent([
            ...libs.createOrder("1002", 1),
            libs.checkCustomer("CUSTOMER#7", { attr: "visits", gt: 100 }),
        ]);
        assert.deepEqual(
            (await libs.shop.entities.order.get({ orderId: "1002" }).go()).data,
            null,
            "no ElectroDB item",
        );
    });

    it("an ElectroDB item passed in items (the AttributeValue field) is INVALID_PAYLOAD, not transient, and says documentItems", async function () {
        const err = (await rejection(
            w.writer.write({ messages: [message()], items: libs.createOrder("1003", 5) as never }),
        )) as OutboxError;
        assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
        assert.equal(err.transient, false);
        assert.match(err.message, /as documentItems$/);
    });
});
