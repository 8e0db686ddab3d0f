/**
 * Preflight (reference §7): refuse a misprovisioned table before the store touches it. An outbox pointed at a
 * PK-only table would accept the first record per partition and call every later one a duplicate (the "silent
 * shredder", H3); an under-projected ClaimIndex would fail every claim. Every expected key and projection is
 * read from `runtime/schema.ts`.
 *
 * Beyond GoBridge's §7.1 key and projection checks, which run first and keep their messages, preflight refuses a
 * table that is not ready (a table or index still being created, an index backfilling: transient `UNAVAILABLE`)
 * and a stream that cannot carry the new image (`INVALID_CONFIG`). With `expiryShards` > 1 it also reads the
 * table's expiry shards mark and refuses a malformed one (`INVALID_CONFIG`), which would fail every expiry sweep.
 * TTL is left to `dynamodb-outbox verify`:
 * checking it would need `dynamodb:DescribeTimeToLive` on every runtime role, and without TTL the store still
 * works (terminal records are only not deleted).
 *
 * @packageDocumentation
 */
import { DescribeTableCommand, type DescribeTableCommandOutput, type TableDescription } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import {
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    STREAM_VIEW_TYPE,
    STREAM_VIEW_TYPES_WITH_NEW_IMAGE,
    type IndexShape,
    type KeyElement,
    type KeyType,
} from "../schema";
import { isResourceNotFound, wrapAwsError } from "./aws-errors";
import { warnOncePerProcess } from "./observability";
import { readExpiryShards } from "./expiry-shards-row";
import type { StoreContext } from "./options";
import { getItem } from "./send";

/** What preflight concluded. */
export type PreflightOutcome =
    /** The table exists, matches the schema, the table and its indexes are ready, and its stream (if any) carries the new image. */
    | "verified"
    /** The table does not exist yet (build-then-create flows stay valid; first use fails loudly). */
    | "table-missing"
    /** DescribeTable failed and `schemaPreflightAdvisory` let the store carry on unverified. */
    | "unverified";

/** The message when preflight cannot describe the table and the store refuses to start. */
export const PREFLIGHT_REFUSAL =
    "dynamodb-outbox: DynamoDB schema preflight could not verify the table; refusing to start (grant dynamodb:DescribeTable, or set schemaPreflightAdvisory for a dev/emulator that cannot DescribeTable)";

interface ActualKey {
    readonly name: string;
    readonly keyType: string;
}

function renderExpected(expected: readonly KeyElement[]): string {
    return `[${expected.map((e) => `${e.attributeName}(${e.attributeType},${e.keyType})`).join(", ")}]`;
}

function renderActual(actual: readonly ActualKey[], types: ReadonlyMap<string, string>): string {
    const sorted = [...actual].sort((a, b) => (a.keyType === b.keyType ? 0 : a.keyType === "HASH" ? -1 : 1));
    return `[${sorted.map((k) => `${k.name}(${types.get(k.name) ?? ""},${k.keyType})`).join(", ")}]`;
}

/**
 * The first mismatch between an actual key schema and the expected one, as the §7.2 detail text; `undefined`
 * when they match.
 */
function keySchemaMismatch(
    what: string,
    expected: readonly KeyElement[],
    actual: readonly ActualKey[],
    types: ReadonlyMap<string, string>,
): string | undefined {
    const tail = `; expected ${renderExpected(expected)}, actual ${renderActual(actual, types)}`;
    const roles: KeyType[] = ["HASH", "RANGE"];
    for (const role of roles) {
        const want = expected.find((e) => e.keyType === role);
        const got = actual.find((a) => a.keyType === role);
        const word = role === "HASH" ? "hash" : "range";
        if (want === undefined) {
            if (got !== undefined) return `${what} has an unexpected range key "${got.name}"${tail}`;
            continue;
        }
        if (got === undefined) return `${what} is missing its ${word} key${tail}`;
        if (got.name !== want.attributeName)
            return `${what} ${word} key is "${got.name}", expected "${want.attributeName}"${tail}`;
        const type = types.get(got.name);
        if (type !== undefined && type !== want.attributeType) {
            return `${what} key "${got.name}" has attribute type "${type}", expected "${want.attributeType}"${tail}`;
        }
    }
    return undefined;
}

