/**
 * The relay's rules, the same for each destination kind, on DynamoDB Local with the table's real stream records:
 * an SNS topic, an SQS queue and an EventBridge bus, each the fault server's (a fake for SNS and SQS, because no
 * emulator fails one batch entry on demand; a stand-in for EventBridge, which has no maintained emulator). For each
 * kind: what a consumer receives; a failure in the middle of a batch (the lowest reported, the accepted entries
 * completed); a refused entry held to its own key and dead-lettered at maxPublishAttempts by the sweeper; a fault of
 * the deployment holding the shard on the stream path and in the sweeper; the sweeper publishing what the stream
 * path missed; batch calls cut exactly at the kind's bytes per call. Then what only one kind has: a FIFO queue's
 * groups, a PutEvents answer that names no outcome for an entry, and a bus that does not exist.
 */
import assert from "node:assert/strict";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { PutEventsCommand, type PutEventsCommandOutput } from "@aws-sdk/client-eventbridge";
import type { CallFaultRule, EntryFaultRule, RecordedMessage } from "../../../dev/emulators/aws-fault-server";
import { eventEntrySize } from "../../../dev/emulators/aws-fault-server/events-rules";
import type { DestinationKind } from "../../../runtime/destination/kind";
import { isOutboxError } from "../../../runtime/errors";
import { recordKey } from "../../../runtime/record/codec";
import { ATTR } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { createHarness, entryRecordId, type Harness } from "../../support/runtime/harness";
import {
    closeAfterEach,
    idOf,
    metric,
    from,
    publishedIds,
    streamOfKeyless,
} from "../../support/runtime/relay-fixtures";

/** Per kind: an entry error the service means as transient, one it blames on the message, and one on the deployment. */
const ENTRY_ERRORS: Readonly<
    Record<DestinationKind, { transient: EntryFaultRule; message: EntryFaultRule; deployment: EntryFaultRule }>
> = {
    sns: {
        transient: { code: "InternalError", senderFault: false },
        message: { code: "InvalidParameter", senderFault: true, message: "Invalid parameter: Message" },
        deployment: { code: "KMSInvalidState", senderFault: true },
    },
    sqs: {
        transient: { code: "InternalError", senderFault: false },
        message: { code: "InvalidMessageContents", senderFault: true, message: "Invalid characters found." },
        deployment: { code: "KmsAccessDenied", senderFault: true },
    },
    eventbridge: {
        transient: { code: "InternalFailure" },
        message: { code: "MalformedDetail", message: "Detail is malformed." },
        deployment: { code: "NotAuthorizedForSourceException", message: "Not authorized for the source." },
    },
};

/** Per kind: a whole call the service refuses because the destination itself is wrong (missing, or denied). */
const CALL_ERRORS: Readonly<Record<DestinationKind, CallFaultRule>> = {
    sns: { kind: "NotFound", actions: ["PublishBatch"] },
    sqs: { kind: "Error", code: "AWS.SimpleQueueService.NonExistentQueue", status: 400, actions: ["SendMessageBatch"] },
    eventbridge: { kind: "Error", code: "AccessDeniedException", status: 400, actions: ["PutEvents"] },
};

/** An entry rule of this harness's kind, firing on the record ids given. */
function entryFault(h: Harness, error: EntryFaultRule, ids: readonly string[], times?: number): EntryFaultRule {
    return {
        ...error,
        actions: [h.batchAction],
        when: (entry) => ids.includes(entryRecordId(entry) ?? ""),
        ...(times !== undefined ? { times } : {}),
    };
}

/**
 * Each kind's bytes per batch call, written out here rather than read from the runtime: SNS's 256 KiB, SQS's 1 MiB,
 * and the 1,000,000 bytes the relay keeps to for EventBridge's "under 1 MB".
 */
const BYTES_PER_CALL: Readonly<Record<DestinationKind, number>> = {
    sns: 256 * 1024,
    sqs: 1024 * 1024,
    eventbridge: 1_000_000,
};

/**
 * An accepted entry's size as its service counts it, from what the service received: for SNS and SQS the body and
 * each attribute's name, data type and value in UTF-8 bytes; for EventBridge the UTF-8 bytes of `Source`,
 * `DetailType` and `Detail` (the fault server's own count, "Calculating PutEvents event entry size").
 */
