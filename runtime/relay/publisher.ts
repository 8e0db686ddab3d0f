/**
 * The stream publisher: the Lambda handler behind the table's event source mapping. It publishes the outbox
 * records of each stream batch to the destination (an SNS topic, an SQS queue or an EventBridge bus) and completes
 * them, and reports the first record it could not deliver so Lambda retries from there: what one batch goes through
 * is `runtime/relay/stream-batch.ts`.
 *
 * This module holds the handler's wiring, shared with the sweeper: the configuration, validated and defaulted
 * once per cold start ({@link resolveDeliveryConfig}), the check that the destination and the DLQ are in their
 * clients' regions, and what each invocation starts with ({@link startInvocation}).
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import { isQueueUrl, QUEUE_URL_SHAPE, queueUrlRegion } from "../destination/aws-resource-names";
import type { ClaimingStore } from "./claiming-store";
import type { ClientLike, DeliveryContext } from "./delivery";
import {
    createDestination,
    destinationClientSetting,
    destinationRegionProblem,
    type DestinationConfig,
} from "../destination/create";
import { BUS_CHECK_PERMISSION, busCheckEvery, checkBusExists } from "../destination/bus-check";
import type { Destination } from "../destination/destination";
import { DESTINATION_KINDS } from "../destination/kind";
import { createEmfMetrics, type EmfMetrics, type LineWriter } from "../observability/emf";
import { OutboxError } from "../errors";
import { integerIn } from "../integer-setting";
import { HANDLER_LIMITS } from "../limits";
import { sourceProblem } from "../record/message";
import { HANDLER_FUNCTIONS, handlerDimensions, type HandlerFunction } from "../observability/metric-catalog";
import { silentLogger, systemClock, type Clock, type Logger, type MetricsSink } from "../ports";
import { checkOriginScope } from "../record/origin";
import type { OriginScope } from "../schema";
import { OutboxStore } from "../store";
import { processStreamEvent, type PublisherSettings, type StreamBatchResponse } from "./stream-batch";
import { timeLeftIn } from "../time-left";

// One batch's walk lives in its own module; this one still exports it, as it always has.
export {
    processStreamEvent,
    type PublishOutcome,
    type PublisherSettings,
    type StreamBatchResponse,
} from "./stream-batch";

/** The Lambda context fields the handlers read. */
export interface HandlerContext {
    /** The invocation's request id; part of the claim owner id. */
    readonly awsRequestId?: string;
    /** Milliseconds left in this invocation; the handler stops starting work when fewer than `reserveMs` remain. */
    getRemainingTimeInMillis?(): number;
}

/** A stream publisher handler. */
export type PublisherHandler = (event: unknown, context?: HandlerContext) => Promise<StreamBatchResponse>;

/**
 * Configuration of {@link createPublisher}. The destination ({@link DestinationConfig}) is exactly one of `topicArn`
 * (an SNS topic, with `sns`), `queueArn` (an SQS queue, standard or FIFO, sent with `sqs`, which also serves the DLQ)
 * and `eventBusArn` (an EventBridge bus, with `eventBridge`).
 */
