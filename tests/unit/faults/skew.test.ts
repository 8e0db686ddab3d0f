/**
 * The `skew` scenario's plan and accounting, on hand-made inputs: which writes it expects carried forward behind a FENCE set ahead, which rows it
 * writes with `status: ""`, the runs each healthy partition took, the stuck items it checks, and every problem its
 * check reports (a check that cannot fail would make the scenario pass whatever the sweeper does).
 */
import assert from "node:assert/strict";
import { skewProblems, type SkewReport } from "../../support/faults/scenario";
import {
    DeliveryTracker,
    fixedStreamLoss,
    STUCK_PREFIX,
    stuckChanges,
    type StuckItem,
} from "../../support/faults/skew";
import { planMessages } from "../../support/faults/workload";

describe("the skew scenario's plan and accounting", function () {
    const planned = planMessages("s", 1000, 1_000, { skewMix: true });
    const skewed = planned.filter((p) => p.message.partition.startsWith("SKEW#"));

    it("plans, per SKEW# partition, a correct keyed write first, then fast writes and the correct writer's keyed writes after them (carried forward) and keyless ones (on its own clock)", function () {
        assert.equal(skewed.length, 100);
        for (const partition of new Set(skewed.map((p) => p.message.partition))) {
            const own = skewed.filter((p) => p.message.partition === partition);
            assert.equal(own[0]!.source, undefined, `${partition}: the correct writer first`);
            assert.equal(own[0]!.carried, undefined, `${partition}: before any fast write, on its own clock`);
            const firstFast = own.findIndex((p) => p.source === "fast");
            assert.equal(firstFast, 1);
            for (const p of own.slice(firstFast)) {
                const correctKeyed = p.source === undefined && p.message.orderingKey !== undefined;
                assert.equal(
                    p.carried === true,
                    correctKeyed,
                    `${p.message.id}: carried exactly when the correct writer writes a keyed message after a fast one`,
                );
            }
            assert.ok(
                own.some((p) => p.source === undefined && p.message.orderingKey === undefined),
                `${partition}: a keyless correct write, which the fence does not stop`,
            );
            assert.ok(
                own.some((p) => p.source === "fast" && p.message.orderingKey === undefined),
                `${partition}: a keyless fast write`,
            );
        }
        assert.equal(planned.filter((p) => p.carried === true).length, 25);
    });

    it('plans LEGACY# rows (status ""), keyed and keyless, never expired or poison; the CI scale still carries one write forward', function () {
        const legacy = planned.filter((p) => p.source === "legacy");
        assert.equal(legacy.length, 100);
        assert.ok(legacy.every((p) => p.message.partition.startsWith("LEGACY#") && !p.expired && !p.poison));
        assert.ok(
            legacy.some((p) => p.message.orderingKey !== undefined) &&
                legacy.some((p) => p.message.orderingKey === undefined),
        );
        const small = planMessages("s", 29, 1_000, { skewMix: true });
        assert.deepEqual(
            small.filter((p) => p.carried === true).map((p) => p.index),
            [26],
        );
        assert.equal(
            new Set(small.filter((p) => p.source === "legacy").map((p) => p.message.partition)).size,
            2,
            "one LEGACY# partition whose stream is lost, one whose is not",
        );
        assert.equal(
            planMessages("s", 1000, 1_000).filter((p) => p.source !== undefined || p.carried === true).length,
            0,
            "no other scenario gets the mix",
        );
    });

    it("loses the stream of the even SKEW# and LEGACY# partitions, never of the stuck ones, and leaves the others to the dice", function () {
        assert.deepEqual(
            ["SKEW#0", "SKEW#1", "LEGACY#2", "LEGACY#3", `${STUCK_PREFIX}0`, "ORDER#1"].map(fixedStreamLoss),
            [true, false, true, false, false, undefined],
        );
    });

    it("counts, per partition, the run that delivered its last deliverable record; poison, expired and already delivered ones are not waited for", function () {
        const mine = planMessages("t", 60, 1_000).filter(
            (p) => p.message.partition === "ORDER#0" || p.message.partition === "ORDER#1",
        );
        const onTopic = new Set<string>();
        const tracker = new DeliveryTracker(mine, onTopic);
        assert.equal(tracker.partitions, 2);
        const deliverable = mine.filter((p) => !p.expired && !p.poison);
        assert.ok(mine.length > deliverable.length, "the plan holds a poison or expired message there");
        for (const p of deliverable.filter((d) => d.message.partition === "ORDER#1")) onTopic.add(p.message.id);
        tracker.afterRun(1, onTopic);
        assert.deepEqual([tracker.runsToDeliver, tracker.undelivered], [1, ["ORDER#0"]]);
        for (const p of deliverable) onTopic.add(p.message.id);
        tracker.afterRun(3, onTopic);
        assert.deepEqual([tracker.runsToDeliver, tracker.undelivered, tracker.partitions], [3, [], 2]);
        assert.equal(
            new DeliveryTracker(mine, onTopic).partitions,
            0,
            "a partition the stream path delivered is not the sweeper's",
        );
    });

    it("reports a stuck item delivered, released, taken or gone", function () {
        const planted: StuckItem[] = [
            { partition: "!S#0", sk: "OUTBOX#a#sns", recordId: "a", status: "pending" },
            { partition: "!S#1", sk: "OUTBOX#b#sns", recordId: "b", status: "claimed", claimedBy: "another-relay" },
            { partition: "!S#2", sk: "OUTBOX#c#sns", recordId: "c", status: "claimed", claimedBy: "another-relay" },
            { partition: "!S#3", sk: "OUTBOX#d#sns", recordId: "d", status: "pending" },
        ];
        const item = (pk: string, sk: string, status: string, by?: string) => ({
            PK: { S: pk },
            SK: { S: sk },
            status: { S: status },
            ...(by ? { claimed_by: { S: by } } : {}),
        });
        assert.deepEqual(
            stuckChanges(planted, [
                item("!S#0", "OUTBOX#a#sns", "pending"),
                item("!S#1", "OUTBOX#b#sns", "claimed", "another-relay"),
                item("!S#2", "OUTBOX#c#sns", "claimed", "another-relay"),
                item("!S#3", "OUTBOX#d#sns", "pending"),
            ]),
            [],
        );
        assert.deepEqual(
            stuckChanges(planted, [
                item("!S#0", "OUTBOX#a#sns", "completed"),
                item("!S#1", "OUTBOX#b#sns", "pending"),
                item("!S#2", "OUTBOX#c#sns", "claimed", "sweeper/1"),
            ]),
            ["a: completed", "b: pending", "c: claimed by sweeper/1", "d: gone"],
        );
    });

    it("finds every problem of the accounting, and none in a clean report", function () {
        const clean: SkewReport = {
            aheadMs: 1,
            carriedWrites: 2,
            carriedNotAhead: [],
            fastRecords: 1,
            emptyStatusRows: 1,
            stuckPartitions: 8,
            stuckRecords: 10,
            stuckChanged: [],
            stuckDelivered: [],
            streamLostPartitions: 3,
            maxPartitionsPerRun: 5,
            census: { partitions: 14, notDue: 0, dueDelayRuns: 0, stampedAhead: 1 },
            bound: 3,
            sweptPartitions: 6,
            runsToDeliver: 3,
            undelivered: [],
        };
        assert.deepEqual(skewProblems(clean), []);
        const broken: [Partial<SkewReport>, RegExp][] = [
            [{ carriedWrites: 0 }, /no correct keyed write went behind a FENCE set ahead/],
            [{ carriedNotAhead: ["x"] }, /carried-not-stamped-ahead x/],
            [{ stuckChanged: ["x: completed"] }, /stuck-changed/],
            [{ stuckDelivered: ["x"] }, /stuck-delivered x/],
            [{ stuckPartitions: 5 }, /only 5 stuck partitions for 5 per run/],
            [{ sweptPartitions: 0 }, /no partition to deliver/],
            [{ census: { partitions: 14, notDue: 0, dueDelayRuns: 0, stampedAhead: 0 } }, /no record stamped ahead/],
            [{ undelivered: ["ORDER#1"] }, /never-swept ORDER#1/],
            [{ runsToDeliver: 4 }, /runs-to-deliver 4 over the bound 3/],
        ];
        for (const [change, problem] of broken)
            assert.match(skewProblems({ ...clean, ...change }).join("; "), problem, JSON.stringify(change));
    });
});
