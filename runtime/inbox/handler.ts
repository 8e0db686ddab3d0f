/**
 * A Lambda SQS handler on the {@link Inbox}: it reads each record the way its delivery path laid it out, hands
 * the consumer the outbox id, type, headers, trace context and payload, applies the writes the consumer returns together with
 * the inbox marker, and reports the records that failed in `batchItemFailures`.
 *
 * On a FIFO queue it keeps each message group's order: after a record of a group fails, the group's later records
 * in the batch are failed without being handled, so they come back after it (Powertools'
 * `SqsFifoPartialProcessor` with `skipGroupOnError`). Other groups go on. When the invocation runs short of time,
 * every record not yet taken is reported, whatever its group.
 *
 * @packageDocumentation
 */
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { errorCodeOf, isOutboxError, OutboxError } from "../errors";
import { integerIn } from "../integer-setting";
import { createLambdaLogger } from "../observability/json-logger";
import { INBOX_HANDLER_LIMITS } from "../limits";
import type { LambdaSqsBatchResponse, LambdaSqsEvent, LambdaSqsRecord } from "./sqs-event";
import { sqsEventProblem, sqsRecordProblem } from "./sqs-event-check";
import type { Logger } from "../ports";
import { timeLeftIn } from "../time-left";
import { DELIVERY_FORMATS, parseDelivery, type DeliveredOutboxMessage, type DeliveryFormat } from "./delivery-formats";
import type { Inbox, InboxWrites } from "./inbox";
import {
    payloadRefusal,
    typedEventRules,
    type EventMap,
    type EventValidators,
    type IsUntyped,
    type TypedEvent,
    type TypedEventRules,
    type UntypedEvents,
    type UnvalidatedTypes,
} from "../record/typed-events";
import { isClaimCheck, type PayloadResolver } from "../claim-check/resolver";
import type { ClaimCheckPointer } from "../claim-check/pointer";

/** One message, as the consumer gets it. */
export interface InboxMessage extends DeliveredOutboxMessage {
    /** The payload: the body parsed as JSON. */
    readonly payload: unknown;
    /** The delivery format that read the record (`message-attributes`, `sns-envelope`, …). */
    readonly format: string;
    /** The SQS message id. A redelivery of the same SQS message keeps it; a second publish of the outbox id gets a new one. */
    readonly messageId: string;
    /** How many times SQS has handed out this message, this time included (`ApproximateReceiveCount`). */
    readonly receiveCount: number;
    /** The FIFO message group, on a FIFO queue. */
    readonly groupId?: string;
    /** The SQS record as Lambda delivered it, for anything else. */
    readonly record: LambdaSqsRecord;
    /** The claim check's pointer, when the payload came from S3 (`payloads`). @default undefined (it travelled inline) */
    readonly claimCheck?: ClaimCheckPointer;
}

/**
 * One message of a handler typed by the event map `M`: a union over its types, discriminated on `type`, each with
 * its own `payload` type. For the untyped map (the default) it is {@link InboxMessage} itself.
 */
export type TypedInboxMessage<M extends EventMap = UntypedEvents> =
    IsUntyped<M> extends true ? InboxMessage : TypedEvent<M, InboxMessage>;

/**
 * What a consumer returns: its writes as an array of SDK `TransactWriteItem`s, or as {@link InboxWrites}
 * (`{ items, documentItems }`, native values in `documentItems`), or nothing.
 */
export type InboxConsumerWrites = readonly TransactWriteItem[] | InboxWrites | void;

/**
 * The consumer: given one message, it returns the writes that apply its effect (its own Put/Update/Delete/
 * ConditionCheck actions, at most 99), as SDK `TransactWriteItem`s or as `{ items, documentItems }`. The handler
 * commits them with the inbox marker in one transaction. It may read, but it must not write elsewhere: it runs
 * again for a duplicate, whose writes are then dropped. Return nothing (or `[]`) to only record the message as
 * seen. Throw to fail the message; SQS redelivers it.
 */
export type InboxConsumer<M extends EventMap = UntypedEvents> = (
    message: TypedInboxMessage<M>,
) => Promise<InboxConsumerWrites> | InboxConsumerWrites;

