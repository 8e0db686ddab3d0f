/**
 * A local stand-in for Lambda's DynamoDB event source mapping: it polls a table's stream, turns records into
 * the exact event Lambda delivers, applies the same filter the component provisions, batches per shard in
 * order and calls your handler, honouring `batchItemFailures` the way Lambda does. Use it to run the
 * outbox publisher (or your own stream handler) against DynamoDB Local in tests and demos.
 *
 * What it reproduces from Lambda:
 * - every shard is read from TRIM_HORIZON (or LATEST), parents before children, closed shards to their end;
 * - records that do not match the filter are dropped and checkpointed past;
 * - a handler that returns `batchItemFailures` is re-invoked from the LOWEST reported SequenceNumber; an empty
 *   list means success; an identifier that is not in the batch, an empty identifier or a thrown error fails
 *   the whole batch;
 * - retries are bounded by `maximumRetryAttempts`; then the batch's metadata (never its records) goes to
 *   `onFailure`, shaped like Lambda's on-failure destination record, and the mapping skips past it;
 * - `bisectBatchOnFunctionError` halves the batch after a thrown error;
 * - expired iterators and `TrimmedDataAccessException` are answered with a fresh iterator.
 *
 * What it does not: parallelization factor, tumbling windows, the 6 MB payload cap, maximum record age and
 * invocation timeouts. Shards are served one after the other by a single loop.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
    DescribeStreamCommand,
    GetRecordsCommand,
    GetShardIteratorCommand,
    type DynamoDBStreamsClient,
    type Shard,
} from "@aws-sdk/client-dynamodb-streams";
import { OutboxError } from "../errors";
import { integerIn } from "../integer-setting";
import { MAPPING_LIMITS, type IntegerLimit } from "../limits";
import { silentLogger, systemClock, type Clock, type Logger } from "../ports";
import { STREAM_FILTER_PATTERN } from "../schema";
import { matchesAnyFilterPattern, validateFilterPattern, type FilterPattern } from "./filter-pattern";
import { toLambdaStreamRecord, type LambdaStreamEvent, type LambdaStreamHandlerResult, type LambdaStreamRecord } from "./stream-event";

/** The minimal Lambda context the local mapping passes as the handler's second argument. */
export interface LocalInvocationContext {
    /** The `functionName` option. */
    readonly functionName: string;
    /** A fake ARN built from the function name. */
    readonly invokedFunctionArn: string;
    /** A fresh UUID per invocation. */
    readonly awsRequestId: string;
    /** Milliseconds left of `invocationTimeoutMs`; informative only, the mapping does not cut the call short. */
    getRemainingTimeInMillis(): number;
}

/**
 * What `onFailure` receives when a batch runs out of retries: the shape of Lambda's on-failure destination
 * record for stream sources. Metadata only: to read the records, use the sequence numbers.
 */
export interface LocalStreamFailureInfo {
    /** The failed invocation. */
    readonly requestContext: {
        /** The request id of the last attempt. */
        readonly requestId: string;
        /** The fake function ARN. */
        readonly functionArn: string;
        /** Always `RetryAttemptsExhausted` here. */
        readonly condition: "RetryAttemptsExhausted";
        /** How many times the failing record was delivered. */
        readonly approximateInvokeCount: number;
    };
    /** The last response. */
    readonly responseContext: {
        /** 200, as Lambda reports for a function error. */
        readonly statusCode: number;
        /** Always `$LATEST`. */
        readonly executedVersion: string;
        /** `Unhandled` when the handler threw; absent when it reported `batchItemFailures`. */
        readonly functionError?: string;
    };
    /** Always `1.0`. */
    readonly version: "1.0";
    /** When the batch was given up, ISO 8601. */
    readonly timestamp: string;
    /** Which records were skipped. */
    readonly DDBStreamBatchInfo: {
        /** The shard. */
        readonly shardId: string;
        /** The first skipped record's SequenceNumber. */
        readonly startSequenceNumber: string;
        /** The last skipped record's SequenceNumber. */
        readonly endSequenceNumber: string;
        /** ApproximateCreationDateTime of the first skipped record, ISO 8601. */
        readonly approximateArrivalOfFirstRecord: string;
        /** ApproximateCreationDateTime of the last skipped record, ISO 8601. */
        readonly approximateArrivalOfLastRecord: string;
        /** How many records were skipped. */
        readonly batchSize: number;
        /** The stream. */
        readonly streamArn: string;
    };
}

