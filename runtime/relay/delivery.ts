/**
 * Delivery steps shared by the stream publisher and the sweeper: publish records to the destination in batches
 * (`runtime/destination/`), classify what failed, count permanent failures durably on the record, dead-letter what cannot be delivered, and move
 * records to their terminal state. Each function takes its clients and settings explicitly (no hidden state),
 * so both handlers compose the same steps in the order their path needs.
 *
 * @packageDocumentation
 */
import { originIs } from "../store/expressions";
import {
    BatchGetItemCommand,
    UpdateItemCommand,
    type AttributeValue,
    type BatchGetItemCommandOutput,
    type UpdateItemCommandOutput,
} from "@aws-sdk/client-dynamodb";
import { keepOwnAttributes } from "../destination/own-attributes";
import type { EmfMetrics } from "../observability/emf";
import { DELIVERY_METRICS } from "../observability/metric-catalog";
import { OutboxError } from "../errors";
import { sqsSdk } from "../sdk-clients";
import { publishBatch as publishToDestination, type Destination, type PublishResult } from "../destination/destination";
import { classifySnsFailure } from "../destination/sns";
import { deadLetterMessage, outboundMessage, type DeadLetterReason, type OutboundMessage } from "../record/message";
import type { ClientLike, Clock, Logger } from "../ports";
import { recordKey, ttlSeconds, type AttributeMap, type OutboxRecord } from "../record/codec";
import { ATTR, originTaken, STATUS, statusOf, type OriginScope, type RecordStatus } from "../schema";
import { awsErrorName, isConditionalCheckFailed, isItemSizeRefusal, wrapAwsError } from "../store/aws-errors";
import { nonTerminal, placeholders, updateExpression } from "../store/expressions";
import {
    completePendingUpdate,
    expireClaimedUpdate,
    expirePendingUpdate,
    type FencingToken,
} from "../store/transitions";

export type { ClientLike } from "../ports";
export {
    MAX_BATCH_ENTRIES,
    publishBatches,
    type Destination,
    type PublishFailureKind,
    type PublishResult,
} from "../destination/destination";
export { classifySnsFailure as classifyPublishFailure } from "../destination/sns";

/** Metric names the handlers emit (EMF); they live in `metric-catalog.ts`, re-exported here for existing imports. */
export { DELIVERY_METRICS };

/**
 * Run the state write that follows a send (to the destination or the DLQ). When it throws, the record keeps its state and the
 * send will be repeated: count that duplicate under `metric`, then rethrow.
 *
 * @param ctx - Where to count.
 * @param metric - {@link DELIVERY_METRICS.publishedNotCompleted} or {@link DELIVERY_METRICS.deadLetteredNotMarked}.
 * @param write - The completion or expiry write.
 */
export async function afterSend<T>(ctx: DeliveryContext, metric: string, write: () => Promise<T>): Promise<T> {
    try {
        return await write();
    } catch (err) {
        ctx.metrics.count(metric);
        throw err;
    }
}

/** What delivery needs: clients, names, limits, and where to report. */
export interface DeliveryContext {
    /** DynamoDB client for the outbox table. */
    readonly dynamodb: ClientLike;
    /** Where every record is published: an SNS topic, an SQS queue or an EventBridge bus. */
    readonly destination: Destination;
    /** SQS client for the DLQ. */
    readonly sqs: ClientLike;
    /** The outbox table. */
    readonly tableName: string;
    /** The source every published message names (`outbox.source`): the relay's `source`, by default the table name. */
    readonly source: string;
    /** The DLQ URL. */
    readonly dlqUrl: string;
    /** Seconds a terminal record stays before TTL deletes it. */
    readonly completionGraceSeconds: number;
    /** Permanent publish failures before a record goes to the DLQ. */
    readonly maxPublishAttempts: number;
    /** The clock. */
    readonly clock: Clock;
    /** Logs: ids and counts only. */
    readonly logger: Logger;
    /** This invocation's metrics. */
    readonly metrics: EmfMetrics;
    /** On a global table, the records this relay takes (`OriginScope` in schema.ts); `undefined` for every record. */
    readonly origin?: OriginScope;
}

/**
 * Whether an SNS error code means retrying the same message cannot succeed (a `message` fault of
 * `classifySnsFailure`; each destination kind classifies its own errors, `Destination.classify`).
 *
 * @param code - The SDK error name or a `Failed[]` entry's `Code`, with or without the `Exception` suffix.
 * @param senderFault - A `Failed[]` entry's `SenderFault`. @default false
 * @param message - The error's message. @default ""
 */
