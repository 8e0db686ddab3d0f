/**
 * The application side of the outbox: write your own items and the events they imply in ONE DynamoDB
 * transaction, so a committed change always has its events waiting and a failed one has none.
 *
 * @packageDocumentation
 */
import {
    TransactWriteItemsCommand,
    UpdateItemCommand,
    type ConsumedCapacity,
    type DynamoDBClient,
    type ReturnConsumedCapacity,
    type TransactWriteItem,
    type TransactWriteItemsCommandInput,
    type AttributeValue,
    type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { OutboxError, type OutboxErrorCode } from "./errors";
import { awsErrorName, cancellationCodes, classifyAwsError, isTransactionCanceled, wrapAwsError } from "./store/aws-errors";
import { idGuardFree, placeholders, skAbsent } from "./store/expressions";
import { raiseExpiryShards } from "./store/expiry-shards-row";
import { allocateSeqRange } from "./store/seq-allocation";
import { checkWriterClock } from "./store/writer-clock";
import { integerIn } from "./integer-setting";
import { actionSize, cancellationReasonCode, describeAction, describeValue, transactionActionSize } from "./transact-items";
import { HANDLER_LIMITS, WRITER_LIMITS } from "./limits";
import { createIdGenerator, type IdGenerator } from "./ids";
import { itemSize, MAX_ITEM_BYTES, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES, utf8Length } from "./item-size";
import {
    attributeBudgetOverrun,
    DLQ_MAX_MESSAGE_BYTES,
    headerNameProblem,
    MAX_HEADERS,
    SNS_MAX_ATTRIBUTES,
    SNS_MAX_MESSAGE_BYTES,
    snsMessageSize,
    unsendableCharacter,
    worstCaseDeadLetterSize,
    type OutboundMessage,
} from "./message";
import { silentLogger, systemClock, type Clock, type Logger } from "./ports";
import { marshalRecord, pendingRecord, type AttributeMap } from "./record/codec";
import { goJsonStringify } from "./record/envelope";
import { fenceTtlSeconds } from "./record/fence";
import { recordSortKey } from "./record/keys";
import { idGuardItem, readIdGuard } from "./record/id-guard";
import { activeTraceContext, loadOpenTelemetryApi, type OpenTelemetryApi } from "./open-telemetry";
import { tracestateProblem, traceparentProblem, type TraceContext } from "./trace-context";

/** One event to publish, written in the same transaction as the caller's items. */
export interface OutboxMessage {
    /**
     * The partition (`PK`) the record lives in: normally the aggregate's key, e.g. `ORDER#1001`, so the record
     * sits in the aggregate's item collection. Not empty; `#` and `%` are fine; no character SQS or SNS refuse
     * (see {@link unsendableCharacter}).
     */
    readonly partition: string;
    /** The message type, e.g. `OrderCreated`; sent as the `outbox.type` attribute. Not empty; no character SQS or SNS refuse. */
    readonly type: string;
    /**
     * The payload: plain JSON data, sent as the message body (its `JSON.stringify` text). Refused, with the path
     * named: cycles, BigInt, NaN, ±Infinity, Map, Set and other built-ins JSON writes as `{}`, functions, symbols,
     * `undefined` or holes in arrays, an Invalid Date, and U+FFFE/U+FFFF in strings or keys. A key whose value is
     * `undefined` is left out, as JSON does; a `Date` is written by its `toJSON`.
     */
    readonly payload: unknown;
    /**
     * Headers sent as String message attributes, e.g. `{ tenant: "acme" }`: a plain object (not a Map) of
     * non-empty string values without characters SQS or SNS refuse. At most {@link MAX_HEADERS} (8), one fewer
     * for a `traceparent` and one more fewer for a `tracestate`: SNS carries 10 message attributes, and the outbox
     * adds `outbox.id`, `outbox.type` and the trace context. Names follow SNS attribute rules, are not
     * `__proto__`, `traceparent` or `tracestate` (any case), and may not start with `x-bridge.`, `outbox.`, `AWS.`
     * or `Amazon.`.
     * @default {}
     */
    readonly headers?: Readonly<Record<string, string>>;
    /**
     * The W3C `traceparent` of the work that writes the message (e.g. the incoming request's), so the consumer's
     * span can link to it: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, ids not all zeros
     * (W3C Trace Context Level 1). Stored as the record's `traceparent` envelope header and sent as the
     * `traceparent` String message attribute; the DLQ message and a redrive keep it.
     * @default the active OpenTelemetry span's, when `@opentelemetry/api` is installed, a span is active and
     *   {@link OutboxWriterOptions.traceContext} is `"active"`; else none
     */
    readonly traceparent?: string;
    /**
     * The W3C `tracestate` that goes with `traceparent` (only with one): comma-separated `key=value` members, at
     * most 32 and 512 characters. Stored and sent as `tracestate`.
     * @default the active span's trace state, when the trace context is the active span's; else none
     */
    readonly tracestate?: string;
    /**
     * Messages with the same ordering key (within one partition) are published strictly in write order, through
     * the store's claim path. Costs one small extra write per partition per `write()`.
     * @default undefined (keyless: batched, no order promised)
     */
    readonly orderingKey?: string;
    /** After this instant the message is not published: it goes to the DLQ with reason `expired`. @default never */
    readonly expiresAt?: Date;
    /**
     * The message id: the record id, the envelope id in the sort key, the SNS FIFO `MessageDeduplicationId` and
     * the id consumers deduplicate on. 1–128 printable ASCII characters without spaces (the SNS FIFO
     * deduplication id alphabet). Unique across the table: the transaction also puts an id guard row that claims
     * it (one more transaction action, 2 WCU), so a write reusing an id held by a record in another partition is
     * refused (`INVALID_PAYLOAD`), and one repeating a write in the same partition is `DUPLICATE_RECORD`.
     * @default a new ULID (sortable, unique; needs no guard)
     */
    readonly id?: string;
}

/** One call of {@link OutboxWriter.write}. */
export interface WriteRequest {
    /** The events. Each becomes one outbox record in the transaction. */
    readonly messages: readonly OutboxMessage[];
    /**
     * Your own Put/Update/Delete/ConditionCheck actions, in SDK `TransactWriteItem` form (each names its table).
     * They come first in the transaction, messages after.
     * @default []
     */
    readonly items?: readonly TransactWriteItem[];
    /**
     * Makes the transaction idempotent for 10 minutes: a retry with the same token and the same request is not
     * applied twice. Pass explicit message `id`s with it, so the retried request is identical.
     * @default undefined
     */
    readonly clientRequestToken?: string;
    /** Ask DynamoDB for the write units consumed (returned in {@link WriteResult.consumedCapacity}). @default "NONE" */
    readonly returnConsumedCapacity?: ReturnConsumedCapacity;
}

/** What {@link OutboxWriter.write} returns. */
export interface WriteResult {
    /** The message ids, in request order. */
    readonly messageIds: string[];
    /** Capacity consumed by the sequence allocations (keyed messages) and the transaction, when requested. */
    readonly consumedCapacity: ConsumedCapacity[];
}

/** A validated write, ready to send: see {@link OutboxWriter.prepare}. */
export interface PreparedWrite {
    /** The message ids, in request order. */
    readonly messageIds: readonly string[];
    /**
     * The exact TransactWriteItems input: your items first, then one conditional Put per message, then one
     * conditional id guard Put per message whose id the writer did not generate.
     */
    readonly input: TransactWriteItemsCommandInput;
    /** Capacity consumed by the keyed messages' sequence allocations, when requested. */
    readonly allocationCapacity: readonly ConsumedCapacity[];
    /** Names the caller's item or message behind a transaction action index, for error messages. */
    readonly describe: (actionIndex: number) => FailedAction;
}

/** Who a failed transaction action belongs to. */
export interface FailedAction {
    /** `item` (one of yours) or `message` (an outbox record). */
    readonly kind: "item" | "message";
    /** Its index in `items` or `messages`. */
    readonly index: number;
    /** The message id, for a message. */
    readonly messageId?: string;
    /** `true` when the action is the message's id guard rather than its record. */
    readonly idGuard?: boolean;
    /** A short description with ids only, e.g. `items[1] (ConditionCheck on table "orders" PK=ORDER#1)`. */
    readonly text: string;
}

/** Options for {@link OutboxWriter}. */
export interface OutboxWriterOptions {
    /** The DynamoDB client (same account and region as the outbox table). */
    readonly client: DynamoDBClient;
    /** The outbox table's name. */
    readonly tableName: string;
    /**
     * The clock for `created_at` and the FENCE row's ttl. A keyed message's `created_at` is never earlier than
     * the latest one already handed out in its partition (see {@link OutboxWriter}). @default systemClock
     */
    readonly clock?: Clock;
    /** Where the writer warns that its clock is behind a partition's last `created_at` (ids and counts only). @default silentLogger */
    readonly logger?: Logger;
    /**
     * Generates message ids when a message has none. The writer cannot know that an injected generator's ids are
     * unique, so each of its ids gets an id guard, as a caller-supplied id does.
     * @default a ULID generator on `clock` (80 random bits per millisecond; its ids need no guard)
     */
    readonly idGenerator?: IdGenerator;
    /** The record's binding id (the destination's name; part of the sort key). @default "sns" */
    readonly bindingId?: string;
    /** The record's egress address, e.g. the topic ARN. Informational: the publisher uses its own topic. @default "" */
    readonly address?: string;
    /**
     * Grace the FENCE row's ttl is at least as long as (it is max(grace, 30 days)); an id guard holds its id for
     * as long after the later of the record's creation and expiry. Whole seconds from 0 to 31536000 (a year).
     * @default 3600
     */
    readonly compactionGraceSeconds?: number;
    /**
     * Check partitions and ordering keys against the SNS FIFO `MessageGroupId` rules (1–128 printable ASCII
     * characters without spaces), because the publisher uses them as group ids on a FIFO topic.
     * @default false
     */
    readonly fifo?: boolean;
    /**
     * ExpiryIndex partition key values expiring messages are spread over, 1 to 64. 1 writes `has_expiry = "1"`, as
     * GoBridge does, and caps the table near 500 expiring messages per second (one key value's write ceiling, two
     * writes per message). N > 1 writes `"1#0"` … `"1#<N-1>"`, chosen from the message id; the writer first raises
     * the table's expiry shards mark (one conditional UpdateItem per writer instance) so the sweeper reads every
     * shard. A GoBridge drainer's Expire queries `"1"` only: see docs/scale.md.
     * @default 1
     */
    readonly expiryShards?: number;
    /**
     * Where a message without a `traceparent` takes its trace context from: `"active"`, the active OpenTelemetry
     * span when `@opentelemetry/api` (an optional peer) is installed, and none without it; `"none"`, nowhere. A
     * message's own `traceparent` always wins. The active context is left out (with a warning on `logger`) of a
     * message whose headers leave no attribute for it; a `traceparent` the message gives is refused instead.
     * @default "active"
     */
    readonly traceContext?: "active" | "none";
}

/** A keyless record's seq is `created_at * SEQ_PER_MS + n`: see {@link OutboxWriter}. */
const SEQ_PER_MS = 1_000_000n;

const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

function invalid(message: string, context: Record<string, string | number | undefined> = {}): OutboxError {
    return new OutboxError("INVALID_PAYLOAD", message, { context });
}

interface PreparedMessage {
    readonly index: number;
    readonly id: string;
    /** The id did not come from the writer's own ULID generator, so the transaction claims it with a guard row. */
    readonly guarded: boolean;
    readonly message: OutboxMessage;
    readonly body: string;
    readonly expiresAtMs: number;
    /** The trace context the record carries: the message's own, or the active span's. */
    readonly trace: TraceContext | undefined;
}

const ALLOWED_CHARACTERS = "tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and U+10000-U+10FFFF: no other control characters (NUL among them), no U+FFFE or U+FFFF, no lone surrogates";

interface CharacterProblem {
    readonly message: string;
    readonly codePoint: string;
    readonly position: number;
}

function characterAt(field: string, codePoint: string, position: number): CharacterProblem {
    return {
        message: `${field} holds ${codePoint} at index ${position}, which SQS (the DLQ) and SNS refuse in a message body or attribute (they accept only ${ALLOWED_CHARACTERS}); remove or replace it (e.g. with U+FFFD), or send the data base64-encoded`,
        codePoint,
        position,
    };
}

/** Why `text` cannot travel to SNS and the DLQ (the character, its index, and the fix), or `undefined`. */
function characterProblem(text: string, field: string): CharacterProblem | undefined {
    const bad = unsendableCharacter(text);
    return bad === undefined ? undefined : characterAt(field, bad.codePoint, bad.index);
}

/** Where a character found in a string's JSON form sits in the string itself (JSON leaves U+FFFE/U+FFFF raw). */
function rawIndex(text: string, codePoint: string): number {
    return text.indexOf(String.fromCodePoint(Number.parseInt(codePoint.slice(2), 16)));
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
    if (value instanceof Map) return "a Map, which JSON writes as {} (its entries are lost); convert it, e.g. Object.fromEntries(map)";
    if (value instanceof Set) return "a Set, which JSON writes as {} (its values are lost); convert it, e.g. [...set]";
    if (value instanceof WeakMap || value instanceof WeakSet) return "a WeakMap or WeakSet, which JSON writes as {}; pass plain data";
    if (value instanceof Promise) return "a Promise, which JSON writes as {}; await it first";
    if (value instanceof RegExp) return "a RegExp, which JSON writes as {}; send its source as a string";
    if (value instanceof Error) return "an Error, which JSON writes as {} (message and stack are not enumerable); send { name, message } instead";
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return "binary data (ArrayBuffer or a typed array), which JSON writes as {} or an object of indexes; send it base64-encoded or as Array.from(...)";
    return undefined;
}

/**
 * How deep a payload may nest (objects and arrays): deeper, it is refused. `JSON.stringify` itself throws a raw
 * `RangeError` (the call stack) a few thousand levels down (a 20,000-deep array does, on Node 22).
 */
export const MAX_PAYLOAD_DEPTH = 1000;

/** A path for an error message: at most 160 characters, its start and its end kept. */
function shortPath(path: string): string {
    return path.length <= 160 ? path : `${path.slice(0, 100)}…${path.slice(-59)}`;
}

/** A payload part that threw while the writer read it: a `toJSON`, a getter, a Proxy trap. */
class PayloadReadError extends Error {
    constructor(readonly path: string, readonly what: string, readonly thrown: unknown) {
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

/**
 * The first part of a payload that `JSON.stringify` would change or drop silently, or whose JSON text SQS and SNS
 * refuse, as `"<path> is …; fix"`; `undefined` when the payload survives intact. A key whose value is `undefined`
 * is allowed and left out, as JSON does (TypeScript's optional properties are routinely `undefined`). Cycles
 * are left to `JSON.stringify`, which names them.
 *
 * @throws PayloadReadError when reading a part throws (a `toJSON`, a getter, a Proxy trap).
 */
function payloadProblem(value: unknown, path: string, key: string, ancestors: object[]): { message: string; codePoint?: string; position?: number } | undefined {
    if (value instanceof Date && Number.isNaN(value.getTime())) return { message: `${shortPath(path)} is an Invalid Date, which JSON writes as null; pass a valid Date or null` };
    if (value !== null && typeof value === "object" && typeof readPart(path, "(its toJSON property)", () => (value as { toJSON?: unknown }).toJSON) === "function") {
        const holder = value as { toJSON(key: string): unknown };
        value = readPart(path, "toJSON()", () => holder.toJSON(key));
    }
    if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
    switch (typeof value) {
        case "string": {
            // Judged on its JSON form: JSON escapes control characters and lone surrogates, but not U+FFFE/U+FFFF.
            const bad = unsendableCharacter(JSON.stringify(value));
            if (bad === undefined) return undefined;
            return characterAt(shortPath(path), bad.codePoint, rawIndex(value, bad.codePoint));
        }
        case "number":
            return Number.isFinite(value) ? undefined : { message: `${shortPath(path)} is ${value}, which JSON writes as null; send null or a string instead` };
        case "bigint":
            return { message: `${shortPath(path)} is a BigInt (${value}n), which JSON cannot hold; convert it to a string` };
        case "function":
        case "symbol":
        case "undefined":
            return { message: `${shortPath(path)} is ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}, which JSON drops from an object and writes as null in an array; pass data only (null for "no value")` };
        case "object": {
            if (value === null || ancestors.includes(value)) return undefined;
            const lossy = readPart(path, "(its prototype)", () => lossyObjectProblem(value));
            if (lossy !== undefined) return { message: `${shortPath(path)} is ${lossy}` };
            if (ancestors.length >= MAX_PAYLOAD_DEPTH) {
                return { message: `${shortPath(path)} is nested ${ancestors.length + 1} levels deep; a payload nests at most ${MAX_PAYLOAD_DEPTH} levels of objects and arrays (JSON.stringify overflows its call stack a few thousand levels down); flatten it` };
            }
            ancestors.push(value);
            try {
                if (Array.isArray(value)) {
                    const length = readPart(path, "(its length)", () => value.length);
                    for (let i = 0; i < length; i++) {
                        const itemPath = `${path}[${i}]`;
                        if (!readPart(itemPath, "(the in check)", () => i in value)) return { message: `${shortPath(itemPath)} is a hole in a sparse array, which JSON writes as null; fill it (e.g. with null)` };
                        const problem = payloadProblem(readPart(itemPath, "(its getter)", () => value[i]), itemPath, String(i), ancestors);
                        if (problem !== undefined) return problem;
                    }
                    return undefined;
                }
                const record = value as Record<string, unknown>;
                for (const name of readPart(path, "(listing its keys)", () => Object.keys(record))) {
                    const badKey = unsendableCharacter(JSON.stringify(name));
                    if (badKey !== undefined) return characterAt(`${shortPath(path)} key ${printable(name)}`, badKey.codePoint, rawIndex(name, badKey.codePoint));
                    const child = readPart(childPath(path, name), "(its getter)", () => record[name]);
                    if (child === undefined) continue;
                    const problem = payloadProblem(child, childPath(path, name), name, ancestors);
                    if (problem !== undefined) return problem;
                }
                return undefined;
            } finally {
                ancestors.pop();
            }
        }
        default:
            return undefined;
    }
}

/**
 * A message's headers, checked: a plain object of non-empty strings that SQS and SNS take, with valid, unreserved
 * names. How many fit is {@link attributeBudgetOverrun}'s to say, once the message's own attributes are known.
 */
function checkHeaders(given: unknown, where: string, id: string, index: number): Readonly<Record<string, string>> {
    const headers = given ?? {};
    if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
        throw invalid(`${where}.headers must be an object of string values, got ${describeValue(headers)}`, { messageId: id });
    }
    if (headers instanceof Map) {
        throw invalid(`${where}.headers is a Map; its entries would be dropped; pass a plain object of string values, e.g. Object.fromEntries(map)`, { messageId: id });
    }
    const proto: unknown = Object.getPrototypeOf(headers);
    if (proto !== Object.prototype && proto !== null) {
        const kind = (proto as { constructor?: { name?: string } }).constructor?.name ?? "object";
        throw invalid(`${where}.headers is a ${kind}, not a plain object; only its own enumerable properties would be sent; pass a plain object of string values, e.g. { tenant: "acme" }`, { messageId: id });
    }
    const record = headers as Record<string, unknown>;
    const names = Object.keys(record);
    // More than SNS carries at all: said before each name is judged (the exact budget comes with the message's own attributes).
    if (names.length > MAX_HEADERS) {
        throw invalid(`${where}.headers has ${names.length} entries; at most ${MAX_HEADERS} fit (SNS carries ${SNS_MAX_ATTRIBUTES} message attributes, 2 are the outbox's, and a trace context takes 1 or 2 more); move the rest into the payload`, { messageId: id, messageIndex: index, headers: names.length, maxHeaders: MAX_HEADERS });
    }
    for (const name of names) {
        const problem = headerNameProblem(name);
        if (problem !== undefined) throw invalid(`${where}.headers name ${describeValue(name)} ${problem}`, { messageId: id });
        const value = record[name];
        if (typeof value !== "string") throw invalid(`${where}.headers["${name}"] is ${describeValue(value)}; header values must be strings`, { messageId: id });
        if (value === "") throw invalid(`${where}.headers["${name}"] is ""; SNS refuses an empty String attribute value; omit the header or give it a value`, { messageId: id, messageIndex: index });
        const bad = characterProblem(value, `${where}.headers["${name}"]`);
        if (bad !== undefined) throw invalid(`${bad.message} (message id "${id}")`, { messageId: id, messageIndex: index, character: bad.codePoint, position: bad.position });
    }
    return record as Readonly<Record<string, string>>;
}

/** The trace context a message gives (`traceparent`, `tracestate`), checked against W3C Trace Context; `undefined` when it gives none. */
function givenTraceContext(message: OutboxMessage, where: string, id: string, index: number): TraceContext | undefined {
    const { traceparent, tracestate } = message;
    if (traceparent === undefined) {
        if (tracestate === undefined) return undefined;
        throw invalid(`${where}.tracestate is given without a traceparent; W3C gives a tracestate meaning only next to its traceparent; pass both, or neither (the writer then takes the active OpenTelemetry span's)`, { messageId: id, messageIndex: index, field: "tracestate" });
    }
    const parentProblem = traceparentProblem(traceparent);
    if (parentProblem !== undefined) {
        throw invalid(`${where}.traceparent (message id "${id}") ${parentProblem}; pass the incoming request's traceparent as it came, or omit it`, { messageId: id, messageIndex: index, field: "traceparent" });
    }
    if (tracestate === undefined) return { traceparent };
    const stateProblem = tracestateProblem(tracestate);
    if (stateProblem !== undefined) {
        throw invalid(`${where}.tracestate (message id "${id}") ${stateProblem}; pass the incoming request's tracestate as it came, or omit it`, { messageId: id, messageIndex: index, field: "tracestate" });
    }
    return { traceparent, tracestate };
}

function serializePayload(payload: unknown, where: string, id: string, index: number): string {
    if (payload !== undefined && typeof payload !== "function" && typeof payload !== "symbol") {
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
            throw invalid(`${where}.payload (message id "${id}") would not reach consumers intact: ${problem.message}`, { messageId: id, messageIndex: index, character: problem.codePoint, position: problem.position });
        }
    }
    let text: string | undefined;
    try {
        text = JSON.stringify(payload);
    } catch (cause) {
        throw new OutboxError("INVALID_PAYLOAD", `${where}.payload is not JSON-serializable (${cause instanceof Error ? cause.message : String(cause)}); pass plain data: no cycles, no BigInt (convert it to a string)`, {
            cause,
            context: { messageId: id },
        });
    }
    if (text === undefined) {
        throw invalid(`${where}.payload is ${typeof payload}, which JSON cannot represent; pass a JSON value (object, array, string, number, boolean or null)`, { messageId: id });
    }
    // Defence in depth: the walk above names the path; this holds even for a toJSON that answers differently twice.
    const bad = characterProblem(text, `${where}.payload's JSON text`);
    if (bad !== undefined) throw invalid(`${bad.message} (message id "${id}")`, { messageId: id, messageIndex: index, character: bad.codePoint, position: bad.position });
    return text;
}

/**
 * Writes the caller's items and outbox records in one `TransactWriteItems`.
 *
 * Sequence numbers (`seq`, and so `claim_sort`): GoBridge allocates them from the partition's FENCE row
 * (`ADD seq_counter`). A message with an ordering key does the same (one small UpdateItem per partition per
 * call, before the transaction), because its key's strict order is `(created_at, seq)`. A keyless message costs
 * no write beyond the transaction: its seq is `created_at × 10^6 + n`, with n counting this writer's messages
 * within the millisecond. That is correct for the store because (1) `seq` only has to be monotonic per
 * partition with gaps allowed, and ordering is `(created_at, seq)`, so seq only breaks ties inside one
 * millisecond; (2) only records sharing an ordering key have an order contract, and keyless records share
 * none; (3) nothing compares a record's seq with `seq_counter`. Keyless records stay oldest-first, best effort,
 * as they are with GoBridge under index lag.
 *
 * Creation time (`created_at`): this writer's clock, except that a keyed message never gets an earlier one than
 * its partition's FENCE row says was last handed out (`last_created_at`). When this clock is behind that (another
 * writer's clock runs ahead), the allocation takes a second UpdateItem and the records carry the fence's time,
 * with a warning on `logger` past one second. So `(created_at, seq)` order is allocation order whatever the
 * clocks say: a write that starts after another committed is published after it.
 *
 * @example
 * const writer = new OutboxWriter({ client, tableName: "orders-outbox" });
 * await writer.write({
 *   items: [{ Put: { TableName: "orders", Item: { PK: { S: "ORDER#1001" }, SK: { S: "META" }, total: { N: "42" } } } }],
 *   messages: [{ partition: "ORDER#1001", type: "OrderCreated", payload: { orderId: 1001, total: 42 } }],
 * });
 */
export class OutboxWriter {
    private readonly client: DynamoDBClient;
    private readonly tableName: string;
    private readonly clock: Clock;
    private readonly logger: Logger;
    private readonly nextId: IdGenerator;
    private readonly generatedIdsNeedGuard: boolean;
    private readonly bindingId: string;
    private readonly address: string;
    private readonly graceSeconds: number;
    private readonly fifo: boolean;
    private readonly expiryShards: number;
    private readonly otel: OpenTelemetryApi | undefined;
    private expiryShardsRaised: boolean;
    private lastMs: number;
    private inMs: bigint;

    /**
     * @param options - The client, the table and the optional seams.
     * @throws OutboxError `INVALID_CONFIG` when the table name or the client is missing, `expiryShards` is not an integer
     *   from 1 to 64, `compactionGraceSeconds` not one from 0 to 31536000 (a year), `bindingId` not a string short
     *   enough for a sort key, `traceContext` not `"active"` or `"none"`, or `@opentelemetry/api` is installed but
     *   cannot be loaded.
     */
    constructor(options: OutboxWriterOptions) {
        if (typeof options?.tableName !== "string" || options.tableName === "") {
            throw new OutboxError("INVALID_CONFIG", `OutboxWriter: tableName must be the outbox table's name, got ${describeValue(options?.tableName)}`);
        }
        if (options.client === undefined || typeof options.client.send !== "function") {
            throw new OutboxError("INVALID_CONFIG", "OutboxWriter: client must be a DynamoDBClient from @aws-sdk/client-dynamodb");
        }
        this.client = options.client;
        this.tableName = options.tableName;
        this.clock = options.clock ?? systemClock;
        this.logger = options.logger ?? silentLogger;
        this.nextId = options.idGenerator ?? createIdGenerator(this.clock);
        this.generatedIdsNeedGuard = options.idGenerator !== undefined;
        this.bindingId = options.bindingId ?? "sns";
        if (typeof this.bindingId !== "string") throw new OutboxError("INVALID_CONFIG", `OutboxWriter: bindingId must be a string (the destination's name), got ${describeValue(this.bindingId)}; omit it for "sns"`);
        // The longest sort key this binding can make: an id of 128 '#', each escaped to three characters.
        const longestSk = utf8Length(recordSortKey("#".repeat(128), this.bindingId));
        if (longestSk > MAX_SORT_KEY_BYTES) {
            throw new OutboxError(
                "INVALID_CONFIG",
                `OutboxWriter: bindingId ${describeValue(this.bindingId)} is too long: with a 128-character id it makes a sort key of ${longestSk} bytes, and a DynamoDB sort key holds at most ${MAX_SORT_KEY_BYTES}; use a short name, e.g. "sns"`,
                { context: { size: longestSk } },
            );
        }
        this.address = options.address ?? "";
        this.graceSeconds = integerIn("OutboxWriter", "compactionGraceSeconds", options.compactionGraceSeconds, WRITER_LIMITS.compactionGraceSeconds);
        this.fifo = options.fifo ?? false;
        this.expiryShards = integerIn("OutboxWriter", "expiryShards", options.expiryShards, HANDLER_LIMITS.expiryShards);
        const traceContext = options.traceContext ?? "active";
        if (traceContext !== "active" && traceContext !== "none") {
            throw new OutboxError("INVALID_CONFIG", `OutboxWriter: traceContext must be "active" (the active OpenTelemetry span's, when @opentelemetry/api is installed) or "none", got ${describeValue(traceContext)}; omit it for "active"`);
        }
        this.otel = traceContext === "active" ? loadOpenTelemetryApi() : undefined;
        this.expiryShardsRaised = false;
        this.lastMs = -1;
        this.inMs = 0n;
    }

    /**
     * Write `items` and one outbox record per message, atomically: {@link OutboxWriter.prepare} then
     * {@link OutboxWriter.commit}. Every limit is checked first; on any `INVALID_PAYLOAD` error nothing was written.
     *
     * @param request - The messages, your items, and options.
     * @returns the message ids (generated where not given) and, when asked, the capacity consumed.
     * @throws OutboxError `INVALID_PAYLOAD` for a message or item that breaks a limit, or a message id already
     *   held by a record in another partition (nothing written); `CONDITION_FAILED` when one of your items'
     *   conditions failed (the message names the item and the reason); `DUPLICATE_RECORD` when a message id was
     *   already written to its partition; `THROTTLED` or `UNAVAILABLE` (transient) when a retry can succeed.
     */
    async write(request: WriteRequest): Promise<WriteResult> {
        return this.commit(await this.prepare(request));
    }

    /**
     * Check a request as {@link OutboxWriter.prepare} and {@link OutboxWriter.write} do, without any I/O: every limit
     * they check before they send anything (nothing is allocated, nothing is written). The redrive uses it to tell a
     * message the writer will never take from one that failed for a passing reason.
     *
     * @param request - The messages, your items, and options.
     * @throws OutboxError `INVALID_PAYLOAD` for a message or item that breaks a limit; `INVALID_CONFIG` for a clock no
     *   record can carry.
     */
    check(request: WriteRequest): void {
        this.validated(request);
    }

    /** Everything {@link OutboxWriter.prepare} checks and builds before its first I/O. */
    private validated(request: WriteRequest) {
        const items = request?.items ?? [];
        const messages = request?.messages;
        if (!Array.isArray(messages)) throw invalid(`write: messages must be an array, got ${describeValue(messages)}`);
        if (!Array.isArray(items)) throw invalid(`write: items must be an array of TransactWriteItem, got ${describeValue(items)}`);
        const guards = messages.filter((m: unknown) => this.needsGuard((m as { id?: unknown } | null)?.id)).length;
        const actions = items.length + messages.length + guards;
        if (actions === 0) throw invalid("write: nothing to write; pass at least one message or item");
        if (actions > MAX_TRANSACTION_ACTIONS) {
            const guardText = guards === 0 ? "" : ` + ${guards} id guards`;
            const why =
                guards === 0
                    ? "split the write"
                    : "each message whose id the writer did not generate (a caller-supplied id, or one from an injected idGenerator) adds one id guard Put, which keeps the id unique across the table; split the write, or omit the ids (the writer's own ULIDs need no guard)";
            throw invalid(`write: ${items.length} items + ${messages.length} messages${guardText} = ${actions} actions; a DynamoDB transaction holds at most ${MAX_TRANSACTION_ACTIONS}; ${why}`, { actions, idGuards: guards });
        }

        for (let i = 0; i < messages.length; i++) {
            if (!(i in messages)) throw invalid(`write: messages[${i}] is a hole in a sparse array (e.g. [a, , b]); pass a dense array of messages`, { messageIndex: i });
        }
        const nowMs = Math.floor(this.clock.now());
        checkWriterClock("OutboxWriter", nowMs);
        const prepared = messages.map((m, i) => this.prepareMessage(m, i));
        const firstWithId = new Map<string, PreparedMessage>();
        for (const p of prepared) {
            const prior = firstWithId.get(p.id);
            if (prior === undefined) {
                firstWithId.set(p.id, p);
            } else if (prior.message.partition === p.message.partition) {
                throw invalid(`write: messages share id "${p.id}" in partition ${describeValue(p.message.partition)}; ids must be unique`, { messageId: p.id });
            } else {
                throw invalid(
                    `write: messages[${prior.index}] and messages[${p.index}] share id "${p.id}", in partitions ${describeValue(prior.message.partition)} and ${describeValue(p.message.partition)}; ids are unique across the table (one record per id, in one partition); use a new id, or omit it and the writer generates one`,
                    { messageId: p.id, messageIndex: p.index },
                );
            }
        }

        const keylessSeqs = prepared.map(() => this.nextKeylessSeq(nowMs));
        // Until its allocation a keyed record carries seq 1, the shortest it can get: this first check never refuses a
        // write that fits, and the second, on the allocated records, is exact.
        const records = prepared.map((p, i) => this.recordItem(p, p.message.orderingKey === undefined ? keylessSeqs[i]! : 1n, nowMs));
        const guarded = prepared.filter((p) => p.guarded);
        const guardItems = guarded.map((p) =>
            idGuardItem({ recordId: p.id, partition: p.message.partition, bindingId: this.bindingId, createdAt: nowMs, expiresAt: p.expiresAtMs, graceSeconds: this.graceSeconds }),
        );
        const recordAbsent = skAbsent();
        const guardFree = idGuardFree(Math.floor(nowMs / 1000));
        const recordPut = (Item: AttributeMap): TransactWriteItem => ({ Put: { TableName: this.tableName, Item, ConditionExpression: recordAbsent.text, ...placeholders(recordAbsent) } });
        // ALL_OLD: a refused guard names the partition that holds the id, which tells a retry from a reuse.
        const guardPut = (Item: AttributeMap): TransactWriteItem => ({
            Put: { TableName: this.tableName, Item, ConditionExpression: guardFree.text, ...placeholders(guardFree), ReturnValuesOnConditionCheckFailure: "ALL_OLD" },
        });
        const guardPuts = guardItems.map(guardPut);
        checkSizes(items, prepared, records.map(recordPut), guardPuts);

        return { items, nowMs, prepared, records, guarded, guardPuts, recordPut };
    }

    /**
     * Validate the request, build the records and allocate keyed messages' sequence numbers, without writing the
     * transaction. Use it with {@link OutboxWriter.commit} to retry a write idempotently: commit the same prepared
     * write again (with a `clientRequestToken`), and DynamoDB applies it at most once within 10 minutes.
     *
     * @param request - The messages, your items, and options.
     * @throws OutboxError `INVALID_PAYLOAD` for a message or item that breaks a limit (nothing written).
     */
    async prepare(request: WriteRequest): Promise<PreparedWrite> {
        const { items, nowMs, prepared, records, guarded, guardPuts, recordPut } = this.validated(request);
        const consumed: ConsumedCapacity[] = [];
        const returnCapacity = request.returnConsumedCapacity ?? "NONE";
        const stamps = await this.allocateKeyedSeqs(prepared, nowMs, returnCapacity, consumed);
        for (const [i, stamp] of stamps) records[i] = this.recordItem(prepared[i]!, stamp.seq, stamp.createdAt);
        // A created_at carried forward can lengthen the envelope's time text by a few bytes; a record that then
        // breaks a limit leaves only its partition's FENCE allocation behind, as a failed transaction does.
        if (stamps.size > 0) checkSizes(items, prepared, records.map(recordPut), guardPuts);
        if (!this.expiryShardsRaised && this.expiryShards > 1 && prepared.some((p) => p.expiresAtMs !== 0)) {
            await raiseExpiryShards((input) => this.client.send(new UpdateItemCommand(input)), this.tableName, this.expiryShards);
            this.expiryShardsRaised = true;
        }

        return {
            messageIds: prepared.map((p) => p.id),
            input: {
                TransactItems: [...items, ...records.map(recordPut), ...guardPuts],
                ReturnConsumedCapacity: returnCapacity,
                ...(request.clientRequestToken !== undefined ? { ClientRequestToken: request.clientRequestToken } : {}),
            },
            allocationCapacity: consumed,
            describe: (index) => describeFailedAction(index, items, prepared, guarded),
        };
    }

    /**
     * Send a prepared write's transaction.
     *
     * @param prepared - From {@link OutboxWriter.prepare}.
     * @throws OutboxError as {@link OutboxWriter.write}.
     */
    async commit(prepared: PreparedWrite): Promise<WriteResult> {
        try {
            const out = await this.client.send(new TransactWriteItemsCommand(prepared.input));
            return { messageIds: [...prepared.messageIds], consumedCapacity: [...prepared.allocationCapacity, ...(out.ConsumedCapacity ?? [])] };
        } catch (err) {
            throw cancellationError(err, prepared);
        }
    }


    private prepareMessage(message: OutboxMessage, index: number): PreparedMessage {
        const where = `messages[${index}]`;
        if (message === null || typeof message !== "object") throw invalid(`${where} must be an object with partition, type and payload, got ${describeValue(message)}`);
        const guarded = this.needsGuard(message.id);
        const id = message.id ?? this.nextId();
        if (typeof id !== "string" || !FIFO_ID.test(id)) {
            throw invalid(`${where}.id is ${describeValue(id)}; an id is 1-128 printable ASCII characters without spaces (letters, digits, punctuation); omit it to get a ULID`, { index });
        }
        if (typeof message.partition !== "string" || message.partition === "") {
            throw invalid(`${where}.partition is ${describeValue(message.partition)}; it must be a non-empty string, usually the aggregate's key, e.g. "ORDER#1001"`, { messageId: id });
        }
        const partitionBytes = utf8Length(message.partition);
        if (partitionBytes > MAX_PARTITION_KEY_BYTES) {
            throw invalid(
                `${where}.partition ${describeValue(message.partition)} is ${partitionBytes} bytes (UTF-8); a DynamoDB partition key holds at most ${MAX_PARTITION_KEY_BYTES}; use a shorter key, e.g. the aggregate's id rather than its content, or a hash of it`,
                { messageId: id, messageIndex: index, size: partitionBytes },
            );
        }
        if (typeof message.type !== "string" || message.type === "") {
            throw invalid(`${where}.type is ${describeValue(message.type)}; it must be a non-empty string, e.g. "OrderCreated"`, { messageId: id });
        }
        if (message.orderingKey !== undefined && (typeof message.orderingKey !== "string" || message.orderingKey === "")) {
            throw invalid(`${where}.orderingKey is ${describeValue(message.orderingKey)}; it must be a non-empty string, or omitted for a keyless message`, { messageId: id });
        }
        // These travel: type as the outbox.type attribute, partition and ordering key in the DLQ body and as a FIFO group id.
        for (const [field, value] of [["partition", message.partition], ["type", message.type], ["orderingKey", message.orderingKey]] as const) {
            const bad = value === undefined ? undefined : characterProblem(value, `${where}.${field}`);
            if (bad !== undefined) throw invalid(`${bad.message} (message id "${id}")`, { messageId: id, messageIndex: index, character: bad.codePoint, position: bad.position });
        }
        if (this.fifo) {
            const group = message.orderingKey ?? message.partition;
            if (!FIFO_ID.test(group)) {
                throw invalid(`${where}: ${message.orderingKey !== undefined ? "orderingKey" : "partition"} ${describeValue(group)} is the SNS FIFO MessageGroupId, which must be 1-128 printable ASCII characters without spaces`, { messageId: id });
            }
        }
        let expiresAtMs = 0;
        if (message.expiresAt !== undefined) {
            const ms = message.expiresAt instanceof Date ? message.expiresAt.getTime() : Number.NaN;
            if (!Number.isFinite(ms) || ms <= 0) {
                throw invalid(`${where}.expiresAt is ${describeValue(message.expiresAt)}; it must be a valid Date after 1970-01-01, or omitted for a message that never expires`, { messageId: id });
            }
            expiresAtMs = Math.ceil(ms);
        }
        const headers = checkHeaders(message.headers, where, id, index);
        const trace = givenTraceContext(message, where, id, index) ?? this.activeTrace(Object.keys(headers).length, where, id);
        const body = serializePayload(message.payload, where, id, index);
        const outbound: OutboundMessage = {
            id,
            type: message.type,
            partition: message.partition,
            ...(message.orderingKey !== undefined ? { orderingKey: message.orderingKey } : {}),
            body,
            headers,
            ...trace,
            createdAt: 0,
            expiresAt: expiresAtMs,
        };
        const overrun = attributeBudgetOverrun(outbound);
        if (overrun !== undefined) {
            const traceFix = trace === undefined ? "" : trace.tracestate !== undefined ? ", or drop the tracestate (or the trace context)" : ", or drop the trace context";
            throw invalid(
                `${where}.headers has ${overrun.headers} entries; at most ${overrun.headersThatFit} fit: the message (id "${id}") would carry ${overrun.count} message attributes, ${overrun.outbox.length} of them the outbox's (${overrun.outbox.join(", ")}), and SNS carries at most ${SNS_MAX_ATTRIBUTES} (raw delivery to SQS drops a message with more); move ${overrun.headers - overrun.headersThatFit} into the payload${traceFix}`,
                { messageId: id, messageIndex: index, attributes: overrun.count, headers: overrun.headers, maxHeaders: overrun.headersThatFit },
            );
        }
        const snsSize = snsMessageSize(outbound);
        if (snsSize > SNS_MAX_MESSAGE_BYTES) {
            throw invalid(`${where} (id "${id}") is ${snsSize} bytes as an SNS message (body + attributes); SNS accepts at most ${SNS_MAX_MESSAGE_BYTES}; shrink the payload or store it elsewhere and send a reference`, { messageId: id, size: snsSize });
        }
        const dlqSize = worstCaseDeadLetterSize(outbound);
        if (dlqSize > DLQ_MAX_MESSAGE_BYTES) {
            throw invalid(`${where} (id "${id}") would be ${dlqSize} bytes as a DLQ message; the DLQ accepts at most ${DLQ_MAX_MESSAGE_BYTES}; shrink the payload by ~${dlqSize - DLQ_MAX_MESSAGE_BYTES} bytes`, { messageId: id, size: dlqSize });
        }
        return { index, id, guarded, message, body, expiresAtMs, trace };
    }

    /**
     * The active span's trace context for a message that gives none, as far as its attributes leave room: with one
     * attribute left, the `traceparent` without the `tracestate`; with none, nothing. Either way with a warning, so
     * turning tracing on never makes a write fail.
     */
    private activeTrace(headerCount: number, where: string, id: string): TraceContext | undefined {
        if (this.otel === undefined) return undefined;
        const active = activeTraceContext(this.otel);
        if (active === undefined) return undefined;
        // The outbox's own two: outbox.id and outbox.type (the writer refuses an empty type).
        const room = SNS_MAX_ATTRIBUTES - 2 - headerCount;
        const needed = active.tracestate !== undefined ? 2 : 1;
        if (room >= needed) return active;
        const kept = room >= 1 ? { traceparent: active.traceparent } : undefined;
        this.logger.warn(`write: ${where} (id "${id}") has ${headerCount} headers, which leave ${room} of SNS's ${SNS_MAX_ATTRIBUTES} message attributes for the active trace context; it carries ${kept !== undefined ? "the traceparent without the tracestate" : "no trace context"}; use at most ${SNS_MAX_ATTRIBUTES - 2 - needed} headers to carry it`, {
            messageId: id,
            headers: headerCount,
        });
        return kept;
    }

    /** Whether a message with this `id` (possibly `undefined`) gets an id guard: only the writer's own ULIDs go without. */
    private needsGuard(id: unknown): boolean {
        return id !== undefined || this.generatedIdsNeedGuard;
    }

    private nextKeylessSeq(nowMs: number): bigint {
        if (nowMs > this.lastMs) {
            this.lastMs = nowMs;
            this.inMs = 0n;
        } else if (this.inMs < SEQ_PER_MS - 1n) {
            this.inMs += 1n;
        }
        return BigInt(this.lastMs) * SEQ_PER_MS + this.inMs;
    }

    /**
     * The marshalled record of a message. Every attribute derived from the creation time (`created_at`, the
     * envelope's `CreatedAt`, `claim_sort`) comes from this one call, so moving the time moves them all.
     */
    private recordItem(p: PreparedMessage, seq: bigint, createdAtMs: number): AttributeMap {
        const record = pendingRecord(
            {
                partition: p.message.partition,
                recordId: p.id,
                bindingId: this.bindingId,
                address: this.address,
                envelope: {
                    id: p.id,
                    subject: p.message.type,
                    payload: p.body,
                    headers: envelopeHeaders(p),
                    createdAt: createdAtMs,
                    expiresAt: p.expiresAtMs,
                },
                createdAt: createdAtMs,
                ...(p.message.orderingKey !== undefined ? { orderingKey: p.message.orderingKey } : {}),
            },
            seq,
            createdAtMs,
        );
        return marshalRecord(record, this.expiryShards);
    }

    /**
     * One seq allocation per partition that has keyed messages ({@link allocateSeqRange}): their records get
     * `first … first+n-1` in request order, all with the allocation's `created_at`. Keyed by message index.
     */
    private async allocateKeyedSeqs(prepared: PreparedMessage[], nowMs: number, returnCapacity: ReturnConsumedCapacity, consumed: ConsumedCapacity[]): Promise<Map<number, KeyedStamp>> {
        const byPartition = new Map<string, number[]>();
        prepared.forEach((p, i) => {
            if (p.message.orderingKey === undefined) return;
            const list = byPartition.get(p.message.partition) ?? [];
            list.push(i);
            byPartition.set(p.message.partition, list);
        });
        const send = async (input: UpdateItemCommandInput) => {
            const out = await this.client.send(new UpdateItemCommand({ ...input, ReturnConsumedCapacity: returnCapacity }));
            if (out.ConsumedCapacity) consumed.push(out.ConsumedCapacity);
            return out;
        };
        const fenceTtl = fenceTtlSeconds(nowMs, this.graceSeconds);
        const stamps = new Map<number, KeyedStamp>();
        for (const [partition, indexes] of byPartition) {
            let range;
            try {
                range = await allocateSeqRange(send, { tableName: this.tableName, partition, count: indexes.length, nowMs, fenceTtl }, this.logger);
            } catch (err) {
                throw wrapAwsError(err, `write: outbox seq allocation failed for partition ${describeValue(partition)}; nothing was written`, { partition });
            }
            indexes.forEach((i, k) => stamps.set(i, { seq: range.firstSeq + BigInt(k), createdAt: range.createdAt }));
        }
        return stamps;
    }
}

/** A keyed message's allocated seq and the creation time its record carries. */
interface KeyedStamp {
    readonly seq: bigint;
    readonly createdAt: number;
}

/** The envelope headers of a message's record: the user headers, and the trace context under its W3C names. */
function envelopeHeaders(p: PreparedMessage): Record<string, string> {
    const headers: Record<string, string> = { ...(p.message.headers ?? {}) };
    if (p.trace !== undefined) {
        headers.traceparent = p.trace.traceparent;
        if (p.trace.tracestate !== undefined) headers.tracestate = p.trace.tracestate;
    }
    return headers;
}

/** What of a message's record DynamoDB's 400 KB is spent on: the payload, the headers and the type, as `envelope_json` holds them. */
function recordParts(p: PreparedMessage): { readonly name: "payload" | "headers" | "type" | "orderingKey"; readonly bytes: number; readonly how: string }[] {
    const headers = envelopeHeaders(p);
    const key = p.message.orderingKey;
    return [
        { name: "payload", bytes: 4 * Math.ceil(utf8Length(p.body) / 3), how: "stored base64, 4/3 its size" },
        { name: "headers", bytes: Object.keys(headers).length === 0 ? 0 : utf8Length(goJsonStringify(headers)), how: "as Go's JSON, which writes <, > and & as six bytes each" },
        { name: "type", bytes: utf8Length(goJsonStringify(p.message.type)), how: "as Go's JSON" },
        { name: "orderingKey", bytes: key === undefined ? 0 : utf8Length(key) + utf8Length(goJsonStringify(key)), how: "twice: the ordering_key attribute and an envelope header" },
    ];
}

/** The fix of a record over 400 KB, aimed at the part that takes the most of it. */
function oversizedRecord(p: PreparedMessage, size: number): OutboxError {
    const parts = recordParts(p);
    const biggest = parts.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const fix =
        biggest.name === "payload"
            ? "shrink the payload or store it elsewhere and send a reference"
            : biggest.name === "headers"
              ? "shrink the headers (or move their content into the payload)"
              : biggest.name === "type"
                ? "use a shorter type"
                : "use a shorter ordering key";
    const spent = parts.filter((part) => part.bytes > 0).map((part) => `${part.name} ${part.bytes} bytes (${part.how})`).join(", ");
    return invalid(`write: messages[${p.index}] (id "${p.id}") makes an outbox record of ${size} bytes; DynamoDB items hold at most ${MAX_ITEM_BYTES} bytes; of it: ${spent}; ${fix}`, {
        messageId: p.id,
        size,
        part: biggest.name,
        ...Object.fromEntries(parts.map((part) => [`${part.name}Bytes`, part.bytes])),
    });
}

/**
 * Check every outbox record against the item limit and the whole transaction against its limit, as DynamoDB counts
 * it ({@link transactionActionSize}: items and keys, expressions, and the names and values they use).
 *
 * @param items - The caller's actions.
 * @param prepared - The messages, in request order.
 * @param recordPuts - The record Put of each message, in the same order.
 * @param guardPuts - The id guard Puts.
 * @throws OutboxError `INVALID_PAYLOAD` naming the message or item and its size.
 */
function checkSizes(items: readonly TransactWriteItem[], prepared: readonly PreparedMessage[], recordPuts: readonly TransactWriteItem[], guardPuts: readonly TransactWriteItem[]): void {
    let total = 0;
    for (const guard of guardPuts) total += transactionActionSize(guard);
    recordPuts.forEach((action, i) => {
        const size = itemSize(action.Put!.Item!);
        if (size > MAX_ITEM_BYTES) throw oversizedRecord(prepared[i]!, size);
        total += transactionActionSize(action);
    });
    items.forEach((action, i) => {
        const size = actionSize(action, i, `write: items[${i}]`);
        if (size > MAX_ITEM_BYTES) throw invalid(`write: items[${i}] is ${size} bytes; DynamoDB items hold at most ${MAX_ITEM_BYTES} bytes`, { item: i, size });
        total += transactionActionSize(action);
    });
    if (total > MAX_TRANSACTION_BYTES) {
        const guardText = guardPuts.length === 0 ? "" : ` (${guardPuts.length} id guard${guardPuts.length === 1 ? "" : "s"} included)`;
        throw invalid(
            `write: the transaction adds up to ${total} bytes as DynamoDB counts it (items and keys, expressions, and the names and values they use)${guardText}; a DynamoDB transaction holds at most ${MAX_TRANSACTION_BYTES} bytes; split the write`,
            { size: total },
        );
    }
}

function describeFailedAction(actionIndex: number, items: readonly TransactWriteItem[], prepared: readonly PreparedMessage[], guarded: readonly PreparedMessage[]): FailedAction {
    if (actionIndex < items.length) return { kind: "item", index: actionIndex, text: describeAction(items[actionIndex]!, actionIndex) };
    const describeMessage = (p: PreparedMessage): string => `messages[${p.index}] (id "${p.id}", partition ${describeValue(p.message.partition)})`;
    const p = prepared[actionIndex - items.length];
    if (p !== undefined) return { kind: "message", index: p.index, messageId: p.id, text: describeMessage(p) };
    const g = guarded[actionIndex - items.length - prepared.length];
    if (g !== undefined) return { kind: "message", index: g.index, messageId: g.id, idGuard: true, text: describeMessage(g) };
    return { kind: "item", index: actionIndex, text: `action ${actionIndex}` };
}

/** One cancelled action, explained: whose it is, the code it maps to and the text that says why. */
interface ExplainedFailure {
    readonly i: number;
    readonly reason: string;
    readonly who: FailedAction;
    readonly code: OutboxErrorCode;
    /** `undefined` when another failure of the same message already says it. */
    readonly text: string | undefined;
    /** The partition that holds the id, for a refused id guard whose holder DynamoDB returned. */
    readonly heldBy?: string;
}

function utcSeconds(seconds: number): string {
    return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}

/**
 * Why a message's id guard was refused. Its record's own Put failing too means the record is still there: a
 * repeated write (`DUPLICATE_RECORD`, said once, by the record). Otherwise the guard's old image (ALL_OLD) tells
 * a repeat of this message's write (same partition and binding: the record may have been delivered and deleted
 * since, `DUPLICATE_RECORD`) from a reuse of an id another record holds (`INVALID_PAYLOAD`).
 */
function explainGuardRefusal(who: FailedAction, i: number, reason: { Item?: Record<string, AttributeValue> } | undefined, prepared: PreparedWrite, recordAlsoFailed: boolean): ExplainedFailure {
    const base = { i, reason: "ConditionalCheckFailed", who };
    if (recordAlsoFailed) return { ...base, code: "DUPLICATE_RECORD", text: undefined };
    const holder = readIdGuard(reason?.Item);
    const mine = readIdGuard(prepared.input.TransactItems?.[i]?.Put?.Item);
    if (holder !== undefined && mine !== undefined && holder.partition === mine.partition && holder.bindingId === mine.bindingId) {
        return {
            ...base,
            code: "DUPLICATE_RECORD",
            text: `${who.text}: a record with this id was already written to the partition (it may have been delivered and deleted since; the id stays taken until ${utcSeconds(holder.ttl)})`,
            heldBy: holder.partition,
        };
    }
    const where =
        holder === undefined
            ? "a record in another partition"
            : `a record in partition ${describeValue(holder.partition)}${mine !== undefined && holder.bindingId !== mine.bindingId ? ` (binding "${holder.bindingId}")` : ""}, until ${utcSeconds(holder.ttl)}`;
    return {
        ...base,
        code: "INVALID_PAYLOAD",
        text: `${who.text}: id "${who.messageId}" is already taken by ${where}; ids are unique across the table (the id is the SNS FIFO deduplication id and the outbox.id consumers deduplicate on, so a second record with it would be dropped), and reusing one is allowed only to repeat the same write in the same partition; use a new id, or omit it and the writer generates one`,
        ...(holder !== undefined ? { heldBy: holder.partition } : {}),
    };
}

/** Map a failed transaction to an error naming the item or message that failed, and why. */
function cancellationError(err: unknown, prepared: PreparedWrite): OutboxError {
    if (!isTransactionCanceled(err)) {
        const mismatch = awsErrorName(err) === "IdempotentParameterMismatchException";
        const code = mismatch ? "INVALID_PAYLOAD" : classifyAwsError(err);
        const hint = mismatch ? " (the clientRequestToken was already used for a different request; commit the same prepared write, or use a new token)" : "";
        return new OutboxError(code, `write: the outbox transaction failed${hint}; nothing was written`, { cause: err });
    }
    const reasons = (err as { CancellationReasons?: ({ Message?: string; Item?: Record<string, AttributeValue> } | undefined)[] }).CancellationReasons ?? [];
    const cancelled = cancellationCodes(err)
        .map((code, i) => ({ i, code, message: reasons[i]?.Message ?? "", who: prepared.describe(i) }))
        .filter((r) => r.code !== "" && r.code !== "None");
    if (cancelled.length === 0) {
        return new OutboxError("UNAVAILABLE", "write: the outbox transaction was cancelled with no reasons; nothing was written; retry", { cause: err });
    }
    const recordFailed = (messageIndex: number): boolean =>
        cancelled.some((r) => r.who.kind === "message" && r.who.idGuard !== true && r.who.index === messageIndex && r.code === "ConditionalCheckFailed");
    const failed: ExplainedFailure[] = cancelled.map((r) => {
        const base = { i: r.i, reason: r.code, who: r.who };
        if (r.who.kind === "message" && r.code === "ConditionalCheckFailed") {
            if (r.who.idGuard === true) return explainGuardRefusal(r.who, r.i, reasons[r.i], prepared, recordFailed(r.who.index));
            return { ...base, code: "DUPLICATE_RECORD", text: `${r.who.text}: a record with this id already exists in the partition` };
        }
        const what = r.who.idGuard === true ? `${r.who.text}'s id guard` : r.who.text;
        return { ...base, code: cancellationReasonCode(r.code), text: `${what}: ${r.code}${r.message ? ` (${r.message})` : ""}` };
    });
    // A reused id outranks the rest: DUPLICATE_RECORD may be read as "already written", and this message was not.
    const first = failed.find((f) => f.who.idGuard === true && f.code === "INVALID_PAYLOAD") ?? failed[0]!;
    const who = first.who;
    const conflict = failed.every((r) => r.reason === "TransactionConflict");
    const texts = failed.map((f) => f.text).filter((t): t is string => t !== undefined);
    const text = `write: transaction cancelled, nothing was written: ${texts.join("; ")}${conflict ? "; another transaction touched the same items, retry" : ""}`;
    return new OutboxError(first.code, text, {
        cause: err,
        ...(conflict ? { transient: true } : {}),
        context: {
            failedAction: first.i,
            failedKind: who.kind,
            ...(who.kind === "message" ? { messageIndex: who.index, messageId: who.messageId } : { itemIndex: who.index }),
            ...(who.idGuard === true ? { idGuard: true } : {}),
            ...(first.heldBy !== undefined ? { heldByPartition: first.heldBy } : {}),
            reason: first.reason,
        },
    });
}
