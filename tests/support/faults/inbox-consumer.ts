/**
 * The consumer's side of a fault scenario: every message the destination accepted, the relay's duplicates included,
 * delivered to a consumer on the inbox (the real `createInboxHandler` and `Inbox` on DynamoDB Local) through an
 * SQS queue, under faults, and the consumer's effects counted in its table. What the queue holds is the destination's
 * view: an SNS topic's messages as raw delivery hands them over, an SQS destination's own messages, or the event
 * envelopes a bus's rule target delivers (the handler reads each with the runtime's delivery formats).
 *
 * The queue is simulated here (a fake, as the AWS fault server is): it holds the test server's accepted
 * messages as SQS messages, hands them out in batches of 1 to 10 in no particular order, four invocations at a
 * time, deletes what the handler did not report failed, and gives back the rest, as a standard queue with
 * `ReportBatchItemFailures` does. Injected at the scenario's rate:
 * - the same SQS message handed to the handler again, in a later batch (a standard queue's at-least-once
 *   delivery, or a visibility timeout that ran out while it was being handled), per 10 records;
 * - an invocation's answer lost after the work (a timeout): nothing is deleted, the whole batch comes back;
 * - DynamoDB faults on the consumer's transactions (fake client): throttling and conflicts before the write,
 *   and answers lost after the commit;
 * - poison messages (no outbox id), which must fail on every receive and reach the DLQ after `maxReceiveCount`.
 *
 * The effect: `ADD applied 1` on the event's row: by default its outbox id's; a scenario names its events by what
 * they are (`eventOf`: the planned message a payload carries), so an event that reaches the consumer under two
 * outbox ids (a redrive that changed its identity) shows as applied twice. Exactly once means every event the topic
 * accepted has `applied = 1`, and no other row exists.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { RecordedMessage } from "../../../dev/emulators/aws-fault-server";
import { createInboxHandler, type InboxMessage } from "../../../runtime/inbox/handler";
import { Inbox } from "../../../runtime/inbox/inbox";
import type { LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import type { Logger } from "../../../runtime/ports";
import { INBOX_MARKER } from "../../../runtime/schema";
import { createConsumerTable, scanItems } from "../runtime/table";
import { faultyDynamoClient } from "./faulty-dynamodb";
import { faultDice, seededRandom } from "./random";

/** Receives before a message moves to the consumer's DLQ (the queue's redrive policy). */
export const CONSUMER_MAX_RECEIVE_COUNT = 5;
const CONCURRENT_INVOCATIONS = 4;
const QUEUE_ARN = "arn:aws:sqs:eu-west-1:111111111111:faults-consumer";
/** A guard against a queue that never empties: far more invocations than any rate needs. */
const MAX_INVOCATIONS_PER_MESSAGE = 20;

/** What the consumer phase found. */
export interface ConsumerReport {
    /** Distinct events the topic accepted: each must be applied once. */
    readonly expected: number;
    /** Events applied exactly once. */
    readonly appliedOnce: number;
    /** Events applied more than once (at most 20 listed). */
    readonly appliedTwice: readonly string[];
    /** Events the topic accepted that were never applied (at most 20 listed). */
    readonly missing: readonly string[];
    /** Effect rows for events the topic never accepted. */
    readonly unexpected: readonly string[];
    /** Markers in the table (one per applied event: each (source, outbox id), or outbox id without a source). */
    readonly markers: number;
    /** Records handed to the handler, redeliveries included. */
    readonly deliveries: number;
    /** Handler invocations. */
    readonly invocations: number;
    /** Injected: SQS messages handed to the handler again, and invocations whose answer was lost. */
    readonly redelivered: number;
    /** Injected: DynamoDB faults on the consumer's client. */
    readonly dynamoFaults: number;
    /** Records the handler reported failed. */
    readonly failures: number;
    /** Poison messages injected, and how many reached the DLQ. */
    readonly poison: number;
    readonly poisonDeadLettered: number;
    /** Messages left in the queue when the invocation budget ran out (0 when it emptied). */
    readonly leftInQueue: number;
}

interface QueueMessage {
    readonly record: LambdaSqsRecord;
    receives: number;
}

