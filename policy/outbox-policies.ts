/**
 * The outbox's CrossGuard policies, derived from `runtime/schema.ts`. They catch an outbox table or stream
 * mapping that someone provisioned by hand, or bent with `transform`, into a shape that loses or strands
 * events. This module only exports the policies; constructing a `PolicyPack` starts a server, so only the
 * pack's entry file (`policy/index.ts`) does that.
 *
 * The policies judge outbox resources only (`scope.ts`): what an Outbox declares, a table tagged as an
 * outbox table, and what reads or grants to those. Every other resource of the stack gets no violation, so a
 * whole stack can turn the pack on. A resource policy sees one resource at a time, so it judges what the
 * Outbox declares and tagged tables; a stack policy catches a mapping declared elsewhere on an outbox table's
 * stream, through the table's stream ARN.
 *
 * Each policy's enforcement level is `mandatory` unless the pack's config sets another
 * ({@link outboxPolicyPackConfig} checks such a config), but for `outbox-alarms`, which is `advisory`.
 *
 * Values still unknown during a preview arrive absent; the checks treat absence as a violation only where the
 * value is plain configuration (index shapes, TTL, stream, starting position), never where it is an output of
 * another resource (a DLQ's ARN).
 *
 * @packageDocumentation
 */
import * as aws from "../components/aws";
import {
    PolicyPackArgs,
    PolicyPackConfig,
    ResourceValidationPolicy,
    StackValidationPolicy,
    validateResourceOfType,
} from "@pulumi/policy";
import {
    ATTR,
    GLOBAL_SECONDARY_INDEXES,
    IndexShape,
    PRIMARY_KEY,
    STREAM_FILTER_PATTERN,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
    streamFilterPatterns,
    type OriginScope,
} from "../runtime/schema";
import { OutboxError } from "../runtime/errors";
import { OUTBOX_DEFAULTS } from "../components/defaults";
import { REPORT_BATCH_ITEM_FAILURES } from "../components/children";
import {
    ResourceProps as Props,
    StackResourceView,
    declaredInsideOutbox,
    isOutboxTable,
    outboxScope,
    stackPolicy,
} from "./scope";
import { outboxSecurityPolicies } from "./security";
import { outboxPayloadBucketPolicy } from "./payload-bucket";
import { outboxAlarmsPolicy } from "./alarms";
import { outboxConsumerQueuePolicy } from "./consumer-queue";

export { OUTBOX_ALARMS_DEFAULT_LEVEL, outboxAlarmViolations } from "./alarms";
export { PAYLOAD_BUCKET_TYPES, payloadBucketViolations } from "./payload-bucket";
export {
    AWS_DEFAULT_SECONDS,
    REDRIVE_POLICY_TYPE,
    consumerQueueViolations,
    declaredInsideOutboxConsumer,
} from "./consumer-queue";

export {
    declaredInsideOutbox,
    hasOutboxTableTag,
    insideOutbox,
    isOutboxTable,
    known,
    outboxScope,
    urnTypes,
} from "./scope";
export type { OutboxScope, ResourceProps, StackResourceView } from "./scope";

/** Stream view types that carry the new image the publisher reads. */
export const STREAM_VIEWS_WITH_NEW_IMAGE: readonly string[] = [STREAM_VIEW_TYPE, "NEW_AND_OLD_IMAGES"];

function show(value: unknown): string {
    return value === undefined ? "absent" : JSON.stringify(value);
}

function attributeType(props: Props, attributeName: string): string {
    const attributes: Props[] = Array.isArray(props.attributes) ? props.attributes : [];
    return attributes.find((a) => a?.name === attributeName)?.type ?? "?";
}

/** An index's key schema as `attr (T) ROLE` pieces, from v7 `keySchemas` or the deprecated `hashKey`/`rangeKey`. */
function actualKeys(props: Props, index: Props): string {
    const keys: { attributeName: string; keyType: string }[] = Array.isArray(index.keySchemas)
        ? index.keySchemas
        : [
              ...(index.hashKey === undefined ? [] : [{ attributeName: index.hashKey, keyType: "HASH" }]),
              ...(index.rangeKey === undefined ? [] : [{ attributeName: index.rangeKey, keyType: "RANGE" }]),
          ];
    return keys.map((k) => `${k.attributeName} (${attributeType(props, k.attributeName)}) ${k.keyType}`).join(", ");
}

