/**
 * DLQ redrive: move dead-lettered messages back into the outbox once their cause is fixed (a topic policy, a
 * message SNS refused, an outage that outlasted the records' expiry). Each DLQ message is re-written as a FRESH
 * outbox record through {@link OutboxWriter}, with the original partition, ordering key, type, headers and payload,
 * and deleted from the DLQ only after that write committed. The stream publisher then delivers it like any other
 * record.
 *
 * Idempotent on the dead-lettered record's id: the new record's id is derived from it ({@link redriveRecordId}), so a redrive repeated after a crash, a failed delete or a duplicate DLQ message finds
 * the record already written (`DUPLICATE_RECORD`), writes nothing, and only deletes the DLQ message.
 *
 * What a redriven message keeps and what it does not:
 * - its ordering key and partition: it is published in order with the messages of its key written after the
 *   redrive (it goes to the END of its key's sequence: the messages written meanwhile were already published);
 * - its type, headers, trace context (`traceparent`, `tracestate`) and payload (the payload as JSON, exactly as
 *   the DLQ message holds it);
 * - not its expiry: an expired message would expire again at once. Pass `expiresAt` to give redriven messages a
 *   new one;
 * - its identity: the new record has an id of its own (table-unique, claimed by its id guard), and carries the
 *   dead-lettered event's identity as its origin id (`OutboxMessage.originId`, the envelope header
 *   `outbox.origin-id`): the dead letter's `originId` when it was itself a redrive, else its `recordId`. The relay
 *   publishes the origin id as the message's `outbox.id` (and FIFO `MessageDeduplicationId`, and
 *   `detail.outbox.id` on a bus), so a consumer that deduplicates on it, the inbox among them, does not apply again
 *   an event it applied before it was dead-lettered (a record published, then dead-lettered as expired because its
 *   completion failed).
 *
 * Messages that are not outbox records (the event source mapping's on-failure metadata, foreign messages), whose
 * payload the DLQ kept as raw text (not JSON, or JSON that would not read back identically), or that OutboxWriter
 * refuses (a reserved or an eighth header, no type, a character SQS and SNS refuse, a numeric ordering key…) are left
 * in the DLQ and counted once per run as not redrivable, with the reason, never deleted and never retried within
 * the run: re-writing them would change them, or fail the same way every time.
 *
 * A DLQ message's body is redriven as it is: nothing proves this package wrote it. Redrive trusts whoever can
 * `sqs:SendMessage` to the DLQ (see docs/operations.md, "Redriving the DLQ").
 *
 * @packageDocumentation
 */
import type { Message, ReceiveMessageCommandOutput } from "@aws-sdk/client-sqs";
import { isOutboxError, OutboxError } from "../errors";
import { sqsSdk } from "../sdk-clients";
import { integerIn } from "../integer-setting";
import { REDRIVE_LIMITS } from "../limits";
import { silentLogger, type Logger } from "../ports";
import { awsErrorName, wrapAwsError } from "../store/aws-errors";
import { redriveRecordId } from "../record/redrive-id";
import { definedFields } from "../record/defined-fields";
import type { OutboxMessage, OutboxWriter } from "./writer";

/** Anything with an AWS SDK v3 SQS client's `send`. */
export interface SqsClientLike {
    /** Send an SQS command. */
    send(command: object): Promise<unknown>;
}

/** Options of {@link redriveDeadLetters}. */
export interface RedriveOptions {
    /** The SQS client of the DLQ. */
    readonly sqs: SqsClientLike;
    /** The DLQ URL (the Outbox component's `dlqUrl` output). */
    readonly queueUrl: string;
    /** A writer on the outbox table. Its `fifo` setting checks group ids as the publisher will use them. */
    readonly writer: OutboxWriter;
    /** Stop after this many DLQ messages were received (1–1000000). @default 1000 */
    readonly maxMessages?: number;
    /** How long a received message stays hidden while it is redriven, seconds (1–43200). @default 60 */
    readonly visibilityTimeoutSeconds?: number;
    /** The expiry of every redriven message. @default undefined (redriven messages never expire) */
    readonly expiresAt?: Date;
    /** Decide and report, but write and delete nothing. @default false */
    readonly dryRun?: boolean;
    /** Logs: ids and counts, never payloads. @default silentLogger */
    readonly logger?: Logger;
}