function actualKeys(schema: readonly { AttributeName?: string; KeyType?: string }[] | undefined): ActualKey[] {
    return (schema ?? []).map((k) => ({ name: k.AttributeName ?? "", keyType: k.KeyType ?? "" }));
}

/**
 * Check a table description against the schema. Returns the §7.2 detail of the first mismatch, in the order
 * primary key, then each required GSI; `undefined` when the table is fit. Extra GSIs, LSIs, the projections of
 * KEYS_ONLY indexes, index status, billing mode, TTL and streams are ignored.
 *
 * @param table - `DescribeTable`'s `Table`.
 */
export function schemaMismatch(table: TableDescription | undefined): string | undefined {
    if (table === undefined || table === null) return "DescribeTable returned an empty table description";
    const types = new Map<string, string>();
    for (const d of table.AttributeDefinitions ?? [])
        if (d.AttributeName !== undefined && d.AttributeType !== undefined) types.set(d.AttributeName, d.AttributeType);
    const primary = keySchemaMismatch("primary key", PRIMARY_KEY, actualKeys(table.KeySchema), types);
    if (primary !== undefined) return primary;
    for (const index of GLOBAL_SECONDARY_INDEXES) {
        const mismatch = indexMismatch(index, table, types);
        if (mismatch !== undefined) return mismatch;
    }
    return undefined;
}

function indexMismatch(
    index: IndexShape,
    table: TableDescription,
    types: ReadonlyMap<string, string>,
): string | undefined {
    const actual = (table.GlobalSecondaryIndexes ?? []).find((g) => g.IndexName === index.indexName);
    if (actual === undefined)
        return `required global secondary index "${index.indexName}" is missing (expected key schema ${renderExpected(index.keySchema)})`;
    const keys = keySchemaMismatch(`GSI "${index.indexName}"`, index.keySchema, actualKeys(actual.KeySchema), types);
    if (keys !== undefined) return keys;
    // Only an ALL requirement is enforced: a KEYS_ONLY index projected wider still serves its queries.
    if (index.projectionType === "ALL" && actual.Projection?.ProjectionType !== "ALL") {
        return `GSI "${index.indexName}" must be Projection: ALL (${index.purpose}); actual projection is "${actual.Projection?.ProjectionType ?? "<none>"}"`;
    }
    return undefined;
}

/**
 * The §7.2 error for a mismatch detail: code `INVALID_CONFIG`,
 * `dynamodboutbox: table "<table>" schema mismatch: <detail>`.
 */
export function schemaMismatchError(tableName: string, detail: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", `dynamodboutbox: table "${tableName}" schema mismatch: ${detail}`, {
        context: { table: tableName },
    });
}

/**
 * Describe the table and refuse a misprovisioned one: the §7.2 schema checks first, then readiness, then the
 * stream, then the global table's consistency. A missing table passes (`table-missing`). When DescribeTable fails
 * for another reason the store fails closed, unless `schemaPreflightAdvisory` is set.
 *
 * @throws OutboxError `INVALID_CONFIG` on a schema mismatch, an unusable table or index status, a stream
 * without the new image (or none, under `requireStream`), or a global table with strong consistency (MRSC, see
 * {@link strongConsistencyError}); `UNAVAILABLE` (transient) while the table or a
 * required index is being created or backfilled; the classified describe error (wrapped in
 * {@link PREFLIGHT_REFUSAL}) when the table cannot be described.
 */
