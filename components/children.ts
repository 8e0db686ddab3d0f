/**
 * The args of each child resource of the {@link Outbox}, as functions of the settings and of the other
 * children's outputs. Key attributes, index shapes, TTL, stream view and filter all come from
 * `runtime/schema.ts`; nothing here spells them out.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import {
    ATTRIBUTE_DEFINITIONS,
    GLOBAL_SECONDARY_INDEXES,
    OUTBOX_TABLE_TAG,
    PRIMARY_KEY,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
    streamFilterPatternJson,
    streamFilterPatterns,
    type OriginScope,
} from "../runtime/schema";
import { destinationVariable, ENV } from "../runtime/config";
import type { DestinationKind } from "../runtime/destination/kind";
import { OutboxError } from "../runtime/errors";
import { OUTBOX_DEFAULTS } from "./defaults";
import type { OutboxTableIndex } from "./args";
import type { OutboxSettings } from "./settings";

/** The partial-batch response type the publisher returns. */
export const REPORT_BATCH_ITEM_FAILURES = "ReportBatchItemFailures";

/**
 * The event source mapping's metrics: `EventCount` turns on Lambda's per-mapping event counts in `AWS/Lambda`
 * (`PolledEventCount`, `FilteredOutEventCount`, `DroppedEventCount`, …, by `EventSourceMappingUUID`), the only
 * platform-side view of what the mapping filtered out or dropped.
 */
export const MAPPING_METRICS = ["EventCount"] as const;

/** The Lambda runtime of both functions. */
export const LAMBDA_RUNTIME = aws.lambda.Runtime.NodeJS22dX;

function keyAttribute(keyType: "HASH" | "RANGE"): string {
    const element = PRIMARY_KEY.find((k) => k.keyType === keyType);
    if (element === undefined)
        throw new OutboxError("INVALID_CONFIG", `runtime/schema.ts PRIMARY_KEY has no ${keyType} element`);
    return element.attributeName;
}

/**
 * The resource options a child starts from: the component as parent and, in a replica region (`replicaRegions`),
 * that region's provider. Exactly `{ parent }` in the home region.
 *
 * @param o - The component and, in a replica region, the region's provider.
 */
export function childOptions(o: {
    readonly parent: pulumi.Resource;
    readonly provider?: pulumi.ProviderResource;
}): pulumi.CustomResourceOptions {
    return o.provider === undefined ? { parent: o.parent } : { parent: o.parent, provider: o.provider };
}

/** `tags` plus `extra`, as one Output (tags may be an Output themselves). */
export function withTags(
    tags: OutboxSettings["tags"],
    extra: Record<string, string> = {},
): pulumi.Output<Record<string, string>> {
    return pulumi.output(tags).apply((t) => ({ ...t, ...extra }));
}

/** The key attributes of an extra index (`globalSecondaryIndexes`), with their types (`S` unless given). */
export function extraIndexAttributes(index: OutboxTableIndex): { name: string; type: string }[] {
    return [
        { name: index.hashKey, type: index.hashKeyType ?? OUTBOX_DEFAULTS.extraIndexKeyType },
        ...(index.rangeKey === undefined
            ? []
            : [{ name: index.rangeKey, type: index.rangeKeyType ?? OUTBOX_DEFAULTS.extraIndexKeyType }]),
    ];
}

/**
 * The table's attribute definitions: the outbox's (`runtime/schema.ts`), then each extra index's key attributes
 * that are not already there (the validator refuses one defined twice with different types).
 */
export function tableAttributes(extraIndexes: readonly OutboxTableIndex[]): { name: string; type: string }[] {
    const attributes: { name: string; type: string }[] = ATTRIBUTE_DEFINITIONS.map((a) => ({
        name: a.attributeName,
        type: a.attributeType,
    }));
    for (const attribute of extraIndexes.flatMap(extraIndexAttributes)) {
        if (!attributes.some((a) => a.name === attribute.name)) attributes.push(attribute);
    }
    return attributes;
}

/** An extra index's GSI args, in the provider's `keySchemas` form like the outbox's own. */
function extraIndexArgs(index: OutboxTableIndex) {
    const [hash, range] = extraIndexAttributes(index);
    return {
        name: index.name,
        keySchemas: [
            { attributeName: hash.name, keyType: "HASH" },
            ...(range === undefined ? [] : [{ attributeName: range.name, keyType: "RANGE" }]),
        ],
        projectionType: index.projectionType ?? OUTBOX_DEFAULTS.extraIndexProjectionType,
        ...(index.nonKeyAttributes === undefined ? {} : { nonKeyAttributes: index.nonKeyAttributes }),
    };
}

