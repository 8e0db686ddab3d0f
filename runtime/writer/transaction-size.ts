/**
 * What one write's transaction may hold, as DynamoDB counts it: at most {@link MAX_TRANSACTION_ACTIONS} actions
 * (the caller's items, one record per message, one id guard per message whose id the writer did not generate),
 * each item at most 400 KB, each outbox record at most {@link MAX_RECORD_BYTES} (400 KB less what the relay's
 * transitions add to it), and the whole at most 4 MB. A record over its limit is explained by what it is spent on.
 *
 * @packageDocumentation
 */
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import type { OutboxError } from "../errors";
import {
    itemSize,
    MAX_ITEM_BYTES,
    MAX_RECORD_BYTES,
    MAX_TRANSACTION_ACTIONS,
    MAX_TRANSACTION_BYTES,
    TRANSITION_MARGIN_BYTES,
    utf8Length,
} from "../record/item-size";
import { envelopeHeaders, type PreparedMessage } from "./outbox-message";
import { invalidPayload as invalid } from "../record/payload-error";
import { goJsonStringify } from "../record/envelope";
import { actionSize, transactionActionSize } from "../record/transact-items";

/**
 * Check that the caller's items, the messages and their id guards fit one transaction.
 *
 * @param items - How many items the caller passed.
 * @param messages - How many messages.
 * @param guards - How many of the messages get an id guard.
 * @throws OutboxError `INVALID_PAYLOAD` when there is nothing to write, or more than a transaction holds.
 */
export function checkActionCount(items: number, messages: number, guards: number): void {
    const actions = items + messages + guards;
    if (actions === 0) throw invalid("write: nothing to write; pass at least one message or item");
    if (actions <= MAX_TRANSACTION_ACTIONS) return;
    const guardText = guards === 0 ? "" : ` + ${guards} id guards`;
    const why =
        guards === 0
            ? "split the write"
            : "each message whose id the writer did not generate (a caller-supplied id, or one from an injected idGenerator) adds one id guard Put, which keeps the id unique across the table; split the write, or omit the ids (the writer's own ULIDs need no guard)";
    throw invalid(
        `write: ${items} items + ${messages} messages${guardText} = ${actions} actions; a DynamoDB transaction holds at most ${MAX_TRANSACTION_ACTIONS}; ${why}`,
        { actions, idGuards: guards },
    );
}

/**
 * Check every outbox record against {@link MAX_RECORD_BYTES}, every caller's item against the item limit, and the
 * whole transaction against its limit, as DynamoDB counts it ({@link transactionActionSize}: items and keys, expressions, and the names and values they use).
 *
 * @param items - The caller's actions.
 * @param prepared - The messages, in request order.
 * @param recordPuts - The record Put of each message, in the same order.
 * @param guardPuts - The id guard Puts.
 * @throws OutboxError `INVALID_PAYLOAD` naming the message or item and its size.
 */
export function checkSizes(
    items: readonly TransactWriteItem[],
    prepared: readonly PreparedMessage[],
    recordPuts: readonly TransactWriteItem[],
    guardPuts: readonly TransactWriteItem[],
): void {
    let total = 0;
    for (const guard of guardPuts) total += transactionActionSize(guard);
    recordPuts.forEach((action, i) => {
        const size = itemSize(action.Put!.Item!);
        if (size > MAX_RECORD_BYTES) throw oversizedRecord(prepared[i]!, size);
        total += transactionActionSize(action);
    });
    items.forEach((action, i) => {
        const size = actionSize(action, i, `write: items[${i}]`);
        if (size > MAX_ITEM_BYTES)
            throw invalid(`write: items[${i}] is ${size} bytes; DynamoDB items hold at most ${MAX_ITEM_BYTES} bytes`, {
                item: i,
                size,
            });
        total += transactionActionSize(action);
    });
    if (total > MAX_TRANSACTION_BYTES) {
        const guardText =
            guardPuts.length === 0
                ? ""
                : ` (${guardPuts.length} id guard${guardPuts.length === 1 ? "" : "s"} included)`;
        throw invalid(
            `write: the transaction adds up to ${total} bytes as DynamoDB counts it (items and keys, expressions, and the names and values they use)${guardText}; a DynamoDB transaction holds at most ${MAX_TRANSACTION_BYTES} bytes; split the write`,
            { size: total },
        );
    }
}

/** What of a message's record its limit is spent on: the payload, the headers and the type, as `envelope_json` holds them. */
function recordParts(
    p: PreparedMessage,
): { readonly name: "payload" | "headers" | "type" | "orderingKey"; readonly bytes: number; readonly how: string }[] {
    const headers = envelopeHeaders(p);
    const key = p.message.orderingKey;
    return [
        { name: "payload", bytes: 4 * Math.ceil(utf8Length(p.body) / 3), how: "stored base64, 4/3 its size" },
        {
            name: "headers",
            bytes: Object.keys(headers).length === 0 ? 0 : utf8Length(goJsonStringify(headers)),
            how: "as Go's JSON, which writes <, > and & as six bytes each",
        },
        { name: "type", bytes: utf8Length(goJsonStringify(p.message.type)), how: "as Go's JSON" },
        {
            name: "orderingKey",
            bytes: key === undefined ? 0 : utf8Length(key) + utf8Length(goJsonStringify(key)),
            how: "twice: the ordering_key attribute and an envelope header",
        },
    ];
}

/** The fix of a record over {@link MAX_RECORD_BYTES}, aimed at the part that takes the most of it. */
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
    const spent = parts
        .filter((part) => part.bytes > 0)
        .map((part) => `${part.name} ${part.bytes} bytes (${part.how})`)
        .join(", ");
    return invalid(
        `write: messages[${p.index}] (id "${p.id}") makes an outbox record of ${size} bytes; an outbox record holds at most ${MAX_RECORD_BYTES} bytes (DynamoDB's ${MAX_ITEM_BYTES} less ${TRANSITION_MARGIN_BYTES} for what claiming, counting and completing it adds); of it: ${spent}; ${fix}`,
        {
            messageId: p.id,
            size,
            maxSize: MAX_RECORD_BYTES,
            part: biggest.name,
            ...Object.fromEntries(parts.map((part) => [`${part.name}Bytes`, part.bytes])),
        },
    );
}
