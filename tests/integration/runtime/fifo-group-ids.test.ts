/**
 * A FIFO group id SQS refuses is the message's own fault, never the queue's (issue 38): the fault server answers as
 * SQS does ("Value … for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric
 * and punctuation characters. 1 to 128 in length."; fauxqs 1.9.2 takes any group id, so it cannot show this), and
 * the real publisher and sweeper on DynamoDB Local count such a record, hold only its own key, and dead-letter it at
 * `maxPublishAttempts`: the shard is never held, the record never stays pending. The writer here has no `address`,
 * as the README builds one; with the queue's address it refuses these messages before any I/O
 * (`tests/unit/runtime/destinations.test.ts`).
 */
import assert from "node:assert/strict";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach, publishedIds } from "../../support/runtime/relay-fixtures";

/** The three cases, and a valid keyed record behind the third on another key of its partition. */
const REFUSED: readonly OutboxMessage[] = [
    { partition: "ORDER 1001", type: "OrderPlaced", payload: { n: 1 } },
    { partition: "P".repeat(200), type: "OrderPlaced", payload: { n: 2 } },
    { partition: "CUSTOMER#77", type: "OrderPlaced", payload: { n: 3 }, orderingKey: "customer 77" },
];
const VALID: readonly OutboxMessage[] = [
    { partition: "CUSTOMER#77", type: "OrderPlaced", payload: { n: 4 }, orderingKey: "customer-77" },
    { partition: "ORDER#1002", type: "OrderPlaced", payload: { n: 5 } },
];

describe("a FIFO group id SQS refuses (DynamoDB Local + the fault server's FIFO queue)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("is counted, holds only its own key, and is dead-lettered at maxPublishAttempts; the shard is never held and nothing stays pending", async function () {
        h = await createHarness({ destination: "sqs", fifo: true });
        const writer = new OutboxWriter({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        const refusedIds = (await writer.write({ messages: [...REFUSED] })).messageIds;
        const validIds = (await writer.write({ messages: [...VALID] })).messageIds;
        const config = { maxPublishAttempts: 2 };

        assert.deepEqual(await h.publisher(config)(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(
            publishedIds(h).sort(),
            [...validIds].sort(),
            "the valid records went on, the valid key of the refused one's partition too",
        );
        const afterStream = new Map((await h.records()).map((r) => [r.recordId, r]));
        for (const id of refusedIds)
            assert.equal(afterStream.get(id)?.status, "pending", "counted once, left to the sweeper");

        h.clock.advance(121_000);
        const swept = await createSweeper(h.config(config))();
        assert.deepEqual([swept.deadLettered, swept.failedPartitions], [3, 0]);
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [...refusedIds, ...validIds].map((id) => status.get(id)),
            ["completed", "completed", "completed", "completed", "completed"],
        );
        const dead = h.deadLetters();
        assert.deepEqual(
            dead.map((d) => [d.recordId, d.reason, d.body.errorCode]).sort(),
            refusedIds.map((id) => [id, "publish-rejected", "InvalidParameterValue"]).sort(),
        );
        for (const d of dead)
            assert.match(
                String(d.body.errorMessage),
                /for parameter MessageGroupId is invalid\. Reason: MessageGroupId can only include alphanumeric and punctuation characters\. 1 to 128 in length\./,
            );
        const again = await createSweeper(h.config(config))();
        assert.deepEqual([again.partitions, again.deadLettered], [0, 0], "nothing left pending");
    });

    it("with the queue's address, the writer refuses each of them before any I/O", async function () {
        h = await createHarness({ destination: "sqs", fifo: true });
        const writer = new OutboxWriter({ client: h.ddb, tableName: h.tableName, address: h.destinationArn });
        for (const message of REFUSED)
            await assert.rejects(writer.write({ messages: [message] }), /is the FIFO MessageGroupId/);
        assert.deepEqual(await h.items(), [], "nothing written, no FENCE row either");
    });
});