export function isPermanentPublishError(code: string, senderFault = false, message = ""): boolean {
    return classifySnsFailure(code, senderFault, message) === "message";
}

/**
 * Whether an SQS error code refuses the message itself, so that sending it again cannot succeed: characters SQS
 * does not accept, a bad attribute, a message over the queue's size limit.
 *
 * @param code - The SDK error name, with or without the `AWS.SimpleQueueService.` prefix.
 */
export function isPermanentSqsRefusal(code: string): boolean {
    switch (code.replace(/^AWS\.SimpleQueueService\./, "")) {
        case "InvalidMessageContents":
        case "InvalidAttributeName":
        case "InvalidAttributeValue":
        case "MessageTooLong":
            return true;
        default:
            return false;
    }
}

/**
 * Publish up to 10 messages in one batch call to the context's destination and report each entry's outcome, in
 * order (see `runtime/destination/destination.ts`).
 *
 * @param ctx - The destination.
 * @param messages - At most 10 messages, within the destination's bytes per call (see {@link publishBatches}).
 */
export function publishBatch(ctx: DeliveryContext, messages: readonly OutboundMessage[]): Promise<PublishResult[]> {
    return publishToDestination(ctx.destination, messages);
}

/** Current status and permanent-failure count of a record, read consistently, with the item itself. */
export interface RecordState {
    /** The status; `undefined` when the item no longer exists (TTL removed it after completion). */
    readonly status: RecordStatus | undefined;
    /** Permanent publish failures so far. */
    readonly publishAttempts: number;
    /** The item as the read returned it: what the publisher delivers. `undefined` when it no longer exists, or was left unread. */
    readonly item?: Record<string, AttributeValue>;
}

/**
 * One consistent batch read (BatchGetItem, ConsistentRead) of each record, so a redelivered stream batch skips
 * what an earlier invocation already completed, and what is published is the row in the outbox table, never the
 * stream image. The whole item is read: BatchGetItem is charged by item size whatever the projection. Unprocessed
 * keys are retried a few times; records still unread are reported as pending, without an item.
 *
 * @param ctx - The DynamoDB client and table.
 * @param records - The records, in any order; the result is aligned with them.
 */
export async function readRecordStates(ctx: DeliveryContext, records: readonly OutboxRecord[]): Promise<RecordState[]> {
    const keyOf = (r: OutboxRecord) => recordKey(r.partition, r.envelopeId, r.bindingId);
    const idOf = (key: Record<string, AttributeValue>) => `${key[ATTR.pk]?.S}\u0000${key[ATTR.sk]?.S}`;
    const found = new Map<string, RecordState>();
    const items = new Map<string, Record<string, AttributeValue>>();
    const unread: Record<string, AttributeValue>[] = [];
    const seen = new Set<string>();
    for (const r of records) {
        const key = keyOf(r);
        if (!seen.has(idOf(key))) unread.push(key);
        seen.add(idOf(key));
    }
    let pending = unread;
    for (let attempt = 0; pending.length > 0 && attempt < 5; attempt += 1) {
        const next: Record<string, AttributeValue>[] = [];
        for (let i = 0; i < pending.length; i += 100) {
            const chunk = pending.slice(i, i + 100);
            let out: BatchGetItemCommandOutput;
            try {
                out = (await ctx.dynamodb.send(
                    new BatchGetItemCommand({
                        RequestItems: { [ctx.tableName]: { Keys: chunk, ConsistentRead: true } },
                    }),
                )) as BatchGetItemCommandOutput;
            } catch (err) {
                throw wrapAwsError(err, "publisher: consistent status read failed", { table: ctx.tableName });
            }
            for (const item of out.Responses?.[ctx.tableName] ?? []) {
                // Adopted by another region since its INSERT (see store/adopt.ts): no longer this relay's, as if gone.
                const ours = originTaken(ctx.origin, item[ATTR.originRegion]?.S);
                found.set(idOf(item), {
                    status: ours ? (statusOf(item[ATTR.status]?.S) as RecordStatus) : undefined,
                    publishAttempts: Number(item[ATTR.publishAttempts]?.N ?? "0"),
                });
                items.set(idOf(item), item);
            }
            next.push(...(out.UnprocessedKeys?.[ctx.tableName]?.Keys ?? []));
        }
        // Read and not returned: the item no longer exists.
        const unprocessed = new Set(next.map(idOf));
        for (const key of pending)
            if (!unprocessed.has(idOf(key)) && !found.has(idOf(key)))
                found.set(idOf(key), { status: undefined, publishAttempts: 0 });
        pending = next;
        if (pending.length > 0) await ctx.clock.sleep(20 * 2 ** attempt);
    }
    return records.map((r) => {
        const state = found.get(idOf(keyOf(r))) ?? { status: STATUS.pending, publishAttempts: 0 };
        const item = items.get(idOf(keyOf(r)));
        return item === undefined ? state : { ...state, item };
    });
}