/** A batch the mapping just delivered, as the {@link LocalEventSourceMappingOptions.redeliverSucceededBatch} hook sees it. */
export interface LocalBatchInfo {
    /** The shard. */
    readonly shardId: string;
    /** The records' SequenceNumbers, in order. */
    readonly sequenceNumbers: readonly string[];
    /** The 1-based number of this invocation over the mapping's life. */
    readonly invocation: number;
}

/** Counters of a running mapping. Deliveries count every attempt, so redeliveries show up. */
export interface LocalEventSourceMappingStats {
    /** Handler invocations, retries included. */
    readonly invocations: number;
    /** Stream records read by GetRecords. */
    readonly recordsRead: number;
    /** Records dropped by the filter (and checkpointed past). */
    readonly recordsFilteredOut: number;
    /** Records handed to the handler, counting every redelivery. */
    readonly recordsDelivered: number;
    /** Records the handler accepted (checkpointed past after success). */
    readonly recordsSucceeded: number;
    /** Invocations that re-delivered records after a failure. */
    readonly retries: number;
    /** Successful batches delivered again on purpose by `redeliverSucceededBatch`. */
    readonly forcedRedeliveries: number;
    /** Invocations whose batch failed, wholly or partly. */
    readonly failedInvocations: number;
    /** Records skipped after retries ran out (their metadata went to `onFailure`). */
    readonly recordsDiscarded: number;
    /** DescribeStream/GetShardIterator/GetRecords calls that failed (the mapping retries them). */
    readonly pollErrors: number;
    /** Fresh iterators taken after an expired iterator or TrimmedDataAccessException. */
    readonly iteratorResets: number;
    /** Shards seen so far. */
    readonly shards: number;
    /** Filtered records read but not yet accepted by the handler. */
    readonly pendingRecords: number;
}

/** Options of {@link startLocalEventSourceMapping}. Give either `streamArn`, or `dynamodbClient` and `tableName`. */
export interface LocalEventSourceMappingOptions {
    /** The DynamoDB Streams client, with the same credentials and region as the table's client (DynamoDB Local keeps one database per key and region). */
    readonly streamsClient: DynamoDBStreamsClient;
    /** The stream to read. @default the table's `LatestStreamArn`, looked up with `dynamodbClient` */
    readonly streamArn?: string;
    /** The client used to look up `tableName`'s stream when `streamArn` is not given. @default undefined */
    readonly dynamodbClient?: DynamoDBClient;
    /** The table whose latest stream to read, when `streamArn` is not given. @default undefined */
    readonly tableName?: string;
    /**
     * The function to invoke with each batch. It receives the Lambda event (attribute values in wire shape) and a
     * minimal context. Do not await `stop()` from inside it: `stop()` waits for the running invocation.
     */
    handler(event: LambdaStreamEvent, context: LocalInvocationContext): Promise<LambdaStreamHandlerResult> | LambdaStreamHandlerResult;
    /**
     * The filter: one pattern or a list (OR-ed, like `FilterCriteria.Filters`); `null` delivers every record.
     * Only the operators in `SUPPORTED_FILTER_OPERATORS` are accepted.
     * @default STREAM_FILTER_PATTERN (INSERTs of outbox records, the filter the component provisions)
     */
    readonly filterPattern?: FilterPattern | readonly FilterPattern[] | null;
    /** The most records per invocation, 1 to 10000. @default 100 */
    readonly batchSize?: number;
    /** How long to gather records before invoking with fewer than `batchSize`, 0 to 300000 ms. @default 0 */
    readonly maximumBatchingWindowMs?: number;
    /** How long to wait between polls when nothing happened, 1 to 60000 ms. @default 50 */
    readonly pollIntervalMs?: number;
    /** Where a shard is first read from. @default "TRIM_HORIZON" */
    readonly startingPosition?: "TRIM_HORIZON" | "LATEST";
    /**
     * Retries of a failing record before its batch is skipped, -1 (forever) to 10000. Lambda's own default is -1;
     * a bounded default keeps a poison record from hanging a test.
     * @default 10
     */
    readonly maximumRetryAttempts?: number;
    /** Delay before the first retry, doubled on each further one up to 1 s, 0 to 60000 ms. @default 20 */
    readonly retryBackoffMs?: number;
    /**
     * Halve the batch after a thrown error before retrying, like Lambda's `BisectBatchOnFunctionError`
     * (Lambda's default is false; the Outbox component turns it on, and so does this default).
     * @default true
     */
    readonly bisectBatchOnFunctionError?: boolean;
    /**
     * Called with the batch's metadata when retries run out, like an on-failure destination. Its errors are
     * logged and the batch is skipped anyway.
     * @default undefined (the batch is skipped and an error is logged)
     */
    readonly onFailure?: (info: LocalStreamFailureInfo) => void | Promise<void>;
    /**
     * Fault injection for tests: called after every successful batch (redelivered ones included); returning true
     * delivers the same records again
     * (not counted as a retry against `maximumRetryAttempts`), as Lambda may after a timeout that followed the
     * handler's success or a lost checkpoint. Handlers must be idempotent; this proves it.
     * @default undefined (never redeliver a successful batch)
     */
    readonly redeliverSucceededBatch?: (batch: LocalBatchInfo) => boolean;
    /** The function name shown in the context and in failure metadata. @default "local-stream-handler" */
    readonly functionName?: string;
    /** The budget `context.getRemainingTimeInMillis()` counts down from, ms. @default 60000 */
    readonly invocationTimeoutMs?: number;
    /** Where to log (ids and counts, never record contents). @default silentLogger */
    readonly logger?: Logger;
    /** The clock used for waits, backoff and drain deadlines. @default systemClock */
    readonly clock?: Clock;
}