function sizeAsCounted(m: RecordedMessage): number {
    if (m.service === "events")
        return eventEntrySize({ source: m.source, detailType: m.detailType, detail: m.body, resources: [] });
    return Object.entries(m.attributes).reduce(
        (n, [name, a]) =>
            n +
            Buffer.byteLength(name) +
            Buffer.byteLength(a.dataType) +
            Buffer.byteLength(a.stringValue ?? a.binaryValue ?? ""),
        Buffer.byteLength(m.body),
    );
}

for (const kind of ["sns", "sqs", "eventbridge"] as const) {
    describe(`the relay publishing to ${kind === "sns" ? "an SNS topic" : kind === "sqs" ? "an SQS queue" : "an EventBridge bus"} (DynamoDB Local + the fault server)`, function () {
        let h: Harness;
        closeAfterEach(() => h);

        it("publishes a stream batch in batch calls of up to 10 and completes each record; the consumer gets the id, type, headers and payload", async function () {
            h = await createHarness({ destination: kind });
            const { messageIds } = await h.writer.write({
                messages: Array.from({ length: 12 }, (_, i) => ({
                    partition: `P${i % 3}`,
                    type: "OrderPlaced",
                    payload: { n: i, note: "é <&>" },
                    headers: { tenant: "acme" },
                })),
            });
            assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
            const calls = h.server.calls().filter((c) => c.action === h.batchAction);
            assert.deepEqual(
                calls.map((c) => c.entries).sort((a, b) => b - a),
                [10, 2],
                `two ${h.batchAction} calls`,
            );
            const published = h.published();
            assert.deepEqual(published.map((p) => p.id).sort(), [...messageIds].sort());
            const first = published.find((p) => p.id === messageIds[0])!;
            assert.deepEqual(JSON.parse(first.body), { n: 0, note: "é <&>" });
            // The source is the table's name by default: the inbox keys its markers on it (issue 33).
            assert.deepEqual(first.attributes, {
                "outbox.id": messageIds[0],
                "outbox.type": "OrderPlaced",
                "outbox.source": h.tableName,
                tenant: "acme",
            });
            assert.ok((await h.records()).every((r) => r.status === "completed"));
            if (kind === "eventbridge") {
                const event = h.server.busEvents(h.destinationArn)[0]!;
                assert.deepEqual([event.source, event.detailType], ["dynamodb-outbox", "OrderPlaced"]);
                assert.equal(
                    (JSON.parse(event.body) as { outbox: { source?: string } }).outbox.source,
                    h.tableName,
                    "detail.outbox.source",
                );
            }
        });

        it("stamps the handlers' source (by default the table name), publishes a record a redrive wrote under its origin id, and one written under the older header budget without its source", async function () {
            h = await createHarness({ destination: kind });
            const { messageIds } = await h.writer.write({
                messages: [
                    { partition: "P", type: "OrderPlaced", payload: { n: 1 } },
                    {
                        id: "redrive.evt-7",
                        originId: "evt-7",
                        partition: "P",
                        type: "OrderPlaced",
                        payload: { n: 2 },
                    },
                ],
            });
            const record = (await h.records()).find((r) => r.recordId === "redrive.evt-7")!;
            assert.equal(record.envelope.headers["outbox.origin-id"], "evt-7", "stored as a reserved envelope header");
            // Eight headers: what the writer accepted before outbox.source took a slot, written as an older writer did.
            const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`h${i}`, "v"]));
            await new OutboxStore({ client: h.ddb, tableName: h.tableName }).persist([
                {
                    partition: "P",
                    recordId: "old-budget-1",
                    bindingId: kind,
                    address: h.destinationArn,
                    envelope: { id: "old-budget-1", subject: "OrderPlaced", payload: '{"n":3}', headers: eight },
                },
            ]);
            assert.deepEqual(await h.publisher({ source: "orders" })(await h.streamEvent()), {
                batchItemFailures: [],
            });
            const byId = new Map(h.published().map((p) => [p.id, p]));
            assert.equal(byId.get(messageIds[0]!)?.attributes["outbox.source"], "orders");
            assert.deepEqual(
                [byId.get("evt-7")?.body, byId.get("evt-7")?.attributes["outbox.source"]],
                ['{"n":2}', "orders"],
                "outbox.id is the origin id, not the record id",
            );
            assert.equal(byId.has("redrive.evt-7"), false);
            const old = byId.get("old-budget-1");
            assert.deepEqual(
                old?.attributes,
                { "outbox.id": "old-budget-1", "outbox.type": "OrderPlaced", ...eight },
                "published, without its source, never refused",
            );
            assert.ok((await h.records()).every((r) => r.status === "completed"));
        });

        it("reports the lowest failure of a batch; what the destination accepted after it is completed, and the retry sends no duplicate", async function () {
            h = await createHarness({ destination: kind });
            const event = await streamOfKeyless(h, 14);
            const fourth = event.Records[3]!;
            h.server.setFaults({ entries: [entryFault(h, ENTRY_ERRORS[kind].transient, [idOf(fourth)], 1)] });
            const publisher = h.publisher();

            assert.deepEqual(await publisher(event), {
                batchItemFailures: [{ itemIdentifier: fourth.dynamodb.SequenceNumber }],
            });
            assert.deepEqual(
                publishedIds(h).sort(),
                event.Records.filter((_, i) => i !== 3)
                    .map(idOf)
                    .sort(),
                "every entry but the fourth accepted, those after it in its call too",
            );
            const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                event.Records.map((r) => status.get(idOf(r))),
                event.Records.map((_, i) => (i === 3 ? "pending" : "completed")),
                "the accepted entries are completed; the failed one stays pending",
            );

            assert.deepEqual(await publisher(from(event, fourth.dynamodb.SequenceNumber)), { batchItemFailures: [] });
            const ids = publishedIds(h);
            assert.equal(ids.length, 14, "every record exactly once");
            assert.deepEqual([...ids].sort(), event.Records.map(idOf).sort());
        });

        it("holds a refused entry to its own key: the partition's other keys go on, and the sweeper dead-letters it at maxPublishAttempts", async function () {
            h = await createHarness({ destination: kind });
            const write = async (orderingKey: string, payload: string) =>
                (await h.writer.write({ messages: [{ partition: "P", type: "T", payload, orderingKey }] }))
                    .messageIds[0]!;
            const b1 = await write("b", "b1");
            const a1 = await write("a", "a1");
            const a2 = await write("a", "a2");
            const b2 = await write("b", "b2");
            h.server.setFaults({ entries: [entryFault(h, ENTRY_ERRORS[kind].message, [a1])] });

            assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(await h.streamEvent()), {
                batchItemFailures: [],
            });
            assert.deepEqual(publishedIds(h), [b1, b2], "key b went on past key a's refused head");
            const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual([states.get(a1), states.get(a2)], ["pending", "pending"], "key a held, in order");
            const head = await h.ddb.send(
                new GetItemCommand({ TableName: h.tableName, Key: recordKey("P", a1, kind), ConsistentRead: true }),
            );
            assert.equal(head.Item?.[ATTR.publishAttempts]?.N, "1", "the refusal is counted on the record");

            h.clock.advance(200_000);
            await createSweeper(h.config({ maxPublishAttempts: 2 }))();
            assert.deepEqual(
                h.deadLetters().map((d) => [d.recordId, d.reason, d.body.errorCode]),
                [[a1, "publish-rejected", ENTRY_ERRORS[kind].message.code]],
            );
            assert.deepEqual(publishedIds(h), [b1, b2, a2], "key a follows once its head is dead-lettered");
        });

        it("holds the shard on a fault of the deployment, on the stream path and in the sweeper: nothing counted, nothing dead-lettered", async function () {
            h = await createHarness({ destination: kind });
            await h.writer.write({ messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })) });
            await h.writer.write({ messages: [{ partition: "K", type: "T", payload: 3, orderingKey: "k" }] });
            const event = await h.streamEvent();
            const first = { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] };
            h.server.setFaults({
                entries: [{ ...ENTRY_ERRORS[kind].deployment, actions: [h.batchAction] }],
            });
            for (let i = 0; i < 3; i += 1) assert.deepEqual(await h.publisher({ maxPublishAttempts: 1 })(event), first);
            h.server.setFaults({ calls: [CALL_ERRORS[kind]] });
            for (let i = 0; i < 2; i += 1) assert.deepEqual(await h.publisher({ maxPublishAttempts: 1 })(event), first);
            h.clock.advance(200_000);
            const swept = await createSweeper(h.config({ maxPublishAttempts: 1 }))();
            assert.deepEqual(
                [swept.published, swept.deadLettered, swept.failedPartitions],
                [0, 0, 2],
                "both partitions held by the sweeper",
            );
            assert.equal(h.published().length, 0);
            assert.equal(h.deadLetters().length, 0);
            assert.ok(
                (await h.items())
                    .filter((i) => i.SK?.S?.startsWith("OUTBOX#"))
                    .every((i) => i.status?.S === "pending" && i[ATTR.publishAttempts] === undefined),
                "nothing counted against the records",
            );

            h.server.setFaults({});
            assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] }, "fixed: everything goes out");
            assert.equal(h.published().length, 3);
        });

        it(`cuts batch calls exactly at ${BYTES_PER_CALL[kind]} bytes as the service counts them: entries of exactly that many bytes in all go in one call, one byte more takes two`, async function () {
            h = await createHarness({ destination: kind });
            const limit = BYTES_PER_CALL[kind];
            // The writer keeps each message within 256 KiB: two entries fill an SNS call, five the others.
            const count = kind === "sns" ? 2 : 5;
            const write = async (characters: number) =>
                (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "x".repeat(characters) }] }))
                    .messageIds[0]!;
            const eventOf = async (ids: readonly string[]) => ({
                Records: (await h.streamEvent()).Records.filter((r) => ids.includes(idOf(r))),
            });
            const accepted = () => h.server.messages().filter((m) => m.action === h.batchAction);
            // An entry whose payload is a string of n characters counts base + n bytes: base read from a probe.
            const probe = await write(1_000);
            assert.deepEqual(await h.publisher()(await eventOf([probe])), { batchItemFailures: [] });
            const base = sizeAsCounted(accepted()[0]!) - 1_000;
            for (const total of [limit, limit + 1]) {
                const ids: string[] = [];
                for (let i = 0; i < count; i += 1)
                    ids.push(await write(Math.floor(total / count) + (i < total % count ? 1 : 0) - base));
                const event = await eventOf(ids);
                h.server.reset();
                assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
                assert.equal(
                    accepted().reduce((n, m) => n + sizeAsCounted(m), 0),
                    total,
                    `the entries are ${total} bytes as ${kind} counts them`,
                );
                assert.deepEqual(
                    h.server
                        .calls()
                        .filter((c) => c.action === h.batchAction)
                        .map((c) => `${c.entries}:${c.outcome}`),
                    total === limit ? [`${count}:ok`] : [`${count - 1}:ok`, "1:ok"],
                    total === limit ? "exactly the limit: one call" : "one byte over: two calls, none refused",
                );
            }
        });

        it("the sweeper publishes what the stream path missed, a keyed partition in order", async function () {
            h = await createHarness({ destination: kind });
            const { messageIds } = await h.writer.write({
                messages: [
                    { partition: "P", type: "T", payload: 1 },
                    { partition: "Q", type: "T", payload: 2, orderingKey: "q" },
                    { partition: "Q", type: "T", payload: 3, orderingKey: "q" },
                ],
            });
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.equal(result.published, 3);
            const ids = publishedIds(h);
            assert.deepEqual([...ids].sort(), [...messageIds].sort());
            assert.ok(ids.indexOf(messageIds[1]!) < ids.indexOf(messageIds[2]!), "q in order");
            assert.ok((await h.records()).every((r) => r.status === "completed"));
            assert.equal(metric(h, "Published"), 3);
        });
    });
}

