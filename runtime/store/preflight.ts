/**
 * Preflight (reference §7): refuse a misprovisioned table before the store touches it. An outbox pointed at a
 * PK-only table would accept the first record per partition and call every later one a duplicate (the "silent
 * shredder", H3); an under-projected ClaimIndex would fail every claim. Every expected key and projection is
 * read from `runtime/schema.ts`.
 *
 * @packageDocumentation
 */
import { DescribeTableCommand, type DescribeTableCommandOutput, type TableDescription } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { GLOBAL_SECONDARY_INDEXES, PRIMARY_KEY, type IndexShape, type KeyElement, type KeyType } from "../schema";
import { isResourceNotFound, wrapAwsError } from "./aws-errors";
import { warnOncePerProcess } from "./observability";
import type { StoreContext } from "./options";

/** What preflight concluded. */
export type PreflightOutcome =
    /** The table exists and matches the schema. */
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
function keySchemaMismatch(what: string, expected: readonly KeyElement[], actual: readonly ActualKey[], types: ReadonlyMap<string, string>): string | undefined {
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
        if (got.name !== want.attributeName) return `${what} ${word} key is "${got.name}", expected "${want.attributeName}"${tail}`;
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
    for (const d of table.AttributeDefinitions ?? []) if (d.AttributeName !== undefined && d.AttributeType !== undefined) types.set(d.AttributeName, d.AttributeType);
    const primary = keySchemaMismatch("primary key", PRIMARY_KEY, actualKeys(table.KeySchema), types);
    if (primary !== undefined) return primary;
    for (const index of GLOBAL_SECONDARY_INDEXES) {
        const mismatch = indexMismatch(index, table, types);
        if (mismatch !== undefined) return mismatch;
    }
    return undefined;
}

function indexMismatch(index: IndexShape, table: TableDescription, types: ReadonlyMap<string, string>): string | undefined {
    const actual = (table.GlobalSecondaryIndexes ?? []).find((g) => g.IndexName === index.indexName);
    if (actual === undefined) return `required global secondary index "${index.indexName}" is missing (expected key schema ${renderExpected(index.keySchema)})`;
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
    return new OutboxError("INVALID_CONFIG", `dynamodboutbox: table "${tableName}" schema mismatch: ${detail}`, { context: { table: tableName } });
}

/**
 * Describe the table and refuse a misprovisioned one. A missing table passes (`table-missing`). When
 * DescribeTable fails for another reason the store fails closed, unless `schemaPreflightAdvisory` is set.
 *
 * @throws OutboxError `INVALID_CONFIG` on a schema mismatch; the classified describe error (wrapped in
 * {@link PREFLIGHT_REFUSAL}) when the table cannot be described.
 */
export async function preflight(ctx: StoreContext): Promise<PreflightOutcome> {
    let out: DescribeTableCommandOutput;
    try {
        out = (await ctx.client.send(new DescribeTableCommand({ TableName: ctx.tableName }))) as DescribeTableCommandOutput;
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
    return "verified";
}
