/**
 * The id guard row the writer adds for every id it did not generate (`PK = OUTBOX_ID#<id>`, `SK = ID`) is never
 * read as an outbox record, wherever a record is looked for: the stream (the mapping's filter, and the
 * publisher's own check), the store's claim (ClaimIndex path and ConsistentRead scan path), depth counts and
 * previews, expiry, the sweeper's ClaimIndex scan and ExpiryIndex query, and migrate's backfill Scan (which reads
 * the base table, where a row without `status` is pending to `isPending()`). Why ids must be unique, shown with
 * two records `store.persist` wrote (it writes no guard): SNS FIFO drops one while both are marked completed, and
 * on a standard topic two different messages carry one `outbox.id`. And end to end on a FIFO topic: the writer
 * refuses the second record, so every completed record reaches the topic.
 * DynamoDB Local with its real stream; SNS and the DLQ are the AWS fault server.
 */
import assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { backfillIndexAttributes } from "../../../cli/migrate/backfill";
import { isOutboxError } from "../../../runtime/errors";
import { createJsonLogger } from "../../../runtime/observability/json-logger";
import { matchesFilterPattern, type FilterPattern } from "../../../runtime/testing/filter-pattern";
import { idGuardKey } from "../../../runtime/record/id-guard";
import { ATTR, ID_GUARD_SK, RECORD_SK_PREFIX, STREAM_FILTER_PATTERN } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import { claimByScan } from "../../../runtime/store/claim-scan";
import { resolveStoreContext } from "../../../runtime/store/options";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach, skOf, metric, publishedIds } from "../../support/runtime/relay-fixtures";

