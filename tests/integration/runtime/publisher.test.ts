/**
 * The stream publisher on DynamoDB Local (real stream records, read from the table's stream and filtered with
 * the component's pattern) and the AWS fault server (a fake, because no emulator can fail one
 * PublishBatch entry on demand). What is not proven here: the serialized Lambda code (tests/e2e) and GSI lag
 * (DynamoDB Local's indexes are synchronous).
 */
import assert from "node:assert/strict";
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import { isOutboxError } from "../../../runtime/errors";
import type { LambdaStreamEvent, LambdaStreamRecord } from "../../../runtime/testing/stream-event";
import { createPublisher } from "../../../runtime/relay/publisher";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { marshalRecord, pendingRecord, recordKey, unmarshalRecord } from "../../../runtime/record/codec";
import { ATTR } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import { FakeDynamoDb, PASS, throttled } from "../../support/store/fake-client";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";

const GRACE = 3600;

/** The event Lambda would deliver after rewinding to `sequenceNumber`. */
function from(event: LambdaStreamEvent, sequenceNumber: string): LambdaStreamEvent {
    const i = event.Records.findIndex((r) => r.dynamodb.SequenceNumber === sequenceNumber);
    assert.ok(i >= 0, `sequence number ${sequenceNumber} is in the batch`);
    return { Records: event.Records.slice(i) };
}

function idOf(r: LambdaStreamRecord): string {
    const image = r.dynamodb.NewImage as Record<string, { S?: string }>;
    return image[ATTR.recordId]!.S!;
}

function metric(h: Harness, name: string): number {
    return h.metricLines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .reduce((sum, l) => sum + (typeof l[name] === "number" ? (l[name] as number) : 0), 0);
}

function skOf(r: LambdaStreamRecord): string {
    return (r.dynamodb.Keys as Record<string, { S?: string }>)[ATTR.sk]!.S!;
}

/**
 * The harness's DynamoDB client, except that the UpdateItem moving the given sort keys to `status` (`completed`
 * by default) is throttled: a fake, because DynamoDB Local cannot throttle one write on demand.
 */
function failingCompletions(
    h: Harness,
    sortKeys: readonly string[],
    status: "completed" | "expired" = "completed",
): Harness["ddb"] {
    const send = (command: object): Promise<unknown> => {
        if (command instanceof UpdateItemCommand) {
            const input = command.input;
            const values = JSON.stringify(input.ExpressionAttributeValues ?? {});
            if (sortKeys.includes(input.Key?.[ATTR.sk]?.S ?? "") && values.includes(`"${status}"`)) {
                return Promise.reject(
                    Object.assign(new Error("Rate of requests exceeds the allowed throughput."), {
                        name: "ThrottlingException",
                        $fault: "client",
                    }),
                );
            }
        }
        return h.ddb.send(command as never);
    };
    return { send } as unknown as Harness["ddb"];
}

