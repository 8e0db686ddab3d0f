/**
 * DynamoDB-specific store tests (reference §11.3) on DynamoDB Local: the stored attributes, TTL placement, the
 * cold-seed race, deep backlogs and concurrency. Each test has its own table.
 */
import {
    BatchWriteItemCommand,
    DescribeTableCommand,
    DescribeTimeToLiveCommand,
    GetItemCommand,
    PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import { marshalRecord, pendingRecord, recordKey, unmarshalRecord } from "../../../runtime/record/codec";
import { fenceKey } from "../../../runtime/record/fence";
import { OutboxStore } from "../../../runtime/store";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { FakeClock, ids, localStore, rec, rejectsWith, tok } from "../../support/store/helpers";

async function rawItem(tableName: string, key: ReturnType<typeof recordKey>) {
    const client = await dynamoClient();
    return (await client.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
}

/** Envelope ids that sort against age: the oldest record gets the lexically largest id. */
function adversarialId(i: number, n: number): string {
    return `${String.fromCharCode(122 - (i % 26))}${String(n - i).padStart(4, "0")}`;
}

describe("store on DynamoDB Local (§11.3)", () => {
    it("a clock that reads fractional milliseconds is floored: persist, claim, release and claim again, with whole ms stored", async () => {
        // performance.timeOrigin + performance.now() reads like this; a stored "1767225600000.5" would fail the next decode.
        const clock = new FakeClock(Date.UTC(2026, 0, 1) + 0.5);
        const { store, tableName } = await localStore({ clock });
        await store.persist([rec("P", 1)]);
        const [first] = await store.claim("P", tok(1), 1);
        assert.equal(first.claimedAt, Date.UTC(2026, 0, 1));
        await store.release([first.recordId], tok(1));
        clock.advance(1000.25);
        const [again] = await store.claim("P", tok(1), 1);
        assert.deepEqual([again.recordId, again.replayCount], [first.recordId, 2]);
        const item = (await rawItem(tableName, recordKey("P", "env-1", "topic")))!;
        assert.deepEqual(
            [item.created_at, item.first_attempted_at, item.claimed_at],
            [{ N: "1767225600000" }, { N: "1767225600000" }, { N: "1767225601000" }],
        );
        await store.complete([again.recordId], tok(1));
        const done = (await rawItem(tableName, recordKey("P", "env-1", "topic")))!;
        assert.deepEqual([done.completed_at, done.ttl], [{ N: "1767225601000" }, { N: String(1767225601 + 3600) }]);
    });

    it("a clock that reads NaN fails the operation with INVALID_CONFIG naming clock.now(), and writes nothing", async () => {
        const { store, tableName } = await localStore();
        const broken = new OutboxStore({
            client: await dynamoClient(),
            tableName,
            clock: new FakeClock(Number.NaN),
            staleClaimMs: 0,
        });
        await rejectsWith(
            broken.persist([rec("P", 1)]),
            "INVALID_CONFIG",
            /clock.now\(\) returned NaN; it must return epoch milliseconds as a finite number/,
        );
        assert.deepEqual(await store.queryPending("P", 10), []);
    });

    it("a redelivered duplicate keeps the ORIGINAL payload", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1, {}, { payload: '{"v":"original"}' })]);
        await rejectsWith(store.persist([rec("P", 1, {}, { payload: '{"v":"redelivered"}' })]), "DUPLICATE_RECORD");
        const item = await rawItem(tableName, recordKey("P", "env-1", "topic"));
        assert.equal(unmarshalRecord(item!).envelope.payload, '{"v":"original"}');
    });

    it("fan-out partial overlap persists the new legs and rolls nothing back", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1, { bindingId: "b1", recordId: "r1" })]);
        const result = await store.persist(
            ["b1", "b2", "b3"].map((b) => rec("P", 1, { bindingId: b, recordId: `r-${b}` })),
        );
        assert.deepEqual(result, { written: 2, duplicates: 1 });
        assert.deepEqual((await store.queryPending("P", 10)).map((r) => r.recordId).sort(), ["r-b2", "r-b3", "r1"]);
    });

    it("concurrent claims with different versions never double-claim; losers only ever see STALE_FENCING_TOKEN", async () => {
        const { store, tableName } = await localStore();
        await store.persist(Array.from({ length: 12 }, (_, i) => rec("P", i)));
        const outcomes = await Promise.allSettled([1, 2, 3, 4].map((v) => store.claim("P", tok(v, `o${v}`), 12)));
        for (const o of outcomes)
            if (o.status === "rejected") assert.ok(isOutboxError(o.reason, "STALE_FENCING_TOKEN"), String(o.reason));
        // Whoever holds a record now must match the stored owner/version exactly.
        for (let i = 0; i < 12; i++) {
            const r = unmarshalRecord((await rawItem(tableName, recordKey("P", `env-${i}`, "topic")))!);
            if (r.status === "claimed") assert.equal(`o${r.claimVersion}`, r.claimedBy);
        }
        await store.claim("P", tok(4, "o4"), 12);
        assert.equal(await store.countClaimed("P"), 12, "the highest version holds everything");
        for (let i = 0; i < 12; i++)
            assert.equal(
                unmarshalRecord((await rawItem(tableName, recordKey("P", `env-${i}`, "topic")))!).claimVersion,
                4n,
            );
        await rejectsWith(
            store.claim("P", tok(3, "o3"), 1),
            "STALE_FENCING_TOKEN",
            /claim rejected: token version is stale/,
        );
    });

    it("replay count increments on a version reclaim; completing with the older version is STALE", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        const [a] = await store.claim("P", tok(1), 1);
        const [b] = await store.claim("P", tok(2), 1);
        assert.deepEqual([a.replayCount, b.replayCount], [1, 2]);
        await rejectsWith(store.complete([a.recordId], tok(1)), "STALE_FENCING_TOKEN");
        await store.complete([b.recordId], tok(2));
    });

    it("expire finds nothing when no record has an expiry (sparse ExpiryIndex)", async () => {
        const { store, clock } = await localStore();
        await store.persist([rec("P", 1), rec("P", 2)]);
        assert.equal(await store.expire(clock.now() + 86_400_000, "P", tok(1)), 0);
        assert.equal(await store.countPending("P"), 2);
    });

    it("full lifecycle with expiry: has_expiry but no ttl while pending; completion removes has_expiry/claim_sort and sets ttl = now + grace", async () => {
        const { store, clock, tableName } = await localStore({ compactionGraceSeconds: 7200 });
        await store.persist([rec("P", 1, {}, { expiresAt: clock.now() + 60_000 })]);
        const key = recordKey("P", "env-1", "topic");
        const pending = (await rawItem(tableName, key))!;
        assert.deepEqual(pending.has_expiry, { S: "1" });
        assert.ok(pending.claim_sort?.S);
        assert.equal(pending.ttl, undefined, "pending records never carry ttl");
        const [r] = await store.claim("P", tok(1), 1);
        assert.equal((await rawItem(tableName, key))!.ttl, undefined, "claimed records never carry ttl");
        clock.advance(1500);
        await store.complete([r.recordId], tok(1));
        const done = (await rawItem(tableName, key))!;
        assert.equal(done.has_expiry, undefined);
        assert.equal(done.claim_sort, undefined);
        assert.deepEqual(done.ttl, { N: String(Math.floor(clock.now() / 1000) + 7200) });
        assert.deepEqual(done.completed_at, { N: String(clock.now()) });
        assert.equal(
            await store.expire(clock.now() + 120_000, "P", tok(1)),
            0,
            "a completed record is not in ExpiryIndex",
        );
    });

    it("expire sets ttl = cutoff + grace (not now), removes has_expiry and claim_sort, and keeps completed_at 0", async () => {
        const { store, clock, tableName } = await localStore({ compactionGraceSeconds: 100 });
        await store.persist([
            rec("P", 1, {}, { expiresAt: clock.now() + 1000 }),
            rec("P", 2, {}, { expiresAt: clock.now() + 9000 }),
        ]);
        const cutoff = clock.now() + 5000;
        assert.equal(await store.expire(cutoff, "P", tok(1)), 1);
        const expired = (await rawItem(tableName, recordKey("P", "env-1", "topic")))!;
        assert.deepEqual(
            [expired.status, expired.ttl, expired.completed_at],
            [{ S: "expired" }, { N: String(Math.floor(cutoff / 1000) + 100) }, { N: "0" }],
        );
        assert.equal(expired.has_expiry, undefined);
        assert.equal(expired.claim_sort, undefined);
        assert.equal(
            (await rawItem(tableName, recordKey("P", "env-2", "topic")))!.status?.S,
            "pending",
            "expires_at after the cutoff stays",
        );
    });

    it("an accepted expire raises the fence even when nothing expired; a lower token is then STALE", async () => {
        const { store } = await localStore();
        assert.equal(await store.expire(Date.UTC(2030, 0, 1), "P", tok(7)), 0);
        await rejectsWith(store.claim("P", tok(6), 1), "STALE_FENCING_TOKEN");
        await rejectsWith(
            store.expire(Date.UTC(2030, 0, 1), "P", tok(6)),
            "STALE_FENCING_TOKEN",
            /expire rejected: token version is stale/,
        );
    });

    it("dispatch headers and the envelope's payload, subject and headers round-trip through claim", async () => {
        const { store } = await localStore();
        const headers = { "x-bridge.correlation-id": "c-1", traceparent: "00-abc-01", count: 3 };
        await store.persist([
            rec(
                "P",
                1,
                { dispatchHeaders: { "content-type": "application/json", "x-a": "<&>" } },
                { subject: "OrderPlaced", payload: '{"é":"✓"}', headers },
            ),
        ]);
        const [r] = await store.claim("P", tok(1), 1);
        assert.deepEqual(r.dispatchHeaders, { "content-type": "application/json", "x-a": "<&>" });
        assert.deepEqual(
            [r.envelope.subject, r.envelope.payload, r.envelope.headers],
            ["OrderPlaced", '{"é":"✓"}', headers],
        );
    });

    it("createTable is idempotent, creates the schema's indexes and enables TTL on ttl", async () => {
        const client = await dynamoClient();
        const tableName = uniqueTableName("create");
        const store = new OutboxStore({ client, tableName });
        await store.createTable();
        await store.createTable();
        const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table!;
        assert.deepEqual(table.GlobalSecondaryIndexes!.map((g) => g.IndexName).sort(), [
            "ClaimIndex",
            "ExpiryIndex",
            "RecordIDIndex",
        ]);
        assert.equal(table.StreamSpecification?.StreamViewType, "NEW_IMAGE");
        const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
        assert.deepEqual(
            [ttl.TimeToLiveDescription?.AttributeName, ttl.TimeToLiveDescription?.TimeToLiveStatus],
            ["ttl", "ENABLED"],
        );
        assert.equal(await store.preflight(), "verified");
    });

    it("the FENCE row: persist allocates seq_counter with a ≥30-day ttl; a claim at a higher version adds max_claim_version and refreshes the ttl", async () => {
        const { store, clock, tableName } = await localStore();
        await store.persist([rec("P", 1), rec("P", 2), rec("Q", 1)]);
        const fence = (await rawItem(tableName, fenceKey("P")))!;
        assert.deepEqual(fence.seq_counter, { N: "2" });
        assert.equal(fence.max_claim_version, undefined);
        assert.deepEqual(fence.ttl, { N: String(Math.floor(clock.now() / 1000) + 30 * 86400) });
        clock.advance(86_400_000);
        await store.claim("P", tok(9), 1);
        const raised = (await rawItem(tableName, fenceKey("P")))!;
        assert.deepEqual(raised.max_claim_version, { N: "9" });
        assert.deepEqual(
            raised.ttl,
            { N: String(Math.floor(clock.now() / 1000) + 30 * 86400) },
            "a fence raise refreshes the ttl",
        );
        const raisedTtl = raised.ttl;
        // Same version again: the raise's condition (strictly greater) fails, so the ttl is not refreshed (as in GoBridge).
        clock.advance(86_400_000);
        await store.claim("P", tok(9), 0);
        assert.deepEqual((await rawItem(tableName, fenceKey("P")))!.ttl, raisedTtl);
        const seqs = (await store.queryPending("P", 10)).map((r) => r.seq);
        assert.deepEqual(seqs, [2n]);
    });

    for (const keyed of [false, true]) {
        it(`a deep backlog (60 records, limit 5, adversarial envelope ids${keyed ? ", one ordering key" : ""}) drains strictly in age order`, async () => {
            const { store } = await localStore();
            const t0 = Date.UTC(2026, 0, 1);
            const n = 60;
            // Persisted in a shuffled order so neither SK order nor persist order matches age.
            const order = Array.from({ length: n }, (_, i) => (i * 37) % n);
            await store.persist(
                order.map((i) =>
                    rec("P", adversarialId(i, n), { createdAt: t0 + i * 10, ...(keyed ? { orderingKey: "K" } : {}) }),
                ),
            );
            const drained: string[] = [];
            for (let round = 0; round < 20 && drained.length < n; round++) {
                const batch = await store.claim("P", tok(1), 5);
                assert.ok(batch.length <= 5);
                await store.complete(
                    batch.map((r) => r.recordId),
                    tok(1),
                );
                drained.push(...ids(batch));
            }
            assert.deepEqual(
                drained,
                Array.from({ length: n }, (_, i) => `env-${adversarialId(i, n)}`),
            );
        });
    }

    it("claim's skip leaves the held keys and records pending and reaches the records after them, past the retention cut: the scan path (keys) and the index path (keyless)", async () => {
        const { store } = await localStore();
        const t0 = Date.UTC(2026, 0, 1);
        // Key H holds 40 records, more than the scan keeps (3 × limit 5), all older than key K's.
        await store.persist([
            ...Array.from({ length: 40 }, (_, i) => rec("P", `h${i}`, { createdAt: t0 + i, orderingKey: "H" })),
            rec("P", "k0", { createdAt: t0 + 100, orderingKey: "K" }),
            rec("P", "free", { createdAt: t0 + 101 }),
        ]);
        const skip = { orderingKeys: new Set(["H"]), recordIds: new Set<string>() };
        assert.deepEqual(ids(await store.claim("P", tok(1), 5, { skip })), ["env-k0", "env-free"]);
        assert.deepEqual(ids(await store.claim("P", tok(1), 5)).slice(0, 2), ["env-h0", "env-h1"], "without skip");
        // Keyless records only: the ClaimIndex path.
        await store.persist([0, 1, 2].map((i) => rec("Q", `q${i}`, { createdAt: t0 + i })));
        const q = await store.claim("Q", tok(1), 2, {
            skip: { orderingKeys: new Set(), recordIds: new Set(["Q/rec-q0"]) },
        });
        assert.deepEqual(ids(q), ["env-q1", "env-q2"]);
        const pending = await store.queryPending("Q", 10);
        assert.deepEqual(ids(pending), ["env-q0"], "the skipped record is left pending");
    });

    it("cold-seed race: 8 owners at the same version on a partition with no FENCE claim each of 25 records once; a stale token is then rejected", async () => {
        const client = await dynamoClient();
        const { store, tableName } = await localStore({ client });
        const t0 = Date.UTC(2026, 0, 1);
        // Records left behind by a v3 owner whose FENCE row was TTL-reaped: released (pending) at claim_version 3.
        const items = Array.from({ length: 25 }, (_, i) =>
            marshalRecord({
                ...pendingRecord(rec("P", i, { createdAt: t0 + i }), BigInt(i + 1), t0),
                claimVersion: 3n,
                replayCount: 1,
            }),
        );
        for (let i = 0; i < items.length; i += 25) {
            await client.send(
                new BatchWriteItemCommand({
                    RequestItems: { [tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
                }),
            );
        }
        assert.equal(await rawItem(tableName, fenceKey("P")), undefined);
        const stores = Array.from({ length: 8 }, () => new OutboxStore({ client, tableName, staleClaimMs: 0 }));
        const results = await Promise.allSettled(
            stores.map((s, i) =>
                (async () => {
                    const mine: string[] = [];
                    for (let round = 0; round < 6; round++)
                        mine.push(...ids(await s.claim("P", tok(3, `owner-${i}`), 3)));
                    return mine;
                })(),
            ),
        );
        const all: string[] = [];
        for (const r of results) {
            if (r.status === "fulfilled") all.push(...r.value);
            else assert.ok(isOutboxError(r.reason, "STALE_FENCING_TOKEN"), String(r.reason));
        }
        all.push(...ids(await store.claim("P", tok(3, "late"), 25)));
        assert.equal(new Set(all).size, all.length, "no record was claimed twice");
        assert.equal(all.length, 25, "every record was claimed");
        assert.deepEqual((await rawItem(tableName, fenceKey("P")))!.max_claim_version, { N: "3" });
        await rejectsWith(store.claim("P", tok(2), 1), "STALE_FENCING_TOKEN", /token version is stale/);
    });

    it("the scan path (ordering keys) reads only OUTBOX# rows: the aggregate's own item with status pending is never claimed, a legacy raw-SK keyed row is", async () => {
        const { store, tableName } = await localStore();
        const client = await dynamoClient();
        // The application's order item shares the partition and has its own `status` attribute.
        await client.send(
            new PutItemCommand({
                TableName: tableName,
                Item: {
                    PK: { S: "P" },
                    SK: { S: "ORDER" },
                    status: { S: "pending" },
                    record_id: { S: "order-row" },
                    created_at: { N: "1" },
                },
            }),
        );
        const legacy = marshalRecord(
            pendingRecord(
                rec("P", "legacy", { bindingId: "eu#prod", orderingKey: "K", createdAt: Date.UTC(2025, 11, 31) }),
                1n,
                0,
            ),
        );
        legacy.SK = { S: "OUTBOX#env-legacy#eu#prod" };
        await client.send(new PutItemCommand({ TableName: tableName, Item: legacy }));
        await store.persist([rec("P", 2, { orderingKey: "K" })]);
        const claimed = await store.claim("P", tok(1), 10);
        assert.deepEqual(
            claimed.map((r) => [r.envelopeId, r.bindingId]),
            [
                ["env-legacy", "eu#prod"],
                ["env-2", "topic"],
            ],
        );
        assert.deepEqual((await rawItem(tableName, { PK: { S: "P" }, SK: { S: "ORDER" } }))!.status, { S: "pending" });
    });

    it("legacy raw-SK rows still match begins_with(SK, OUTBOX#): claimed and completed with identity from attributes", async () => {
        const client = await dynamoClient();
        const { store, tableName } = await localStore({ client });
        const item = marshalRecord(
            pendingRecord(rec("P", "legacy", { bindingId: "eu#prod" }), 1n, Date.UTC(2026, 0, 1)),
        );
        item.SK = { S: "OUTBOX#env-legacy#eu#prod" };
        await client.send(new PutItemCommand({ TableName: tableName, Item: item }));
        const [r] = await store.claim("P", tok(1), 5);
        assert.deepEqual([r.envelopeId, r.bindingId], ["env-legacy", "eu#prod"]);
        await store.complete([r.recordId], tok(1));
        const stored = await rawItem(tableName, { PK: { S: "P" }, SK: { S: "OUTBOX#env-legacy#eu#prod" } });
        assert.equal(stored!.status?.S, "completed");
    });
});
