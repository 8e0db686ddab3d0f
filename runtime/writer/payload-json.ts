/**
 * What a payload may hold: plain JSON data that `JSON.stringify` writes without changing or dropping anything, in
 * characters SNS and the DLQ take. The writer walks the payload before it serializes it, so an error names the
 * path of the first part that would not reach consumers intact, and the fix.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import { invalidPayload } from "../record/payload-error";
import { unsendableCharacter } from "../record/message";
import { characterAt, characterProblem, rawIndex } from "./sendable-text";

/**
 * How deep a payload may nest (objects and arrays): deeper, it is refused. `JSON.stringify` itself throws a raw
 * `RangeError` (the call stack) a few thousand levels down (a 20,000-deep array does, on Node 22).
 */
export const MAX_PAYLOAD_DEPTH = 1000;

/** The first part of a payload that would not survive as JSON: the text, and a refused character's place. */
interface PayloadProblem {
    readonly message: string;
    readonly codePoint?: string;
    readonly position?: number;
}

/**
 * Throw `INVALID_PAYLOAD` when `text` holds a character SNS or the DLQ refuses, naming `field`, the character, its
 * index and the message.
 */
export function refuseUnsendable(text: string, field: string, id: string, index: number): void {
    const bad = characterProblem(text, field);
    if (bad !== undefined)
        throw invalidPayload(`${bad.message} (message id "${id}")`, {
            messageId: id,
            messageIndex: index,
            character: bad.codePoint,
            position: bad.position,
        });
}

/** A key for an error message: JSON-quoted, with U+FFFE and U+FFFF (which JSON leaves raw) escaped too. */
function printable(key: string): string {
    return JSON.stringify(key).replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function childPath(path: string, key: string): string {
    return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Built-in objects `JSON.stringify` writes as `{}` (or an object of indexes), losing their contents silently. */
function lossyObjectProblem(value: object): string | undefined {
    if (value instanceof Map)
        return "a Map, which JSON writes as {} (its entries are lost); convert it, e.g. Object.fromEntries(map)";
    if (value instanceof Set) return "a Set, which JSON writes as {} (its values are lost); convert it, e.g. [...set]";
    if (value instanceof WeakMap || value instanceof WeakSet)
        return "a WeakMap or WeakSet, which JSON writes as {}; pass plain data";
    if (value instanceof Promise) return "a Promise, which JSON writes as {}; await it first";
    if (value instanceof RegExp) return "a RegExp, which JSON writes as {}; send its source as a string";
    if (value instanceof Error)
        return "an Error, which JSON writes as {} (message and stack are not enumerable); send { name, message } instead";
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value))
        return "binary data (ArrayBuffer or a typed array), which JSON writes as {} or an object of indexes; send it base64-encoded or as Array.from(...)";
    return undefined;
}

/** A path for an error message: at most 160 characters, its start and its end kept. */
function shortPath(path: string): string {
    return path.length <= 160 ? path : `${path.slice(0, 100)}…${path.slice(-59)}`;
}

/** A payload part that threw while the writer read it: a `toJSON`, a getter, a Proxy trap. */
class PayloadReadError extends Error {
    constructor(
        readonly path: string,
        readonly what: string,
        readonly thrown: unknown,
    ) {
        super(`${shortPath(path)} ${what} threw (${describeThrown(thrown)})`);
    }
}

