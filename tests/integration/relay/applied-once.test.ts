/**
 * "Applied once" end to end, across the seams issue 33 found, on DynamoDB Local and fauxqs (a local SNS + SQS) with
 * the real handlers: `OutboxWriter`, the real publisher on the table's real stream (through the local event source
 * mapping), the real sweeper, the `dynamodb-outbox redrive` command run in-process, SNS raw delivery to an SQS queue,
 * and `createInboxHandler` on the `Inbox` (tests/support/sqs-lambda.ts hands it the received batches as Lambda does).
 *
 * - An event published, its completion throttled, dead-lettered as expired and redriven, then the redriven record
 *   published, throttled and dead-lettered again and redriven a second time: one event, applied once.
 * - Two outboxes (two tables, two publishers) feeding one queue and one inbox, both writing the caller-given id
 *   `evt-1001`: two events, each applied.
 *
 * The one fake, and why: the throttled completion is a wrapper around DynamoDB Local's client that answers the
 * completion's UpdateItem with `ProvisionedThroughputExceededException` (DynamoDB Local never throttles).
 */
import assert from "node:assert/strict";
import { GetItemCommand, QueryCommand, type DynamoDBClient, type TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { main } from "../../../cli/main";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createInboxHandler, Inbox, type InboxMessage } from "../../../runtime";
import type { Clock, LogAttributes, Logger } from "../../../runtime/ports";
import { createPublisher } from "../../../runtime/relay/publisher";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { captureIo, LOCAL_ENV } from "../../support/cli";
import { dynamoEndpoint } from "../../support/dynamodb";
import { isCompletionWrite } from "../../support/faults/faulty-dynamodb";
import { relayedOutbox, untilDepth } from "../../support/runtime/relay";
import { createOutboxTable, scanRecords } from "../../support/runtime/table";
import { pollUntilEmpty, type Queue } from "../../support/sqs-lambda";
import { drainOutboxStream } from "../../support/stream-table";
import { startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A clock that can be moved forward: the wall clock plus an offset. */
function movableClock(): Clock & { advance(ms: number): void } {
    let offset = 0;
    return {
        now: () => Date.now() + offset,
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50))),
        advance: (ms) => {
            offset += ms;
        },
    };
}

/**
 * DynamoDB Local's client, with the injected fault "the completion is throttled": while `throttling` is on, every
 * write that moves a record to completed answers `ProvisionedThroughputExceededException` and is not applied.
 */
function throttledCompletions(inner: DynamoDBClient): {
    readonly client: DynamoDBClient;
    throttling: boolean;
    throttled: number;
} {
    const state = {
        throttling: true,
        throttled: 0,
        client: {
            send: async (command: object) => {
                if (state.throttling && isCompletionWrite(command)) {
                    state.throttled += 1;
                    throw Object.assign(
                        new Error("ProvisionedThroughputExceededException (injected: the completion is throttled)"),
                        {
                            name: "ProvisionedThroughputExceededException",
                            $fault: "client",
                            $metadata: { httpStatusCode: 400, attempts: 1 },
                        },
                    );
                }
                return inner.send(command as never);
            },
        } as unknown as DynamoDBClient,
    };
    return state;
}