describe("id guard rows are never read as records (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    async function guard(id: string) {
        return (
            await h.ddb.send(new GetItemCommand({ TableName: h.tableName, Key: idGuardKey(id), ConsistentRead: true }))
        ).Item;
    }

    /** The guards of `ids`, asserting each exists, so that "unchanged" below means something. */
    async function guards(ids: readonly string[]) {
        const items = await Promise.all(ids.map(guard));
        items.forEach((item, i) => assert.ok(item, `the guard of "${ids[i]}" exists`));
        return items;
    }

    it("the stream carries a guard's INSERT, the mapping's filter drops it, and the publisher ignores it when handed one", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ id: "evt-1", partition: "ORDER#1", type: "T", payload: 1 }] });
        const before = await guards(["evt-1"]);
        const raw = await h.streamRecords();
        assert.deepEqual(
            raw.map((r) => [r.eventName, skOf(r)]).sort(),
            [
                ["INSERT", ID_GUARD_SK],
                ["INSERT", `${RECORD_SK_PREFIX}evt-1#sns`],
            ].sort(),
        );
        const guardInsert = raw.find((r) => skOf(r) === ID_GUARD_SK)!;
        assert.equal(matchesFilterPattern(STREAM_FILTER_PATTERN as unknown as FilterPattern, guardInsert), false);
        assert.deepEqual(
            (await h.streamEvent()).Records.map(skOf),
            [`${RECORD_SK_PREFIX}evt-1#sns`],
            "the mapping's event holds the record only",
        );

        const lines: string[] = [];
        assert.deepEqual(
            await h.publisher({ logger: createJsonLogger({ level: "debug", write: (l) => lines.push(l) }) })({
                Records: [guardInsert],
            }),
            { batchItemFailures: [] },
        );
        assert.equal(h.server.calls().length, 0, "nothing published for a guard");
        assert.equal(metric(h, "IgnoredRecords"), 1);
        assert.deepEqual(
            lines
                .map((l) => JSON.parse(l) as { level: string; message: string })
                .filter((l) => l.level === "error" || l.level === "warn"),
            [],
            "skipped as not a record, not tried and failed as an undecodable one",
        );
        assert.deepEqual(await h.publisher()({ Records: raw }), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h), ["evt-1"], "an unfiltered stream still publishes the record once");
        assert.deepEqual(await guards(["evt-1"]), before);
    });

    it("the store never claims, counts, lists or expires a guard: claim (ClaimIndex and ConsistentRead scan paths), countPending, countClaimed, queryPending and expire on its partition find nothing", async function () {
        h = await createHarness();
        const now = h.clock.now();
        await h.writer.write({
            messages: [
                {
                    id: "evt-2",
                    partition: "ORDER#2",
                    type: "T",
                    payload: 1,
                    orderingKey: "k",
                    expiresAt: new Date(now + 1_000),
                },
            ],
        });
        const before = await guards(["evt-2"]);
        const guardPartition = idGuardKey("evt-2")[ATTR.pk]!.S!;
        const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        const token = { owner: "relay", version: 1n };
        // The base-table reads first: claim and expire write the partition a FENCE row of its own.
        const ctx = resolveStoreContext({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        assert.deepEqual(
            await claimByScan(ctx, guardPartition, token, 10, { nowMs: now, staleMs: 0 }, {}),
            [],
            "the scan path reads the base table, where the guard has no status",
        );
        assert.deepEqual(await store.queryPending(guardPartition, 10), []);
        assert.equal(await store.countPending(guardPartition), 0);
        assert.equal(await store.countClaimed(guardPartition), 0);
        assert.deepEqual(await store.claim(guardPartition, token, 10), []);
        assert.equal(await store.expire(now + 10 * 365 * 24 * 3600 * 1000, guardPartition, token), 0);
        assert.equal(await store.countPending("ORDER#2"), 1, "the record itself is pending, once");
        assert.deepEqual(
            (await store.claim("ORDER#2", token, 10)).map((r) => r.recordId),
            ["evt-2"],
        );
        assert.deepEqual(await guards(["evt-2"]), before);
    });

    it("the sweeper delivers and expires the records around guards and leaves the guards as written", async function () {
        h = await createHarness();
        const now = h.clock.now();
        await h.writer.write({
            messages: [
                { id: "evt-3", partition: "ORDER#3", type: "T", payload: 1 },
                { id: "evt-4", partition: "ORDER#4", type: "T", payload: 2, expiresAt: new Date(now + 1_000) },
            ],
        });
        const before = await guards(["evt-3", "evt-4"]);
        h.clock.advance(121_000);
        const result = await createSweeper(h.config())();
        assert.deepEqual(
            result,
            { published: 1, expired: 1, deadLettered: 0, partitions: 1, failedPartitions: 0, failedRecords: 0 },
            "one partition to sweep: the record's, not a guard's",
        );
        assert.deepEqual(publishedIds(h), ["evt-3"]);
        assert.deepEqual(
            h.deadLetters().map((d) => d.recordId),
            ["evt-4"],
        );
        assert.deepEqual(await guards(["evt-3", "evt-4"]), before);
    });

    it("migrate's backfill Scan never matches a guard (no claim_sort, and no status, which isPending() reads as pending)", async function () {
        h = await createHarness();
        await h.writer.write({
            messages: [
                {
                    id: "evt-5",
                    partition: "ORDER#5",
                    type: "T",
                    payload: 1,
                    expiresAt: new Date(h.clock.now() + 60_000),
                },
            ],
        });
        const before = await guards(["evt-5"]);
        const totals = await backfillIndexAttributes(h.ddb, h.tableName, {
            pageSize: 100,
            apply: true,
            onPage: () => undefined,
        });
        assert.deepEqual(
            {
                scanned: totals.scanned,
                matched: totals.matched,
                claimSortSet: totals.claimSortSet,
                hasExpirySet: totals.hasExpirySet,
            },
            { scanned: 2, matched: 0, claimSortSet: 0, hasExpirySet: 0 },
        );
        assert.deepEqual(await guards(["evt-5"]), before, "no claim_sort, so never in ClaimIndex");
    });

    it("why ids must be unique: two records with one id (store.persist writes no guard) lose a message, silently on a FIFO topic, to consumers' deduplication on a standard one", async function () {
        const persistTwo = async (world: Harness) => {
            const store = new OutboxStore({ client: world.ddb, tableName: world.tableName, clock: world.clock });
            for (const partition of ["ORDER#8", "ORDER#9"]) {
                await store.persist([
                    {
                        partition,
                        recordId: "evt-8",
                        bindingId: "sns",
                        address: world.topicArn,
                        envelope: { id: "evt-8", subject: "T", payload: JSON.stringify({ partition }) },
                    },
                ]);
            }
            assert.deepEqual(await world.publisher()(await world.streamEvent()), { batchItemFailures: [] });
            assert.deepEqual(
                (await world.records()).map((r) => [r.partition, r.status]).sort(),
                [
                    ["ORDER#8", "completed"],
                    ["ORDER#9", "completed"],
                ],
                "both records marked completed",
            );
        };
        h = await createHarness({ fifo: true });
        await persistTwo(h);
        assert.equal(h.published().length, 1, "SNS FIFO dropped the second as a duplicate");
        await h.close();
        h = await createHarness();
        await persistTwo(h);
        assert.deepEqual(
            publishedIds(h),
            ["evt-8", "evt-8"],
            "two different messages under one outbox.id: a consumer deduplicating on it drops one",
        );
        assert.equal(new Set(h.published().map((p) => p.body)).size, 2);
    });

    it("on a FIFO topic no two records share a MessageDeduplicationId any more: the reuse is refused at write, and every completed record was published", async function () {
        h = await createHarness({ fifo: true });
        await h.writer.write({
            messages: [{ id: "evt-6", partition: "ORDER#6", type: "OrderCreated", payload: { order: 6 } }],
        });
        await assert.rejects(
            h.writer.write({
                messages: [{ id: "evt-6", partition: "ORDER#7", type: "OrderCreated", payload: { order: 7 } }],
            }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_PAYLOAD") &&
                /id "evt-6" is already taken by a record in partition "ORDER#6"/.test(err.message),
        );
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        const completed = (await h.records()).filter((r) => r.status === "completed");
        assert.deepEqual(
            completed.map((r) => [r.partition, r.recordId]),
            [["ORDER#6", "evt-6"]],
        );
        assert.deepEqual(
            h.published().map((p) => [p.dedupId, p.body]),
            [["evt-6", '{"order":6}']],
            "as many messages on the topic as records completed",
        );
    });
});
