/**
 * Complete/Release, Persist, Expire and depth unit tests on a fake client (reference §11.4). A fake is used where
 * DynamoDB Local cannot produce the condition: a RecordIDIndex that lags (Local's GSIs are synchronous), a sort key
 * held by a different record (needs a foreign writer racing the readback), a query that fails on page 2, and exact
 * SDK call counts.
 */
import * as assert from "node:assert/strict";
import { isOutboxError, type OutboxErrorCode } from "../../../runtime/errors";
import { KeyCache, OutboxStore, expiredCountOf } from "../../../runtime/store";
import { cancelled, conditionFailed, fenceAt, FakeDynamoDb, throttled } from "../../support/store/fake-client";
import { FakeClock, pendingItem, rec, rejectsWith, tok } from "../../support/store/helpers";

const t0 = Date.UTC(2026, 0, 1);

function storeOn(client: FakeDynamoDb, extra: Partial<ConstructorParameters<typeof OutboxStore>[0]> = {}) {
    const clock = new FakeClock(t0 + 1_000_000);
    return { store: new OutboxStore({ client, tableName: "fake-outbox", clock, staleClaimMs: 0, ...extra }), clock };
}

const keyOf = (n: number) => ({ PK: { S: "P" }, SK: { S: `OUTBOX#env-${n}#topic` }, record_id: { S: `P/rec-${n}` } });

/**
 * A partition to claim from: its FENCE at 1, ClaimIndex holding `pending`, every RecordIDIndex query answering the
 * key of record `keyed`, and every update and transaction succeeding.
 */
function claimableFake(pending: Record<string, unknown>[], keyed: number): FakeDynamoDb {
    return new FakeDynamoDb()
        .on("GetItem", () => fenceAt(1))
        .on("UpdateItem", () => ({}))
        .on("TransactWriteItems", () => ({}))
        .on("Query", (input) => (input.IndexName === "ClaimIndex" ? { Items: pending } : { Items: [keyOf(keyed)] }));
}

