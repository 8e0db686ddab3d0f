/**
 * The environment contract between the Pulumi component and the Lambda code it ships. The component sets
 * these variables on the publisher and sweeper functions; the handlers read them once per cold start.
 * Missing or malformed values fail the cold start with an `INVALID_CONFIG` {@link OutboxError} that names the
 * variable, the bad value, what is allowed and the fix.
 *
 * @packageDocumentation
 */
import { isQueueUrl, QUEUE_URL_SHAPE, destinationArnRegion, queueUrlRegion } from "./destination/aws-resource-names";
import {
    DESTINATION_ARN_RULES,
    DESTINATION_KINDS,
    DESTINATION_SETTINGS,
    type DestinationKind,
    type DestinationSetting,
} from "./destination/kind";
import { OutboxError } from "./errors";
import { HANDLER_LIMITS, type IntegerLimit } from "./limits";
import { checkOriginScope } from "./record/origin";
import type { OriginScope } from "./schema";
import { sourceProblem } from "./record/message";

/** Environment variable names, shared by the component (writer) and the handlers (reader). */
export const ENV = {
    /** The outbox table's name. Required. */
    tableName: "OUTBOX_TABLE_NAME",
    /** The SNS topic ARN events are published to. Exactly one of this, `queueArn` and `eventBusArn` is set. */
    topicArn: "OUTBOX_TOPIC_ARN",
    /** The SQS queue ARN events are sent to. Exactly one of this, `topicArn` and `eventBusArn` is set. */
    queueArn: "OUTBOX_QUEUE_ARN",
    /** The EventBridge event bus ARN events are put on. Exactly one of this, `topicArn` and `queueArn` is set. */
    eventBusArn: "OUTBOX_EVENT_BUS_ARN",
    /** The EventBridge `Source` of every entry. Optional, default `dynamodb-outbox`; only with `eventBusArn`. */
    eventSource: "OUTBOX_EVENT_SOURCE",
    /**
     * The CloudEvents `source` (a URI-reference): when set, every event is sent as a structured-mode CloudEvents 1.0
     * JSON object. Optional, default unset (the outbox's own format).
     */
    cloudEventsSource: "OUTBOX_CLOUDEVENTS_SOURCE",
    /** The SQS DLQ URL for expired and poison records. Required. */
    dlqUrl: "OUTBOX_DLQ_URL",
    /** The source every message names (`outbox.source`, the handlers' `source`). Optional, default the table name. */
    source: "OUTBOX_SOURCE",
    /** `"true"` when the topic or queue is FIFO. Optional, default `"false"`. */
    fifo: "OUTBOX_FIFO",
    /** Seconds a terminal record stays before TTL deletes it. Optional, default 3600. */
    completionGraceSeconds: "OUTBOX_COMPLETION_GRACE_SECONDS",
    /** Seconds a pending record may wait before the sweeper publishes it. Optional, default 120. */
    sweepAfterSeconds: "OUTBOX_SWEEP_AFTER_SECONDS",
    /** Publish attempts before a permanent error sends the record to the DLQ. Optional, default 3. */
    maxPublishAttempts: "OUTBOX_MAX_PUBLISH_ATTEMPTS",
    /** ExpiryIndex shards the writers use; the sweeper's expiry step reads at least that many. Optional, default 1. */
    expiryShards: "OUTBOX_EXPIRY_SHARDS",
    /** Partitions the sweeper drains in one run, from its cursor. Optional, default 200. */
    maxPartitionsPerRun: "OUTBOX_MAX_PARTITIONS_PER_RUN",
    /** The fencing version of both functions' claims, 1 to 2^53 - 1. Optional, default 1. */
    claimVersion: "OUTBOX_CLAIM_VERSION",
    /**
     * `"false"` turns off the check that the event bus exists (`checkEventBus`). Optional, default `"true"`; only
     * with `OUTBOX_EVENT_BUS_ARN`.
     */
    checkEventBus: "OUTBOX_CHECK_EVENT_BUS",
    /**
     * On a global table, this region's name: with it, the handlers take only the records of their origin scope
     * (`OriginScope` in schema.ts), and {@link ENV}.otherRegions and {@link ENV}.homeRegion are required. Optional;
     * unset, a single-region outbox.
     */
    originRegion: "OUTBOX_ORIGIN_REGION",
    /** The table's other regions, comma-separated (`us-west-2,eu-west-1`); only with `OUTBOX_ORIGIN_REGION`. */
    otherRegions: "OUTBOX_OTHER_REGIONS",
    /** `"true"` in the one home region (which also takes unstamped records), else `"false"`; only with `OUTBOX_ORIGIN_REGION`. */
    homeRegion: "OUTBOX_HOME_REGION",
} as const;