/** What one redrive did. */
export interface RedriveResult {
    /** DLQ messages received, each counted once per run. */
    readonly received: number;
    /** Written as new outbox records (and deleted from the DLQ). */
    readonly redriven: number;
    /** Already redriven by an earlier run (the record existed): deleted from the DLQ, nothing written. */
    readonly alreadyRedriven: number;
    /**
     * Left in the DLQ because they can never be redriven as they are: not outbox records, a payload kept as raw text,
     * or a message `OutboxWriter` refuses (a reserved header, too many headers, no type, a character SQS and SNS
     * refuse…). Each is counted once per run, with its reason in {@link RedriveResult.problems}; it is not retried.
     */
    readonly notRedrivable: number;
    /** The write or the delete failed: left in the DLQ (visible again after the visibility timeout). */
    readonly failed: number;
    /**
     * Ids of the redriven records: `[dead-lettered record's id, new record's id, origin id]`; the origin id is the
     * identity the new record is published under (`outbox.id`), the dead-lettered record's own or, when that was a
     * redrive too, its origin id.
     */
    readonly records: readonly (readonly [string, string, string])[];
    /** Why each not-redrivable message was left in the DLQ, once per message. */
    readonly problems: readonly RedriveProblem[];
}

/** A DLQ message left in the queue because it cannot be redriven, and why. */
export interface RedriveProblem {
    /** The SQS message id. */
    readonly sqsMessageId: string;
    /** The dead-lettered record's id, when the body names one. */
    readonly recordId?: string;
    /** Why it cannot be redriven, and what to do instead. */
    readonly problem: string;
}

/** The outbox fields of a DLQ message body (see `deadLetterMessage` in message.ts). */
export interface DeadLetterBody {
    readonly recordId: string;
    /**
     * The identity of the event the dead-lettered record carried again, when a redrive wrote it: kept as the origin
     * id of the record a redrive writes. @default undefined (the record was its own event: `recordId`)
     */
    readonly originId?: string;
    readonly partition: string;
    readonly type: string;
    readonly orderingKey?: string;
    readonly headers: Record<string, string>;
    /** The record's W3C trace context, when it carried one: written again with the redriven record. */
    readonly traceparent?: string;
    /** The record's W3C `tracestate`, when it carried one. */
    readonly tracestate?: string;
    /** The event's schema version, when it carried one: written again with the redriven record. */
    readonly schemaVersion?: string;
    readonly payload: unknown;
}

