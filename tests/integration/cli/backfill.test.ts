import * as assert from "node:assert/strict";
import {
    GetItemCommand,
    PutItemCommand,
    UpdateItemCommand,
    type AttributeValue,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { backfillIndexAttributes } from "../../../cli/migrate/backfill";
import { marshalRecord, pendingRecord, type NewOutboxRecord, type OutboxRecord } from "../../../runtime/record/codec";
import { fenceKey } from "../../../runtime/record/fence";
import { ATTR, STATUS } from "../../../runtime/schema";
import { hasExpiryValue } from "../../../runtime/record/expiry-shard";
import { expiryShardsRowKey, OutboxStore } from "../../../runtime/store";
import { dynamoClient } from "../../support/dynamodb";
import { createOutboxTable, dropTable, runCli } from "../../support/cli";

const PARTITION = "ORDER#legacy";
const T0 = Date.UTC(2026, 0, 1);

function newRecord(n: number, expiresAt = 0): NewOutboxRecord {
    return {
        partition: PARTITION,
        recordId: `rec-${n}`,
        bindingId: "orders",
        address: "arn:aws:sns:us-east-1:000000000000:orders",
        envelope: { id: `env-${n}`, payload: `{"n":${n}}`, createdAt: T0 + n * 1000, expiresAt },
    };
}

/** An item as a build from before ClaimIndex/ExpiryIndex wrote it: no claim_sort, no has_expiry. */
function oldBuildItem(record: OutboxRecord): Record<string, AttributeValue> {
    const item = marshalRecord(record);
    delete item[ATTR.claimSort];
    delete item[ATTR.hasExpiry];
    return item;
}

async function put(client: DynamoDBClient, table: string, item: Record<string, AttributeValue>): Promise<void> {
    await client.send(new PutItemCommand({ TableName: table, Item: item }));
}

async function attributes(
    client: DynamoDBClient,
    table: string,
    recordId: string,
): Promise<Record<string, AttributeValue>> {
    const n = Number(recordId.slice(4));
    const key = { [ATTR.pk]: { S: PARTITION }, [ATTR.sk]: { S: `OUTBOX#env-${n}#orders` } };
    return (await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item ?? {};
}

describe("cli: migrate backfills an old-build backlog (reference §12 item 18)", function () {
    this.timeout(120_000);
    let client: DynamoDBClient;
    let table: string;
    let store: OutboxStore;
    const now = { ms: T0 + 3_600_000 };

    before(async () => {
        client = await dynamoClient();
        table = await createOutboxTable({}, "cli-backfill");
        store = new OutboxStore({
            client,
            tableName: table,
            clock: { now: () => now.ms, sleep: async () => undefined },
        });
        // Newest first, so SK order (env-1 … env-5) is not age order.
        await put(client, table, oldBuildItem(pendingRecord(newRecord(3), 2n, T0)));
        await put(client, table, oldBuildItem(pendingRecord(newRecord(2, T0 + 60_000), 1n, T0)));
        await put(client, table, oldBuildItem(pendingRecord(newRecord(5), 3n, T0)));
        const claimed = {
            ...pendingRecord(newRecord(1), 4n, T0),
            status: STATUS.claimed,
            claimVersion: 7n,
            claimedBy: "relay-a",
            claimedAt: now.ms,
        };
        await put(client, table, oldBuildItem(claimed));
        const completed = {
            ...pendingRecord(newRecord(4), 5n, T0),
            status: STATUS.completed,
            completedAt: T0 + 10_000,
        };
        await put(client, table, oldBuildItem(completed));
        await put(client, table, { ...fenceKey(PARTITION), [ATTR.seqCounter]: { N: "5" } });
    });
    after(async () => dropTable(table));

    it("the backlog is invisible to the indexes before the backfill: nothing to claim, nothing to count, nothing to expire", async () => {
        assert.equal(await store.countPending(PARTITION), 0);
        assert.equal(await store.expire(T0 + 120_000, PARTITION, { owner: "sweeper", version: 8n }), 0);
        assert.deepEqual(await store.claim(PARTITION, { owner: "relay-b", version: 8n }, 10), []);
    });

    it("plans the backfill with its count, in pages, and changes nothing", async () => {
        const plan = await runCli(["migrate", "--table", table, "--page-size", "2"]);
        assert.equal(plan.code, 0, plan.stdout + plan.stderr);
        assert.match(plan.stdout, /counting records to backfill: page 1, scanned 2/);
        assert.match(
            plan.stdout,
            /1\. backfill 4 pending\/claimed record\(s\) missing claim_sort or has_expiry, so ClaimIndex and ExpiryIndex see them \(paged Scan, 2 items a page/,
        );
        assert.equal((await attributes(client, table, "rec-3"))[ATTR.claimSort], undefined);
    });

    it("--apply gives pending and claimed records claim_sort (and has_expiry with an expiry), leaves terminal records and the fence row alone, and a rerun finds nothing", async () => {
        const run = await runCli(["migrate", "--table", table, "--apply", "--page-size", "2"]);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
            run.stdout,
            /… backfill page 3: scanned 6, matched 4, claim_sort set 4, has_expiry set 1, skipped 0/,
        );

        assert.equal(
            (await attributes(client, table, "rec-3"))[ATTR.claimSort]?.S,
            `${String(T0 + 3000).padStart(19, "0")}#${"2".padStart(20, "0")}`,
        );
        assert.equal((await attributes(client, table, "rec-2"))[ATTR.hasExpiry]?.S, "1");
        assert.equal(
            (await attributes(client, table, "rec-3"))[ATTR.hasExpiry],
            undefined,
            "a record without expiry must stay out of ExpiryIndex",
        );
        assert.ok(
            (await attributes(client, table, "rec-1"))[ATTR.claimSort] !== undefined,
            "a claimed record belongs in ClaimIndex too",
        );
        assert.equal(
            (await attributes(client, table, "rec-4"))[ATTR.claimSort],
            undefined,
            "a completed record must stay out of ClaimIndex",
        );

        const again = await runCli(["migrate", "--table", table, "--apply"]);
        assert.equal(again.code, 0);
        assert.match(
            again.stdout,
            /nothing to do: the table matches the schema and no record needs a backfill \(6 item\(s\) scanned\)/,
        );
    });

    it("after the backfill the backlog is counted, claimed oldest first, and expired by the sweep", async () => {
        assert.equal(await store.countPending(PARTITION), 3);
        assert.equal(await store.countClaimed(PARTITION), 1);
        assert.equal(await store.expire(T0 + 120_000, PARTITION, { owner: "sweeper", version: 8n }), 1);
        const claimed = await store.claim(PARTITION, { owner: "relay-b", version: 8n }, 10);
        assert.deepEqual(
            claimed.map((r) => r.recordId),
            ["rec-1", "rec-3", "rec-5"],
        );
    });

    it("--apply --expiry-shards 8 gives has_expiry the shard the writers would have chosen and raises the table's mark, so a store left at 1 expires it", async () => {
        const other = await createOutboxTable({}, "cli-shards");
        try {
            await put(client, other, oldBuildItem(pendingRecord(newRecord(9, T0 + 60_000), 1n, T0)));
            const run = await runCli(["migrate", "--table", other, "--apply", "--expiry-shards", "8"]);
            assert.equal(run.code, 0, run.stdout + run.stderr);
            assert.equal((await attributes(client, other, "rec-9"))[ATTR.hasExpiry]?.S, hasExpiryValue("rec-9", 8));
            assert.notEqual(hasExpiryValue("rec-9", 8), "1");
            const mark = await client.send(
                new GetItemCommand({ TableName: other, Key: expiryShardsRowKey(), ConsistentRead: true }),
            );
            assert.equal(mark.Item?.[ATTR.maxExpiryShards]?.N, "8");
            const unsharded = new OutboxStore({
                client,
                tableName: other,
                clock: { now: () => now.ms, sleep: async () => undefined },
            });
            assert.equal(await unsharded.expire(T0 + 120_000, PARTITION, { owner: "sweeper", version: 1n }), 1);
        } finally {
            await dropTable(other);
        }
    });

    it("skips a record that turned terminal between the Scan and its update (the condition holds the line)", async () => {
        const other = await createOutboxTable({}, "cli-race");
        try {
            await put(client, other, oldBuildItem(pendingRecord(newRecord(8), 1n, T0)));
            // Fault injection no emulator can time: complete the record right before the backfill's update reaches it.
            const racing = {
                send: async (command: object): Promise<unknown> => {
                    if (command instanceof UpdateItemCommand) {
                        await client.send(
                            new UpdateItemCommand({
                                TableName: other,
                                Key: command.input.Key,
                                UpdateExpression: "SET #status = :completed",
                                ExpressionAttributeNames: { "#status": ATTR.status },
                                ExpressionAttributeValues: { ":completed": { S: STATUS.completed } },
                            }),
                        );
                    }
                    return client.send(command as never);
                },
            } as unknown as DynamoDBClient;
            const totals = await backfillIndexAttributes(racing, other, {
                pageSize: 100,
                apply: true,
                onPage: () => undefined,
            });
            assert.deepEqual(
                { matched: totals.matched, set: totals.claimSortSet, skipped: totals.skipped },
                { matched: 1, set: 0, skipped: 1 },
            );
            const item = (
                await client.send(
                    new GetItemCommand({
                        TableName: other,
                        Key: { [ATTR.pk]: { S: PARTITION }, [ATTR.sk]: { S: "OUTBOX#env-8#orders" } },
                        ConsistentRead: true,
                    }),
                )
            ).Item;
            assert.equal(item?.[ATTR.claimSort], undefined, "a completed record must not re-enter ClaimIndex");
        } finally {
            await dropTable(other);
        }
    });
});
