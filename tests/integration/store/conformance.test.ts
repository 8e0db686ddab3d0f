/**
 * GoBridge's shared outbox conformance suite (reference §11.2), run against the DynamoDB store on DynamoDB Local.
 * Each test has its own table. The store is version-only (staleClaimMs 0) unless the test says otherwise.
 */
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import { recordKey, unmarshalRecord, type NewOutboxRecord, type OutboxRecord } from "../../../runtime/record/codec";
import type { OutboxStore } from "../../../runtime/store";
import { dynamoClient } from "../../support/dynamodb";
import { ids, localStore, rec, rejectsWith, tok } from "../../support/store/helpers";

/** The instant the timed records of this file are created after. */
const T0 = Date.UTC(2026, 0, 1);

/** Record `n` of partition P, created `afterMs` after {@link T0}, under `orderingKey` when one is given. */
function createdAt(n: number | string, afterMs: number, orderingKey?: string): NewOutboxRecord {
    return rec("P", n, { createdAt: T0 + afterMs, ...(orderingKey === undefined ? {} : { orderingKey }) });
}

async function stored(
    tableName: string,
    partition: string,
    envelopeId: string,
    bindingId = "topic",
): Promise<OutboxRecord> {
    const client = await dynamoClient();
    const out = await client.send(
        new GetItemCommand({
            TableName: tableName,
            Key: recordKey(partition, envelopeId, bindingId),
            ConsistentRead: true,
        }),
    );
    assert.ok(out.Item, `no item for ${partition}/${envelopeId}/${bindingId}`);
    return unmarshalRecord(out.Item);
}

/** Claim, treating a STALE_FENCING_TOKEN as "nothing" (the contract allows either) and failing on any other error. */
async function claimOrStale(
    store: OutboxStore,
    partition: string,
    token: { owner: string; version: bigint },
    limit: number,
): Promise<OutboxRecord[]> {
    try {
        return await store.claim(partition, token, limit);
    } catch (err) {
        assert.ok(
            isOutboxError(err, "STALE_FENCING_TOKEN"),
            `expected STALE_FENCING_TOKEN or no records, got ${String(err)}`,
        );
        return [];
    }
}

