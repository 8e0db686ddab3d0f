/**
 * The inbox handler watches the clock (issue 33): it takes no new record when less than `reserveMs` of the
 * invocation remains, and reports the rest in `batchItemFailures`, so SQS redelivers them, instead of outliving the
 * function's timeout and having the whole batch retried.
 *
 * The Lambda context is a FAKE: its `getRemainingTimeInMillis()` counts a budget down on a manual clock, and the
 * consumer moves that clock one second forward per record (the time a slow consumer spends), so the deadline falls
 * partway through a batch without the test waiting. Lambda's part is tests/support/sqs-lambda.ts (receive the batch,
 * delete what the handler did not report); an invocation whose answer comes after its budget ran out is treated as
 * timed out, the whole batch coming back, as Lambda does. The messages are written with `OutboxWriter` on DynamoDB
 * Local, published by the real publisher to a fauxqs queue (the outbox's own queue destination), and applied by the
 * inbox on DynamoDB Local.
 */
import * as assert from "node:assert/strict";
import { type DynamoDBClient, type TransactWriteItem } from "@aws-sdk/client-dynamodb";
import type { Handler, SQSBatchResponse, SQSEvent } from "aws-lambda";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { Inbox } from "../../../runtime/inbox/inbox";
import {
    createInboxHandler,
    type InboxHandler,
    type InboxHandlerOptions,
    type InboxMessage,
} from "../../../runtime/inbox/handler";
import { toLambdaSqsRecord, type LambdaSqsBatchResponse, type LambdaSqsEvent } from "../../../runtime/inbox/sqs-event";
import { isOutboxError } from "../../../runtime/errors";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, manualClock, type Harness, type ManualClock } from "../../support/runtime/harness";
import { receiveEvent, settle, type Queue } from "../../support/sqs-lambda";
import { appendApplied, appliedList } from "../../support/inbox/rows";
import { startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";

/** What one record costs the (slow) consumer, on the fake context's clock. */
const RECORD_MS = 1_000;

/** A FAKE Lambda context: `budgetMs` from now on `clock`, counting down as the clock moves. */
function fakeContext(clock: ManualClock, budgetMs: number): { getRemainingTimeInMillis(): number } {
    const deadline = clock.now() + budgetMs;
    return { getRemainingTimeInMillis: () => deadline - clock.now() };
}

describe("createInboxHandler watches the time left (DynamoDB Local, fauxqs; a fake Lambda context)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient, table: string, fauxqs: LocalFauxqs;
    let h: Harness | undefined;
    before(async () => ({ ddb, fauxqs, consumerTable: table } = await startConsumerWorld("inbox-deadline")));
    afterEach(async () => {
        await h?.close();
        h = undefined;
    });
    after(() => stopConsumerWorld(fauxqs));

    /** The consumer's effect: append the payload's number to its row, `RECORD_MS` of the fake clock per record. */
    function slowAppend(clock: ManualClock, seen: InboxMessage[]): (m: InboxMessage) => TransactWriteItem[] {
        return (m) => {
            seen.push(m);
            clock.advance(RECORD_MS);
            const { row, n } = m.payload as { row: string; n: number };
            return [appendApplied(table, row, n)];
        };
    }

    const applied = (row: string): Promise<number[]> => appliedList(ddb, table, row);

    function handlerFor(
        consumer: string,
        consume: InboxHandlerOptions["consume"],
        reserveMs?: number,
    ): { handler: InboxHandler; logger: RecordingLogger } {
        const logger = new RecordingLogger();
        const inbox = new Inbox({ client: ddb, consumer, tableName: table });
        return {
            handler: createInboxHandler({ inbox, consume, logger, ...(reserveMs !== undefined ? { reserveMs } : {}) }),
            logger,
        };
    }

    /**
     * Invoke as Lambda does, with a fresh FAKE context of `budgetMs`: the answer, or `undefined` when it came after
     * the budget ran out (Lambda would have ended the invocation at its timeout: no answer, the whole batch retried).
     */
    async function invoke(
        handler: InboxHandler,
        clock: ManualClock,
        budgetMs: number,
        event: LambdaSqsEvent,
    ): Promise<LambdaSqsBatchResponse | undefined> {
        const context = fakeContext(clock, budgetMs);
        const response = await handler(event, context);
        return context.getRemainingTimeInMillis() < 0 ? undefined : response;
    }

    it("a batch the function's timeout cannot hold: the records taken are applied once, the rest reported and applied by the redelivery; nothing outlives the timeout", async () => {
        h = await createHarness({ destination: "sqs" });
        const queue: Queue = await fauxqs.createQueue(`inbox-deadline-${Date.now()}`);
        const dlq = await fauxqs.createQueue(`inbox-deadline-dlq-${Date.now()}`);
        const { messageIds } = await h.writer.write({
            messages: Array.from({ length: 10 }, (_, n) => ({
                partition: `ORDER#${n}`,
                type: "OrderPlaced",
                payload: { row: `DEADLINE#${n}`, n },
            })),
        });
        assert.deepEqual(
            await h.publisher({ sqs: fauxqs.sqs, queueArn: queue.queueArn, dlqUrl: dlq.queueUrl })(
                await h.streamEvent(),
            ),
            { batchItemFailures: [] },
        );

        const clock = manualClock();
        const seen: InboxMessage[] = [];
        // 10 records of 1 s each in a 9.5 s budget: without a reserve the invocation outlives its timeout.
        const { handler, logger } = handlerFor("deadline-1", slowAppend(clock, seen), 3_000);
        const first = await receiveEvent(fauxqs.sqs, queue);
        assert.equal(first.Records.length, 10, "one batch of the ten messages");
        const response = await invoke(handler, clock, 9_500, first);
        assert.ok(response !== undefined, "the handler answered before the function's timeout");
        // Records start while at least 3 s remain: at 9.5, 8.5, … 3.5 s: seven of them.
        const reported = first.Records.slice(7).map((r) => r.messageId);
        assert.deepEqual(
            response.batchItemFailures.map((f) => f.itemIdentifier),
            reported,
            "every record after the deadline is reported, in the batch's order",
        );
        assert.deepEqual(
            seen.map((m) => m.messageId),
            first.Records.slice(0, 7).map((r) => r.messageId),
            "the records reported were not handed to the consumer",
        );
        const warning = logger.lines.find((e) => e.level === "warn");
        assert.match(
            String(warning?.message),
            /running out of time; the batch's remaining records are reported failed/,
        );
        assert.deepEqual(
            [warning?.attributes?.notTaken, warning?.attributes?.firstMessageId, warning?.attributes?.timeLeftMs],
            [3, reported[0], 2_500],
        );
        await settle(fauxqs.sqs, queue, first, response);

        const retry = await receiveEvent(fauxqs.sqs, queue);
        assert.deepEqual(
            retry.Records.map((r) => r.messageId).sort(),
            [...reported].sort(),
            "only the reported records came back",
        );
        assert.deepEqual(await invoke(handler, clock, 9_500, retry), { batchItemFailures: [] });
        await settle(fauxqs.sqs, queue, retry, { batchItemFailures: [] });
        assert.equal((await receiveEvent(fauxqs.sqs, queue)).Records.length, 0, "the queue is empty");

        for (let n = 0; n < 10; n += 1)
            assert.deepEqual(await applied(`DEADLINE#${n}`), [n], `order ${n} applied once`);
        assert.deepEqual(
            seen.map((m) => m.outboxId).sort(),
            [...messageIds].sort(),
            "each message was handed to the consumer once",
        );
        assert.deepEqual(
            seen.map((m) => m.receiveCount),
            [1, 1, 1, 1, 1, 1, 1, 2, 2, 2],
            "the taken records were received once: none goes toward maxReceiveCount again",
        );
    });

    it("on a FIFO queue, every record after the deadline is reported, whatever its group, and the redelivery keeps each group's order", async () => {
        const clock = manualClock();
        const seen: InboxMessage[] = [];
        const { handler, logger } = handlerFor("deadline-fifo", slowAppend(clock, seen), 3_000);
        const queueArn = "arn:aws:sqs:eu-west-1:111111111111:deadline.fifo";
        const record = (group: string, n: number) =>
            toLambdaSqsRecord(
                {
                    MessageId: `${group}${n}`,
                    ReceiptHandle: `rh-${group}${n}`,
                    Body: JSON.stringify({ row: `DEADLINE-FIFO#${group}`, n }),
                    Attributes: {
                        ApproximateReceiveCount: "1",
                        MessageGroupId: group,
                        MessageDeduplicationId: `id-${group}${n}`,
                        SequenceNumber: String(n),
                    },
                    MessageAttributes: { "outbox.id": { DataType: "String", StringValue: `fifo-${group}${n}` } },
                },
                queueArn,
            );
        // As SQS hands out a FIFO batch: each group's messages in order, the groups interleaved.
        const batch = [record("a", 1), record("b", 1), record("a", 2), record("b", 2), record("a", 3), record("b", 3)];
        // Records start while at least 3 s remain: at 5.5, 4.5 and 3.5 s.
        const response = await invoke(handler, clock, 5_500, { Records: batch });
        assert.deepEqual(
            response?.batchItemFailures.map((f) => f.itemIdentifier),
            ["b2", "a3", "b3"],
        );
        assert.deepEqual(
            logger.lines.filter((e) => e.level === "warn").map((e) => e.attributes?.notTaken),
            [3],
        );
        assert.deepEqual(await applied("DEADLINE-FIFO#a"), [1, 2]);
        assert.deepEqual(await applied("DEADLINE-FIFO#b"), [1]);

        assert.deepEqual(await invoke(handler, clock, 60_000, { Records: batch.slice(3) }), { batchItemFailures: [] });
        assert.deepEqual(await applied("DEADLINE-FIFO#a"), [1, 2, 3], "group a's order held");
        assert.deepEqual(await applied("DEADLINE-FIFO#b"), [1, 2, 3], "group b's order held");
    });

    it("an invocation that starts with less than reserveMs left fails (INVALID_CONFIG) without taking a record; an empty batch does not", async () => {
        const clock = manualClock();
        const seen: InboxMessage[] = [];
        const { handler, logger } = handlerFor("deadline-start", slowAppend(clock, seen));
        const event: LambdaSqsEvent = {
            Records: [
                toLambdaSqsRecord(
                    {
                        MessageId: "s1",
                        Body: JSON.stringify({ row: "DEADLINE-START", n: 1 }),
                        MessageAttributes: { "outbox.id": { DataType: "String", StringValue: "start-1" } },
                    },
                    "arn:aws:sqs:eu-west-1:111111111111:deadline",
                ),
            ],
        };
        await assert.rejects(
            handler(event, fakeContext(clock, 1_500)),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /inbox "deadline-start": the invocation started with 1500 ms left, less than reserveMs 2000, so none of its 1 records could be taken; nothing is acknowledged\. Raise the function's timeout above reserveMs plus the time a batch takes, or lower createInboxHandler's reserveMs/.test(
                    err.message,
                ),
        );
        assert.equal(seen.length, 0);
        assert.deepEqual(
            logger.lines.filter((e) => e.level === "error").map((e) => [e.attributes?.code, e.attributes?.timeLeftMs]),
            [["INVALID_CONFIG", 1_500]],
        );
        assert.deepEqual(await handler({ Records: [] }, fakeContext(clock, 1_500)), { batchItemFailures: [] });
        assert.deepEqual(await applied("DEADLINE-START"), []);
    });

    it("without getRemainingTimeInMillis (a test, a caller other than Lambda) there is no deadline; Lambda's own Context type fits", async () => {
        const clock = manualClock();
        const seen: InboxMessage[] = [];
        const { handler } = handlerFor("deadline-none", slowAppend(clock, seen));
        const record = (n: number) =>
            toLambdaSqsRecord(
                {
                    MessageId: `none-${n}`,
                    Body: JSON.stringify({ row: `DEADLINE-NONE#${n}`, n }),
                    MessageAttributes: { "outbox.id": { DataType: "String", StringValue: `none-${n}` } },
                },
                "arn:aws:sqs:eu-west-1:111111111111:deadline",
            );
        assert.deepEqual(await handler({ Records: [record(1)] }), { batchItemFailures: [] });
        assert.deepEqual(await handler({ Records: [record(2)] }, {}), { batchItemFailures: [] });
        assert.deepEqual(await applied("DEADLINE-NONE#1"), [1]);
        assert.deepEqual(await applied("DEADLINE-NONE#2"), [2]);
        const typed: Handler<SQSEvent, SQSBatchResponse> = handler;
        assert.equal(typeof typed, "function");
    });
});