/** The outbox table: schema keys and GSIs (v7 `keySchemas`), TTL, NEW_IMAGE stream, PITR, SSE, the outbox tag. */
export function tableArgs(s: OutboxSettings): aws.dynamodb.TableArgs {
    const provisioned = s.billingMode === "PROVISIONED";
    const capacity = provisioned ? { readCapacity: s.provisionedCapacity, writeCapacity: s.provisionedCapacity } : {};
    return {
        billingMode: s.billingMode,
        ...capacity,
        hashKey: keyAttribute("HASH"),
        rangeKey: keyAttribute("RANGE"),
        attributes: tableAttributes(s.extraIndexes),
        globalSecondaryIndexes: [
            ...GLOBAL_SECONDARY_INDEXES.map((index) => ({
                name: index.indexName,
                keySchemas: index.keySchema.map((k) => ({ attributeName: k.attributeName, keyType: k.keyType })),
                projectionType: index.projectionType,
                ...capacity,
            })),
            ...s.extraIndexes.map((index) => ({ ...extraIndexArgs(index), ...capacity })),
        ],
        ttl: { attributeName: TTL_ATTRIBUTE, enabled: true },
        streamEnabled: true,
        ...replicaArgs(s),
        pointInTimeRecovery: { enabled: s.pointInTimeRecovery },
        // Without a customer key DynamoDB still encrypts at rest, with an AWS owned key.
        ...(s.kmsKeyArn === undefined ? {} : { serverSideEncryption: { enabled: true, kmsKeyArn: s.kmsKeyArn } }),
        deletionProtectionEnabled: s.deletionProtection,
        tags: withTags(s.tags, { [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value }),
    };
}

/** The stream view of a table with replicas (`replicaRegions`). */
export const REPLICATED_STREAM_VIEW_TYPE = "NEW_AND_OLD_IMAGES";

/**
 * The stream view and, with `replicaRegions`, the replicas: `NEW_IMAGE` and none on a single-region table. A table
 * with replicas streams `NEW_AND_OLD_IMAGES`, the view AWS CDK requires of a table with replicas and global tables
 * version 2017.11.29 required; the relay reads only the new image, which it carries too
 * (`STREAM_VIEW_TYPES_WITH_NEW_IMAGE`, `runtime/schema.ts`). Each replica gets the table's point-in-time recovery and deletion protection (the
 * provider's defaults would be off) and the table's tags, the outbox tag among them.
 */
function replicaArgs(s: OutboxSettings): Pick<aws.dynamodb.TableArgs, "streamViewType" | "replicas"> {
    if (s.replicaRegions.length === 0) return { streamViewType: STREAM_VIEW_TYPE };
    return {
        streamViewType: REPLICATED_STREAM_VIEW_TYPE,
        replicas: s.replicaRegions.map((regionName) => ({
            regionName,
            pointInTimeRecovery: s.pointInTimeRecovery,
            deletionProtectionEnabled: s.deletionProtection,
            propagateTags: true,
        })),
    };
}

/** The SNS topic, when the caller gave none. FIFO dedup is by the record id the publisher sends. */
export function topicArgs(s: OutboxSettings): aws.sns.TopicArgs {
    return {
        ...(s.fifo ? { fifoTopic: true, contentBasedDeduplication: false } : {}),
        ...(s.kmsKeyArn === undefined ? {} : { kmsMasterKeyId: s.kmsKeyArn }),
        tags: withTags(s.tags),
    };
}

/** The DLQ: 14-day retention, SSE with SQS-managed keys or the customer key. */
export function queueArgs(s: OutboxSettings): aws.sqs.QueueArgs {
    return {
        messageRetentionSeconds: OUTBOX_DEFAULTS.dlqMessageRetentionSeconds,
        ...(s.kmsKeyArn === undefined ? { sqsManagedSseEnabled: true } : { kmsMasterKeyId: s.kmsKeyArn }),
        tags: withTags(s.tags),
    };
}

/**
 * A function's log group, so the role can be scoped to it and retention is bounded. Its name is left to Pulumi's
 * autonaming; the function's `loggingConfig.logGroup` points at it.
 */
export function logGroupArgs(s: OutboxSettings): aws.cloudwatch.LogGroupArgs {
    return { retentionInDays: s.logRetentionInDays, tags: withTags(s.tags) };
}

/** The outputs the handlers' environment is built from. */
export interface HandlerTargets {
    /** The table's name. */
    readonly tableName: pulumi.Input<string>;
    /** The destination's kind: which variable names it. */
    readonly destinationKind: DestinationKind;
    /** The destination's ARN: the topic's, the queue's or the bus's. */
    readonly destinationArn: pulumi.Input<string>;
    /** The DLQ's URL. */
    readonly dlqUrl: pulumi.Input<string>;
    /**
     * On a table with replicas (`replicaRegions`), the region's origin scope, read by the relay from
     * `OUTBOX_ORIGIN_REGION`, `OUTBOX_OTHER_REGIONS` and `OUTBOX_HOME_REGION`; undefined for a single-region outbox,
     * whose functions get none of the three.
     */
    readonly origin?: pulumi.Output<OriginScope>;
}

/**
 * Every variable of the `runtime/config.ts` contract, set explicitly (the defaults too, so a console read shows
 * them): the one variable that names the destination (its kind follows), `OUTBOX_EVENT_SOURCE` and
 * `OUTBOX_CHECK_EVENT_BUS` with a bus, and `OUTBOX_CLOUDEVENTS_SOURCE` with `cloudEvents`.
 */
export function handlerEnvironment(s: OutboxSettings, t: HandlerTargets): Record<string, pulumi.Input<string>> {
    return {
        [ENV.tableName]: t.tableName,
        [destinationVariable(t.destinationKind)]: t.destinationArn,
        ...(s.eventSource !== undefined ? { [ENV.eventSource]: s.eventSource } : {}),
        ...(s.checkEventBus !== undefined ? { [ENV.checkEventBus]: pulumi.output(s.checkEventBus).apply(String) } : {}),
        ...(s.cloudEventsSource !== undefined ? { [ENV.cloudEventsSource]: s.cloudEventsSource } : {}),
        [ENV.dlqUrl]: t.dlqUrl,
        [ENV.fifo]: String(s.fifo),
        // Numbers typed as plain may still arrive as Outputs from JavaScript callers.
        [ENV.completionGraceSeconds]: pulumi.output(s.completionGraceSeconds).apply(String),
        [ENV.sweepAfterSeconds]: pulumi.output(s.sweepAfterSeconds).apply(String),
        [ENV.maxPublishAttempts]: pulumi.output(s.maxPublishAttempts).apply(String),
        [ENV.expiryShards]: pulumi.output(s.expiryShards).apply(String),
        [ENV.maxPartitionsPerRun]: pulumi.output(s.maxPartitionsPerRun).apply(String),
        [ENV.claimVersion]: pulumi.output(s.claimVersion).apply(String),
        ...(t.origin === undefined
            ? {}
            : {
                  [ENV.originRegion]: t.origin.apply((o) => o.region),
                  [ENV.otherRegions]: t.origin.apply((o) => o.otherRegions.join(",")),
                  [ENV.homeRegion]: t.origin.apply((o) => String(o.home)),
              }),
    };
}

/** The stream → publisher mapping: only outbox INSERTs, from the oldest record, partial batches, bounded retries. */
export function eventSourceMappingArgs(
    s: OutboxSettings,
    t: {
        readonly streamArn: pulumi.Input<string>;
        readonly functionArn: pulumi.Input<string>;
        readonly dlqArn: pulumi.Input<string>;
        /**
         * On a table with replicas, the region's origin scope: the filters are `streamFilterPatterns(scope)`, one
         * `filters` entry each. Undefined for a single-region outbox, whose one filter is `streamFilterPatternJson()`.
         */
        readonly origin?: pulumi.Output<OriginScope>;
    },
): aws.lambda.EventSourceMappingArgs {
    const filters =
        t.origin === undefined
            ? [{ pattern: streamFilterPatternJson() }]
            : t.origin.apply((scope) =>
                  streamFilterPatterns(scope).map((pattern) => ({ pattern: JSON.stringify(pattern) })),
              );
    return {
        eventSourceArn: t.streamArn,
        functionName: t.functionArn,
        startingPosition: OUTBOX_DEFAULTS.startingPosition,
        filterCriteria: { filters },
        functionResponseTypes: [REPORT_BATCH_ITEM_FAILURES],
        bisectBatchOnFunctionError: true,
        maximumRetryAttempts: s.maximumRetryAttempts,
        maximumRecordAgeInSeconds: s.maximumRecordAgeInSeconds,
        batchSize: s.batchSize,
        maximumBatchingWindowInSeconds: s.maximumBatchingWindowInSeconds,
        parallelizationFactor: s.parallelizationFactor,
        destinationConfig: { onFailure: { destinationArn: t.dlqArn } },
        metricsConfig: { metrics: [...MAPPING_METRICS] },
        tags: withTags(s.tags),
    };
}