describe("store conformance (GoBridge RunOutboxStoreTests on DynamoDB Local)", () => {
    it("persist then queryPending returns the record, pending, with envelope id and payload intact", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1, {}, { payload: '{"total":12.5,"name":"é"}' })]);
        const [got, ...rest] = await store.queryPending("P", 10);
        assert.equal(rest.length, 0);
        assert.equal(got.status, "pending");
        assert.equal(got.envelopeId, "env-1");
        assert.equal(got.envelope.payload, '{"total":12.5,"name":"é"}');
    });

    it("persisting the same (partition, envelope, binding) again with a new record id is DUPLICATE_RECORD", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        await rejectsWith(
            store.persist([rec("P", 1, { recordId: "other-id" })]),
            "DUPLICATE_RECORD",
            /all records in batch already persisted/,
        );
    });

    it("the same (envelope, binding) in two partitions is two distinct records, both claimable", async () => {
        const { store } = await localStore();
        const result = await store.persist([rec("P1", 1, { recordId: "a" }), rec("P2", 1, { recordId: "b" })]);
        assert.deepEqual(result, { written: 2, duplicates: 0 });
        const one = await store.claim("P1", tok(1), 10);
        const two = await store.claim("P2", tok(1), 10);
        assert.deepEqual([one.map((r) => r.recordId), two.map((r) => r.recordId)], [["a"], ["b"]]);
    });

    it("fan-out: one envelope to three bindings is three pending records", async () => {
        const { store } = await localStore();
        await store.persist(["b1", "b2", "b3"].map((b) => rec("P", 1, { bindingId: b, recordId: `r-${b}` })));
        assert.deepEqual((await store.queryPending("P", 10)).map((r) => r.bindingId).sort(), ["b1", "b2", "b3"]);
    });

    it("partial overlap {A existing, B new} writes B, keeps A unchanged, and {A} alone is DUPLICATE_RECORD", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", "A", {}, { payload: '"original"' })]);
        const result = await store.persist([
            rec("P", "A", { recordId: "A2" }, { payload: '"replacement"' }),
            rec("P", "B"),
        ]);
        assert.deepEqual(result, { written: 1, duplicates: 1 });
        const a = await stored(tableName, "P", "env-A");
        assert.equal(a.envelope.payload, '"original"');
        assert.equal(a.recordId, "P/rec-A");
        assert.equal((await stored(tableName, "P", "env-B")).status, "pending");
        await rejectsWith(store.persist([rec("P", "A")]), "DUPLICATE_RECORD");
    });

    it("a batch with an internal duplicate succeeds and keeps only the first occurrence", async () => {
        const { store, tableName } = await localStore();
        const result = await store.persist([
            rec("P", 1, {}, { payload: '"first"' }),
            rec("P", 1, { recordId: "dup" }, { payload: '"second"' }),
        ]);
        assert.deepEqual(result, { written: 1, duplicates: 1 });
        const only = await store.queryPending("P", 10);
        assert.equal(only.length, 1);
        assert.equal((await stored(tableName, "P", "env-1")).envelope.payload, '"first"');
    });

    it("claim marks the record claimed by the token with replay count 1", async () => {
        const { store, clock, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const [claimed] = await store.claim("P", tok(3, "relay-x"), 10);
        for (const r of [claimed, await stored(tableName, "P", "env-1")]) {
            assert.equal(r.status, "claimed");
            assert.equal(r.claimedBy, "relay-x");
            assert.equal(r.claimVersion, 3n);
            assert.equal(r.replayCount, 1);
            assert.equal(r.claimedAt, clock.now());
        }
    });

    it("claim respects the limit (5 pending, limit 3 gives 3)", async () => {
        const { store } = await localStore();
        await store.persist([1, 2, 3, 4, 5].map((n) => rec("P", n)));
        assert.equal((await store.claim("P", tok(1), 3)).length, 3);
        assert.equal(await store.countPending("P"), 2);
    });

    it("ClaimLimitReturnsOldestN: envelope ids inverse to age, a same-millisecond pair decided by seq", async () => {
        const { store } = await localStore();
        // Persisted in this order: env-e is oldest but sorts last in SK order; env-c and env-b share a millisecond.
        await store.persist([
            createdAt("e", 1),
            createdAt("d", 2),
            createdAt("c", 3),
            createdAt("b", 3),
            createdAt("a", 4),
        ]);
        const first = await store.claim("P", tok(1), 3);
        assert.deepEqual(ids(first), ["env-e", "env-d", "env-c"]);
        assert.ok(
            first[2].seq < (await store.claim("P", tok(1), 1))[0].seq,
            "the same-millisecond pair is decided by seq",
        );
        assert.deepEqual(ids(await store.claim("P", tok(1), 5)), ["env-a"]);
    });

    it("the second claim with the same token returns the remaining records in order", async () => {
        const { store } = await localStore();
        await store.persist(["e", "d", "c", "b", "a"].map((id, i) => createdAt(id, i)));
        assert.deepEqual(ids(await store.claim("P", tok(1), 3)), ["env-e", "env-d", "env-c"]);
        assert.deepEqual(ids(await store.claim("P", tok(1), 3)), ["env-b", "env-a"]);
    });

    it("version preemption: claimed at v1, claim at v2 reclaims with the new owner, version 2, replay 2", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        await store.claim("P", tok(1, "a"), 1);
        const [r] = await store.claim("P", tok(2, "b"), 1);
        assert.deepEqual([r.claimedBy, r.claimVersion, r.replayCount], ["b", 2n, 2]);
    });

    it("complete with the valid token removes the record from pending; a wrong version is STALE_FENCING_TOKEN", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1), rec("P", 2)]);
        const [a, b] = await store.claim("P", tok(4), 2);
        await rejectsWith(
            store.complete([b.recordId], tok(3)),
            "STALE_FENCING_TOKEN",
            /claim version mismatch on complete/,
        );
        await store.complete([a.recordId], tok(4));
        assert.equal(await store.countPending("P"), 0);
        assert.equal(await store.countClaimed("P"), 1);
    });

    it("complete at the same version by a different owner is STALE, and the rightful owner can still complete", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1, "rightful"), 1);
        await rejectsWith(store.complete([r.recordId], tok(1, "intruder")), "STALE_FENCING_TOKEN");
        assert.equal((await stored(tableName, "P", "env-1")).status, "claimed");
        await store.complete([r.recordId], tok(1, "rightful"));
        assert.equal((await stored(tableName, "P", "env-1")).status, "completed");
    });

    it("complete with the old token after a higher-version reclaim is STALE", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1, "a"), 1);
        await store.claim("P", tok(2, "b"), 1);
        await rejectsWith(store.complete([r.recordId], tok(1, "a")), "STALE_FENCING_TOKEN");
    });

    describe("expire", () => {
        it("expires a past-expiry pending record (count 1, no longer pending)", async () => {
            const { store, clock, tableName } = await localStore();
            await store.persist([rec("P", 1, {}, { expiresAt: clock.now() + 1000 })]);
            assert.equal(await store.expire(clock.now() + 2000, "P", tok(1)), 1);
            assert.equal(await store.countPending("P"), 0);
            assert.equal((await stored(tableName, "P", "env-1")).status, "expired");
        });

        it("skips completed records (0)", async () => {
            const { store, clock } = await localStore();
            await store.persist([rec("P", 1, {}, { expiresAt: clock.now() + 1000 })]);
            const [r] = await store.claim("P", tok(1), 1);
            await store.complete([r.recordId], tok(1));
            assert.equal(await store.expire(clock.now() + 2000, "P", tok(1)), 0);
        });

        it("skips claimed records (0), and the owner can still complete", async () => {
            const { store, clock } = await localStore();
            await store.persist([rec("P", 1, {}, { expiresAt: clock.now() + 1000 })]);
            const [r] = await store.claim("P", tok(1), 1);
            assert.equal(await store.expire(clock.now() + 2000, "P", tok(1)), 0);
            await store.complete([r.recordId], tok(1));
        });

        it("is scoped to its partition (the other partition's expired-by-time record stays pending)", async () => {
            const { store, clock } = await localStore();
            await store.persist([
                rec("P1", 1, {}, { expiresAt: clock.now() + 1000 }),
                rec("P2", 1, {}, { expiresAt: clock.now() + 1000 }),
            ]);
            assert.equal(await store.expire(clock.now() + 2000, "P1", tok(1)), 1);
            assert.equal(await store.countPending("P2"), 1);
        });
    });

    it("queryPending returns only pending records of its partition", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1), rec("P", 2), rec("P", 3), rec("Q", 9)]);
        await store.claim("P", tok(1), 1);
        const pending = await store.queryPending("P", 10);
        assert.deepEqual(ids(pending), ["env-2", "env-3"]);
        assert.ok(pending.every((r) => r.partition === "P" && r.status === "pending"));
        assert.equal((await store.queryPending("P", 1)).length, 1);
        assert.deepEqual(await store.queryPending("P", 0), []);
    });

    it("full lifecycle: persist → claim → complete", async () => {
        const { store, clock, tableName } = await localStore({ compactionGraceSeconds: 600 });
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1), 1);
        clock.advance(5000);
        await store.complete([r.recordId], tok(1));
        const done = await stored(tableName, "P", "env-1");
        assert.equal(done.status, "completed");
        assert.equal(done.completedAt, clock.now());
        assert.equal(await store.countPending("P"), 0);
        assert.equal(await store.countClaimed("P"), 0);
    });

    it("a partition that saw v2 gives a v1 claim nothing (or STALE)", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(2), 1);
        await store.complete([r.recordId], tok(2));
        await store.persist([rec("P", 2)]);
        assert.deepEqual(await claimOrStale(store, "P", tok(1), 10), []);
        assert.equal(await store.countPending("P"), 1);
    });

    it("a no-op claim at v5 on an empty partition raises the fence: a later v1 claim gets nothing", async () => {
        const { store } = await localStore();
        assert.deepEqual(await store.claim("P", tok(5), 10), []);
        await store.persist([rec("P", 1)]);
        assert.deepEqual(await claimOrStale(store, "P", tok(1), 10), []);
        assert.equal((await store.claim("P", tok(5), 10)).length, 1);
    });

    it("same ordering key persisted out of order is claimed in created_at order; equal created_at in persist order with increasing seq", async () => {
        const { store } = await localStore();
        await store.persist([createdAt("late", 30, "K"), createdAt("early", 10, "K")]);
        await store.persist([createdAt("mid", 20, "K")]);
        await store.persist([createdAt("z1", 40, "K"), createdAt("a2", 40, "K")]);
        await store.persist([createdAt("m3", 40, "K")]);
        const claimed = await store.claim("P", tok(1), 10);
        assert.deepEqual(ids(claimed), ["env-early", "env-mid", "env-late", "env-z1", "env-a2", "env-m3"]);
        const tail = claimed.slice(3).map((r) => r.seq);
        assert.ok(tail[0] < tail[1] && tail[1] < tail[2], `seqs strictly increase: ${tail.join(",")}`);
    });

    for (const limit of [0, -1]) {
        it(`limit ${limit} claims nothing, leaves the record pending, and still advances the fence`, async () => {
            const { store } = await localStore();
            await store.persist([rec("P", 1)]);
            assert.deepEqual(await store.claim("P", tok(5), limit), []);
            assert.equal(await store.countPending("P"), 1);
            assert.deepEqual(await claimOrStale(store, "P", tok(1), 10), []);
            assert.equal((await store.claim("P", tok(5), 10)).length, 1);
        });
    }

    it("a record far beyond any replay cap is still claimable (no replay_count filter)", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        for (let v = 1; v <= 12; v++) {
            const [r] = await store.claim("P", tok(v), 1);
            assert.equal(r.replayCount, v);
        }
    });

    it("fence interleaving: A(v5) claims, B(v6) claims, A(v5) gets nothing, B drains the rest including A's record", async () => {
        const { store } = await localStore();
        await store.persist([1, 2, 3].map((n) => createdAt(n, n)));
        const a1 = await store.claim("P", tok(5, "A"), 1);
        const b1 = await store.claim("P", tok(6, "B"), 1);
        assert.deepEqual(await claimOrStale(store, "P", tok(5, "A"), 10), []);
        const b2 = await store.claim("P", tok(6, "B"), 10);
        assert.deepEqual(ids(a1), ["env-1"]);
        assert.deepEqual([...ids(b1), ...ids(b2)].sort(), ["env-1", "env-2", "env-3"]);
        await rejectsWith(store.complete([a1[0].recordId], tok(5, "A")), "STALE_FENCING_TOKEN");
    });

    it("two concurrent claimers with the same token claim each of 20 records exactly once", async () => {
        const { store } = await localStore();
        await store.persist(Array.from({ length: 20 }, (_, i) => rec("P", i)));
        const seen: string[] = [];
        const worker = async () => {
            for (let round = 0; round < 10; round++) seen.push(...ids(await store.claim("P", tok(1), 3)));
        };
        await Promise.all([worker(), worker()]);
        assert.equal(seen.length, 20);
        assert.equal(new Set(seen).size, 20);
    });

    describe("ordering-key head-of-line rule", () => {
        it("a stranded head (claimed, same version) blocks its tail but not a keyless record; completing it unblocks the tail", async () => {
            const { store } = await localStore();
            await store.persist([createdAt("head", 1, "K"), createdAt("tail", 2, "K"), createdAt("free", 3)]);
            const [head] = await store.claim("P", tok(1), 1);
            assert.equal(head.envelopeId, "env-head");
            assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-free"]);
            await store.complete([head.recordId], tok(1));
            assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-tail"]);
        });

        it("head beyond the limit: 3 same-key records, limit 1 gives the oldest", async () => {
            const { store } = await localStore();
            await store.persist([createdAt("c", 3, "K"), createdAt("a", 1, "K"), createdAt("b", 2, "K")]);
            assert.deepEqual(ids(await store.claim("P", tok(1), 1)), ["env-a"]);
        });

        it("independent keys: a stranded key-A head does not block key B", async () => {
            const { store } = await localStore();
            await store.persist([
                createdAt("a1", 1, "A"),
                createdAt("a2", 2, "A"),
                createdAt("b1", 3, "B"),
                createdAt("b2", 4, "B"),
            ]);
            await store.claim("P", tok(1), 1);
            assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-b1", "env-b2"]);
        });

        it("the whole group is claimable when its head is claimable in the same batch (3 same-key in order)", async () => {
            const { store } = await localStore();
            await store.persist([createdAt("x", 2, "K"), createdAt("y", 1, "K"), createdAt("z", 3, "K")]);
            assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-y", "env-x", "env-z"]);
        });
    });

    it("zero-value and partial tokens are rejected, and a claimed row cannot be completed or released with them", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const bad = [
            {},
            { version: 1n },
            { owner: "x" },
            { owner: "x", version: 0n },
            { owner: "", version: 1n },
            { owner: "x", version: 1 },
        ] as never[];
        for (const token of bad)
            await rejectsWith(
                store.claim("P", token, 1),
                "STALE_FENCING_TOKEN",
                /claim rejected: invalid \(zero-value\) fencing token/,
            );
        const [r] = await store.claim("P", tok(1), 1);
        for (const token of bad) {
            await rejectsWith(store.complete([r.recordId], token), "STALE_FENCING_TOKEN", /complete rejected: invalid/);
            await rejectsWith(store.release([r.recordId], token), "STALE_FENCING_TOKEN", /release rejected: invalid/);
        }
        assert.equal((await stored(tableName, "P", "env-1")).status, "claimed");
    });
});

