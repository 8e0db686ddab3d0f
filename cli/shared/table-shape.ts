/**
 * Compares what DescribeTable and DescribeTimeToLive report with `runtime/schema.ts`, finding by finding.
 * `verify` turns the findings into checklist lines and `migrate` turns them into a plan. Pure: no I/O.
 *
 * Key schemas render the way GoBridge's preflight renders them: `[PK(S,HASH), SK(S,RANGE)]`, with the type
 * looked up in the table's attribute definitions (empty when the attribute is not declared).
 *
 * @packageDocumentation
 */
import type {
    AttributeDefinition,
    GlobalSecondaryIndexDescription,
    KeySchemaElement,
    TableDescription,
    TimeToLiveDescription,
} from "@aws-sdk/client-dynamodb";
import {
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    STREAM_VIEW_TYPES_WITH_NEW_IMAGE,
    TTL_ATTRIBUTE,
    type IndexShape,
    type KeyElement,
} from "../../runtime/schema";

/** Render an expected key schema: `[name(TYPE,KEYTYPE), …]` in schema order. */
export function renderExpectedKeys(keys: readonly KeyElement[]): string {
    return `[${keys.map((k) => `${k.attributeName}(${k.attributeType},${k.keyType})`).join(", ")}]`;
}

/** Render an actual key schema, HASH first, types from the attribute definitions. */
export function renderActualKeys(
    keys: readonly KeySchemaElement[] | undefined,
    definitions: readonly AttributeDefinition[] | undefined,
): string {
    const sorted = [...(keys ?? [])].sort((a, b) => (a.KeyType === b.KeyType ? 0 : a.KeyType === "HASH" ? -1 : 1));
    const typeOf = (name: string | undefined): string =>
        definitions?.find((d) => d.AttributeName === name)?.AttributeType ?? "";
    return `[${sorted.map((k) => `${k.AttributeName}(${typeOf(k.AttributeName)},${k.KeyType})`).join(", ")}]`;
}

/**
 * Whether an actual key schema is the expected one: same attribute per role, no extra role, and the expected
 * type wherever the attribute is declared (an undeclared attribute skips the type check, as preflight does).
 */
export function keysMatch(
    expected: readonly KeyElement[],
    actual: readonly KeySchemaElement[] | undefined,
    definitions: readonly AttributeDefinition[] | undefined,
): boolean {
    const present = actual ?? [];
    if (present.length !== expected.length) return false;
    return expected.every((want) => {
        const got = present.find((k) => k.KeyType === want.keyType);
        if (got === undefined || got.AttributeName !== want.attributeName) return false;
        const declared = definitions?.find((d) => d.AttributeName === want.attributeName)?.AttributeType;
        return declared === undefined || declared === want.attributeType;
    });
}

/** The state of the base table. */
export interface TableFinding {
    /** The table status, e.g. `ACTIVE`, `UPDATING`. */
    readonly status: string;
    /** Whether the primary key is PK (S, HASH), SK (S, RANGE). */
    readonly primaryKeyOk: boolean;
    /** The expected primary key, rendered. */
    readonly expectedPrimaryKey: string;
    /** The actual primary key, rendered. */
    readonly actualPrimaryKey: string;
}

/** How one required index compares with the schema. */
export type IndexState =
    /** Right keys, right projection. */
    | "ok"
    /** No index of that name (or only one being deleted). */
    | "missing"
    /** An index of that name with another key schema. */
    | "wrong-keys"
    /** Right keys, but the projection is narrower than the schema requires (ClaimIndex not ALL). */
    | "under-projected"
    /** Right keys, but projected wider than the schema's KEYS_ONLY: it works and costs more per write. */
    | "over-projected";

/** One required index as found. */
export interface IndexFinding {
    /** The expected shape, from the schema. */
    readonly shape: IndexShape;
    /** How it compares. */
    readonly state: IndexState;
    /** The index status when present (`ACTIVE`, `CREATING`, `UPDATING`), or `DELETING` for a missing index still being deleted. */
    readonly indexStatus?: string;
    /** The actual projection type when present. */
    readonly projectionType?: string;
    /** The expected key schema, rendered. */
    readonly expectedKeys: string;
    /** The actual key schema, rendered (empty when missing). */
    readonly actualKeys: string;
}

/** The TTL state. */
export interface TtlFinding {
    /** `ENABLED`, `ENABLING`, `DISABLED`, `DISABLING`. */
    readonly status: string;
    /** The TTL attribute, when one is set. */
    readonly attributeName?: string;
    /** Whether TTL is enabled (or enabling) on the schema's attribute. */
    readonly onSchemaAttribute: boolean;
}

/** The stream state. */
export interface StreamFinding {
    /** Whether a stream is enabled. */
    readonly enabled: boolean;
    /** The view type when enabled. */
    readonly viewType?: string;
    /** Whether the view carries new images. */
    readonly hasNewImage: boolean;
}

/** An index key attribute whose declared type conflicts with the schema (creating the index would fail). */
export interface AttributeTypeConflict {
    /** The attribute. */
    readonly attributeName: string;
    /** The type the schema needs. */
    readonly expectedType: string;
    /** The type the table declares. */
    readonly actualType: string;
    /** The required index that needs it. */
    readonly indexName: string;
}