export interface PublisherConfig extends DestinationConfig {
    /** DynamoDB client for the outbox table (a `DynamoDBClient`, or anything with its `send`). */
    readonly dynamodb: ClientLike;
    /** The outbox table. */
    readonly tableName: string;
    /**
     * The outbox's name on every message it publishes (the `outbox.source` attribute; `detail.outbox.source` on a
     * bus). The inbox keys its markers on (consumer, source, outbox id), so two outboxes feeding one consumer never
     * drop each other's events when their ids collide. 1–255 letters, digits, `_`, `-`, `.` or `:`. Keep it stable,
     * and the same on the publisher and the sweeper: a message published under another source is a different event
     * to the inbox. Give it when two outboxes feeding one consumer have tables of the same name (in two accounts or
     * regions that are not one global table).
     * @default tableName
     */
    readonly source?: string;
    /** The DLQ URL for expired and undeliverable records. */
    readonly dlqUrl: string;
    /**
     * On a global table, which records this region's relay takes by their origin stamp: its own region's, and in the
     * home region also the unstamped ones and those stamped with none of the table's regions (`OriginScope` in
     * schema.ts). Give the publisher and the sweeper of one region the same scope, and the mapping the filters
     * `streamFilterPatterns(scope)` gives. See docs/runtime.md, "Global tables".
     * @default undefined (every record: a single-region outbox)
     */
    readonly origin?: OriginScope;
    /** Seconds a completed or expired record stays before TTL deletes it. @default 3600 */
    readonly completionGraceSeconds?: number;
    /** Permanent publish failures of one record before it goes to the DLQ (1–100). @default 3 */
    readonly maxPublishAttempts?: number;
    /** Records per claim on the keyed path (1–1000). @default 100 */
    readonly claimLimit?: number;
    /**
     * The fencing version of this function's claims. Every publisher and sweeper of a table uses the same version,
     * so they never steal each other's live claims; a crashed invocation's claims come back after the store's
     * stale-claim window. It must be at least the highest version any other claimer of the table uses (a GoBridge
     * relay's lease version): a claim below a partition's fence is refused, and that partition is reported
     * (`runtime/relay/fenced-partition.ts`) instead of delivered.
     * @default 1n
     */
    readonly claimVersion?: bigint;
    /**
     * With `eventBusArn`: whether to confirm with `DescribeEventBus` that the bus exists before putting events on it
     * (before the first invocation's, then at most once a minute while warm; `runtime/destination/bus-check.ts`).
     * EventBridge accepts and drops events put on a bus that does not exist, so with `false` a missing or deleted bus
     * loses every event put on it while the records are completed. Set `false` only when the role cannot be granted
     * `events:DescribeEventBus` on the bus; every cold start then logs a warning saying so. Only with a bus.
     * @default true
     */
    readonly checkEventBus?: boolean;
    /**
     * The store for the claim path. The default store's counters (`STORE_METRICS`) go into each invocation's EMF
     * line, without their `partition` tag (see {@link StoreMetricsRelay}); an injected store counts into its own sink.
     * @default new OutboxStore({ client: dynamodb, tableName, clock, logger, metrics: the invocation's, compactionGraceSeconds })
     */
    readonly store?: ClaimingStore;
    /** The clock. @default systemClock */
    readonly clock?: Clock;
    /** Logs: ids and counts, never payloads. @default silentLogger */
    readonly logger?: Logger;
    /** Where the EMF metric line of each invocation goes. @default stdout */
    readonly writeMetrics?: LineWriter;
    /**
     * Stop starting work when fewer than this many ms of the invocation remain: the publisher reports the next
     * record as failed (Lambda retries from it) instead of being cut off mid-record.
     * @default 5000 (the sweeper's default is 10000)
     */
    readonly reserveMs?: number;
}

/** {@link PublisherSettings} before an invocation: everything but the metrics. */
export interface ResolvedDeliveryConfig extends Omit<PublisherSettings, "ctx"> {
    /** The delivery context without metrics (each invocation adds its own). */
    readonly base: Omit<DeliveryContext, "metrics">;
    /** What the default store counts into; {@link startInvocation} points it at the invocation's metrics. */
    readonly storeMetrics: StoreMetricsRelay;
    /**
     * The check, started at construction, that the destination and the DLQ are in their clients' regions (read from the
     * SDK clients' config, which resolves asynchronously): the `INVALID_CONFIG` error to throw from every
     * invocation, or `undefined`. It never rejects.
     */
    readonly regionCheck: Promise<OutboxError | undefined>;
    /**
     * The check that the destination exists where its service would not say so: an EventBridge bus (PutEvents drops
     * events for a bus that does not exist; `runtime/destination/bus-check.ts`). Resolves to the error to throw from
     * this invocation (`INVALID_CONFIG` for a bus missing or not to be described, a transient one for no answer), or
     * `undefined`. Asked on the first invocation, and again once its answer is a minute old.
     */
    readonly destinationCheck: () => Promise<OutboxError | undefined>;
}

