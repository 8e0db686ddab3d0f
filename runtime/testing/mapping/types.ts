/**
 * The public types of the local event source mapping (`startLocalEventSourceMapping`): its options, the
 * handle it returns, its counters, the context a handler receives and the record `onFailure` receives.
 * Re-exported, unchanged, by `event-source-mapping.ts`.
 *
 * @packageDocumentation
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import type { Clock, Logger } from "../../ports";
import type { FilterPattern } from "../filter-pattern";
import type { LambdaStreamEvent, LambdaStreamHandlerResult } from "../stream-event";

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
    /** The shard's lane (concurrent batch) it came from, 0-based; always 0 with `parallelizationFactor` 1. */
    readonly lane: number;
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
    handler(
        event: LambdaStreamEvent,
        context: LocalInvocationContext,
    ): Promise<LambdaStreamHandlerResult> | LambdaStreamHandlerResult;
    /**
     * The filter: one pattern or a list (OR-ed, like `FilterCriteria.Filters`); `null` delivers every record.
     * Only the operators in `SUPPORTED_FILTER_OPERATORS` are accepted.
     * @default STREAM_FILTER_PATTERN (INSERTs of outbox records, the filter the component provisions)
     */
    readonly filterPattern?: FilterPattern | readonly FilterPattern[] | null;
    /** The most records per invocation, 1 to 10000. @default 100 */
    readonly batchSize?: number;
    /**
     * Batches of one shard in flight at once, 1 to 10, like Lambda's `ParallelizationFactor`. Each record goes to
     * one of this many lanes by a hash of its item's key (partition and sort key, the unit whose order Lambda
     * documents it keeps), so the records of one item stay in order in one lane; records of different items,
     * even of one partition, may be delivered concurrently and out of order with each other. Each lane
     * checkpoints, retries, bisects and gives up on its own, so a failing lane does not hold the others. Lanes
     * are served together once per poll cycle: one waiting for its retry backoff holds none, but a long
     * invocation delays the others' next batch until it returns.
     * @default 1
     */
    readonly parallelizationFactor?: number;
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
