/**
 * What a test asks of an instrumented process (`instrumented-process.ts`), and the parent's side: start the process
 * with its job, wait for it without blocking the emulators this process serves, and read what it reports. The job
 * travels in one environment variable; the report is the process's last stdout line, JSON.
 *
 * Nothing here loads an AWS SDK module: the instrumented process imports this file before its instrumentations
 * are registered.
 *
 * @packageDocumentation
 */
import { execFile } from "node:child_process";
import * as path from "node:path";
import type { AwsLambdaInstrumentationConfig } from "@opentelemetry/instrumentation-aws-lambda";
import type { AwsSdkInstrumentationConfig } from "@opentelemetry/instrumentation-aws-sdk";

/** The environment variable that carries the job. */
const JOB_VARIABLE = "OUTBOX_OTEL_JOB";

/** The real publisher on an outbox table's stream (through the local event source mapping), drained once. */
export interface PublishTask {
    readonly kind: "publish";
    /** The shared DynamoDB Local. */
    readonly dynamoEndpoint: string;
    /** The outbox table (stream on). */
    readonly tableName: string;
    /** The destination: exactly one of `topicArn`, `queueArn`, `eventBusArn`. */
    readonly destination: { readonly topicArn?: string; readonly queueArn?: string; readonly eventBusArn?: string };
    /** The SQS endpoint: the DLQ's, and the destination queue's. */
    readonly sqsEndpoint: string;
    /** The SNS endpoint, with `topicArn`. */
    readonly snsEndpoint?: string;
    /** The EventBridge endpoint, with `eventBusArn`. */
    readonly eventBridgeEndpoint?: string;
    /** The DLQ. */
    readonly dlqUrl: string;
}

/** A Lambda SQS handler file loaded as the Lambda runtime loads it, invoked with what a queue holds. */
export interface LambdaConsumeTask {
    readonly kind: "lambda-consume";
    /** The SQS endpoint of the queue. */
    readonly sqsEndpoint: string;
    /** The queue. */
    readonly queue: { readonly queueUrl: string; readonly queueArn: string };
}

/** One `ReceiveMessage` of an SQS client, as an application's own poller makes it. */
export interface ReceiveTask {
    readonly kind: "receive";
    /** The SQS endpoint of the queue. */
    readonly sqsEndpoint: string;
    /** The queue's URL. */
    readonly queueUrl: string;
}

/** A job: which instrumentations to register first, with which settings, and what to do after. */
export interface InstrumentedJob {
    readonly instrument: {
        /** `@opentelemetry/instrumentation-aws-sdk`, with these settings. @default not registered */
        readonly awsSdk?: AwsSdkInstrumentationConfig;
        /** `@opentelemetry/instrumentation-aws-lambda`, with these settings. @default not registered */
        readonly awsLambda?: AwsLambdaInstrumentationConfig;
    };
    readonly task: PublishTask | LambdaConsumeTask | ReceiveTask;
}

/** A span the process ended, as plain data. */
export interface ReportedSpan {
    readonly name: string;
    /** `SpanKind`: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
    readonly kind: number;
    readonly traceId: string;
    readonly spanId: string;
    readonly links: readonly { readonly traceId: string; readonly spanId: string; readonly traceState?: string }[];
}

/** What the process reports. */
export interface JobReport {
    /** Every span it ended. */
    readonly spans: readonly ReportedSpan[];
    /** What the task returned (the handler's answers, the received messages' attributes). */
    readonly result: unknown;
}

/** The job of this process (in the instrumented process). */
export function readJob(): InstrumentedJob {
    const text = process.env[JOB_VARIABLE];
    if (text === undefined) throw new Error(`${JOB_VARIABLE} is not set: start this file with runInstrumented(job)`);
    return JSON.parse(text) as InstrumentedJob;
}

/** The file the instrumented process runs. */
const ENTRY = path.join(__dirname, "instrumented-process.ts");

/**
 * Run a job in a new Node process (this Node, ts-node), asynchronously: the emulators the job calls may be served by
 * this very process.
 *
 * @param env - More environment variables (the Lambda runtime's `_HANDLER` and `LAMBDA_TASK_ROOT`). @default {}
 * @throws Error with the process's output when it fails.
 */
export async function runInstrumented(job: InstrumentedJob, env: Record<string, string> = {}): Promise<JobReport> {
    const out = await new Promise<string>((resolve, reject) => {
        execFile(
            process.execPath,
            ["-r", "ts-node/register/transpile-only", ENTRY],
            {
                cwd: path.join(__dirname, "..", "..", ".."),
                env: { ...process.env, ...env, [JOB_VARIABLE]: JSON.stringify(job) },
                timeout: 120_000,
                maxBuffer: 16 * 1024 * 1024,
            },
            (err, stdout, stderr) =>
                err
                    ? reject(new Error(`the instrumented process failed: ${err.message}\n${stdout}\n${stderr}`))
                    : resolve(stdout),
        );
    });
    const last = out.trim().split("\n").at(-1) ?? "";
    return JSON.parse(last) as JobReport;
}