/** Options of {@link createInboxHandler}; `M` is the event map (type → payload type) `consume` is typed by. */
export interface InboxHandlerOptions<M extends EventMap = UntypedEvents> {
    /** The inbox the markers go to: it names the consumer. */
    readonly inbox: Inbox;
    /** What to do with each message. */
    readonly consume: InboxConsumer<M>;
    /**
     * A Standard Schema validator per event type (zod, valibot, arktype…; it may be asynchronous). A message whose
     * payload fails its type's validator is poison: `INVALID_PAYLOAD` naming the SQS message, the outbox id, the
     * type and the path, logged at `error` and failed without reaching `consume`, so the queue's redrive
     * policy moves it to the DLQ (never acknowledged, never retried past `maxReceiveCount`). The validator only
     * judges: `consume` gets the payload that travelled.
     * @default undefined (no payload validated)
     */
    readonly validators?: EventValidators<M>;
    /**
     * What happens to a message whose type has no entry in `validators`: `"accept"` hands it to `consume`
     * unvalidated (a queue may carry types this consumer does not validate yet); `"refuse"` fails it as poison, for a
     * consumer whose union must hold at run time. Only with `validators`.
     * @default "accept"
     */
    readonly unvalidatedTypes?: UnvalidatedTypes;
    /**
     * Where failures are logged: a poison message (no outbox id, a body that is not JSON) at `error`, a failed
     * consumer or write at `warn` (transient) or `error`, the records a FIFO group skipped at `warn`, and each
     * batch's counts at `debug`. Ids and counts only, never a payload.
     * @default a JSON-lines logger at `AWS_LAMBDA_LOG_LEVEL` (`createLambdaLogger("inbox <consumer>")`)
     */
    readonly logger?: Logger;
    /** The delivery formats tried on each record, in order. @default DELIVERY_FORMATS (message attributes, an outbox's CloudEvent, the SNS envelope, the EventBridge event) */
    readonly formats?: readonly DeliveryFormat[];
    /**
     * Resolves claim checks (messages whose payload the writer stored in S3, `largePayloads`) to their payloads,
     * checked: `createPayloadResolver({ objects: new S3({}), bucket })`. Without it a claim check fails as a
     * misconfiguration (`INVALID_CONFIG`), never reaches `consume` as its pointer.
     * @default undefined (no claim checks expected)
     */
    readonly payloads?: PayloadResolver;
    /**
     * Take no new record when fewer than this many ms of the invocation remain (the Lambda context's
     * `getRemainingTimeInMillis()`): the records not taken are reported in `batchItemFailures`, so SQS redelivers
     * them, instead of the function's timeout failing the whole batch. Keep it above the time your slowest record
     * takes, and the function's timeout above it plus the time a batch takes. An invocation that starts with less
     * than this left fails with `INVALID_CONFIG`. From 0 to 900000.
     * @default 2000
     */
    readonly reserveMs?: number;
}

/** The Lambda context fields the inbox handler reads: only the time left. Lambda's own `Context` is one. */
export interface InboxHandlerContext {
    /**
     * Milliseconds left before the function's timeout: the handler takes no new record when fewer than `reserveMs`
     * remain. @default undefined (no deadline: a test, or a caller other than Lambda)
     */
    getRemainingTimeInMillis?(): number;
}

/**
 * The handler {@link createInboxHandler} returns: Lambda's SQS handler signature, with a partial batch response.
 * Without a context (or one without `getRemainingTimeInMillis`) it has no deadline.
 */
export type InboxHandler = (event: LambdaSqsEvent, context?: InboxHandlerContext) => Promise<LambdaSqsBatchResponse>;

/** Whether a record comes from a FIFO queue: its queue ARN ends in `.fifo`, or it carries a message group. */
export function isFifoRecord(record: LambdaSqsRecord): boolean {
    return (
        (typeof record.eventSourceARN === "string" && record.eventSourceARN.endsWith(".fifo")) ||
        record.attributes?.MessageGroupId !== undefined
    );
}

/** A delivered message with its payload: fetched and checked when it is a claim check. */
async function resolved(
    message: DeliveredOutboxMessage,
    messageId: string,
    payloads: PayloadResolver | undefined,
): Promise<DeliveredOutboxMessage & { readonly claimCheck?: ClaimCheckPointer }> {
    if (!isClaimCheck(message)) return message;
    if (payloads === undefined) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `SQS message ${messageId} (outbox id "${message.outboxId}") is a claim check (its payload is in S3); pass payloads: createPayloadResolver({ objects: new S3({}), bucket }) to createInboxHandler, or, on an OutboxConsumer, set payloadBucketArn (the Outbox's payload bucket, arn:aws:s3:::<its payloadBucketName>; with payloadKmsKeyArn when the Outbox has a kmsKeyArn)`,
            {
                context: { messageId, outboxId: message.outboxId },
            },
        );
    }
    return payloads.resolveMessage(message);
}

