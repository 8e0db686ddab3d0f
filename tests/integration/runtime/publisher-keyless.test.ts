/**
 * The stream publisher's keyless path on DynamoDB Local (real stream records, read from the table's stream and
 * filtered with the component's pattern) and the AWS fault server (a fake, because no emulator can fail one
 * PublishBatch entry on demand): batches, completions, the failure it reports, FIFO attributes, what it skips.
 * What is not proven here: the serialized Lambda code (tests/e2e) and GSI lag (DynamoDB Local's indexes are synchronous).
 */
import assert from "node:assert/strict";
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import type { LambdaStreamRecord } from "../../../runtime/testing/stream-event";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { marshalRecord, pendingRecord } from "../../../runtime/record/codec";
import { ATTR } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import {
    closeAfterEach,
    from,
    idOf,
    skOf,
    metric,
    failingCompletions,
    failEntryOnce,
    publishedIds,
    streamOfKeyless,
    putRawItem,
} from "../../support/runtime/relay-fixtures";

const GRACE = 3600;

/** The item of a pending record `recordId` of `partition` (seq 1, now), envelope `envelopeId` with payload "1". */
function pendingRowOf(h: Harness, partition: string, recordId: string, envelopeId: string) {
    return marshalRecord(
        pendingRecord(
            {
                partition,
                recordId,
                bindingId: "sns",
                address: h.topicArn,
                envelope: { id: envelopeId, subject: "T", payload: "1" },
            },
            1n,
            h.clock.now(),
        ),
    );
}