/** Everything `verify` and `migrate` need to know about a table's provisioning. */
export interface TableShape {
    /** The base table. */
    readonly table: TableFinding;
    /** The three required indexes, in schema order. */
    readonly indexes: readonly IndexFinding[];
    /** TTL. */
    readonly ttl: TtlFinding;
    /** The stream. */
    readonly stream: StreamFinding;
    /** Attribute type conflicts for missing indexes. */
    readonly typeConflicts: readonly AttributeTypeConflict[];
    /** Whether the table is billed per request (otherwise new indexes need provisioned throughput). */
    readonly payPerRequest: boolean;
    /** The table's provisioned throughput, for new indexes on a provisioned table. */
    readonly provisionedThroughput?: { readonly readCapacityUnits: number; readonly writeCapacityUnits: number };
}

function findIndex(table: TableDescription, name: string): GlobalSecondaryIndexDescription | undefined {
    return table.GlobalSecondaryIndexes?.find((g) => g.IndexName === name && g.IndexStatus !== "DELETING");
}

function inspectIndex(table: TableDescription, shape: IndexShape): IndexFinding {
    const actual = findIndex(table, shape.indexName);
    const expectedKeys = renderExpectedKeys(shape.keySchema);
    if (actual === undefined) {
        const deleting = table.GlobalSecondaryIndexes?.some((g) => g.IndexName === shape.indexName);
        return {
            shape,
            state: "missing",
            indexStatus: deleting ? "DELETING" : undefined,
            expectedKeys,
            actualKeys: "",
        };
    }
    const actualKeys = renderActualKeys(actual.KeySchema, table.AttributeDefinitions);
    const projectionType = actual.Projection?.ProjectionType;
    const base = { shape, indexStatus: actual.IndexStatus, projectionType, expectedKeys, actualKeys };
    if (!keysMatch(shape.keySchema, actual.KeySchema, table.AttributeDefinitions))
        return { ...base, state: "wrong-keys" };
    if (projectionType === shape.projectionType) return { ...base, state: "ok" };
    return { ...base, state: shape.projectionType === "ALL" ? "under-projected" : "over-projected" };
}

function typeConflicts(table: TableDescription, indexes: readonly IndexFinding[]): AttributeTypeConflict[] {
    const conflicts: AttributeTypeConflict[] = [];
    for (const finding of indexes) {
        if (finding.state !== "missing") continue;
        for (const key of finding.shape.keySchema) {
            const declared = table.AttributeDefinitions?.find(
                (d) => d.AttributeName === key.attributeName,
            )?.AttributeType;
            if (declared !== undefined && declared !== key.attributeType) {
                conflicts.push({
                    attributeName: key.attributeName,
                    expectedType: key.attributeType,
                    actualType: declared,
                    indexName: finding.shape.indexName,
                });
            }
        }
    }
    return conflicts;
}

/**
 * Compare a table with the schema.
 *
 * @param table - DescribeTable's `Table`.
 * @param ttl - DescribeTimeToLive's `TimeToLiveDescription`. @default TTL disabled
 */
export function inspectTable(table: TableDescription, ttl: TimeToLiveDescription | undefined): TableShape {
    const indexes = GLOBAL_SECONDARY_INDEXES.map((shape) => inspectIndex(table, shape));
    const ttlStatus = ttl?.TimeToLiveStatus ?? "DISABLED";
    const viewType = table.StreamSpecification?.StreamEnabled ? table.StreamSpecification.StreamViewType : undefined;
    const billing = table.BillingModeSummary?.BillingMode;
    const throughput = table.ProvisionedThroughput;
    return {
        table: {
            status: table.TableStatus ?? "UNKNOWN",
            primaryKeyOk: keysMatch(PRIMARY_KEY, table.KeySchema, table.AttributeDefinitions),
            expectedPrimaryKey: renderExpectedKeys(PRIMARY_KEY),
            actualPrimaryKey: renderActualKeys(table.KeySchema, table.AttributeDefinitions),
        },
        indexes,
        ttl: {
            status: ttlStatus,
            attributeName: ttl?.AttributeName,
            onSchemaAttribute:
                ttl?.AttributeName === TTL_ATTRIBUTE && (ttlStatus === "ENABLED" || ttlStatus === "ENABLING"),
        },
        stream: {
            enabled: viewType !== undefined,
            viewType,
            hasNewImage: viewType !== undefined && STREAM_VIEW_TYPES_WITH_NEW_IMAGE.includes(viewType),
        },
        typeConflicts: typeConflicts(table, indexes),
        payPerRequest: billing === "PAY_PER_REQUEST",
        provisionedThroughput:
            billing === "PAY_PER_REQUEST" || throughput === undefined
                ? undefined
                : {
                      readCapacityUnits: Number(throughput.ReadCapacityUnits ?? 1),
                      writeCapacityUnits: Number(throughput.WriteCapacityUnits ?? 1),
                  },
    };
}