/**
 * Logs a refusal the destination called transient: not the record's fault, so every later record would meet it too.
 *
 * @param ctx - The logger.
 * @param record - The record refused.
 * @param code - The destination's error code.
 * @internal The keyless and the keyed paths share it; not part of the runtime's documented surface.
 */
export function logTransientRefusal(ctx: DeliveryContext, record: OutboxRecord, code: string): void {
    ctx.logger.warn("outbox publish failed", {
        recordId: record.recordId,
        partition: record.partition,
        code,
        permanent: false,
    });
}

/**
 * Count one permanent publish failure on the record (`ADD publish_attempts 1`, only while it is pending or
 * claimed) and return the new count. Durable, so the bound holds across invocations and cold starts.
 * Returns `undefined` when the record is already terminal. A record the count would take over DynamoDB's 400 KB
 * (one another writer wrote within the writer's margin of it, `MAX_RECORD_BYTES`) cannot be counted: the refusal
 * is then its last, and `maxPublishAttempts` is returned so the caller dead-letters it now rather than retrying
 * it forever.
 *
 * @param ctx - The DynamoDB client and table.
 * @param record - The record SNS refused.
 */
export async function countPermanentFailure(ctx: DeliveryContext, record: OutboxRecord): Promise<number | undefined> {
    const change = updateExpression({
        add: [{ attribute: ATTR.publishAttempts, value: ":one_attempt" }],
        values: { ":one_attempt": { N: "1" } },
    });
    const condition = nonTerminal();
    try {
        const out = (await ctx.dynamodb.send(
            new UpdateItemCommand({
                TableName: ctx.tableName,
                Key: recordKey(record.partition, record.envelopeId, record.bindingId),
                UpdateExpression: change.text,
                ConditionExpression: condition.text,
                ...placeholders(change, condition),
                ReturnValues: "UPDATED_NEW",
            }),
        )) as UpdateItemCommandOutput;
        return Number(out.Attributes?.[ATTR.publishAttempts]?.N ?? "1");
    } catch (err) {
        if (isConditionalCheckFailed(err)) return undefined;
        if (isItemSizeRefusal(err)) {
            ctx.logger.error(
                "publisher: a refused record cannot be counted (the count would take it over DynamoDB's 400 KB; another writer wrote it within the writer's margin); it is dead-lettered now",
                { recordId: record.recordId, partition: record.partition },
            );
            return ctx.maxPublishAttempts;
        }
        throw wrapAwsError(err, "publisher: counting a publish failure failed", {
            recordId: record.recordId,
            partition: record.partition,
        });
    }
}

/**
 * Send a record to the DLQ with its reason. Throws a classified {@link OutboxError} when SQS refuses.
 *
 * @param ctx - The SQS client and DLQ URL.
 * @param record - The record.
 * @param reason - Why it is dead-lettered.
 * @param detail - Attempts so far and the last error. @default {}
 */
export async function sendToDeadLetterQueue(
    ctx: DeliveryContext,
    record: OutboxRecord,
    reason: DeadLetterReason,
    detail: { attempts?: number; errorCode?: string; errorMessage?: string } = {},
): Promise<void> {
    const dl = deadLetterMessage(outboundMessage(record), { reason, at: ctx.clock.now(), ...detail });
    try {
        const command = new (sqsSdk().SendMessageCommand)({
            QueueUrl: ctx.dlqUrl,
            MessageBody: dl.body,
            MessageAttributes: dl.attributes,
            ...(ctx.dlqUrl.endsWith(".fifo")
                ? {
                      MessageGroupId: record.orderingKey ?? record.partition,
                      MessageDeduplicationId: `${record.recordId.slice(0, 100)}-${reason}`,
                  }
                : {}),
        });
        // The DLQ message keeps the record's trace context, not an instrumented process's (worst-case size measured without it).
        keepOwnAttributes(command, (input) => [input]);
        await ctx.sqs.send(command);
    } catch (err) {
        const context = { recordId: record.recordId, partition: record.partition };
        if (isPermanentSqsRefusal(awsErrorName(err))) {
            // Retrying the same message cannot succeed; say so instead of calling it a transient outage.
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `publisher: the DLQ refused record ${record.recordId} (${reason}) for its content: ${awsErrorName(err)}`,
                { transient: false, cause: err, context },
            );
        }
        throw wrapAwsError(err, `publisher: sending record to the DLQ failed (${reason})`, context);
    }
    ctx.metrics.count(DELIVERY_METRICS.deadLettered);
    ctx.logger.warn("outbox record dead-lettered", {
        recordId: record.recordId,
        partition: record.partition,
        reason,
        attempts: detail.attempts,
        errorCode: detail.errorCode,
    });
}

