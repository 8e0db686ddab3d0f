/**
 * The outbox side of the consumer tests, on real parts: an outbox table on DynamoDB Local, an `OutboxWriter` on
 * it, and the real publisher on the table's real stream (through the local event source mapping), publishing to
 * a fauxqs topic; and a wait for SNS's asynchronous delivery to reach a queue.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import type { Logger } from "../../../runtime/ports";
import { createPublisher, type PublisherConfig, type PublisherHandler } from "../../../runtime/relay/publisher";
import type { LocalEventSourceMapping } from "../../../runtime/testing/event-source-mapping";
import { OutboxWriter, type OutboxWriterOptions } from "../../../runtime/writer/writer";
import type { Queue } from "../sqs-lambda";
import { outboxStreamMapping } from "../stream-table";
import { createOutboxTable } from "./table";

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A relayed outbox: its table, a writer on it, and the running mapping that feeds the publisher (stop it). */
export interface RelayedOutbox {
    readonly tableName: string;
    readonly writer: OutboxWriter;
    readonly mapping: LocalEventSourceMapping;
}

/**
 * The real publisher of outbox table `tableName` to fauxqs topic `topicArn`, dead-lettering to `dlqUrl`, its
 * metrics dropped; `more` sets the rest (`fifo`, `logger`, …).
 *
 * @param more - More publisher settings.
 * @default more `{}`
 */
export function topicPublisher(
    ddb: DynamoDBClient,
    fauxqs: LocalFauxqs,
    tableName: string,
    topicArn: string,
    dlqUrl: string,
    more: Partial<PublisherConfig> = {},
): PublisherHandler {
    return createPublisher({
        dynamodb: ddb,
        sns: fauxqs.sns,
        sqs: fauxqs.sqs,
        tableName,
        topicArn,
        dlqUrl,
        writeMetrics: () => undefined,
        ...more,
    });
}

/**
 * A table, a writer and the real publisher on the table's stream, publishing to `topicArn` (a DLQ of its own).
 * Call `streams-table`'s `destroyStreamsClients` in the suite's `after`.
 *
 * @param prefix - The table name's prefix.
 * @param writerOptions - More writer options (`traceContext`, `logger`).
 */
export async function relayedOutbox(
    ddb: DynamoDBClient,
    fauxqs: LocalFauxqs,
    topicArn: string,
    fifo: boolean,
    prefix: string,
    writerOptions: Partial<OutboxWriterOptions> = {},
): Promise<RelayedOutbox> {
    const tableName = await createOutboxTable(ddb, fifo ? `${prefix}-fifo` : prefix);
    const dlq = await fauxqs.createQueue(`${tableName}-dlq${fifo ? ".fifo" : ""}`);
    const publisher = topicPublisher(ddb, fauxqs, tableName, topicArn, dlq.queueUrl, { fifo, logger: quiet });
    const mapping = await outboxStreamMapping(ddb, tableName, publisher);
    return {
        tableName,
        writer: new OutboxWriter({ client: ddb, tableName, address: topicArn, fifo, ...writerOptions }),
        mapping,
    };
}

/** Messages in the queue, visible or not. */
export async function queueDepth(fauxqs: LocalFauxqs, queue: Queue): Promise<number> {
    const out = await fauxqs.sqs.send(
        new GetQueueAttributesCommand({
            QueueUrl: queue.queueUrl,
            AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
    );
    return (
        Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
}

/** Wait until the queue holds `count` messages (SNS delivery is asynchronous to the publish). */
export async function untilDepth(fauxqs: LocalFauxqs, queue: Queue, count: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while ((await queueDepth(fauxqs, queue)) < count) {
        if (Date.now() > deadline)
            throw new Error(`${queue.queueArn} holds ${await queueDepth(fauxqs, queue)} messages, expected ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}
