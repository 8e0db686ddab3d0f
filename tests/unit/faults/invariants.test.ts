/**
 * The invariant checker of the fault scenarios, on hand-made deliveries: a checker that cannot fail would make
 * every scenario pass.
 */
import assert from "node:assert/strict";
import { completedRecordIds, isTerminalWrite } from "../../support/faults/faulty-dynamodb";
import { checkInvariants, countInversions } from "../../support/faults/invariants";
import { faultScale, messagesFor } from "../../support/faults/scale";
import { redriveProblems, summaryLine, type RedriveReport } from "../../support/faults/scenario";
import { planMessages } from "../../support/faults/workload";
import { TransactWriteItemsCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { recordSortKey } from "../../../runtime/record/keys";

describe("fault scenario invariants", function () {
    const planned = planMessages("t", 60, 1_000);
    const ids = planned.map((p) => p.message.id);
    const normal = planned.filter((p) => !p.expired && !p.poison);
    const deadLetters = planned
        .filter((p) => p.expired || p.poison)
        .map((p) => ({ id: p.message.id, reason: p.expired ? "expired" : "publish-rejected" }));
    const keyed = normal.filter((p) => p.message.orderingKey !== undefined);
    const sameKey = keyed.filter((p) => p.message.orderingKey === keyed[0]!.message.orderingKey);

    it("plans keyed, keyless, expired and poison messages, and ids and partitions with # and %", function () {
        assert.ok(keyed.length > 0 && normal.length > keyed.length);
        assert.ok(planned.some((p) => p.expired) && planned.some((p) => p.poison));
        assert.ok(ids.some((id) => id.includes("#") && id.includes("%")));
        assert.ok(planned.some((p) => p.message.partition.includes("%")));
        assert.equal(new Set(ids).size, ids.length);
    });

    it("passes a clean run", function () {
        const r = checkInvariants(
            planned,
            normal.map((p) => ({ id: p.message.id })),
            deadLetters,
        );
        assert.deepEqual(
            [
                r.lost,
                r.inversions,
                r.duplicates,
                r.dlqUnexpected.length,
                r.dlqMissing.length,
                r.publishedButDeadLettered.length,
                r.wrongReason.length,
            ],
            [0, 0, 0, 0, 0, 0, 0],
        );
    });

    it("counts a lost message, a duplicate, and DLQ mismatches", function () {
        const topic = normal.slice(1).map((p) => ({ id: p.message.id }));
        topic.push({ id: normal[2]!.message.id });
        const poison = planned.find((p) => p.poison)!;
        const r = checkInvariants(
            planned,
            [...topic, { id: poison.message.id }],
            [
                ...deadLetters.slice(1),
                { id: normal[3]!.message.id, reason: "expired" },
                { ...deadLetters[1]!, reason: "other" },
            ],
        );
        const lost = [normal[0]!.message.id, deadLetters[0]!.id];
        assert.equal(r.lost, 2, "the first normal message, and the first dead letter that never reached the DLQ");
        assert.deepEqual([...r.lostIds].sort(), lost.sort());
        assert.equal(r.duplicates, 2, "one on the topic, one in the DLQ");
        assert.deepEqual(r.dlqUnexpected, [normal[3]!.message.id]);
        assert.deepEqual(r.dlqMissing, [deadLetters[0]!.id]);
        assert.deepEqual(r.publishedButDeadLettered, [poison.message.id]);
        assert.equal(r.wrongReason.length, 1);
    });

    it("counts an inversion within a key, ignores a late duplicate of an older message and order across keys", function () {
        assert.ok(sameKey.length >= 3);
        const [a, b, c] = sameKey.map((p) => ({ id: p.message.id }));
        assert.equal(countInversions(planned, [a!, c!, b!]), 1);
        assert.equal(
            countInversions(planned, [a!, b!, a!, c!]),
            0,
            "a redelivered older message after a younger one is deduplicated away",
        );
        const otherKey = keyed.find((p) => p.message.orderingKey !== sameKey[0]!.message.orderingKey)!;
        assert.equal(countInversions(planned, [{ id: otherKey.message.id }, a!, b!]), 0);
        const keyless = normal.filter((p) => p.message.orderingKey === undefined);
        assert.equal(
            countInversions(planned, [{ id: keyless[1]!.message.id }, { id: keyless[0]!.message.id }]),
            0,
            "keyless messages promise no order",
        );
    });

    it("takes an expiring message on the topic, in the DLQ as expired, or both (counted); any other reason is wrong", function () {
        const withExpiring = planMessages("t", 60, 1_000, { expiring: true });
        const expiring = withExpiring.filter((p) => p.expiring === true);
        assert.ok(expiring.length >= 5, "every 10th message");
        assert.ok(expiring.every((p) => !p.poison && !p.expired && p.message.expiresAt === undefined));
        const [published, both, deadOnly, wrong] = expiring.map((p) => p.message.id);
        const rest = withExpiring.filter((p) => p.expiring !== true);
        const r = checkInvariants(
            withExpiring,
            [
                ...rest.filter((p) => !p.expired && !p.poison).map((p) => ({ id: p.message.id })),
                ...[published!, both!, wrong!].map((id) => ({ id })),
                ...expiring.slice(4).map((p) => ({ id: p.message.id })),
            ],
            [
                ...rest
                    .filter((p) => p.expired || p.poison)
                    .map((p) => ({ id: p.message.id, reason: p.expired ? "expired" : "publish-rejected" })),
                { id: both!, reason: "expired" },
                { id: deadOnly!, reason: "expired" },
                { id: wrong!, reason: "publish-rejected" },
            ],
        );
        assert.deepEqual(
            [r.lost, r.dlqUnexpected.length, r.dlqMissing.length, r.publishedButDeadLettered.length],
            [0, 0, 0, 0],
        );
        assert.deepEqual([...r.publishedThenExpired].sort(), [both!, wrong!].sort());
        assert.deepEqual(r.wrongReason, [`${wrong!}: publish-rejected`]);
    });

    it("the redrive's checker fails on each problem, naming it", function () {
        const clean: RedriveReport = {
            deadLettered: 3,
            redriven: 2,
            alreadyRedriven: 1,
            notRedrivable: 0,
            failed: 0,
            identityChanged: [],
            undelivered: [],
            leftOver: 0,
            sweeps: 1,
        };
        const published = { publishedThenExpired: ["e-9"] };
        assert.deepEqual(redriveProblems(clean, published), []);
        const broken: [Partial<RedriveReport>, RegExp][] = [
            [{ redriven: 1 }, /redriven 1 \(\+1 already\) of 3 dead letters/],
            [{ notRedrivable: 1 }, /not-redrivable 1/],
            [{ failed: 2 }, /redrive-failed 2/],
            [{ identityChanged: ["e-9"] }, /identity-changed e-9/],
            [{ undelivered: ["e-9"] }, /redriven-undelivered e-9/],
            [{ leftOver: 4 }, /left-over-after-redrive 4/],
        ];
        for (const [change, problem] of broken)
            assert.match(redriveProblems({ ...clean, ...change }, published).join("; "), problem);
        assert.match(
            redriveProblems(clean, { publishedThenExpired: [] }).join("; "),
            /no event was published and then dead-lettered as expired/,
        );
    });

    it("prints the summary line in the exact format", function () {
        assert.equal(
            summaryLine([
                { messages: 10, lost: 0, inversions: 0, duplicates: 2 },
                { messages: 5, lost: 1, inversions: 3, duplicates: 0 },
            ] as never),
            "scenarios 2 messages 15 lost 1 inversions 3 duplicates 2",
        );
    });

    it("recognises terminal writes (completed, expired), the seam where a killed handler dies", function () {
        const setStatus = (status: string) =>
            new UpdateItemCommand({
                TableName: "t",
                Key: {},
                ExpressionAttributeValues: { [`:status_${status}`]: { S: status } },
            });
        assert.ok(isTerminalWrite(setStatus("completed")));
        assert.ok(
            isTerminalWrite(
                new TransactWriteItemsCommand({
                    TransactItems: [
                        {
                            Update: {
                                TableName: "t",
                                Key: {},
                                UpdateExpression: "SET a = :b",
                                ExpressionAttributeValues: { ":status_completed": { S: "completed" } },
                            },
                        },
                    ],
                }),
            ),
        );
        assert.ok(isTerminalWrite(setStatus("expired")));
        assert.ok(!isTerminalWrite(setStatus("claimed")));
    });

    it("reads the record ids a command completes, from each update's sort key (escaped ids too)", function () {
        /** An update of the record `id`'s item, setting the status the one value names. */
        const update = (id: string, status: "completed" | "expired") =>
            new UpdateItemCommand({
                TableName: "t",
                Key: { PK: { S: "P" }, SK: { S: recordSortKey(id, "sns") } },
                ExpressionAttributeValues: { [`:status_${status}`]: { S: status } },
            });
        assert.deepEqual(completedRecordIds(update("a#1%23", "completed")), ["a#1%23"]);
        assert.deepEqual(completedRecordIds(update("b", "expired")), [], "an expiry is not a completion");
    });

    it("reads the scale from the environment and rejects a bad value, naming the variable", function () {
        assert.deepEqual(faultScale({}), { totalMessages: 320, rate: 0.1, seed: 7 });
        assert.deepEqual(faultScale({ OUTBOX_FAULT_MESSAGES: "10000", OUTBOX_FAULT_RATE: "0.2" }), {
            totalMessages: 10000,
            rate: 0.2,
            seed: 7,
        });
        assert.throws(
            () => faultScale({ OUTBOX_FAULT_MESSAGES: "lots" }),
            (e: unknown) =>
                isOutboxError(e, "INVALID_CONFIG") &&
                /OUTBOX_FAULT_MESSAGES is "lots"; expected an integer from 8/.test((e as Error).message),
        );
        assert.throws(
            () => faultScale({ OUTBOX_FAULT_RATE: "0.9" }),
            /OUTBOX_FAULT_RATE is "0.9"; expected a number from 0 to 0.5/,
        );
        const scale = faultScale({ OUTBOX_FAULT_MESSAGES: "10" });
        assert.deepEqual(
            [0, 1, 2].map((i) => messagesFor(scale, i, 3)),
            [4, 3, 3],
        );
    });
});
