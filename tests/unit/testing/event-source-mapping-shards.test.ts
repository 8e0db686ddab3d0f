/**
 * Shard lineage and iterator expiry. DynamoDB Local keeps a single open shard per stream and never splits or
 * expires iterators within a test, so these use a FAKE streams client (said so here): an in-memory stream with
 * a closed parent shard, its child (listed first), an unrelated open shard, paginated DescribeStream, and
 * injected ExpiredIteratorException / TrimmedDataAccessException.
 */
import assert from "node:assert/strict";
import type { DynamoDBStreamsClient, _Record } from "@aws-sdk/client-dynamodb-streams";
import { isOutboxError } from "../../../runtime/errors";
import {
    startLocalEventSourceMapping,
    type LocalEventSourceMapping,
} from "../../../runtime/testing/event-source-mapping";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";

interface FakeShard {
    readonly id: string;
    readonly parent?: string;
    readonly closed: boolean;
    readonly records: _Record[];
}

function streamRecord(shard: string, n: number, seq: number): _Record {
    return {
        eventID: `${shard}-${n}`,
        eventName: "INSERT",
        eventVersion: "1.1",
        eventSource: "aws:dynamodb",
        awsRegion: "us-east-1",
        dynamodb: {
            ApproximateCreationDateTime: new Date(1796012100_000),
            Keys: { PK: { S: shard }, SK: { S: `OUTBOX#${n}` } },
            NewImage: { PK: { S: shard }, SK: { S: `OUTBOX#${n}` }, record_id: { S: `${shard}-${n}` } },
            SequenceNumber: String(seq).padStart(21, "0"),
            SizeBytes: 10,
            StreamViewType: "NEW_IMAGE",
        },
    };
}

/** An in-memory DynamoDB stream behind the three calls the mapping makes. */
function fakeStreams(
    shards: FakeShard[],
    faults: { getRecords?: (call: number, shard: string) => string | undefined } = {},
) {
    let getRecordsCalls = 0;
    const iteratorRequests: { shardId: string; type: string; sequence?: string }[] = [];
    const client = {
        async send(command: { constructor: { name: string }; input: Record<string, unknown> }): Promise<unknown> {
            const input = command.input;
            switch (command.constructor.name) {
                case "DescribeStreamCommand": {
                    // One shard per page, to exercise pagination.
                    const start =
                        input.ExclusiveStartShardId === undefined
                            ? 0
                            : shards.findIndex((s) => s.id === input.ExclusiveStartShardId) + 1;
                    const page = shards.slice(start, start + 1);
                    const last = start + 1 < shards.length ? page[0]?.id : undefined;
                    return {
                        StreamDescription: {
                            Shards: page.map((s) => ({
                                ShardId: s.id,
                                ParentShardId: s.parent,
                                SequenceNumberRange: { StartingSequenceNumber: "1" },
                            })),
                            ...(last === undefined ? {} : { LastEvaluatedShardId: last }),
                        },
                    };
                }
                case "GetShardIteratorCommand": {
                    const shard = shards.find((s) => s.id === input.ShardId) as FakeShard;
                    iteratorRequests.push({
                        shardId: shard.id,
                        type: input.ShardIteratorType as string,
                        ...(input.SequenceNumber === undefined ? {} : { sequence: input.SequenceNumber as string }),
                    });
                    let position = 0;
                    if (input.ShardIteratorType === "AFTER_SEQUENCE_NUMBER")
                        position =
                            shard.records.findIndex((r) => r.dynamodb?.SequenceNumber === input.SequenceNumber) + 1;
                    if (input.ShardIteratorType === "LATEST") position = shard.records.length;
                    return { ShardIterator: `${shard.id}|${position}` };
                }
                case "GetRecordsCommand": {
                    getRecordsCalls += 1;
                    const [shardId, pos] = (input.ShardIterator as string).split("|") as [string, string];
                    const fault = faults.getRecords?.(getRecordsCalls, shardId);
                    if (fault !== undefined) throw Object.assign(new Error(fault), { name: fault });
                    const shard = shards.find((s) => s.id === shardId) as FakeShard;
                    const from = Number(pos);
                    // Two records per page, so a shard takes several reads.
                    const records = shard.records.slice(from, from + 2);
                    const next = from + records.length;
                    const ended = shard.closed && next >= shard.records.length;
                    return { Records: records, ...(ended ? {} : { NextShardIterator: `${shard.id}|${next}` }) };
                }
                default:
                    throw new Error(`fake streams client: unexpected ${command.constructor.name}`);
            }
        },
    };
    return { client: client as unknown as DynamoDBStreamsClient, iteratorRequests };
}

