/**
 * The outbox on a global table, on the two-region stand-in (`dev/emulators/global-table.ts`: two DynamoDB Locals and
 * a replicator between their streams; a stand-in, not AWS). Each region runs the publisher on its own stream through
 * the local mapping; both publish to one topic, so every publication is counted.
 *
 * The "before" case keeps today's single-region setup (no origin stamp, today's filter) and records what it does on
 * a global table: each event is published once per region, twice here.
 */
import assert from "node:assert/strict";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { ATTR, streamFilterPatterns, type OriginScope } from "../../../runtime/schema";
import type { OutboxWriter } from "../../../runtime/writer/writer";
import { adoptRegion } from "../../../runtime/store";
import type { FilterPattern } from "../../../runtime/testing/filter-pattern";
import { preserveEnvironment } from "../../support/local-environment";
import {
    SINGLE_REGION_FILTER,
    startGlobalWorld,
    writeAcrossRegions,
    type GlobalWorld,
    type WrittenEvent,
} from "../../support/global-table";

const [A, B] = ["us-east-1", "us-west-2"] as const;

/** Region A is home: it also delivers unstamped records and those of no known region. */
const SCOPES: Record<string, OriginScope> = {
    [A]: { region: A, otherRegions: [B], home: true },
    [B]: { region: B, otherRegions: [A], home: false },
};

/** The filters the mapping of `region` gets, as the component would provision them. */
function filtersOf(region: string): FilterPattern[] {
    return streamFilterPatterns(SCOPES[region]) as FilterPattern[];
}

/** Start both regions' relays with their origin scopes and filters. */
async function scopedRelays(world: GlobalWorld, tableName: string) {
    return [
        await world.relay(A, tableName, filtersOf(A), { origin: SCOPES[A] }),
        await world.relay(B, tableName, filtersOf(B), { origin: SCOPES[B] }),
    ];
}

/** Drain both relays until both regions converged and nothing more is published. */
async function settle(
    world: GlobalWorld,
    replicator: { waitIdle(ms?: number): Promise<void> },
    relays: { drain(o?: { timeoutMs?: number }): Promise<void> }[],
): Promise<void> {
    for (let round = 0; round < 3; round += 1) {
        await Promise.all(relays.map((r) => r.drain({ timeoutMs: 120_000 })));
        await replicator.waitIdle(60_000);
    }
}

/** Each (region, key)'s first deliveries in write order: no inversion within a region's key. */
function assertNoInversion(published: readonly string[], written: readonly WrittenEvent[], minGroups = 4): void {
    const firstAt = new Map<string, number>();
    published.forEach((id, i) => {
        if (!firstAt.has(id)) firstAt.set(id, i);
    });
    const groups = new Map<string, string[]>();
    for (const w of written)
        if (w.key !== undefined) {
            const group = `${w.region}|${w.partition}|${w.key}`;
            groups.set(group, [...(groups.get(group) ?? []), w.id]);
        }
    assert.ok(groups.size >= minGroups, "keys written from both regions");
    for (const [group, ids] of groups) {
        const order = [...ids].sort((x, y) => firstAt.get(x)! - firstAt.get(y)!);
        assert.deepEqual(order, ids, `first deliveries of ${group} in write order`);
    }
}

