/**
 * A small matcher for Lambda event filter patterns (the EventBridge pattern language), limited to the
 * operators an outbox filter needs. It walks nested keys the way Lambda does for a stream record: every key of
 * the pattern must match the record at the same path; a leaf is an array of alternatives, any of which may
 * match; an array value in the record matches when any of its elements does.
 *
 * Supported alternatives in a leaf array:
 * - exact values: a string, a number, a boolean or `null`;
 * - `{ "prefix": "…" }` and `{ "suffix": "…" }` (strings only);
 * - `{ "equals-ignore-case": "…" }`;
 * - `{ "anything-but": value | [values] | { "prefix": "…" } }` (the field must exist);
 * - `{ "exists": true | false }` (on leaf values, as in Lambda: `{"S":[{"exists":true}]}`, not on maps).
 *
 * Anything else (`numeric`, `wildcard`, `cidr`, `$or`) is rejected by {@link validateFilterPattern} with an
 * error naming the operator, rather than silently matching differently from AWS.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";

/** A filter pattern: nested objects whose leaves are arrays of alternatives. */
export type FilterPattern = { readonly [key: string]: FilterPattern | readonly FilterAlternative[] };

/** One alternative of a leaf array. */
export type FilterAlternative =
    | string
    | number
    | boolean
    | null
    | { readonly prefix: string }
    | { readonly suffix: string }
    | { readonly "equals-ignore-case": string }
    | {
          readonly "anything-but":
              string | number | boolean | readonly (string | number | boolean)[] | { readonly prefix: string };
      }
    | { readonly exists: boolean };

/** The operators {@link matchesFilterPattern} understands. */
export const SUPPORTED_FILTER_OPERATORS: readonly string[] = [
    "prefix",
    "suffix",
    "equals-ignore-case",
    "anything-but",
    "exists",
];

function isPlainObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isScalar(value: unknown): value is string | number | boolean | null {
    return value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function invalid(path: string, message: string, value: unknown): OutboxError {
    return new OutboxError(
        "INVALID_CONFIG",
        `filter pattern at ${path || "(root)"}: ${message} (got ${JSON.stringify(value)}); fix the pattern or filter in your handler instead`,
        {
            context: { path: path || "(root)" },
        },
    );
}

function validateAlternative(path: string, alternative: unknown): void {
    if (isScalar(alternative)) return;
    if (!isPlainObject(alternative))
        throw invalid(
            path,
            "a leaf alternative must be a string, number, boolean, null or an operator object",
            alternative,
        );
    const keys = Object.keys(alternative);
    if (keys.length !== 1)
        throw invalid(
            path,
            `an operator object must have exactly one key, one of ${SUPPORTED_FILTER_OPERATORS.join(", ")}`,
            alternative,
        );
    const operator = keys[0] as string;
    const operand = alternative[operator];
    switch (operator) {
        case "prefix":
        case "suffix":
        case "equals-ignore-case":
            if (typeof operand !== "string") throw invalid(path, `"${operator}" takes a string`, alternative);
            return;
        case "exists":
            if (typeof operand !== "boolean") throw invalid(path, `"exists" takes true or false`, alternative);
            return;
        case "anything-but":
            if (isPlainObject(operand)) {
                if (Object.keys(operand).length !== 1 || typeof operand.prefix !== "string")
                    throw invalid(path, `"anything-but" with an object supports only { "prefix": "…" }`, alternative);
                return;
            }
            if (
                Array.isArray(operand)
                    ? operand.every((v) => isScalar(v) && v !== null)
                    : isScalar(operand) && operand !== null
            )
                return;
            throw invalid(path, `"anything-but" takes a value, an array of values or { "prefix": "…" }`, alternative);
        default:
            throw invalid(
                path,
                `operator "${operator}" is not supported by the local matcher; supported: ${SUPPORTED_FILTER_OPERATORS.join(", ")}`,
                alternative,
            );
    }
}

function validateNode(path: string, node: unknown): void {
    if (Array.isArray(node)) {
        if (node.length === 0) throw invalid(path, "a leaf array must hold at least one alternative", node);
        for (const alternative of node) validateAlternative(path, alternative);
        return;
    }
    if (!isPlainObject(node))
        throw invalid(
            path,
            'a pattern value must be an object or an array of alternatives (write ["x"], not "x")',
            node,
        );
    for (const [key, child] of Object.entries(node)) {
        if (key.startsWith("$"))
            throw invalid(
                path ? `${path}.${key}` : key,
                `"${key}" is not supported by the local matcher; supported: ${SUPPORTED_FILTER_OPERATORS.join(", ")}`,
                child,
            );
        validateNode(path ? `${path}.${key}` : key, child);
    }
}

/**
 * Check that `pattern` is well formed and uses only {@link SUPPORTED_FILTER_OPERATORS}.
 *
 * @param pattern - The pattern, as an object (not the JSON string).
 * @throws OutboxError `INVALID_CONFIG` naming the path, the bad value and what is allowed.
 */
export function validateFilterPattern(pattern: unknown): asserts pattern is FilterPattern {
    if (!isPlainObject(pattern)) throw invalid("", "a filter pattern must be a JSON object", pattern);
    validateNode("", pattern);
}

function matchesOne(alternative: FilterAlternative, value: unknown, present: boolean): boolean {
    if (!isPlainObject(alternative)) return present && value === alternative;
    if ("exists" in alternative) return alternative.exists ? present && !isPlainObject(value) : !present;
    if (!present) return false;
    if ("prefix" in alternative) return typeof value === "string" && value.startsWith(alternative.prefix);
    if ("suffix" in alternative) return typeof value === "string" && value.endsWith(alternative.suffix);
    if ("equals-ignore-case" in alternative) {
        return typeof value === "string" && value.toLowerCase() === alternative["equals-ignore-case"].toLowerCase();
    }
    const operand = alternative["anything-but"];
    if (isPlainObject(operand))
        return typeof value === "string" && !value.startsWith((operand as { prefix: string }).prefix);
    const excluded: readonly unknown[] = Array.isArray(operand) ? operand : [operand];
    return isScalar(value) && !excluded.includes(value);
}

function matchesLeaf(alternatives: readonly FilterAlternative[], value: unknown, present: boolean): boolean {
    if (present && Array.isArray(value)) {
        return value.some((element) => alternatives.some((alternative) => matchesOne(alternative, element, true)));
    }
    return alternatives.some((alternative) => matchesOne(alternative, value, present));
}

function matchesNode(pattern: FilterPattern, value: unknown): boolean {
    const object = isPlainObject(value) ? value : undefined;
    for (const [key, child] of Object.entries(pattern)) {
        const present =
            object !== undefined && Object.prototype.hasOwnProperty.call(object, key) && object[key] !== undefined;
        const childValue = present ? (object as Record<string, unknown>)[key] : undefined;
        const ok = Array.isArray(child)
            ? matchesLeaf(child as readonly FilterAlternative[], childValue, present)
            : matchesNode(child as FilterPattern, childValue);
        if (!ok) return false;
    }
    return true;
}

/**
 * Whether `event` (e.g. a Lambda DynamoDB stream record) matches `pattern`, as Lambda's event filtering
 * decides it for the supported operators. Validate the pattern once with {@link validateFilterPattern}.
 *
 * @param pattern - The filter pattern object.
 * @param event - The record in Lambda's shape (attribute values as `{ "S": "…" }`).
 */
export function matchesFilterPattern(pattern: FilterPattern, event: unknown): boolean {
    return matchesNode(pattern, event);
}

/**
 * Whether `event` matches any of `patterns` (Lambda's `FilterCriteria.Filters` are OR-ed).
 * An empty list matches everything, as a mapping without filter criteria does.
 */
export function matchesAnyFilterPattern(patterns: readonly FilterPattern[], event: unknown): boolean {
    return patterns.length === 0 || patterns.some((p) => matchesFilterPattern(p, event));
}