describe("the relay publishing to an SQS FIFO queue (DynamoDB Local + the fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("sends each ordering key (else the partition) as the MessageGroupId and the record id as the MessageDeduplicationId, each group in order", async function () {
        h = await createHarness({ destination: "sqs", fifo: true });
        const keyed = await h.writer.write({
            messages: [1, 2, 3].map((n) => ({ partition: "P", type: "T", payload: n, orderingKey: "k" })),
        });
        const keyless = await h.writer.write({ messages: [{ partition: "Q", type: "T", payload: 4 }] });
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        const published = h.published();
        assert.deepEqual(
            published.filter((p) => p.groupId === "k").map((p) => p.id),
            keyed.messageIds,
            "group k in write order",
        );
        const byId = new Map(published.map((p) => [p.id, p]));
        for (const id of keyed.messageIds) assert.deepEqual([byId.get(id)?.groupId, byId.get(id)?.dedupId], ["k", id]);
        const q = keyless.messageIds[0]!;
        assert.deepEqual([byId.get(q)?.groupId, byId.get(q)?.dedupId], ["Q", q], "no key: the partition");
    });

    it("sends a redriven record's origin id as its MessageDeduplicationId, so the queue drops it as the same message within its window", async function () {
        h = await createHarness({ destination: "sqs", fifo: true });
        await h.writer.write({
            messages: [{ id: "redrive.evt-9", originId: "evt-9", partition: "P", type: "T", payload: 9 }],
        });
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => [p.id, p.dedupId, p.groupId]),
            [["evt-9", "evt-9", "P"]],
        );
    });
});

