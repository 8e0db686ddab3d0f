/** Which lane of a shard a stream record goes to under `parallelizationFactor` (pure: no stream needed). */
import assert from "node:assert/strict";
import { laneOf } from "../../../runtime/testing/mapping/lane-routing";
import type { LambdaStreamRecord } from "../../../runtime/testing/stream-event";

function record(
    pk: string,
    sk: string,
    sequence: number,
    keyOrder: "PK first" | "SK first" = "PK first",
): LambdaStreamRecord {
    const keys = keyOrder === "PK first" ? { PK: { S: pk }, SK: { S: sk } } : { SK: { S: sk }, PK: { S: pk } };
    return { dynamodb: { Keys: keys, SequenceNumber: String(sequence) } } as unknown as LambdaStreamRecord;
}

describe("local mapping lane routing (parallelizationFactor)", () => {
    it("puts every record of one item in one lane, whatever the order of its key attributes", () => {
        for (let lanes = 1; lanes <= 10; lanes += 1) {
            for (let n = 0; n < 50; n += 1) {
                const lane = laneOf(record(`ORDER#${n}`, "OUTBOX#000001", 1), lanes);
                assert.ok(lane >= 0 && lane < lanes, `lane ${lane} of ${lanes}`);
                assert.equal(laneOf(record(`ORDER#${n}`, "OUTBOX#000001", 2, "SK first"), lanes), lane);
            }
        }
    });

    it("sends everything to lane 0 at factor 1", () => {
        for (let n = 0; n < 20; n += 1) assert.equal(laneOf(record(`P${n}`, `OUTBOX#${n}`, n), 1), 0);
    });

    it("spreads the items of one partition over the lanes: Lambda keeps order per item, not per partition key", () => {
        const lanes = new Set(
            Array.from({ length: 40 }, (_, n) =>
                laneOf(record("ORDER#1", `OUTBOX#${String(n).padStart(6, "0")}`, n), 4),
            ),
        );
        assert.deepEqual([...lanes].sort(), [0, 1, 2, 3]);
    });
});