/** Options of {@link LocalEventSourceMapping.drain}. */
export interface LocalMappingDrainOptions {
    /** Give up after this many ms of the mapping's clock with an `OutboxError` `TIMEOUT`. @default 30000 */
    readonly timeoutMs?: number;
}

/** A running local event source mapping. */
export interface LocalEventSourceMapping {
    /** The stream being read. */
    readonly streamArn: string;
    /** A snapshot of the counters. */
    stats(): LocalEventSourceMappingStats;
    /**
     * Resolve once every record written before the call has been handled: read, filtered, delivered and
     * accepted, or skipped after its retries ran out. Rejects with `TIMEOUT` after `timeoutMs`, or when the
     * mapping is stopped first.
     */
    drain(options?: LocalMappingDrainOptions): Promise<void>;
    /** The same as {@link LocalEventSourceMapping.drain}. */
    waitIdle(options?: LocalMappingDrainOptions): Promise<void>;
    /** Stop polling and wait for the running invocation, if any, to end. Idempotent. */
    stop(): Promise<void>;
}

interface ShardState {
    readonly shardId: string;
    readonly parentShardId: string | undefined;
    iterator: string | undefined;
    /** GetRecords returned no NextShardIterator: the shard is closed and fully read. */
    ended: boolean;
    /** The last SequenceNumber read, to resume after an iterator reset without re-reading. */
    lastReadSequence: string | undefined;
    /** Resets in a row; a second one falls back from AFTER_SEQUENCE_NUMBER to TRIM_HORIZON. */
    consecutiveResets: number;
    readonly buffer: LambdaStreamRecord[];
    /** When the oldest buffered record was read (clock ms), for the batching window. */
    bufferedSince: number;
    /** Failures of the record at the head of the buffer. */
    headFailures: number;
    /** Not before this time (clock ms) may the head be retried. */
    retryAt: number;
    /** A smaller batch after a bisect, until the next success. */
    batchLimit: number | undefined;
    /** Whether the next invocation redelivers records. */
    redelivering: boolean;
}

interface DrainWaiter {
    readonly fromCycle: number;
    readonly deadline: number;
    readonly resolve: () => void;
    readonly reject: (err: Error) => void;
}

const MAX_BACKOFF_MS = 1000;
const DESCRIBE_INTERVAL_MS = 1000;
const GET_RECORDS_LIMIT = 1000;

/** The local mapping's range checks: {@link integerIn} under its own name. */
function integerOption(name: string, value: number | undefined, limit: IntegerLimit): number {
    return integerIn("local event source mapping", name, value, limit);
}

function errorName(err: unknown): string {
    return err instanceof Error ? err.name : typeof err;
}

function isoFromSeconds(seconds: number | undefined): string {
    return seconds === undefined ? "" : new Date(seconds * 1000).toISOString();
}

/**
 * The lowest index in `batch` the handler reported as failed, `undefined` when the whole batch succeeded,
 * 0 when the response fails the whole batch (malformed, empty or unknown identifier), as Lambda decides.
 */
