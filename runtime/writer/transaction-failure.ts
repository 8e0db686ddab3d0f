/**
 * Explaining a failed write: a cancelled transaction's reasons, one per action, turned into one error that names
 * the caller's item or message behind each failed action, and why. A refused id guard tells a repeated write
 * (`DUPLICATE_RECORD`) from an id another record holds (`INVALID_PAYLOAD`), by the holder DynamoDB returned.
 *
 * @packageDocumentation
 */
import type { AttributeValue, TransactWriteItem, TransactWriteItemsCommandInput } from "@aws-sdk/client-dynamodb";
import { OutboxError, type OutboxErrorCode } from "../errors";
import type { PreparedMessage } from "./outbox-message";
import { readIdGuard } from "../record/id-guard";
import { awsErrorName, cancellationCodes, classifyAwsError, isTransactionCanceled } from "../store/aws-errors";
import { cancellationReasonCode, describeAction, describeValue } from "../record/transact-items";

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

/** What a failure is explained from: the transaction as sent, and who each of its actions belongs to. */
export interface SentTransaction {
    readonly input: TransactWriteItemsCommandInput;
    readonly describe: (actionIndex: number) => FailedAction;
}

/** A cancellation reason, as the SDK's error carries it. */
type CancellationReason = { Message?: string; Item?: Record<string, AttributeValue> } | undefined;

/** A cancelled action: its index, DynamoDB's code and message, and whose it is. */
interface CancelledAction {
    readonly i: number;
    readonly code: string;
    readonly message: string;
    readonly who: FailedAction;
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

/**
 * Who the transaction action at `actionIndex` belongs to: the caller's items come first, then one record Put per
 * message, then the id guards.
 */
export function describeFailedAction(
    actionIndex: number,
    items: readonly TransactWriteItem[],
    prepared: readonly PreparedMessage[],
    guarded: readonly PreparedMessage[],
): FailedAction {
    if (actionIndex < items.length)
        return { kind: "item", index: actionIndex, text: describeAction(items[actionIndex]!, actionIndex) };
    const describeMessage = (p: PreparedMessage): string =>
        `messages[${p.index}] (id "${p.id}", partition ${describeValue(p.message.partition)})`;
    const p = prepared[actionIndex - items.length];
    if (p !== undefined) return { kind: "message", index: p.index, messageId: p.id, text: describeMessage(p) };
    const g = guarded[actionIndex - items.length - prepared.length];
    if (g !== undefined)
        return { kind: "message", index: g.index, messageId: g.id, idGuard: true, text: describeMessage(g) };
    return { kind: "item", index: actionIndex, text: `action ${actionIndex}` };
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
function explainGuardRefusal(
    who: FailedAction,
    i: number,
    reason: CancellationReason,
    sent: SentTransaction,
    recordAlsoFailed: boolean,
): ExplainedFailure {
    const base = { i, reason: "ConditionalCheckFailed", who };
    if (recordAlsoFailed) return { ...base, code: "DUPLICATE_RECORD", text: undefined };
    const holder = readIdGuard(reason?.Item);
    const mine = readIdGuard(sent.input.TransactItems?.[i]?.Put?.Item);
    if (
        holder !== undefined &&
        mine !== undefined &&
        holder.partition === mine.partition &&
        holder.bindingId === mine.bindingId
    ) {
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

/**
 * Map a failed transaction to an error naming the item or message that failed, and why.
 *
 * @param err - What the TransactWriteItems call threw.
 * @param sent - The transaction as sent.
 */
export function cancellationError(err: unknown, sent: SentTransaction): OutboxError {
    if (!isTransactionCanceled(err)) return failedTransactionError(err);
    const reasons = (err as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
    const cancelled = cancellationCodes(err)
        .map((code, i): CancelledAction => ({ i, code, message: reasons[i]?.Message ?? "", who: sent.describe(i) }))
        .filter((r) => r.code !== "" && r.code !== "None");
    if (cancelled.length === 0) {
        return new OutboxError(
            "UNAVAILABLE",
            "write: the outbox transaction was cancelled with no reasons; nothing was written; retry",
            { cause: err },
        );
    }
    return cancelledError(
        err,
        cancelled.map((r) => explainCancelled(r, cancelled, reasons, sent)),
    );
}

/** A transaction that failed without being cancelled: throttled, unavailable, or a token reused for another request. */
function failedTransactionError(err: unknown): OutboxError {
    const mismatch = awsErrorName(err) === "IdempotentParameterMismatchException";
    const code = mismatch ? "INVALID_PAYLOAD" : classifyAwsError(err);
    const hint = mismatch
        ? " (the clientRequestToken was already used for a different request; commit the same prepared write, or use a new token)"
        : "";
    return new OutboxError(code, `write: the outbox transaction failed${hint}; nothing was written`, { cause: err });
}

/** One cancelled action, explained; `cancelled` holds every one of them (a guard's explanation reads its record's). */
function explainCancelled(
    r: CancelledAction,
    cancelled: readonly CancelledAction[],
    reasons: readonly CancellationReason[],
    sent: SentTransaction,
): ExplainedFailure {
    const base = { i: r.i, reason: r.code, who: r.who };
    if (r.who.kind === "message" && r.code === "ConditionalCheckFailed") {
        if (r.who.idGuard === true) {
            const recordFailed = cancelled.some(
                (c) =>
                    c.who.kind === "message" &&
                    c.who.idGuard !== true &&
                    c.who.index === r.who.index &&
                    c.code === "ConditionalCheckFailed",
            );
            return explainGuardRefusal(r.who, r.i, reasons[r.i], sent, recordFailed);
        }
        return {
            ...base,
            code: "DUPLICATE_RECORD",
            text: `${r.who.text}: a record with this id already exists in the partition`,
        };
    }
    const what = r.who.idGuard === true ? `${r.who.text}'s id guard` : r.who.text;
    return {
        ...base,
        code: cancellationReasonCode(r.code),
        text: `${what}: ${r.code}${r.message ? ` (${r.message})` : ""}`,
    };
}

/** The error of a cancelled transaction: the code and context of its first failure, the texts of all. */
function cancelledError(err: unknown, failed: readonly ExplainedFailure[]): OutboxError {
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
            ...(who.kind === "message"
                ? { messageIndex: who.index, messageId: who.messageId }
                : { itemIndex: who.index }),
            ...(who.idGuard === true ? { idGuard: true } : {}),
            ...(first.heldBy !== undefined ? { heldByPartition: first.heldBy } : {}),
            reason: first.reason,
        },
    });
}
