/**
 * Validation of `globalSecondaryIndexes` (the caller's own indexes beside the outbox's), in the terms of
 * `validation.ts`: the arg path, the bad value, what is allowed and the fix. The outbox's index names and
 * attribute types come from `runtime/schema.ts`.
 *
 * @packageDocumentation
 */
import { ATTRIBUTE_DEFINITIONS, GLOBAL_SECONDARY_INDEXES } from "../runtime/schema";
import type { OutboxArgs, OutboxTableIndex } from "./args";
import { OutboxAttributeType, OutboxProjectionType } from "./args";
import type { OutboxArgProblem } from "./arg-problem";
import { isUnknown, show } from "./arg-checks";
import { extraIndexAttributes } from "./children";

/** DynamoDB's limit of global secondary indexes per table, of which the outbox uses three. */
export const MAX_TABLE_INDEXES = 20;

/** The most indexes `globalSecondaryIndexes` may add. */
export const MAX_EXTRA_INDEXES = MAX_TABLE_INDEXES - GLOBAL_SECONDARY_INDEXES.length;

/** DynamoDB's index name rule. */
const INDEX_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** DynamoDB's limit of projected non-key attributes, over all of a table's indexes; here per index. */
const MAX_NON_KEY_ATTRIBUTES = 100;

const ATTRIBUTE_TYPES = Object.values(OutboxAttributeType) as readonly string[];
const PROJECTION_TYPES = Object.values(OutboxProjectionType) as readonly string[];

function isAttributeName(value: unknown): value is string {
    return typeof value === "string" && value.length >= 1 && value.length <= 255;
}

/** The problems of one index's own fields (name, keys and their types, projection). */
function indexFieldProblems(index: Record<string, unknown>, at: string): OutboxArgProblem[] {
    const problems: OutboxArgProblem[] = [];
    const outboxIndexes = GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName);
    if (typeof index.name !== "string" || !INDEX_NAME.test(index.name)) {
        problems.push({
            path: `${at}.name`,
            value: show(index.name),
            allowed: 'an index name: 3 to 255 letters, digits, "_", "-" or "."',
            fix: 'name the index, e.g. "CustomerIndex"',
        });
    } else if (outboxIndexes.includes(index.name)) {
        problems.push({
            path: `${at}.name`,
            value: show(index.name),
            allowed: `a name other than the outbox's own indexes (${outboxIndexes.join(", ")}), which the component declares`,
            fix: "rename your index; the outbox's indexes are there already and must keep their shape",
        });
    }
    for (const key of ["hashKey", "rangeKey"] as const) {
        const value = index[key];
        if ((key === "hashKey" || value !== undefined) && !isAttributeName(value)) {
            problems.push({
                path: `${at}.${key}`,
                value: show(value),
                allowed: "an attribute name, 1 to 255 characters",
                fix: `give the ${key === "hashKey" ? "partition" : "sort"} key's attribute name`,
            });
        }
        const type = index[`${key}Type`];
        if (type !== undefined && !ATTRIBUTE_TYPES.includes(type as string)) {
            problems.push({
                path: `${at}.${key}Type`,
                value: show(type),
                allowed: ATTRIBUTE_TYPES.map((t) => `"${t}"`).join(", "),
                fix: 'use "S" (string), "N" (number) or "B" (binary), or omit it for "S"',
            });
        }
    }
    if (index.rangeKey === undefined && index.rangeKeyType !== undefined) {
        problems.push({
            path: `${at}.rangeKeyType`,
            value: show(index.rangeKeyType),
            allowed: "only with rangeKey",
            fix: "add rangeKey, or remove rangeKeyType",
        });
    }
    const projection = index.projectionType ?? OutboxProjectionType.All;
    if (!PROJECTION_TYPES.includes(projection as string)) {
        problems.push({
            path: `${at}.projectionType`,
            value: show(projection),
            allowed: PROJECTION_TYPES.map((t) => `"${t}"`).join(", "),
            fix: 'use one of those, or omit it for "ALL"',
        });
    }
    const nonKey = index.nonKeyAttributes;
    const validNonKey =
        Array.isArray(nonKey) &&
        nonKey.length >= 1 &&
        nonKey.length <= MAX_NON_KEY_ATTRIBUTES &&
        nonKey.every(isAttributeName);
    if (projection === OutboxProjectionType.Include ? !validNonKey : nonKey !== undefined) {
        problems.push({
            path: `${at}.nonKeyAttributes`,
            value: show(nonKey),
            allowed:
                projection === OutboxProjectionType.Include
                    ? `1 to ${MAX_NON_KEY_ATTRIBUTES} attribute names (an INCLUDE index projects them)`
                    : 'nothing: only an "INCLUDE" index lists its attributes',
            fix:
                projection === OutboxProjectionType.Include
                    ? "list the attributes the index projects besides the keys"
                    : 'remove nonKeyAttributes, or set projectionType: "INCLUDE"',
        });
    }
    return problems;
}

