/**
 * The consumer's side of the trace with OpenTelemetry's real AWS instrumentations, each registered first in a
 * process of its own (tests/support/otel/), on messages the real publisher put on fauxqs's SNS topic (from an outbox
 * table's real stream on DynamoDB Local):
 * - `@opentelemetry/instrumentation-aws-lambda` around a Lambda SQS handler file (`createInboxHandler`), loaded as
 *   the Lambda runtime loads one, on a raw-delivery queue: its `process` span links the writer's span only with
 *   `useGlobalPropagatorForSqsExtraction: true` (by default it reads X-Ray's `AWSTraceHeader`, which the outbox
 *   does not set);
 * - `@opentelemetry/instrumentation-aws-sdk` around an application's own `ReceiveMessage` on a queue that gets SNS's
 *   envelope: its `receive` span links the writer's span only with `sqsExtractContextPropagationFromPayload: true`.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SpanKind } from "@opentelemetry/api";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { dynamoEndpoint } from "../../support/dynamodb";
import { runInstrumented, type JobReport } from "../../support/otel/job";
import { relayedOutbox, untilDepth } from "../../support/runtime/relay";

import { startConsumerWorld, stopConsumerWorld, subscribedQueues } from "../../support/inbox/world";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;
const TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
const HANDLER_ROOT = path.join(__dirname, "..", "..", "support", "otel", "fixtures");

/** The links of the one span of `kind` named `name`. */
function linksOf(report: JobReport, name: string, kind: SpanKind): JobReport["spans"][number]["links"] {
    const spans = report.spans.filter((s) => s.name === name && s.kind === kind);
    assert.equal(spans.length, 1, `one ${name} span; spans: ${report.spans.map((s) => s.name).join(", ")}`);
    return spans[0]!.links;
}

describe("the consumer's span linked to the writer's by OpenTelemetry's AWS instrumentations (the real ones, registered first, in a process of their own)", function () {
    this.timeout(240_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, consumerTable: string;
    /** Queues that each got the one message the writer wrote with TRACEPARENT and TRACESTATE. */
    const queues: Record<string, { queueUrl: string; queueArn: string }> = {};

    before(async () => {
        ({ ddb, fauxqs, consumerTable } = await startConsumerWorld("otel-lambda"));
        const run = Date.now();
        const topicArn = await fauxqs.createTopic(`otel-consumer-${run}`);
        Object.assign(
            queues,
            await subscribedQueues(fauxqs, topicArn, (name) => `otel-${name}-${run}`, {
                "lambda-linked": true,
                "lambda-default": true,
                "receive-linked": false,
                "receive-default": false,
            }),
        );
        const outbox = await relayedOutbox(ddb, fauxqs, topicArn, false, "otel-consumer", { traceContext: "none" });
        try {
            await outbox.writer.write({
                messages: [
                    {
                        partition: "ORDER#1",
                        type: "OrderCreated",
                        payload: { orderId: 1 },
                        traceparent: TRACEPARENT,
                        tracestate: TRACESTATE,
                    },
                ],
            });
            await outbox.mapping.drain({ timeoutMs: 30_000 });
        } finally {
            await outbox.mapping.stop();
        }
        for (const queue of Object.values(queues)) await untilDepth(fauxqs, queue, 1);
    });
    after(() => stopConsumerWorld(fauxqs));

    /** createInboxHandler behind instrumentation-aws-lambda, with `settings`, on one of the queues. */
    async function lambda(queue: string, settings: { useGlobalPropagatorForSqsExtraction?: boolean }) {
        const q = queues[queue]!;
        return runInstrumented(
            {
                instrument: { awsLambda: settings },
                task: { kind: "lambda-consume", sqsEndpoint: fauxqs.endpoint, queue: q },
            },
            {
                LAMBDA_TASK_ROOT: HANDLER_ROOT,
                _HANDLER: "inbox-handler.handler",
                DYNAMODB_ENDPOINT: await dynamoEndpoint(),
                INBOX_TABLE: consumerTable,
                INBOX_CONSUMER: `otel-${queue}`,
            },
        );
    }

    it("instrumentation-aws-lambda with useGlobalPropagatorForSqsExtraction: true links the process span to the writer's span, trace state included", async () => {
        const report = await lambda("lambda-linked", { useGlobalPropagatorForSqsExtraction: true });
        const { seen, answers } = report.result as { seen: { traceparent?: string }[]; answers: unknown[] };
        assert.deepEqual(answers, [{ batchItemFailures: [] }]);
        assert.deepEqual(
            seen.map((m) => m.traceparent),
            [TRACEPARENT],
            "the handler ran, behind the instrumentation",
        );
        const name = `process ${queues["lambda-linked"]!.queueArn.split(":").at(-1)!}`;
        assert.deepEqual(linksOf(report, name, SpanKind.CONSUMER), [
            { traceId: TRACE_ID, spanId: SPAN_ID, traceState: TRACESTATE },
        ]);
    });

    it("instrumentation-aws-lambda by default links nothing: it reads X-Ray's AWSTraceHeader", async () => {
        const report = await lambda("lambda-default", {});
        const name = `process ${queues["lambda-default"]!.queueArn.split(":").at(-1)!}`;
        assert.deepEqual(linksOf(report, name, SpanKind.CONSUMER), []);
    });

    it("instrumentation-aws-sdk with sqsExtractContextPropagationFromPayload: true links the receive span to the writer's span through SNS's envelope; without it, nothing", async () => {
        for (const [queue, settings, expected] of [
            [
                "receive-linked",
                { sqsExtractContextPropagationFromPayload: true },
                [{ traceId: TRACE_ID, spanId: SPAN_ID, traceState: TRACESTATE }],
            ],
            ["receive-default", {}, []],
        ] as const) {
            const q = queues[queue]!;
            const report = await runInstrumented({
                instrument: { awsSdk: settings },
                task: { kind: "receive", sqsEndpoint: fauxqs.endpoint, queueUrl: q.queueUrl },
            });
            assert.equal((report.result as unknown[]).length, 1, `${queue}: the message was received`);
            const name = `${q.queueArn.split(":").at(-1)!} receive`;
            assert.deepEqual(linksOf(report, name, SpanKind.CONSUMER), expected, queue);
        }
    });
});