function describe(value: unknown): string {
    if (value === undefined) return "absent";
    const text = JSON.stringify(value) ?? String(value);
    return `${typeof value === "number" ? "the number " : ""}${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
}

/**
 * Read a DLQ message body as an outbox dead letter, or explain why it is not one.
 *
 * @param body - The SQS message body.
 * @returns the fields, or `{ problem }` (with the record id when the body names one).
 */
export function parseDeadLetter(
    body: string | undefined,
): DeadLetterBody | { readonly problem: string; readonly recordId?: string } {
    let parsed: unknown;
    try {
        parsed = JSON.parse(body ?? "");
    } catch {
        return { problem: "the body is not JSON" };
    }
    const b = parsed as Record<string, unknown> | null;
    if (b === null || typeof b !== "object" || Array.isArray(b)) return { problem: "the body is not a JSON object" };
    if ("DDBStreamBatchInfo" in b)
        return {
            problem:
                "it is the event source mapping's on-failure metadata, not a record: read the records by sequence number from the stream",
        };
    const text = (name: string) => (typeof b[name] === "string" && b[name] !== "" ? (b[name] as string) : undefined);
    const recordId = text("recordId");
    const partition = text("partition");
    if (recordId === undefined || partition === undefined)
        return { problem: "it has no recordId and partition: not an outbox dead letter" };
    if (!("payload" in b))
        return {
            recordId,
            problem:
                "its payload is kept as raw text (not JSON, or JSON that would not read back identically, e.g. an integer beyond 2^53); OutboxWriter would change it: publish it by hand",
        };
    const headers = b.headers ?? {};
    if (
        typeof headers !== "object" ||
        headers === null ||
        Array.isArray(headers) ||
        Object.values(headers).some((v) => typeof v !== "string")
    ) {
        return { recordId, problem: "its headers are not an object of strings" };
    }
    const type = text("type");
    if (type === undefined)
        return {
            recordId,
            problem: `it has no type (${describe(b.type)}); OutboxWriter writes every record with one: publish it by hand, or give it a type and send it again`,
        };
    if ("orderingKey" in b && text("orderingKey") === undefined) {
        return {
            recordId,
            problem: `its orderingKey is ${describe(b.orderingKey)}, not a non-empty string: this package writes ordering keys as strings, and redriving it with another key, or none, would change the order it is delivered in; publish it by hand`,
        };
    }
    const orderingKey = text("orderingKey");
    if ("originId" in b && text("originId") === undefined)
        return {
            recordId,
            problem: `its originId is ${describe(b.originId)}, not a non-empty string: redriving it would publish it under another identity, and a consumer would apply it again; publish it by hand`,
        };
    const originId = text("originId");
    // Judged by the writer, as the headers are: a trace context it refuses leaves the message in the DLQ, named.
    const trace = Object.fromEntries(
        (["traceparent", "tracestate", "schemaVersion"] as const)
            .filter((name) => b[name] !== undefined)
            .map((name) => [name, b[name]]),
    ) as { traceparent?: string; tracestate?: string; schemaVersion?: string };
    return {
        recordId,
        ...(originId !== undefined ? { originId } : {}),
        partition,
        type,
        ...(orderingKey !== undefined ? { orderingKey } : {}),
        headers: headers as Record<string, string>,
        ...trace,
        payload: b.payload,
    };
}

/**
 * Redrive DLQ messages into the outbox: receive, re-write each as a fresh record, delete it from the DLQ once the
 * write committed. Runs until the queue answers empty or `maxMessages` were received.
 *
 * @param options - Clients, queue, writer and limits.
 * @returns counts, and the `[dead-lettered id, new id, origin id]` of every record written.
 * @throws OutboxError `INVALID_CONFIG` for bad options; a classified error when SQS cannot be read.
 * @example
 * const result = await redriveDeadLetters({
 *   sqs: new SQSClient({}), queueUrl: process.env.OUTBOX_DLQ_URL!,
 *   writer: new OutboxWriter({ client: new DynamoDBClient({}), tableName: "orders-outbox" }),
 * });
 */
export async function redriveDeadLetters(options: RedriveOptions): Promise<RedriveResult> {
    const run = startRedrive(options);
    while (run.counts.received < run.maxMessages) {
        const messages = await receiveBatch(run);
        // Empty, or only messages this run already left there: the queue has nothing else to give.
        if (messages.length === 0) break;
        for (const m of messages) {
            run.counts.received += 1;
            await redriveOne(run, m);
        }
    }
    return { ...run.counts, records: run.records, problems: run.problems };
}

/** One redrive run: its options, limits, and what it did so far. */
interface RedriveRun {
    readonly options: RedriveOptions;
    readonly maxMessages: number;
    readonly visibility: number;
    readonly logger: Logger;
    readonly counts: {
        received: number;
        redriven: number;
        alreadyRedriven: number;
        notRedrivable: number;
        failed: number;
    };
    readonly records: [string, string, string][];
    readonly problems: RedriveProblem[];
    /** The messages this run left in the DLQ: one the queue hands out again (its visibility timeout ran out) is not counted twice. */
    readonly left: Set<string>;
}

/**
 * Check the options and start a run.
 *
 * @throws OutboxError `INVALID_CONFIG` naming the option, the bad value and what is allowed.
 */
function startRedrive(options: RedriveOptions): RedriveRun {
    if (typeof options?.sqs?.send !== "function")
        throw new OutboxError(
            "INVALID_CONFIG",
            "redriveDeadLetters: sqs must be an SQSClient from @aws-sdk/client-sqs",
        );
    if (typeof options.queueUrl !== "string" || options.queueUrl === "") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `redriveDeadLetters: queueUrl must be the DLQ URL (the Outbox component's dlqUrl output), got ${JSON.stringify(options.queueUrl)}`,
        );
    }
    if (options.writer === undefined || typeof options.writer.write !== "function")
        throw new OutboxError(
            "INVALID_CONFIG",
            "redriveDeadLetters: writer must be an OutboxWriter on the outbox table",
        );
    if (
        options.expiresAt !== undefined &&
        !(options.expiresAt instanceof Date && Number.isFinite(options.expiresAt.getTime()))
    ) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `redriveDeadLetters: expiresAt must be a valid Date, got ${String(options.expiresAt)}`,
        );
    }
    return {
        options,
        maxMessages: integerIn("redriveDeadLetters", "maxMessages", options.maxMessages, REDRIVE_LIMITS.maxMessages),
        visibility: integerIn(
            "redriveDeadLetters",
            "visibilityTimeoutSeconds",
            options.visibilityTimeoutSeconds,
            REDRIVE_LIMITS.visibilityTimeoutSeconds,
        ),
        logger: options.logger ?? silentLogger,
        counts: { received: 0, redriven: 0, alreadyRedriven: 0, notRedrivable: 0, failed: 0 },
        records: [],
        problems: [],
        left: new Set(),
    };
}