describe("applied once, end to end: redrive and two outboxes (DynamoDB Local + fauxqs, the real handlers)", function () {
    this.timeout(180_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, consumerTable: string;
    before(async () => ({ ddb, fauxqs, consumerTable } = await startConsumerWorld("applied-once-consumer")));
    after(() => stopConsumerWorld(fauxqs));

    /** How often the consumer applied the effect on row `key` (`EFFECT#<key>`). */
    async function applied(key: string): Promise<number> {
        const out = await ddb.send(
            new GetItemCommand({
                TableName: consumerTable,
                Key: { PK: { S: `EFFECT#${key}` }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        return Number(out.Item?.applied?.N ?? "0");
    }

    /** The consumer's handler: each message's effect counted on its own row (`EFFECT#<row(message)>`), outcomes counted. */
    function consumer(name: string, row: (m: InboxMessage) => string) {
        const outcomes = { applied: 0, duplicates: 0 };
        const logger: Logger = {
            ...quiet,
            debug: (message: string, attributes?: LogAttributes) => {
                if (message !== "inbox: batch handled") return;
                outcomes.applied += Number(attributes?.applied ?? 0);
                outcomes.duplicates += Number(attributes?.duplicates ?? 0);
            },
        };
        const handler = createInboxHandler({
            inbox: new Inbox({ client: ddb, consumer: name, tableName: consumerTable }),
            consume: (m): TransactWriteItem[] => [
                {
                    Update: {
                        TableName: consumerTable,
                        Key: { PK: { S: `EFFECT#${row(m)}` }, SK: { S: "META" } },
                        UpdateExpression: "ADD applied :one",
                        ExpressionAttributeValues: { ":one": { N: "1" } },
                    },
                },
            ],
            logger,
        });
        return { handler, outcomes };
    }

    it("an event published, its completion throttled, dead-lettered as expired and redriven (twice) is applied once: the redriven records are published under its identity", async () => {
        const tableName = await createOutboxTable(ddb, "applied-once-redrive");
        const topicArn = await fauxqs.createTopic("applied-once-redrive");
        const queue: Queue = await fauxqs.createQueue("applied-once-redrive-billing");
        await fauxqs.subscribe(topicArn, queue.queueArn, { rawMessageDelivery: true });
        const dlq = await fauxqs.createQueue("applied-once-redrive-dlq");
        const clock = movableClock();
        const relayDb = throttledCompletions(ddb);
        const relay = {
            dynamodb: relayDb.client,
            sns: fauxqs.sns,
            sqs: fauxqs.sqs,
            tableName,
            topicArn,
            dlqUrl: dlq.queueUrl,
            clock,
            logger: quiet,
            writeMetrics: () => undefined,
        };
        const publisher = createPublisher(relay);
        const sweeper = createSweeper({ ...relay, sweepAfterSeconds: 1 });
        /** The stream publisher on the table's stream until it is drained; a failed batch is not retried (left to the sweeper). */
        const publish = () => drainOutboxStream(ddb, tableName, publisher, { maximumRetryAttempts: 0 });
        /** The completion throttled, the record stays pending; two minutes later the sweeper dead-letters it as expired. */
        const publishThenExpire = async (recordId: string) => {
            relayDb.throttling = true;
            const throttledBefore = relayDb.throttled;
            await publish();
            assert.ok(relayDb.throttled > throttledBefore, "the completion was throttled (the injected fault)");
            const pending = (await scanRecords(ddb, tableName)).find((r) => r.recordId === recordId);
            assert.equal(pending?.status, "pending", `${recordId}: published, not completed`);
            relayDb.throttling = false;
            clock.advance(120_000);
            await sweeper();
            const expired = (await scanRecords(ddb, tableName)).find((r) => r.recordId === recordId);
            assert.equal(expired?.status, "expired", `${recordId}: dead-lettered as expired`);
        };
        /** `dynamodb-outbox redrive`, in-process, on the relay's clock; returns its stdout lines. */
        const redrive = async (extra: string[] = []) => {
            const io = captureIo({ ...LOCAL_ENV }, clock);
            const code = await main(
                [
                    "redrive",
                    "--table",
                    tableName,
                    "--dlq-url",
                    dlq.queueUrl,
                    "--endpoint",
                    await dynamoEndpoint(),
                    "--sqs-endpoint",
                    fauxqs.endpoint,
                    ...extra,
                ],
                io,
            );
            assert.equal(code, 0, io.errors());
            return io.output().trimEnd().split("\n");
        };
        const billing = consumer("billing", (m) => (m.payload as { orderId: string }).orderId);

        const { messageIds } = await new OutboxWriter({ client: ddb, tableName, clock }).write({
            messages: [
                {
                    partition: "ORDER#1001",
                    type: "OrderPlaced",
                    payload: { orderId: "o-1001", total: 42 },
                    expiresAt: new Date(clock.now() + 60_000),
                },
            ],
        });
        const id = messageIds[0]!;

        // Published (the consumer applies it), then dead-lettered as expired: the order must not be charged again.
        await publishThenExpire(id);
        await untilDepth(fauxqs, queue, 1);
        await pollUntilEmpty(fauxqs.sqs, queue, billing.handler);
        assert.equal(await applied("o-1001"), 1);

        // The operator redrives it, with a new expiry; the redriven record is published and dead-lettered again.
        const first = await redrive(["--expires-in", "60"]);
        await publishThenExpire(`redrive.${id}`);
        await untilDepth(fauxqs, queue, 1);
        await pollUntilEmpty(fauxqs.sqs, queue, billing.handler);
        assert.equal(await applied("o-1001"), 1, "the redriven event is the same event: not applied again");

        // The DLQ message of the redriven record carries both its record id and the event's identity.
        // Looked at without hiding it (visibility timeout 0), so the next redrive receives it.
        const dead = await fauxqs.sqs.send(
            new ReceiveMessageCommand({
                QueueUrl: dlq.queueUrl,
                MaxNumberOfMessages: 10,
                VisibilityTimeout: 0,
                MessageAttributeNames: ["All"],
            }),
        );
        assert.deepEqual(
            (dead.Messages ?? []).map((m) => {
                const body = JSON.parse(m.Body ?? "") as { recordId: string; originId?: string; reason: string };
                return [body.recordId, body.originId, body.reason, m.MessageAttributes?.["outbox.id"]?.StringValue];
            }),
            [[`redrive.${id}`, id, "expired", `redrive.${id}`]],
        );

        // A second redrive keeps the original identity, not the first redrive's record id.
        const second = await redrive();
        await publish();
        await untilDepth(fauxqs, queue, 1);
        await pollUntilEmpty(fauxqs.sqs, queue, billing.handler);
        assert.equal(await applied("o-1001"), 1, "and again after the second redrive");
        assert.deepEqual(billing.outcomes, { applied: 1, duplicates: 2 }, "three deliveries: one applied");

        const records = new Map((await scanRecords(ddb, tableName)).map((r) => [r.recordId, r]));
        assert.deepEqual(
            [...records.keys()].sort(),
            [id, `redrive.${id}`, `redrive.redrive.${id}`].sort(),
            "each redrive wrote a record of its own id (its id guard as before)",
        );
        assert.equal(records.get(`redrive.redrive.${id}`)?.envelope.headers["outbox.origin-id"], id);
        assert.equal(records.get(`redrive.redrive.${id}`)?.status, "completed");
        // The command says which records it redrove, with the identity consumers see.
        assert.deepEqual(first, [
            `redriven ${id} as redrive.${id} outbox.id ${id}`,
            "redrive received 1 redriven 1 already-redriven 0 not-redrivable 0 failed 0",
        ]);
        assert.deepEqual(second, [
            `redriven redrive.${id} as redrive.redrive.${id} outbox.id ${id}`,
            "redrive received 1 redriven 1 already-redriven 0 not-redrivable 0 failed 0",
        ]);
    });

    it("two outboxes (two tables, two publishers) feeding one queue and one inbox: orders' evt-1001 and payments' evt-1001 are both applied", async () => {
        const topicArn = await fauxqs.createTopic("applied-once-two-outboxes");
        const queue: Queue = await fauxqs.createQueue("applied-once-two-outboxes-ledger");
        await fauxqs.subscribe(topicArn, queue.queueArn, { rawMessageDelivery: true });
        const orders = await relayedOutbox(ddb, fauxqs, topicArn, false, "applied-once-orders");
        const payments = await relayedOutbox(ddb, fauxqs, topicArn, false, "applied-once-payments");
        try {
            // Caller-given ids are unique within one table only: both outboxes write evt-1001.
            await orders.writer.write({
                messages: [
                    { id: "evt-1001", partition: "ORDER#1001", type: "OrderPlaced", payload: { orderId: "o-1001" } },
                ],
            });
            await payments.writer.write({
                messages: [
                    {
                        id: "evt-1001",
                        partition: "PAYMENT#77",
                        type: "PaymentRefunded",
                        payload: { paymentId: "p-77" },
                    },
                ],
            });
            await orders.mapping.drain({ timeoutMs: 30_000 });
            await payments.mapping.drain({ timeoutMs: 30_000 });
        } finally {
            await orders.mapping.stop();
            await payments.mapping.stop();
        }
        await untilDepth(fauxqs, queue, 2);
        const ledger = consumer("ledger", (m) => m.type);
        const report = await pollUntilEmpty(fauxqs.sqs, queue, ledger.handler);
        assert.equal(report.failures, 0);
        assert.equal(await applied("OrderPlaced"), 1);
        assert.equal(await applied("PaymentRefunded"), 1, "a different event with the same id is not a duplicate");
        assert.deepEqual(ledger.outcomes, { applied: 2, duplicates: 0 });
        // One marker per (consumer, source, outbox id): the sources are the two tables' names.
        for (const source of [orders.tableName, payments.tableName]) {
            const markers = await ddb.send(
                new QueryCommand({
                    TableName: consumerTable,
                    KeyConditionExpression: "PK = :pk",
                    ExpressionAttributeValues: { ":pk": { S: `INBOX#ledger@${source}` } },
                    ConsistentRead: true,
                }),
            );
            assert.deepEqual(
                (markers.Items ?? []).map((i) => i.SK?.S),
                ["evt-1001"],
                `the marker of ${source}'s evt-1001`,
            );
        }
    });
});
