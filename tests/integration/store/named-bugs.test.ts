/**
 * GoBridge's named findings (reference §12) that need an interleaving or a legacy table shape, reproduced on
 * DynamoDB Local. The other findings are pinned where their rule lives (see the README's "The store" section for the map).
 */
import { CreateTableCommand, PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { marshalRecord, pendingRecord, recordKey } from "../../../runtime/record/codec";
import { claimSort } from "../../../runtime/record/keys";
import { ATTR, HAS_EXPIRY_FLAG } from "../../../runtime/schema";
import { createTableInput, OutboxStore } from "../../../runtime/store";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { FakeDynamoDb, PASS } from "../../support/store/fake-client";
import { ids, localStore, rec, rejectsWith, tok } from "../../support/store/helpers";

/** Backfill one string attribute of one record by hand, as the migration would. */
async function backfillOne(
    tableName: string,
    key: ReturnType<typeof recordKey>,
    attribute: string,
    value: string,
): Promise<void> {
    await (
        await dynamoClient()
    ).send(
        new UpdateItemCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: "SET #a = :v",
            ExpressionAttributeNames: { "#a": attribute },
            ExpressionAttributeValues: { ":v": { S: value } },
        }),
    );
}

describe("GoBridge named findings on DynamoDB Local (§12)", () => {
    it("finding 5, fence TOCTOU split-brain: B raises the fence between A's fence read and A's claim write; A gets STALE and claims nothing", async () => {
        const client = await dynamoClient();
        const { store: b, tableName } = await localStore({ client });
        await b.persist([rec("P", 1), rec("P", 2)]);
        // The fake only hooks the moment between A's fence read and A's first transaction; every call goes to DynamoDB Local.
        let interleaved = false;
        const hooked = new FakeDynamoDb(client).on("TransactWriteItems", async () => {
            if (!interleaved) {
                interleaved = true;
                await b.claim("P", tok(2, "B"), 0);
            }
            return PASS;
        });
        const a = new OutboxStore({ client: hooked, tableName, staleClaimMs: 0 });
        await rejectsWith(
            a.claim("P", tok(1, "A"), 10),
            "STALE_FENCING_TOKEN",
            /claim aborted: partition fence advanced past token version/,
        );
        assert.equal(await b.countClaimed("P"), 0, "A claimed nothing");
        assert.deepEqual(ids(await b.claim("P", tok(2, "B"), 10)), ["env-1", "env-2"]);
    });

    it("finding 17, under-projected ClaimIndex: every claim fails as INVALID_PAYLOAD (which is why preflight refuses it)", async () => {
        const client = await dynamoClient();
        const tableName = uniqueTableName("keys-only");
        const input = createTableInput(tableName, { stream: false });
        input.GlobalSecondaryIndexes!.find((g) => g.IndexName === "ClaimIndex")!.Projection = {
            ProjectionType: "KEYS_ONLY",
        };
        await client.send(new CreateTableCommand(input));
        const store = new OutboxStore({ client, tableName, staleClaimMs: 0 });
        await store.persist([rec("P", 1)]);
        await rejectsWith(store.claim("P", tok(1), 1), "INVALID_PAYLOAD", /^outbox claim index query failed$/);
        await rejectsWith(store.preflight(), "INVALID_CONFIG", /must be Projection: ALL/);
    });

    it("finding 18, migration hazard: an old-build record without claim_sort is invisible to claim and depth until backfilled", async () => {
        const client = await dynamoClient();
        const { store, tableName } = await localStore({ client });
        const old = marshalRecord(pendingRecord(rec("P", "old"), 0n, Date.UTC(2025, 0, 1)));
        delete old.claim_sort;
        await client.send(new PutItemCommand({ TableName: tableName, Item: old }));
        assert.deepEqual(await store.claim("P", tok(1), 10), []);
        assert.equal(await store.countPending("P"), 0);
        assert.equal((await store.queryPending("P", 10)).length, 1, "the base table still has it");
        await backfillOne(
            tableName,
            recordKey("P", "env-old", "topic"),
            ATTR.claimSort,
            claimSort(Date.UTC(2025, 0, 1), 0n),
        );
        assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-old"]);
    });

    it("a row written without status (an older GoBridge build) is pending everywhere: counted, claimed, completed, and expired", async () => {
        const client = await dynamoClient();
        const { store, tableName, clock } = await localStore({ client });
        const statusless = (n: string, expiresAt = 0) => {
            const item = marshalRecord(
                pendingRecord(rec("P", n, {}, { expiresAt }), BigInt(n.length), clock.now() - 1000),
            );
            delete item.status;
            return item;
        };
        await client.send(new PutItemCommand({ TableName: tableName, Item: statusless("a") }));
        await client.send(new PutItemCommand({ TableName: tableName, Item: statusless("bb", clock.now() - 1) }));
        assert.equal(await store.countPending("P"), 2);
        assert.equal((await store.queryPending("P", 10)).length, 2);
        assert.equal(await store.expire(clock.now(), "P", tok(1)), 1, "the expired one");
        const [claimed] = await store.claim("P", tok(1), 10);
        assert.deepEqual([claimed?.envelopeId, claimed?.status], ["env-a", "claimed"]);
        await store.complete([claimed!.recordId], tok(1));
        assert.equal(await store.countPending("P"), 0);
    });

    it("finding 18, the has_expiry half: an old-build record with an expiry but no has_expiry is never expired until backfilled", async () => {
        const client = await dynamoClient();
        const { store, tableName, clock } = await localStore({ client });
        const old = marshalRecord(
            pendingRecord(rec("P", "old", {}, { expiresAt: clock.now() - 1000 }), 1n, clock.now() - 5000),
        );
        delete old.has_expiry;
        await client.send(new PutItemCommand({ TableName: tableName, Item: old }));
        assert.equal(await store.expire(clock.now(), "P", tok(1)), 0, "ExpiryIndex does not hold it");
        assert.equal((await store.queryPending("P", 10)).length, 1, "still pending in the base table");
        await backfillOne(tableName, recordKey("P", "env-old", "topic"), ATTR.hasExpiry, HAS_EXPIRY_FLAG);
        assert.equal(await store.expire(clock.now(), "P", tok(1)), 1);
    });
});