export async function preflight(ctx: StoreContext): Promise<PreflightOutcome> {
    let out: DescribeTableCommandOutput;
    try {
        out = (await ctx.client.send(
            new DescribeTableCommand({ TableName: ctx.tableName }),
        )) as DescribeTableCommandOutput;
    } catch (err) {
        if (isResourceNotFound(err)) return "table-missing";
        const described = wrapAwsError(err, "outbox preflight: describe table failed", { table: ctx.tableName });
        if (ctx.schemaPreflightAdvisory) {
            warnOncePerProcess(ctx.logger, "preflightAdvisory", { table: ctx.tableName, error: String(described) });
            return "unverified";
        }
        const code = described instanceof OutboxError ? described.code : "UNAVAILABLE";
        throw new OutboxError(code, PREFLIGHT_REFUSAL, { cause: described, context: { table: ctx.tableName } });
    }
    const detail = schemaMismatch(out?.Table);
    if (detail !== undefined) throw schemaMismatchError(ctx.tableName, detail);
    // schemaMismatch returned undefined, so the description is present.
    const table = out.Table as TableDescription;
    const unready = readinessError(ctx.tableName, table);
    if (unready !== undefined) throw unready;
    const stream = streamError(ctx.tableName, table, ctx.requireStream);
    if (stream !== undefined) throw stream;
    const strong = strongConsistencyError(ctx.tableName, table);
    if (strong !== undefined) throw strong;
    if (ctx.expiryShards > 1) {
        // Every expiry sweep reads the mark; a malformed one would fail each of them, so refuse it here first.
        const mark = await readExpiryShards((input) => getItem(ctx, "preflight.expiry-shards", input), ctx.tableName);
        if (mark > ctx.expiryShards) {
            ctx.logger.info(
                "dynamodboutbox: the table's expiry shards mark is above this store's expiryShards; expire queries the mark's shards",
                { table: ctx.tableName, expiryShards: ctx.expiryShards, mark },
            );
        }
    }
    return "verified";
}

/**
 * The global table check: a table with multi-Region strong consistency (MRSC, `MultiRegionConsistency: STRONG`) is
 * refused, because MRSC tables support neither `TransactWriteItems` (the writer's one transaction of the caller's
 * items and the records, and every claim) nor TTL (which removes terminal records). An eventually consistent global
 * table (MREC, the default) passes: see docs/runtime.md, "Global tables".
 *
 * @param tableName - For the message.
 * @param table - `DescribeTable`'s `Table`.
 * @returns The `INVALID_CONFIG` error, or `undefined`.
 */
export function strongConsistencyError(tableName: string, table: TableDescription): OutboxError | undefined {
    if (table.MultiRegionConsistency !== "STRONG") return undefined;
    return new OutboxError(
        "INVALID_CONFIG",
        `dynamodb-outbox: table "${tableName}" is a global table with multi-Region strong consistency (MultiRegionConsistency STRONG), which supports neither TransactWriteItems (the writer's transaction and every claim) nor TTL (which removes delivered records): the outbox cannot run on it; use a table with eventual consistency (MREC, the default) for the outbox`,
        { context: { table: tableName, multiRegionConsistency: "STRONG" } },
    );
}

/**
 * Table statuses under which reads and writes work. `UPDATING` covers throughput, stream, TTL and index changes
 * on a live table; an index being added shows in its own status, checked next.
 */
const USABLE_TABLE_STATUSES: readonly string[] = ["ACTIVE", "UPDATING"];

/**
 * Index statuses under which the index serves queries. `UPDATING` is a throughput change on a live index; a new
 * index is `CREATING` (and `Backfilling` while it reads the table), and queries on it fail until it is `ACTIVE`.
 */
const USABLE_INDEX_STATUSES: readonly string[] = ["ACTIVE", "UPDATING"];

/**
 * Whether the table and every required index can serve the store now. A table or index being created is
 * transient (`UNAVAILABLE`: wait and run preflight again); any other unusable status (`DELETING`, `ARCHIVED`,
 * `INACCESSIBLE_ENCRYPTION_CREDENTIALS`, …) does not fix itself and is `INVALID_CONFIG`. Run after
 * {@link schemaMismatch}, so every required index is present.
 *
 * @param tableName - For the message.
 * @param table - `DescribeTable`'s `Table`.
 * @returns The error, or `undefined` when the table is ready.
 */