/** The message the consumer gets, or the poison error. */
async function inboxMessage(
    record: LambdaSqsRecord,
    formats: readonly DeliveryFormat[],
    payloads: PayloadResolver | undefined,
    typed: TypedEventRules,
): Promise<InboxMessage> {
    const malformed = sqsRecordProblem(record);
    if (malformed !== undefined)
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `SQS message ${record.messageId}: ${malformed}; it is not a record as Lambda's SQS event source mapping delivers it`,
            { context: { messageId: record.messageId } },
        );
    const parsed = parseDelivery(record, formats);
    const format = parsed.format;
    const message = await resolved(parsed.message, record.messageId, payloads);
    let payload: unknown;
    try {
        payload = JSON.parse(message.body);
    } catch (cause) {
        // The parser's own message quotes the body: kept as the cause, out of the message that is logged.
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `SQS message ${record.messageId} (outbox id "${message.outboxId}", ${format}): the body (${message.body.length} characters) is not JSON; OutboxWriter always publishes a payload's JSON text`,
            {
                cause,
                context: { messageId: record.messageId, outboxId: message.outboxId },
            },
        );
    }
    const refusal = await payloadRefusal(typed, message.type, payload);
    if (refusal !== undefined)
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `SQS message ${record.messageId} (outbox id "${message.outboxId}", ${format}): ${refusal.text}; it is poison: it fails until the queue's redrive policy moves it to the DLQ; fix the writer, or the schema, then redrive it`,
            {
                context: {
                    messageId: record.messageId,
                    outboxId: message.outboxId,
                    type: message.type,
                    ...(refusal.path !== undefined ? { path: refusal.path } : {}),
                },
            },
        );
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? "1");
    const groupId = record.attributes?.MessageGroupId;
    return {
        ...message,
        payload,
        format,
        messageId: record.messageId,
        receiveCount: Number.isFinite(receiveCount) ? receiveCount : 1,
        ...(groupId !== undefined ? { groupId } : {}),
        record,
    };
}

/** What every record of every batch shares: the inbox, the consumer, the formats, the logger. */
interface HandlerRun {
    readonly inbox: Inbox;
    readonly consume: InboxConsumer;
    readonly typed: TypedEventRules;
    readonly formats: readonly DeliveryFormat[];
    readonly logger: Logger;
    readonly consumer: string;
    readonly payloads: PayloadResolver | undefined;
    readonly reserveMs: number;
}

function handlerRun<M extends EventMap>(options: InboxHandlerOptions<M>): HandlerRun {
    const inbox = options?.inbox;
    if (inbox === undefined || inbox === null || typeof inbox.apply !== "function") {
        throw new OutboxError(
            "INVALID_CONFIG",
            "createInboxHandler: inbox must be an Inbox (new Inbox({ client, consumer, tableName }))",
        );
    }
    if (typeof options.consume !== "function") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `createInboxHandler: consume must be a function (message) => writes, got ${typeof options.consume}`,
        );
    }
    const formats = options.formats ?? DELIVERY_FORMATS;
    if (
        !Array.isArray(formats) ||
        formats.length === 0 ||
        formats.some((f) => f === null || typeof f !== "object" || typeof f.parse !== "function")
    ) {
        throw new OutboxError(
            "INVALID_CONFIG",
            "createInboxHandler: formats must be a non-empty array of DeliveryFormat ({ name, parse(record) }); omit it for DELIVERY_FORMATS",
        );
    }
    if (options.payloads !== undefined && typeof options.payloads?.resolveMessage !== "function") {
        throw new OutboxError(
            "INVALID_CONFIG",
            "createInboxHandler: payloads must be a PayloadResolver (createPayloadResolver({ objects, bucket })); omit it when no payload is offloaded",
        );
    }
    const typed = typedEventRules("createInboxHandler", {
        validators: options.validators,
        unvalidatedTypes: options.unvalidatedTypes,
    });
    const logger = options.logger ?? createLambdaLogger(`inbox ${inbox.consumer}`);
    return {
        inbox,
        // Typed or not, consume takes the message as read: the validators are what hold a typed union at run time.
        consume: options.consume as InboxConsumer,
        typed,
        formats,
        logger,
        consumer: inbox.consumer,
        payloads: options.payloads,
        reserveMs: integerIn("createInboxHandler", "reserveMs", options.reserveMs, INBOX_HANDLER_LIMITS.reserveMs),
    };
}