/**
 * Whether a record's expiry has passed.
 *
 * @param record - The record.
 * @param nowMs - The current time, epoch ms.
 */
export function isExpired(record: OutboxRecord, nowMs: number): boolean {
    return record.expiresAt > 0 && record.expiresAt <= nowMs;
}

/** Apply the update `update` builds from the record's key, the time and its ttl; false when the record had moved. */
async function conditionalUpdate(
    ctx: DeliveryContext,
    record: OutboxRecord,
    what: string,
    update: (key: AttributeMap, nowMs: number, ttl: number) => object,
): Promise<boolean> {
    const now = ctx.clock.now();
    const input = update(
        recordKey(record.partition, record.envelopeId, record.bindingId),
        now,
        ttlSeconds(now, ctx.completionGraceSeconds),
    );
    try {
        await ctx.dynamodb.send(new UpdateItemCommand(input as ConstructorParameters<typeof UpdateItemCommand>[0]));
        return true;
    } catch (err) {
        if (isConditionalCheckFailed(err)) {
            ctx.metrics.count(DELIVERY_METRICS.completionRaces);
            ctx.logger.info(`outbox record changed state before ${what}; someone else moved it`, {
                recordId: record.recordId,
                partition: record.partition,
            });
            return false;
        }
        throw wrapAwsError(err, `publisher: ${what} failed`, {
            recordId: record.recordId,
            partition: record.partition,
        });
    }
}

/**
 * Complete a record that was published straight from the stream (pending → completed, ttl = now + grace,
 * `claim_sort` and `has_expiry` removed). Returns false when the record had already moved (a claimer holds it
 * or completed it): that is a race, not an error.
 *
 * @param ctx - The DynamoDB client, table, clock and grace.
 * @param record - The published record.
 */
export async function completePending(ctx: DeliveryContext, record: OutboxRecord): Promise<boolean> {
    return conditionalUpdate(ctx, record, "completion", (key, now, ttl) =>
        completePendingUpdate(ctx.tableName, key, now, ttl, originIs(ctx.origin)),
    );
}

/**
 * Mark a pending record past its expiry as expired (ttl = now + grace). False when it had already moved.
 *
 * @param ctx - The DynamoDB client, table, clock and grace.
 * @param record - The expired record.
 */
export async function expirePending(ctx: DeliveryContext, record: OutboxRecord): Promise<boolean> {
    return conditionalUpdate(ctx, record, "expiry", (key, now, ttl) =>
        expirePendingUpdate(ctx.tableName, key, now + 1, ttl, originIs(ctx.origin)),
    );
}

/**
 * Mark a record this token holds as expired (claimed → expired): the claimed-record twin of the store's
 * pending-only expiry, fenced by owner + version like Complete.
 *
 * @param ctx - The DynamoDB client, table, clock and grace.
 * @param record - The expired record.
 * @param token - The token holding its claim.
 */
export async function expireClaimed(ctx: DeliveryContext, record: OutboxRecord, token: FencingToken): Promise<boolean> {
    return conditionalUpdate(ctx, record, "expiry", (key, now, ttl) =>
        expireClaimedUpdate(ctx.tableName, key, token, now + 1, ttl),
    );
}

/**
 * Record the metrics of a published record: count and age at publish.
 *
 * @param ctx - The invocation's metrics and clock.
 * @param record - The published record.
 */
export function notePublished(ctx: DeliveryContext, record: OutboxRecord): void {
    ctx.metrics.count(DELIVERY_METRICS.published);
    ctx.metrics.sample(DELIVERY_METRICS.ageAtPublish, Math.max(0, ctx.clock.now() - record.createdAt), "Milliseconds");
}