function sqsRecord(
    messageId: string,
    body: string,
    attributes: RecordedMessage["attributes"],
    receives: number,
): LambdaSqsRecord {
    const messageAttributes: Record<
        string,
        {
            stringValue?: string;
            binaryValue?: string;
            stringListValues: string[];
            binaryListValues: string[];
            dataType: string;
        }
    > = {};
    for (const [name, a] of Object.entries(attributes)) {
        messageAttributes[name] = {
            ...(a.stringValue !== undefined ? { stringValue: a.stringValue } : {}),
            ...(a.binaryValue !== undefined ? { binaryValue: a.binaryValue } : {}),
            stringListValues: [],
            binaryListValues: [],
            dataType: a.dataType,
        };
    }
    return {
        messageId,
        receiptHandle: `${messageId}-${receives}`,
        body,
        attributes: {
            ApproximateReceiveCount: String(receives),
            SentTimestamp: "0",
            SenderId: "sns",
            ApproximateFirstReceiveTimestamp: "0",
        },
        messageAttributes,
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: QUEUE_ARN,
        awsRegion: "eu-west-1",
    };
}

/**
 * Deliver the topic's messages to an inbox consumer under faults and count its effects.
 *
 * @param ddb - DynamoDB Local.
 * @param topic - What the destination delivers to the consumer's queue, in order (relay duplicates included): the
 *   messages the AWS fault server accepted on the topic (as raw delivery hands them over), on an SQS destination, or
 *   routed from a bus (the event envelope).
 * @param options - The rate, the seed, the scenario's tag, the logger, and what names each event (`eventOf`): in a
 *   message the consumer is handed, and in one the destination recorded. By default its outbox id (the handed
 *   message's `outboxId`; the recorded `outbox.id` attribute).
 */
export async function consumeOnInbox(
    ddb: DynamoDBClient,
    topic: readonly RecordedMessage[],
    options: {
        readonly rate: number;
        readonly seed: number;
        readonly tag: string;
        readonly logger?: Logger;
        readonly eventOf?: {
            readonly delivered: (message: InboxMessage) => string;
            readonly recorded: (message: RecordedMessage) => string;
        };
    },
): Promise<ConsumerReport> {
    const eventOf = options.eventOf ?? {
        delivered: (m: InboxMessage) => m.outboxId,
        recorded: (m: RecordedMessage) => m.attributes["outbox.id"]?.stringValue ?? "",
    };
    const random = seededRandom(options.seed + 5);
    const rate = options.rate;
    const table = await createConsumerTable(ddb, `inbox-${options.tag}`);
    const client = faultyDynamoClient(
        ddb,
        { throttle: rate / 3, conflict: rate / 3, lostAnswer: rate / 3 },
        options.seed + 6,
    );
    const silent: Logger = {
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: () => undefined,
    };
    const handler = createInboxHandler({
        inbox: new Inbox({ client: client as unknown as DynamoDBClient, consumer: "faults", tableName: table }),
        consume: (m: InboxMessage) => [
            {
                Update: {
                    TableName: table,
                    Key: { PK: { S: `EFFECT#${eventOf.delivered(m)}` }, SK: { S: "META" } },
                    UpdateExpression: "ADD applied :one",
                    ExpressionAttributeValues: { ":one": { N: "1" } },
                },
            },
        ],
        logger: options.logger ?? silent,
    });

    const poison = Math.max(1, Math.round(rate * 10));
    const available: QueueMessage[] = topic.map((m, i) => ({
        record: sqsRecord(`sqs-${i}`, m.body, m.attributes, 0),
        receives: 0,
    }));
    for (let i = 0; i < poison; i += 1)
        available.push({ record: sqsRecord(`poison-${i}`, JSON.stringify({ poison: i }), {}, 0), receives: 0 });
    const handedOut: QueueMessage[] = [];
    const deadLettered: QueueMessage[] = [];
    const againDice = faultDice(rate, random);
    const lostAnswerDice = faultDice(rate, random);
    let deliveries = 0;
    let invocations = 0;
    let redelivered = 0;
    let failures = 0;
    const budget = (topic.length + poison) * MAX_INVOCATIONS_PER_MESSAGE;

    /** A batch as the queue hands it out: 1 to 10 visible messages, any of them; past maxReceiveCount they move to the DLQ. */
    function takeBatch(): QueueMessage[] {
        const batch: QueueMessage[] = [];
        const size = 1 + Math.floor(random() * 10);
        while (batch.length < size && available.length > 0) {
            const m = available.splice(Math.floor(random() * available.length), 1)[0]!;
            m.receives += 1;
            if (m.receives > CONSUMER_MAX_RECEIVE_COUNT) deadLettered.push(m);
            else batch.push(m);
        }
        return batch;
    }

    async function invoke(batch: QueueMessage[]): Promise<void> {
        const records = batch.map((m) => ({
            ...m.record,
            attributes: { ...m.record.attributes, ApproximateReceiveCount: String(m.receives) },
        }));
        // The same SQS message again: one handed out before (deleted since, or still in another invocation).
        if (handedOut.length > 0 && againDice(Math.ceil(records.length / 10))) {
            const again = handedOut[Math.floor(random() * handedOut.length)]!;
            records.push({
                ...again.record,
                attributes: { ...again.record.attributes, ApproximateReceiveCount: String(again.receives + 1) },
            });
            redelivered += 1;
        }
        handedOut.push(...batch);
        invocations += 1;
        deliveries += records.length;
        const response = await handler({ Records: records });
        failures += response.batchItemFailures.length;
        if (lostAnswerDice()) {
            redelivered += 1;
            available.push(...batch);
            return;
        }
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        available.push(...batch.filter((m) => failed.has(m.record.messageId)));
    }

    const running = new Set<Promise<void>>();
    while ((available.length > 0 || running.size > 0) && invocations < budget) {
        while (running.size < CONCURRENT_INVOCATIONS && available.length > 0) {
            const batch = takeBatch();
            if (batch.length === 0) continue;
            const p: Promise<void> = invoke(batch).finally(() => running.delete(p));
            running.add(p);
        }
        if (running.size > 0) await Promise.race(running);
    }
    await Promise.all(running);

    const items = await scanItems(ddb, table);
    const applied = new Map<string, number>();
    let markers = 0;
    const consumerPartition = `${INBOX_MARKER.partitionPrefix}faults`;
    for (const item of items) {
        const pk = item.PK?.S ?? "";
        if (pk.startsWith("EFFECT#")) applied.set(pk.slice("EFFECT#".length), Number(item.applied?.N ?? 0));
        // Both key forms: INBOX#faults (no source) and INBOX#faults@<source>.
        else if (pk === consumerPartition || pk.startsWith(`${consumerPartition}${INBOX_MARKER.sourceSeparator}`))
            markers += 1;
    }
    const expected = [...new Set(topic.map(eventOf.recorded))];
    const expectedSet = new Set(expected);
    const c = client.counts;
    return {
        expected: expected.length,
        appliedOnce: expected.filter((id) => applied.get(id) === 1).length,
        appliedTwice: expected.filter((id) => (applied.get(id) ?? 0) > 1).slice(0, 20),
        missing: expected.filter((id) => !applied.has(id)).slice(0, 20),
        unexpected: [...applied.keys()].filter((id) => !expectedSet.has(id)).slice(0, 20),
        markers,
        deliveries,
        invocations,
        redelivered,
        dynamoFaults: c.throttle + c.conflict + c.lostAnswer,
        failures,
        poison,
        poisonDeadLettered: deadLettered.filter((m) => m.record.messageId.startsWith("poison-")).length,
        leftInQueue: available.length,
    };
}