/**
 * The store's {@link MetricsSink} for a handler: the store is built once per cold start, metrics once per
 * invocation, so the store counts into this relay and the relay adds each count to the invocation that is running
 * (Lambda runs one invocation at a time per instance). Counts made while no invocation is attached are dropped.
 *
 * The store tags its counters with `partition`; the relay drops the tag, so the EMF metric carries only the
 * handler's dimensions (`Function`, `Table`): a dimension per partition would be a custom metric per aggregate,
 * a CloudWatch cost trap. The store logs the partition (`partition_key`) on the line of each such event instead.
 */
export interface StoreMetricsRelay extends MetricsSink {
    /** Send later counts to `metrics` (an invocation's), or drop them (`undefined`). */
    attach(metrics: EmfMetrics | undefined): void;
}

/** Create a {@link StoreMetricsRelay} with nothing attached. */
export function createStoreMetricsRelay(): StoreMetricsRelay {
    let current: EmfMetrics | undefined;
    return {
        attach(metrics) {
            current = metrics;
        },
        count(name, value) {
            current?.count(name, value);
        },
    };
}

function requireText(name: string, value: unknown): void {
    if (typeof value !== "string" || value.trim() === "") {
        throw new OutboxError("INVALID_CONFIG", `${name} must be a non-empty string, got ${JSON.stringify(value)}`);
    }
}

/** A client's configured region: SDK v3 clients keep it as a provider in `config.region`. */
async function clientRegion(client: ClientLike): Promise<string | undefined> {
    const region = (client as { config?: { region?: unknown } }).config?.region;
    try {
        const value: unknown = typeof region === "function" ? await (region as () => unknown)() : region;
        return typeof value === "string" && value !== "" ? value : undefined;
    } catch {
        // No region configured: the client's own calls will say so.
        return undefined;
    }
}

/**
 * Whether the destination and the DLQ are in their clients' regions. SNS refuses a topic of another region
 * (`InvalidParameter: TopicArn`) for every record, SQS and EventBridge a queue or bus they cannot find, and a DLQ the
 * SQS client cannot reach leaves every expired or refused record pending.
 */
async function regionProblem(
    who: string,
    config: PublisherConfig,
    destination: Destination,
): Promise<OutboxError | undefined> {
    const problem = destinationRegionProblem(
        who,
        destination,
        await clientRegion(config[destinationClientSetting(destination.kind)] as ClientLike),
    );
    if (problem !== undefined) return problem;
    const queueRegion = queueUrlRegion(config.dlqUrl);
    const sqsRegion = await clientRegion(config.sqs);
    if (queueRegion !== undefined && sqsRegion !== undefined && queueRegion !== sqsRegion) {
        return new OutboxError(
            "INVALID_CONFIG",
            `${who}: dlqUrl ${config.dlqUrl} is in region ${queueRegion}, but the SQS client's region is ${sqsRegion}; no record could be dead-lettered; point dlqUrl at the queue in ${sqsRegion}, or give the handler an SQS client of ${queueRegion}`,
            { context: { dlqUrl: config.dlqUrl, region: sqsRegion } },
        );
    }
    return undefined;
}

/**
 * Throw the deployment checks' error, if any. A fault of the deployment is logged at error: every invocation of a
 * handler whose destination or DLQ is in another region than its client, or whose bus does not exist or may not be
 * described, fails the same way, so the shard holds (and a sweep fails) until the deployment is fixed. A check
 * that got no answer is logged at warn: this invocation fails as transient, and the next one asks again.
 *
 * @param resolved - The handler's settings.
 */
export async function assertDeployment(resolved: ResolvedDeliveryConfig): Promise<void> {
    const problem = (await resolved.regionCheck) ?? (await resolved.destinationCheck());
    if (problem === undefined) return;
    if (problem.transient)
        resolved.base.logger.warn(
            "outbox handler: the destination could not be checked; this invocation fails and the next one checks again",
            { code: problem.code, reason: problem.message, ...problem.context },
        );
    else
        resolved.base.logger.error(
            "outbox handler: the destination or the DLQ cannot be used as configured; every invocation fails until the deployment is fixed",
            { code: problem.code, reason: problem.message, ...problem.context },
        );
    throw problem;
}