describe("createPublisher on keyless records (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("publishes keyless records in PublishBatch calls of up to 10, with id, type and headers as attributes, and completes each with a ttl", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: Array.from({ length: 15 }, (_, i) => ({
                partition: `ORDER#${i % 3}`,
                type: "OrderCreated",
                payload: { n: i, text: "é<&>" },
                headers: { tenant: "acme" },
            })),
        });
        const event = await h.streamEvent();
        assert.equal(event.Records.length, 15);
        const response = await h.publisher()(event);
        assert.deepEqual(response, { batchItemFailures: [] });

        const calls = h.server.calls().filter((c) => c.action === "PublishBatch");
        // The two calls are in flight together, so either may arrive first.
        assert.deepEqual(
            calls.map((c) => c.entries).sort((a, b) => b - a),
            [10, 5],
        );
        const published = h.published();
        assert.deepEqual(published.map((p) => p.id).sort(), [...messageIds].sort());
        for (const p of published) {
            assert.equal(p.attributes["outbox.type"], "OrderCreated");
            assert.equal(p.attributes.tenant, "acme");
            assert.equal((JSON.parse(p.body) as { text: string }).text, "é<&>");
            assert.equal(p.groupId, undefined);
        }
        const now = h.clock.now();
        for (const r of await h.records()) {
            assert.equal(r.status, "completed");
            assert.equal(r.completedAt, now);
        }
        for (const item of await h.items()) {
            assert.equal(item[ATTR.ttl]?.N, String(Math.floor(now / 1000) + GRACE));
            assert.equal(item[ATTR.claimSort], undefined);
            assert.equal(item[ATTR.hasExpiry], undefined);
        }
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
        assert.equal(metric(h, "Published"), 15);
        const line = JSON.parse(h.metricLines[0]!) as {
            _aws: { CloudWatchMetrics: { Namespace: string }[] };
            AgeAtPublish: number[];
        };
        assert.equal(line._aws.CloudWatchMetrics[0]!.Namespace, "DynamoDBOutbox");
        assert.equal(line.AgeAtPublish.length, 15);
        assert.ok(!h.metricLines.join("").includes("é<&>"), "metric lines carry no payload");
    });

    it("reports the first failed entry's SequenceNumber; what SNS accepted after it, in its call or a concurrent one, is completed, and the retry sends no duplicate", async function () {
        h = await createHarness();
        const event = await streamOfKeyless(h, 14);
        const fourth = event.Records[3]!;
        // SNS fails entry 3 of the first call (transient) but accepts the entries after it, as a real PublishBatch may.
        failEntryOnce(h, idOf(fourth));
        const publisher = h.publisher();

        const first = await publisher(event);
        assert.deepEqual(first, { batchItemFailures: [{ itemIdentifier: fourth.dynamodb.SequenceNumber }] });
        assert.deepEqual(
            h.server
                .calls()
                .filter((c) => c.action === "PublishBatch")
                .map((c) => c.entries)
                .sort((a, b) => b - a),
            [10, 4],
            "both calls were in flight together",
        );
        const afterFirst = publishedIds(h);
        assert.deepEqual(
            [...afterFirst].sort(),
            event.Records.filter((_, i) => i !== 3)
                .map(idOf)
                .sort(),
            "every entry but the fourth accepted",
        );
        assert.equal(metric(h, "PublishedAfterFailure"), 10, "entries 4-9 of the first call and 10-13 of the second");
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            event.Records.map((r) => status.get(idOf(r))),
            event.Records.map((_, i) => (i === 3 ? "pending" : "completed")),
            "the failed record stays pending",
        );

        const retry = await publisher(from(event, fourth.dynamodb.SequenceNumber));
        assert.deepEqual(retry, { batchItemFailures: [] });
        const ids = publishedIds(h);
        assert.equal(ids.length, 14, "every record exactly once");
        assert.deepEqual([...ids].sort(), event.Records.map(idOf).sort());
        assert.equal(
            metric(h, "DuplicatesAvoided"),
            10,
            "the consistent read skipped the 10 completed after the failure",
        );
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("keeps the lowest failure reported when a completion fails on an entry after a failed one (Lambda must not rewind past it)", async function () {
        h = await createHarness();
        const event = await streamOfKeyless(h, 10);
        const [fourth, seventh] = [event.Records[3]!, event.Records[6]!];
        failEntryOnce(h, idOf(fourth));
        // A fake DynamoDB in front of the local one: no emulator throttles one chosen UpdateItem.
        const dynamodb = failingCompletions(h, [skOf(seventh)]);
        const response = await h.publisher({ dynamodb })(event);
        assert.deepEqual(response, { batchItemFailures: [{ itemIdentifier: fourth.dynamodb.SequenceNumber }] });
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            event.Records.map((r) => status.get(idOf(r))),
            [
                "completed",
                "completed",
                "completed",
                "pending",
                "completed",
                "completed",
                "pending",
                "completed",
                "completed",
                "completed",
            ],
        );
    });

    it("reports a record whose completion failed after SNS accepted it: it stays pending, the retry publishes it again (at least once) and completes it", async function () {
        h = await createHarness();
        const event = await streamOfKeyless(h, 5);
        const third = event.Records[2]!;
        const logger = new RecordingLogger();
        const response = await h.publisher({ dynamodb: failingCompletions(h, [skOf(third)]), logger })(event);
        assert.deepEqual(response, { batchItemFailures: [{ itemIdentifier: third.dynamodb.SequenceNumber }] });
        assert.deepEqual(
            logger.lines
                .filter((l) => l.level === "error")
                .map((l) => [l.message, l.attributes?.recordId, l.attributes?.code]),
            [["publisher: a step after publishing failed", idOf(third), "THROTTLED"]],
        );
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            event.Records.map((r) => status.get(idOf(r))),
            ["completed", "completed", "pending", "completed", "completed"],
        );
        assert.equal(metric(h, "PublishedNotCompleted"), 1, "the duplicate to come is counted");

        assert.deepEqual(await h.publisher()(from(event, third.dynamodb.SequenceNumber)), { batchItemFailures: [] });
        assert.deepEqual(
            publishedIds(h),
            [...event.Records.map(idOf), idOf(third)],
            "the third is sent twice, nothing else",
        );
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("counts a keyed record SNS accepted whose completion was throttled as PublishedNotCompleted: the retry publishes it once more", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [{ partition: "P", type: "T", payload: 1, orderingKey: "k" }],
        });
        const event = await h.streamEvent();
        const response = await h.publisher({ dynamodb: failingCompletions(h, [skOf(event.Records[0]!)]) })(event);
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.equal(metric(h, "PublishedNotCompleted"), 1);
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h), [messageIds[0], messageIds[0]], "exactly the counted duplicate");
    });

    it("counts an expired record whose expired write was throttled as DeadLetteredNotMarked: the retry sends it to the DLQ once more", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [{ partition: "P", type: "T", payload: 1, expiresAt: new Date(h.clock.now() + 1_000) }],
        });
        h.clock.advance(5_000);
        const event = await h.streamEvent();
        const response = await h.publisher({ dynamodb: failingCompletions(h, [skOf(event.Records[0]!)], "expired") })(
            event,
        );
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.equal(metric(h, "DeadLetteredNotMarked"), 1);
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.deadLetters().map((d) => d.recordId),
            [messageIds[0], messageIds[0]],
            "exactly the counted duplicate",
        );
        assert.deepEqual(h.published(), []);
    });

    it("counts a record a claimer took between its publish and its completion as CompletionRaces: the claimer publishes it again", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const event = await h.streamEvent();
        const sweeper = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        // A fake around DynamoDB Local: the claim lands exactly between the publish and the completion, a window no emulator opens on demand.
        const send = async (command: object): Promise<unknown> => {
            if (
                command instanceof UpdateItemCommand &&
                JSON.stringify(command.input.ExpressionAttributeValues ?? {}).includes('"completed"')
            ) {
                assert.equal((await sweeper.claim("P", { owner: "sweeper/race", version: 1n }, 10)).length, 1);
            }
            return h.ddb.send(command as never);
        };
        assert.deepEqual(await h.publisher({ dynamodb: { send } as unknown as Harness["ddb"] })(event), {
            batchItemFailures: [],
        });
        assert.equal(metric(h, "CompletionRaces"), 1);
        assert.equal((await h.records())[0]!.status, "claimed", "the claimer owns it now, and publishes it once more");
        assert.deepEqual(publishedIds(h), messageIds);
    });

    it("publishes the same INSERT once when an event carries it twice, counting the second as DuplicatesAvoided", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })) });
        const event = await h.streamEvent();
        const twice = { Records: [event.Records[0]!, event.Records[1]!, event.Records[0]!] };
        assert.deepEqual(await h.publisher()(twice), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h), event.Records.map(idOf));
        assert.equal(metric(h, "DuplicatesAvoided"), 1);
    });

    it("a whole-call transient failure reports the first record and completes nothing", async function () {
        h = await createHarness({ faults: { calls: [{ kind: "Throttled", actions: ["PublishBatch"], times: 1 }] } });
        await h.writer.write({ messages: [1, 2, 3].map((n) => ({ partition: "P", type: "T", payload: n })) });
        const event = await h.streamEvent();
        const response = await h.publisher()(event);
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.equal(h.published().length, 3);
    });

    it("on a FIFO topic sets MessageGroupId to the ordering key or the partition and MessageDeduplicationId to the record id", async function () {
        h = await createHarness({ fifo: true });
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "ORDER#1", type: "T", payload: 1 },
                { partition: "ORDER#1", type: "T", payload: 2, orderingKey: "customer-9" },
            ],
        });
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        const byId = new Map(h.published().map((p) => [p.id, p]));
        assert.equal(byId.get(messageIds[0]!)?.groupId, "ORDER#1");
        assert.equal(byId.get(messageIds[0]!)?.dedupId, messageIds[0]);
        assert.equal(byId.get(messageIds[1]!)?.groupId, "customer-9");
        assert.equal(byId.get(messageIds[1]!)?.dedupId, messageIds[1]);
    });

    it("ignores what is not an INSERT of an outbox record", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ id: "r1", partition: "P", type: "T", payload: 1 }] });
        const [record] = (await h.streamEvent()).Records;
        const modify = { ...record!, eventName: "MODIFY" as const };
        const remove = {
            ...record!,
            eventName: "REMOVE" as const,
            dynamodb: { ...record!.dynamodb, NewImage: undefined },
        };
        const business = { ...record!, dynamodb: { ...record!.dynamodb, Keys: { PK: { S: "P" }, SK: { S: "META" } } } };
        const publisher = h.publisher();
        assert.deepEqual(await publisher({ Records: [modify, remove, business] }), { batchItemFailures: [] });
        assert.deepEqual(await publisher({ Records: [] }), { batchItemFailures: [] });
        assert.equal(h.server.calls().length, 0);
        assert.equal(metric(h, "IgnoredRecords"), 3);
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("stops starting work when the invocation runs short of time, reporting the next record", async function () {
        h = await createHarness();
        await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: 1 },
                { partition: "K", type: "T", payload: 2, orderingKey: "k" },
            ],
        });
        const event = await h.streamEvent();
        let remaining = 60_000;
        const publisher = h.publisher({ reserveMs: 5_000 });
        const context = { awsRequestId: "req-1", getRemainingTimeInMillis: () => remaining };
        remaining = 4_000;
        assert.deepEqual(await publisher(event, context), {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.equal(h.published().length, 0);
        remaining = 60_000;
        assert.deepEqual(await publisher(event, context), { batchItemFailures: [] });
        assert.equal(h.published().length, 2);
    });

    it("publishes a row written without status (an older GoBridge build) once: it is completed, and a redelivery skips it", async function () {
        h = await createHarness();
        const item = pendingRowOf(h, "P", "old-1", "old-1");
        delete item.status;
        await putRawItem(h, item);
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h), ["old-1"]);
        assert.equal((await h.records())[0]!.status, "completed");
    });

    it("takes a PublishBatch that answers nothing (undefined) for a transient failure: the batch is reported at its first record, nothing is completed, and the retry delivers it", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })),
        });
        const event = await h.streamEvent();
        // A fake SNS client in front of the test server: no server answers a call with no output at all.
        const sns = {
            send: (command: object) =>
                command instanceof PublishBatchCommand ? Promise.resolve(undefined) : h.sns.send(command as never),
        };
        const logger = new RecordingLogger();
        assert.deepEqual(await h.publisher({ sns, logger })(event), {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        assert.ok(logger.lines.some((l) => l.message === "outbox publish failed" && l.attributes?.code === "NoResult"));
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h).sort(), [...messageIds].sort());
    });

    it("never publishes a record without a record_id (consumers could not deduplicate it): a stream image whose record_id is NULL, and a row written without one, are skipped as undecodable by the stream path and the sweeper; the others are delivered", async function () {
        h = await createHarness();
        const logger = new RecordingLogger();
        // DynamoDB refuses a NULL or empty record_id (a RecordIDIndex key), so the row lacks it: as a foreign writer could leave it.
        const item = pendingRowOf(h, "NOID", "dropped", "env-noid");
        delete item[ATTR.recordId];
        await putRawItem(h, item);
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "NOID", type: "T", payload: "fine" },
                { partition: "NULLED", type: "T", payload: "nulled" },
            ],
        });
        const event = await h.streamEvent();
        // The image of the last record as a hostile or broken producer could hand it over.
        const last = event.Records[2]!;
        const nulled = {
            ...last,
            dynamodb: { ...last.dynamodb, NewImage: { ...last.dynamodb.NewImage, [ATTR.recordId]: { NULL: true } } },
        } as LambdaStreamRecord;
        assert.deepEqual(await h.publisher({ logger })({ Records: [event.Records[0]!, event.Records[1]!, nulled] }), {
            batchItemFailures: [],
        });
        assert.deepEqual(publishedIds(h), [messageIds[0]], "nothing went out with an empty outbox.id");
        assert.deepEqual(
            logger.lines.filter((l) => l.level === "error").map((l) => [l.message, l.attributes?.code]),
            [
                ["publisher: an OUTBOX# item could not be decoded; skipped", "INVALID_PAYLOAD"],
                ["publisher: an OUTBOX# item could not be decoded; skipped", "INVALID_PAYLOAD"],
            ],
        );
        h.clock.advance(200_000);
        const swept = await createSweeper(h.config())();
        assert.equal(
            swept.published,
            1,
            "the sweeper delivers the record whose stream image was broken, from the table",
        );
        assert.deepEqual(publishedIds(h), messageIds, "and nothing with an empty outbox.id");
    });

    it("skips a redelivered batch whose records are all completed", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })) });
        const event = await h.streamEvent();
        await h.publisher()(event);
        await h.publisher()(event);
        assert.equal(h.published().length, 2);
        assert.equal(metric(h, "DuplicatesAvoided"), 2);
    });

    it("measures the write units of a completion (pending → completed)", async function () {
        h = await createHarness();
        await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: { a: 1 } },
                { partition: "P", type: "T", payload: { a: 2 }, expiresAt: new Date(h.clock.now() + 60_000) },
            ],
        });
        const units: number[] = [];
        const metered = {
            send: async (command: object) => {
                if (command instanceof UpdateItemCommand)
                    (command.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = "INDEXES";
                const out = (await h.ddb.send(command as never)) as { ConsumedCapacity?: { CapacityUnits?: number } };
                if (command instanceof UpdateItemCommand) units.push(out.ConsumedCapacity?.CapacityUnits ?? -1);
                return out;
            },
        };
        await h.publisher({ dynamodb: metered })(await h.streamEvent());
        // Table 1 + ClaimIndex removal 1; + ExpiryIndex removal 1 with an expiry. RecordIDIndex (KEYS_ONLY) is untouched.
        assert.deepEqual([...units].sort(), [2, 3]);
    });
});
