/**
 * The local event source mapping against DynamoDB Local, on real stream records.
 * Handlers here are plain recorders: the point is what the mapping delivers, in which order, how often.
 */
import assert from "node:assert/strict";
import { DeleteItemCommand, TransactWriteItemsCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { ATTR } from "../../../runtime/schema";
import { laneOf } from "../../../runtime/testing/mapping/lane-routing";
import {
    startLocalEventSourceMapping,
    type LocalEventSourceMapping,
    type LocalEventSourceMappingOptions,
    type LocalStreamFailureInfo,
} from "../../../runtime/testing/event-source-mapping";
import type {
    LambdaStreamEvent,
    LambdaStreamHandlerResult,
    LambdaStreamRecord,
} from "../../../runtime/testing/stream-event";
import {
    createStreamTable,
    destroyStreamsClients,
    outboxItem,
    putOutboxRecords,
    recordIdOf,
    writeOrderWithEvent,
    type StreamTable,
} from "../../support/stream-table";

type Handler = (event: LambdaStreamEvent) => Promise<LambdaStreamHandlerResult> | LambdaStreamHandlerResult;

/** Records each invocation's record ids, then defers to `respond`. */
function recorder(
    respond: (
        event: LambdaStreamEvent,
        call: number,
    ) => Promise<LambdaStreamHandlerResult> | LambdaStreamHandlerResult = () => undefined,
) {
    const calls: string[][] = [];
    const events: LambdaStreamEvent[] = [];
    const handler: Handler = (event) => {
        calls.push(event.Records.map(recordIdOf));
        events.push(event);
        return respond(event, calls.length);
    };
    return { calls, events, handler, delivered: () => calls.flat() };
}

/** Counts handler calls in flight; each call waits (up to `waitMs`) for a second one to start, to let them overlap. */
function overlapMeter(waitMs = 500) {
    let inFlight = 0;
    let peak = 0;
    const enter = async (): Promise<void> => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        for (let waited = 0; inFlight < 2 && waited < waitMs; waited += 5) await new Promise((r) => setTimeout(r, 5));
    };
    return { enter, leave: () => void (inFlight -= 1), peak: () => peak };
}

const seq = (r: LambdaStreamRecord): bigint => BigInt(r.dynamodb.SequenceNumber);
const poisonAt = (event: LambdaStreamEvent, id: string) => event.Records.find((r) => recordIdOf(r) === id);

const ids = (partition: string, from: number, to: number): string[] =>
    Array.from({ length: to - from }, (_, i) => `rec-${partition}-${from + i}`);

