/**
 * The store's options, their defaults (reference §1), the client seam and the per-instance context every
 * operation file receives.
 *
 * @packageDocumentation
 */
import type { ConsumedCapacity } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { integerIn } from "../integer-setting";
import { HANDLER_LIMITS } from "../limits";
import { noopMetrics, silentLogger, systemClock, type Clock, type Logger, type MetricsSink } from "../ports";
import { checkOriginScope } from "../record/origin";
import type { OriginScope } from "../schema";
import { KeyCache } from "./key-cache";

/**
 * The one method of `DynamoDBClient` the store uses. Any object with it works, so tests can inject a fake or a
 * fault-injecting proxy.
 */
export interface DynamoDbClientLike {
    /** Send a command of `@aws-sdk/client-dynamodb`. */
    send(command: object): Promise<unknown>;
}

/** One consumed-capacity report: what the store did and what DynamoDB charged for it. */
export interface ConsumedCapacityEvent {
    /** The store step, e.g. `claim.index-query`, `claim.transaction`, `persist.put`. */
    readonly operation: string;
    /** The SDK command, e.g. `Query`. */
    readonly command: string;
    /** What DynamoDB reported (`ReturnConsumedCapacity: "INDEXES"`): one entry, or one per table for transactions. */
    readonly capacity: readonly ConsumedCapacity[];
}

/** Retry settings for resolving a record id through RecordIDIndex on a key-cache miss. */
export interface ResolveRetry {
    /** Total attempts (values ≤ 0 are ignored). @default 5 */
    readonly attempts?: number;
    /** Pause between attempts on the store clock, ms (values ≤ 0 are ignored). @default 50 */
    readonly backoffMs?: number;
}

/** Options of {@link OutboxStore}. */
export interface OutboxStoreOptions {
    /** A DynamoDB client (`new DynamoDBClient({...})`), or anything with its `send`. */
    readonly client: DynamoDbClientLike;
    /** The outbox table's name. */
    readonly tableName: string;
    /**
     * The clock for timestamps, the stale-claim threshold and the resolve backoff. The store reads it in whole
     * milliseconds (a fractional reading is floored, as Go's `UnixMilli()` does), so every time it writes is an
     * integer. @default systemClock
     */
    readonly clock?: Clock;
    /** Where the store logs (ids and counts, never payloads). @default silentLogger */
    readonly logger?: Logger;
    /** Where the store counts `OutboxClaimConflicts`, `DynamoDBOutboxClaimScanPages`, `DynamoDBOutboxClaimTruncated`. @default noopMetrics */
    readonly metrics?: MetricsSink;
    /** Seconds added to a terminal time to form the item's `ttl`. @default 3600 */
    readonly compactionGraceSeconds?: number;
    /**
     * A claim older than this is reclaimable by a token of the same version. Must exceed the fleet's clock skew.
     * `0` or less disables wall-clock reclaim (version-only). @default 30000
     */
    readonly staleClaimMs?: number;
    /** RecordIDIndex resolve retry on a key-cache miss. @default { attempts: 5, backoffMs: 50 } */
    readonly resolveRetry?: ResolveRetry;
    /** Entries of the record-id → key LRU. @default 100000 */
    readonly keyCacheSize?: number;
    /**
     * When `preflight` cannot describe the table (no `dynamodb:DescribeTable`, an emulator gap), warn and carry on
     * instead of refusing. For development only: production must let preflight enforce the schema. @default false
     */
    readonly schemaPreflightAdvisory?: boolean;
    /**
     * Make `preflight` refuse a table without a stream (`INVALID_CONFIG`). Off by default because GoBridge's exact
     * table has no stream and the store works without one (a polling relay drains it); set it where the
     * stream-triggered publisher is the delivery path. A stream without the new image is refused either way.
     * @default false
     */
    readonly requireStream?: boolean;
    /**
     * Receives the consumed capacity of every read and write; setting it makes the store send
     * `ReturnConsumedCapacity: "INDEXES"`. For benchmarks and cost dashboards. @default undefined (not requested)
     */
    readonly onConsumedCapacity?: (event: ConsumedCapacityEvent) => void;
    /**
     * ExpiryIndex partition key values this store's `persist` spreads expiring records over, 1 to 64. 1 writes
     * `has_expiry = "1"`, as GoBridge does; N > 1 writes `"1#0"` … `"1#<N-1>"`, chosen from the record id, and first
     * raises the table's expiry shards mark. `expire` queries `"1"` and every shard below the larger of this and the
     * table's mark, so changing it never strands a record. A GoBridge drainer's Expire queries `"1"` only.
     * @default 1
     */
    readonly expiryShards?: number;
    /**
     * On a global table, the records this store's claims, expiries and the relay's completions take: its own region's
     * (by origin stamp), and in the home region also those no region would take. See `OriginScope` in schema.ts.
     * @default undefined (every record: a single-region outbox, byte for byte today's requests)
     */
    readonly origin?: OriginScope;
}

/** The defaults of {@link OutboxStoreOptions} (reference §1). */
export const STORE_DEFAULTS = {
    /** 1 hour. */
    compactionGraceSeconds: 3600,
    /** 30 seconds. */
    staleClaimMs: 30_000,
    /** 5 attempts in total. */
    resolveAttempts: 5,
    /** 50 ms between attempts. */
    resolveBackoffMs: 50,
    /** 100 000 entries. */
    keyCacheSize: 100_000,
    /** The most items one ClaimIndex page asks for. */
    claimIndexPageLimit: 1000,
    /** The scan path keeps the oldest `3 × limit` candidates. */
    claimRetentionFactor: 3,
    /** Expire resume cursors kept before the map is reset. */
    maxExpiryCursors: 1024,
} as const;

