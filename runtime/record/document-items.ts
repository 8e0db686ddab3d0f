/**
 * Items in the DocumentClient's shape (`@aws-sdk/lib-dynamodb`: native values, as ElectroDB's and
 * dynamodb-toolbox's `params()` build them) beside the SDK's AttributeValue maps, both ways. An AttributeValue map
 * cannot be told apart from a native one safely (a native attribute `{ S: "x" }` is a valid map), so each shape
 * has its own field: `items` takes AttributeValue maps, `documentItems` native ones. The writer's `write` and the
 * inbox's `apply` both take the two fields, so the module sits in record/, below them both.
 *
 * @packageDocumentation
 */
import type { AttributeValue, TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { convertToAttr, marshall, unmarshall, type NativeAttributeValue } from "@aws-sdk/util-dynamodb";
import { OutboxError } from "../errors";

/** Native attribute values, as `@aws-sdk/lib-dynamodb` takes them (`NumberValue` for numbers past 2^53). */
export type DocumentAttributes = Record<string, NativeAttributeValue>;

/**
 * An SDK action's fields (`T`, e.g. `Put`), with native values in place of its AttributeValue maps (`K`); all
 * optional, as the libraries type them.
 */
export type DocumentAction<T, K extends keyof T> = { readonly [P in Exclude<keyof T, K>]?: T[P] } & {
    readonly [P in K]?: DocumentAttributes;
};

/**
 * One action of a transaction in the DocumentClient's shape: `@aws-sdk/lib-dynamodb`'s `TransactWriteCommand`
 * input item, what ElectroDB's and dynamodb-toolbox's `params()` return for a transaction. Its fields are optional
 * in the type, as those libraries type them; the writer checks them at run time (a `TableName`, and an `Item` on a
 * Put, a `Key` on the others).
 */
export interface DocumentTransactWriteItem {
    /** A Put with a native `Item`. @default undefined */
    readonly Put?: DocumentAction<NonNullable<TransactWriteItem["Put"]>, "Item" | "ExpressionAttributeValues">;
    /** An Update with a native `Key`. @default undefined */
    readonly Update?: DocumentAction<NonNullable<TransactWriteItem["Update"]>, "Key" | "ExpressionAttributeValues">;
    /** A Delete with a native `Key`. @default undefined */
    readonly Delete?: DocumentAction<NonNullable<TransactWriteItem["Delete"]>, "Key" | "ExpressionAttributeValues">;
    /** A ConditionCheck with a native `Key`. @default undefined */
    readonly ConditionCheck?: DocumentAction<
        NonNullable<TransactWriteItem["ConditionCheck"]>,
        "Key" | "ExpressionAttributeValues"
    >;
}

/**
 * An SDK action's fields (`T`) as the SDK types them, with native values in place of its AttributeValue maps: `K`
 * (`Item` of a Put, `Key` of the others) as required as the SDK has it, `ExpressionAttributeValues` optional. This is
 * the action type of `@aws-sdk/lib-dynamodb`'s `TransactWriteCommand` (its `TransactWritePut`, …).
 */
export type DocumentCommandAction<T, K extends keyof T> = Omit<T, K | "ExpressionAttributeValues"> & {
    [P in K]: DocumentAttributes | undefined;
} & { ExpressionAttributeValues?: DocumentAttributes | undefined };

/**
 * One action as `@aws-sdk/lib-dynamodb`'s `TransactWriteCommand` takes it in `TransactItems`: what
 * {@link documentTransactItems} returns. It also goes back into `documentItems` as it is.
 */
export interface DocumentTransactWriteCommandItem {
    /** A Put with a native `Item`. @default undefined */
    Put?: DocumentCommandAction<NonNullable<TransactWriteItem["Put"]>, "Item">;
    /** An Update with a native `Key`. @default undefined */
    Update?: DocumentCommandAction<NonNullable<TransactWriteItem["Update"]>, "Key">;
    /** A Delete with a native `Key`. @default undefined */
    Delete?: DocumentCommandAction<NonNullable<TransactWriteItem["Delete"]>, "Key">;
    /** A ConditionCheck with a native `Key`. @default undefined */
    ConditionCheck?: DocumentCommandAction<NonNullable<TransactWriteItem["ConditionCheck"]>, "Key">;
}

const KINDS = ["Put", "Update", "Delete", "ConditionCheck"] as const;
type Kind = (typeof KINDS)[number];
/** The attribute maps of each kind: what lib-dynamodb's TransactWriteCommand marshalls. */
const MAPS: Record<Kind, readonly ("Item" | "Key" | "ExpressionAttributeValues")[]> = {
    Put: ["Item", "ExpressionAttributeValues"],
    Update: ["Key", "ExpressionAttributeValues"],
    Delete: ["Key", "ExpressionAttributeValues"],
    ConditionCheck: ["Key", "ExpressionAttributeValues"],
};
const REQUIRED: Record<Kind, "Item" | "Key"> = { Put: "Item", Update: "Key", Delete: "Key", ConditionCheck: "Key" };

function typeName(value: unknown): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "object") {
        const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
        return name === undefined || name === "Object" ? "an object" : `an instance of ${name}`;
    }
    if (typeof value === "number") return `the number ${value}`;
    return typeof value;
}

