/**
 * The SNS rules of the fault server (dev/emulators/aws-fault-server/sns-rules.ts) on their own: the batch checks
 * and FIFO deduplication. Through the real SDK, over HTTP, the server is tested in
 * tests/integration/emulators/aws-fault-server.test.ts.
 */
import assert from "node:assert/strict";
import { ApiError } from "../../../dev/emulators/aws-fault-server/api-error";
import {
    acceptSns,
    checkPublishBatch,
    checkSnsEntry,
    checkTopicName,
} from "../../../dev/emulators/aws-fault-server/sns-rules";
import { createServerState, createTopic, type Topic } from "../../../dev/emulators/aws-fault-server/state";
import type { CallInfo, EntryInfo } from "../../../dev/emulators/aws-fault-server/types";

const entry = (id: string, body = "m", extra: Partial<EntryInfo> = {}): EntryInfo => ({
    id,
    index: 0,
    body,
    attributes: {},
    ...extra,
});

function refusedWith(code: string, fn: () => void): void {
    assert.throws(fn, (err: unknown) => err instanceof ApiError && err.code === code && err.status === 400);
}

describe("AWS fault server: the rules SNS enforces", () => {
    const state = createServerState({});
    const standard = state.topics.get(createTopic(state, "plain")) as Topic;
    const fifo = state.topics.get(createTopic(state, "orders.fifo")) as Topic;
    const call: CallInfo = { action: "Publish", callNumber: 1, entries: [] };

    it("refuses an empty batch, more than 10 entries, repeated ids, and more than 256 KB in all", () => {
        refusedWith("EmptyBatchRequest", () => checkPublishBatch(standard, []));
        refusedWith("TooManyEntriesInBatchRequest", () =>
            checkPublishBatch(
                standard,
                Array.from({ length: 11 }, (_, i) => entry(`e${i}`)),
            ),
        );
        refusedWith("BatchEntryIdsNotDistinct", () => checkPublishBatch(standard, [entry("a"), entry("a")]));
        refusedWith("BatchRequestTooLong", () =>
            checkPublishBatch(standard, [entry("a", "x".repeat(200_000)), entry("b", "x".repeat(100_000))]),
        );
        checkPublishBatch(
            standard,
            Array.from({ length: 10 }, (_, i) => entry(`e${i}`, "x".repeat(26_000))),
        );
    });

    it("counts attribute names, types and values in the 256 KB of one message", () => {
        const attributes = { k: { dataType: "String", stringValue: "v" } };
        checkSnsEntry(standard, entry("a", "x".repeat(262_144 - 8), { attributes }));
        refusedWith("InvalidParameter", () =>
            checkSnsEntry(standard, entry("a", "x".repeat(262_144 - 7), { attributes })),
        );
    });

    it("requires a FIFO topic's MessageGroupId, and its MessageDeduplicationId without content-based deduplication", () => {
        refusedWith("InvalidParameter", () => checkSnsEntry(fifo, entry("a")));
        refusedWith("InvalidParameter", () => checkSnsEntry(fifo, entry("a", "m", { messageGroupId: "g" })));
        checkSnsEntry(fifo, entry("a", "m", { messageGroupId: "g", messageDeduplicationId: "d" }));
        const contentBased = state.topics.get(createTopic(state, "cb.fifo", true)) as Topic;
        checkSnsEntry(contentBased, entry("a", "m", { messageGroupId: "g" }));
    });

    it("answers a FIFO duplicate with the first message's id, records it once, and numbers only new messages", () => {
        const accept = (id: string, body: string, messageDeduplicationId: string) =>
            acceptSns(state, fifo, entry(id, body, { messageGroupId: "g", messageDeduplicationId }), call, true);
        const first = accept("a", "m", "d1");
        const again = accept("b", "other", "d1");
        const next = accept("c", "m", "d2");
        assert.deepEqual(again, { messageId: first.messageId });
        assert.equal(BigInt(next.sequenceNumber as string), BigInt(first.sequenceNumber as string) + 1n);
        assert.equal(state.accepted.filter((m) => m.destination === fifo.arn).length, 2);
    });

    it("refuses a topic name that breaks SNS's rule, and .fifo without FifoTopic=true (or the reverse)", () => {
        refusedWith("InvalidParameter", () => checkTopicName("has space", {}));
        refusedWith("InvalidParameter", () => checkTopicName("x.fifo", {}));
        refusedWith("InvalidParameter", () => checkTopicName("x", { FifoTopic: "true" }));
        checkTopicName("x.fifo", { FifoTopic: "true" });
    });
});