function expectedKeys(shape: IndexShape): string {
    return shape.keySchema.map((k) => `${k.attributeName} (${k.attributeType}) ${k.keyType}`).join(", ");
}

function describeIndex(keys: string, projection: unknown, nonKeyAttributes?: unknown): string {
    const extra =
        Array.isArray(nonKeyAttributes) && nonKeyAttributes.length > 0 ? ` [${nonKeyAttributes.join(", ")}]` : "";
    return `{keys: ${keys}; projection: ${String(projection)}${extra}}`;
}

/** Violations of one outbox table's props against the schema: primary key, the three GSIs, TTL, stream. */
export function outboxTableViolations(name: string, props: Props): string[] {
    const out: string[] = [];
    const subject = `outbox table "${name}"`;
    const hash = PRIMARY_KEY.find((k) => k.keyType === "HASH")?.attributeName;
    const range = PRIMARY_KEY.find((k) => k.keyType === "RANGE")?.attributeName;
    if (props.hashKey !== hash || props.rangeKey !== range) {
        out.push(
            `${subject}: primary key must be ${hash} HASH, ${range} RANGE; it is ${show(props.hashKey)} HASH, ${show(props.rangeKey)} RANGE`,
        );
    }
    const indexes: Props[] = Array.isArray(props.globalSecondaryIndexes) ? props.globalSecondaryIndexes : [];
    for (const shape of GLOBAL_SECONDARY_INDEXES) {
        const expected = describeIndex(expectedKeys(shape), shape.projectionType);
        const index = indexes.find((i) => i?.name === shape.indexName);
        if (index === undefined) {
            const present = indexes.map((i) => i?.name).join(", ") || "none";
            out.push(
                `${subject}: index ${shape.indexName} is missing; expected ${expected} (${shape.purpose}); indexes present: ${present}`,
            );
            continue;
        }
        const actual = describeIndex(actualKeys(props, index), index.projectionType, index.nonKeyAttributes);
        if (actual !== expected) {
            out.push(`${subject}: index ${shape.indexName} must be ${expected} (${shape.purpose}); it is ${actual}`);
        }
    }
    if (props.ttl?.attributeName !== TTL_ATTRIBUTE || props.ttl?.enabled !== true) {
        out.push(
            `${subject}: TTL must be enabled on "${TTL_ATTRIBUTE}" (terminal records expire by it); it is ${show(props.ttl)}`,
        );
    }
    if (props.streamEnabled !== true || !STREAM_VIEWS_WITH_NEW_IMAGE.includes(props.streamViewType)) {
        out.push(
            `${subject}: the stream must be enabled with new images (${STREAM_VIEW_TYPE}) for the publisher; ` +
                `it is streamEnabled ${show(props.streamEnabled)}, streamViewType ${show(props.streamViewType)}`,
        );
    }
    return out;
}

function filterPatterns(props: Props): unknown[] {
    const filters: Props[] = Array.isArray(props.filterCriteria?.filters) ? props.filterCriteria.filters : [];
    return filters.map((f) => {
        try {
            return typeof f?.pattern === "string" ? JSON.parse(f.pattern) : f?.pattern;
        } catch {
            return f?.pattern;
        }
    });
}

