/**
 * The local event source mapping against DynamoDB Local, on real stream records.
 * Handlers here are plain recorders: the point is what the mapping delivers, in which order, how often.
 */
import assert from "node:assert/strict";
import { DeleteItemCommand, TransactWriteItemsCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { ATTR } from "../../../runtime/schema";
import {
    startLocalEventSourceMapping,
    type LocalEventSourceMapping,
    type LocalEventSourceMappingOptions,
    type LocalStreamFailureInfo,
} from "../../../runtime/testing/event-source-mapping";
import type { LambdaStreamEvent, LambdaStreamHandlerResult } from "../../../runtime/testing/stream-event";
import { createStreamTable, destroyStreamsClients, outboxItem, putOutboxRecords, recordIdOf, writeOrderWithEvent, type StreamTable } from "../../support/stream-table";

type Handler = (event: LambdaStreamEvent) => Promise<LambdaStreamHandlerResult> | LambdaStreamHandlerResult;

/** Records each invocation's record ids, then defers to `respond`. */
function recorder(respond: (event: LambdaStreamEvent, call: number) => Promise<LambdaStreamHandlerResult> | LambdaStreamHandlerResult = () => undefined) {
    const calls: string[][] = [];
    const events: LambdaStreamEvent[] = [];
    const handler: Handler = (event) => {
        calls.push(event.Records.map(recordIdOf));
        events.push(event);
        return respond(event, calls.length);
    };
    return { calls, events, handler, delivered: () => calls.flat() };
}

const ids = (partition: string, from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `rec-${partition}-${from + i}`);

describe("local event source mapping (DynamoDB Local, real stream records)", function () {
    this.timeout(60_000);
    const running: LocalEventSourceMapping[] = [];

    async function start(table: StreamTable, handler: Handler, options: Partial<LocalEventSourceMappingOptions> = {}): Promise<LocalEventSourceMapping> {
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
        await table.ddb.send(new DeleteItemCommand({ TableName: table.tableName, Key: { [ATTR.pk]: { S: "ORDER#2" }, [ATTR.sk]: { S: "ORDER#2" } } }));

        const rec = recorder();
        const mapping = await start(table, rec.handler, { dynamodbClient: table.ddb, tableName: table.tableName, streamArn: undefined });
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
        assert.ok(Number.isInteger(record.dynamodb.ApproximateCreationDateTime), "DynamoDB Local rounds to the minute; seconds, not a Date");
        assert.deepEqual(record.dynamodb.Keys, { PK: { S: "ORDER#1" }, SK: { S: "OUTBOX#000001" } });
        assert.deepEqual(record.dynamodb.NewImage, { PK: { S: "ORDER#1" }, SK: { S: "OUTBOX#000001" }, record_id: { S: "rec-ORDER#1-1" }, payload: { B: "AQ==" } });
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
        assert.deepEqual(rec.calls.map((c) => c.length), [10, 10, 5]);
        assert.deepEqual(rec.delivered(), ids("P", 0, 25));
        const sequences = rec.events.flatMap((e) => e.Records.map((r) => BigInt(r.dynamodb.SequenceNumber)));
        assert.ok(sequences.every((s, i) => i === 0 || s > (sequences[i - 1] as bigint)), "ascending SequenceNumbers");

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
            call === 1 ? { batchItemFailures: [{ itemIdentifier: (event.Records[k] as { dynamodb: { SequenceNumber: string } }).dynamodb.SequenceNumber }] } : { batchItemFailures: [] },
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
            call === 1 ? { batchItemFailures: [6, 2, 5].map((i) => ({ itemIdentifier: (event.Records[i] as { dynamodb: { SequenceNumber: string } }).dynamodb.SequenceNumber })) } : undefined,
        );
        const mapping = await start(table, rec.handler);
        await mapping.drain();
        assert.deepEqual(rec.calls, [ids("P", 0, 8), ids("P", 2, 8)]);
    });

    it("treats an itemIdentifier that is not in the batch, or an empty one, as a whole-batch failure", async () => {
        for (const bogus of ["999999999999999999999", ""]) {
            const table = await createStreamTable();
            await putOutboxRecords(table, "P", 3);
            const rec = recorder((_event, call) => (call === 1 ? { batchItemFailures: [{ itemIdentifier: bogus }] } : { batchItemFailures: [] }));
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
            if (event.Records.some((r) => ["rec-P-0", "rec-P-1", "rec-P-2"].includes(recordIdOf(r)))) throw new Error("poison");
        });
        const mapping = await start(table, rec.handler, { maximumRetryAttempts: 2, bisectBatchOnFunctionError: false, onFailure: (info) => void failures.push(info) });
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
        const mapping = await start(table, rec.handler, { batchSize: 4, maximumRetryAttempts: 1, onFailure: (info) => void failures.push(info) });
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
                        { ConditionCheck: { TableName: fresh.tableName, Key: { PK: { S: "none" }, SK: { S: "none" } }, ConditionExpression: "attribute_exists(PK)" } },
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
        const mapping = await start(table, rec.handler, { batchSize: 4, maximumRetryAttempts: 0, redeliverSucceededBatch: (batch) => batch.invocation === 1 });
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
        await assert.rejects(mapping.drain({ timeoutMs: 300 }), (err: unknown) => isOutboxError(err, "TIMEOUT") && /1 record\(s\) still pending/.test(err.message));
        await mapping.stop();
        const calls = rec.calls.length;
        assert.ok(calls >= 2, "it kept retrying");
        await assert.rejects(mapping.drain(), (err: unknown) => isOutboxError(err, "UNAVAILABLE"));
        await mapping.stop();
        assert.equal(rec.calls.length, calls, "no invocation after stop()");
    });

    describe("bad configuration", () => {
        const base = { handler: () => undefined };
        it("fails when the table has no stream, naming the table and the fix", async () => {
            const table = await createStreamTable({ stream: false });
            await assert.rejects(
                startLocalEventSourceMapping({ ...base, streamsClient: table.streams, dynamodbClient: table.ddb, tableName: table.tableName }),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && err.message.includes(`table ${table.tableName} has no stream; enable a NEW_IMAGE stream`),
            );
        });
        it("fails when the table does not exist", async () => {
            const table = await createStreamTable();
            await assert.rejects(
                startLocalEventSourceMapping({ ...base, streamsClient: table.streams, dynamodbClient: table.ddb, tableName: "no-such-table" }),
                (err: unknown) => isOutboxError(err, "NOT_FOUND") && err.message.includes("table no-such-table does not exist"),
            );
        });
        it("fails when the stream does not exist", async () => {
            const table = await createStreamTable();
            await assert.rejects(
                startLocalEventSourceMapping({ ...base, streamsClient: table.streams, streamArn: `${table.streamArn}-gone` }),
                (err: unknown) => isOutboxError(err, "NOT_FOUND") && err.message.includes("DescribeStream"),
            );
        });
        it("fails on out-of-range options, no stream, both stream sources, and a bad filter, before any call", async () => {
            const table = await createStreamTable();
            const cases: [Partial<LocalEventSourceMappingOptions>, RegExp][] = [
                [{ batchSize: 0 }, /batchSize is 0; expected an integer from 1 to 10000; omit it for the default 100/],
                [{ batchSize: 1.5 }, /batchSize is 1.5/],
                [{ maximumRetryAttempts: -2 }, /maximumRetryAttempts is -2; expected an integer from -1 to 10000/],
                [{ pollIntervalMs: 0 }, /pollIntervalMs is 0/],
                [{ startingPosition: "AT_TIMESTAMP" as never }, /startingPosition is "AT_TIMESTAMP"; expected "TRIM_HORIZON" or "LATEST"/],
                [{ streamArn: undefined }, /no stream given; pass streamArn, or dynamodbClient and tableName/],
                [{ tableName: table.tableName }, /both streamArn and tableName are set; give one of them/],
                [{ filterPattern: { eventName: "INSERT" } as never }, /filter pattern at eventName/],
                [{ handler: "nope" as never }, /handler is not a function/],
            ];
            for (const [options, message] of cases) {
                await assert.rejects(
                    startLocalEventSourceMapping({ ...base, streamsClient: table.streams, streamArn: table.streamArn, ...options }),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message),
                    JSON.stringify(options),
                );
            }
        });
    });
});