describe("complete / release on a fake client (§11.4)", () => {
    it("complete uses the key cached by claim (no RecordIDIndex query) and evicts it on success", async () => {
        const fake = claimableFake([pendingItem(rec("P", 1), 1, t0)], 1);
        const { store } = storeOn(fake);
        const [r] = await store.claim("P", tok(1), 1);
        await store.complete([r.recordId], tok(1));
        assert.equal(fake.count("Query", "RecordIDIndex"), 0);
        const update = fake.of("UpdateItem").at(-1)!.input;
        assert.deepEqual(update.Key, { PK: { S: "P" }, SK: { S: "OUTBOX#env-1#topic" } });
        assert.match(
            update.ConditionExpression,
            /#status = :status_claimed\) AND \(#claimed_by = :token_owner\) AND \(#claim_version = :token_version/,
        );
        // Evicted: the next call has to resolve through the index.
        await store.complete([r.recordId], tok(1));
        assert.equal(fake.count("Query", "RecordIDIndex"), 1);
    });

    it("retries a lagging RecordIDIndex: two misses then a hit is 3 index queries with 2 backoff pauses", async () => {
        // Fake: DynamoDB Local's RecordIDIndex is updated synchronously, so it never misses a just-written record.
        const fake = new FakeDynamoDb()
            .on("UpdateItem", () => ({}))
            .on("Query", (_input, call) => ({ Items: call.nth <= 2 ? [] : [keyOf(1)] }));
        const { store, clock } = storeOn(fake);
        await store.complete(["P/rec-1"], tok(1));
        assert.equal(fake.count("Query", "RecordIDIndex"), 3);
        assert.deepEqual(clock.sleeps, [50, 50]);
        assert.equal(fake.of("Query")[0].input.Limit, 1);
        assert.equal(fake.count("UpdateItem"), 1);
    });

    it("exhausting the retries is TIMEOUT, transient, not NOT_FOUND, after exactly 5 index queries (J-N3)", async () => {
        const fake = new FakeDynamoDb().on("Query", () => ({ Items: [] }));
        const { store } = storeOn(fake);
        for (const op of [() => store.complete(["r-9"], tok(1)), () => store.release(["r-9"], tok(1))]) {
            await assert.rejects(op(), (err: unknown) => {
                assert.ok(isOutboxError(err, "TIMEOUT"), String(err));
                assert.equal((err as { transient: boolean }).transient, true);
                assert.equal((err as Error).message, "outbox record key resolution timed out: RecordIDIndex GSI lag");
                return true;
            });
        }
        assert.equal(fake.count("Query", "RecordIDIndex"), 10);
        assert.equal(fake.count("UpdateItem"), 0);
    });

    it("honours resolveRetry and ignores values ≤ 0", async () => {
        const fake = new FakeDynamoDb().on("Query", () => ({ Items: [] }));
        const { store, clock } = storeOn(fake, { resolveRetry: { attempts: 2, backoffMs: 7 } });
        await rejectsWith(store.complete(["r"], tok(1)), "TIMEOUT");
        assert.deepEqual([fake.count("Query"), clock.sleeps], [2, [7]]);
        const fake2 = new FakeDynamoDb().on("Query", () => ({ Items: [] }));
        await rejectsWith(
            storeOn(fake2, { resolveRetry: { attempts: 0, backoffMs: -1 } }).store.complete(["r"], tok(1)),
            "TIMEOUT",
        );
        assert.equal(fake2.count("Query"), 5);
    });

    it("a RecordIDIndex query error is not retried", async () => {
        const fake = new FakeDynamoDb().on("Query", () => {
            throw throttled();
        });
        await rejectsWith(
            storeOn(fake).store.complete(["r"], tok(1)),
            "THROTTLED",
            /^outbox resolve record keys failed$/,
        );
        assert.equal(fake.count("Query"), 1);
    });

    it("complete stops at the first failure; earlier records stay completed", async () => {
        const fake = new FakeDynamoDb()
            .on("Query", (input) => ({
                Items: [keyOf(Number(input.ExpressionAttributeValues[":record_id"].S.split("-")[1]))],
            }))
            .on("UpdateItem", (_i, call) => {
                if (call.nth === 2) throw conditionFailed();
                return {};
            });
        await rejectsWith(
            storeOn(fake).store.complete(["P/rec-1", "P/rec-2", "P/rec-3"], tok(1)),
            "STALE_FENCING_TOKEN",
            /claim version mismatch on complete/,
        );
        assert.equal(fake.count("UpdateItem"), 2);
    });

    it("an update fault on complete is classified, not STALE", async () => {
        const fake = new FakeDynamoDb()
            .on("Query", () => ({ Items: [keyOf(1)] }))
            .on("UpdateItem", () => {
                throw throttled();
            });
        await rejectsWith(
            storeOn(fake).store.complete(["P/rec-1"], tok(1)),
            "THROTTLED",
            /^outbox complete update failed$/,
        );
    });
});

describe("key cache (J-N1: bounded under lease churn)", () => {
    it("holds at most its capacity: 1000 puts into 8 keeps the newest 8", () => {
        const cache = new KeyCache(8);
        for (let i = 0; i < 1000; i++) cache.put(`r${i}`, { PK: { S: "P" }, SK: { S: `S${i}` } });
        assert.equal(cache.size, 8);
        assert.ok(cache.has("r999") && cache.has("r992"));
        assert.ok(!cache.has("r991") && !cache.has("r0"));
    });

    it("a get refreshes recency, so the least recently used entry is evicted", () => {
        const cache = new KeyCache(2);
        cache.put("a", { PK: { S: "a" } });
        cache.put("b", { PK: { S: "b" } });
        assert.deepEqual(cache.get("a"), { PK: { S: "a" } });
        cache.put("c", { PK: { S: "c" } });
        assert.deepEqual([cache.has("a"), cache.has("b"), cache.has("c")], [true, false, true]);
    });

    it("the store's keyCacheSize option bounds the cache claims fill", async () => {
        const fake = claimableFake(
            Array.from({ length: 20 }, (_, i) => pendingItem(rec("P", i), i + 1, t0 + i)),
            0,
        );
        const { store } = storeOn(fake, { keyCacheSize: 3 });
        await store.claim("P", tok(1), 20);
        await store.complete(["P/rec-19"], tok(1));
        assert.equal(fake.count("Query", "RecordIDIndex"), 0, "the newest key is cached");
        await store.complete(["P/rec-0"], tok(1));
        assert.equal(fake.count("Query", "RecordIDIndex"), 1, "the oldest key was evicted");
    });
});

