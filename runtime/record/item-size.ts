/**
 * DynamoDB item size, computed the way DynamoDB bills and limits it, so the writer can reject an item over
 * 400 KB or a transaction over 4 MB before sending anything.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { ATTR, STATUS } from "../schema";

/** The largest item DynamoDB stores: 400 KB, attribute names included. */
export const MAX_ITEM_BYTES = 400 * 1024;

/**
 * The longest claim owner (`FencingToken.owner`) the store writes, in UTF-8 bytes. A claim stores it on the record
 * (`claimed_by`), so it is bounded for {@link RECORD_GROWTH_BYTES} to hold; the store refuses a longer one. The
 * relay's owners are `publisher/<request id>` and `sweeper/<request id>`, under 50 bytes.
 */
export const MAX_CLAIM_OWNER_BYTES = 128;

/**
 * The largest non-negative number DynamoDB stores, in bytes: 38 significant digits, one byte per two of them, one
 * more when they straddle the pairs, plus one. Every number a transition writes (times, counts, a claim version)
 * is a non-negative number DynamoDB stores, so none takes more.
 */
const MAX_NUMBER_BYTES = 21;

/** The bytes of an attribute that may be added, name and value. */
const added = (name: string, valueBytes: number): number => utf8Length(name) + valueBytes;

/**
 * What the store's transitions may add to a record after the writer wrote it, per attribute, at most. The writer
 * writes `status = "pending"`, and `claim_version`, `replay_count` and `completed_at` as `0` (1 byte each); the
 * others are absent. Each transition only sets attributes listed here (or removes some), so a record's size in any
 * state is at most its written size plus their sum ({@link TRANSITION_MARGIN_BYTES}):
 * - claim (the publisher's keyed path, the sweeper, `OutboxStore.claim`): `claimed_by` (the owner, at most
 *   {@link MAX_CLAIM_OWNER_BYTES}), `claimed_at`, `first_attempted_at`, `claim_version` and `replay_count`;
 *   `status = "claimed"`, as long as `"pending"`;
 * - release: `status = "pending"`, removes `claimed_by` and `claimed_at`;
 * - a refusal counted on the record: `publish_attempts`;
 * - completion (delivered, or dead-lettered after `maxPublishAttempts`): `status = "completed"` (2 bytes longer),
 *   `completed_at`, `ttl`; removes `claim_sort` and `has_expiry`;
 * - expiry (the sweeper's, or a claimed record's): `status = "expired"` (as long as `"pending"`), `ttl`; removes
 *   `claim_sort` and `has_expiry`.
 * The removals are not counted: the bound holds whatever order the transitions come in.
 */
export const RECORD_GROWTH_BYTES = {
    /** Claim: the owner. */
    claimedBy: added(ATTR.claimedBy, MAX_CLAIM_OWNER_BYTES),
    /** Claim: its time. */
    claimedAt: added(ATTR.claimedAt, MAX_NUMBER_BYTES),
    /** The first claim: its time. */
    firstAttemptedAt: added(ATTR.firstAttemptedAt, MAX_NUMBER_BYTES),
    /** Claim: the version, from the written `0`. */
    claimVersion: MAX_NUMBER_BYTES - 1,
    /** Claim: the count of claims, from the written `0`. */
    replayCount: MAX_NUMBER_BYTES - 1,
    /** A refusal counted on the record. */
    publishAttempts: added(ATTR.publishAttempts, MAX_NUMBER_BYTES),
    /** Completion: `completed` is longer than `pending` (`claimed` and `expired` are as long). */
    status: utf8Length(STATUS.completed) - utf8Length(STATUS.pending),
    /** Completion: its time, from the written `0`. */
    completedAt: MAX_NUMBER_BYTES - 1,
    /** Completion and expiry: the TTL. */
    ttl: added(ATTR.ttl, MAX_NUMBER_BYTES),
} as const;