function requireClient(name: string, value: unknown): void {
    if (typeof (value as ClientLike | undefined)?.send !== "function") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${name} must be an AWS SDK v3 client (an object with send), got ${value === undefined ? "undefined" : typeof value}`,
        );
    }
}

/**
 * The DLQ URL has its shape.
 *
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the bad value and the fix.
 */
function checkDlqUrl(config: PublisherConfig, who: string): void {
    if (!isQueueUrl(config.dlqUrl)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: dlqUrl is ${JSON.stringify(config.dlqUrl)}; expected an SQS queue URL, ${QUEUE_URL_SHAPE}; pass the queue's url (not its ARN or name)`,
            {
                context: { dlqUrl: config.dlqUrl },
            },
        );
    }
}

/**
 * The source the handler stamps: `source`, else the table name (every DynamoDB table name is a source).
 *
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the bad value, what is allowed and the fix.
 */
function checkedSource(config: PublisherConfig, who: string): string {
    const source = config.source ?? config.tableName;
    const problem = sourceProblem(source);
    if (problem === undefined) return source;
    throw new OutboxError(
        "INVALID_CONFIG",
        `${who}: source is ${JSON.stringify(source)}; it ${problem}; omit it for the table name, or name the outbox, e.g. "orders"`,
        { context: { source: String(source) } },
    );
}

/**
 * Validate a {@link PublisherConfig} and fill its defaults. Shared with the sweeper.
 *
 * @param config - The handler configuration.
 * @param who - The factory's name, for error messages (`createPublisher`, `createSweeper`).
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the bad value and what is allowed.
 */
export function resolveDeliveryConfig(config: PublisherConfig, who: string): ResolvedDeliveryConfig {
    if (config === null || typeof config !== "object")
        throw new OutboxError("INVALID_CONFIG", `${who}: config must be an object`);
    requireClient(`${who}: dynamodb`, config.dynamodb);
    requireClient(`${who}: sqs`, config.sqs);
    requireText(`${who}: tableName`, config.tableName);
    requireText(`${who}: dlqUrl`, config.dlqUrl);
    const source = checkedSource(config, who);
    const destination = createDestination(config, who, source);
    checkDlqUrl(config, who);
    const clock = config.clock ?? systemClock;
    const logger = config.logger ?? silentLogger;
    const completionGraceSeconds = integerIn(
        who,
        "completionGraceSeconds",
        config.completionGraceSeconds,
        HANDLER_LIMITS.completionGraceSeconds,
    );
    const claimVersion = config.claimVersion ?? 1n;
    const origin = checkOriginScope(who, config.origin);
    const storeMetrics = createStoreMetricsRelay();
    if (typeof claimVersion !== "bigint" || claimVersion < 1n)
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: claimVersion must be a bigint ≥ 1n, got ${String(claimVersion)}`,
        );
    return {
        base: {
            dynamodb: config.dynamodb,
            destination,
            sqs: config.sqs,
            tableName: config.tableName,
            source,
            dlqUrl: config.dlqUrl,
            completionGraceSeconds,
            maxPublishAttempts: integerIn(
                who,
                "maxPublishAttempts",
                config.maxPublishAttempts,
                HANDLER_LIMITS.maxPublishAttempts,
            ),
            clock,
            logger,
            ...(origin !== undefined ? { origin } : {}),
        },
        store:
            config.store ??
            new OutboxStore({
                client: config.dynamodb,
                tableName: config.tableName,
                clock,
                logger,
                metrics: storeMetrics,
                compactionGraceSeconds: completionGraceSeconds,
                ...(origin !== undefined ? { origin } : {}),
            }),
        storeMetrics,
        claimLimit: integerIn(who, "claimLimit", config.claimLimit, HANDLER_LIMITS.claimLimit),
        reserveMs: integerIn(
            who,
            "reserveMs",
            config.reserveMs,
            who === "createSweeper" ? HANDLER_LIMITS.sweeperReserveMs : HANDLER_LIMITS.publisherReserveMs,
        ),
        claimVersion,
        regionCheck: regionProblem(who, config, destination).catch(() => undefined),
        destinationCheck: destinationCheck(who, config, destination, clock, logger),
    };
}

/**
 * The check that the destination exists where its service would not say so: a bus's, unless `checkEventBus` is
 * `false` (logged at warn, once per cold start).
 *
 * @throws OutboxError `INVALID_CONFIG` when `checkEventBus` is not a boolean, or is set without a bus.
 */
function destinationCheck(
    who: string,
    config: PublisherConfig,
    destination: Destination,
    clock: Clock,
    logger: Logger,
): () => Promise<OutboxError | undefined> {
    const check = config.checkEventBus;
    if (check !== undefined && typeof check !== "boolean")
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: checkEventBus must be true or false, got ${JSON.stringify(check)}; omit it to keep the check on`,
            { context: { checkEventBus: String(check) } },
        );
    if (destination.kind !== DESTINATION_KINDS.eventBridge) {
        if (check !== undefined)
            throw new OutboxError(
                "INVALID_CONFIG",
                `${who}: checkEventBus is set, but the destination is not an EventBridge bus; it turns the bus's existence check on or off only; remove it`,
                { context: { checkEventBus: String(check) } },
            );
        return async () => undefined;
    }
    if (check === false) {
        logger.warn(
            `${who}: the event bus check is off (checkEventBus: false): nothing confirms that the bus exists, and EventBridge accepts and drops events put on a bus that does not, so a missing or deleted bus loses them while their records are completed; grant ${BUS_CHECK_PERMISSION} on the bus and turn the check back on`,
            { eventBusArn: destination.arn },
        );
        return async () => undefined;
    }
    const eventBridge = config.eventBridge as ClientLike;
    return busCheckEvery(() => checkBusExists(who, eventBridge, destination.arn), clock);
}