export function readinessError(tableName: string, table: TableDescription): OutboxError | undefined {
    const tableStatus = table.TableStatus ?? "<none>";
    if (!USABLE_TABLE_STATUSES.includes(tableStatus)) {
        const context = { table: tableName, tableStatus };
        if (tableStatus === "CREATING") {
            return new OutboxError(
                "UNAVAILABLE",
                `dynamodb-outbox: table "${tableName}" is not ready: its status is CREATING, expected ACTIVE; wait until DescribeTable shows it ACTIVE, then run preflight again`,
                {
                    context,
                },
            );
        }
        return new OutboxError(
            "INVALID_CONFIG",
            `dynamodb-outbox: table "${tableName}" is unusable: its status is ${tableStatus}, expected ACTIVE or UPDATING; this does not fix itself: restore the table (or its KMS key access), or point the store at another table`,
            { context },
        );
    }
    for (const shape of GLOBAL_SECONDARY_INDEXES) {
        const index = (table.GlobalSecondaryIndexes ?? []).find((g) => g.IndexName === shape.indexName);
        if (index === undefined) continue;
        const indexStatus = index.IndexStatus ?? "<none>";
        const backfilling = index.Backfilling === true;
        if (!backfilling && USABLE_INDEX_STATUSES.includes(indexStatus)) continue;
        const context = { table: tableName, index: shape.indexName, indexStatus, backfilling };
        if (backfilling || indexStatus === "CREATING") {
            return new OutboxError(
                "UNAVAILABLE",
                `dynamodb-outbox: table "${tableName}" is not ready: GSI "${shape.indexName}" is ${indexStatus}${backfilling ? " and backfilling" : ""}, expected ACTIVE; ${shape.purpose} only once it is ACTIVE. Wait (a backfill takes minutes to hours, \`dynamodb-outbox verify\` shows the status), then run preflight again`,
                { context },
            );
        }
        return new OutboxError(
            "INVALID_CONFIG",
            `dynamodb-outbox: table "${tableName}" is unusable: GSI "${shape.indexName}" is ${indexStatus}, expected ACTIVE; once it is gone preflight refuses the table as missing the index: recreate it with \`dynamodb-outbox migrate --table ${tableName} --apply\``,
            { context },
        );
    }
    return undefined;
}

/**
 * The stream check. A stream that does not carry the new image is always refused: the publisher cannot read a
 * record from it, and a table cannot have a second stream. No stream at all is GoBridge's exact table, where a
 * polling relay drains the store; it passes unless `requireStream` is set.
 *
 * @param tableName - For the message.
 * @param table - `DescribeTable`'s `Table`.
 * @param requireStream - Refuse a table without a stream.
 * @returns The `INVALID_CONFIG` error, or `undefined` when the stream is fit.
 */
export function streamError(
    tableName: string,
    table: TableDescription,
    requireStream: boolean,
): OutboxError | undefined {
    const spec = table.StreamSpecification;
    const viewType = spec?.StreamEnabled === true ? (spec.StreamViewType ?? "<none>") : undefined;
    if (viewType === undefined) {
        if (!requireStream) return undefined;
        return new OutboxError(
            "INVALID_CONFIG",
            `dynamodb-outbox: table "${tableName}" has no stream, and requireStream is set: the publisher needs a ${STREAM_VIEW_TYPE} stream; enable it with \`dynamodb-outbox migrate --table ${tableName} --apply\` (or the Outbox component), or unset requireStream when a polling relay drains the table`,
            { context: { table: tableName } },
        );
    }
    if (STREAM_VIEW_TYPES_WITH_NEW_IMAGE.includes(viewType)) return undefined;
    return new OutboxError(
        "INVALID_CONFIG",
        `dynamodb-outbox: table "${tableName}" stream view type is ${viewType}, expected ${STREAM_VIEW_TYPES_WITH_NEW_IMAGE.join(" or ")}: the publisher reads each record from the new image; change the stream to ${STREAM_VIEW_TYPE} in the IaC that owns the table and its event source mapping, together (re-enabling a stream gives it a new ARN)`,
        { context: { table: tableName, streamViewType: viewType } },
    );
}
