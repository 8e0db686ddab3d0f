/**
 * How the local mapping reads a handler's `batchItemFailures` answer, the rule Lambda applies under
 * `ReportBatchItemFailures`, on its own. The mapping's behaviour around it (checkpoint, retry, give up) is proven
 * against DynamoDB Local in tests/integration/testing/event-source-mapping.test.ts.
 */
import assert from "node:assert/strict";
import { lowestFailedIndex } from "../../../runtime/testing/mapping/batch-item-failures";
import type { LambdaStreamHandlerResult, LambdaStreamRecord } from "../../../runtime/testing/stream-event";

const batch = ["101", "102", "103"].map((seq) => ({ dynamodb: { SequenceNumber: seq } }) as LambdaStreamRecord);

describe("testing: batchItemFailures as Lambda reads it", () => {
    it("succeeds on no answer, an answer without failures, and an empty list", () => {
        for (const result of [
            undefined,
            null,
            {},
            { batchItemFailures: null },
            { batchItemFailures: [] },
        ] as LambdaStreamHandlerResult[]) {
            assert.equal(lowestFailedIndex(result, batch), undefined, JSON.stringify(result));
        }
    });

    it("fails from the lowest reported record, whatever the order of the list", () => {
        assert.equal(lowestFailedIndex({ batchItemFailures: [{ itemIdentifier: "103" }] }, batch), 2);
        assert.equal(
            lowestFailedIndex({ batchItemFailures: [{ itemIdentifier: "103" }, { itemIdentifier: "102" }] }, batch),
            1,
        );
    });

    it("fails the whole batch on an identifier not in it, an empty or missing one, or a list that is not one", () => {
        const wholeBatch = [
            { batchItemFailures: [{ itemIdentifier: "102" }, { itemIdentifier: "999" }] },
            { batchItemFailures: [{ itemIdentifier: "" }] },
            { batchItemFailures: [{ itemIdentifier: null }] },
            { batchItemFailures: [{}] },
            { batchItemFailures: [null] },
            { batchItemFailures: "102" },
        ] as unknown as LambdaStreamHandlerResult[];
        for (const result of wholeBatch) assert.equal(lowestFailedIndex(result, batch), 0, JSON.stringify(result));
    });

    it("counts an answer that is not an object as success (Lambda's documentation lists no such case)", () => {
        assert.equal(lowestFailedIndex("ok" as unknown as LambdaStreamHandlerResult, batch), undefined);
    });
});