describe("local event source mapping: shard lineage and iterators (fake streams client)", () => {
    const running: LocalEventSourceMapping[] = [];
    afterEach(async () => {
        for (const m of running.splice(0)) await m.stop();
    });
    /** A mapping over the fake stream whose handler records the event ids it is given, stopped after the test. */
    async function startRecording(
        client: ReturnType<typeof fakeStreams>["client"],
    ): Promise<{ mapping: LocalEventSourceMapping; delivered: string[] }> {
        const delivered: string[] = [];
        const mapping = await startLocalEventSourceMapping({
            streamsClient: client,
            streamArn: "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/s",
            handler: (event: LambdaStreamEvent) => void delivered.push(...event.Records.map((r) => r.eventID)),
            pollIntervalMs: 5,
        });
        running.push(mapping);
        return { mapping, delivered };
    }

    it("reads a closed parent to its end before its child, even when the child is listed first; unrelated shards flow alongside", async () => {
        const parent: FakeShard = {
            id: "shardId-parent",
            closed: true,
            records: [0, 1, 2, 3, 4].map((n) => streamRecord("parent", n, 100 + n)),
        };
        const child: FakeShard = {
            id: "shardId-child",
            parent: "shardId-parent",
            closed: false,
            records: [0, 1, 2].map((n) => streamRecord("child", n, 200 + n)),
        };
        const other: FakeShard = {
            id: "shardId-other",
            closed: false,
            records: [0, 1].map((n) => streamRecord("other", n, 300 + n)),
        };
        const { client } = fakeStreams([child, parent, other]);
        const { mapping, delivered } = await startRecording(client);
        await mapping.drain();
        const lineage = delivered.filter((id) => !id.startsWith("other"));
        assert.deepEqual(lineage, [
            "parent-0",
            "parent-1",
            "parent-2",
            "parent-3",
            "parent-4",
            "child-0",
            "child-1",
            "child-2",
        ]);
        assert.deepEqual(
            delivered.filter((id) => id.startsWith("other")),
            ["other-0", "other-1"],
        );
        assert.equal(mapping.stats().shards, 3, "DescribeStream was paginated");
    });

    it("answers an expired iterator with AFTER_SEQUENCE_NUMBER of the last record read: nothing lost, nothing repeated", async () => {
        const shard: FakeShard = {
            id: "shardId-a",
            closed: true,
            records: [0, 1, 2, 3, 4, 5].map((n) => streamRecord("a", n, 10 + n)),
        };
        const { client, iteratorRequests } = fakeStreams([shard], {
            getRecords: (call) => (call === 2 ? "ExpiredIteratorException" : undefined),
        });
        const { mapping, delivered } = await startRecording(client);
        await mapping.drain();
        assert.deepEqual(delivered, ["a-0", "a-1", "a-2", "a-3", "a-4", "a-5"]);
        assert.deepEqual(iteratorRequests, [
            { shardId: "shardId-a", type: "TRIM_HORIZON" },
            { shardId: "shardId-a", type: "AFTER_SEQUENCE_NUMBER", sequence: "000000000000000000011" },
        ]);
        assert.equal(mapping.stats().iteratorResets, 1);
    });

    it("falls back to TRIM_HORIZON after repeated trims and skips what it already read", async () => {
        const shard: FakeShard = {
            id: "shardId-b",
            closed: true,
            records: [0, 1, 2, 3].map((n) => streamRecord("b", n, 10 + n)),
        };
        const { client, iteratorRequests } = fakeStreams([shard], {
            getRecords: (call) => (call === 2 || call === 3 ? "TrimmedDataAccessException" : undefined),
        });
        const { mapping, delivered } = await startRecording(client);
        await mapping.drain();
        assert.deepEqual(delivered, ["b-0", "b-1", "b-2", "b-3"]);
        assert.deepEqual(
            iteratorRequests.map((r) => r.type),
            ["TRIM_HORIZON", "AFTER_SEQUENCE_NUMBER", "TRIM_HORIZON"],
        );
    });

    it("never skips past a record it cannot convert: the page is withheld, counted as a poll error, and drain() times out", async () => {
        const bad: _Record = { eventID: "bad", eventName: "INSERT", dynamodb: { Keys: { PK: { S: "d" } } } };
        const shard: FakeShard = {
            id: "shardId-d",
            closed: true,
            records: [streamRecord("d", 0, 10), bad, streamRecord("d", 2, 12)],
        };
        const { client } = fakeStreams([shard]);
        const { mapping, delivered } = await startRecording(client);
        await assert.rejects(mapping.drain({ timeoutMs: 200 }), (err: unknown) => isOutboxError(err, "TIMEOUT"));
        assert.deepEqual(delivered, [], "the page holding the bad record is not consumed");
        assert.ok(mapping.stats().pollErrors >= 1);
    });

    it("keeps polling through transient read errors and counts them", async () => {
        const shard: FakeShard = {
            id: "shardId-c",
            closed: true,
            records: [0, 1, 2].map((n) => streamRecord("c", n, 10 + n)),
        };
        const { client } = fakeStreams([shard], {
            getRecords: (call) => (call <= 2 ? "InternalServerError" : undefined),
        });
        const { mapping, delivered } = await startRecording(client);
        await mapping.drain();
        assert.deepEqual(delivered, ["c-0", "c-1", "c-2"]);
        assert.equal(mapping.stats().pollErrors, 2);
    });
});