function sameJson(a: unknown, b: unknown): boolean {
    const canonical = (v: unknown): unknown =>
        Array.isArray(v)
            ? v.map(canonical)
            : v !== null && typeof v === "object"
              ? Object.fromEntries(
                    Object.keys(v)
                        .sort()
                        .map((k) => [k, canonical((v as Props)[k])]),
                )
              : v;
    return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/**
 * Whether `patterns` are exactly the filters of one region of a global table (`streamFilterPatterns(scope)`,
 * `runtime/schema.ts`, as `replicaRegions` gives each region's mapping): the scope is read back from the first
 * pattern's origin stamp (a region's own name, or the home region's `anything-but` of the others or any stamp),
 * and the patterns must be what that scope gives, byte for byte as JSON.
 */
function isOriginFilter(patterns: readonly unknown[]): boolean {
    const stamp: unknown = (patterns[0] as Props | undefined)?.dynamodb?.NewImage?.[ATTR.originRegion]?.S;
    if (!Array.isArray(stamp) || stamp.length !== 1) return false;
    const [only] = stamp as unknown[];
    const others: unknown = (only as Props | undefined)?.["anything-but"];
    // The home scope's patterns do not name its own region; any name outside the others stands for it.
    const scope: OriginScope | undefined =
        typeof only === "string"
            ? { region: only, otherRegions: [], home: false }
            : Array.isArray(others) && others.every((r) => typeof r === "string")
              ? { region: "", otherRegions: others as string[], home: true }
              : sameJson(only, { prefix: "" })
                ? { region: "", otherRegions: [], home: true }
                : undefined;
    return scope !== undefined && sameJson(patterns, streamFilterPatterns(scope));
}

/** Violations of an outbox stream mapping: TRIM_HORIZON, partial batch responses, an on-failure destination, bounded retries, the exact filter. */
export function outboxMappingViolations(name: string, props: Props): string[] {
    const out: string[] = [];
    const subject = `outbox stream mapping "${name}"`;
    if (props.startingPosition !== OUTBOX_DEFAULTS.startingPosition) {
        out.push(
            `${subject}: startingPosition must be ${OUTBOX_DEFAULTS.startingPosition} (LATEST skips records written before the mapping existed); it is ${show(props.startingPosition)}`,
        );
    }
    const responseTypes: unknown = props.functionResponseTypes;
    if (!Array.isArray(responseTypes) || !responseTypes.includes(REPORT_BATCH_ITEM_FAILURES)) {
        out.push(
            `${subject}: functionResponseTypes must include ${REPORT_BATCH_ITEM_FAILURES} (else the publisher's batchItemFailures are ignored and the whole batch retries); it is ${show(responseTypes)}`,
        );
    }
    if (props.destinationConfig?.onFailure === undefined) {
        out.push(
            `${subject}: destinationConfig.onFailure must name a DLQ (else a poison batch is dropped without a trace); it is ${show(props.destinationConfig)}`,
        );
    }
    const retries: unknown = props.maximumRetryAttempts;
    if (typeof retries !== "number" || retries < 0) {
        out.push(
            `${subject}: maximumRetryAttempts must be a bound from 0 to 10000 (absent or -1 retries a poison batch for the stream's 24 h retention); it is ${show(retries)}`,
        );
    }
    const patterns = filterPatterns(props);
    const single = patterns.length === 1 && sameJson(patterns[0], STREAM_FILTER_PATTERN);
    if (!single && !isOriginFilter(patterns)) {
        out.push(
            `${subject}: the filter must be exactly ${JSON.stringify(STREAM_FILTER_PATTERN)}, or on a global table streamFilterPatterns(scope) of the region's origin scope (a wrong filter silently drops events); it is ${show(patterns)}`,
        );
    }
    return out;
}

/**
 * Violations of the mappings declared outside an Outbox that read an outbox table's stream (found through the
 * tables' `streamArn` outputs, known once the tables exist): they meet the same rules as the Outbox's own.
 *
 * @param resources - The stack's resources, as a stack policy gets them.
 */
export function externalOutboxMappingViolations(
    resources: readonly StackResourceView[],
): { urn: string; message: string }[] {
    return outboxScope(resources).externalMappings.flatMap((r) =>
        outboxMappingViolations(r.name, r.props).map((message) => ({ urn: r.urn, message })),
    );
}

/** The enforcement levels the pack's config may give an outbox policy. */
export const OUTBOX_POLICY_LEVELS = ["advisory", "mandatory", "disabled"] as const;

/** An enforcement level the pack's config may give an outbox policy. */
export type OutboxPolicyLevel = (typeof OUTBOX_POLICY_LEVELS)[number];

/** The enforcement level of every outbox policy the pack's config leaves alone. @default "mandatory" */
export const OUTBOX_POLICY_DEFAULT_LEVEL: OutboxPolicyLevel = "mandatory";

/**
 * The outbox policies: table shape, stream mappings (the Outbox's own and those on an outbox stream declared
 * elsewhere), least privilege (the Outbox's IAM and grants on its roles declared elsewhere), encryption at rest,
 * the payload bucket, the queue an OutboxConsumer reads, and, as advice, alarms. Each is
 * {@link OUTBOX_POLICY_DEFAULT_LEVEL} (`outbox-alarms` `advisory`) unless the pack's config says otherwise.
 */
export const outboxPolicies: (ResourceValidationPolicy | StackValidationPolicy)[] = [
    {
        name: "outbox-table-shape",
        description:
            "An outbox table (declared by an Outbox, or tagged as one) has the schema's primary key, its three GSIs with their exact key schemas and projections, TTL on `ttl` and a stream with new images.",
        enforcementLevel: OUTBOX_POLICY_DEFAULT_LEVEL,
        validateResource: validateResourceOfType(aws.dynamodb.Table, (props, args, reportViolation) => {
            if (!isOutboxTable(args.urn, props)) return;
            for (const violation of outboxTableViolations(args.name, props)) reportViolation(violation);
        }),
    },
    {
        name: "outbox-stream-mapping",
        description:
            "An Outbox's stream mapping starts at TRIM_HORIZON, reports batch item failures, retries a bounded number of times, has an on-failure destination and the schema's filter.",
        enforcementLevel: OUTBOX_POLICY_DEFAULT_LEVEL,
        validateResource: validateResourceOfType(aws.lambda.EventSourceMapping, (props, args, reportViolation) => {
            if (!declaredInsideOutbox(args.urn)) return;
            for (const violation of outboxMappingViolations(args.name, props)) reportViolation(violation);
        }),
    },
    stackPolicy(
        "outbox-stream-mapping-external",
        "A Lambda mapping declared outside an Outbox that reads an outbox table's stream meets the same rules (found through the table's stream ARN).",
        OUTBOX_POLICY_DEFAULT_LEVEL,
        externalOutboxMappingViolations,
    ),
    ...outboxSecurityPolicies(OUTBOX_POLICY_DEFAULT_LEVEL),
    outboxPayloadBucketPolicy(OUTBOX_POLICY_DEFAULT_LEVEL),
    outboxConsumerQueuePolicy(OUTBOX_POLICY_DEFAULT_LEVEL),
    outboxAlarmsPolicy(),
];

/** The names of the outbox policies, the keys of the pack's config. */
export const OUTBOX_POLICY_NAMES: readonly string[] = outboxPolicies.map((p) => p.name);

/**
 * Checks a policy pack config for the outbox pack (the JSON of `pulumi preview --policy-pack-config <file>`, or
 * a `PolicyPack`'s `initialConfig`) and returns it with each entry as an enforcement level. Each key is an outbox
 * policy's name, or `all`; each value is a level, or `{ "enforcementLevel": level }`.
 *
 * @param config - The parsed config.
 * @throws OutboxError `INVALID_CONFIG` naming the key: not an object, an unknown policy name, a level other than
 *   {@link OUTBOX_POLICY_LEVELS}, or a property other than `enforcementLevel` (the outbox policies have none).
 */
export function outboxPolicyPackConfig(config: unknown): PolicyPackConfig {
    const levels = OUTBOX_POLICY_LEVELS.join(", ");
    if (config === null || typeof config !== "object" || Array.isArray(config)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `the outbox policy pack config must be an object of policy name to enforcement level; it is ${JSON.stringify(config)}`,
        );
    }
    const out: PolicyPackConfig = {};
    for (const [key, value] of Object.entries(config)) {
        if (key !== "all" && !OUTBOX_POLICY_NAMES.includes(key)) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `the outbox policy pack has no policy "${key}"; its policies are ${OUTBOX_POLICY_NAMES.join(", ")} (or "all")`,
                { context: { key } },
            );
        }
        const entry: unknown =
            value !== null && typeof value === "object" && !Array.isArray(value) ? value : { enforcementLevel: value };
        const { enforcementLevel, ...rest } = entry as Record<string, unknown>;
        const extra = Object.keys(rest);
        if (extra.length > 0) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `"${key}" takes only enforcementLevel; it has ${extra.map((k) => `"${k}"`).join(", ")}`,
                { context: { key } },
            );
        }
        if (!(OUTBOX_POLICY_LEVELS as readonly unknown[]).includes(enforcementLevel)) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `"${key}" has enforcement level ${JSON.stringify(enforcementLevel)}; it must be one of ${levels}`,
                { context: { key } },
            );
        }
        out[key] = enforcementLevel as OutboxPolicyLevel;
    }
    return out;
}

/** The pack's args, for `policy/index.ts`. */
export const outboxPolicyPackArgs: PolicyPackArgs = { policies: outboxPolicies };