/** Handle one record: its outcome, or it throws (logged) and the record fails. */
async function handleRecord(run: HandlerRun, record: LambdaSqsRecord): Promise<"applied" | "duplicate"> {
    const { logger, consumer } = run;
    let message: InboxMessage;
    try {
        message = await inboxMessage(record, run.formats, run.payloads, run.typed);
    } catch (err) {
        if (isOutboxError(err) && err.transient) {
            logger.warn("inbox: the payload could not be fetched; SQS redelivers the message", {
                consumer,
                messageId: record.messageId,
                code: err.code,
                error: err.message,
            });
            throw err;
        }
        logger.error(
            "inbox: poison message failed; SQS redelivers it until the queue's redrive policy moves it to the DLQ",
            {
                consumer,
                messageId: record.messageId,
                receiveCount: record.attributes?.ApproximateReceiveCount,
                code: errorCodeOf(err),
                error: err instanceof Error ? err.message : String(err),
            },
        );
        throw err;
    }
    try {
        const items = (await run.consume(message)) ?? [];
        return (await run.inbox.apply(message, items)).outcome;
    } catch (err) {
        const transient = isOutboxError(err) ? err.transient : false;
        const attributes = {
            consumer,
            messageId: record.messageId,
            outboxId: message.outboxId,
            receiveCount: message.receiveCount,
            code: errorCodeOf(err),
            transient,
            error: err instanceof Error ? err.message : String(err),
        };
        if (transient) logger.warn("inbox: message failed; SQS redelivers it", attributes);
        else logger.error("inbox: message failed; SQS redelivers it", attributes);
        throw err;
    }
}

/** Where the inbox handler goes, and what it wants, when it gets what it cannot answer. */
const WIRING =
    'createInboxHandler takes only the SQS event that Lambda\'s event source mapping delivers, and acknowledges nothing else: subscribe an SQS queue to the SNS topic (or make the queue an EventBridge rule\'s target, or the outbox\'s own destination), map the queue to this function with functionResponseTypes ["ReportBatchItemFailures"], and give a record built by hand its messageId and eventSource "aws:sqs"';

/** The records of an SQS event; anything else fails the invocation with `INVALID_CONFIG`, logged. */
function sqsRecords(run: HandlerRun, event: unknown): readonly LambdaSqsRecord[] {
    const foreign = sqsEventProblem(event);
    if (foreign === undefined) return (event as LambdaSqsEvent).Records;
    // Answering would acknowledge it: an asynchronous invocation (SNS, EventBridge) counts any answer as done.
    const { consumer } = run;
    const eventSource = foreign.eventSource !== undefined ? { eventSource: foreign.eventSource } : {};
    const error = new OutboxError("INVALID_CONFIG", `inbox "${consumer}": ${foreign.problem}; ${WIRING}`, {
        context: { consumer, ...eventSource },
    });
    run.logger.error(
        "inbox: the event is not an SQS event it can answer; failing the invocation, nothing acknowledged",
        {
            consumer,
            code: error.code,
            ...eventSource,
            problem: foreign.problem,
        },
    );
    throw error;
}

/** An invocation that starts with less than the reserve left could never take a record: a fault of the deployment. */
function tooLittleTime(run: HandlerRun, left: number, records: number): OutboxError {
    const error = new OutboxError(
        "INVALID_CONFIG",
        `inbox "${run.consumer}": the invocation started with ${Math.floor(left)} ms left, less than reserveMs ${run.reserveMs}, so none of its ${records} records could be taken; nothing is acknowledged. Raise the function's timeout above reserveMs plus the time a batch takes, or lower createInboxHandler's reserveMs`,
        { context: { consumer: run.consumer, timeLeftMs: Math.floor(left), reserveMs: run.reserveMs } },
    );
    run.logger.error("inbox: the invocation has less time than the reserve; failing it, nothing acknowledged", {
        consumer: run.consumer,
        code: error.code,
        timeLeftMs: Math.floor(left),
        reserveMs: run.reserveMs,
    });
    return error;
}