/**
 * What each invocation of a handler starts with: its own metrics (the caller flushes them as EMF lines; the
 * default store's counters are attached to them too) and the milliseconds it has left. Shared with the sweeper.
 *
 * @param resolved - The handler's settings, for the table name and the clock.
 * @param writeMetrics - Where the EMF line goes. @default stdout
 * @param fn - The `Function` dimension.
 * @param context - The Lambda context; without one, time is unlimited.
 */
export function startInvocation(
    resolved: ResolvedDeliveryConfig,
    writeMetrics: LineWriter | undefined,
    fn: HandlerFunction,
    context: HandlerContext | undefined,
): { metrics: EmfMetrics; timeLeft: () => number } {
    const metrics = createEmfMetrics({
        dimensions: handlerDimensions(fn, resolved.base.tableName),
        now: () => resolved.base.clock.now(),
        ...(writeMetrics !== undefined ? { write: writeMetrics } : {}),
    });
    resolved.storeMetrics.attach(metrics);
    return { metrics, timeLeft: timeLeftIn(context) };
}

/**
 * Create the stream publisher handler. Clients and the store are built by the caller once per cold start;
 * each invocation gets its own metrics, flushed as one EMF line.
 *
 * @param config - Clients, names and limits.
 * @returns `(event, context?) => Promise<{ batchItemFailures }>` for a Lambda function subscribed to the table's stream with `ReportBatchItemFailures`.
 * @throws OutboxError `INVALID_CONFIG` when the config is incomplete.
 * @example
 * export const handler = createPublisher({
 *   dynamodb: new DynamoDBClient({}), sns: new SNSClient({}), sqs: new SQSClient({}),
 *   tableName: process.env.OUTBOX_TABLE_NAME!, topicArn: process.env.OUTBOX_TOPIC_ARN!, dlqUrl: process.env.OUTBOX_DLQ_URL!,
 * });
 */
export function createPublisher(config: PublisherConfig): PublisherHandler {
    const resolved = resolveDeliveryConfig(config, "createPublisher");
    return async (event, context) => {
        await assertDeployment(resolved);
        const { metrics, timeLeft } = startInvocation(
            resolved,
            config.writeMetrics,
            HANDLER_FUNCTIONS.publisher,
            context,
        );
        try {
            const outcome = await processStreamEvent(
                { ...resolved, ctx: { ...resolved.base, metrics } },
                event,
                context?.awsRequestId ?? randomUUID(),
                timeLeft,
            );
            return outcome.response;
        } finally {
            metrics.flush();
        }
    };
}
