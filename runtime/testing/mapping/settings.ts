/**
 * The local mapping's options, checked and defaulted once at start, and the stream it reads (given, or the
 * table's latest). Every mistake is an `INVALID_CONFIG` {@link OutboxError} naming the option.
 *
 * @packageDocumentation
 */
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../../errors";
import { integerIn } from "../../integer-setting";
import { MAPPING_LIMITS, type IntegerLimit } from "../../limits";
import { silentLogger, systemClock, type Clock, type Logger } from "../../ports";
import { STREAM_FILTER_PATTERN } from "../../schema";
import { validateFilterPattern, type FilterPattern } from "../filter-pattern";
import type { LocalEventSourceMappingOptions } from "./types";

/** The options after their defaults and range checks. */
export interface MappingSettings {
    readonly batchSize: number;
    /** Lanes per shard: batches of one shard in flight at once. */
    readonly parallelizationFactor: number;
    readonly windowMs: number;
    readonly pollIntervalMs: number;
    /** -1 retries forever. */
    readonly maxRetries: number;
    readonly retryBackoffMs: number;
    readonly invocationTimeoutMs: number;
    readonly startingPosition: "TRIM_HORIZON" | "LATEST";
    /** OR-ed; empty delivers every record. */
    readonly patterns: readonly FilterPattern[];
    readonly functionName: string;
    readonly functionArn: string;
    readonly logger: Logger;
    readonly clock: Clock;
}

/** The local mapping's range checks: {@link integerIn} under its own name. */
export function integerOption(name: string, value: number | undefined, limit: IntegerLimit): number {
    return integerIn("local event source mapping", name, value, limit);
}

/** The type name of a thrown value, for logs and error codes (never its message, which may hold data). */
export function errorName(err: unknown): string {
    return err instanceof Error ? err.name : typeof err;
}

function configError(message: string, option: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", `local event source mapping: ${message}`, { context: { option } });
}

/** The seven numeric options, checked in this order (the first bad one is reported). */
function numericSettings(options: LocalEventSourceMappingOptions) {
    const window = MAPPING_LIMITS.maximumBatchingWindowInSeconds;
    const windowLimit = {
        min: window.min * 1000,
        max: window.max * 1000,
        fallback: window.fallback * 1000,
        unit: "ms",
    };
    const ms = (min: number, max: number, fallback: number): IntegerLimit => ({ min, max, fallback, unit: "ms" });
    return {
        batchSize: integerOption("batchSize", options.batchSize, MAPPING_LIMITS.batchSize),
        parallelizationFactor: integerOption(
            "parallelizationFactor",
            options.parallelizationFactor,
            MAPPING_LIMITS.parallelizationFactor,
        ),
        windowMs: integerOption("maximumBatchingWindowMs", options.maximumBatchingWindowMs, windowLimit),
        pollIntervalMs: integerOption("pollIntervalMs", options.pollIntervalMs, ms(1, 60_000, 50)),
        maxRetries: integerOption(
            "maximumRetryAttempts",
            options.maximumRetryAttempts,
            MAPPING_LIMITS.maximumRetryAttempts,
        ),
        retryBackoffMs: integerOption("retryBackoffMs", options.retryBackoffMs, ms(0, 60_000, 20)),
        invocationTimeoutMs: integerOption("invocationTimeoutMs", options.invocationTimeoutMs, ms(1, 900_000, 60_000)),
    };
}

function filterPatterns(options: LocalEventSourceMappingOptions): readonly FilterPattern[] {
    const raw = options.filterPattern === undefined ? STREAM_FILTER_PATTERN : options.filterPattern;
    const patterns: readonly FilterPattern[] =
        raw === null ? [] : Array.isArray(raw) ? (raw as readonly FilterPattern[]) : [raw as FilterPattern];
    for (const pattern of patterns) validateFilterPattern(pattern);
    return patterns;
}

/**
 * Check and default every option but the stream's.
 *
 * @throws OutboxError `INVALID_CONFIG` naming the first bad option.
 */
export function mappingSettings(options: LocalEventSourceMappingOptions): MappingSettings {
    const numbers = numericSettings(options);
    const startingPosition = options.startingPosition ?? "TRIM_HORIZON";
    if (startingPosition !== "TRIM_HORIZON" && startingPosition !== "LATEST") {
        throw configError(
            `startingPosition is ${JSON.stringify(startingPosition)}; expected "TRIM_HORIZON" or "LATEST"`,
            "startingPosition",
        );
    }
    if (typeof options.handler !== "function") {
        throw configError(
            "handler is not a function; pass the stream handler to invoke, e.g. the publisher",
            "handler",
        );
    }
    const patterns = filterPatterns(options);
    const functionName = options.functionName ?? "local-stream-handler";
    return {
        ...numbers,
        startingPosition,
        patterns,
        functionName,
        functionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
        logger: options.logger ?? silentLogger,
        clock: options.clock ?? systemClock,
    };
}

async function lookUpStreamArn(client: DynamoDBClient, tableName: string): Promise<string> {
    let arn: string | undefined;
    try {
        const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
        arn = out.Table?.StreamSpecification?.StreamEnabled === false ? undefined : out.Table?.LatestStreamArn;
    } catch (err) {
        if (errorName(err) === "ResourceNotFoundException") {
            throw new OutboxError(
                "NOT_FOUND",
                `local event source mapping: table ${tableName} does not exist; create it first (OutboxStore.createTable) or pass streamArn`,
                { cause: err, context: { tableName } },
            );
        }
        throw new OutboxError("UNAVAILABLE", `local event source mapping: DescribeTable ${tableName} failed`, {
            cause: err,
            context: { tableName },
        });
    }
    if (arn === undefined) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `local event source mapping: table ${tableName} has no stream; enable a NEW_IMAGE stream on it (the Outbox component and createTable do)`,
            { context: { tableName } },
        );
    }
    return arn;
}

/**
 * The stream to read: `streamArn`, or the latest stream of `tableName`, looked up with `dynamodbClient`.
 *
 * @throws OutboxError `INVALID_CONFIG` for both or neither given, or a table without a stream; `NOT_FOUND` for a
 *   missing table.
 */
export async function streamToRead(options: LocalEventSourceMappingOptions): Promise<string> {
    if (options.streamArn !== undefined) {
        if (options.tableName !== undefined) {
            throw configError("both streamArn and tableName are set; give one of them", "streamArn");
        }
        return options.streamArn;
    }
    if (options.tableName !== undefined && options.dynamodbClient !== undefined) {
        return lookUpStreamArn(options.dynamodbClient, options.tableName);
    }
    throw configError(
        "no stream given; pass streamArn, or dynamodbClient and tableName to use the table's latest stream",
        "streamArn",
    );
}
