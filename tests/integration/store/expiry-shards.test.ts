/**
 * The sharded ExpiryIndex (`expiryShards`) on DynamoDB Local: what persist writes, what expire finds, a change of
 * the shard count in the middle of a backlog, the table's expiry shards mark, and the setting's validation.
 */
import { GetItemCommand, PutItemCommand, QueryCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import { expiryReadValues, expiryShardOf, hasExpiryValue } from "../../../runtime/record/expiry-shard";
import { recordKey } from "../../../runtime/record/codec";
import {
    ATTR,
    EXPIRY_INDEX,
    EXPIRY_SHARDS_PK,
    EXPIRY_SHARDS_SK,
    HAS_EXPIRY_FLAG,
    STATUS,
} from "../../../runtime/schema";
import { expiryShardsRowKey, OutboxStore } from "../../../runtime/store";
import { dynamoClient } from "../../support/dynamodb";
import { FakeClock, localStore, rec, rejectsWith, tok } from "../../support/store/helpers";

/** A record of `partition` expiring at `expiresAt`. */
function expiring(partition: string, n: number | string, expiresAt: number) {
    return rec(partition, n, {}, { expiresAt });
}

async function hasExpiryOf(tableName: string, partition: string, n: number | string): Promise<string | undefined> {
    const client = await dynamoClient();
    const got = await client.send(
        new GetItemCommand({
            TableName: tableName,
            Key: recordKey(partition, `env-${n}`, "topic"),
            ConsistentRead: true,
        }),
    );
    return got.Item?.[ATTR.hasExpiry]?.S;
}

async function markOf(tableName: string): Promise<string | undefined> {
    const client = await dynamoClient();
    return (
        await client.send(new GetItemCommand({ TableName: tableName, Key: expiryShardsRowKey(), ConsistentRead: true }))
    ).Item?.[ATTR.maxExpiryShards]?.N;
}

/** What a GoBridge drainer's Expire reads: ExpiryIndex under `"1"` only. */
async function goBridgeVisible(tableName: string, beforeMs: number): Promise<string[]> {
    const client = await dynamoClient();
    const out = await client.send(
        new QueryCommand({
            TableName: tableName,
            IndexName: EXPIRY_INDEX.indexName,
            KeyConditionExpression: "#h = :h AND #e < :b",
            ExpressionAttributeNames: { "#h": ATTR.hasExpiry, "#e": ATTR.expiresAt },
            ExpressionAttributeValues: { ":h": { S: HAS_EXPIRY_FLAG }, ":b": { N: String(beforeMs) } },
        }),
    );
    return (out.Items ?? []).map((i) => i[ATTR.sk]!.S!).sort();
}

describe("expiry shards (DynamoDB Local)", () => {
    it('with 1 shard writes has_expiry "1" exactly as GoBridge, and no mark row', async () => {
        const { store, clock, tableName } = await localStore();
        await store.persist([expiring("P", 1, clock.now() + 1000), rec("P", 2)]);
        assert.equal(await hasExpiryOf(tableName, "P", 1), "1");
        assert.equal(
            await hasExpiryOf(tableName, "P", 2),
            undefined,
            "a record without expiry stays out of ExpiryIndex",
        );
        assert.equal(await markOf(tableName), undefined);
    });

    it('with 8 shards writes "1#<k>", k stable from the record id and spread over every shard, after raising the mark to 8', async () => {
        const { store, clock, tableName } = await localStore({ expiryShards: 8 });
        const ns = Array.from({ length: 40 }, (_, i) => i);
        await store.persist(ns.map((n) => expiring("P", n, clock.now() + 1000)));
        const values = await Promise.all(ns.map((n) => hasExpiryOf(tableName, "P", n)));
        assert.deepEqual(
            values,
            ns.map((n) => `1#${expiryShardOf(`P/rec-${n}`, 8)}`),
        );
        assert.equal(new Set(values).size, 8, `40 ids cover all 8 shards: ${[...new Set(values)].sort().join(" ")}`);
        assert.equal(hasExpiryValue("P/rec-3", 8), hasExpiryValue("P/rec-3", 8));
        assert.equal(await markOf(tableName), "8");
    });

    it('expire with 8 shards expires the partition\'s records in every shard and in "1", and leaves other partitions', async () => {
        const client = await dynamoClient();
        const { store, clock, tableName } = await localStore({ client, expiryShards: 8 });
        const old = new OutboxStore({ client, tableName, clock });
        const t = clock.now();
        await old.persist([expiring("P", "gobridge-style", t + 10)]);
        await store.persist([
            ...Array.from({ length: 16 }, (_, i) => expiring("P", i, t + 10)),
            expiring("Q", 1, t + 10),
        ]);
        clock.advance(100);
        assert.equal(await store.expire(clock.now(), "P", tok(1)), 17);
        assert.equal(await store.countPending("P"), 0);
        assert.equal(await store.countPending("Q"), 1, "another partition is untouched");
    });

    it("changing the shard count in the middle of a backlog loses nothing: 1 → 8 → 3, then a reader with 1 expires every record", async () => {
        const client = await dynamoClient();
        const clock = new FakeClock();
        const { tableName } = await localStore({ client, clock });
        const t = clock.now();
        const writers = [1, 8, 3].map((expiryShards) => new OutboxStore({ client, tableName, clock, expiryShards }));
        for (const [w, writer] of writers.entries()) {
            await writer.persist(Array.from({ length: 10 }, (_, i) => expiring("P", `w${w}-${i}`, t + 10)));
        }
        assert.equal(await markOf(tableName), "8", "the mark keeps the largest count writers used");
        clock.advance(100);
        // A GoBridge drainer sees only the first writer's records.
        assert.equal((await goBridgeVisible(tableName, clock.now())).length, 10);
        const reader = new OutboxStore({ client, tableName, clock, expiryShards: 1 });
        assert.equal(await reader.expire(clock.now(), "P", tok(1)), 30);
        assert.equal(await reader.countPending("P"), 0);
    });

    it("a sharded record is expired once, with ttl and without has_expiry, like an unsharded one", async () => {
        const client = await dynamoClient();
        const { store, clock, tableName } = await localStore({ client, expiryShards: 4 });
        await store.persist([expiring("P", 1, clock.now() + 10)]);
        clock.advance(100);
        assert.equal(await store.expire(clock.now(), "P", tok(1)), 1);
        assert.equal(await store.expire(clock.now(), "P", tok(1)), 0);
        const item = (
            await client.send(
                new GetItemCommand({
                    TableName: tableName,
                    Key: recordKey("P", "env-1", "topic"),
                    ConsistentRead: true,
                }),
            )
        ).Item as Record<string, AttributeValue>;
        assert.equal(item[ATTR.status]?.S, STATUS.expired);
        assert.equal(item[ATTR.hasExpiry], undefined);
        assert.ok(item[ATTR.ttl]?.N !== undefined);
    });

    it("rejects expiryShards 0, 1.5 and 1000 with INVALID_CONFIG naming the setting, the value, the range and the default", async () => {
        const client = await dynamoClient();
        for (const bad of [0, 1.5, 1000]) {
            assert.throws(
                () => new OutboxStore({ client, tableName: "orders-outbox", expiryShards: bad }),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    (err as Error).message ===
                        `OutboxStore: expiryShards is ${bad}; expected an integer from 1 to 64; omit it for the default 1`,
            );
        }
    });

    it("preflight with expiryShards > 1 refuses a malformed mark row, which would fail every expiry sweep", async () => {
        const client = await dynamoClient();
        const { store, tableName } = await localStore({ client, expiryShards: 4 });
        assert.equal(await store.preflight(), "verified");
        await client.send(
            new PutItemCommand({
                TableName: tableName,
                Item: { ...expiryShardsRowKey(), [ATTR.maxExpiryShards]: { S: "eight" } },
            }),
        );
        await rejectsWith(
            store.preflight(),
            "INVALID_CONFIG",
            new RegExp(
                `expiry shards row \\(PK ${EXPIRY_SHARDS_PK}, SK ${EXPIRY_SHARDS_SK}\\) holds max_expiry_shards = \\{"S":"eight"\\}; expected a number from 1 to 64`,
            ),
        );
        await rejectsWith(store.expire(Date.now(), "P", tok(1)), "INVALID_CONFIG", /expiry shards row/);
    });

    it('reads "1" first, then each shard value', () => {
        assert.deepEqual(expiryReadValues(1), ["1"]);
        assert.deepEqual(expiryReadValues(3), ["1", "1#0", "1#1", "1#2"]);
    });
});