/** SQS's names for a queue that does not exist: the JSON protocol's, then the query protocol's. */
const MISSING_QUEUE_NAMES: readonly string[] = ["QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"];

/** The next messages of the DLQ, without those this run already left there. */
async function receiveBatch(run: RedriveRun): Promise<Message[]> {
    const { options } = run;
    let out: ReceiveMessageCommandOutput;
    try {
        out = (await options.sqs.send(
            new (sqsSdk().ReceiveMessageCommand)({
                QueueUrl: options.queueUrl,
                MaxNumberOfMessages: Math.min(10, run.maxMessages - run.counts.received),
                VisibilityTimeout: run.visibility,
                WaitTimeSeconds: 0,
                MessageAttributeNames: ["All"],
            }),
        )) as ReceiveMessageCommandOutput;
    } catch (err) {
        // The DynamoDB store's rules know no SQS names: a missing DLQ is named here, so it is not "unrecognized".
        if (MISSING_QUEUE_NAMES.includes(awsErrorName(err)))
            throw new OutboxError("NOT_FOUND", "redrive: receiving from the DLQ failed", {
                cause: err,
                context: { queueUrl: options.queueUrl },
            });
        throw wrapAwsError(err, "redrive: receiving from the DLQ failed", { queueUrl: options.queueUrl });
    }
    return (out.Messages ?? []).filter((m) => !run.left.has(m.MessageId ?? ""));
}