describe("createPublisher (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    afterEach(async function () {
        await h?.close();
    });

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
        await h.writer.write({
            messages: Array.from({ length: 14 }, (_, i) => ({ partition: "P", type: "T", payload: { n: i } })),
        });
        const event = await h.streamEvent();
        const fourth = event.Records[3]!;
        // SNS fails entry 3 of the first call (transient) but accepts the entries after it, as a real PublishBatch may.
        h.server.setFaults({
            entries: [
                {
                    code: "InternalError",
                    senderFault: false,
                    times: 1,
                    when: (entry) => entry.attributes["outbox.id"]?.stringValue === idOf(fourth),
                },
            ],
        });
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
        const afterFirst = h.published().map((p) => p.id);
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
        const ids = h.published().map((p) => p.id);
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
        await h.writer.write({
            messages: Array.from({ length: 10 }, (_, i) => ({ partition: "P", type: "T", payload: { n: i } })),
        });
        const event = await h.streamEvent();
        const [fourth, seventh] = [event.Records[3]!, event.Records[6]!];
        h.server.setFaults({
            entries: [
                {
                    code: "InternalError",
                    senderFault: false,
                    times: 1,
                    when: (entry) => entry.attributes["outbox.id"]?.stringValue === idOf(fourth),
                },
            ],
        });
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
        await h.writer.write({
            messages: Array.from({ length: 5 }, (_, i) => ({ partition: "P", type: "T", payload: { n: i } })),
        });
        const event = await h.streamEvent();
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
            h.published().map((p) => p.id),
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
        assert.deepEqual(
            h.published().map((p) => p.id),
            [messageIds[0], messageIds[0]],
            "exactly the counted duplicate",
        );
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
        assert.deepEqual(
            h.published().map((p) => p.id),
            messageIds,
        );
    });

    it("publishes the same INSERT once when an event carries it twice, counting the second as DuplicatesAvoided", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })) });
        const event = await h.streamEvent();
        const twice = { Records: [event.Records[0]!, event.Records[1]!, event.Records[0]!] };
        assert.deepEqual(await h.publisher()(twice), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            event.Records.map(idOf),
        );
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

    it("fails loudly (INVALID_CONFIG, naming what arrived) on an event that is not a DynamoDB stream event: SQS-, Kinesis- or EventBridge-shaped, no Records, or a record that is not a stream record", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const [ours] = (await h.streamEvent()).Records;
        const sqs = {
            Records: [
                {
                    messageId: "m-1",
                    body: "{}",
                    eventSource: "aws:sqs",
                    eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:orders",
                    awsRegion: "us-east-1",
                },
            ],
        };
        const kinesis = {
            Records: [
                {
                    eventSource: "aws:kinesis",
                    eventSourceARN: "arn:aws:kinesis:us-east-1:000000000000:stream/orders",
                    kinesis: { data: "e30=", sequenceNumber: "1", partitionKey: "p" },
                },
            ],
        };
        const scheduled = { source: "aws.events", "detail-type": "Scheduled Event", detail: {} };
        const cases: [unknown, RegExp][] = [
            [
                sqs,
                /the event's records come from "aws:sqs" \(arn:aws:sqs:us-east-1:000000000000:orders\), not from a DynamoDB stream/,
            ],
            [
                kinesis,
                /the event's records come from "aws:kinesis" \(arn:aws:kinesis:us-east-1:000000000000:stream\/orders\), not from a DynamoDB stream/,
            ],
            [
                scheduled,
                /the event has no Records array \(its keys: source, detail-type, detail\); it is not a DynamoDB stream event/,
            ],
            [{ nothing: true }, /the event has no Records array \(its keys: nothing\)/],
            [undefined, /the event has no Records array \(it is undefined\)/],
            [{ Records: [ours, null] }, /the event's record 1 is null, not a DynamoDB stream record/],
            [{ Records: [42] }, /the event's record 0 is a number, not a DynamoDB stream record/],
        ];
        for (const [event, pattern] of cases) {
            const logger = new RecordingLogger();
            await assert.rejects(
                h.publisher({ logger })(event),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    pattern.test(err.message) &&
                    /point the function's event source mapping at the outbox table's stream/.test(err.message),
                JSON.stringify(event),
            );
            assert.deepEqual(
                logger.lines.filter((l) => l.level === "error").map((l) => l.attributes?.code),
                ["INVALID_CONFIG"],
                "logged at error too",
            );
        }
        assert.equal(h.server.calls().length, 0, "nothing published, nothing acknowledged");
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("checks every record of an event for its source, not only the first: an outbox stream record followed by an SQS or Kinesis record fails the invocation (INVALID_CONFIG naming the later one), and nothing is published", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const [ours] = (await h.streamEvent()).Records;
        const later: [Record<string, unknown>, RegExp][] = [
            [
                { messageId: "m-1", body: "{}", eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:0:q" },
                /the event's records come from "aws:sqs" \(arn:aws:sqs:us-east-1:0:q\), not from a DynamoDB stream/,
            ],
            [
                { ...ours!, eventSource: "aws:kinesis" },
                /the event's records come from "aws:kinesis" \(arn:aws:dynamodb:.*\), not from a DynamoDB stream/,
            ],
        ];
        for (const [record, pattern] of later) {
            const event = { Records: [ours, record] };
            await assert.rejects(
                h.publisher()(event),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                JSON.stringify(record),
            );
        }
        assert.equal(h.server.calls().length, 0, "nothing published, nothing acknowledged");
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("refuses records from another table's stream (a misrouted mapping): INVALID_CONFIG logged with both ARNs, the shard held at the first such record, and that table's payload never published under our ids", async function () {
        h = await createHarness();
        const other = await createHarness();
        try {
            const message = { id: "shared-id", partition: "ORDER#1", type: "T" };
            await h.writer.write({ messages: [{ ...message, payload: "ours" }] });
            await other.writer.write({
                messages: [
                    { ...message, payload: "theirs" },
                    { ...message, id: "other-keyed", payload: "theirs-keyed", orderingKey: "k" },
                ],
            });
            const [ours] = (await h.streamEvent()).Records;
            const foreign = (await other.streamEvent()).Records;
            const logger = new RecordingLogger();
            const publisher = h.publisher({ logger });

            assert.deepEqual(
                await publisher({ Records: foreign }),
                { batchItemFailures: [{ itemIdentifier: foreign[0]!.dynamodb.SequenceNumber }] },
                "held at the first foreign record",
            );
            assert.deepEqual(h.published(), [], "the other table's payload is not published");
            assert.equal((await h.records())[0]!.status, "pending", "our record of the same key is not completed");
            const refusal = logger.lines.find((l) => l.level === "error" && l.attributes?.code === "INVALID_CONFIG");
            assert.ok(refusal, "logged at error");
            assert.equal(refusal.attributes?.eventSourceARN, foreign[0]!.eventSourceARN);
            assert.equal(
                refusal.attributes?.expected,
                ours!.eventSourceARN.replace(/\/stream\/.*$/, "/stream/*").replace(/:ddblocal:\d+:/, ":*:*:"),
            );
            assert.match(refusal.message, /comes from the stream of another table/);

            // A batch that starts with our records delivers them, then holds at the first foreign one.
            assert.deepEqual(await publisher({ Records: [ours!, ...foreign] }), {
                batchItemFailures: [{ itemIdentifier: foreign[0]!.dynamodb.SequenceNumber }],
            });
            assert.deepEqual(
                h.published().map((p) => JSON.parse(p.body) as string),
                ["ours"],
            );

            // A record that names no stream cannot prove it is ours either.
            const { eventSourceARN: _dropped, ...unnamed } = foreign[1]!;
            assert.deepEqual(await publisher({ Records: [unnamed] }), {
                batchItemFailures: [{ itemIdentifier: foreign[1]!.dynamodb.SequenceNumber }],
            });
            assert.equal(h.published().length, 1);
        } finally {
            await other.close();
        }
    });

    it("publishes what it reads from its own table, not the stream image: an image that differs from the row never goes out", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "from-the-table" }] });
        const [record] = (await h.streamEvent()).Records;
        const row = unmarshalRecord(record!.dynamodb.NewImage as never);
        const image = marshalRecord({
            ...row,
            envelope: { ...row.envelope, payload: JSON.stringify("from-the-image") },
        });
        const tampered = {
            ...record!,
            dynamodb: { ...record!.dynamodb, NewImage: image },
        } as unknown as LambdaStreamRecord;
        assert.deepEqual(await h.publisher()({ Records: [tampered] }), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => JSON.parse(p.body) as string),
            ["from-the-table"],
        );
    });

    it("a record SNS refuses never holds the shard: its attempt is counted durably, it stays pending for the sweeper, and the sweeper dead-letters it at maxPublishAttempts", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [1, 2, 3].map((n) => ({ partition: "P", type: "T", payload: n })),
        });
        const poison = messageIds[1]!;
        h.server.setFaults({
            entries: [
                {
                    code: "InvalidParameter",
                    senderFault: true,
                    when: (e) => e.attributes["outbox.id"]?.stringValue === poison,
                },
            ],
        });

        assert.deepEqual(
            await h.publisher({ maxPublishAttempts: 2 })(await h.streamEvent()),
            { batchItemFailures: [] },
            "the batch goes on",
        );
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [messageIds[0]!, messageIds[2]!].sort(),
        );
        const item = await h.ddb.send(
            new GetItemCommand({ TableName: h.tableName, Key: recordKey("P", poison, "sns"), ConsistentRead: true }),
        );
        assert.equal(item.Item?.publish_attempts?.N, "1", "counted durably on the item, not in memory");
        assert.equal(item.Item?.status?.S, "pending");
        assert.equal(metric(h, "LeftForSweeper"), 1);
        assert.equal(h.deadLetters().length, 0);

        h.clock.advance(200_000);
        await createSweeper(h.config({ maxPublishAttempts: 2 }))();
        const dl = h.deadLetters();
        assert.equal(dl.length, 1);
        assert.equal(dl[0]!.reason, "publish-rejected");
        assert.equal(dl[0]!.recordId, poison);
        assert.equal(dl[0]!.body.errorCode, "InvalidParameter");
        assert.equal(dl[0]!.body.attempts, 2, "the stream's attempt and the sweeper's");
        assert.deepEqual(dl[0]!.body.payload, 2, "the DLQ keeps the payload for a redrive");
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("a record refused twice by the stream path (a redelivered batch) reaches the DLQ at maxPublishAttempts without the sweeper", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })),
        });
        const poison = messageIds[0]!;
        h.server.setFaults({
            entries: [
                {
                    code: "InvalidParameter",
                    senderFault: true,
                    when: (e) => e.attributes["outbox.id"]?.stringValue === poison,
                },
            ],
        });
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        // A new cold start (a new handler) sees the durable count.
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason, d.body.attempts]),
            [[poison, "publish-rejected", 2]],
        );
        assert.deepEqual(
            h.published().map((p) => p.id),
            [messageIds[1]],
        );
    });

    it("an entry SNS refuses with an unknown code and SenderFault reaches the DLQ after maxPublishAttempts; the others are published", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [1, 2, 3].map((n) => ({ partition: "P", type: "T", payload: n })),
        });
        const poison = messageIds[1]!;
        h.server.setFaults({
            entries: [
                {
                    code: "SomethingSnsAddsLater",
                    senderFault: true,
                    when: (e) => e.attributes["outbox.id"]?.stringValue === poison,
                },
            ],
        });
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        assert.equal(h.deadLetters().length, 0);
        assert.deepEqual(await h.publisher({ maxPublishAttempts: 2 })(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason, d.body.errorCode]),
            [[poison, "publish-rejected", "SomethingSnsAddsLater"]],
        );
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [messageIds[0]!, messageIds[2]!].sort(),
        );
    });

    it("holds the shard on a fault of the deployment (the topic does not exist, a KMS key it cannot use): nothing counted, nothing dead-lettered", async function () {
        h = await createHarness();
        await h.writer.write({ messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })) });
        const event = await h.streamEvent();
        const first = { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] };
        const missingTopic = h.publisher({ topicArn: `${h.topicArn}-deleted`, maxPublishAttempts: 1 });
        for (let i = 0; i < 3; i += 1) assert.deepEqual(await missingTopic(event), first);
        h.server.setFaults({ entries: [{ code: "KMSInvalidState", senderFault: true }] });
        for (let i = 0; i < 3; i += 1) assert.deepEqual(await h.publisher({ maxPublishAttempts: 1 })(event), first);
        assert.equal(h.deadLetters().length, 0);
        assert.ok(
            (await h.items())
                .filter((i) => i.SK?.S?.startsWith("OUTBOX#"))
                .every((i) => i.status?.S === "pending" && i.publish_attempts === undefined),
        );

        h.server.setFaults({});
        assert.deepEqual(
            await h.publisher()(event),
            { batchItemFailures: [] },
            "once the deployment is fixed, everything goes out",
        );
        assert.equal(h.published().length, 2);
    });

    it("holds the shard, never dead-letters, when SNS refuses the topic itself (InvalidParameter: Invalid parameter: TopicArn, as for a topic of another region), on the stream path and in the sweeper", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: 1 },
                { partition: "P", type: "T", payload: 2 },
                { partition: "K", type: "T", payload: 3, orderingKey: "k" },
            ],
        });
        const event = await h.streamEvent();
        // A fake SNS client in front of the test server: it answers what real SNS answers for a topic ARN of another
        // region or a malformed one, which the test server cannot (its injected InvalidParameter names no parameter).
        const wrongTopic = {
            send: (command: object) =>
                command instanceof PublishBatchCommand
                    ? Promise.reject(
                          Object.assign(new Error("Invalid parameter: TopicArn"), {
                              name: "InvalidParameterException",
                              $fault: "client",
                              $metadata: { httpStatusCode: 400 },
                          }),
                      )
                    : h.sns.send(command as never),
        };
        const first = { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] };
        for (let i = 0; i < 3; i += 1)
            assert.deepEqual(await h.publisher({ sns: wrongTopic, maxPublishAttempts: 1 })(event), first);
        // The keyed record alone: its drain through the claim path holds too.
        const keyed = { Records: [event.Records[2]!] };
        const keyedFirst = { batchItemFailures: [{ itemIdentifier: event.Records[2]!.dynamodb.SequenceNumber }] };
        for (let i = 0; i < 2; i += 1)
            assert.deepEqual(await h.publisher({ sns: wrongTopic, maxPublishAttempts: 1 })(keyed), keyedFirst);
        h.clock.advance(200_000);
        const swept = await createSweeper(h.config({ sns: wrongTopic, maxPublishAttempts: 1 }))();
        assert.deepEqual([swept.published, swept.deadLettered, swept.failedPartitions], [0, 0, 2]);
        assert.equal(h.deadLetters().length, 0, "nothing dead-lettered as publish-rejected");
        assert.ok(
            (await h.items())
                .filter((i) => i.SK?.S?.startsWith("OUTBOX#"))
                .every((i) => i.status?.S === "pending" && i.publish_attempts === undefined),
            "no attempt counted",
        );

        assert.deepEqual(
            await h.publisher()(event),
            { batchItemFailures: [] },
            "once the topic is right, everything goes out",
        );
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [...messageIds].sort(),
        );
    });

    it("refuses at construction a topicArn or dlqUrl of the wrong shape (INVALID_CONFIG naming the setting), and on the first invocation one in another region than its client", async function () {
        h = await createHarness();
        const cases: [Record<string, unknown>, RegExp][] = [
            [
                { topicArn: "events" },
                /createPublisher: topicArn is "events"; expected an SNS topic ARN, arn:aws:sns:<region>:<account>:<name>; pass the topic's arn \(not its name\)/,
            ],
            [
                { topicArn: "arn:aws:sns:us-east-1:000000000000" },
                /topicArn is "arn:aws:sns:us-east-1:000000000000"; expected an SNS topic ARN/,
            ],
            [
                { topicArn: "arn:aws:sqs:us-east-1:000000000000:events" },
                /topicArn is "arn:aws:sqs:us-east-1:000000000000:events"; expected an SNS topic ARN/,
            ],
            [
                { dlqUrl: "not-a-url" },
                /createPublisher: dlqUrl is "not-a-url"; expected an SQS queue URL, https:\/\/sqs\.<region>\.amazonaws\.com\/<account>\/<queue name>; pass the queue's url \(not its ARN or name\)/,
            ],
            [
                { dlqUrl: "arn:aws:sqs:us-east-1:000000000000:dlq" },
                /dlqUrl is "arn:aws:sqs:us-east-1:000000000000:dlq"; expected an SQS queue URL/,
            ],
            [
                { dlqUrl: "https://sqs.us-east-1.amazonaws.com/dlq" },
                /dlqUrl is "https:\/\/sqs\.us-east-1\.amazonaws\.com\/dlq"; expected an SQS queue URL/,
            ],
        ];
        for (const [change, pattern] of cases) {
            assert.throws(
                () => h.publisher(change as never),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                JSON.stringify(change),
            );
            assert.throws(
                () => createSweeper(h.config(change as never)),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    pattern.test(err.message.replace("createSweeper", "createPublisher")),
                JSON.stringify(change),
            );
        }
        await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const event = await h.streamEvent();
        // The clients are in us-east-1 (the harness's region); these name another region.
        const elsewhere: [Record<string, unknown>, RegExp][] = [
            [
                { topicArn: "arn:aws:sns:eu-west-1:000000000000:events" },
                /topicArn arn:aws:sns:eu-west-1:000000000000:events is in region eu-west-1, but the SNS client's region is us-east-1; SNS refuses a topic of another region \(InvalidParameter: TopicArn\); point topicArn at the topic in us-east-1, or give the handler an SNS client of eu-west-1/,
            ],
            [
                { dlqUrl: "https://sqs.eu-west-1.amazonaws.com/000000000000/outbox-dlq" },
                /dlqUrl https:\/\/sqs\.eu-west-1\.amazonaws\.com\/000000000000\/outbox-dlq is in region eu-west-1, but the SQS client's region is us-east-1/,
            ],
        ];
        for (const [change, pattern] of elsewhere) {
            const publisher = h.publisher(change as never);
            for (let i = 0; i < 2; i += 1)
                await assert.rejects(
                    publisher(event),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                    JSON.stringify(change),
                );
            await assert.rejects(
                createSweeper(h.config(change as never))(),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    pattern.test(err.message.replace("createSweeper", "createPublisher")),
            );
        }
        assert.equal(h.server.calls().length, 0, "nothing was sent");
        assert.equal((await h.records())[0]!.status, "pending");
    });

    it("refuses at construction a fifo setting that does not match the topic, instead of dead-lettering every message", async function () {
        h = await createHarness();
        assert.throws(
            () => h.publisher({ fifo: true }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /fifo is true but topicArn .*:events is not a FIFO topic .*set fifo to false/.test(err.message),
        );
        const fifoTopic = h.server.createTopic("orders.fifo");
        assert.throws(
            () => h.publisher({ topicArn: fifoTopic }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /fifo is false but topicArn .*orders\.fifo is a FIFO topic/.test(err.message),
        );
        assert.throws(
            () => h.publisher({ fifo: "yes" as never }),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") && /fifo must be true or false, got "yes"/.test(err.message),
        );
    });

    it("sends expired records to the DLQ with reason expired, marks them expired, and never publishes them", async function () {
        h = await createHarness();
        const now = h.clock.now();
        const { messageIds } = await h.writer.write({
            messages: [
                { partition: "P", type: "T", payload: "keep", expiresAt: new Date(now + 60_000) },
                { partition: "P", type: "T", payload: "late", expiresAt: new Date(now + 1_000) },
                {
                    partition: "Q",
                    type: "T",
                    payload: "late-keyed",
                    orderingKey: "k",
                    expiresAt: new Date(now + 1_000),
                },
            ],
        });
        h.clock.advance(5_000);
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            [messageIds[0]],
        );
        assert.deepEqual(
            h
                .deadLetters()
                .map((d) => [d.reason, d.recordId])
                .sort(),
            [
                ["expired", messageIds[1]],
                ["expired", messageIds[2]],
            ].sort(),
        );
        const byId = new Map((await h.records()).map((r) => [r.recordId, r]));
        assert.equal(byId.get(messageIds[0]!)?.status, "completed");
        assert.equal(byId.get(messageIds[1]!)?.status, "expired");
        assert.equal(byId.get(messageIds[2]!)?.status, "expired");
        for (const item of await h.items())
            if (item[ATTR.sk]!.S!.startsWith("OUTBOX#")) assert.ok(item[ATTR.ttl]?.N, "terminal records carry ttl");
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
    });

    describe("a DLQ that cannot take a record never holds the shard", function () {
        it("an expired keyless record stays pending for the sweeper (LeftForSweeper) while the records behind it are published; the sweeper dead-letters it after the outage", async function () {
            h = await createHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const now = h.clock.now();
            const { messageIds } = await h.writer.write({
                messages: [
                    { partition: "P", type: "T", payload: "late", expiresAt: new Date(now + 1_000) },
                    { partition: "P", type: "T", payload: "fine" },
                    { partition: "Q", type: "T", payload: "fine" },
                ],
            });
            h.clock.advance(5_000);
            assert.deepEqual(
                await h.publisher()(await h.streamEvent()),
                { batchItemFailures: [] },
                "no retry of the shard",
            );
            assert.deepEqual(
                h.published().map((p) => p.id),
                messageIds.slice(1),
            );
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.equal(byId.get(messageIds[0]!), "pending", "not lost: left for the sweeper");
            assert.equal(metric(h, "LeftForSweeper"), 1);
            assert.equal(metric(h, "Expired"), 0);

            h.server.setFaults({});
            h.clock.advance(200_000);
            assert.equal((await createSweeper(h.config())()).expired, 1);
            assert.deepEqual(
                h.deadLetters().map((d) => [d.recordId, d.reason]),
                [[messageIds[0], "expired"]],
            );
        });

        it("a keyless record at maxPublishAttempts stays pending when the DLQ is down; the batch goes on", async function () {
            h = await createHarness();
            const { messageIds } = await h.writer.write({
                messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: n })),
            });
            const poison = messageIds[0]!;
            h.server.setFaults({
                entries: [
                    {
                        code: "InvalidParameter",
                        senderFault: true,
                        when: (e) => e.attributes["outbox.id"]?.stringValue === poison,
                    },
                ],
                calls: [{ kind: "InternalError", actions: ["SendMessage"], times: 100 }],
            });
            assert.deepEqual(await h.publisher({ maxPublishAttempts: 1 })(await h.streamEvent()), {
                batchItemFailures: [],
            });
            assert.deepEqual(
                h.published().map((p) => p.id),
                [messageIds[1]],
            );
            assert.equal(new Map((await h.records()).map((r) => [r.recordId, r.status])).get(poison), "pending");
            assert.equal(metric(h, "LeftForSweeper"), 1);
            assert.equal(h.deadLetters().length, 0);
        });

        it("an expired keyed head the DLQ cannot take holds only its key: its later records stay pending for the sweeper, the shard goes on, and the sweeper delivers the key in order", async function () {
            h = await createHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const write = async (partition: string, orderingKey?: string, expiresAt?: Date) =>
                (
                    await h.writer.write({
                        messages: [
                            {
                                partition,
                                type: "T",
                                payload: orderingKey ?? partition,
                                ...(orderingKey ? { orderingKey } : {}),
                                ...(expiresAt ? { expiresAt } : {}),
                            },
                        ],
                    })
                ).messageIds[0]!;
            const a1 = await write("K", "a", new Date(h.clock.now() + 1_000));
            const a2 = await write("K", "a");
            const b1 = await write("K", "b");
            const free = await write("F");
            h.clock.advance(5_000);
            const event = await h.streamEvent();
            assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] }, "no retry of the shard");
            assert.deepEqual(
                h
                    .published()
                    .map((p) => p.id)
                    .sort(),
                [b1, free].sort(),
                "key b and the keyless record went on",
            );
            const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
            assert.deepEqual(
                [a1, a2].map((id) => byId.get(id)),
                ["pending", "pending"],
            );
            assert.equal(metric(h, "LeftForSweeper"), 2, "the head and the record behind it, each once");

            h.server.setFaults({});
            h.clock.advance(200_000);
            await createSweeper(h.config())();
            assert.deepEqual(
                h.deadLetters().map((d) => [d.recordId, d.reason]),
                [[a1, "expired"]],
            );
            const published = h.published().map((p) => p.id);
            assert.deepEqual(
                [...published.slice(0, 2).sort(), ...published.slice(2)],
                [...[b1, free].sort(), a2],
                "key a follows its dead-lettered head",
            );
        });
    });

    it("delivers keyed records through the claim path in (created_at, seq) order, whatever order their stream records come in", async function () {
        h = await createHarness();
        const ids: string[] = [];
        for (let n = 0; n < 6; n += 1) {
            ids.push(
                ...(
                    await h.writer.write({
                        messages: [{ partition: "ACCOUNT#1", type: "T", payload: { n }, orderingKey: "acct-1" }],
                    })
                ).messageIds,
            );
            h.clock.advance(n % 2 === 0 ? 0 : 1); // some share a millisecond: seq breaks the tie
        }
        const event = await h.streamEvent();
        const reversed = { Records: [...event.Records].reverse() };
        assert.deepEqual(await h.publisher()(reversed), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            ids,
        );
        assert.equal(
            h.server.calls().filter((c) => c.action === "PublishBatch").length,
            6,
            "one entry per key per call",
        );
        const records = await h.records();
        assert.ok(
            records.every((r) => r.status === "completed" && r.replayCount === 1),
            "each was claimed once, then completed",
        );
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
    });

    it("on a keyed failure releases what it claimed and reports the doorbell record; the retry keeps per-key order", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [0, 1, 2].map((n) => ({ partition: "A", type: "T", payload: n, orderingKey: "k" })),
        });
        h.server.setFaults({
            entries: [
                {
                    code: "InternalError",
                    times: 1,
                    when: (e) => e.attributes["outbox.id"]?.stringValue === messageIds[1],
                },
            ],
        });
        const event = await h.streamEvent();
        const first = await h.publisher()(event);
        assert.deepEqual(first, { batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            [messageIds[0]],
        );
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [states.get(messageIds[0]!), states.get(messageIds[1]!), states.get(messageIds[2]!)],
            ["completed", "pending", "pending"],
            "released, not stranded",
        );
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            messageIds,
        );
    });

    it("reports the lower of a keyless and a keyed failure in one batch, whichever of the two comes first in the shard", async function () {
        h = await createHarness();
        const write = async (partition: string, orderingKey?: string) =>
            (
                await h.writer.write({
                    messages: [{ partition, type: "T", payload: partition, ...(orderingKey ? { orderingKey } : {}) }],
                })
            ).messageIds[0]!;
        // Two batches: a keyed record then a keyless one, and a keyless record then a keyed one; SNS fails all four
        // as a fault every record would meet.
        const ids = [await write("A", "k"), await write("B"), await write("C"), await write("D", "k")];
        h.server.setFaults({
            entries: [
                { code: "InternalError", when: (e) => ids.includes(e.attributes["outbox.id"]?.stringValue ?? "") },
            ],
        });
        const event = await h.streamEvent();
        assert.deepEqual(event.Records.map(idOf), ids);
        const keyedFirst = { Records: event.Records.slice(0, 2) };
        const keylessFirst = { Records: event.Records.slice(2, 4) };
        assert.deepEqual(
            await h.publisher()(keyedFirst),
            { batchItemFailures: [{ itemIdentifier: keyedFirst.Records[0]!.dynamodb.SequenceNumber }] },
            "the keyed record, below the keyless failure",
        );
        assert.deepEqual(
            await h.publisher()(keylessFirst),
            { batchItemFailures: [{ itemIdentifier: keylessFirst.Records[0]!.dynamodb.SequenceNumber }] },
            "the keyless record, below the keyed one",
        );
        assert.ok((await h.records()).every((r) => r.status === "pending"));
    });

    it("a keyed head SNS refuses holds only its own key: the partition's other keys are delivered in the same invocation, the shard goes on, and the head reaches the DLQ after maxPublishAttempts", async function () {
        h = await createHarness();
        const write = async (orderingKey: string, payload: string) =>
            (await h.writer.write({ messages: [{ partition: "P", type: "T", payload, orderingKey }] })).messageIds[0]!;
        const b1 = await write("b", "b1");
        const a1 = await write("a", "a1");
        const a2 = await write("a", "a2");
        const b2 = await write("b", "b2");
        h.server.setFaults({
            entries: [
                {
                    code: "InvalidParameter",
                    senderFault: true,
                    when: (e) => e.attributes["outbox.id"]?.stringValue === a1,
                },
            ],
        });
        const event = await h.streamEvent();
        const publisher = h.publisher({ maxPublishAttempts: 2 });

        assert.deepEqual(await publisher(event), { batchItemFailures: [] }, "no retry of the shard");
        assert.deepEqual(
            h.published().map((p) => p.id),
            [b1, b2],
            "key b went on past key a's refused head",
        );
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [a1, a2].map((id) => states.get(id)),
            ["pending", "pending"],
            "key a held and released, in order",
        );
        const head = await h.ddb.send(
            new GetItemCommand({ TableName: h.tableName, Key: recordKey("P", a1, "sns"), ConsistentRead: true }),
        );
        assert.equal(
            head.Item?.publish_attempts?.N,
            "1",
            "the head is tried once per invocation, although two stream records of its key are in the batch",
        );
        assert.equal(metric(h, "LeftForSweeper"), 2, "a1 and a2, each once");

        h.clock.advance(200_000);
        await createSweeper(h.config({ maxPublishAttempts: 2 }))();
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.reason]),
            [[a1, "publish-rejected"]],
        );
        assert.deepEqual(
            h.published().map((p) => p.id),
            [b1, b2, a2],
            "key a follows once its head is dead-lettered",
        );
    });

    it("a claim truncated by a throttled write is not taken for an exhausted partition: the first doorbell not delivered is reported, and the retry delivers the rest in order", async function () {
        h = await createHarness();
        const ids: string[] = [];
        // 100 records: a claim of 100 is two transactions of 50, so a throttled second one leaves a short batch.
        for (let n = 0; n < 2; n += 1) {
            ids.push(
                ...(
                    await h.writer.write({
                        messages: Array.from({ length: 50 }, (_, i) => ({
                            partition: "K",
                            type: "T",
                            payload: n * 50 + i,
                            orderingKey: "k",
                        })),
                    })
                ).messageIds,
            );
        }
        const event = await h.streamEvent();
        // A fake in front of DynamoDB Local, which never throttles: every claim transaction after the first is
        // throttled, so the store's claim comes back truncated (50 of 100) and every later claim fails.
        const db = new FakeDynamoDb(h.ddb).on("TransactWriteItems", (_input, call) =>
            call.nth > 1 ? Promise.reject(throttled()) : PASS,
        );
        const response = await h.publisher({ dynamodb: db as never })(event);
        assert.deepEqual(
            h.published().map((p) => p.id),
            ids.slice(0, 50),
            "the first transaction's 50 delivered, in order",
        );
        assert.deepEqual(
            response,
            { batchItemFailures: [{ itemIdentifier: event.Records[50]!.dynamodb.SequenceNumber }] },
            "the first doorbell not delivered is reported, not acknowledged",
        );
        assert.equal(metric(h, "DynamoDBOutboxClaimTruncated"), 1);
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            ids.map((id) => states.get(id)),
            [...ids.slice(0, 50).map(() => "completed"), ...ids.slice(50).map(() => "pending")],
        );
        assert.deepEqual(await h.publisher()(from(event, event.Records[50]!.dynamodb.SequenceNumber)), {
            batchItemFailures: [],
        });
        assert.deepEqual(
            h.published().map((p) => p.id),
            ids,
            "in order, each once",
        );
    });

    it("a keyed record SNS refused maxPublishAttempts times whose DLQ send then fails holds only its own key: the partition's other keys are published in the same invocation, and the shard goes on", async function () {
        h = await createHarness();
        const write = async (orderingKey: string, payload: string) =>
            (await h.writer.write({ messages: [{ partition: "P", type: "T", payload, orderingKey }] })).messageIds[0]!;
        const a1 = await write("a", "a1");
        const b1 = await write("b", "b1");
        const a2 = await write("a", "a2");
        const b2 = await write("b", "b2");
        // a1 and b1 share the first PublishBatch call; b2 is in a later one, which a stopped batch would never send.
        h.server.setFaults({
            entries: [
                {
                    code: "InvalidParameter",
                    senderFault: true,
                    when: (e) => e.attributes["outbox.id"]?.stringValue === a1,
                },
            ],
            calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }],
        });
        const event = await h.streamEvent();
        assert.deepEqual(
            await h.publisher({ maxPublishAttempts: 1 })(event),
            { batchItemFailures: [] },
            "no retry of the shard",
        );
        assert.deepEqual(
            h.published().map((p) => p.id),
            [b1, b2],
            "key b went on, in its later call too",
        );
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [a1, a2].map((id) => states.get(id)),
            ["pending", "pending"],
            "key a held, released in order",
        );
        assert.equal(metric(h, "LeftForSweeper"), 2);
        assert.equal(h.deadLetters().length, 0);
    });

    it("reports a keyed doorbell it could not reach within its claim rounds, and the retry finishes in order", async function () {
        h = await createHarness();
        const ids: string[] = [];
        for (let n = 0; n < 12; n += 1)
            ids.push(
                ...(await h.writer.write({ messages: [{ partition: "K", type: "T", payload: n, orderingKey: "k" }] }))
                    .messageIds,
            );
        const event = await h.streamEvent();
        const newestFirst = { Records: [...event.Records].reverse() };
        const publisher = h.publisher({ claimLimit: 1 });
        assert.deepEqual(
            await publisher(newestFirst),
            { batchItemFailures: [{ itemIdentifier: newestFirst.Records[0]!.dynamodb.SequenceNumber }] },
            "10 rounds of 1 did not reach the newest",
        );
        assert.deepEqual(
            h.published().map((p) => p.id),
            ids.slice(0, 10),
        );
        assert.deepEqual(await publisher(newestFirst), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            ids,
        );
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
        const item = marshalRecord(
            pendingRecord(
                {
                    partition: "P",
                    recordId: "old-1",
                    bindingId: "sns",
                    address: h.topicArn,
                    envelope: { id: "old-1", subject: "T", payload: "1" },
                },
                1n,
                h.clock.now(),
            ),
        );
        delete item.status;
        await h.ddb.send(new PutItemCommand({ TableName: h.tableName, Item: item }));
        const event = await h.streamEvent();
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((p) => p.id),
            ["old-1"],
        );
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
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [...messageIds].sort(),
        );
    });

    it("never publishes a record without a record_id (consumers could not deduplicate it): a stream image whose record_id is NULL, and a row written without one, are skipped as undecodable by the stream path and the sweeper; the others are delivered", async function () {
        h = await createHarness();
        const logger = new RecordingLogger();
        // DynamoDB refuses a NULL or empty record_id (a RecordIDIndex key), so the row lacks it: as a foreign writer could leave it.
        const item = marshalRecord(
            pendingRecord(
                {
                    partition: "NOID",
                    recordId: "dropped",
                    bindingId: "sns",
                    address: h.topicArn,
                    envelope: { id: "env-noid", subject: "T", payload: "1" },
                },
                1n,
                h.clock.now(),
            ),
        );
        delete item[ATTR.recordId];
        await h.ddb.send(new PutItemCommand({ TableName: h.tableName, Item: item }));
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
        assert.deepEqual(
            h.published().map((p) => p.id),
            [messageIds[0]],
            "nothing went out with an empty outbox.id",
        );
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
        assert.deepEqual(
            h.published().map((p) => p.id),
            messageIds,
            "and nothing with an empty outbox.id",
        );
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

    it("rejects an incomplete config with INVALID_CONFIG naming the setting", function () {
        const base = {
            dynamodb: { send: async () => ({}) },
            sns: { send: async () => ({}) },
            sqs: { send: async () => ({}) },
            tableName: "orders-outbox",
            topicArn: "arn:aws:sns:us-east-1:000000000000:events",
            dlqUrl: "https://sqs.us-east-1.amazonaws.com/000000000000/dlq",
        };
        const cases: [Record<string, unknown>, RegExp][] = [
            [{ tableName: "" }, /tableName must be a non-empty string/],
            [{ sns: undefined }, /sns must be an AWS SDK v3 client/],
            [{ maxPublishAttempts: 0 }, /maxPublishAttempts is 0; expected an integer from 1 to 100/],
            [{ claimLimit: 5000 }, /claimLimit is 5000; expected an integer from 1 to 1000/],
            [{ claimVersion: 0n }, /claimVersion must be a bigint ≥ 1n/],
        ];
        for (const [change, pattern] of cases) {
            assert.throws(
                () => createPublisher({ ...base, ...change } as never),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
            );
        }
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