/**
 * The room the writer leaves under {@link MAX_ITEM_BYTES} for what the transitions add to a record:
 * the sum of {@link RECORD_GROWTH_BYTES}, 331 bytes.
 */
export const TRANSITION_MARGIN_BYTES = Object.values(RECORD_GROWTH_BYTES).reduce((sum, bytes) => sum + bytes, 0);

/**
 * The largest outbox record the writer (and `OutboxStore.persist`) writes: {@link MAX_ITEM_BYTES} minus
 * {@link TRANSITION_MARGIN_BYTES}, 409,269 bytes. A record within it can be claimed, released, counted,
 * completed, expired and dead-lettered: no transition can take it over DynamoDB's item limit.
 */
export const MAX_RECORD_BYTES = MAX_ITEM_BYTES - TRANSITION_MARGIN_BYTES;

/** The largest total size of the items in one TransactWriteItems call: 4 MB. */
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

/** The longest partition key value DynamoDB stores: 2048 bytes, UTF-8. */
export const MAX_PARTITION_KEY_BYTES = 2048;

/** The longest sort key value DynamoDB stores: 1024 bytes, UTF-8. */
export const MAX_SORT_KEY_BYTES = 1024;

/** The most actions one TransactWriteItems call may hold. */
export const MAX_TRANSACTION_ACTIONS = 100;

/**
 * UTF-8 byte length of a string.
 *
 * @param text - Any string.
 */
export function utf8Length(text: string): number {
    return Buffer.byteLength(text, "utf8");
}

/**
 * A number's size: its significant digits in base-100 digits (pairs of decimal digits aligned at the decimal point,
 * so `1.5` takes two and `15` one), plus 1, plus 1 more when negative; zero is 1. AWS documents it as "about 1 byte
 * per two significant digits, plus 1"; this is the exact rule DynamoDB Local applies, to the byte
 * (`tests/integration/runtime/writer-id-guard.test.ts` measures it through the 4 MB refusal, which reports the size it counted).
 */
function numberSize(n: string): number {
    const text = n.trim();
    const negative = text.startsWith("-");
    const [mantissa = "", exponentText = "0"] = text.replace(/^[-+]/, "").split(/[eE]/);
    const [whole = "", fraction = ""] = mantissa.split(".");
    let digits = whole + fraction;
    let point = whole.length + (Number.parseInt(exponentText, 10) || 0);
    const leading = /^0*/.exec(digits)![0].length;
    digits = digits.slice(leading).replace(/0+$/, "");
    point -= leading;
    if (digits === "") return 1;
    // The place of the first and last significant digit (0 = units, -1 = tenths), then the base-100 digits between.
    const firstPair = Math.floor((point - 1) / 2);
    const lastPair = Math.floor((point - digits.length) / 2);
    return firstPair - lastPair + 1 + 1 + (negative ? 1 : 0);
}

function binarySize(b: Uint8Array): number {
    return b.byteLength;
}

/**
 * The size of one attribute value (without its name).
 *
 * @param value - An SDK attribute value.
 */
export function attributeValueSize(value: AttributeValue): number {
    if (value.S !== undefined) return utf8Length(value.S);
    if (value.N !== undefined) return numberSize(value.N);
    if (value.B !== undefined) return binarySize(value.B);
    if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
    if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8Length(s), 0);
    if (value.NS !== undefined) return value.NS.reduce((sum, s) => sum + numberSize(s), 0);
    if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + binarySize(b), 0);
    if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + attributeValueSize(v), 0);
    if (value.M !== undefined) return 3 + itemSize(value.M) + Object.keys(value.M).length;
    return 0;
}

/**
 * The size of an item (or any attribute map): attribute names plus values, in bytes.
 *
 * @param item - The item's attributes.
 */
export function itemSize(item: Readonly<Record<string, AttributeValue>>): number {
    let total = 0;
    for (const name of Object.keys(item)) total += utf8Length(name) + attributeValueSize(item[name]!);
    return total;
}