/** Defaults for the optional variables in {@link ENV}; the numeric ones are {@link HANDLER_LIMITS}' fallbacks. */
export const ENV_DEFAULTS = {
    fifo: false,
    completionGraceSeconds: HANDLER_LIMITS.completionGraceSeconds.fallback,
    sweepAfterSeconds: HANDLER_LIMITS.sweepAfterSeconds.fallback,
    maxPublishAttempts: HANDLER_LIMITS.maxPublishAttempts.fallback,
    expiryShards: HANDLER_LIMITS.expiryShards.fallback,
    maxPartitionsPerRun: HANDLER_LIMITS.maxPartitionsPerRun.fallback,
    claimVersion: HANDLER_LIMITS.claimVersion.fallback,
    checkEventBus: true,
} as const;

/** The handler configuration read from the environment. */
export interface HandlerEnvironment {
    /** The outbox table's name. */
    readonly tableName: string;
    /** The destination: the `PublisherConfig` setting its variable stands for, and its ARN. */
    readonly destination: { readonly setting: DestinationSetting; readonly arn: string };
    /** The EventBridge `Source` (`OUTBOX_EVENT_SOURCE`), when set. */
    readonly eventSource?: string;
    /**
     * The CloudEvents `source` (`OUTBOX_CLOUDEVENTS_SOURCE`), when set: events are sent as CloudEvents. Checked where
     * the handler builds its destination (`createDestination`), as `OUTBOX_EVENT_SOURCE` is. @default undefined
     */
    readonly cloudEventsSource?: string;
    /** The SQS DLQ URL. */
    readonly dlqUrl: string;
    /** The source every message names (`OUTBOX_SOURCE`), when set; else the handlers take the table name. @default undefined */
    readonly source?: string;
    /** The origin scope on a global table (`OUTBOX_ORIGIN_REGION` and the two beside it). @default undefined */
    readonly origin?: OriginScope;
    /** Whether the topic or queue is FIFO. */
    readonly fifo: boolean;
    /** Seconds a terminal record stays before TTL deletes it. */
    readonly completionGraceSeconds: number;
    /** Seconds a pending record may wait before the sweeper publishes it. */
    readonly sweepAfterSeconds: number;
    /** Publish attempts before a permanent error sends the record to the DLQ. */
    readonly maxPublishAttempts: number;
    /** ExpiryIndex shards the writers use. */
    readonly expiryShards: number;
    /** Partitions the sweeper drains in one run. */
    readonly maxPartitionsPerRun: number;
    /** The fencing version of both functions' claims. */
    readonly claimVersion: bigint;
    /** Whether to check that the event bus exists; `undefined` when the variable is unset. */
    readonly checkEventBus?: boolean;
}

