/**
 * A process that runs OpenTelemetry's real AWS instrumentations, registered before anything loads the AWS SDK (as
 * the ADOT Lambda layer does through `NODE_OPTIONS`), then does its job (`job.ts`): the real publisher on an outbox
 * table's stream, a Lambda SQS handler file loaded as the Lambda runtime loads one, or one `ReceiveMessage`. It
 * prints the spans it ended, and what the task returned, as one JSON line.
 *
 * @packageDocumentation
 */
// First, before any AWS SDK module loads: the instrumentations hook `@aws-sdk`/`@smithy` and the handler's file.
import { exporter, provider } from "./register";
import * as path from "node:path";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SNSClient } from "@aws-sdk/client-sns";
import { ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { LOCAL_CREDENTIALS, LOCAL_REGION, localDynamoDbClient } from "../../../dev/emulators/dynamodb-local";
import type { LambdaSqsBatchResponse, LambdaSqsEvent } from "../../../runtime/inbox/sqs-event";
import { silentLogger } from "../../../runtime/ports";
import { createPublisher } from "../../../runtime/relay/publisher";
import { receiveEvent, settle } from "../sqs-lambda";
import { drainOutboxStream } from "../stream-table";
import { readJob, type JobReport, type LambdaConsumeTask, type PublishTask, type ReceiveTask } from "./job";

function client<C>(Client: new (config: object) => C, endpoint: string): C {
    return new Client({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
}

async function publish(task: PublishTask): Promise<unknown> {
    const ddb = localDynamoDbClient(task.dynamoEndpoint);
    const publisher = createPublisher({
        dynamodb: ddb,
        sqs: client(SQSClient, task.sqsEndpoint),
        ...(task.snsEndpoint !== undefined ? { sns: client(SNSClient, task.snsEndpoint) } : {}),
        ...(task.eventBridgeEndpoint !== undefined
            ? { eventBridge: client(EventBridgeClient, task.eventBridgeEndpoint) }
            : {}),
        ...task.destination,
        tableName: task.tableName,
        dlqUrl: task.dlqUrl,
        logger: silentLogger,
        writeMetrics: () => undefined,
    });
    await drainOutboxStream(ddb, task.tableName, publisher, {
        streamsClient: client(DynamoDBStreamsClient, task.dynamoEndpoint),
    });
    return null;
}

/** The Lambda runtime's way: `_HANDLER` (`file.export`) from `LAMBDA_TASK_ROOT`, required after the instrumentations. */
async function lambdaConsume(task: LambdaConsumeTask): Promise<unknown> {
    const [file, exported] = (process.env._HANDLER ?? "").split(".");
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded as the Lambda runtime loads a handler
    const module = require(path.resolve(process.env.LAMBDA_TASK_ROOT ?? ".", `${file}.js`)) as Record<string, unknown>;
    const handler = module[exported!] as (event: LambdaSqsEvent, context: object) => Promise<LambdaSqsBatchResponse>;
    const sqs = client(SQSClient, task.sqsEndpoint);
    const answers: LambdaSqsBatchResponse[] = [];
    for (let invocation = 1; invocation <= 20; invocation += 1) {
        const event = await receiveEvent(sqs, task.queue);
        if (event.Records.length === 0) break;
        const answer = await handler(event, {
            functionName: "billing",
            awsRequestId: `request-${invocation}`,
            invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:000000000000:function:billing`,
            getRemainingTimeInMillis: () => 60_000,
        });
        answers.push(answer);
        await settle(sqs, task.queue, event, answer);
    }
    return { answers, seen: module.seen };
}

async function receive(task: ReceiveTask): Promise<unknown> {
    const out = await client(SQSClient, task.sqsEndpoint).send(
        new ReceiveMessageCommand({ QueueUrl: task.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    return (out.Messages ?? []).map((m) => m.MessageId);
}

async function main(): Promise<void> {
    const { task } = readJob();
    const result =
        task.kind === "publish"
            ? await publish(task)
            : task.kind === "receive"
              ? await receive(task)
              : await lambdaConsume(task);
    await provider.forceFlush();
    const report: JobReport = {
        result,
        spans: exporter.getFinishedSpans().map((s) => ({
            name: s.name,
            kind: s.kind,
            traceId: s.spanContext().traceId,
            spanId: s.spanContext().spanId,
            links: s.links.map((l) => ({
                traceId: l.context.traceId,
                spanId: l.context.spanId,
                ...(l.context.traceState !== undefined ? { traceState: l.context.traceState.serialize() } : {}),
            })),
        })),
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().then(
    () => process.exit(0),
    (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exit(1);
    },
);