describe("store conformance: release (RunOutboxReleaseTests)", () => {
    it("release returns the record to pending without an owner; the same token reclaims it with replay 2", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1), 1);
        await store.release([r.recordId], tok(1));
        const released = await stored(tableName, "P", "env-1");
        assert.equal(released.status, "pending");
        assert.equal(released.claimedBy, undefined);
        assert.equal(released.claimedAt, undefined);
        assert.equal(released.claimVersion, 1n);
        const [again] = await store.claim("P", tok(1), 1);
        assert.equal(again.replayCount, 2);
    });

    it("release by the wrong owner is STALE and the record stays claimed", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1, "a"), 1);
        await rejectsWith(store.release([r.recordId], tok(1, "b")), "STALE_FENCING_TOKEN", /claim mismatch on release/);
        assert.equal((await stored(tableName, "P", "env-1")).claimedBy, "a");
    });

    it("releasing a completed record with the token that completed it is STALE and it stays completed (owner and version alone still match)", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1), 1);
        await store.complete([r.recordId], tok(1));
        await rejectsWith(store.release([r.recordId], tok(1)), "STALE_FENCING_TOKEN", /claim mismatch on release/);
        const after = await stored(tableName, "P", "env-1");
        assert.deepEqual([after.status, after.claimedBy, after.claimVersion], ["completed", "owner-a", 1n]);
    });

    it("releasing a record that is not claimed is STALE (release is claim-scoped, not idempotent)", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1), 1);
        await store.release([r.recordId], tok(1));
        await rejectsWith(store.release([r.recordId], tok(1)), "STALE_FENCING_TOKEN");
    });

    it("invalid tokens are STALE and the rightful release still works afterwards", async () => {
        const { store, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1), 1);
        for (const token of [{}, { version: 1n }, { owner: "x" }] as never[])
            await rejectsWith(store.release([r.recordId], token), "STALE_FENCING_TOKEN");
        await store.release([r.recordId], tok(1));
        assert.equal((await stored(tableName, "P", "env-1")).status, "pending");
    });
});