/** Everything an operation needs: the resolved options and the per-instance state. */
export interface StoreContext {
    readonly client: DynamoDbClientLike;
    readonly tableName: string;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly metrics: MetricsSink;
    readonly compactionGraceSeconds: number;
    readonly staleClaimMs: number;
    readonly resolveAttempts: number;
    readonly resolveBackoffMs: number;
    readonly schemaPreflightAdvisory: boolean;
    readonly requireStream: boolean;
    readonly onConsumedCapacity: ((event: ConsumedCapacityEvent) => void) | undefined;
    readonly keyCache: KeyCache;
    /** Expire resume cursors by partition and ExpiryIndex value (in memory, per instance). */
    readonly expiryCursors: Map<string, Record<string, unknown>>;
    /** ExpiryIndex shards `persist` writes over. */
    readonly expiryShards: number;
    /** Whether this instance has raised the table's expiry shards mark to {@link StoreContext.expiryShards}. */
    readonly expiryShardsMark: { raised: boolean };
    /** The origin scope, or `undefined` for every record. */
    readonly origin: OriginScope | undefined;
}

const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;

function configError(message: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", message);
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value)) {
        throw configError(
            `OutboxStore option ${name} must be a finite number, got ${String(value)}; omit it for the default ${fallback}`,
        );
    }
    return value;
}

/**
 * The store's view of a clock: whole epoch milliseconds. A clock that reads `performance.timeOrigin +
 * performance.now()` returns fractions; written as `claimed_at` they would be refused by the codec on the next
 * read and wedge the partition.
 */
function wholeMillisecondClock(clock: Clock): Clock {
    return {
        now: () => {
            const ms = clock.now();
            if (typeof ms !== "number" || !Number.isFinite(ms)) {
                throw configError(
                    `OutboxStore option clock.now() returned ${String(ms)}; it must return epoch milliseconds as a finite number, e.g. Date.now()`,
                );
            }
            return Math.floor(ms);
        },
        sleep: (ms) => clock.sleep(ms),
    };
}

/**
 * Validate the options and build the store context.
 *
 * @throws OutboxError `INVALID_CONFIG` naming the option, the bad value and what is allowed.
 */
export function resolveStoreContext(options: OutboxStoreOptions): StoreContext {
    if (options === null || typeof options !== "object")
        throw configError("OutboxStore needs an options object with at least { client, tableName }");
    if (options.client === null || typeof options.client !== "object" || typeof options.client.send !== "function") {
        throw configError(
            "OutboxStore option client must be a DynamoDB client (an object with send(command)); pass new DynamoDBClient({...})",
        );
    }
    if (typeof options.tableName !== "string" || !TABLE_NAME.test(options.tableName)) {
        throw configError(
            `OutboxStore option tableName must be a DynamoDB table name (3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'), got ${JSON.stringify(options.tableName)}`,
        );
    }
    if (
        options.clock !== undefined &&
        (options.clock === null || typeof options.clock.now !== "function" || typeof options.clock.sleep !== "function")
    ) {
        throw configError(
            "OutboxStore option clock must be an object with now() (epoch ms) and sleep(ms); omit it for the system clock",
        );
    }
    const grace = nonNegative(
        "compactionGraceSeconds",
        options.compactionGraceSeconds,
        STORE_DEFAULTS.compactionGraceSeconds,
    );
    if (!Number.isSafeInteger(grace) || grace < 0) {
        throw configError(
            `OutboxStore option compactionGraceSeconds must be whole seconds ≥ 0 (GoBridge adds it to a time and keeps whole seconds), got ${grace}; e.g. 3600`,
        );
    }
    const keyCacheSize = nonNegative("keyCacheSize", options.keyCacheSize, STORE_DEFAULTS.keyCacheSize);
    if (!Number.isInteger(keyCacheSize) || keyCacheSize < 1) {
        throw configError(`OutboxStore option keyCacheSize must be a whole number ≥ 1, got ${keyCacheSize}`);
    }
    const attempts = nonNegative(
        "resolveRetry.attempts",
        options.resolveRetry?.attempts,
        STORE_DEFAULTS.resolveAttempts,
    );
    const backoff = nonNegative(
        "resolveRetry.backoffMs",
        options.resolveRetry?.backoffMs,
        STORE_DEFAULTS.resolveBackoffMs,
    );
    if (options.onConsumedCapacity !== undefined && typeof options.onConsumedCapacity !== "function") {
        throw configError("OutboxStore option onConsumedCapacity must be a function when given");
    }
    return {
        client: options.client,
        tableName: options.tableName,
        clock: wholeMillisecondClock(options.clock ?? systemClock),
        logger: options.logger ?? silentLogger,
        metrics: options.metrics ?? noopMetrics,
        compactionGraceSeconds: grace,
        staleClaimMs: nonNegative("staleClaimMs", options.staleClaimMs, STORE_DEFAULTS.staleClaimMs),
        // Values ≤ 0 are ignored, as in GoBridge's WithCompleteResolveRetry.
        resolveAttempts: attempts > 0 ? Math.floor(attempts) : STORE_DEFAULTS.resolveAttempts,
        resolveBackoffMs: backoff > 0 ? backoff : STORE_DEFAULTS.resolveBackoffMs,
        schemaPreflightAdvisory: options.schemaPreflightAdvisory === true,
        requireStream: options.requireStream === true,
        onConsumedCapacity: options.onConsumedCapacity,
        keyCache: new KeyCache(keyCacheSize),
        expiryCursors: new Map(),
        expiryShards: integerIn("OutboxStore", "expiryShards", options.expiryShards, HANDLER_LIMITS.expiryShards),
        expiryShardsMark: { raised: false },
        origin: checkOriginScope("OutboxStore", options.origin),
    };
}
