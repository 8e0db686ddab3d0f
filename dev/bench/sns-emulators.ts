/**
 * What one SNS call costs on the two local SNS servers the tests use: fauxqs 2 (`dev/emulators/fauxqs.ts`, SNS, SQS and S3
 * in one emulator) and the hand-written fault server (`dev/emulators/aws-fault-server/`). The relay's hot call is a
 * `PublishBatch` of 10 entries; each server gets the same calls, one after the other, from the real
 * `@aws-sdk/client-sns`, after a warm-up. fauxqs is measured with no subscriber (its answer alone) and with one
 * raw-delivery SQS subscription (its delivery too, which the end-to-end tests rely on); the fault server records
 * the message and answers.
 *
 * `npx ts-node -T dev/bench/sns-emulators.ts [calls]` prints the figures as JSON. docs/local-testing.md quotes them.
 *
 * @packageDocumentation
 */
import { PublishBatchCommand, SNSClient } from "@aws-sdk/client-sns";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../emulators/dynamodb-local";
import { startFauxqs } from "../emulators/fauxqs";
import { startAwsFaultServer } from "../emulators/aws-fault-server";
import { percentile, round } from "./stats";

/** Per-call milliseconds of one server. */
export interface CallFigures {
    readonly calls: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly meanMs: number;
}

const WARM_UP_CALLS = 50;

function entries(
    call: number,
): { Id: string; Message: string; MessageAttributes: Record<string, { DataType: string; StringValue: string }> }[] {
    return Array.from({ length: 10 }, (_, i) => ({
        Id: String(i),
        Message: JSON.stringify({ orderId: `order-${call}-${i}`, total: 42, lines: ["a", "b", "c"] }),
        MessageAttributes: { "outbox.id": { DataType: "String", StringValue: `${call}-${i}` } },
    }));
}

async function measure(sns: SNSClient, topicArn: string, calls: number): Promise<CallFigures> {
    for (let i = 0; i < WARM_UP_CALLS; i += 1)
        await sns.send(new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries(-i) }));
    const samples: number[] = [];
    for (let i = 0; i < calls; i += 1) {
        const start = process.hrtime.bigint();
        const out = await sns.send(
            new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries(i) }),
        );
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
        if ((out.Successful ?? []).length !== 10) throw new Error(`PublishBatch ${i}: ${JSON.stringify(out.Failed)}`);
    }
    return {
        calls,
        p50Ms: round(percentile(samples, 50), 3),
        p99Ms: round(percentile(samples, 99), 3),
        meanMs: round(samples.reduce((a, b) => a + b, 0) / samples.length, 3),
    };
}

/**
 * Measure `calls` PublishBatch calls of 10 entries on each server.
 *
 * @param calls - the measured calls per server, after {@link WARM_UP_CALLS} warm-up calls.
 */
export async function measureSnsEmulators(
    calls: number,
): Promise<{ fauxqs: CallFigures; fauxqsDelivering: CallFigures; faultServer: CallFigures; node: string }> {
    const fauxqs = await startFauxqs();
    let plain: CallFigures;
    let delivering: CallFigures;
    try {
        plain = await measure(fauxqs.sns, await fauxqs.createTopic("bench-plain"), calls);
        const topicArn = await fauxqs.createTopic("bench-delivering");
        const queue = await fauxqs.createQueue("bench-delivered");
        await fauxqs.subscribe(topicArn, queue.queueArn);
        delivering = await measure(fauxqs.sns, topicArn, calls);
    } finally {
        await fauxqs.stop();
    }
    const server = await startAwsFaultServer();
    const sns = new SNSClient({ endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    try {
        const faultServer = await measure(sns, server.createTopic("bench"), calls);
        return { fauxqs: plain, fauxqsDelivering: delivering, faultServer, node: process.version };
    } finally {
        sns.destroy();
        await server.stop();
    }
}

if (require.main === module) {
    const calls = Number(process.argv[2] ?? 500);
    measureSnsEmulators(calls).then(
        (figures) => console.log(JSON.stringify(figures, null, 2)),
        (err: unknown) => {
            console.error(err);
            process.exitCode = 1;
        },
    );
}
