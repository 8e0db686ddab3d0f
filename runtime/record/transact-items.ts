/**
 * The caller's own `TransactWriteItem` actions, as the writer and the inbox take them: what each adds to the
 * transaction's size, a short description with ids only (never an item's contents) for error messages, and the
 * error code a cancellation reason maps to.
 *
 * @packageDocumentation
 */
import type { AttributeValue, TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { OutboxError, type OutboxErrorCode } from "../errors";
import { classifyAwsError } from "../store/aws-errors";
import { attributeValueSize, itemSize, utf8Length } from "./item-size";

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
 * The item side of an action, for the 400 KB item check: a Put's whole item; for Update, Delete and ConditionCheck
 * the key plus the expression values (the final item of an Update is unknown before DynamoDB applies it). What the
 * action adds to the transaction's 4 MB is {@link transactionActionSize}.
 *
 * @param action - One of the caller's actions.
 * @param index - Its index in the caller's `items`.
 * @param where - How the caller's error messages name it, e.g. `write: items[2]`.
 * @throws OutboxError `INVALID_PAYLOAD` when it is not an object with one of Put, Update, Delete, ConditionCheck.
 */
export function actionSize(action: TransactWriteItem, index: number, where: string): number {
    if (action === null || typeof action !== "object") {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `${where} must be a TransactWriteItem ({ Put | Update | Delete | ConditionCheck }), got ${describeValue(action)}`,
            { context: { item: index } },
        );
    }
    if (action.Put) return itemSize(action.Put.Item ?? {});
    if (action.Update) return keySize(action.Update.Key) + keySize(action.Update.ExpressionAttributeValues);
    if (action.Delete) return keySize(action.Delete.Key) + keySize(action.Delete.ExpressionAttributeValues);
    if (action.ConditionCheck)
        return keySize(action.ConditionCheck.Key) + keySize(action.ConditionCheck.ExpressionAttributeValues);
    throw new OutboxError("INVALID_PAYLOAD", `${where} has none of Put, Update, Delete, ConditionCheck`, {
        context: { item: index },
    });
}

const PLACEHOLDER = /[#:][A-Za-z0-9_]+/g;

/** An expression's text plus, for each placeholder it uses, the name or value it stands for, each time it is used. */
function expressionSize(
    text: string | undefined,
    names: Readonly<Record<string, string>> | undefined,
    values: Readonly<Record<string, AttributeValue>> | undefined,
): number {
    if (text === undefined) return 0;
    let size = utf8Length(text);
    for (const placeholder of text.match(PLACEHOLDER) ?? []) {
        const name = names?.[placeholder];
        const value = values?.[placeholder];
        if (placeholder.startsWith("#") && typeof name === "string") size += utf8Length(name);
        else if (placeholder.startsWith(":") && value !== undefined) size += attributeValueSize(value);
    }
    return size;
}

/**
 * What an action adds to a TransactWriteItems call's 4 MB, counted as DynamoDB counts it: a Put's item, or the key
 * of an Update, Delete or ConditionCheck, plus the text of its update and condition expressions, plus, for every
 * placeholder each expression uses, the size of the attribute name or value it stands for, once per use. Measured
 * on DynamoDB Local, whose refusal ("Transaction payload size cannot exceed 4MB. Payload Size: N") reports this
 * figure to the byte (`tests/integration/runtime/writer-id-guard.test.ts`); the table name and `ReturnValuesOnConditionCheckFailure` do
 * not count.
 *
 * @param action - One action of the transaction (the caller's or the writer's own).
 */
export function transactionActionSize(action: TransactWriteItem): number {
    const body = (action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck) as
        | {
              Item?: Record<string, AttributeValue>;
              Key?: Record<string, AttributeValue>;
              UpdateExpression?: string;
              ConditionExpression?: string;
              ExpressionAttributeNames?: Record<string, string>;
              ExpressionAttributeValues?: Record<string, AttributeValue>;
          }
        | undefined;
    if (body === undefined) return 0;
    const names = body.ExpressionAttributeNames;
    const values = body.ExpressionAttributeValues;
    return (
        itemSize(body.Item ?? body.Key ?? {}) +
        expressionSize(body.UpdateExpression, names, values) +
        expressionSize(body.ConditionExpression, names, values)
    );
}

/** The table an action is on, and its key (a Put's item stands in for its key), or `undefined`. */
export function actionTarget(action: TransactWriteItem): {
    readonly tableName: string | undefined;
    readonly key: Record<string, AttributeValue> | undefined;
} {
    const body = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck;
    const key =
        (body as { Key?: Record<string, AttributeValue> } | undefined)?.Key ??
        (body as { Item?: Record<string, AttributeValue> } | undefined)?.Item;
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
    return code === "ConditionalCheckFailed"
        ? "CONDITION_FAILED"
        : classifyAwsError({ CancellationReasons: [{ Code: code }] });
}
