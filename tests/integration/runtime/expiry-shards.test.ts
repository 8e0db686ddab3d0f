/**
 * The sharded ExpiryIndex from the writer to the sweeper, on DynamoDB Local and the AWS fault server: what the
 * writer writes, the sweeper's expiry step over every shard (also after the shard count changed in the middle of a
 * backlog), what a GoBridge drainer sharing the table sees, and the validation of the setting.
 */
import assert from "node:assert/strict";
import { GetItemCommand, QueryCommand, UpdateItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { expiryShardOf } from "../../../runtime/record/expiry-shard";
import { ATTR, EXPIRY_INDEX, HAS_EXPIRY_FLAG } from "../../../runtime/schema";
import { expiryShardsRowKey } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach } from "../../support/runtime/relay-fixtures";

/** Ids whose shard among `shards` is `shard`, for `count` messages. */
function idsInShard(shard: number, shards: number, count: number, prefix: string): string[] {
    const ids: string[] = [];
    for (let i = 0; ids.length < count; i++)
        if (expiryShardOf(`${prefix}-${i}`, shards) === shard) ids.push(`${prefix}-${i}`);
    return ids;
}

describe("expiry shards: writer and sweeper (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    function writer(expiryShards: number, client: DynamoDBClient = h.ddb): OutboxWriter {
        return new OutboxWriter({ client, tableName: h.tableName, clock: h.clock, address: h.topicArn, expiryShards });
    }

    /** The record ids a GoBridge drainer's Expire would see: ExpiryIndex under "1" only. */
    async function goBridgeVisible(): Promise<string[]> {
        const out = await h.ddb.send(
            new QueryCommand({
                TableName: h.tableName,
                IndexName: EXPIRY_INDEX.indexName,
                KeyConditionExpression: "#h = :h AND #e < :b",
                ExpressionAttributeNames: { "#h": ATTR.hasExpiry, "#e": ATTR.expiresAt },
                ExpressionAttributeValues: { ":h": { S: HAS_EXPIRY_FLAG }, ":b": { N: String(h.clock.now()) } },
            }),
        );
        const keys = new Set((out.Items ?? []).map((i) => i[ATTR.sk]!.S!));
        return (await h.records())
            .filter((r) => keys.has(`OUTBOX#${r.envelopeId}#${r.bindingId}`))
            .map((r) => r.recordId)
            .sort();
    }

    it('the writer with 8 shards writes has_expiry "1#<k>" from the message id, and raises the table\'s mark once per writer', async function () {
        h = await createHarness();
        const sent: object[] = [];
        const counting = {
            send: (command: object) => (sent.push(command), h.ddb.send(command as never)),
        } as unknown as DynamoDBClient;
        const w = writer(8, counting);
        const expiresAt = new Date(h.clock.now() + 60_000);
        const first = (
            await w.write({
                messages: [
                    { partition: "A", type: "T", payload: 1, expiresAt },
                    { partition: "B", type: "T", payload: 2 },
                ],
            })
        ).messageIds;
        const second = (await w.write({ messages: [{ partition: "C", type: "T", payload: 3, expiresAt }] })).messageIds;
        const byId = new Map(
            (await h.items())
                .filter((i) => i[ATTR.recordId] !== undefined)
                .map((i) => [i[ATTR.recordId]!.S!, i[ATTR.hasExpiry]?.S]),
        );
        assert.deepEqual(
            [byId.get(first[0]!), byId.get(first[1]!), byId.get(second[0]!)],
            [`1#${expiryShardOf(first[0]!, 8)}`, undefined, `1#${expiryShardOf(second[0]!, 8)}`],
        );
        const markWrites = sent.filter(
            (c) => c instanceof UpdateItemCommand && c.input.Key?.[ATTR.pk]?.S === expiryShardsRowKey()[ATTR.pk]!.S,
        );
        assert.equal(markWrites.length, 1);
        const mark = await h.ddb.send(
            new GetItemCommand({ TableName: h.tableName, Key: expiryShardsRowKey(), ConsistentRead: true }),
        );
        assert.equal(mark.Item?.[ATTR.maxExpiryShards]?.N, "8");
    });

    it("writers moving from 1 to 8 to 2 shards mid-backlog lose nothing: a sweeper left at 1 dead-letters all of them", async function () {
        h = await createHarness();
        const expiresAt = new Date(h.clock.now() + 1_000);
        const written: string[] = [];
        for (const [w, shards] of [1, 8, 2].entries()) {
            const messages = Array.from({ length: 6 }, (_, i) => ({
                partition: `P${w}-${i}`,
                type: "T",
                payload: i,
                expiresAt,
            }));
            written.push(...(await writer(shards).write({ messages })).messageIds);
        }
        h.clock.advance(2_000);
        const result = await createSweeper(h.config())();
        assert.equal(result.expired, 18);
        assert.deepEqual(
            h
                .deadLetters()
                .map((d) => d.recordId)
                .sort(),
            [...written].sort(),
        );
        assert.deepEqual((await h.indexCounts()).expiry, 0);
    });

    it('GoBridge compatibility: a GoBridge drainer sharing a table with 8 shards sees only the "1" records; this package\'s sweeper dead-letters the sharded ones', async function () {
        h = await createHarness();
        const expiresAt = new Date(h.clock.now() + 1_000);
        const unsharded = (await writer(1).write({ messages: [{ partition: "G", type: "T", payload: 0, expiresAt }] }))
            .messageIds;
        const sharded = (
            await writer(8).write({
                messages: Array.from({ length: 5 }, (_, i) => ({
                    partition: `S${i}`,
                    type: "T",
                    payload: i,
                    expiresAt,
                })),
            })
        ).messageIds;
        h.clock.advance(2_000);
        assert.deepEqual(await goBridgeVisible(), unsharded, 'GoBridge\'s Expire queries has_expiry = "1" only');
        const result = await createSweeper(h.config({}))();
        assert.equal(result.expired, 6);
        assert.deepEqual(
            h
                .deadLetters()
                .map((d) => d.recordId)
                .sort(),
            [...unsharded, ...sharded].sort(),
        );
    });

    it("shares maxExpiredPerRun round robin over the values, so one deep shard cannot starve the others", async function () {
        h = await createHarness();
        const expiresAt = new Date(h.clock.now() + 1_000);
        const w = writer(2);
        const deep = idsInShard(0, 2, 6, "deep");
        const shallow = idsInShard(1, 2, 2, "shallow");
        for (const id of [...deep, ...shallow])
            await w.write({ messages: [{ partition: id, type: "T", payload: 1, expiresAt, id }] });
        h.clock.advance(2_000);
        const result = await createSweeper({ ...h.config(), expiryShards: 2, maxExpiredPerRun: 4 })();
        assert.equal(result.expired, 4);
        const dead = new Set(h.deadLetters().map((d) => d.recordId));
        assert.deepEqual(
            [deep.filter((id) => dead.has(id)).length, shallow.filter((id) => dead.has(id)).length],
            [2, 2],
            "two from each shard",
        );
    });

    it("one shard's failing query does not stop the others: they are swept, then the invocation fails with that error", async function () {
        h = await createHarness();
        const expiresAt = new Date(h.clock.now() + 1_000);
        const w = writer(2);
        const [broken] = idsInShard(0, 2, 1, "broken");
        const fine = idsInShard(1, 2, 3, "fine");
        for (const id of [broken!, ...fine])
            await w.write({ messages: [{ partition: id, type: "T", payload: 1, expiresAt, id }] });
        h.clock.advance(2_000);
        // A fake in front of DynamoDB Local: no emulator fails the query of one has_expiry value on demand.
        const dynamodb = {
            send: (command: object) =>
                command instanceof QueryCommand &&
                command.input.IndexName === EXPIRY_INDEX.indexName &&
                command.input.ExpressionAttributeValues?.[":has_expiry"]?.S === "1#0"
                    ? Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }))
                    : h.ddb.send(command as never),
        };
        await assert.rejects(
            createSweeper({ ...h.config(), dynamodb })(),
            (err: unknown) =>
                isOutboxError(err, "THROTTLED") &&
                /expiry index query failed/.test(err.message) &&
                err.context.expiryShard === "1#0",
        );
        assert.deepEqual(
            h
                .deadLetters()
                .map((d) => d.recordId)
                .sort(),
            [...fine].sort(),
        );
    });

    it("rejects expiryShards 0, 1.5 and 1000 in createSweeper and OutboxWriter with INVALID_CONFIG naming the range and the default", async function () {
        h = await createHarness();
        for (const bad of [0, 1.5, 1000]) {
            assert.throws(
                () => createSweeper({ ...h.config(), expiryShards: bad }),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    err.message ===
                        `createSweeper: expiryShards is ${bad}; expected an integer from 1 to 64; omit it for the default 1`,
            );
            assert.throws(
                () => writer(bad),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    err.message ===
                        `OutboxWriter: expiryShards is ${bad}; expected an integer from 1 to 64; omit it for the default 1`,
            );
        }
    });
});
