/**
 * The caller's own `TransactWriteItem` actions, as the writer and the inbox take them: what each adds to the
 * transaction's size, a short description with ids only (never an item's contents) for error messages, and the
 * error code a cancellation reason maps to.
 *
 * @packageDocumentation
 */
import type { AttributeValue, TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { OutboxError, type OutboxErrorCode } from "./errors";
import { classifyAwsError } from "./store/aws-errors";
import { itemSize } from "./item-size";

/** A value, short, for an error message: strings quoted and cut at 60 characters, Dates as ISO text. */
export function describeValue(value: unknown): string {
    if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
    if (value instanceof Date) return `Date(${Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString()})`;
    if (typeof value === "bigint") return `${value}n`;
    return String(value);
}

function keySize(key: Record<string, AttributeValue> | undefined): number {
    return key === undefined ? 0 : itemSize(key);
}

/**
 * What an action adds to the transaction's size: a Put's whole item; for Update, Delete and ConditionCheck the
 * key plus the expression values (the final item of an Update is unknown before DynamoDB applies it).
 *
 * @param action - One of the caller's actions.
 * @param index - Its index in the caller's `items`.
 * @param where - How the caller's error messages name it, e.g. `write: items[2]`.
 * @throws OutboxError `INVALID_PAYLOAD` when it is not an object with one of Put, Update, Delete, ConditionCheck.
 */
export function actionSize(action: TransactWriteItem, index: number, where: string): number {
    if (action === null || typeof action !== "object") {
        throw new OutboxError("INVALID_PAYLOAD", `${where} must be a TransactWriteItem ({ Put | Update | Delete | ConditionCheck }), got ${describeValue(action)}`, { context: { item: index } });
    }
    if (action.Put) return itemSize(action.Put.Item ?? {});
    if (action.Update) return keySize(action.Update.Key) + keySize(action.Update.ExpressionAttributeValues);
    if (action.Delete) return keySize(action.Delete.Key) + keySize(action.Delete.ExpressionAttributeValues);
    if (action.ConditionCheck) return keySize(action.ConditionCheck.Key) + keySize(action.ConditionCheck.ExpressionAttributeValues);
    throw new OutboxError("INVALID_PAYLOAD", `${where} has none of Put, Update, Delete, ConditionCheck`, { context: { item: index } });
}

/** The table an action is on, and its key (a Put's item stands in for its key), or `undefined`. */
export function actionTarget(action: TransactWriteItem): { readonly tableName: string | undefined; readonly key: Record<string, AttributeValue> | undefined } {
    const body = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck;
    const key = (body as { Key?: Record<string, AttributeValue> } | undefined)?.Key ?? (body as { Item?: Record<string, AttributeValue> } | undefined)?.Item;
    return { tableName: body?.TableName, key };
}

/** At most the first two scalar attributes of a key, for an error message; never a whole item. */
function keyPreview(key: Record<string, AttributeValue>): string {
    const parts = Object.keys(key)
        .slice(0, 2)
        .map((name) => `${name}=${key[name]?.S ?? key[name]?.N ?? "…"}`);
    return parts.join(", ");
}

/**
 * An action in a few words, ids only, e.g. `items[1] (ConditionCheck on table "orders" PK=ORDER#1)`.
 *
 * @param action - One of the caller's actions.
 * @param index - Its index in the caller's `items`.
 */
export function describeAction(action: TransactWriteItem, index: number): string {
    const kind = action.Put ? "Put" : action.Update ? "Update" : action.Delete ? "Delete" : "ConditionCheck";
    const { tableName, key } = actionTarget(action);
    const keyText = key === undefined ? "" : ` ${keyPreview(key)}`;
    return `items[${index}] (${kind} on table "${tableName ?? "?"}"${keyText})`;
}

/**
 * The error code of one cancellation reason of a cancelled transaction: `CONDITION_FAILED` for a failed condition,
 * else what {@link classifyAwsError} makes of the reason.
 *
 * @param code - A `CancellationReasons[i].Code`.
 */
export function cancellationReasonCode(code: string): OutboxErrorCode {
    return code === "ConditionalCheckFailed" ? "CONDITION_FAILED" : classifyAwsError({ CancellationReasons: [{ Code: code }] });
}
