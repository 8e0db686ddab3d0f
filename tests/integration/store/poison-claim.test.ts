/**
 * Claim with an item it cannot decode in the partition (issue 16 item 3), on DynamoDB Local: a row written by a
 * foreign writer or edited by hand must hold at most its own ordering key, never the whole partition.
 */
import { PutItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { STORE_METRICS, STORE_WARNINGS } from "../../../runtime/store/observability";
import { dynamoClient } from "../../support/dynamodb";
import { brokenRow, ids, localStore, rec, tok } from "../../support/store/helpers";

async function put(tableName: string, item: Record<string, AttributeValue>): Promise<void> {
    await (await dynamoClient()).send(new PutItemCommand({ TableName: tableName, Item: item }));
}

describe("claim with an undecodable item in the partition (DynamoDB Local)", () => {
    it("a keyless partition: the item is skipped, counted and logged by key without its text; the records around it are claimed", async () => {
        const { store, tableName, clock, logger, metrics } = await localStore();
        await put(tableName, brokenRow("P", clock.now() - 1_000));
        await store.persist([rec("P", 1), rec("P", 2)]);
        const claimed = await store.claim("P", tok(1), 10);
        assert.deepEqual(ids(claimed), ["env-1", "env-2"]);
        assert.deepEqual(
            metrics.named(STORE_METRICS.undecodable).map((c) => [c.value, c.tags?.partition]),
            [[1, "P"]],
        );
        const line = logger.lines.find((l) => l.message === STORE_WARNINGS.undecodable);
        assert.equal(line?.level, "error");
        assert.deepEqual(line?.attributes, {
            partition_key: "P",
            sort_key: "OUTBOX#broken#topic",
            code: "INVALID_PAYLOAD",
        });
        assert.ok(!JSON.stringify(logger.lines).includes("secret-payload"), "the item's text is never logged");
    });

    it("a keyed partition: the item's own key waits behind it; every other key, and keyless records, are claimed", async () => {
        const { store, tableName, clock } = await localStore();
        await put(tableName, brokenRow("P", clock.now() - 1_000, { ordering_key: { S: "a" } }));
        await store.persist([rec("P", 1, { orderingKey: "a" }), rec("P", 2, { orderingKey: "b" }), rec("P", 3)]);
        assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-2", "env-3"]);
    });

    it("an item whose created_at cannot be read as a time holds only its key in the scan path", async () => {
        const { store, tableName, clock, metrics } = await localStore();
        await put(tableName, {
            ...brokenRow("P", clock.now() - 1_000, { ordering_key: { S: "a" } }),
            created_at: { N: "100000000000000000000" },
        });
        await store.persist([rec("P", 1, { orderingKey: "a" }), rec("P", 2, { orderingKey: "b" })]);
        assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-2"]);
        assert.equal(metrics.named(STORE_METRICS.undecodable).length, 1);
    });
});