function describeThrown(thrown: unknown): string {
    const text = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
    return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** `read()`, or a {@link PayloadReadError} naming `path` and what was being read when it threw. */
function readPart<T>(path: string, what: string, read: () => T): T {
    try {
        return read();
    } catch (err) {
        throw err instanceof PayloadReadError ? err : new PayloadReadError(path, what, err);
    }
}

/** The value JSON writes for `value`: what its `toJSON` returns, a boxed primitive unboxed. */
function jsonValueOf(value: unknown, path: string, key: string): unknown {
    if (
        value !== null &&
        typeof value === "object" &&
        typeof readPart(path, "(its toJSON property)", () => (value as { toJSON?: unknown }).toJSON) === "function"
    ) {
        const holder = value as { toJSON(key: string): unknown };
        value = readPart(path, "toJSON()", () => holder.toJSON(key));
    }
    if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
    return value;
}

/**
 * The first part of a payload that `JSON.stringify` would change or drop silently, or whose JSON text SQS and SNS
 * refuse, as `"<path> is …; fix"`; `undefined` when the payload survives intact. A key whose value is `undefined`
 * is allowed and left out, as JSON does (TypeScript's optional properties are routinely `undefined`). Cycles
 * are left to `JSON.stringify`, which names them.
 *
 * @throws PayloadReadError when reading a part throws (a `toJSON`, a getter, a Proxy trap).
 */
function payloadProblem(value: unknown, path: string, key: string, ancestors: object[]): PayloadProblem | undefined {
    if (value instanceof Date && Number.isNaN(value.getTime()))
        return {
            message: `${shortPath(path)} is an Invalid Date, which JSON writes as null; pass a valid Date or null`,
        };
    const json = jsonValueOf(value, path, key);
    if (typeof json === "object") return json === null ? undefined : objectProblem(json, path, ancestors);
    return scalarProblem(json, path);
}

/** What is wrong with a value JSON writes as a scalar (or drops), if anything. */
function scalarProblem(value: unknown, path: string): PayloadProblem | undefined {
    switch (typeof value) {
        case "string": {
            // Judged on its JSON form: JSON escapes control characters and lone surrogates, but not U+FFFE/U+FFFF.
            const bad = unsendableCharacter(JSON.stringify(value));
            if (bad === undefined) return undefined;
            return characterAt(shortPath(path), bad.codePoint, rawIndex(value, bad.codePoint));
        }
        case "number":
            return Number.isFinite(value)
                ? undefined
                : {
                      message: `${shortPath(path)} is ${value}, which JSON writes as null; send null or a string instead`,
                  };
        case "bigint":
            return {
                message: `${shortPath(path)} is a BigInt (${value}n), which JSON cannot hold; convert it to a string`,
            };
        case "function":
        case "symbol":
        case "undefined":
            return {
                message: `${shortPath(path)} is ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}, which JSON drops from an object and writes as null in an array; pass data only (null for "no value")`,
            };
        default:
            return undefined;
    }
}

/** What is wrong with an object or an array, or with the first of its parts that is wrong. */
function objectProblem(value: object, path: string, ancestors: object[]): PayloadProblem | undefined {
    if (ancestors.includes(value)) return undefined;
    const lossy = readPart(path, "(its prototype)", () => lossyObjectProblem(value));
    if (lossy !== undefined) return { message: `${shortPath(path)} is ${lossy}` };
    if (ancestors.length >= MAX_PAYLOAD_DEPTH) {
        return {
            message: `${shortPath(path)} is nested ${ancestors.length + 1} levels deep; a payload nests at most ${MAX_PAYLOAD_DEPTH} levels of objects and arrays (JSON.stringify overflows its call stack a few thousand levels down); flatten it`,
        };
    }
    ancestors.push(value);
    try {
        return Array.isArray(value)
            ? arrayProblem(value, path, ancestors)
            : propertiesProblem(value as Record<string, unknown>, path, ancestors);
    } finally {
        ancestors.pop();
    }
}

function arrayProblem(value: unknown[], path: string, ancestors: object[]): PayloadProblem | undefined {
    const length = readPart(path, "(its length)", () => value.length);
    for (let i = 0; i < length; i++) {
        const itemPath = `${path}[${i}]`;
        if (!readPart(itemPath, "(the in check)", () => i in value))
            return {
                message: `${shortPath(itemPath)} is a hole in a sparse array, which JSON writes as null; fill it (e.g. with null)`,
            };
        const problem = payloadProblem(
            readPart(itemPath, "(its getter)", () => value[i]),
            itemPath,
            String(i),
            ancestors,
        );
        if (problem !== undefined) return problem;
    }
    return undefined;
}

function propertiesProblem(
    record: Record<string, unknown>,
    path: string,
    ancestors: object[],
): PayloadProblem | undefined {
    for (const name of readPart(path, "(listing its keys)", () => Object.keys(record))) {
        const badKey = unsendableCharacter(JSON.stringify(name));
        if (badKey !== undefined)
            return characterAt(
                `${shortPath(path)} key ${printable(name)}`,
                badKey.codePoint,
                rawIndex(name, badKey.codePoint),
            );
        const child = readPart(childPath(path, name), "(its getter)", () => record[name]);
        if (child === undefined) continue;
        const problem = payloadProblem(child, childPath(path, name), name, ancestors);
        if (problem !== undefined) return problem;
    }
    return undefined;
}

/**
 * A message's payload as the JSON text the record stores and SNS sends.
 *
 * @param payload - The message's payload.
 * @param where - The message in the request, e.g. `messages[2]`.
 * @param id - The message id, for the error.
 * @param index - The message's index, for the error's context.
 * @throws OutboxError `INVALID_PAYLOAD` naming the first part that would not reach consumers intact, or a part
 *   that threw when read.
 */
export function serializePayload(payload: unknown, where: string, id: string, index: number): string {
    if (payload !== undefined && typeof payload !== "function" && typeof payload !== "symbol")
        checkPayloadParts(payload, where, id, index);
    let text: string | undefined;
    try {
        text = JSON.stringify(payload);
    } catch (cause) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `${where}.payload is not JSON-serializable (${cause instanceof Error ? cause.message : String(cause)}); pass plain data: no cycles, no BigInt (convert it to a string)`,
            {
                cause,
                context: { messageId: id },
            },
        );
    }
    if (text === undefined) {
        throw invalidPayload(
            `${where}.payload is ${typeof payload}, which JSON cannot represent; pass a JSON value (object, array, string, number, boolean or null)`,
            { messageId: id },
        );
    }
    // Defence in depth: the walk above names the path; this holds even for a toJSON that answers differently twice.
    refuseUnsendable(text, `${where}.payload's JSON text`, id, index);
    return text;
}

/** Walk the payload: throw for its first part JSON would change or drop, or that throws when read. */
function checkPayloadParts(payload: unknown, where: string, id: string, index: number): void {
    let problem;
    try {
        problem = payloadProblem(payload, `${where}.payload`, "", []);
    } catch (err) {
        if (!(err instanceof PayloadReadError)) throw err;
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `${where}.payload (message id "${id}") cannot be read as JSON: ${err.message}; pass plain data (no toJSON, getter or Proxy that throws)`,
            { cause: err.thrown, context: { messageId: id, messageIndex: index } },
        );
    }
    if (problem !== undefined) {
        throw invalidPayload(
            `${where}.payload (message id "${id}") would not reach consumers intact: ${problem.message}`,
            { messageId: id, messageIndex: index, character: problem.codePoint, position: problem.position },
        );
    }
}