describe("the relay reading a PutEvents answer (DynamoDB Local + the fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("never counts as published an entry whose answer has neither an ErrorCode nor an EventId: the record is not completed, the batch is retried from it, and the retry delivers it", async function () {
        h = await createHarness({ destination: "eventbridge" });
        const { messageIds } = await h.writer.write({
            messages: [1, 2, 3].map((n) => ({ partition: `P${n}`, type: "T", payload: n })),
        });
        const silent = messageIds[1]!;
        // A fake in front of the fault server, which always answers each entry: the answer's entry for the second
        // record is emptied, as a broken proxy or an SDK middleware could leave it.
        const eventBridge = {
            send: async (command: object) => {
                const out = (await h.eventBridge.send(command as never)) as PutEventsCommandOutput;
                if (command instanceof PutEventsCommand) {
                    const at = (command.input.Entries ?? []).findIndex(
                        (e) => (JSON.parse(e.Detail ?? "{}") as { outbox?: { id?: string } }).outbox?.id === silent,
                    );
                    if (at >= 0) return { ...out, Entries: out.Entries!.map((e, i) => (i === at ? {} : e)) };
                }
                return out;
            },
        };
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher({ eventBridge: eventBridge as never })(event), {
            batchItemFailures: [{ itemIdentifier: event.Records[1]!.dynamodb.SequenceNumber }],
        });
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            messageIds.map((id) => states.get(id)),
            ["completed", "pending", "completed"],
        );
        assert.equal(metric(h, "Published"), 2, "the entry with no outcome is not counted");
        assert.deepEqual(await h.publisher()(from(event, event.Records[1]!.dynamodb.SequenceNumber)), {
            batchItemFailures: [],
        });
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        assert.deepEqual(
            publishedIds(h).filter((id) => id === silent).length,
            2,
            "the bus had taken it: it arrives twice, at least once, never lost",
        );
    });
});