/**
 * Build the Lambda SQS handler of an inbox consumer. Enable `ReportBatchItemFailures` on the event source mapping,
 * or Lambda ignores the failures it reports and deletes the whole batch. See docs/runtime.md ("Inbox") for the
 * queue settings that send poison messages to a DLQ.
 *
 * It takes only SQS events: an SNS, DynamoDB stream, Kinesis or EventBridge event, an event without a `Records`
 * array, and a record without a `messageId` (which `batchItemFailures` could not name) fail the invocation with
 * `INVALID_CONFIG`, naming what arrived and how to wire the handler; nothing of it is acknowledged.
 *
 * Each record is handled in turn, while at least `reserveMs` of the invocation remain; from the first record it no
 * longer has time for, every record is reported failed without being handled, so SQS redelivers it:
 * - read with the first of `formats` that recognizes it; a record none can read, one not laid out as Lambda
 *   delivers it (a body that is not a string), or one whose body is not JSON, is poison: failed and logged, so it
 *   reaches the queue's redrive policy (never dropped);
 * - a payload that fails its type's validator (`validators`) is poison, failed and logged the same way, naming the
 *   type and the path;
 * - a claim check's payload fetched from S3 and checked by `payloads`; a missing, changed or foreign object fails
 *   the record as poison, an S3 outage fails it for a retry, and without `payloads` it fails as `INVALID_CONFIG`;
 * - handed to `consume`, whose writes are applied with the marker of its source and outbox id by
 *   {@link Inbox.apply}; a duplicate (the marker is there) succeeds without writing;
 * - failed when `consume` throws or the transaction fails.
 *
 * @typeParam M - The event map (type → payload type) `consume` receives as a union on `type`. @default UntypedEvents
 * @param options - The inbox, the consumer, and the optional validators, logger, formats, payloads and reserve.
 * @throws OutboxError `INVALID_CONFIG` when `inbox` or `consume` is missing, or an option is out of its range. The
 *   handler rejects with `INVALID_CONFIG` for an event it cannot answer, and for an invocation that starts with
 *   less than `reserveMs` left.
 *
 * @example
 * const inbox = new Inbox({ client: new DynamoDBClient({}), consumer: "billing", tableName: "billing" });
 * export const handler = createInboxHandler({
 *     inbox,
 *     consume: (message) => [{ Put: { TableName: "billing", Item: { PK: { S: `INVOICE#${message.outboxId}` }, SK: { S: "META" } } } }],
 * });
 */
export function createInboxHandler<M extends EventMap = UntypedEvents>(options: InboxHandlerOptions<M>): InboxHandler {
    const run = handlerRun(options);
    const { logger, consumer } = run;

    return async (event: LambdaSqsEvent, context?: InboxHandlerContext): Promise<LambdaSqsBatchResponse> => {
        const records = sqsRecords(run, event);
        const timeLeft = timeLeftIn(context);
        const atStart = timeLeft();
        if (records.length > 0 && atStart < run.reserveMs) throw tooLittleTime(run, atStart, records.length);
        const failed: string[] = [];
        const failedGroups = new Set<string>();
        const skipped = new Map<string, number>();
        let applied = 0;
        let duplicates = 0;
        let notTaken = 0;
        for (let i = 0; i < records.length; i += 1) {
            const record = records[i]!;
            const left = timeLeft();
            if (left < run.reserveMs) {
                // Every record from here is reported, whatever its group: on a FIFO queue, AWS's rule.
                notTaken = records.length - i;
                for (let j = i; j < records.length; j += 1) failed.push(records[j]!.messageId);
                logger.warn(
                    "inbox: running out of time; the batch's remaining records are reported failed, and SQS redelivers them",
                    {
                        consumer,
                        notTaken,
                        firstMessageId: record.messageId,
                        timeLeftMs: Math.floor(left),
                        reserveMs: run.reserveMs,
                    },
                );
                break;
            }
            const group = isFifoRecord(record) ? (record.attributes?.MessageGroupId ?? "") : undefined;
            if (group !== undefined && failedGroups.has(group)) {
                failed.push(record.messageId);
                skipped.set(group, (skipped.get(group) ?? 0) + 1);
                continue;
            }
            try {
                if ((await handleRecord(run, record)) === "applied") applied += 1;
                else duplicates += 1;
            } catch {
                failed.push(record.messageId);
                if (group !== undefined) failedGroups.add(group);
            }
        }
        for (const [group, count] of skipped) {
            logger.warn(
                "inbox: later messages of a FIFO group failed without being handled, to keep the group's order",
                { consumer, groupId: group, skipped: count },
            );
        }
        logger.debug("inbox: batch handled", {
            consumer,
            records: records.length,
            applied,
            duplicates,
            failed: failed.length,
            notTaken,
        });
        return { batchItemFailures: [...new Set(failed)].map((itemIdentifier) => ({ itemIdentifier })) };
    };
}