function required(env: Readonly<Record<string, string | undefined>>, name: string, what: string): string {
    const value = env[name];
    if (value === undefined || value.trim() === "") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${name} (${what}) is missing or empty; set it on the function (the Outbox component does this for you)`,
            {
                context: { variable: name },
            },
        );
    }
    return value.trim();
}

const DECIMAL_INTEGER = /^-?[0-9]+$/;
/**
 * The variable that names a destination of `kind`: `OUTBOX_TOPIC_ARN`, `OUTBOX_QUEUE_ARN` or `OUTBOX_EVENT_BUS_ARN`
 * (the {@link ENV} entry of its `PublisherConfig` setting). The component sets it; the handlers read it.
 *
 * @param kind - The destination's kind.
 */
export function destinationVariable(kind: DestinationKind): string {
    return ENV[DESTINATION_SETTINGS[kind]];
}

/**
 * The destination: exactly one of the three variables, its shape, and its region against the function's
 * (`AWS_REGION`, the region of the SDK clients the handlers build), since a destination of another region fails
 * every record (SNS: `InvalidParameter: TopicArn`). On a global table (`scope`, from `OUTBOX_ORIGIN_REGION`) a topic
 * or a bus may be in one of the table's other regions (the home region's, seen from a replica region): the handlers'
 * client for it then takes the ARN's region.
 */
function destination(
    env: Readonly<Record<string, string | undefined>>,
    scope: OriginScope | undefined,
): HandlerEnvironment["destination"] {
    const all = Object.keys(DESTINATION_SETTINGS) as DestinationKind[];
    const kinds = all.filter((k) => (env[destinationVariable(k)] ?? "").trim() !== "");
    const names = all.map(destinationVariable);
    if (kinds.length !== 1) {
        const set = kinds.map(destinationVariable);
        const found =
            set.length === 0
                ? `none of the environment variables ${names.join(", ")} is set`
                : `the environment variables ${set.join(" and ")} are ${set.length === 2 ? "both" : "all"} set`;
        throw new OutboxError(
            "INVALID_CONFIG",
            `${found}; exactly one of them names the destination (an SNS topic, an SQS queue or an EventBridge bus); set exactly one (the Outbox component does this for you)`,
            { context: { variable: (set.length === 0 ? names : set).join(", ") } },
        );
    }
    const kind = kinds[0]!;
    const variable = destinationVariable(kind);
    const rule = DESTINATION_ARN_RULES[kind];
    const value = env[variable]!.trim();
    if (!rule.valid(value)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${variable} is ${JSON.stringify(value)}; expected ${rule.what}, ${rule.shape}; set it to the ${rule.unit}'s ARN (the Outbox component does this for you)`,
            { context: { variable, value } },
        );
    }
    const region = env.AWS_REGION;
    const arnRegion = destinationArnRegion(value);
    // On a global table a replica region's relay publishes to the home region's topic or bus, through a client of
    // the ARN's region (relay/lambda.ts); the home region is one of the scope's other regions, and no region outside
    // the table is ever one the component passes. A queue's SQS client is the DLQ's, in this region.
    const elsewhere =
        scope !== undefined && kind !== DESTINATION_KINDS.sqs ? scope.otherRegions.filter((r) => r !== region) : [];
    if (
        region !== undefined &&
        region !== "" &&
        arnRegion !== region &&
        !(arnRegion !== undefined && elsewhere.includes(arnRegion))
    ) {
        const others =
            elsewhere.length === 0
                ? ""
                : `, and the table's other regions (${ENV.otherRegions}) are ${elsewhere.join(", ")}`;
        const fix = elsewhere.length === 0 ? region : `one of ${[region, ...elsewhere].join(", ")}`;
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${variable} is ${JSON.stringify(value)}: the ${rule.unit} is in ${arnRegion}, but the function runs in ${region} (AWS_REGION)${others}; ${rule.elsewhere}; point it at a ${rule.unit} in ${fix}`,
            { context: { variable, value } },
        );
    }
    return { setting: DESTINATION_SETTINGS[kind], arn: value };
}

/** The DLQ URL: its shape, and the region its AWS host names against the function's (`AWS_REGION`). */
function dlqUrl(env: Readonly<Record<string, string | undefined>>): string {
    const value = required(env, ENV.dlqUrl, "the SQS dead-letter queue URL");
    if (!isQueueUrl(value)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${ENV.dlqUrl} is ${JSON.stringify(value)}; expected an SQS queue URL, ${QUEUE_URL_SHAPE}; set it to the queue's URL, not its ARN or name (the Outbox component does this for you)`,
            {
                context: { variable: ENV.dlqUrl, value },
            },
        );
    }
    const region = env.AWS_REGION;
    const queueRegion = queueUrlRegion(value);
    if (region !== undefined && region !== "" && queueRegion !== undefined && queueRegion !== region) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${ENV.dlqUrl} is ${JSON.stringify(value)}: the queue is in ${queueRegion}, but the function runs in ${region} (AWS_REGION), so no record could be dead-lettered; point it at a queue in ${region}`,
            { context: { variable: ENV.dlqUrl, value } },
        );
    }
    return value;
}

function positiveInteger(env: Readonly<Record<string, string | undefined>>, name: string, limit: IntegerLimit): number {
    const { min, max, fallback } = limit;
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    // Decimal digits only, as the component writes them: Number() would also take "0x3", "1e1" or "0b11".
    const value = DECIMAL_INTEGER.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
    if (!Number.isInteger(value) || value < min || value > max) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${name} is ${JSON.stringify(raw)}; expected an integer from ${min} to ${max} in decimal digits; unset it to use the default ${fallback}`,
            {
                context: { variable: name, value: raw },
            },
        );
    }
    return value;
}

function flag(env: Readonly<Record<string, string | undefined>>, name: string, fallback: boolean): boolean {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    if (raw === "true") return true;
    if (raw === "false") return false;
    throw new OutboxError(
        "INVALID_CONFIG",
        `environment variable ${name} is ${JSON.stringify(raw)}; expected "true" or "false"`,
        {
            context: { variable: name, value: raw },
        },
    );
}

/**
 * The fencing version (`OUTBOX_CLAIM_VERSION`): an integer of {@link HANDLER_LIMITS}' range, in decimal digits.
 *
 * @throws OutboxError `INVALID_CONFIG` naming the variable, the value, the range and the fix.
 */