describe("persist on a fake client (§11.4)", () => {
    function persistFake(onPut: (input: any, nth: number) => unknown, occupant?: Record<string, unknown>) {
        return new FakeDynamoDb()
            .on("UpdateItem", (input) => ({
                Attributes: { seq_counter: { N: String(Number(input.ExpressionAttributeValues[":count"].N)) } },
            }))
            .on("PutItem", (input, call) => onPut(input, call.nth))
            .on("GetItem", () => ({ Item: occupant }));
    }

    it("stamps seqs 1, 2, 3 from one FENCE update, and every put is conditional on attribute_not_exists(SK)", async () => {
        const fake = persistFake(() => ({}));
        const { store } = storeOn(fake);
        assert.deepEqual(await store.persist([rec("P", 1), rec("P", 2), rec("P", 3)]), { written: 3, duplicates: 0 });
        assert.equal(fake.count("UpdateItem"), 1);
        const seqUpdate = fake.of("UpdateItem")[0].input;
        assert.deepEqual(seqUpdate.Key, { PK: { S: "P" }, SK: { S: "FENCE" } });
        assert.equal(seqUpdate.ReturnValues, "UPDATED_NEW");
        assert.match(seqUpdate.UpdateExpression, /ADD #seq_counter :count/);
        const puts = fake.of("PutItem").map((c) => c.input);
        assert.deepEqual(
            puts.map((p) => p.Item.seq.N),
            ["1", "2", "3"],
        );
        assert.ok(
            puts.every(
                (p) =>
                    p.ConditionExpression === "attribute_not_exists(#SK)" && p.ExpressionAttributeNames["#SK"] === "SK",
            ),
        );
    });

    it("allocates one seq range per distinct partition, in batch order (gaps allowed)", async () => {
        const fake = new FakeDynamoDb()
            .on("UpdateItem", (input) => ({ Attributes: { seq_counter: { N: input.Key.PK.S === "P" ? "12" : "4" } } }))
            .on("PutItem", () => ({}));
        await storeOn(fake).store.persist([rec("P", 1), rec("Q", 1), rec("P", 2)]);
        assert.deepEqual(
            fake.of("PutItem").map((c) => `${c.input.Item.PK.S}:${c.input.Item.seq.N}`),
            ["P:11", "Q:4", "P:12"],
        );
        assert.equal(fake.count("UpdateItem"), 2);
    });

    it("one duplicate is skipped without error; all duplicates is DUPLICATE_RECORD", async () => {
        const same = { envelope_id: { S: "env-2" }, binding_id: { S: "topic" } };
        const fake = persistFake((_input, nth) => {
            if (nth === 2) throw conditionFailed();
            return {};
        }, same);
        assert.deepEqual(await storeOn(fake).store.persist([rec("P", 1), rec("P", 2)]), { written: 1, duplicates: 1 });
        const readback = fake.of("GetItem")[0].input;
        assert.deepEqual([readback.ConsistentRead, readback.ProjectionExpression], [true, "#envelope_id, #binding_id"]);
        const allDup = persistFake(() => {
            throw conditionFailed();
        }, same);
        await rejectsWith(
            storeOn(allDup).store.persist([rec("P", 2)]),
            "DUPLICATE_RECORD",
            /^all records in batch already persisted$/,
        );
    });

    it("an SK held by a DIFFERENT record is a transient UNAVAILABLE, never a dropped duplicate (c13-sk-collision)", async () => {
        // Fake: escaped keys cannot collide, so only a foreign writer (simulated here) can hold our sort key.
        for (const occupant of [{ envelope_id: { S: "env-2" }, binding_id: { S: "other" } }, undefined]) {
            const fake = persistFake(() => {
                throw conditionFailed();
            }, occupant);
            await assert.rejects(storeOn(fake).store.persist([rec("P", 2)]), (err: unknown) => {
                assert.ok(isOutboxError(err, "UNAVAILABLE"), String(err));
                assert.equal((err as { transient: boolean }).transient, true);
                assert.match((err as Error).message, /sort key occupied by a DIFFERENT record/);
                return true;
            });
        }
    });

    it("a failed seq allocation writes nothing", async () => {
        const fake = new FakeDynamoDb().on("UpdateItem", () => {
            throw throttled();
        });
        await rejectsWith(storeOn(fake).store.persist([rec("P", 1)]), "THROTTLED", /^outbox seq allocation failed$/);
        assert.equal(fake.count("PutItem"), 0);
    });

    it("an invalid record anywhere in the batch is rejected before any I/O", async () => {
        const fake = new FakeDynamoDb();
        await rejectsWith(
            storeOn(fake).store.persist([rec("P", 1), rec("", 2)]),
            "INVALID_PAYLOAD",
            /partition must be a non-empty string/,
        );
        await rejectsWith(
            storeOn(fake).store.persist([rec("P", 1), rec("p".repeat(2049), 2)]),
            "INVALID_PAYLOAD",
            /: partition "p{60}…" is 2049 bytes \(UTF-8\); a DynamoDB partition key holds at most 2048; use a shorter key$/,
        );
        assert.equal(fake.calls.length, 0);
    });
});

describe("expire on a fake client (§11.4)", () => {
    function expireFake(pages: (input: any, nth: number) => unknown, tx: (nth: number) => unknown = () => ({})) {
        return new FakeDynamoDb()
            .on("GetItem", () => fenceAt(1))
            .on("UpdateItem", () => ({}))
            .on("Query", (input, call) => pages(input, call.nth))
            .on("TransactWriteItems", (_i, call) => tx(call.nth));
    }
    const page = (from: number, n: number, last?: boolean) => ({
        Items: Array.from({ length: n }, (_, i) => keyOf(from + i)),
        ...(last ? {} : { LastEvaluatedKey: keyOf(from + n - 1) }),
    });

    /** One expire call rejects with this code and message, and reports how many records it expired before. */
    async function expireFailsWith(fake: FakeDynamoDb, code: OutboxErrorCode, message: string, expired: number) {
        await assert.rejects(storeOn(fake).store.expire(t0, "P", tok(1)), (err: unknown) => {
            assert.ok(isOutboxError(err, code), String(err));
            assert.equal((err as Error).message, message);
            assert.equal(expiredCountOf(err), expired);
            return true;
        });
    }

    it("a page-2 query failure still reports the page-1 count with the error (conservation law)", async () => {
        // Fake: DynamoDB Local cannot fail the second page of a query on demand.
        const fake = expireFake((_input, nth) => {
            if (nth === 2) throw throttled();
            return page(0, 3);
        });
        await expireFailsWith(fake, "THROTTLED", "outbox expire query failed", 3);
    });

    it("queries the sparse ExpiryIndex for this partition and sends fenced 2-item transactions", async () => {
        const fake = expireFake(() => page(0, 1, true));
        assert.equal(await storeOn(fake).store.expire(t0 + 5, "P", tok(2)), 1);
        const q = fake.of("Query")[0].input;
        assert.equal(q.IndexName, "ExpiryIndex");
        assert.match(q.KeyConditionExpression, /#has_expiry = :has_expiry AND #expires_at < :before_ms/);
        assert.deepEqual(
            [
                q.ExpressionAttributeValues[":has_expiry"],
                q.ExpressionAttributeValues[":before_ms"],
                q.ExpressionAttributeValues[":pk"],
            ],
            [{ S: "1" }, { N: String(t0 + 5) }, { S: "P" }],
        );
        const tx = fake.of("TransactWriteItems")[0].input.TransactItems;
        assert.deepEqual(tx[0].ConditionCheck.Key.SK, { S: "FENCE" });
        assert.match(
            tx[1].Update.ConditionExpression,
            /\(\(#status = :status_pending\) OR \(#status = :status_empty\) OR \(attribute_not_exists\(#status\)\)\) AND \(#expires_at > :zero AND #expires_at < :before_ms/,
        );
    });

    it("an expire at the fence's own version sends no fence raise; above it, one", async () => {
        const at = expireFake(() => page(0, 0, true));
        assert.equal(await storeOn(at).store.expire(t0, "P", tok(1)), 0);
        assert.equal(at.count("UpdateItem"), 0);
        const above = expireFake(() => page(0, 0, true));
        assert.equal(await storeOn(above).store.expire(t0, "P", tok(2)), 0);
        assert.equal(above.count("UpdateItem"), 1);
    });

    it("a fence lost mid-sweep aborts with STALE and the count so far; a lost race is a skip", async () => {
        const fake = expireFake(
            () => page(0, 4, true),
            (nth) => {
                if (nth === 2) throw cancelled("None", "ConditionalCheckFailed");
                if (nth === 4) throw cancelled("ConditionalCheckFailed", "None");
                return {};
            },
        );
        await expireFailsWith(
            fake,
            "STALE_FENCING_TOKEN",
            "expire aborted: partition fence advanced past token version",
            2,
        );
    });

    it("resumes from the saved cursor only when the sweep got past its starting page; a failing resume page drops it", async () => {
        let failOn = 2;
        const fake = expireFake((input, nth) => {
            if (nth === failOn) throw throttled();
            const from = input.ExclusiveStartKey
                ? Number(input.ExclusiveStartKey.SK.S.split("#")[1].split("-")[1]) + 1
                : 0;
            return page(from, 2, from >= 4);
        });
        const { store } = storeOn(fake);
        await rejectsWith(store.expire(t0, "P", tok(1)), "THROTTLED");
        failOn = 3;
        // Second sweep starts at the saved page-2 cursor and fails right there: the cursor must be dropped.
        await rejectsWith(store.expire(t0, "P", tok(1)), "THROTTLED");
        assert.deepEqual(fake.of("Query")[2].input.ExclusiveStartKey, keyOf(1));
        failOn = 0;
        assert.equal(await store.expire(t0, "P", tok(1)), 6);
        assert.equal(fake.of("Query")[3].input.ExclusiveStartKey, undefined, "the failed resume point was dropped");
    });

    it("keeps one resume cursor per ExpiryIndex value: a shard that failed on page 2 resumes there, the others start over", async () => {
        // Fake: DynamoDB Local cannot fail the second page of one shard's query on demand.
        let failing = true;
        const fake = expireFake((input) => {
            const value = input.ExpressionAttributeValues[":has_expiry"].S as string;
            if (value !== "1#0") return page(0, 1, true);
            if (input.ExclusiveStartKey === undefined) return page(0, 2);
            if (failing) throw throttled();
            return page(2, 1, true);
        });
        const { store } = storeOn(fake, { expiryShards: 2 });
        await rejectsWith(store.expire(t0, "P", tok(1)), "THROTTLED");
        const firstCall = fake.of("Query").map((c) => c.input.ExpressionAttributeValues[":has_expiry"].S);
        assert.deepEqual(firstCall, ["1", "1#0", "1#0"], "the failure stops the call before 1#1");
        failing = false;
        const before = fake.of("Query").length;
        await store.expire(t0, "P", tok(1));
        const second = fake
            .of("Query")
            .slice(before)
            .map((c) => [c.input.ExpressionAttributeValues[":has_expiry"].S, c.input.ExclusiveStartKey]);
        assert.deepEqual(second, [
            ["1", undefined],
            ["1#0", keyOf(1)],
            ["1#1", undefined],
        ]);
    });

    it("keeps at most 1024 resume cursors: a 1025th partition resets the map, so the first partition starts over at page 1", async () => {
        // Fake: 1025 partitions whose sweeps each fail on page 2 (a cursor saved for each) cannot be staged on DynamoDB Local.
        const pagesOf = (partition: string) => (from: number) => ({
            Items: [{ ...keyOf(from), PK: { S: partition } }],
            LastEvaluatedKey: { ...keyOf(from), PK: { S: partition } },
        });
        let failing = true;
        const fake = new FakeDynamoDb()
            .on("GetItem", () => fenceAt(1))
            .on("UpdateItem", () => ({}))
            .on("TransactWriteItems", () => ({}))
            .on("Query", (input) => {
                const partition = input.ExpressionAttributeValues[":pk"].S as string;
                if (input.ExclusiveStartKey !== undefined && failing) throw throttled();
                return input.ExclusiveStartKey === undefined ? pagesOf(partition)(0) : { Items: [] };
            });
        const { store } = storeOn(fake);
        // Each sweep reads page 1 and fails on page 2, so it saves a cursor at page 2.
        for (let p = 0; p < 1024; p++) await rejectsWith(store.expire(t0, `P${p}`, tok(1)), "THROTTLED");
        const resumesFromCursor = async (partition: string): Promise<boolean> => {
            const before = fake.of("Query").length;
            failing = false;
            await store.expire(t0, partition, tok(1));
            failing = true;
            return fake.of("Query")[before].input.ExclusiveStartKey !== undefined;
        };
        assert.equal(await resumesFromCursor("P1"), true, "with 1024 partitions the map still holds P1's cursor");
        await rejectsWith(store.expire(t0, "P1", tok(1)), "THROTTLED"); // P1 saves a cursor again
        await rejectsWith(store.expire(t0, "P-new", tok(1)), "THROTTLED"); // the 1025th partition: the map is reset first
        assert.equal(await resumesFromCursor("P1"), false, "after the reset P1 starts at page 1");
        assert.equal(await resumesFromCursor("P-new"), true, "the new partition's cursor was kept");
    });

    it("rejects an invalid token with no I/O, and a stale one after a single fence read", async () => {
        const fake = expireFake(() => page(0, 1, true));
        const { store } = storeOn(fake);
        await rejectsWith(
            store.expire(t0, "P", { owner: "", version: 1n }),
            "STALE_FENCING_TOKEN",
            /^expire rejected: invalid \(zero-value\) fencing token$/,
        );
        assert.equal(fake.calls.length, 0);
        const staleFake = new FakeDynamoDb().on("GetItem", () => fenceAt(9));
        await rejectsWith(
            storeOn(staleFake).store.expire(t0, "P", tok(3)),
            "STALE_FENCING_TOKEN",
            /^expire rejected: token version is stale$/,
        );
        assert.equal(staleFake.calls.length, 1);
    });

    it("requires a partition (there is no table-wide expire)", async () => {
        const fake = new FakeDynamoDb();
        await rejectsWith(
            storeOn(fake).store.expire(t0, "", tok(1)),
            "INVALID_PAYLOAD",
            /partition must be a non-empty string/,
        );
        assert.equal(fake.calls.length, 0);
    });
});

describe("depth on a fake client (§11.4)", () => {
    it("countPending('') is DEPTH_UNSUPPORTED with zero queries", async () => {
        const fake = new FakeDynamoDb();
        const { store } = storeOn(fake);
        await rejectsWith(store.countPending(""), "DEPTH_UNSUPPORTED");
        await rejectsWith(store.countClaimed(""), "DEPTH_UNSUPPORTED");
        assert.equal(fake.calls.length, 0);
    });

    it("a missing index is a real error, not DEPTH_UNSUPPORTED", async () => {
        const { ResourceNotFoundException } = await import("@aws-sdk/client-dynamodb");
        const fake = new FakeDynamoDb().on("Query", () => {
            throw new ResourceNotFoundException({ message: "Requested resource not found", $metadata: {} });
        });
        await rejectsWith(storeOn(fake).store.countPending("P"), "NOT_FOUND", /^outbox count by status query failed$/);
    });

    it("queryPending reads the base table with ConsistentRead, records only (begins_with OUTBOX#), pending only", async () => {
        // Fake: DynamoDB Local answers a read the same with or without ConsistentRead, so only the request shows it.
        const fake = new FakeDynamoDb().on("Query", () => ({ Items: [pendingItem(rec("P", 1), 1, t0)] }));
        assert.equal((await storeOn(fake).store.queryPending("P", 10)).length, 1);
        const q = fake.of("Query")[0].input;
        assert.deepEqual([q.IndexName, q.ConsistentRead], [undefined, true]);
        assert.match(q.KeyConditionExpression, /begins_with\(/);
        assert.equal(q.ExpressionAttributeValues[":status_pending"]?.S, "pending");
    });

    it("counts ClaimIndex pages with Select COUNT and sums them", async () => {
        const fake = new FakeDynamoDb().on("Query", (input) =>
            input.ExclusiveStartKey ? { Count: 2 } : { Count: 3, LastEvaluatedKey: { x: { S: "1" } } },
        );
        assert.equal(await storeOn(fake).store.countPending("P"), 5);
        assert.deepEqual(
            fake
                .of("Query")
                .map((c) => [
                    c.input.IndexName,
                    c.input.Select,
                    c.input.ExpressionAttributeValues[":status_pending"].S,
                ]),
            [
                ["ClaimIndex", "COUNT", "pending"],
                ["ClaimIndex", "COUNT", "pending"],
            ],
        );
    });
});