describe("store conformance: stale reclaim with a 5-minute window (RunOutboxStaleReclaimTests)", () => {
    const stale = 5 * 60_000;

    it("after the window the same token reclaims (replay 2) and can complete", async () => {
        const { store, clock } = await localStore({ staleClaimMs: stale });
        await store.persist([rec("P", 1)]);
        const [r] = await store.claim("P", tok(1), 1);
        clock.advance(stale + 1000);
        const [again] = await store.claim("P", tok(1), 1);
        assert.equal(again.recordId, r.recordId);
        assert.equal(again.replayCount, 2);
        await store.complete([r.recordId], tok(1));
    });

    it("inside the window nothing is claimable", async () => {
        const { store, clock } = await localStore({ staleClaimMs: stale });
        await store.persist([rec("P", 1)]);
        await store.claim("P", tok(1), 1);
        clock.advance(stale / 2);
        assert.deepEqual(await store.claim("P", tok(1), 1), []);
    });
});

describe("store conformance: first attempt (RunOutboxFirstAttemptTests)", () => {
    it("pending has none; the first claim stamps it = claimedAt; release + reclaim keeps it while claimedAt moves", async () => {
        const { store, clock, tableName } = await localStore();
        await store.persist([rec("P", 1)]);
        assert.equal((await stored(tableName, "P", "env-1")).firstAttemptedAt, undefined);
        const [first] = await store.claim("P", tok(1), 1);
        assert.equal(first.firstAttemptedAt, first.claimedAt);
        const stamped = first.firstAttemptedAt;
        await store.release([first.recordId], tok(1));
        clock.advance(60_000);
        const [second] = await store.claim("P", tok(1), 1);
        assert.equal(second.firstAttemptedAt, stamped);
        assert.equal(second.claimedAt, (stamped as number) + 60_000);
        assert.equal((await stored(tableName, "P", "env-1")).firstAttemptedAt, stamped);
    });

    it("v2 preemption keeps the first attempt (replay 2); a never-claimed record round-trips none", async () => {
        const { store, clock, tableName } = await localStore();
        await store.persist([rec("P", 1), rec("Q", 1)]);
        const [first] = await store.claim("P", tok(1), 1);
        clock.advance(1000);
        const [second] = await store.claim("P", tok(2), 1);
        assert.equal(second.firstAttemptedAt, first.firstAttemptedAt);
        assert.equal(second.replayCount, 2);
        assert.equal((await stored(tableName, "Q", "env-1")).firstAttemptedAt, undefined);
        assert.equal((await store.queryPending("Q", 1))[0].firstAttemptedAt, undefined);
    });
});

describe("store conformance: claimed depth (RunOutboxClaimedDepthTests)", () => {
    it("countClaimed goes 0 → 2 after a claim → 1 after one completion, per partition", async () => {
        const { store } = await localStore();
        await store.persist([rec("P", 1), rec("P", 2), rec("P", 3), rec("Q", 1)]);
        assert.equal(await store.countClaimed("P"), 0);
        const claimed = await store.claim("P", tok(1), 2);
        assert.equal(await store.countClaimed("P"), 2);
        assert.equal(await store.countClaimed("Q"), 0);
        await store.complete([claimed[0].recordId], tok(1));
        assert.equal(await store.countClaimed("P"), 1);
        assert.equal(await store.countPending("P"), 1);
    });
});
