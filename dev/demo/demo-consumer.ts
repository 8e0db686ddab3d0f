/**
 * The demo's consumer side: read what reached the consumer's queue (or, with `--fail-rate` on an SNS topic, what
 * the AWS fault server accepted) and the DLQ, and keep the books: first deliveries, duplicates
 * (deduplicated on the record id, as a real consumer must: delivery is at least once), per-customer order,
 * and write → delivery latency. A queue's messages are read as a Lambda consumer reads them: each one converted to
 * the SQS record Lambda delivers and read by the runtime's `parseDelivery` (SNS raw delivery, an SQS destination's
 * attributes, an EventBridge rule's event envelope).
 *
 * @packageDocumentation
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { toLambdaSqsRecord, type LambdaSqsRecord } from "../../runtime/inbox/sqs-event";
import { MESSAGE_ATTRIBUTE } from "../../runtime/record/message";
import type { RecordedMessage } from "../emulators/aws-fault-server";

/** The books of a run. */
export interface Ledger {
    /** When each order's write started (ms), by id; set by the producer. */
    readonly writtenAt: Map<string, number>;
    /** Ids delivered at least once. */
    readonly delivered: Set<string>;
    /** Deliveries of an id already delivered (dropped by the consumer). */
    duplicates: number;
    /** Write → first delivery, ms. */
    readonly latencies: number[];
    /** First deliveries that arrived before an earlier order of the same customer. */
    outOfOrder: number;
    /** Ids found in the DLQ, with the reason. */
    readonly deadLettered: Map<string, string>;
    /** Deliveries without a record id attribute (should never happen). */
    unidentified: number;
}

/** An empty ledger. */
export function newLedger(): Ledger {
    return {
        writtenAt: new Map(),
        delivered: new Set(),
        duplicates: 0,
        latencies: [],
        outOfOrder: 0,
        deadLettered: new Map(),
        unidentified: 0,
    };
}

/** Record one delivery of the message with record id `id` (and its JSON body, for the per-customer order check). */
export function recordDelivery(
    ledger: Ledger,
    lastSequence: Map<string, number>,
    id: string | undefined,
    body: string,
    nowMs: number,
): void {
    if (id === undefined) {
        ledger.unidentified += 1;
        return;
    }
    if (ledger.delivered.has(id)) {
        ledger.duplicates += 1;
        return;
    }
    ledger.delivered.add(id);
    const written = ledger.writtenAt.get(id);
    if (written !== undefined) ledger.latencies.push(nowMs - written);
    let payload: { customer?: unknown; sequence?: unknown } = {};
    try {
        payload = JSON.parse(body) as typeof payload;
    } catch {
        // Not JSON: nothing to check the order on.
    }
    if (typeof payload.customer === "string" && typeof payload.sequence === "number") {
        const last = lastSequence.get(payload.customer) ?? -1;
        if (payload.sequence < last) ledger.outOfOrder += 1;
        else lastSequence.set(payload.customer, payload.sequence);
    }
}

/** A running poller. */
export interface Poller {
    /** Stop polling and wait for the current receive to end. Idempotent. */
    stop(): Promise<void>;
}

/** A queue to poll: its URL, and its ARN (the records' `eventSourceARN`). */
export interface PolledQueue {
    readonly queueUrl: string;
    readonly queueArn: string;
}

/**
 * Poll an SQS queue with `concurrency` long-polling loops, hand every message to `onMessage` as the record Lambda
 * would deliver, and delete it.
 *
 * @param sqs - The SQS client.
 * @param queue - The queue.
 * @param onMessage - Called with each message as a Lambda SQS record, and awaited before the next.
 * @param concurrency - Parallel receive loops. @default 2
 */
export function pollQueue(
    sqs: SQSClient,
    queue: PolledQueue,
    onMessage: (record: LambdaSqsRecord) => void | Promise<void>,
    concurrency = 2,
): Poller {
    let running = true;
    const loop = async (): Promise<void> => {
        while (running) {
            let out;
            try {
                out = await sqs.send(
                    new ReceiveMessageCommand({
                        QueueUrl: queue.queueUrl,
                        MaxNumberOfMessages: 10,
                        WaitTimeSeconds: 1,
                        MessageAttributeNames: ["All"],
                        MessageSystemAttributeNames: ["All"],
                    }),
                );
            } catch (err) {
                if (!running) return;
                throw err;
            }
            const messages = out.Messages ?? [];
            for (const m of messages) await onMessage(toLambdaSqsRecord(m, queue.queueArn));
            if (messages.length > 0 && running) {
                await sqs.send(
                    new DeleteMessageBatchCommand({
                        QueueUrl: queue.queueUrl,
                        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
                    }),
                );
            }
        }
    };
    const loops = Array.from({ length: concurrency }, () => loop());
    let stopped: Promise<void> | undefined;
    return {
        stop() {
            running = false;
            stopped ??= Promise.allSettled(loops).then(() => undefined);
            return stopped;
        },
    };
}

/**
 * The record id a DLQ message carries in its `outbox.id` attribute.
 *
 * @param record - A DLQ message as a Lambda SQS record.
 */
export function recordIdAttribute(record: LambdaSqsRecord): string | undefined {
    return record.messageAttributes?.[MESSAGE_ATTRIBUTE.recordId]?.stringValue;
}

/**
 * Follow what the AWS fault server accepted on one topic (its subscribers' view), every `intervalMs`.
 *
 * @param messages - Returns the accepted messages of the topic so far, in acceptance order.
 * @param onMessage - Called once per accepted message.
 * @param intervalMs - Poll interval. @default 50
 */
export function followRecording(
    messages: () => readonly RecordedMessage[],
    onMessage: (id: string | undefined, body: string) => void,
    intervalMs = 50,
): Poller {
    let next = 0;
    const tick = (): void => {
        const all = messages();
        for (; next < all.length; next += 1)
            onMessage(all[next]!.attributes[MESSAGE_ATTRIBUTE.recordId]?.stringValue, all[next]!.body);
    };
    const timer = setInterval(tick, intervalMs);
    return {
        async stop() {
            clearInterval(timer);
            tick();
        },
    };
}
