/**
 * A partition whose fence another claimer raised above the relay's `claimVersion` (issue 38 item 4), on DynamoDB
 * Local with the table's real stream records and the fault server's SNS topic. The other claimer is an
 * `OutboxStore` used by hand with the docs' example token `{ owner: "relay-1", version: 7n }`, as a GoBridge
 * relay of version 7 would be: it claims one record of partition P and releases it. From then on the fence of P
 * is 7, and the real publisher and sweeper, at version 1, can never claim P again. That is reported, never
 * acknowledged: an error log naming the partition, both versions and the fix, the `FencedPartitions` metric, the
 * stream doorbell reported so the shard holds, the sweep's partition counted as failed and the sweep failed once
 * the other partitions are done. And the rule the fence must not break: it ends only P's drain; the other
 * partitions of the batch (or of the sweep's group) are delivered in the same invocation.
 */
import assert from "node:assert/strict";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach, metric } from "../../support/runtime/relay-fixtures";

/** The docs' example token (docs/runtime.md, "The store"). */
const FOREIGN = { owner: "relay-1", version: 7n } as const;

/** Keyed records in Q, then P, then R: P's doorbells sit between the others' in the shard. */
async function writeQPR(h: Harness): Promise<{ q: string[]; p: string[]; r: string[] }> {
    const write = async (partition: string, key: string) =>
        (
            await h.writer.write({
                messages: [1, 2].map((n) => ({ partition, type: "T", payload: { partition, n }, orderingKey: key })),
            })
        ).messageIds;
    return { q: await write("Q", "q"), p: await write("P", "p"), r: await write("R", "r") };
}

/** Another claimer touches P once: claims one record with version 7 and releases it. */
async function foreignTouch(h: Harness, partition: string): Promise<void> {
    const other = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
    const claimed = await other.claim(partition, FOREIGN, 1);
    assert.equal(claimed.length, 1, "the other claimer took one record");
    await other.release(
        claimed.map((r) => r.recordId),
        FOREIGN,
    );
}

async function statuses(h: Harness, ids: readonly string[]): Promise<string[]> {
    const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
    return ids.map((id) => byId.get(id) ?? "absent");
}

function sequenceOf(event: LambdaStreamEvent, id: string): string {
    const record = event.Records.find(
        (r) => (r.dynamodb.NewImage as Record<string, { S?: string }>).record_id?.S === id,
    );
    assert.ok(record, `record ${id} is in the batch`);
    return record.dynamodb.SequenceNumber;
}

/** The error log naming P, both versions and the fix. */
function fenceErrorLogged(logger: RecordingLogger, partition: string): boolean {
    return logger.lines.some(
        (l) =>
            l.level === "error" &&
            l.attributes?.partition === partition &&
            l.attributes.claimVersion === "1" &&
            l.attributes.fenceVersion === "7" &&
            l.attributes.code === "INVALID_CONFIG" &&
            String(l.attributes.reason).includes(
                "set claimVersion to at least 7 on every publisher and sweeper of the table",
            ) &&
            String(l.attributes.reason).includes("or stop the other claimer"),
    );
}

describe("a partition fenced above the relay's claimVersion (DynamoDB Local + the fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    /** P's fence error logged and counted once, and exactly `others` (the other partitions' records) delivered. */
    function assertPFencedAndOthersDelivered(logger: RecordingLogger, others: string[], why: string): void {
        assert.ok(fenceErrorLogged(logger, "P"), JSON.stringify(logger.lines));
        assert.equal(metric(h, "FencedPartitions"), 1);
        assert.deepEqual([...h.published().map((m) => m.id)].sort(), [...others].sort(), why);
    }

    it("the publisher reports P's doorbell (never acknowledged), logs the partition, both versions and the fix, counts FencedPartitions, and delivers the batch's other partitions", async function () {
        h = await createHarness();
        const { q, p, r } = await writeQPR(h);
        await foreignTouch(h, "P");
        const event = await h.streamEvent();
        const logger = new RecordingLogger();
        const publisher = h.publisher({ logger });

        assert.deepEqual(
            await publisher(event),
            { batchItemFailures: [{ itemIdentifier: sequenceOf(event, p[0]!) }] },
            "P's first doorbell is reported: the shard holds at it",
        );
        assertPFencedAndOthersDelivered(
            logger,
            [...q, ...r],
            "Q and R, before and after P in the shard, delivered in the same invocation",
        );
        assert.deepEqual(await statuses(h, [...q, ...r]), ["completed", "completed", "completed", "completed"]);
        assert.deepEqual(await statuses(h, p), ["pending", "pending"], "nothing of P claimed or completed");

        // Lambda retries from P's doorbell: still reported, never acknowledged; Q and R are not sent again.
        const at = event.Records.findIndex((x) => x.dynamodb.SequenceNumber === sequenceOf(event, p[0]!));
        const retry = { Records: event.Records.slice(at) };
        assert.deepEqual((await publisher(retry)).batchItemFailures, [{ itemIdentifier: sequenceOf(event, p[0]!) }]);
        assert.equal(h.published().length, 4);
        assert.equal(metric(h, "FencedPartitions"), 2);
    });

    it("the sweeper counts P as failed, delivers the other partitions, and fails its run after them", async function () {
        h = await createHarness();
        const { q, p, r } = await writeQPR(h);
        await foreignTouch(h, "P");
        h.clock.advance(121_000);
        const logger = new RecordingLogger();
        await assert.rejects(
            createSweeper(h.config({ logger }))(),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                err.context.partition === "P" &&
                err.context.fenceVersion === "7" &&
                /the fence of partition P is at version 7, above this relay's claimVersion 1/.test(err.message),
        );
        assertPFencedAndOthersDelivered(
            logger,
            [...q, ...r],
            "the other partitions of the sweep were delivered before it failed",
        );
        assert.deepEqual(await statuses(h, p), ["pending", "pending"]);
    });

    it("with claimVersion at the fence's version, the publisher and the sweeper deliver P", async function () {
        h = await createHarness();
        const { q, p, r } = await writeQPR(h);
        await foreignTouch(h, "P");
        const logger = new RecordingLogger();
        assert.deepEqual(await h.publisher({ claimVersion: 7n, logger })(await h.streamEvent()), {
            batchItemFailures: [],
        });
        assert.deepEqual(await statuses(h, [...q, ...p, ...r]), Array(6).fill("completed"));
        assert.deepEqual(
            h
                .published()
                .map((m) => m.id)
                .filter((id) => p.includes(id)),
            p,
            "P in order",
        );
        assert.equal(metric(h, "FencedPartitions"), 0);
        assert.deepEqual(
            logger.lines.filter((l) => l.level === "error"),
            [],
        );

        const more = (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 3, orderingKey: "p" }] }))
            .messageIds;
        h.clock.advance(121_000);
        const sweep = await createSweeper(h.config({ claimVersion: 7n }))();
        assert.deepEqual([sweep.published, sweep.failedPartitions], [1, 0]);
        assert.deepEqual(await statuses(h, more), ["completed"]);
    });
});