/** The event count of the done-when test: `GLOBAL_EVENTS`, or 200 in `npm test` (the bench script runs 1,000). */
const EVENTS = Number(process.env.GLOBAL_EVENTS ?? 200);

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

    it(`with origin stamps: ${EVENTS} events written across both regions (keyed and keyless), replicating while both relays run, are each published exactly once, with no inversion within a region's key`, async function () {
        const { tableName, replicator } = await world.table("stamped", 25);
        const before = world.publishedIds().length;
        const relays = await scopedRelays(world, tableName);
        const written = await writeAcrossRegions(
            { [A]: world.writer(A, tableName, { region: A }), [B]: world.writer(B, tableName, { region: B }) },
            EVENTS,
        );
        await settle(world, replicator, relays);
        const published = world.publishedIds().slice(before);
        const counts = new Map<string, number>();
        for (const id of published) counts.set(id, (counts.get(id) ?? 0) + 1);
        assert.equal(counts.size, written.length, "every event was published");
        const twice = written.filter((w) => counts.get(w.id) !== 1);
        assert.deepEqual(twice, [], "no event published more than once");
        assertNoInversion(published, written);
        assert.ok(replicator.stats().applied >= 2 * EVENTS, "every record and its completion replicated");
        await replicator.stop();
    });

    it("with homed keys (keyHoming), each region's writer refuses its writes of the other region's keys, writing nothing of them; each key's deliveries, all from its home region, come in one write order across regions", async function () {
        const { tableName, replicator } = await world.table("homed", 25);
        const before = world.publishedIds().length;
        const relays = await scopedRelays(world, tableName);
        const keyHoming = { regions: [A, B], homeOf: { "ACCOUNT#0": A, "ACCOUNT#1": B } };
        const writers: Record<string, OutboxWriter> = {
            [A]: world.writer(A, tableName, { region: A, keyHoming }),
            [B]: world.writer(B, tableName, { region: B, keyHoming }),
        };
        const written: WrittenEvent[] = [];
        let refused = 0;
        for (let n = 0; n < 80; n += 1) {
            // Both regions write both keys, interleaved: half of the writes are foreign.
            const region = n % 2 === 0 ? A : B;
            const partition = `ACCOUNT#${Math.floor(n / 2) % 2}`;
            const key = `acct-${Math.floor(n / 4) % 2}`;
            const request = {
                messages: [{ partition, type: "T", payload: { n, region }, orderingKey: key }],
            };
            try {
                const { messageIds } = await writers[region]!.write(request);
                written.push({ id: messageIds[0]!, region, partition, key });
            } catch (err) {
                assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
                assert.equal(err.context.homeRegion, keyHoming.homeOf[partition as "ACCOUNT#0"]);
                assert.notEqual(err.context.homeRegion, region);
                refused += 1;
            }
        }
        assert.deepEqual([written.length, refused], [40, 40], "every foreign write refused, every homed one written");
        await settle(world, replicator, relays);
        for (const r of world.standIn.regions) {
            const out = await r.ddb.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
            const records = (out.Items ?? []).filter((i) => i[ATTR.sk]?.S?.startsWith("OUTBOX#"));
            assert.deepEqual(
                records.map((i) => i[ATTR.recordId]?.S).sort(),
                written.map((w) => w.id).sort(),
                `${r.region} holds the homed writes' records and nothing of the refused ones`,
            );
        }
        const published = world.publishedIds().slice(before);
        assert.deepEqual([...published].sort(), written.map((w) => w.id).sort(), "each published once");
        // One order per key across regions: grouped by partition and key alone, whatever the region.
        for (const partition of ["ACCOUNT#0", "ACCOUNT#1"])
            for (const key of ["acct-0", "acct-1"]) {
                const ids = written.filter((w) => w.partition === partition && w.key === key).map((w) => w.id);
                assert.ok(ids.length >= 5, `${partition}/${key} written`);
                assert.deepEqual(
                    published.filter((id) => ids.includes(id)),
                    ids,
                    `${partition}/${key}: delivered in write order, one order across regions`,
                );
            }
        await replicator.stop();
    });

    it("each region's sweeper takes only its own region's records: B's sweep leaves A's pending and expired records to A's", async function () {
        const { tableName, replicator } = await world.table("sweep-scope");
        const before = world.publishedIds().length;
        const writtenInA = await writeAcrossRegions({ [A]: world.writer(A, tableName, { region: A }) }, 9);
        const expiring = (
            await world.writer(A, tableName, { region: A }).write({
                messages: [{ partition: "ORDER#X", type: "T", payload: "x", expiresAt: new Date(Date.now() + 50) }],
            })
        ).messageIds[0]!;
        await replicator.waitIdle();
        await new Promise((r) => setTimeout(r, 1_100)); // past sweepAfterSeconds 1 and the expiry
        const fromB = await world.sweep(B, tableName, { sweepAfterSeconds: 1, origin: SCOPES[B] });
        assert.deepEqual([fromB.published, fromB.deadLettered], [0, 0], "B delivered none of A's records");
        assert.deepEqual(world.publishedIds().slice(before), []);
        assert.ok(!world.deadLetteredIds().includes(expiring), "nor dead-lettered A's expired one");
        const fromA = await world.sweep(A, tableName, { sweepAfterSeconds: 1, origin: SCOPES[A] });
        assert.equal(fromA.published, writtenInA.length);
        assert.deepEqual(
            [...world.publishedIds().slice(before)].sort(),
            writtenInA.map((w) => w.id).sort(),
            "A's sweep delivered them, once",
        );
        assert.ok(world.deadLetteredIds().includes(expiring), "A's sweep dead-lettered the expired one");
        await replicator.stop();
    });

    it("a scoped publisher behind a wider filter (today's) ignores another region's records and counts them", async function () {
        const { tableName, replicator } = await world.table("wide-filter");
        const before = world.publishedIds().length;
        await writeAcrossRegions({ [A]: world.writer(A, tableName, { region: A }) }, 6);
        await replicator.waitIdle();
        const lines: string[] = [];
        const relay = await world.relay(B, tableName, SINGLE_REGION_FILTER, {
            origin: SCOPES[B],
            writeMetrics: (line) => lines.push(line),
        });
        await relay.drain({ timeoutMs: 60_000 });
        assert.equal(relay.stats().recordsSucceeded, 6, "the wide filter passed A's records to B's publisher");
        assert.deepEqual(world.publishedIds().slice(before), [], "which published none of them");
        const ignored = lines.map((l) => (JSON.parse(l) as { IgnoredRecords?: number }).IgnoredRecords ?? 0);
        assert.equal(
            ignored.reduce((a, b) => a + b, 0),
            6,
            "each counted as IgnoredRecords",
        );
        await replicator.stop();
    });

    it("takeover: with A's relay stopped and records pending, adoptRegion from A in B (then B's sweep) delivers them once; when A's relay comes back it publishes none of them", async function () {
        const { tableName, replicator } = await world.table("takeover");
        const before = world.publishedIds().length;
        // A's relay never ran: everything A wrote is pending, in both regions.
        const writtenInA = await writeAcrossRegions({ [A]: world.writer(A, tableName, { region: A }) }, 24);
        await replicator.waitIdle();
        const adopted = await adoptRegion({ client: world.standIn.region(B).ddb, tableName, from: A, to: B });
        assert.deepEqual(adopted, { adopted: 24, inFlight: 0, moved: 0, failedPartitions: 0 });
        assert.deepEqual(
            await adoptRegion({ client: world.standIn.region(B).ddb, tableName, from: A, to: B }),
            { adopted: 0, inFlight: 0, moved: 0, failedPartitions: 0 },
            "a second run finds nothing left",
        );
        // A comes back before B delivers: its stream still carries the INSERTs stamped A.
        await replicator.waitIdle();
        const relayA = await world.relay(A, tableName, filtersOf(A), { origin: SCOPES[A] });
        await relayA.drain({ timeoutMs: 60_000 });
        assert.ok(relayA.stats().recordsSucceeded >= 24, "A's relay read its own INSERTs");
        assert.deepEqual(world.publishedIds().slice(before), [], "and published none: they are B's now");
        await new Promise((r) => setTimeout(r, 1_100)); // past sweepAfterSeconds 1
        const sweep = await world.sweep(B, tableName, { sweepAfterSeconds: 1, origin: SCOPES[B] });
        assert.equal(sweep.published, 24);
        await replicator.waitIdle();
        await relayA.drain({ timeoutMs: 60_000 });
        const published = world.publishedIds().slice(before);
        assert.deepEqual([...published].sort(), writtenInA.map((w) => w.id).sort(), "each once, by B");
        assertNoInversion(
            published,
            writtenInA.map((w) => ({ ...w, region: B })),
            1,
        );
        await assert.rejects(
            adoptRegion({ client: world.standIn.region(B).ddb, tableName, from: B, to: B }),
            /adopt: from and to are both us-west-2/,
        );
        await replicator.stop();
    });

    it("unstamped records (an older writer's, or one without a region) are delivered once, by the home region", async function () {
        const restore = preserveEnvironment(["AWS_REGION"]);
        delete process.env.AWS_REGION;
        try {
            const { tableName, replicator } = await world.table("unstamped", 10);
            const before = world.publishedIds().length;
            const relays = await scopedRelays(world, tableName);
            const written = await writeAcrossRegions(
                { [A]: world.writer(A, tableName), [B]: world.writer(B, tableName) },
                30,
            );
            await settle(world, replicator, relays);
            const published = world.publishedIds().slice(before);
            assert.deepEqual([...published].sort(), written.map((w) => w.id).sort(), "each once");
            assert.equal(relays[1]!.stats().recordsSucceeded, 0, "region B's filter passed none of them");
            await replicator.stop();
        } finally {
            restore();
        }
    });

    it("a record stamped with a region that is none of the table's is delivered once, by the home region, not dropped", async function () {
        const { tableName, replicator } = await world.table("stray-stamp", 10);
        const before = world.publishedIds().length;
        const relays = await scopedRelays(world, tableName);
        const written = await writeAcrossRegions({ [B]: world.writer(B, tableName, { region: "eu-west-1" }) }, 12);
        await settle(world, replicator, relays);
        const published = world.publishedIds().slice(before);
        assert.deepEqual([...published].sort(), written.map((w) => w.id).sort(), "each once");
        await replicator.stop();
    });
});