/**
 * The attribute maps of an action's body that are present, in {@link MAPS} order, each checked to be an object as
 * it is reached (a required one must be present).
 *
 * @param shape - What the map must be, as the message says it.
 */
function* presentMaps(
    body: Record<string, unknown>,
    at: { caller: string; where: string; kind: Kind; transactionIndex?: number },
    shape: string,
): Generator<[(typeof MAPS)[Kind][number], object]> {
    const { caller, where, kind, transactionIndex } = at;
    for (const field of MAPS[kind]) {
        const map = body[field];
        if (map === undefined && field !== REQUIRED[kind]) continue;
        if (typeof map !== "object" || map === null || Array.isArray(map))
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `${caller}: ${where} (${kind}).${field} must be ${shape}, got ${typeName(map)}`,
                {
                    context: {
                        where,
                        action: kind,
                        attribute: field,
                        ...(transactionIndex !== undefined ? { transactionIndex } : {}),
                    },
                },
            );
        yield [field, map];
    }
}

/** The kind of an action: exactly one of Put, Update, Delete, ConditionCheck. */
function kindOf(action: unknown, where: string, fix: string, caller = "write"): Kind {
    const kinds =
        typeof action === "object" && action !== null
            ? KINDS.filter((k) => (action as Record<string, unknown>)[k] !== undefined)
            : [];
    if (kinds.length !== 1)
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `${caller}: ${where} must hold exactly one of Put, Update, Delete or ConditionCheck, got ${typeName(action)}${kinds.length > 1 ? ` with ${kinds.join(" and ")}` : ""}; ${fix}`,
            { context: { where } },
        );
    return kinds[0]!;
}

const DOCUMENT_FIX =
    "documentItems take what @aws-sdk/lib-dynamodb's marshall accepts with its default options: strings, numbers up to 2^53 (NumberValue past it), booleans, null, Uint8Array, arrays, Sets and plain objects";

/** The path and type of the first value `convertToAttr` refuses under `value`, depth first. */
function refusedLeaf(value: unknown, path: string): { path: string; value: unknown } {
    if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i += 1) {
            if (refuses(value[i])) return refusedLeaf(value[i], `${path}[${i}]`);
        }
    } else if (
        typeof value === "object" &&
        value !== null &&
        (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)
    ) {
        for (const [key, child] of Object.entries(value)) {
            if (refuses(child)) return refusedLeaf(child, `${path}.${key}`);
        }
    }
    return { path, value };
}

/** The path of the first function under `value` (in plain objects, arrays and Sets), depth first. */
function functionLeaf(value: unknown, path: string): string | undefined {
    if (typeof value === "function") return path;
    if (Array.isArray(value) || value instanceof Set) {
        let i = 0;
        for (const child of value) {
            const found = functionLeaf(child, `${path}[${i}]`);
            if (found !== undefined) return found;
            i += 1;
        }
    } else if (typeof value === "object" && value !== null && !(value instanceof Uint8Array)) {
        for (const [key, child] of Object.entries(value)) {
            const found = functionLeaf(child, `${path}.${key}`);
            if (found !== undefined) return found;
        }
    }
    return undefined;
}

function refuses(value: unknown): boolean {
    // marshall refuses undefined inside a map, a list or a set (its default removeUndefinedValues: false).
    if (value === undefined) return true;
    try {
        convertToAttr(value as NativeAttributeValue);
        return false;
    } catch {
        return true;
    }
}

