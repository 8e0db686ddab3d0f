/**
 * What every destination kind offers the relay, and the one rule they share: a batch call's outcome, entry by
 * entry. Each kind (`sns.ts`, `sqs.ts`, `eventbridge.ts`) builds its own request and reads its own answer; the
 * publisher and the sweeper only ever see a {@link Destination} and {@link PublishResult}s, so the rules the relay
 * keeps (the lowest failure reported, accepted entries completed, a record's own refusal held to its key, a fault
 * of the deployment holding the shard, throttling retried) are written once.
 *
 * @packageDocumentation
 */
import type { OutboundMessage } from "../record/message";
import { awsErrorName } from "../store/aws-errors";
import type { DestinationKind } from "./kind";

/** Every kind takes at most 10 entries per batch call (PublishBatch, SendMessageBatch, PutEvents). */
export const MAX_BATCH_ENTRIES = 10;

/** The most characters of an AWS error message kept in a result, a DLQ message or a log line. */
const MAX_ERROR_TEXT = 1024;

/** The outcome of publishing one message. */
export type PublishResult =
    | { readonly ok: true; readonly messageId: string }
    | { readonly ok: false; readonly code: string; readonly message: string; readonly permanent: boolean };

/**
 * What a failure to publish is a fault of, whatever the destination:
 * - `message`: this message can never be delivered (its content, its size, a parameter of its own). It is counted
 *   on the record, holds only its ordering key, and is dead-lettered at `maxPublishAttempts`.
 * - `deployment`: the destination, its KMS key or the function's permissions are wrong. Every message would fail the
 *   same way, so the record is never counted or dead-lettered: the shard holds, Lambda retries, and the operator's
 *   alarm fires.
 * - `transient`: throttling, internal errors, timeouts: retried as they are.
 */
export type PublishFailureKind = "message" | "deployment" | "transient";

/** A destination of one kind, ready to take batch calls. Built once per cold start by `createDestination`. */
export interface Destination {
    /** Which kind it is. */
    readonly kind: DestinationKind;
    /** The topic, queue or bus ARN. */
    readonly arn: string;
    /** Whether it keeps per-group order (an SNS FIFO topic or an SQS FIFO queue; a bus never does). */
    readonly fifo: boolean;
    /** The most bytes one call may carry, counted by {@link Destination.entryBytes}. */
    readonly bytesPerCall: number;
    /**
     * One message's size as this kind counts it toward {@link Destination.bytesPerCall}.
     *
     * @param message - The published form.
     */
    entryBytes(message: OutboundMessage): number;
    /**
     * Send one batch call of at most {@link MAX_BATCH_ENTRIES} messages and read each entry's outcome, in order. An
     * entry the answer names in neither its successes nor its failures is a transient `NoResult`.
     *
     * @param messages - The call's messages.
     * @throws the SDK's error when the whole call fails.
     */
    sendCall(messages: readonly OutboundMessage[]): Promise<PublishResult[]>;
    /**
     * What a failure is a fault of.
     *
     * @param code - The SDK error name or an entry's error code.
     * @param senderFault - Whether the service blamed the sender (SNS and SQS entries say so; a call's error: false).
     * @param message - The error's message (services name the parameter they refuse).
     */
    classify(code: string, senderFault: boolean, message: string): PublishFailureKind;
}

/**
 * A refusal's text without the value it echoes: SQS words a refused value as `Value <value> for parameter <name> is
 * invalid. Reason: <reason>`, and a classification must read what the refusal is about (the parameter and the
 * reason), never the message's own value, which may hold any words (a partition named "queue type" included).
 *
 * @param text - The error's message.
 */
export function refusalWithoutValue(text: string): string {
    const echoed = /^Value [\s\S]* (for parameter \S+ is invalid\.[\s\S]*)$/.exec(text);
    return echoed === null ? text : echoed[1]!;
}

/**
 * An error's text, at most 1024 characters.
 *
 * @param err - An error, or an entry's message.
 */