function lowestFailedIndex(result: LambdaStreamHandlerResult, batch: readonly LambdaStreamRecord[]): number | undefined {
    if (result === null || result === undefined || typeof result !== "object") return undefined;
    const failures = (result as { batchItemFailures?: unknown }).batchItemFailures;
    if (failures === null || failures === undefined) return undefined;
    if (!Array.isArray(failures)) return 0;
    let lowest: number | undefined;
    for (const failure of failures as unknown[]) {
        const id = typeof failure === "object" && failure !== null ? (failure as { itemIdentifier?: unknown }).itemIdentifier : undefined;
        if (typeof id !== "string" || id === "") return 0;
        const index = batch.findIndex((r) => r.dynamodb.SequenceNumber === id);
        if (index < 0) return 0;
        lowest = lowest === undefined ? index : Math.min(lowest, index);
    }
    return lowest;
}

async function lookUpStreamArn(client: DynamoDBClient, tableName: string): Promise<string> {
    let arn: string | undefined;
    try {
        const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
        arn = out.Table?.StreamSpecification?.StreamEnabled === false ? undefined : out.Table?.LatestStreamArn;
    } catch (err) {
        if (errorName(err) === "ResourceNotFoundException") {
            throw new OutboxError("NOT_FOUND", `local event source mapping: table ${tableName} does not exist; create it first (OutboxStore.createTable) or pass streamArn`, {
                cause: err,
                context: { tableName },
            });
        }
        throw new OutboxError("UNAVAILABLE", `local event source mapping: DescribeTable ${tableName} failed`, { cause: err, context: { tableName } });
    }
    if (arn === undefined) {
        throw new OutboxError("INVALID_CONFIG", `local event source mapping: table ${tableName} has no stream; enable a NEW_IMAGE stream on it (the Outbox component and createTable do)`, {
            context: { tableName },
        });
    }
    return arn;
}

/**
 * Start polling a DynamoDB stream and invoking `handler` with Lambda-shaped batches.
 * Resolves once the stream is found and its shards are listed; polling then runs in the background until
 * `stop()`.
 *
 * @param options - See {@link LocalEventSourceMappingOptions}.
 * @throws OutboxError `INVALID_CONFIG` for a bad option or a table without a stream, `NOT_FOUND` for a missing
 * table or stream.
 */