describe("local event source mapping (DynamoDB Local, real stream records)", function () {
    this.timeout(60_000);
    const running: LocalEventSourceMapping[] = [];

    async function start(
        table: StreamTable,
        handler: Handler,
        options: Partial<LocalEventSourceMappingOptions> = {},
    ): Promise<LocalEventSourceMapping> {
        const mapping = await startLocalEventSourceMapping({
            streamsClient: table.streams,
            streamArn: table.streamArn,
            handler,
            pollIntervalMs: 10,
            retryBackoffMs: 0,
            ...options,
        });
        running.push(mapping);
        return mapping;
    }

    afterEach(async () => {
        for (const m of running.splice(0)) await m.stop();
    });
    after(() => destroyStreamsClients());

    it("delivers only outbox INSERTs, in Lambda's exact event shape, and drops business items, MODIFYs and REMOVEs", async () => {
        const table = await createStreamTable();
        await writeOrderWithEvent(table, 1);
        await writeOrderWithEvent(table, 2);
        await table.ddb.send(
            new UpdateItemCommand({
                TableName: table.tableName,
                Key: { [ATTR.pk]: { S: "ORDER#1" }, [ATTR.sk]: outboxItem("ORDER#1", 1)[ATTR.sk] as { S: string } },
                UpdateExpression: "SET #s = :s",
                ExpressionAttributeNames: { "#s": ATTR.status },
                ExpressionAttributeValues: { ":s": { S: "completed" } },
            }),
        );
        await table.ddb.send(
            new DeleteItemCommand({
                TableName: table.tableName,
                Key: { [ATTR.pk]: { S: "ORDER#2" }, [ATTR.sk]: { S: "ORDER#2" } },
            }),
        );

        const rec = recorder();
        const mapping = await start(table, rec.handler, {
            dynamodbClient: table.ddb,
            tableName: table.tableName,
            streamArn: undefined,
        });
        assert.equal(mapping.streamArn, table.streamArn);
        await mapping.drain();

        assert.deepEqual(rec.delivered(), ["rec-ORDER#1-1", "rec-ORDER#2-2"]);
        const stats = mapping.stats();
        assert.equal(stats.recordsRead, 6, "4 INSERTs, 1 MODIFY, 1 REMOVE");
        assert.equal(stats.recordsFilteredOut, 4);
        assert.equal(stats.recordsSucceeded, 2);
        assert.equal(stats.pendingRecords, 0);

        const record = rec.events[0]?.Records[0];
        assert.ok(record);
        assert.equal(record.eventName, "INSERT");
        assert.equal(record.eventSource, "aws:dynamodb");
        assert.equal(record.eventVersion, "1.1");
        assert.equal(record.eventSourceARN, table.streamArn);
        assert.equal(typeof record.awsRegion, "string");
        assert.match(record.eventID, /\S/);
        assert.equal(typeof record.dynamodb.ApproximateCreationDateTime, "number");
        assert.ok(
            Number.isInteger(record.dynamodb.ApproximateCreationDateTime),
            "DynamoDB Local rounds to the minute; seconds, not a Date",
        );
        assert.deepEqual(record.dynamodb.Keys, { PK: { S: "ORDER#1" }, SK: { S: "OUTBOX#000001" } });
        assert.deepEqual(record.dynamodb.NewImage, {
            PK: { S: "ORDER#1" },
            SK: { S: "OUTBOX#000001" },
            record_id: { S: "rec-ORDER#1-1" },
            payload: { B: "AQ==" },
        });
        assert.equal(record.dynamodb.StreamViewType, "NEW_IMAGE");
        assert.match(record.dynamodb.SequenceNumber, /^\d+$/);
        assert.ok(record.dynamodb.SizeBytes > 0);
    });

    it("delivers every record with no filter (filterPattern: null)", async () => {
        const table = await createStreamTable();
        await writeOrderWithEvent(table, 7);
        const rec = recorder();
        const mapping = await start(table, rec.handler, { filterPattern: null });
        await mapping.drain();
        assert.equal(rec.events.flatMap((e) => e.Records).length, 2);
        assert.equal(mapping.stats().recordsFilteredOut, 0);
    });

    it("batches in shard order up to batchSize, and picks up records written while running", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 25);
        const rec = recorder();
        const mapping = await start(table, rec.handler, { batchSize: 10 });
        await mapping.drain();
        assert.deepEqual(
            rec.calls.map((c) => c.length),
            [10, 10, 5],
        );
        assert.deepEqual(rec.delivered(), ids("P", 0, 25));
        const sequences = rec.events.flatMap((e) => e.Records.map((r) => BigInt(r.dynamodb.SequenceNumber)));
        assert.ok(
            sequences.every((s, i) => i === 0 || s > (sequences[i - 1] as bigint)),
            "ascending SequenceNumbers",
        );

        await putOutboxRecords(table, "P", 3, 25);
        await mapping.drain();
        assert.deepEqual(rec.delivered(), ids("P", 0, 28));
        assert.equal(mapping.stats().invocations, rec.calls.length);
    });

    it("rewinds to the failed record: records before it are not redelivered, it and the rest are, in order", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 10);
        const k = 4;
        const rec = recorder((event, call) =>
            call === 1
                ? {
                      batchItemFailures: [
                          {
                              itemIdentifier: (event.Records[k] as { dynamodb: { SequenceNumber: string } }).dynamodb
                                  .SequenceNumber,
                          },
                      ],
                  }
                : { batchItemFailures: [] },
        );
        const mapping = await start(table, rec.handler);
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 10), ids("P", k, 10)]);
        const stats = mapping.stats();
        assert.equal(stats.retries, 1);
        assert.equal(stats.recordsDelivered, 10 + (10 - k));
        assert.equal(stats.recordsSucceeded, 10);
        assert.equal(stats.recordsDiscarded, 0);
    });

    it("rewinds to the LOWEST of several reported failures, whatever their order in the response", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 8);
        const rec = recorder((event, call) =>
            call === 1
                ? {
                      batchItemFailures: [6, 2, 5].map((i) => ({
                          itemIdentifier: (event.Records[i] as { dynamodb: { SequenceNumber: string } }).dynamodb
                              .SequenceNumber,
                      })),
                  }
                : undefined,
        );
        const mapping = await start(table, rec.handler);
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 8), ids("P", 2, 8)]);
    });

    it("treats an itemIdentifier that is not in the batch, or an empty one, as a whole-batch failure", async () => {
        for (const bogus of ["999999999999999999999", ""]) {
            const table = await createStreamTable();
            await putOutboxRecords(table, "P", 3);
            const rec = recorder((_event, call) =>
                call === 1 ? { batchItemFailures: [{ itemIdentifier: bogus }] } : { batchItemFailures: [] },
            );
            const mapping = await start(table, rec.handler);
            await mapping.drain();
            assert.deepEqual(rec.calls, [ids("P", 0, 3), ids("P", 0, 3)], `itemIdentifier ${JSON.stringify(bogus)}`);
        }
    });

    it("retries the whole batch after a thrown error (bisected, as the component configures it)", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 8);
        const rec = recorder((_event, call) => {
            if (call === 1) throw new Error("boom");
        });
        const mapping = await start(table, rec.handler);
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 8), ids("P", 0, 4), ids("P", 4, 8)]);
        assert.equal(mapping.stats().failedInvocations, 1);
    });

    it("retries the whole batch unsplit when bisectBatchOnFunctionError is false", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 4);
        const rec = recorder((_event, call) => {
            if (call <= 2) throw new Error("boom");
        });
        const mapping = await start(table, rec.handler, { bisectBatchOnFunctionError: false });
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 4), ids("P", 0, 4), ids("P", 0, 4)]);
        assert.equal(mapping.stats().retries, 2);
    });

    it("after maximumRetryAttempts, sends the batch's metadata to onFailure, skips it and carries on", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 3);
        const failures: LocalStreamFailureInfo[] = [];
        const rec = recorder((event) => {
            if (event.Records.some((r) => ["rec-P-0", "rec-P-1", "rec-P-2"].includes(recordIdOf(r))))
                throw new Error("poison");
        });
        const mapping = await start(table, rec.handler, {
            maximumRetryAttempts: 2,
            bisectBatchOnFunctionError: false,
            onFailure: (info) => void failures.push(info),
        });
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 3), ids("P", 0, 3), ids("P", 0, 3)], "1 attempt + 2 retries");
        assert.equal(failures.length, 1);
        const info = failures[0] as LocalStreamFailureInfo;
        const sent = rec.events[0]?.Records ?? [];
        assert.equal(info.requestContext.condition, "RetryAttemptsExhausted");
        assert.equal(info.requestContext.approximateInvokeCount, 3);
        assert.equal(info.responseContext.functionError, "Unhandled");
        assert.equal(info.DDBStreamBatchInfo.streamArn, table.streamArn);
        assert.equal(info.DDBStreamBatchInfo.batchSize, 3);
        assert.equal(info.DDBStreamBatchInfo.startSequenceNumber, sent[0]?.dynamodb.SequenceNumber);
        assert.equal(info.DDBStreamBatchInfo.endSequenceNumber, sent[2]?.dynamodb.SequenceNumber);
        assert.match(info.DDBStreamBatchInfo.shardId, /^shardId-/);
        assert.equal(JSON.stringify(info).includes("rec-P-"), false, "metadata only, never the records");
        assert.equal(mapping.stats().recordsDiscarded, 3);

        // The shard is not blocked: later records flow.
        await putOutboxRecords(table, "P", 2, 3);
        await mapping.drain();
        assert.deepEqual(rec.calls.slice(3).flat(), ids("P", 3, 5));
        assert.equal(failures.length, 1);
    });

    it("skips past a record that keeps failing in batchItemFailures: earlier records succeed, the failed tail goes to onFailure", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 6);
        const failures: LocalStreamFailureInfo[] = [];
        const rec = recorder((event) => {
            const poison = event.Records.find((r) => recordIdOf(r) === "rec-P-2");
            return { batchItemFailures: poison ? [{ itemIdentifier: poison.dynamodb.SequenceNumber }] : [] };
        });
        const mapping = await start(table, rec.handler, {
            batchSize: 4,
            maximumRetryAttempts: 1,
            onFailure: (info) => void failures.push(info),
        });
        await mapping.drain();
        // Batch [0..3] fails at 2; retry [2..5] fails at 2 again; retries exhausted: [2..5] skipped.
        assert.deepEqual(rec.calls, [ids("P", 0, 4), ids("P", 2, 6)]);
        assert.equal(failures.length, 1);
        assert.equal(failures[0]?.DDBStreamBatchInfo.batchSize, 4);
        assert.equal(failures[0]?.responseContext.functionError, undefined);
        const stats = mapping.stats();
        assert.equal(stats.recordsSucceeded, 2);
        assert.equal(stats.recordsDiscarded, 4);
    });

    it("reads on after DynamoDB Local's TrimmedDataAccessException (first write on the stream was a cancelled transaction)", async () => {
        const fresh = await createStreamTable();
        // A cancelled transaction as the very first write: its condition fails on a missing item.
        await assert.rejects(
            fresh.ddb.send(
                new TransactWriteItemsCommand({
                    TransactItems: [
                        { Put: { TableName: fresh.tableName, Item: outboxItem("Q", 0) } },
                        {
                            ConditionCheck: {
                                TableName: fresh.tableName,
                                Key: { PK: { S: "none" }, SK: { S: "none" } },
                                ConditionExpression: "attribute_exists(PK)",
                            },
                        },
                    ],
                }),
            ),
            { name: "TransactionCanceledException" },
        );
        const rec = recorder();
        const mapping = await start(fresh, rec.handler);
        await mapping.drain();
        assert.deepEqual(rec.delivered(), []);
        await putOutboxRecords(fresh, "Q", 2, 1);
        await mapping.drain();
        assert.deepEqual(rec.delivered(), ids("Q", 1, 3));
        assert.ok(mapping.stats().iteratorResets >= 1, "the quirk was met and answered with a fresh iterator");
    });

    it("redeliverSucceededBatch delivers a successful batch again, exactly, without touching the retry budget", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 6);
        const rec = recorder();
        const mapping = await start(table, rec.handler, {
            batchSize: 4,
            maximumRetryAttempts: 0,
            redeliverSucceededBatch: (batch) => batch.invocation === 1,
        });
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 4), ids("P", 0, 4), ids("P", 4, 6)]);
        const stats = mapping.stats();
        assert.equal(stats.forcedRedeliveries, 1);
        assert.equal(stats.retries, 0);
        assert.equal(stats.recordsDiscarded, 0);
        assert.equal(stats.recordsSucceeded, 6);
    });

    it("waits for the batching window before invoking with fewer than batchSize records", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 3);
        const rec = recorder();
        const mapping = await start(table, rec.handler, { batchSize: 10, maximumBatchingWindowMs: 200 });
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 3)], "one invocation once the window closed, not one per poll");
    });

    it("drain() rejects with TIMEOUT when a record keeps failing, and stop() ends the loop", async () => {
        const table = await createStreamTable();
        await putOutboxRecords(table, "P", 1);
        const rec = recorder(() => {
            throw new Error("always");
        });
        const mapping = await start(table, rec.handler, { maximumRetryAttempts: -1 });
        await assert.rejects(
            mapping.drain({ timeoutMs: 300 }),
            (err: unknown) => isOutboxError(err, "TIMEOUT") && /1 record\(s\) still pending/.test(err.message),
        );
        await mapping.stop();
        const calls = rec.calls.length;
        assert.ok(calls >= 2, "it kept retrying");
        await assert.rejects(mapping.drain(), (err: unknown) => isOutboxError(err, "UNAVAILABLE"));
        await mapping.stop();
        assert.equal(rec.calls.length, calls, "no invocation after stop()");
    });

    describe("parallelizationFactor", () => {
        /** 10 records in each of 4 partitions, written partition after partition. */
        async function fourPartitions(table: StreamTable): Promise<void> {
            for (const p of ["A", "B", "C", "D"]) await putOutboxRecords(table, p, 10);
        }

        it("has up to N batches of one shard in flight at once (at 1, never two)", async () => {
            for (const [factor, overlapping] of [
                [4, true],
                [1, false],
            ] as const) {
                const table = await createStreamTable();
                await fourPartitions(table);
                const meter = overlapMeter(factor === 1 ? 20 : 200);
                const rec = recorder(async () => {
                    await meter.enter();
                    meter.leave();
                });
                const mapping = await start(table, rec.handler, { batchSize: 5, parallelizationFactor: factor });
                await mapping.drain();
                assert.equal(rec.delivered().length, 40, `factor ${factor}`);
                assert.equal(mapping.stats().recordsSucceeded, 40);
                if (overlapping) assert.ok(meter.peak() >= 2, `factor 4: at most ${meter.peak()} in flight`);
                else assert.equal(meter.peak(), 1, "factor 1: one batch at a time");
            }
        });

        it("keeps the records of one item in one lane, in order, while the items of one partition spread over lanes", async () => {
            const table = await createStreamTable();
            // 6 items of one partition, each INSERTed then MODIFYed 3 times, the items' writes interleaved.
            await putOutboxRecords(table, "P", 6);
            for (let round = 0; round < 3; round += 1) {
                for (let n = 0; n < 6; n += 1) {
                    await table.ddb.send(
                        new UpdateItemCommand({
                            TableName: table.tableName,
                            Key: { [ATTR.pk]: { S: "P" }, [ATTR.sk]: outboxItem("P", n)[ATTR.sk] as { S: string } },
                            UpdateExpression: "SET #r = :r",
                            ExpressionAttributeNames: { "#r": "round" },
                            ExpressionAttributeValues: { ":r": { N: String(round) } },
                        }),
                    );
                }
            }
            const rec = recorder();
            const mapping = await start(table, rec.handler, {
                filterPattern: null,
                batchSize: 2,
                parallelizationFactor: 4,
            });
            await mapping.drain();
            const records = rec.events.flatMap((e) => e.Records);
            assert.equal(records.length, 24);
            const lanesUsed = new Set<number>();
            for (let n = 0; n < 6; n += 1) {
                const ofItem = records.filter((r) => recordIdOf(r) === `rec-P-${n}`);
                assert.deepEqual(
                    ofItem.map((r) => r.eventName),
                    ["INSERT", "MODIFY", "MODIFY", "MODIFY"],
                    `item ${n}`,
                );
                assert.ok(
                    ofItem.every((r, i) => i === 0 || seq(r) > seq(ofItem[i - 1]!)),
                    `item ${n} in stream order`,
                );
                lanesUsed.add(laneOf(ofItem[0]!, 4));
            }
            assert.ok(lanesUsed.size >= 2, "one partition's items went to several lanes");
            const inStreamOrder = records.every((r, i) => i === 0 || seq(r) > seq(records[i - 1]!));
            assert.equal(inStreamOrder, false, "across lanes, delivery is not in shard order");
        });

        it("retries a failing lane on its own: the other lanes deliver meanwhile, the failed lane's records are not skipped and stay in order", async () => {
            const table = await createStreamTable();
            await fourPartitions(table);
            const poison = "rec-B-3";
            let poisonDeliveries = 0;
            const succeeded: string[] = [];
            const rec = recorder((event) => {
                const bad = poisonAt(event, poison);
                if (bad !== undefined && (poisonDeliveries += 1) <= 3) {
                    succeeded.push(...event.Records.slice(0, event.Records.indexOf(bad)).map(recordIdOf));
                    return { batchItemFailures: [{ itemIdentifier: bad.dynamodb.SequenceNumber }] };
                }
                succeeded.push(...event.Records.map(recordIdOf));
                return undefined;
            });
            const mapping = await start(table, rec.handler, {
                batchSize: 5,
                parallelizationFactor: 4,
                retryBackoffMs: 20,
            });
            await mapping.drain();

            const all = ["A", "B", "C", "D"].flatMap((p) => ids(p, 0, 10));
            assert.deepEqual([...succeeded].sort(), [...all].sort(), "every record accepted once, none skipped");
            assert.equal(poisonDeliveries, 4);
            const stats = mapping.stats();
            assert.equal(stats.recordsDiscarded, 0);
            assert.equal(stats.retries, 3);
            const records = rec.events.flatMap((e) => e.Records);
            const laneOfId = new Map(records.map((r) => [recordIdOf(r), laneOf(r, 4)]));
            const poisonLane = laneOfId.get(poison);
            const otherLanes = all.filter((id) => laneOfId.get(id) !== poisonLane);
            assert.ok(otherLanes.length > 0, "the 40 records use more than one lane");
            const acceptedPoisonAt = succeeded.indexOf(poison);
            assert.ok(
                otherLanes.every((id) => succeeded.indexOf(id) < acceptedPoisonAt),
                "the other lanes did not wait for the failing one",
            );
            for (let lane = 0; lane < 4; lane += 1) {
                const order = succeeded.filter((id) => laneOfId.get(id) === lane);
                assert.deepEqual(
                    order,
                    all.filter((id) => laneOfId.get(id) === lane),
                    `lane ${lane} accepted in shard order`,
                );
            }
        });

        it("gives up only the failing lane's batch after its retries, and the other lanes deliver everything", async () => {
            const table = await createStreamTable();
            await fourPartitions(table);
            const failures: LocalStreamFailureInfo[] = [];
            const rec = recorder((event) => {
                if (poisonAt(event, "rec-C-0") !== undefined) throw new Error("poison");
            });
            const mapping = await start(table, rec.handler, {
                batchSize: 5,
                parallelizationFactor: 4,
                maximumRetryAttempts: 1,
                bisectBatchOnFunctionError: false,
                onFailure: (info) => void failures.push(info),
            });
            await mapping.drain();
            const records = rec.events.flatMap((e) => e.Records);
            const poisonBatch = rec.events.find((e) => poisonAt(e, "rec-C-0") !== undefined)!.Records;
            const lane = laneOf(poisonBatch[0]!, 4);
            assert.ok(
                poisonBatch.every((r) => laneOf(r, 4) === lane),
                "a batch holds one lane's records",
            );
            assert.equal(failures.length, 1);
            assert.equal(failures[0]!.DDBStreamBatchInfo.batchSize, poisonBatch.length);
            assert.equal(failures[0]!.DDBStreamBatchInfo.startSequenceNumber, poisonBatch[0]!.dynamodb.SequenceNumber);
            const skipped = new Set(poisonBatch.map(recordIdOf));
            const all = ["A", "B", "C", "D"].flatMap((p) => ids(p, 0, 10));
            const delivered = new Set(records.map(recordIdOf));
            assert.deepEqual(
                all.filter((id) => !delivered.has(id)),
                [],
                "every record was delivered at least once",
            );
            const stats = mapping.stats();
            assert.equal(stats.recordsDiscarded, skipped.size);
            assert.equal(stats.recordsSucceeded, 40 - skipped.size);
        });
    });

    describe("bad configuration", () => {
        const base = { handler: () => undefined };
        it("fails when the table has no stream, naming the table and the fix", async () => {
            const table = await createStreamTable({ stream: false });
            await assert.rejects(
                startLocalEventSourceMapping({
                    ...base,
                    streamsClient: table.streams,
                    dynamodbClient: table.ddb,
                    tableName: table.tableName,
                }),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    err.message.includes(`table ${table.tableName} has no stream; enable a NEW_IMAGE stream`),
            );
        });
        it("fails when the table does not exist", async () => {
            const table = await createStreamTable();
            await assert.rejects(
                startLocalEventSourceMapping({
                    ...base,
                    streamsClient: table.streams,
                    dynamodbClient: table.ddb,
                    tableName: "no-such-table",
                }),
                (err: unknown) =>
                    isOutboxError(err, "NOT_FOUND") && err.message.includes("table no-such-table does not exist"),
            );
        });
        it("fails when the stream does not exist", async () => {
            const table = await createStreamTable();
            await assert.rejects(
                startLocalEventSourceMapping({
                    ...base,
                    streamsClient: table.streams,
                    streamArn: `${table.streamArn}-gone`,
                }),
                (err: unknown) => isOutboxError(err, "NOT_FOUND") && err.message.includes("DescribeStream"),
            );
        });
        it("fails on out-of-range options, no stream, both stream sources, and a bad filter, before any call", async () => {
            const table = await createStreamTable();
            const cases: [Partial<LocalEventSourceMappingOptions>, RegExp][] = [
                [{ batchSize: 0 }, /batchSize is 0; expected an integer from 1 to 10000; omit it for the default 100/],
                [{ batchSize: 1.5 }, /batchSize is 1.5/],
                [
                    { parallelizationFactor: 0 },
                    /parallelizationFactor is 0; expected an integer from 1 to 10; omit it for the default 1/,
                ],
                [{ parallelizationFactor: 11 }, /parallelizationFactor is 11; expected an integer from 1 to 10/],
                [{ parallelizationFactor: 2.5 }, /parallelizationFactor is 2.5/],
                [{ maximumRetryAttempts: -2 }, /maximumRetryAttempts is -2; expected an integer from -1 to 10000/],
                [{ pollIntervalMs: 0 }, /pollIntervalMs is 0/],
                [
                    { startingPosition: "AT_TIMESTAMP" as never },
                    /startingPosition is "AT_TIMESTAMP"; expected "TRIM_HORIZON" or "LATEST"/,
                ],
                [{ streamArn: undefined }, /no stream given; pass streamArn, or dynamodbClient and tableName/],
                [{ tableName: table.tableName }, /both streamArn and tableName are set; give one of them/],
                [{ filterPattern: { eventName: "INSERT" } as never }, /filter pattern at eventName/],
                [{ handler: "nope" as never }, /handler is not a function/],
            ];
            for (const [options, message] of cases) {
                await assert.rejects(
                    startLocalEventSourceMapping({
                        ...base,
                        streamsClient: table.streams,
                        streamArn: table.streamArn,
                        ...options,
                    }),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message),
                    JSON.stringify(options),
                );
            }
        });
    });
});
