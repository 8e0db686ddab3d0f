/**
 * The outbox on a global table, on the two-region stand-in (`dev/emulators/global-table.ts`: two DynamoDB Locals and
 * a replicator between their streams; a stand-in, not AWS). Each region runs the publisher on its own stream through
 * the local mapping; both publish to one topic, so every publication is counted.
 *
 * The "before" case keeps today's single-region setup (no origin stamp, today's filter) and records what it does on
 * a global table: each event is published once per region, twice here.
 */
import assert from "node:assert/strict";
import {
    SINGLE_REGION_FILTER,
    startGlobalWorld,
    writeAcrossRegions,
    type GlobalWorld,
} from "../../support/global-table";

const [A, B] = ["us-east-1", "us-west-2"] as const;

describe("the outbox on a global table (two-region stand-in)", function () {
    this.timeout(180_000);
    let world: GlobalWorld;

    before(async function () {
        world = await startGlobalWorld();
    });
    after(async function () {
        await world?.stop();
    });

    it("before origin stamps: with today's filter and writers, each region publishes every event, so each is published twice", async function () {
        const { tableName, replicator } = await world.table("before-stamps");
        const written = await writeAcrossRegions(
            { [A]: world.writer(A, tableName), [B]: world.writer(B, tableName) },
            60,
        );
        // Both regions hold every record, pending; then replication slows so that neither region's completions reach
        // the other before its own relay has run (what a busy table sees every time, made certain here).
        await replicator.waitIdle();
        replicator.setDelay(60_000);
        const relays = [
            await world.relay(A, tableName, SINGLE_REGION_FILTER),
            await world.relay(B, tableName, SINGLE_REGION_FILTER),
        ];
        await Promise.all(relays.map((r) => r.drain({ timeoutMs: 60_000 })));
        const counts = world.publications();
        assert.equal(counts.size, written.length, "every event was published");
        assert.deepEqual(
            [...new Set(written.map((w) => counts.get(w.id)))],
            [2],
            "every event, keyed or keyless, from either region, was published twice: once per region",
        );
        await replicator.stop();
    });
});