/** One DLQ message: left in the DLQ if it cannot be redriven, else checked by the writer and written back. */
async function redriveOne(run: RedriveRun, m: Message): Promise<void> {
    const dead = parseDeadLetter(m.Body);
    if ("problem" in dead) {
        leave(run, m, dead.problem, dead.recordId);
        return;
    }
    const newId = redriveRecordId(dead.recordId);
    const message: OutboxMessage & { readonly id: string; readonly originId: string } = {
        id: newId,
        originId: dead.originId ?? dead.recordId,
        partition: dead.partition,
        type: dead.type,
        payload: dead.payload,
        headers: dead.headers,
        ...definedFields(dead, "traceparent", "tracestate", "schemaVersion", "orderingKey"),
        ...(run.options.expiresAt !== undefined ? { expiresAt: run.options.expiresAt } : {}),
    };
    try {
        run.options.writer.check({ messages: [message] });
    } catch (err) {
        // What the writer refuses it refuses on every run: say so once, and leave the message be.
        if (!isOutboxError(err, "INVALID_PAYLOAD")) throw err;
        leave(
            run,
            m,
            `OutboxWriter refuses it: ${err.message}; publish it by hand, or fix the message and send it to the DLQ again`,
            dead.recordId,
        );
        return;
    }
    if (run.options.dryRun) {
        run.counts.redriven += 1;
        run.records.push([dead.recordId, newId, message.originId]);
        return;
    }
    await writeBack(run, m, dead, message);
}

/** Write the message back into the outbox, then delete it from the DLQ; a repeat only deletes it. */
async function writeBack(
    run: RedriveRun,
    m: Message,
    dead: DeadLetterBody,
    message: OutboxMessage & { readonly id: string; readonly originId: string },
): Promise<void> {
    const { counts } = run;
    try {
        await run.options.writer.write({ messages: [message] });
    } catch (err) {
        if (isOutboxError(err, "DUPLICATE_RECORD")) {
            if (await remove(run, m, dead.recordId)) counts.alreadyRedriven += 1;
            else counts.failed += 1;
            return;
        }
        if (isOutboxError(err, "INVALID_PAYLOAD")) {
            // A refusal no retry changes (DynamoDB's ValidationException, the id held by a record elsewhere).
            leave(run, m, `the write was refused: ${err.message}`, dead.recordId);
            return;
        }
        counts.failed += 1;
        run.logger.error("redrive: writing the record failed; the message stays in the DLQ", {
            recordId: dead.recordId,
            partition: dead.partition,
            code: isOutboxError(err) ? err.code : "UNKNOWN",
        });
        return;
    }
    run.records.push([dead.recordId, message.id, message.originId]);
    run.logger.info("redrive: dead letter written back to the outbox", {
        recordId: dead.recordId,
        newRecordId: message.id,
        originId: message.originId,
        partition: dead.partition,
    });
    if (await remove(run, m, dead.recordId)) counts.redriven += 1;
    else counts.failed += 1;
}

/** Leave a message in the DLQ as not redrivable, counted once per run, with the reason. */
function leave(run: RedriveRun, m: Message, problem: string, recordId?: string): void {
    run.counts.notRedrivable += 1;
    run.left.add(m.MessageId ?? "");
    run.problems.push({ sqsMessageId: m.MessageId ?? "", ...(recordId !== undefined ? { recordId } : {}), problem });
    run.logger.warn("redrive: not redrivable, left in the DLQ", {
        sqsMessageId: m.MessageId,
        ...(recordId !== undefined ? { recordId } : {}),
        problem,
    });
}

/** Delete a redriven message from the DLQ; returns whether it was deleted. */
async function remove(run: RedriveRun, m: Message, recordId: string): Promise<boolean> {
    try {
        await run.options.sqs.send(
            new (sqsSdk().DeleteMessageCommand)({ QueueUrl: run.options.queueUrl, ReceiptHandle: m.ReceiptHandle }),
        );
        return true;
    } catch (err) {
        // The record is written; the next run finds it (DUPLICATE_RECORD) and deletes the message then.
        run.logger.warn(
            "redrive: the record is written but the DLQ message could not be deleted; a later run deletes it",
            { recordId, sqsMessageId: m.MessageId, code: awsErrorName(err) || "UNKNOWN" },
        );
        return false;
    }
}
