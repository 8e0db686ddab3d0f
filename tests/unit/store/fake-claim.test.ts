/**
 * Claim unit tests on a fake client (reference §11.4). A fake is used because DynamoDB Local cannot show what these
 * rules are about: its GSIs are never stale, it never throttles, and it cannot cancel a transaction with a chosen
 * reason code or fail the 60th write of a batch. Each test also counts SDK calls, which only a fake can see.
 */
import * as assert from "node:assert/strict";
import * as fc from "fast-check";
import { isOutboxError } from "../../../runtime/errors";
import { pendingRecord } from "../../../runtime/record/codec";
import { OutboxStore, resetStoreWarnings, STORE_METRICS, STORE_WARNINGS } from "../../../runtime/store";
import { cancelled, fenceAt, FakeDynamoDb, throttled } from "../../support/store/fake-client";
import {
    FakeClock,
    ids,
    itemOf,
    pendingItem,
    RecordingLogger,
    RecordingMetrics,
    rec,
    rejectsWith,
    tok,
} from "../../support/store/helpers";

const t0 = Date.UTC(2026, 0, 1);

/** A fake that answers the fence read with `fence`, accepts fence raises and every transaction. */
function fakeWithFence(fence = 1): FakeDynamoDb {
    return new FakeDynamoDb()
        .on("GetItem", () => fenceAt(fence))
        .on("UpdateItem", () => ({}))
        .on("TransactWriteItems", () => ({}));
}

function storeOn(client: FakeDynamoDb, extra: Partial<ConstructorParameters<typeof OutboxStore>[0]> = {}) {
    const logger = new RecordingLogger();
    const metrics = new RecordingMetrics();
    const clock = new FakeClock(t0 + 1_000_000);
    const store = new OutboxStore({
        client,
        tableName: "fake-outbox",
        clock,
        logger,
        metrics,
        staleClaimMs: 0,
        ...extra,
    });
    return { store, logger, metrics, clock };
}

function keyless(n: number): Record<string, any>[] {
    return Array.from({ length: n }, (_, i) => pendingItem(rec("P", i), i + 1, t0 + i));
}