/** Whether the consumer's effects were applied exactly once each, and every poison message reached the DLQ. */
export function consumerHolds(r: ConsumerReport): boolean {
    return (
        r.appliedOnce === r.expected &&
        r.appliedTwice.length === 0 &&
        r.missing.length === 0 &&
        r.unexpected.length === 0 &&
        r.markers === r.expected &&
        r.poisonDeadLettered === r.poison &&
        r.leftInQueue === 0
    );
}

/** The consumer's part of a scenario line. */
export function consumerLine(r: ConsumerReport): string {
    const problems = [
        r.appliedTwice.length > 0 ? `applied-twice ${r.appliedTwice.join(",")}` : "",
        r.missing.length > 0 ? `never-applied ${r.missing.join(",")}` : "",
        r.unexpected.length > 0 ? `unexpected ${r.unexpected.join(",")}` : "",
        r.markers !== r.expected ? `markers ${r.markers}` : "",
        r.poisonDeadLettered !== r.poison ? `poison-not-dead-lettered ${r.poison - r.poisonDeadLettered}` : "",
        r.leftInQueue > 0 ? `left-in-queue ${r.leftInQueue}` : "",
    ].filter((p) => p !== "");
    return (
        `inbox applied-once ${r.appliedOnce}/${r.expected} deliveries ${r.deliveries} redelivered ${r.redelivered} consumer-faults ${r.dynamoFaults} failures ${r.failures} poison ${r.poisonDeadLettered}/${r.poison}-dead-lettered` +
        (problems.length > 0 ? ` INBOX-PROBLEMS ${problems.join("; ")}` : "")
    );
}