export async function startLocalEventSourceMapping(options: LocalEventSourceMappingOptions): Promise<LocalEventSourceMapping> {
    const batchSize = integerOption("batchSize", options.batchSize, MAPPING_LIMITS.batchSize);
    const window = MAPPING_LIMITS.maximumBatchingWindowInSeconds;
    const windowMs = integerOption("maximumBatchingWindowMs", options.maximumBatchingWindowMs, { min: window.min * 1000, max: window.max * 1000, fallback: window.fallback * 1000, unit: "ms" });
    const pollIntervalMs = integerOption("pollIntervalMs", options.pollIntervalMs, { min: 1, max: 60_000, fallback: 50, unit: "ms" });
    const maxRetries = integerOption("maximumRetryAttempts", options.maximumRetryAttempts, MAPPING_LIMITS.maximumRetryAttempts);
    const retryBackoffMs = integerOption("retryBackoffMs", options.retryBackoffMs, { min: 0, max: 60_000, fallback: 20, unit: "ms" });
    const invocationTimeoutMs = integerOption("invocationTimeoutMs", options.invocationTimeoutMs, { min: 1, max: 900_000, fallback: 60_000, unit: "ms" });
    const startingPosition = options.startingPosition ?? "TRIM_HORIZON";
    if (startingPosition !== "TRIM_HORIZON" && startingPosition !== "LATEST") {
        throw new OutboxError("INVALID_CONFIG", `local event source mapping: startingPosition is ${JSON.stringify(startingPosition)}; expected "TRIM_HORIZON" or "LATEST"`, {
            context: { option: "startingPosition" },
        });
    }
    if (typeof options.handler !== "function") {
        throw new OutboxError("INVALID_CONFIG", "local event source mapping: handler is not a function; pass the stream handler to invoke, e.g. the publisher", {
            context: { option: "handler" },
        });
    }
    const rawFilter = options.filterPattern === undefined ? STREAM_FILTER_PATTERN : options.filterPattern;
    const patterns: readonly FilterPattern[] = rawFilter === null ? [] : Array.isArray(rawFilter) ? (rawFilter as readonly FilterPattern[]) : [rawFilter as FilterPattern];
    for (const pattern of patterns) validateFilterPattern(pattern);

    const streams = options.streamsClient;
    const logger = options.logger ?? silentLogger;
    const clock = options.clock ?? systemClock;
    const functionName = options.functionName ?? "local-stream-handler";
    const functionArn = `arn:aws:lambda:local:000000000000:function:${functionName}`;

    let streamArn: string;
    if (options.streamArn !== undefined) {
        if (options.tableName !== undefined) {
            throw new OutboxError("INVALID_CONFIG", "local event source mapping: both streamArn and tableName are set; give one of them", { context: { option: "streamArn" } });
        }
        streamArn = options.streamArn;
    } else if (options.tableName !== undefined && options.dynamodbClient !== undefined) {
        streamArn = await lookUpStreamArn(options.dynamodbClient, options.tableName);
    } else {
        throw new OutboxError("INVALID_CONFIG", "local event source mapping: no stream given; pass streamArn, or dynamodbClient and tableName to use the table's latest stream", {
            context: { option: "streamArn" },
        });
    }

    const counters = {
        invocations: 0,
        recordsRead: 0,
        recordsFilteredOut: 0,
        recordsDelivered: 0,
        recordsSucceeded: 0,
        retries: 0,
        forcedRedeliveries: 0,
        failedInvocations: 0,
        recordsDiscarded: 0,
        pollErrors: 0,
        iteratorResets: 0,
    };
    const shards: ShardState[] = [];
    const waiters: DrainWaiter[] = [];
    let cycle = 0;
    let lastDescribeCycle = 0;
    let lastDescribeAt = -Infinity;
    let describeWanted = true;
    let stopped = false;
    let wake: () => void = () => undefined;
    const stopSignal = new Promise<void>((resolve) => {
        wake = resolve;
    });

    async function describeStream(): Promise<void> {
        const found: Shard[] = [];
        let startShardId: string | undefined;
        do {
            const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: startShardId }));
            found.push(...(out.StreamDescription?.Shards ?? []));
            startShardId = out.StreamDescription?.LastEvaluatedShardId;
        } while (startShardId !== undefined);
        for (const shard of found) {
            if (shard.ShardId === undefined || shards.some((s) => s.shardId === shard.ShardId)) continue;
            shards.push({
                shardId: shard.ShardId,
                parentShardId: shard.ParentShardId,
                iterator: undefined,
                ended: false,
                lastReadSequence: undefined,
                consecutiveResets: 0,
                buffer: [],
                bufferedSince: 0,
                headFailures: 0,
                retryAt: 0,
                batchLimit: undefined,
                redelivering: false,
            });
            logger.debug("local mapping: shard found", { streamArn, shardId: shard.ShardId, parentShardId: shard.ParentShardId });
        }
    }

    function isDone(shard: ShardState): boolean {
        return shard.ended && shard.buffer.length === 0;
    }

    /** A shard may be read once its parent is done or gone (trimmed), as Lambda keeps lineage order. */
    function isReady(shard: ShardState): boolean {
        if (isDone(shard)) return false;
        const parent = shard.parentShardId === undefined ? undefined : shards.find((s) => s.shardId === shard.parentShardId);
        return parent === undefined || isDone(parent);
    }

    async function takeIterator(shard: ShardState): Promise<string | undefined> {
        const resume = shard.lastReadSequence !== undefined && shard.consecutiveResets < 2;
        const request = resume
            ? { StreamArn: streamArn, ShardId: shard.shardId, ShardIteratorType: "AFTER_SEQUENCE_NUMBER" as const, SequenceNumber: shard.lastReadSequence }
            : { StreamArn: streamArn, ShardId: shard.shardId, ShardIteratorType: shard.lastReadSequence === undefined ? startingPosition : ("TRIM_HORIZON" as const) };
        const out = await streams.send(new GetShardIteratorCommand(request));
        return out.ShardIterator;
    }

    /**
     * Read one page into the shard's buffer. Returns how many records the page held (re-read ones included, so
     * a page of skipped records is not mistaken for the end), or `undefined` when the read failed.
     */
    async function fetch(shard: ShardState): Promise<number | undefined> {
        const freshIterator = shard.iterator === undefined;
        try {
            shard.iterator ??= await takeIterator(shard);
            if (shard.iterator === undefined) {
                shard.ended = true;
                return 0;
            }
            const out = await streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: GET_RECORDS_LIMIT }));
            const page = out.Records ?? [];
            const after = shard.lastReadSequence === undefined ? undefined : BigInt(shard.lastReadSequence);
            // Convert the whole page before touching the shard's position: a record that cannot be converted
            // leaves the page to be read again (and counted as a poll error) instead of silently skipped.
            const fresh = page
                // After falling back to TRIM_HORIZON the shard is re-read from its start: skip what was seen.
                .filter((raw) => after === undefined || raw.dynamodb?.SequenceNumber === undefined || BigInt(raw.dynamodb.SequenceNumber) > after)
                .map((raw) => toLambdaStreamRecord(raw, streamArn));
            shard.iterator = out.NextShardIterator;
            shard.consecutiveResets = 0;
            if (shard.iterator === undefined) {
                shard.ended = true;
                describeWanted = true;
            }
            for (const record of fresh) {
                counters.recordsRead += 1;
                shard.lastReadSequence = record.dynamodb.SequenceNumber;
                if (!matchesAnyFilterPattern(patterns, record)) {
                    counters.recordsFilteredOut += 1;
                    continue;
                }
                if (shard.buffer.length === 0) shard.bufferedSince = clock.now();
                shard.buffer.push(record);
            }
            return page.length;
        } catch (err) {
            const name = errorName(err);
            if (name === "TrimmedDataAccessException" && shard.lastReadSequence === undefined) {
                // DynamoDB Local throws this after a cancelled transaction was the stream's first write, for any
                // iterator taken before the next successful write (test-infra §1). A fresh iterator that throws
                // means nothing is readable yet (idle); a stale one may hide records, so take a fresh one first.
                shard.iterator = undefined;
                counters.iteratorResets += 1;
                return freshIterator ? 0 : undefined;
            }
            if (name === "ExpiredIteratorException" || name === "TrimmedDataAccessException") {
                // Resume after the last record read; a second failure in a row falls back to TRIM_HORIZON.
                shard.iterator = undefined;
                shard.consecutiveResets += 1;
                counters.iteratorResets += 1;
                logger.debug("local mapping: fresh iterator", { shardId: shard.shardId, reason: name });
                return undefined;
            }
            counters.pollErrors += 1;
            logger.warn("local mapping: read failed, will retry", { shardId: shard.shardId, error: name });
            return undefined;
        }
    }

    async function giveUp(shard: ShardState, skipped: readonly LambdaStreamRecord[], requestId: string, invokeCount: number, threw: boolean): Promise<void> {
        const first = skipped[0] as LambdaStreamRecord;
        const last = skipped[skipped.length - 1] as LambdaStreamRecord;
        const info: LocalStreamFailureInfo = {
            requestContext: { requestId, functionArn, condition: "RetryAttemptsExhausted", approximateInvokeCount: invokeCount },
            responseContext: { statusCode: 200, executedVersion: "$LATEST", ...(threw ? { functionError: "Unhandled" } : {}) },
            version: "1.0",
            timestamp: new Date(clock.now()).toISOString(),
            DDBStreamBatchInfo: {
                shardId: shard.shardId,
                startSequenceNumber: first.dynamodb.SequenceNumber,
                endSequenceNumber: last.dynamodb.SequenceNumber,
                approximateArrivalOfFirstRecord: isoFromSeconds(first.dynamodb.ApproximateCreationDateTime),
                approximateArrivalOfLastRecord: isoFromSeconds(last.dynamodb.ApproximateCreationDateTime),
                batchSize: skipped.length,
                streamArn,
            },
        };
        counters.recordsDiscarded += skipped.length;
        logger.error("local mapping: retries exhausted, skipping batch", {
            shardId: shard.shardId,
            startSequenceNumber: info.DDBStreamBatchInfo.startSequenceNumber,
            endSequenceNumber: info.DDBStreamBatchInfo.endSequenceNumber,
            batchSize: skipped.length,
        });
        if (options.onFailure === undefined) return;
        try {
            await options.onFailure(info);
        } catch (err) {
            logger.error("local mapping: onFailure threw; the batch is skipped anyway", { shardId: shard.shardId, error: errorName(err) });
        }
    }

    /** Invoke the handler with the head of the buffer. Returns whether the whole batch succeeded. */
    async function invoke(shard: ShardState): Promise<boolean> {
        const batch = shard.buffer.slice(0, Math.min(batchSize, shard.batchLimit ?? batchSize));
        const requestId = randomUUID();
        const startedAt = clock.now();
        const context: LocalInvocationContext = {
            functionName,
            invokedFunctionArn: functionArn,
            awsRequestId: requestId,
            getRemainingTimeInMillis: () => Math.max(0, invocationTimeoutMs - (clock.now() - startedAt)),
        };
        counters.invocations += 1;
        counters.recordsDelivered += batch.length;
        if (shard.redelivering) counters.retries += 1;
        // A JSON round trip, as Lambda serializes the event: the handler cannot alias the mapping's buffer.
        const event = JSON.parse(JSON.stringify({ Records: batch })) as LambdaStreamEvent;
        let failedAt: number | undefined;
        let threw = false;
        try {
            failedAt = lowestFailedIndex(await options.handler(event, context), batch);
        } catch (err) {
            threw = true;
            failedAt = 0;
            logger.warn("local mapping: handler threw", { shardId: shard.shardId, requestId, batchSize: batch.length, error: errorName(err) });
        }
        const redeliver = options.redeliverSucceededBatch;
        if (failedAt === undefined && redeliver !== undefined) {
            const info: LocalBatchInfo = { shardId: shard.shardId, sequenceNumbers: batch.map((r) => r.dynamodb.SequenceNumber), invocation: counters.invocations };
            if (redeliver(info)) {
                counters.forcedRedeliveries += 1;
                shard.batchLimit = batch.length;
                logger.debug("local mapping: redelivering a successful batch (fault injection)", { shardId: shard.shardId, requestId, batchSize: batch.length });
                return false;
            }
        }
        if (failedAt === undefined) {
            shard.buffer.splice(0, batch.length);
            counters.recordsSucceeded += batch.length;
            shard.headFailures = 0;
            shard.batchLimit = undefined;
            shard.redelivering = false;
            shard.bufferedSince = clock.now();
            logger.debug("local mapping: batch handled", { shardId: shard.shardId, requestId, batchSize: batch.length });
            return true;
        }
        counters.failedInvocations += 1;
        shard.redelivering = true;
        if (failedAt > 0) {
            shard.buffer.splice(0, failedAt);
            counters.recordsSucceeded += failedAt;
            shard.headFailures = 1;
        } else {
            shard.headFailures += 1;
        }
        const failedSequence = (batch[failedAt] as LambdaStreamRecord).dynamodb.SequenceNumber;
        if (maxRetries >= 0 && shard.headFailures > maxRetries) {
            const skipped = shard.buffer.splice(0, batch.length - failedAt);
            const invokeCount = shard.headFailures;
            shard.headFailures = 0;
            shard.batchLimit = undefined;
            shard.redelivering = false;
            await giveUp(shard, skipped, requestId, invokeCount, threw);
            return false;
        }
        if (threw && options.bisectBatchOnFunctionError !== false && batch.length > 1) shard.batchLimit = Math.ceil(batch.length / 2);
        shard.retryAt = clock.now() + Math.min(MAX_BACKOFF_MS, retryBackoffMs * 2 ** (shard.headFailures - 1));
        logger.warn("local mapping: batch failed, retrying from the lowest failed record", {
            shardId: shard.shardId,
            requestId,
            sequenceNumber: failedSequence,
            attempt: shard.headFailures,
        });
        return false;
    }

    /** Read and dispatch one shard. Returns whether it did anything and whether it is idle (nothing left to do). */
    async function serve(shard: ShardState): Promise<{ worked: boolean; idle: boolean }> {
        let read: number | undefined = 0;
        if (!shard.ended && shard.buffer.length < batchSize) read = await fetch(shard);
        let worked = (read ?? 0) > 0;
        while (!stopped && shard.buffer.length > 0 && clock.now() >= shard.retryAt) {
            const full = shard.buffer.length >= Math.min(batchSize, shard.batchLimit ?? batchSize);
            const windowOver = clock.now() - shard.bufferedSince >= windowMs;
            if (!full && !windowOver && !shard.ended && !shard.redelivering) break;
            worked = true;
            if (!(await invoke(shard))) break;
            if (shard.buffer.length < batchSize && !shard.ended) break;
        }
        return { worked, idle: read === 0 && shard.buffer.length === 0 };
    }

    function settleWaiters(idleCycle: number | undefined): void {
        const now = clock.now();
        for (let i = waiters.length - 1; i >= 0; i -= 1) {
            const waiter = waiters[i] as DrainWaiter;
            if (idleCycle !== undefined && idleCycle >= waiter.fromCycle && lastDescribeCycle >= waiter.fromCycle) {
                waiters.splice(i, 1);
                waiter.resolve();
            } else if (now >= waiter.deadline) {
                waiters.splice(i, 1);
                const pending = shards.reduce((n, s) => n + s.buffer.length, 0);
                waiter.reject(
                    new OutboxError("TIMEOUT", `local event source mapping: stream not drained in time; ${pending} record(s) still pending, ${counters.failedInvocations} failed invocation(s) so far`, {
                        context: { streamArn, pendingRecords: pending },
                    }),
                );
            }
        }
    }

    async function pause(ms: number): Promise<void> {
        await Promise.race([clock.sleep(ms), stopSignal]);
    }

    async function runCycle(): Promise<boolean> {
        cycle += 1;
        const thisCycle = cycle;
        let idle = true;
        let worked = false;
        const wantDescribe = describeWanted || waiters.some((w) => lastDescribeCycle < w.fromCycle) || clock.now() - lastDescribeAt >= DESCRIBE_INTERVAL_MS;
        if (wantDescribe) {
            try {
                await describeStream();
                lastDescribeCycle = thisCycle;
                lastDescribeAt = clock.now();
                describeWanted = false;
            } catch (err) {
                idle = false;
                counters.pollErrors += 1;
                logger.warn("local mapping: DescribeStream failed, will retry", { streamArn, error: errorName(err) });
            }
        }
        const served = new Set<string>();
        for (const shard of shards) {
            if (stopped) return worked;
            if (!isReady(shard)) continue;
            served.add(shard.shardId);
            try {
                const outcome = await serve(shard);
                worked = worked || outcome.worked;
                idle = idle && outcome.idle;
            } catch (err) {
                idle = false;
                counters.pollErrors += 1;
                logger.error("local mapping: shard loop failed, will retry", { shardId: shard.shardId, error: errorName(err) });
            }
        }
        // A shard that ended in this cycle may have children listed before it that are ready only now.
        if (shards.some((s) => isReady(s) && !served.has(s.shardId))) idle = false;
        settleWaiters(idle ? thisCycle : undefined);
        return worked;
    }

    async function run(): Promise<void> {
        while (!stopped) {
            const worked = await runCycle();
            if (!worked && !stopped) await pause(pollIntervalMs);
        }
    }

    try {
        await describeStream();
        lastDescribeAt = clock.now();
        describeWanted = false;
    } catch (err) {
        const name = errorName(err);
        throw new OutboxError(name === "ResourceNotFoundException" ? "NOT_FOUND" : "UNAVAILABLE", `local event source mapping: DescribeStream ${streamArn} failed (${name})`, {
            cause: err,
            context: { streamArn },
        });
    }
    logger.info("local mapping: started", { streamArn, shards: shards.length, batchSize });
    const loop = run();

    function drain(drainOptions: LocalMappingDrainOptions = {}): Promise<void> {
        const timeoutMs = integerOption("timeoutMs", drainOptions.timeoutMs, { min: 0, max: 86_400_000, fallback: 30_000, unit: "ms" });
        if (stopped) return Promise.reject(new OutboxError("UNAVAILABLE", "local event source mapping: drain() after stop()", { context: { streamArn } }));
        return new Promise<void>((resolve, reject) => {
            waiters.push({ fromCycle: cycle + 1, deadline: clock.now() + timeoutMs, resolve, reject });
        });
    }

    return {
        streamArn,
        stats: () => ({
            ...counters,
            shards: shards.length,
            pendingRecords: shards.reduce((n, s) => n + s.buffer.length, 0),
        }),
        drain,
        waitIdle: drain,
        async stop(): Promise<void> {
            if (!stopped) {
                stopped = true;
                wake();
            }
            await loop;
            for (const waiter of waiters.splice(0)) {
                waiter.reject(new OutboxError("UNAVAILABLE", "local event source mapping stopped before the stream was drained", { context: { streamArn } }));
            }
            logger.info("local mapping: stopped", { streamArn, invocations: counters.invocations });
        },
    };
}