describe("claim on a fake client (§11.4)", () => {
    beforeEach(() => resetStoreWarnings());

    it("reads the fence with one consistent GetItem and rejects a stale token without any query", async () => {
        const fake = fakeWithFence(5);
        const { store } = storeOn(fake);
        await rejectsWith(
            store.claim("P", tok(3), 10),
            "STALE_FENCING_TOKEN",
            /^claim rejected: token version is stale$/,
        );
        assert.equal(fake.count("GetItem"), 1);
        assert.equal(fake.of("GetItem")[0].input.ConsistentRead, true);
        assert.equal(fake.count("Query"), 0);
        assert.equal(fake.count("UpdateItem"), 0);
        assert.equal(fake.count("TransactWriteItems"), 0);
    });

    it("rejects invalid tokens on claim, complete and release with zero SDK calls; valid controls make exactly one UpdateItem", async () => {
        const fake = fakeWithFence(0).on("Query", () => ({
            Items: [{ PK: { S: "P" }, SK: { S: "OUTBOX#e#b" }, record_id: { S: "r" } }],
        }));
        const { store } = storeOn(fake);
        for (const token of [
            {},
            { owner: "", version: 1n },
            { owner: "x", version: 0n },
            { owner: "x" },
            { version: 2n },
        ] as never[]) {
            await rejectsWith(
                store.claim("P", token, 1),
                "STALE_FENCING_TOKEN",
                /^claim rejected: invalid \(zero-value\) fencing token$/,
            );
            await rejectsWith(
                store.complete(["r"], token),
                "STALE_FENCING_TOKEN",
                /^complete rejected: invalid \(zero-value\) fencing token$/,
            );
            await rejectsWith(
                store.release(["r"], token),
                "STALE_FENCING_TOKEN",
                /^release rejected: invalid \(zero-value\) fencing token$/,
            );
        }
        assert.equal(fake.calls.length, 0);
        await store.complete(["r"], tok(1));
        assert.equal(fake.count("UpdateItem"), 1);
        await store.release(["r"], tok(1));
        assert.equal(fake.count("UpdateItem"), 2);
    });

    it("limit 0 raises the fence and makes no query and no transaction", async () => {
        const fake = fakeWithFence(1);
        const { store } = storeOn(fake);
        assert.deepEqual(await store.claim("P", tok(4), 0), []);
        assert.equal(fake.count("UpdateItem"), 1);
        const raise = fake.of("UpdateItem")[0].input;
        assert.equal(raise.ExpressionAttributeValues[":token_version"].N, "4");
        assert.match(
            raise.ConditionExpression,
            /attribute_not_exists\(#max_claim_version\) OR #max_claim_version < :token_version/,
        );
        assert.equal(fake.count("Query"), 0);
        assert.equal(fake.count("TransactWriteItems"), 0);
    });

    it("a token at the fence's own version sends no fence raise: its condition (strictly below) could not hold", async () => {
        const at = fakeWithFence(4);
        assert.deepEqual(await storeOn(at).store.claim("P", tok(4), 0), []);
        assert.equal(at.count("GetItem"), 1);
        assert.equal(at.count("UpdateItem"), 0, "no raise at the fence's version");
        const above = fakeWithFence(3);
        await storeOn(above).store.claim("P", tok(4), 0);
        assert.equal(above.count("UpdateItem"), 1, "a raise above it");
    });

    it("property: a claim raises the fence exactly when its version is above it, refuses below it, and sends the version", async () => {
        await fc.assert(
            fc.asyncProperty(
                fc.integer({ min: 0, max: 20 }),
                fc.integer({ min: 1, max: 20 }),
                async (fence, version) => {
                    const fake = fakeWithFence(fence);
                    const claim = storeOn(fake).store.claim("P", tok(version), 0);
                    if (version < fence) await rejectsWith(claim, "STALE_FENCING_TOKEN", /token version is stale/);
                    else assert.deepEqual(await claim, []);
                    const raises = fake.of("UpdateItem");
                    assert.equal(raises.length, version > fence ? 1 : 0);
                    for (const raise of raises)
                        assert.equal(raise.input.ExpressionAttributeValues[":token_version"].N, String(version));
                },
            ),
            { numRuns: 100 },
        );
    });

    it("the index fast path reads one full ClaimIndex page and never the base table", async () => {
        const fake = fakeWithFence(1).on("Query", (input) => ({
            Items: keyless(5),
            LastEvaluatedKey: { PK: { S: "P" } },
            _index: input.IndexName,
        }));
        const { store } = storeOn(fake);
        const got = await store.claim("P", tok(1), 5);
        assert.equal(got.length, 5);
        assert.equal(fake.count("Query", "ClaimIndex"), 1);
        assert.equal(fake.count("Query", ""), 0);
        const q = fake.of("Query")[0].input;
        assert.deepEqual([q.ScanIndexForward, q.Limit, q.ConsistentRead], [true, 5, undefined]);
    });

    it("asks ClaimIndex for at most 1000 items per page", async () => {
        const fake = fakeWithFence(1).on("Query", () => ({ Items: [] }));
        await storeOn(fake).store.claim("P", tok(1), 5000);
        assert.equal(fake.of("Query")[0].input.Limit, 1000);
    });

    it("sends a one-record claim as a 2-item transaction: FENCE ConditionCheck first, then the record update; returns the synthesised record", async () => {
        const fake = fakeWithFence(1).on("Query", () => ({ Items: [pendingItem(rec("P", 1), 1, t0)] }));
        const { store, clock } = storeOn(fake);
        const [r] = await store.claim("P", tok(7, "relay"), 1);
        const tx = fake.of("TransactWriteItems")[0].input.TransactItems;
        assert.equal(tx.length, 2);
        assert.deepEqual(tx[0].ConditionCheck.Key, { PK: { S: "P" }, SK: { S: "FENCE" } });
        assert.match(
            tx[0].ConditionCheck.ConditionExpression,
            /attribute_not_exists\(#max_claim_version\) OR #max_claim_version <= :token_version/,
        );
        assert.deepEqual(tx[1].Update.Key, { PK: { S: "P" }, SK: { S: "OUTBOX#env-1#topic" } });
        assert.deepEqual(
            [r.status, r.claimedBy, r.claimVersion, r.replayCount, r.claimedAt, r.firstAttemptedAt],
            ["claimed", "relay", 7n, 1, clock.now(), clock.now()],
        );
    });

    it("claims 100 records in two transactions of 50, each with the FENCE ConditionCheck first: 2 round trips, not 100", async () => {
        const fake = fakeWithFence(1).on("Query", () => ({ Items: keyless(100) }));
        const got = await storeOn(fake).store.claim("P", tok(3), 100);
        assert.equal(got.length, 100);
        const txs = fake.of("TransactWriteItems").map((c) => c.input.TransactItems);
        assert.deepEqual(
            txs.map((tx) => tx.length),
            [51, 51],
        );
        for (const tx of txs) assert.deepEqual(tx[0].ConditionCheck.Key, { PK: { S: "P" }, SK: { S: "FENCE" } });
        assert.deepEqual(
            txs.flatMap((tx) => tx.slice(1).map((i: any) => i.Update.Key.SK.S)),
            got.map((r) => `OUTBOX#${r.envelopeId}#topic`),
        );
    });

    it("a record whose condition fails in a claim transaction is dropped with the younger records of its key, and the rest is sent again", async () => {
        // Fake: which item of a transaction fails is chosen; on DynamoDB Local another claimer would have to win exactly that record.
        const items = [
            pendingItem(rec("P", "a1", { orderingKey: "A" }), 1, t0 + 1),
            pendingItem(rec("P", "b1", { orderingKey: "B" }), 2, t0 + 2),
            pendingItem(rec("P", "a2", { orderingKey: "A" }), 3, t0 + 3),
            pendingItem(rec("P", "b2", { orderingKey: "B" }), 4, t0 + 4),
        ];
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: items }))
            .on("TransactWriteItems", (_i, call) => {
                if (call.nth === 1) throw cancelled("None", "None", "ConditionalCheckFailed", "None", "None");
                return {};
            });
        const got = await storeOn(fake).store.claim("P", tok(1), 10);
        assert.deepEqual(ids(got), ["env-a1", "env-a2"], "b1 was taken by someone else: b2 must not overtake it");
        const retry = fake.of("TransactWriteItems")[1]!.input.TransactItems;
        assert.deepEqual(
            retry.slice(1).map((i: any) => i.Update.Key.SK.S),
            ["OUTBOX#env-a1#topic", "OUTBOX#env-a2#topic"],
        );
    });

    it("a claim transaction cancelled by a conflict on the FENCE row alone is sent again; three in a row end the claim", async () => {
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: keyless(2) }))
            .on("TransactWriteItems", (_i, call) => {
                if (call.nth === 1) throw cancelled("TransactionConflict", "None", "None");
                return {};
            });
        assert.equal((await storeOn(fake).store.claim("P", tok(1), 2)).length, 2);
        assert.equal(fake.count("TransactWriteItems"), 2);
        const always = fakeWithFence(1)
            .on("Query", () => ({ Items: keyless(2) }))
            .on("TransactWriteItems", () => {
                throw cancelled("TransactionConflict", "None", "None");
            });
        await rejectsWith(
            storeOn(always).store.claim("P", tok(1), 2),
            "UNAVAILABLE",
            /kept conflicting on the partition's FENCE row/,
        );
        assert.equal(always.count("TransactWriteItems"), 3);
    });

    it("never filters or conditions on replay_count; a record at replay 97 comes back at 98", async () => {
        const high = itemOf({ ...pendingRecord(rec("P", 1), 1n, t0), replayCount: 97 });
        const fake = fakeWithFence(1).on("Query", () => ({ Items: [high] }));
        const [r] = await storeOn(fake).store.claim("P", tok(1), 1);
        assert.equal(r.replayCount, 98);
        const query = fake.of("Query")[0].input;
        const update = fake.of("TransactWriteItems")[0].input.TransactItems[1].Update;
        assert.doesNotMatch(`${query.FilterExpression} ${JSON.stringify(query.ExpressionAttributeNames)}`, /replay/);
        assert.doesNotMatch(update.ConditionExpression, /replay/);
        assert.match(update.UpdateExpression, /#replay_count = if_not_exists\(#replay_count, :zero\) \+ :one/);
    });

    it("a failed FENCE ConditionCheck is STALE after exactly one transaction, with no records", async () => {
        // Fake: the cancellation reasons are chosen; counting transactions needs the call log.
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: keyless(3) }))
            .on("TransactWriteItems", () => {
                throw cancelled("ConditionalCheckFailed", "None");
            });
        await rejectsWith(
            storeOn(fake).store.claim("P", tok(1), 3),
            "STALE_FENCING_TOKEN",
            /^claim aborted: partition fence advanced past token version$/,
        );
        assert.equal(fake.count("TransactWriteItems"), 1);
    });

    it("a record condition failure is a silent skip (not counted); TransactionConflict is a skip counted as OutboxClaimConflicts{partition}", async () => {
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: keyless(3) }))
            .on("TransactWriteItems", (_input, call) => {
                if (call.nth === 1) throw cancelled("None", "ConditionalCheckFailed");
                if (call.nth === 2) throw cancelled("None", "TransactionConflict");
                return {};
            });
        const { store, metrics, logger } = storeOn(fake);
        assert.deepEqual(ids(await store.claim("P", tok(1), 3)), ["env-2"]);
        assert.deepEqual(metrics.named(STORE_METRICS.claimConflicts), [
            { name: "OutboxClaimConflicts", value: 1, tags: { partition: "P" } },
        ]);
        // The partition is logged with each conflict, since the handlers count it without a partition dimension.
        assert.deepEqual(
            logger.lines.filter((l) => l.message === STORE_WARNINGS.claimConflict).map((l) => [l.level, l.attributes]),
            [["info", { partition_key: "P" }]],
        );
        assert.equal(metrics.named(STORE_METRICS.claimTruncated).length, 0);
    });

    for (const [codes, code, transient] of [
        [["None", "ProvisionedThroughputExceeded"], "THROTTLED", true],
        [["ThrottlingError", "None"], "THROTTLED", true],
        [["None", "ValidationError"], "INVALID_PAYLOAD", false],
        [["None", "InternalServerError"], "UNAVAILABLE", true],
    ] as const) {
        it(`cancellation [${codes.join(", ")}] is ${code} (transient ${transient}) with no records`, async () => {
            // Fake: DynamoDB Local cannot be made to cancel with a throughput or validation reason code.
            const fake = fakeWithFence(1)
                .on("Query", () => ({ Items: keyless(2) }))
                .on("TransactWriteItems", () => {
                    throw cancelled(...codes);
                });
            await assert.rejects(storeOn(fake).store.claim("P", tok(1), 2), (err: unknown) => {
                assert.ok(isOutboxError(err, code), String(err));
                assert.equal((err as { transient: boolean }).transient, transient);
                assert.equal((err as Error).message, "outbox claim transaction canceled");
                assert.equal(
                    (err as { context: Record<string, unknown> }).context.cancellationReason,
                    codes.find((c) => c !== "None"),
                );
                return true;
            });
        });
    }

    it("a fence conflict stays STALE even next to a throttle code", async () => {
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: keyless(1) }))
            .on("TransactWriteItems", () => {
                throw cancelled("ConditionalCheckFailed", "ThrottlingError");
            });
        await rejectsWith(storeOn(fake).store.claim("P", tok(1), 1), "STALE_FENCING_TOKEN");
    });

    it("a cancellation with no reasons is a transient error, never a silent skip", async () => {
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: keyless(1) }))
            .on("TransactWriteItems", () => {
                throw cancelled();
            });
        await assert.rejects(storeOn(fake).store.claim("P", tok(1), 1), (err: unknown) => {
            assert.ok(isOutboxError(err), String(err));
            assert.equal((err as { transient: boolean }).transient, true);
            assert.equal((err as Error).message, "outbox claim transaction canceled with no reasons");
            return true;
        });
    });

    it("a stale index entry (record condition fails) is skipped and the next candidate is claimed", async () => {
        const [a, b] = keyless(2);
        const fake = fakeWithFence(1)
            .on("Query", (input) => (input.ExclusiveStartKey ? { Items: [b] } : { Items: [a], LastEvaluatedKey: a }))
            .on("TransactWriteItems", (_input, call) => {
                if (call.nth === 1) throw cancelled("None", "ConditionalCheckFailed");
                return {};
            });
        assert.deepEqual(ids(await storeOn(fake).store.claim("P", tok(1), 1)), ["env-1"]);
        assert.equal(fake.count("Query", "ClaimIndex"), 2);
    });

    it("ordering key + lagging index (the index shows only younger B): reads the base table consistently and returns A then B", async () => {
        // Fake: DynamoDB Local updates GSIs synchronously, so it can never show B in ClaimIndex before A.
        const a = pendingItem(rec("P", "A", { orderingKey: "K" }), 1, t0);
        const b = pendingItem(rec("P", "B", { orderingKey: "K" }), 2, t0 + 5);
        const fake = fakeWithFence(1).on("Query", (input) =>
            input.IndexName === "ClaimIndex" ? { Items: [b] } : { Items: [a, b] },
        );
        const { store, logger } = storeOn(fake);
        assert.deepEqual(ids(await store.claim("P", tok(1), 10)), ["env-A", "env-B"]);
        const base = fake.of("Query").filter((c) => c.index === "");
        assert.equal(base.length, 1);
        assert.equal(base[0].input.ConsistentRead, true);
        assert.equal(base[0].input.Limit, undefined);
        assert.equal(logger.warnings(STORE_WARNINGS.orderingBypass).length, 1);
        await store.claim("P", tok(1), 10);
        assert.equal(
            logger.warnings(STORE_WARNINGS.orderingBypass).length,
            1,
            "the bypass warning is logged once per process",
        );
    });

    it("a keyed record after keyless ones already claimed on the page stops the batch short (no hand-off mid-batch)", async () => {
        const items = [...keyless(2), pendingItem(rec("P", "k", { orderingKey: "K" }), 3, t0 + 3)];
        const fake = fakeWithFence(1).on("Query", (input) =>
            input.ExclusiveStartKey ? { Items: [items[2]] } : { Items: items.slice(0, 2), LastEvaluatedKey: items[1] },
        );
        assert.deepEqual(ids(await storeOn(fake).store.claim("P", tok(1), 10)), ["env-0", "env-1"]);
        assert.equal(fake.count("Query", ""), 0);
    });

    it("on the scan path a stranded head blocks its tail while a keyless record is returned", async () => {
        const head = itemOf({
            ...pendingRecord(rec("P", "head", { orderingKey: "K" }), 1n, t0),
            status: "claimed",
            claimedBy: "other",
            claimVersion: 1n,
            claimedAt: t0,
        });
        const tail = pendingItem(rec("P", "tail", { orderingKey: "K" }), 2, t0 + 1);
        const free = pendingItem(rec("P", "free"), 3, t0 + 2);
        const fake = fakeWithFence(1).on("Query", (input) =>
            input.IndexName === "ClaimIndex" ? { Items: [tail, free] } : { Items: [head, tail, free] },
        );
        assert.deepEqual(ids(await storeOn(fake).store.claim("P", tok(1), 10)), ["env-free"]);
    });

    it("on the scan path a keyed candidate that loses its race skips the rest of its key", async () => {
        const k1 = pendingItem(rec("P", "k1", { orderingKey: "K" }), 1, t0);
        const k2 = pendingItem(rec("P", "k2", { orderingKey: "K" }), 2, t0 + 1);
        const free = pendingItem(rec("P", "free"), 3, t0 + 2);
        const fake = fakeWithFence(1)
            .on("Query", () => ({ Items: [k1, k2, free] }))
            .on("TransactWriteItems", (_i, call) => {
                if (call.nth === 1) throw cancelled("None", "ConditionalCheckFailed");
                return {};
            });
        assert.deepEqual(ids(await storeOn(fake).store.claim("P", tok(1), 10)), ["env-free"]);
    });

    describe("truncation rule (finding 10: short batches instead of stranded claims)", () => {
        it("a throttle on the second transaction (limit 100: two transactions of 50) returns the first 50 records, no error, and counts Truncated once", async () => {
            // Fake: DynamoDB Local never throttles, and only a fake can fail exactly the second transaction.
            const fake = fakeWithFence(1)
                .on("Query", () => ({ Items: keyless(100) }))
                .on("TransactWriteItems", (_i, call) => {
                    if (call.nth === 2) throw throttled();
                    return {};
                });
            const { store, metrics, logger } = storeOn(fake);
            const told: unknown[] = [];
            const got = await store.claim("P", tok(1), 100, { onTruncated: (error) => told.push(error) });
            assert.deepEqual(
                ids(got),
                Array.from({ length: 50 }, (_, i) => `env-${i}`),
            );
            assert.deepEqual(metrics.named(STORE_METRICS.claimTruncated), [
                { name: "DynamoDBOutboxClaimTruncated", value: 1, tags: { partition: "P" } },
            ]);
            assert.equal(logger.warnings(STORE_WARNINGS.truncated).length, 1);
            assert.equal(fake.count("TransactWriteItems"), 2);
            assert.equal(told.length, 1, "the caller is told the short batch is not the end of the backlog");
            assert.ok(isOutboxError(told[0], "THROTTLED"));
        });

        it("a cancel (AbortSignal) after the first transaction returns its 50 records", async () => {
            const controller = new AbortController();
            const fake = fakeWithFence(1)
                .on("Query", () => ({ Items: keyless(100) }))
                .on("TransactWriteItems", (_i, call) => {
                    if (call.nth === 1) controller.abort();
                    return {};
                });
            const { store, metrics } = storeOn(fake);
            assert.equal((await store.claim("P", tok(1), 100, { signal: controller.signal })).length, 50);
            assert.equal(fake.count("TransactWriteItems"), 1);
            assert.equal(metrics.named(STORE_METRICS.claimTruncated).length, 1);
        });

        it("a fence lost mid-batch (on the second transaction) is STALE with no records", async () => {
            const fake = fakeWithFence(1)
                .on("Query", () => ({ Items: keyless(100) }))
                .on("TransactWriteItems", (_i, call) => {
                    if (call.nth === 2)
                        throw cancelled("ConditionalCheckFailed", ...Array.from({ length: 50 }, () => "None"));
                    return {};
                });
            const { store, metrics } = storeOn(fake);
            await rejectsWith(store.claim("P", tok(1), 100), "STALE_FENCING_TOKEN");
            assert.equal(metrics.named(STORE_METRICS.claimTruncated).length, 0);
        });

        it("a throttle before anything was claimed is an error", async () => {
            const fake = fakeWithFence(1).on("Query", () => {
                throw throttled();
            });
            await rejectsWith(
                storeOn(fake).store.claim("P", tok(1), 10),
                "THROTTLED",
                /^outbox claim index query failed$/,
            );
        });

        it("a page-2 query failure after claims on page 1 returns the page-1 records", async () => {
            const fake = fakeWithFence(1).on("Query", (input) => {
                if (input.ExclusiveStartKey) throw throttled();
                return { Items: keyless(3), LastEvaluatedKey: { PK: { S: "P" } } };
            });
            const { store, metrics } = storeOn(fake);
            assert.equal((await store.claim("P", tok(1), 10)).length, 3);
            assert.equal(metrics.named(STORE_METRICS.claimTruncated).length, 1);
        });
    });

    describe("deep backlog on the scan path", () => {
        function pagedScan(pages: number) {
            const keyed = (p: number) => pendingItem(rec("P", `p${p}`, { orderingKey: "K" }), p + 1, t0 + p);
            return fakeWithFence(1).on("Query", (input) => {
                if (input.IndexName === "ClaimIndex") return { Items: [keyed(0)] };
                const page = input.ExclusiveStartKey ? Number(input.ExclusiveStartKey.page.N) : 0;
                return {
                    Items: [keyed(page)],
                    ...(page + 1 < pages ? { LastEvaluatedKey: { page: { N: String(page + 1) } } } : {}),
                };
            });
        }

        it("12 pages: reads them all, warns exactly once naming the partition, counts ScanPages = 12", async () => {
            // Fake: 12 real 1 MB pages would take ~12 MB of records per test; the fake pages by hand.
            const fake = pagedScan(12);
            const { store, logger, metrics } = storeOn(fake);
            assert.equal((await store.claim("P", tok(1), 1)).length, 1);
            assert.equal(fake.count("Query", ""), 12);
            const warned = logger.warnings(STORE_WARNINGS.deepBacklog);
            assert.equal(warned.length, 1);
            assert.equal(warned[0].attributes?.partition_key, "P");
            assert.deepEqual(metrics.named(STORE_METRICS.claimScanPages), [
                { name: "DynamoDBOutboxClaimScanPages", value: 12, tags: { partition: "P" } },
            ]);
        });

        it("the boundary is GoBridge's pages > 8: 8 pages stay quiet, 9 pages warn once and count 9", async () => {
            for (const [pages, warns] of [
                [8, 0],
                [9, 1],
            ] as const) {
                const fake = pagedScan(pages);
                const { store, logger, metrics } = storeOn(fake);
                await store.claim("P", tok(1), 1);
                assert.equal(fake.count("Query", ""), pages);
                assert.equal(logger.warnings(STORE_WARNINGS.deepBacklog).length, warns, `${pages} pages`);
                assert.deepEqual(
                    metrics.named(STORE_METRICS.claimScanPages),
                    warns ? [{ name: "DynamoDBOutboxClaimScanPages", value: pages, tags: { partition: "P" } }] : [],
                );
            }
        });

        it("3 pages: no deep-backlog warning and no counter", async () => {
            const fake = pagedScan(3);
            const { store, logger, metrics } = storeOn(fake);
            await store.claim("P", tok(1), 1);
            assert.equal(fake.count("Query", ""), 3);
            assert.equal(logger.warnings(STORE_WARNINGS.deepBacklog).length, 0);
            assert.equal(metrics.named(STORE_METRICS.claimScanPages).length, 0);
        });
    });

    it("a cold fence is seeded from the records' highest claim_version and raised to it", async () => {
        const fake = new FakeDynamoDb()
            .on("GetItem", () => ({ Item: { PK: { S: "P" }, SK: { S: "FENCE" }, seq_counter: { N: "9" } } }))
            .on("Query", (input) =>
                input.ProjectionExpression
                    ? { Items: [{ claim_version: { N: "4" } }, { claim_version: { N: "6" } }] }
                    : { Items: [] },
            )
            .on("UpdateItem", () => ({}));
        const { store } = storeOn(fake);
        await rejectsWith(store.claim("P", tok(5), 1), "STALE_FENCING_TOKEN", /token version is stale/);
        const seedQuery = fake.of("Query")[0].input;
        assert.deepEqual([seedQuery.ConsistentRead, seedQuery.IndexName], [true, undefined]);
        assert.equal(fake.of("UpdateItem")[0].input.ExpressionAttributeValues[":token_version"].N, "6");
    });
});
