/**
 * The two-region stand-in for a global table (`dev/emulators/global-table.ts`) itself: two DynamoDB Locals and the
 * replicator between their streams. It is a stand-in, so these tests pin what it claims to model, nothing more.
 */
import assert from "node:assert/strict";
import { DeleteItemCommand, GetItemCommand, PutItemCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { startTwoRegionStandIn, type TwoRegionStandIn } from "../../../dev/emulators/global-table";
import { OutboxStore } from "../../../runtime/store";
import { ATTR } from "../../../runtime/schema";

describe("the two-region global table stand-in", function () {
    this.timeout(120_000);
    let standIn: TwoRegionStandIn;
    let table = 0;

    before(async function () {
        standIn = await startTwoRegionStandIn();
    });
    after(async function () {
        await standIn?.stop();
    });

    async function createTable(): Promise<string> {
        table += 1;
        const tableName = `global-${table}`;
        for (const r of standIn.regions) await new OutboxStore({ client: r.ddb, tableName }).createTable();
        return tableName;
    }

    /** A fresh table in both regions, replicated for the span of `run`: the replicator is stopped after, whatever happens. */
    async function replicated(
        options: Parameters<TwoRegionStandIn["startReplicator"]>[1],
        run: (tableName: string, replicator: Awaited<ReturnType<TwoRegionStandIn["startReplicator"]>>) => Promise<void>,
    ): Promise<void> {
        const tableName = await createTable();
        const replicator = await standIn.startReplicator(tableName, options);
        try {
            await run(tableName, replicator);
        } finally {
            await replicator.stop();
        }
    }

    const key = (pk: string) => ({ [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: "ITEM" } });
    async function valueIn(region: string, tableName: string, pk: string): Promise<string | undefined> {
        const item = (
            await standIn
                .region(region)
                .ddb.send(new GetItemCommand({ TableName: tableName, Key: key(pk), ConsistentRead: true }))
        ).Item;
        return item?.value?.S;
    }
    async function put(region: string, tableName: string, pk: string, value: string): Promise<void> {
        await standIn
            .region(region)
            .ddb.send(new PutItemCommand({ TableName: tableName, Item: { ...key(pk), value: { S: value } } }));
    }

    it("keeps the regions apart without a replicator: two DynamoDB Locals", async function () {
        const tableName = await createTable();
        await put("us-east-1", tableName, "ALONE", "a");
        assert.equal(await valueIn("us-west-2", tableName, "ALONE"), undefined);
    });

    it("replicates a write in A to B and a delete in B to A, and writes nothing back (no endless echo)", async function () {
        await replicated({}, async (tableName, replicator) => {
            await put("us-east-1", tableName, "ORDER#1", "one");
            await replicator.waitIdle();
            assert.equal(await valueIn("us-west-2", tableName, "ORDER#1"), "one");
            assert.deepEqual(
                { applied: replicator.stats().applied, echoes: replicator.stats().echoesSkipped },
                { applied: 1, echoes: 1 },
                "applied once in B; B's stream record of it was recognised and not sent back",
            );
            await standIn
                .region("us-west-2")
                .ddb.send(new DeleteItemCommand({ TableName: tableName, Key: key("ORDER#1") }));
            await replicator.waitIdle();
            assert.equal(await valueIn("us-east-1", tableName, "ORDER#1"), undefined);
            const settled = replicator.stats();
            await new Promise((r) => setTimeout(r, 200));
            await replicator.waitIdle();
            assert.deepEqual(replicator.stats(), settled, "nothing more is read or written once both converged");
            assert.deepEqual({ applied: settled.applied, echoes: settled.echoesSkipped }, { applied: 2, echoes: 2 });
        });
    });

    it("resolves concurrent writes of one item last-writer-wins: both regions converge on the later write", async function () {
        await replicated({ delayMs: 300 }, async (tableName, replicator) => {
            // Both writes land before either replicates: a true conflict.
            await put("us-east-1", tableName, "X", "from-a-first");
            await new Promise((r) => setTimeout(r, 60));
            await put("us-west-2", tableName, "X", "from-b-later");
            await put("us-west-2", tableName, "Y", "from-b-first");
            await new Promise((r) => setTimeout(r, 60));
            await put("us-east-1", tableName, "Y", "from-a-later");
            await replicator.waitIdle();
            for (const region of ["us-east-1", "us-west-2"]) {
                assert.equal(await valueIn(region, tableName, "X"), "from-b-later", `X in ${region}`);
                assert.equal(await valueIn(region, tableName, "Y"), "from-a-later", `Y in ${region}`);
            }
            assert.equal(replicator.stats().lostConflicts, 2, "each earlier write lost once, in the other region");
        });
    });

    it("converges many interleaved writes of a few items from both regions to the same table contents", async function () {
        await replicated({ delayMs: 20 }, async (tableName, replicator) => {
            for (let n = 0; n < 60; n += 1)
                await put(n % 2 === 0 ? "us-east-1" : "us-west-2", tableName, `K${n % 5}`, `v${n}`);
            await replicator.waitIdle();
            const contents = await Promise.all(
                standIn.regions.map(async (r) =>
                    ((await r.ddb.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? [])
                        .map((i) => `${i[ATTR.pk]?.S}=${i.value?.S}`)
                        .sort(),
                ),
            );
            assert.deepEqual(contents[0], contents[1]);
            assert.equal(contents[0]!.length, 5);
        });
    });

    it("a region cut off from replication sends none of the writes read while it is cut off", async function () {
        await replicated({}, async (tableName, replicator) => {
            replicator.setRegionReplicating("us-east-1", false);
            await put("us-east-1", tableName, "CUT", "a");
            await replicator.waitIdle();
            assert.equal(await valueIn("us-west-2", tableName, "CUT"), undefined);
            assert.throws(() => replicator.setRegionReplicating("eu-west-1", false), /no region eu-west-1/);
        });
    });
});