describe("the relay publishing to an EventBridge bus that does not exist", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("holds every invocation (INVALID_CONFIG naming the bus) instead of putting events EventBridge would accept and drop; once the bus exists, everything goes out", async function () {
        h = await createHarness({ destination: "eventbridge" });
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const event = await h.streamEvent();
        const missing = "arn:aws:events:us-east-1:000000000000:event-bus/orders-typo";
        const publisher = h.publisher({ eventBusArn: missing });
        for (let i = 0; i < 2; i += 1)
            await assert.rejects(
                publisher(event),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    /createPublisher: the event bus arn:aws:events:us-east-1:000000000000:event-bus\/orders-typo does not exist; EventBridge would accept every event put on it and drop it/.test(
                        err.message,
                    ),
            );
        await assert.rejects(createSweeper(h.config({ eventBusArn: missing }))(), (err: unknown) =>
            isOutboxError(err, "INVALID_CONFIG"),
        );
        assert.equal(h.server.calls().filter((c) => c.action === "PutEvents").length, 0, "nothing put");
        assert.equal(
            h.server.calls().filter((c) => c.action === "DescribeEventBus").length,
            2,
            "asked once per handler, not per invocation",
        );
        assert.equal((await h.records())[0]!.status, "pending");

        h.server.createEventBus("orders-typo");
        assert.deepEqual(await h.publisher({ eventBusArn: missing })(event), { batchItemFailures: [] });
        assert.equal(h.server.busEvents(missing).length, 1);
    });
});
