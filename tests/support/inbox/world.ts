/**
 * The consumer side of the end-to-end inbox suites: DynamoDB Local, fauxqs (a local SNS + SQS) and a consumer table,
 * and the topic-to-queue wiring they subscribe their consumers with.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { dynamoClient } from "../dynamodb";
import { createConsumerTable } from "../runtime/table";
import type { Queue } from "../sqs-lambda";
import { destroyStreamsClients } from "../stream-table";

/** One suite's consumer world. */
export interface ConsumerWorld {
    readonly ddb: DynamoDBClient;
    readonly fauxqs: LocalFauxqs;
    /** Where the consumers write their effects and their inbox markers. */
    readonly consumerTable: string;
}

/** Start fauxqs and make a consumer table named after `prefix` (for a suite's `before`). */
export async function startConsumerWorld(prefix: string): Promise<ConsumerWorld> {
    const ddb = await dynamoClient();
    const fauxqs = await startFauxqs();
    return { ddb, fauxqs, consumerTable: await createConsumerTable(ddb, prefix) };
}

/** Stop fauxqs (when it started) and the stream clients (for a suite's `after`). */
export async function stopConsumerWorld(fauxqs: LocalFauxqs | undefined): Promise<void> {
    await fauxqs?.stop();
    destroyStreamsClients();
}

/** A standard topic `name` with two queues: `<name>-raw` subscribed with raw delivery, `<name>-enveloped` with SNS's envelope. */
export async function rawAndEnveloped(
    fauxqs: LocalFauxqs,
    name: string,
): Promise<{ topicArn: string; raw: Queue; enveloped: Queue }> {
    const topicArn = await fauxqs.createTopic(name);
    const raw = await fauxqs.createQueue(`${name}-raw`);
    const enveloped = await fauxqs.createQueue(`${name}-enveloped`);
    await fauxqs.subscribe(topicArn, raw.queueArn, { rawMessageDelivery: true });
    await fauxqs.subscribe(topicArn, enveloped.queueArn, { rawMessageDelivery: false });
    return { topicArn, raw, enveloped };
}

/** A FIFO topic `<name>.fifo` delivering raw to a FIFO queue `<name>-consumer.fifo`. */
export async function fifoTopicToQueue(fauxqs: LocalFauxqs, name: string): Promise<{ topicArn: string; queue: Queue }> {
    const topicArn = await fauxqs.createTopic(`${name}.fifo`);
    const queue = await fauxqs.createQueue(`${name}-consumer.fifo`);
    await fauxqs.subscribe(topicArn, queue.queueArn, { rawMessageDelivery: true });
    return { topicArn, queue };
}

/** DynamoDB Local's client and a fresh consumer table named after `prefix` (for a suite's `before`). */
export async function freshConsumerTable(prefix: string): Promise<{ ddb: DynamoDBClient; table: string }> {
    const ddb = await dynamoClient();
    return { ddb, table: await createConsumerTable(ddb, prefix) };
}

/** One queue per name, `queueName(name)`, subscribed to `topicArn` with raw delivery on or off as `raw` says. */
export async function subscribedQueues<N extends string>(
    fauxqs: LocalFauxqs,
    topicArn: string,
    queueName: (name: N) => string,
    raw: Readonly<Record<N, boolean>>,
): Promise<Record<N, Queue>> {
    const queues = {} as Record<N, Queue>;
    for (const name of Object.keys(raw) as N[]) {
        queues[name] = await fauxqs.createQueue(queueName(name));
        await fauxqs.subscribe(topicArn, queues[name].queueArn, { rawMessageDelivery: raw[name] });
    }
    return queues;
}