/**
 * The problems of `globalSecondaryIndexes`: not a list, more than {@link MAX_EXTRA_INDEXES}, a field of an index (see
 * `OutboxTableIndex`), a name given twice, and a key attribute whose type differs from the outbox's definition or
 * from another index's.
 *
 * @param args - The component args.
 * @param problems - Where the problems go.
 */
export function checkExtraIndexes(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const indexes: unknown = args.globalSecondaryIndexes;
    if (indexes === undefined || isUnknown(indexes)) return;
    if (!Array.isArray(indexes) || indexes.length > MAX_EXTRA_INDEXES) {
        problems.push({
            path: "args.globalSecondaryIndexes",
            value: Array.isArray(indexes) ? `${indexes.length} indexes` : show(indexes),
            allowed: `a list of at most ${MAX_EXTRA_INDEXES} indexes (DynamoDB allows ${MAX_TABLE_INDEXES} per table, the outbox uses ${GLOBAL_SECONDARY_INDEXES.length})`,
            fix: 'pass e.g. [{ name: "CustomerIndex", hashKey: "customer_id" }]',
        });
        return;
    }
    const types = new Map<string, { type: string; by: string }>(
        ATTRIBUTE_DEFINITIONS.map((a) => [a.attributeName, { type: a.attributeType, by: "the outbox" }]),
    );
    const names = new Set<string>();
    indexes.forEach((index: unknown, i) => {
        const at = `args.globalSecondaryIndexes[${i}]`;
        if (typeof index !== "object" || index === null || Array.isArray(index) || isUnknown(index)) {
            problems.push({
                path: at,
                value: show(index),
                allowed:
                    "an object { name, hashKey, hashKeyType?, rangeKey?, rangeKeyType?, projectionType?, nonKeyAttributes? }",
                fix: "pass a plain object (not an Output) for each index",
            });
            return;
        }
        const own = indexFieldProblems(index as Record<string, unknown>, at);
        problems.push(...own);
        const { name } = index as OutboxTableIndex;
        if (typeof name === "string" && names.has(name)) {
            problems.push({
                path: `${at}.name`,
                value: show(name),
                allowed: "a name no other index in the list has",
                fix: "rename one of the two, or remove the duplicate",
            });
        }
        names.add(name);
        if (own.length > 0) return;
        for (const attribute of extraIndexAttributes(index as OutboxTableIndex)) {
            const defined = types.get(attribute.name);
            if (defined !== undefined && defined.type !== attribute.type) {
                const key = attribute.name === (index as OutboxTableIndex).hashKey ? "hashKeyType" : "rangeKeyType";
                problems.push({
                    path: `${at}.${key}`,
                    value: show(attribute.type),
                    allowed: `"${defined.type}": ${defined.by} defines the attribute ${attribute.name} as "${defined.type}", and a table has one type per attribute`,
                    fix: `set ${key}: "${defined.type}", or key the index on another attribute`,
                });
            } else if (defined === undefined) {
                types.set(attribute.name, { type: attribute.type, by: `globalSecondaryIndexes[${i}]` });
            }
        }
    });
}
