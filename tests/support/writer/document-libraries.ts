/**
 * The two document libraries of the `documentItems` tests (issue 34), used as their docs show on a lib-dynamodb
 * DocumentClient: an ElectroDB service with an `order` entity and a dynamodb-toolbox (v2) `Customer` entity, both on
 * one application table keyed `pk`/`sk`; and the transaction pieces the writer and inbox tests build with them.
 */
import { GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { ConditionCheck, Entity as ToolboxEntity, item, number, PutTransaction, string, Table } from "dynamodb-toolbox";
import { Entity, Service } from "electrodb";
import type { DocumentTransactWriteItem } from "../../../runtime/record/document-items";

/** The ElectroDB `shop` service: one `order` entity (`orderId`, `total`) keyed `pk` = orderId, `sk` empty. */
function electroShop(client: DynamoDBDocumentClient, table: string) {
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

/** The dynamodb-toolbox `Customer` entity (`pk`, `sk`, `name`, `visits`) on table `name`. */
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

/** Both libraries on one application table, the pieces built with them, and a read of the table. */
export interface DocumentLibraries {
    /** The ElectroDB service. */
    readonly shop: ReturnType<typeof electroShop>;
    /** The dynamodb-toolbox entity. */
    readonly toolbox: ReturnType<typeof toolboxCustomer>;
    /** ElectroDB's transaction items creating order `orderId` with `total`. */
    createOrder(orderId: string, total: number): DocumentTransactWriteItem[];
    /** ElectroDB's transaction items checking that order `orderId` has total `total` (fails when it has not). */
    checkOrderTotal(orderId: string, total: number): DocumentTransactWriteItem[];
    /** dynamodb-toolbox's Put of customer `pk` (sort key `A`). */
    putCustomer(pk: string, name: string, visits: number): DocumentTransactWriteItem;
    /** dynamodb-toolbox's ConditionCheck on customer `pk` (sort key `A`). */
    checkCustomer(
        pk: string,
        condition: { attr: "visits"; gt: number } | { attr: "visits"; eq: number },
    ): DocumentTransactWriteItem;
    /** Whether the table holds item `pk`/`sk` (a consistent read). */
    exists(pk: string, sk: string): Promise<boolean>;
}

/**
 * The ElectroDB service and the dynamodb-toolbox entity on application table `table` (keyed `pk`/`sk`, as
 * `appTable()` makes it), through a DocumentClient on `client`.
 *
 * @param client - The DynamoDB client the DocumentClient wraps and `exists` reads with.
 * @param table - The application table's name.
 */
export function documentLibraries(client: DynamoDBClient, table: string): DocumentLibraries {
    const doc = DynamoDBDocumentClient.from(client);
    const shop = electroShop(doc, table);
    const toolbox = toolboxCustomer(doc, table);
    return {
        shop,
        toolbox,
        createOrder: (orderId, total) =>
            shop.transaction.write(({ order }) => [order.create({ orderId, total }).commit()]).params().TransactItems,
        checkOrderTotal: (orderId, total) =>
            shop.transaction
                .write(({ order }) => [
                    order
                        .check({ orderId })
                        .where((attributes, { eq }) => eq(attributes.total, total))
                        .commit(),
                ])
                .params().TransactItems,
        putCustomer: (pk, name, visits) => toolbox.build(PutTransaction).item({ pk, sk: "A", name, visits }).params(),
        checkCustomer: (pk, condition) =>
            toolbox.build(ConditionCheck).key({ pk, sk: "A" }).condition(condition).params(),
        exists: async (pk, sk) => {
            const out = await client.send(
                new GetItemCommand({ TableName: table, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }),
            );
            return out.Item !== undefined;
        },
    };
}
