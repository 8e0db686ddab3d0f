/**
 * DynamoDB item size, computed the way DynamoDB bills and limits it, so the writer can reject an item over
 * 400 KB or a transaction over 4 MB before sending anything.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";

/** The largest item DynamoDB stores: 400 KB, attribute names included. */
export const MAX_ITEM_BYTES = 400 * 1024;

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
 * (`tests/integration/runtime/writer.test.ts` measures it through the 4 MB refusal, which reports the size it counted).
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