function claimVersion(env: Readonly<Record<string, string | undefined>>): bigint {
    const { min, max, fallback } = HANDLER_LIMITS.claimVersion;
    const raw = env[ENV.claimVersion];
    if (raw === undefined || raw.trim() === "") return BigInt(fallback);
    const value = DECIMAL_INTEGER.test(raw.trim()) ? BigInt(raw.trim()) : undefined;
    if (value === undefined || value < BigInt(min) || value > BigInt(max))
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${ENV.claimVersion} is ${JSON.stringify(raw)}; expected the fencing version of the relay's claims, an integer from ${min} to ${max} in decimal digits, at least the highest version any claimer of the table uses; set it so on every publisher and sweeper of the table (the component's claimVersion arg), or unset it for the default ${fallback}`,
            { context: { variable: ENV.claimVersion, value: raw } },
        );
    return value;
}

/** `OUTBOX_CHECK_EVENT_BUS`, only with a bus: `undefined` when unset. */
function checkEventBus(
    env: Readonly<Record<string, string | undefined>>,
    destination: HandlerEnvironment["destination"],
): boolean | undefined {
    const raw = env[ENV.checkEventBus];
    if (raw === undefined || raw.trim() === "") return undefined;
    const value = flag(env, ENV.checkEventBus, ENV_DEFAULTS.checkEventBus);
    if (destination.setting !== DESTINATION_SETTINGS.eventbridge)
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${ENV.checkEventBus} is ${JSON.stringify(raw)}, but the destination is not an EventBridge bus (${ENV.eventBusArn} is not set); it turns the bus's existence check on or off only; unset it`,
            { context: { variable: ENV.checkEventBus, value: raw } },
        );
    return value;
}

/** The source (`OUTBOX_SOURCE`), when set: checked as the handlers check their `source`. */
function source(env: Readonly<Record<string, string | undefined>>): { source?: string } {
    const raw = env[ENV.source];
    if (raw === undefined || raw.trim() === "") return {};
    const value = raw.trim();
    const problem = sourceProblem(value);
    if (problem !== undefined)
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${ENV.source} is ${JSON.stringify(raw)}; it ${problem}; unset it to use the table name`,
            { context: { variable: ENV.source, value: raw } },
        );
    return { source: value };
}

/** The origin scope (`OUTBOX_ORIGIN_REGION`, `OUTBOX_OTHER_REGIONS`, `OUTBOX_HOME_REGION`), when the region is set. */
function origin(env: Readonly<Record<string, string | undefined>>): { origin?: OriginScope } {
    const region = (env[ENV.originRegion] ?? "").trim();
    if (region === "") {
        for (const name of [ENV.otherRegions, ENV.homeRegion])
            if ((env[name] ?? "").trim() !== "")
                throw new OutboxError(
                    "INVALID_CONFIG",
                    `environment variable ${name} is set but ${ENV.originRegion} is not; set ${ENV.originRegion} to this region's name, or unset ${name} for a single-region outbox`,
                    { context: { variable: name } },
                );
        return {};
    }
    const home = env[ENV.homeRegion];
    if (home !== "true" && home !== "false")
        throw new OutboxError(
            "INVALID_CONFIG",
            `environment variable ${ENV.homeRegion} is ${JSON.stringify(home)}; with ${ENV.originRegion} set it must be "true" (the one home region, which also delivers unstamped records) or "false"`,
            { context: { variable: ENV.homeRegion, value: home } },
        );
    const others = (env[ENV.otherRegions] ?? "")
        .split(",")
        .map((r) => r.trim())
        .filter((r) => r !== "");
    const scope = checkOriginScope(`environment (${ENV.originRegion})`, {
        region,
        otherRegions: others,
        home: home === "true",
    });
    return scope === undefined ? {} : { origin: scope };
}

/** Read and validate the handler configuration from `env`. */
export function readHandlerEnvironment(env: Readonly<Record<string, string | undefined>>): HandlerEnvironment {
    const scope = origin(env);
    const where = destination(env, scope.origin);
    const check = checkEventBus(env, where);
    return {
        tableName: required(env, ENV.tableName, "the outbox table name"),
        destination: where,
        ...((env[ENV.eventSource] ?? "").trim() !== "" ? { eventSource: env[ENV.eventSource]!.trim() } : {}),
        ...((env[ENV.cloudEventsSource] ?? "").trim() !== ""
            ? { cloudEventsSource: env[ENV.cloudEventsSource]!.trim() }
            : {}),
        dlqUrl: dlqUrl(env),
        ...source(env),
        fifo: flag(env, ENV.fifo, ENV_DEFAULTS.fifo),
        completionGraceSeconds: positiveInteger(env, ENV.completionGraceSeconds, HANDLER_LIMITS.completionGraceSeconds),
        sweepAfterSeconds: positiveInteger(env, ENV.sweepAfterSeconds, HANDLER_LIMITS.sweepAfterSeconds),
        maxPublishAttempts: positiveInteger(env, ENV.maxPublishAttempts, HANDLER_LIMITS.maxPublishAttempts),
        expiryShards: positiveInteger(env, ENV.expiryShards, HANDLER_LIMITS.expiryShards),
        maxPartitionsPerRun: positiveInteger(env, ENV.maxPartitionsPerRun, HANDLER_LIMITS.maxPartitionsPerRun),
        claimVersion: claimVersion(env),
        ...(check !== undefined ? { checkEventBus: check } : {}),
        ...scope,
    };
}
