/**
 * What Lambda's SQS event source mapping does with a queue, as far as the inbox tests need it, on a real SQS API
 * (fauxqs): receive up to 10 messages with every attribute, hand them to the handler as a Lambda SQS event, then
 * delete the messages it did not report failed. A failed message comes back when its visibility timeout ends;
 * here it is made visible at once (ChangeMessageVisibility 0), a shortcut for that wait, which Lambda never calls.
 */
import * as assert from "node:assert/strict";
import {
    ChangeMessageVisibilityCommand,
    DeleteMessageBatchCommand,
    ReceiveMessageCommand,
    type SQSClient,
} from "@aws-sdk/client-sqs";
import { toLambdaSqsRecord, type LambdaSqsBatchResponse, type LambdaSqsEvent } from "../../runtime/inbox/sqs-event";

/** A queue: its URL (for the API) and ARN (what Lambda puts in `eventSourceARN`). */
export interface Queue {
    readonly queueUrl: string;
    readonly queueArn: string;
}

/** Receive one batch as Lambda's poller does: up to `max` messages, all system and message attributes. */
export async function receiveEvent(sqs: SQSClient, queue: Queue, max = 10): Promise<LambdaSqsEvent> {
    const out = await sqs.send(
        new ReceiveMessageCommand({
            QueueUrl: queue.queueUrl,
            MaxNumberOfMessages: max,
            WaitTimeSeconds: 0,
            VisibilityTimeout: 30,
            MessageAttributeNames: ["All"],
            MessageSystemAttributeNames: ["All"],
        }),
    );
    return { Records: (out.Messages ?? []).map((m) => toLambdaSqsRecord(m, queue.queueArn)) };
}

/**
 * Settle a batch as Lambda does after the handler answered: delete every record not in `batchItemFailures`, and
 * leave the failed ones to come back (at once here). `response` undefined means the invocation died before
 * answering: nothing is deleted, the whole batch comes back. Failed records are made visible last first,
 * because fauxqs puts each one back at the head of its FIFO group (real SQS keeps the group's order whatever
 * order the calls come in).
 */
export async function settle(
    sqs: SQSClient,
    queue: Queue,
    event: LambdaSqsEvent,
    response: LambdaSqsBatchResponse | undefined,
): Promise<void> {
    const failed = new Set(
        response === undefined
            ? event.Records.map((r) => r.messageId)
            : response.batchItemFailures.map((f) => f.itemIdentifier),
    );
    const done = event.Records.filter((r) => !failed.has(r.messageId));
    if (done.length > 0) {
        await sqs.send(
            new DeleteMessageBatchCommand({
                QueueUrl: queue.queueUrl,
                Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
            }),
        );
    }
    for (const r of [...event.Records].reverse()) {
        if (failed.has(r.messageId))
            await sqs.send(
                new ChangeMessageVisibilityCommand({
                    QueueUrl: queue.queueUrl,
                    ReceiptHandle: r.receiptHandle,
                    VisibilityTimeout: 0,
                }),
            );
    }
}

/** What {@link pollUntilEmpty} saw. */
export interface PollReport {
    /** Handler invocations. */
    readonly invocations: number;
    /** Records reported failed, over all invocations. */
    readonly failures: number;
}

/** Receive, invoke and settle until a receive comes back empty, at most `maxInvocations` times. */
export async function pollUntilEmpty(
    sqs: SQSClient,
    queue: Queue,
    handler: (event: LambdaSqsEvent) => Promise<LambdaSqsBatchResponse>,
    maxInvocations = 100,
): Promise<PollReport> {
    let invocations = 0;
    let failures = 0;
    for (; invocations < maxInvocations;) {
        const event = await receiveEvent(sqs, queue);
        if (event.Records.length === 0) return { invocations, failures };
        invocations += 1;
        const response = await handler(event);
        failures += response.batchItemFailures.length;
        await settle(sqs, queue, event, response);
    }
    throw new Error(`the queue ${queue.queueArn} was not empty after ${maxInvocations} invocations`);
}

/**
 * Lambda's at-least-once delivery, twice over: receive a batch of `count` messages and hand it to `handler`, which
 * applies it; its answer is lost (a timeout after the work), so nothing is deleted and SQS hands the same messages
 * out again; `handler` gets them a second time and they are settled. Asserts both answers have no failures and the
 * second batch is the first one's messages, received twice.
 *
 * @param count - How many messages the batch holds.
 * @returns The batch as first received, and as redelivered.
 */
export async function applyThroughRedelivery(
    sqs: SQSClient,
    queue: Queue,
    handler: (event: LambdaSqsEvent) => Promise<LambdaSqsBatchResponse>,
    count: number,
): Promise<{ first: LambdaSqsEvent; again: LambdaSqsEvent }> {
    const first = await receiveEvent(sqs, queue);
    assert.equal(first.Records.length, count, "the whole batch reached the queue");
    assert.deepEqual(await handler(first), { batchItemFailures: [] });
    await settle(sqs, queue, first, undefined);
    const again = await receiveEvent(sqs, queue);
    assert.deepEqual(
        again.Records.map((r) => r.messageId).sort(),
        first.Records.map((r) => r.messageId).sort(),
        "the same messages, redelivered",
    );
    assert.ok(
        again.Records.every((r) => r.attributes?.ApproximateReceiveCount === "2"),
        "each received twice",
    );
    assert.deepEqual(await handler(again), { batchItemFailures: [] });
    await settle(sqs, queue, again, { batchItemFailures: [] });
    return { first, again };
}