export function boundedErrorText(err: unknown): string {
    const text = err instanceof Error ? err.message : String(err);
    return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT - 1)}…` : text;
}

/**
 * A refused entry's result, classified by its destination.
 *
 * @param destination - The destination that refused it.
 * @param code - The entry's error code. `"UnknownError"` when the answer gave none.
 * @param senderFault - Whether the service blamed the sender.
 * @param message - The entry's error message.
 */
export function refusedEntry(
    destination: Pick<Destination, "classify">,
    code: string | undefined,
    senderFault: boolean,
    message: string | undefined,
): PublishResult {
    const c = code ?? "UnknownError";
    return {
        ok: false,
        code: c,
        message: boundedErrorText(message ?? ""),
        permanent: destination.classify(c, senderFault, message ?? "") === "message",
    };
}

/**
 * The results of a call before its answer is read: every entry `NoResult` (transient), until the answer says
 * otherwise. An answer with no output at all (a broken proxy or SDK middleware) leaves them so.
 *
 * @param label - The destination's name in the message (`SNS`, `SQS`, `EventBridge`).
 * @param count - Entries in the call.
 */
export function unanswered(label: string, count: number): PublishResult[] {
    return Array.from({ length: count }, () => ({
        ok: false,
        code: "NoResult",
        message: `${label} reported neither success nor failure for this entry`,
        permanent: false,
    }));
}

/** The answer of a batch call whose entries are named by `Id`: SNS's `PublishBatch` and SQS's `SendMessageBatch`. */
export interface IdBatchAnswer {
    /** The accepted entries. */
    readonly Successful?: readonly { readonly Id?: string; readonly MessageId?: string }[];
    /** The refused entries, each with its code, its sender flag and its message. */
    readonly Failed?: readonly {
        readonly Id?: string;
        readonly Code?: string;
        readonly SenderFault?: boolean;
        readonly Message?: string;
    }[];
}

/**
 * The results of an answer whose entries are named by `Id` (the entry's index in the call), aligned with the call's
 * entries; an entry named in neither list stays `NoResult` ({@link unanswered}).
 *
 * @param destination - Its label and its classification of an entry's code.
 * @param out - The answer; `undefined` when the call answered nothing.
 * @param count - Entries in the call.
 */
export function readIdBatchAnswer(
    destination: { readonly label: string } & Pick<Destination, "classify">,
    out: IdBatchAnswer | undefined,
    count: number,
): PublishResult[] {
    const results = unanswered(destination.label, count);
    const at = (id: string | undefined) => {
        const i = Number(id);
        return Number.isInteger(i) && i >= 0 && i < count ? i : undefined;
    };
    for (const s of out?.Successful ?? []) {
        const i = at(s.Id);
        if (i !== undefined) results[i] = { ok: true, messageId: s.MessageId ?? "" };
    }
    for (const f of out?.Failed ?? []) {
        const i = at(f.Id);
        if (i !== undefined) results[i] = refusedEntry(destination, f.Code, f.SenderFault === true, f.Message);
    }
    return results;
}

/**
 * Publish up to 10 messages in one batch call and report each entry's outcome, in order. When the whole call fails
 * with an error that blames the messages and it holds several, each is sent alone to find out which one the
 * destination refuses; any other whole-call failure is every entry's result.
 *
 * @param destination - Where to.
 * @param messages - At most 10 messages, within the destination's bytes per call (see `publishBatches`).
 */
export async function publishBatch(
    destination: Destination,
    messages: readonly OutboundMessage[],
): Promise<PublishResult[]> {
    try {
        return await destination.sendCall(messages);
    } catch (err) {
        const code = awsErrorName(err) || "UnknownError";
        const text = boundedErrorText(err);
        const permanent = destination.classify(code, false, text) === "message";
        if (permanent && messages.length > 1) {
            const results: PublishResult[] = [];
            for (const m of messages) results.push(...(await publishBatch(destination, [m])));
            return results;
        }
        return messages.map(() => ({ ok: false, code, message: text, permanent }));
    }
}

/**
 * Split messages into batch calls, in order: at most 10 entries and the destination's bytes per call, and, when
 * `oneEntryPerKey` is set, never two entries with the same ordering key in one call (so a failed entry can never
 * be overtaken by a later entry of its key that the destination accepted in the same call).
 *
 * @param destination - Whose limits.
 * @param items - What to publish, in delivery order; each carries its published form.
 * @param oneEntryPerKey - Keep entries of one ordering key in separate calls.
 */
export function publishBatches<T extends { readonly message: OutboundMessage }>(
    destination: Pick<Destination, "bytesPerCall" | "entryBytes">,
    items: readonly T[],
    oneEntryPerKey: boolean,
): T[][] {
    const batches: T[][] = [];
    let current: T[] = [];
    let bytes = 0;
    for (const item of items) {
        const size = destination.entryBytes(item.message);
        const key = item.message.orderingKey;
        const keyClash = oneEntryPerKey && key !== undefined && current.some((c) => c.message.orderingKey === key);
        if (
            current.length > 0 &&
            (current.length === MAX_BATCH_ENTRIES || bytes + size > destination.bytesPerCall || keyClash)
        ) {
            batches.push(current);
            current = [];
            bytes = 0;
        }
        current.push(item);
        bytes += size;
    }
    if (current.length > 0) batches.push(current);
    return batches;
}