/**
 * Marshall `documentItems` exactly as `@aws-sdk/lib-dynamodb`'s `TransactWriteCommand` does with its default
 * options (its `Item`, `Key` and `ExpressionAttributeValues`, through `@aws-sdk/util-dynamodb`), all before
 * anything is sent.
 *
 * @param documentItems - The actions in the DocumentClient's shape.
 * @param offset - Where they start in the transaction (after `items`), for messages. @default 0
 * @param caller - Who is marshalling, first in every error message (`write`, `inbox "billing" (…)`). @default "write"
 * @throws OutboxError `INVALID_PAYLOAD` naming the action (index, kind), the attribute path, the bad value's type
 *   and the fix, for a value marshall refuses (undefined, a function, a class instance, a number past 2^53 that is
 *   not a NumberValue…).
 */
export function marshallDocumentItems(
    documentItems: readonly unknown[],
    offset = 0,
    caller = "write",
): TransactWriteItem[] {
    return documentItems.map((action, i) => {
        const where = `documentItems[${i}]`;
        const kind = kindOf(action, where, "a DocumentClient TransactWriteCommand's TransactItems entry", caller);
        const body = (action as unknown as Record<Kind, Record<string, unknown>>)[kind];
        const out: Record<string, unknown> = { ...body };
        if (typeof body.TableName !== "string" || body.TableName === "")
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `${caller}: ${where} (${kind}).TableName must name a table, got ${typeName(body.TableName)}`,
                { context: { where, action: kind, attribute: "TableName", transactionIndex: offset + i } },
            );
        const at = { caller, where, kind, transactionIndex: offset + i };
        for (const [field, map] of presentMaps(body, at, "an object of native values")) {
            const dropped = functionLeaf(map, field);
            if (dropped !== undefined)
                throw new OutboxError(
                    "INVALID_PAYLOAD",
                    `${caller}: ${where} (${kind}): ${dropped} is a function, which lib-dynamodb's marshall drops without a word; remove it or store what it computes`,
                    {
                        context: {
                            where,
                            action: kind,
                            attribute: dropped,
                            valueType: "function",
                            transactionIndex: offset + i,
                        },
                    },
                );
            try {
                out[field] = marshall(map as DocumentAttributes) as Record<string, AttributeValue>;
            } catch (err) {
                {
                    const leaf = refusedLeaf(map, field);
                    throw new OutboxError(
                        "INVALID_PAYLOAD",
                        `${caller}: ${where} (${kind}) cannot be marshalled: ${leaf.path} is ${typeName(leaf.value)} (${err instanceof Error ? err.message : String(err)}); ${DOCUMENT_FIX}`,
                        {
                            cause: err,
                            context: {
                                where,
                                action: kind,
                                attribute: leaf.path,
                                valueType: typeName(leaf.value),
                                transactionIndex: offset + i,
                            },
                        },
                    );
                }
            }
        }
        return { [kind]: out } as TransactWriteItem;
    });
}

// An array, not a Set: the inbox's Lambda code is serialized by value, and a captured module-level Set breaks there.
const SCALAR_KEYS: readonly string[] = ["S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"];

/** Why `value` is not an AttributeValue, or undefined when it is one. */
function notAttributeValue(value: unknown, path: string): { path: string; why: string } | undefined {
    if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof Uint8Array)
        return { path, why: `${typeName(value)}, not an AttributeValue such as { S: "…" } or { N: "42" }` };
    const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined);
    if (keys.length !== 1 || !SCALAR_KEYS.includes(keys[0]!))
        return {
            path,
            why: `an object with ${keys.length === 0 ? "no keys" : keys.map((k) => JSON.stringify(k)).join(", ")}, not an AttributeValue (exactly one of S, N, B, SS, NS, BS, M, L, NULL, BOOL)`,
        };
    const key = keys[0]!;
    const inner = (value as Record<string, unknown>)[key];
    const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === "string");
    switch (key) {
        case "S":
        case "N":
            return typeof inner === "string"
                ? undefined
                : { path, why: `{ ${key}: ${typeName(inner)} }: ${key} takes a string` };
        case "B":
            return inner instanceof Uint8Array
                ? undefined
                : { path, why: `{ B: ${typeName(inner)} }: B takes a Uint8Array` };
        case "BOOL":
            return typeof inner === "boolean"
                ? undefined
                : { path, why: `{ BOOL: ${typeName(inner)} }: BOOL takes a boolean` };
        case "NULL":
            return inner === true ? undefined : { path, why: `{ NULL: ${typeName(inner)} }: NULL takes true` };
        case "SS":
        case "NS":
            return strings(inner)
                ? undefined
                : { path, why: `{ ${key}: ${typeName(inner)} }: ${key} takes an array of strings` };
        case "BS":
            return Array.isArray(inner) && inner.every((b) => b instanceof Uint8Array)
                ? undefined
                : { path, why: `{ BS: ${typeName(inner)} }: BS takes an array of Uint8Array` };
        case "L":
            if (!Array.isArray(inner))
                return { path, why: `{ L: ${typeName(inner)} }: L takes an array of AttributeValues` };
            for (let i = 0; i < inner.length; i += 1) {
                const bad = notAttributeValue(inner[i], `${path}[${i}]`);
                if (bad !== undefined) return bad;
            }
            return undefined;
        default: {
            if (typeof inner !== "object" || inner === null || Array.isArray(inner))
                return { path, why: `{ M: ${typeName(inner)} }: M takes an object of AttributeValues` };
            for (const [name, child] of Object.entries(inner)) {
                const bad = notAttributeValue(child, `${path}.${name}`);
                if (bad !== undefined) return bad;
            }
            return undefined;
        }
    }
}

/**
 * Check that `items` are AttributeValue maps, before anything is sent: the SDK sends a native item as it is and
 * DynamoDB's refusal names nothing.
 *
 * @param items - The actions in the SDK's `TransactWriteItem` shape.
 * @param caller - Who is checking, first in every error message. @default "write"
 * @throws OutboxError `INVALID_PAYLOAD` naming the action (index, kind), the attribute path and the bad value's type;
 *   a native value says to pass the action as `documentItems`.
 */
export function checkAttributeValueItems(items: readonly unknown[], caller = "write"): void {
    items.forEach((action, i) => {
        const where = `items[${i}]`;
        const kind = kindOf(action, where, "an SDK TransactWriteItem", caller);
        const body = (action as unknown as Record<Kind, Record<string, unknown>>)[kind];
        for (const [field, map] of presentMaps(body, { caller, where, kind }, "a map of AttributeValues")) {
            for (const [name, value] of Object.entries(map)) {
                const bad = notAttributeValue(value, `${field}.${name}`);
                if (bad !== undefined)
                    throw new OutboxError(
                        "INVALID_PAYLOAD",
                        `${caller}: ${where} (${kind}): ${bad.path} is ${bad.why}; items take the SDK's AttributeValue maps: pass an item of native values (the DocumentClient's shape, e.g. ElectroDB's or dynamodb-toolbox's params()) as documentItems`,
                        { context: { where, action: kind, attribute: bad.path } },
                    );
            }
        }
    });
}

/**
 * The outbox's actions in the DocumentClient's shape, for a team that sends its own `@aws-sdk/lib-dynamodb`
 * `TransactWriteCommand`: each `Item`, `Key` and `ExpressionAttributeValues` unmarshalled with numbers wrapped as
 * `NumberValue`, so a keyless record's `seq` (above 2^53) keeps its precision when lib-dynamodb marshalls it back.
 *
 * @param transactItems - `prepared.input.TransactItems` of {@link OutboxWriter.prepare}, or any SDK actions.
 * @returns The same actions, native values in place of AttributeValue maps, typed as `TransactWriteCommand`'s
 * `TransactItems` (no cast needed).
 */
export function documentTransactItems(transactItems: readonly TransactWriteItem[]): DocumentTransactWriteCommandItem[] {
    return transactItems.map((action, i) => {
        const kind = kindOf(action, `transactItems[${i}]`, "an SDK TransactWriteItem");
        const body = (action as unknown as Record<Kind, Record<string, unknown>>)[kind];
        const out: Record<string, unknown> = { ...body };
        for (const field of MAPS[kind]) {
            const map = body[field];
            if (map !== undefined)
                out[field] = unmarshall(map as Record<string, AttributeValue> as never, { wrapNumbers: true });
        }
        return { [kind]: out } as DocumentTransactWriteCommandItem;
    });
}
