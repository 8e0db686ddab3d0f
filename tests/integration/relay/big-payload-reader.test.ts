/**
 * The claim check read by `sns-sqs-big-payload` (0.1.4, npm), the one JavaScript library that reads the Extended
 * Clients' `PayloadS3Pointer` body (with `extendedLibraryCompatibility: true`; AWS ships Extended Clients for Java
 * and Python only). It runs as a consumer runs it: its real `SqsConsumer` polling with the AWS SDK v2 clients it
 * takes, on fauxqs's SQS and S3, reading what the real publisher put on a fauxqs SNS topic from the table's real
 * stream on DynamoDB Local. It recognizes an offloaded message by the older attribute name `SQSLargePayloadSize`
 * only, which every claim check now carries beside `ExtendedPayloadSize`.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3 } from "@aws-sdk/client-s3";
import type * as AwsSdkV2 from "aws-sdk";
import type * as BigPayload from "sns-sqs-big-payload";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createPayloadBucket, localPayloadObjects } from "../../../dev/emulators/local-s3";
import { startS3RefusingProxy } from "../../../dev/emulators/s3-refusals";
import { POINTER_CLASS } from "../../../runtime/claim-check/pointer";
import { dynamoClient } from "../../support/dynamodb";
import { relayedOutbox, untilDepth } from "../../support/runtime/relay";
import { destroyStreamsClients } from "../../support/stream-table";
import { subscribedQueues } from "../../support/inbox/world";

const BUCKET = "big-payload-reader";
const LARGE = { orderId: "o-large", lines: "é".repeat(150 * 1024) };
const SMALL = { orderId: "o-small" };

/** What the library handed its consumer for one message. */
interface Handed {
    readonly payload: unknown;
    readonly fromS3: boolean;
}

describe("the claim check read by sns-sqs-big-payload (its real SqsConsumer, on fauxqs's SQS and S3)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient;
    let fauxqs: LocalFauxqs;
    let s3: S3;
    const queues: Record<"raw" | "enveloped" | "refused", { queueUrl: string; queueArn: string }> = {} as never;

    let AWS: typeof AwsSdkV2;
    let library: typeof BigPayload;

    before(async () => {
        // Loaded here, not at the top: SDK v2 prints its end-of-support note when it loads unless told not to.
        process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = "1";
        AWS = await import("aws-sdk");
        library = await import("sns-sqs-big-payload");
        ddb = await dynamoClient();
        fauxqs = await startFauxqs();
        s3 = localPayloadObjects(fauxqs.endpoint);
        await createPayloadBucket(s3, BUCKET);
        const run = Date.now();
        const topicArn = await fauxqs.createTopic(`big-payload-${run}`);
        Object.assign(
            queues,
            await subscribedQueues(fauxqs, topicArn, (name) => `big-payload-${name}-${run}`, {
                raw: true,
                enveloped: false,
                refused: true,
            }),
        );
        const outbox = await relayedOutbox(ddb, fauxqs, topicArn, false, "big-payload", {
            largePayloads: { objects: s3, bucket: BUCKET },
        });
        try {
            await outbox.writer.write({
                messages: [
                    { partition: "ORDER#1", type: "OrderPlaced", payload: LARGE },
                    { partition: "ORDER#2", type: "OrderPlaced", payload: SMALL },
                ],
            });
            await outbox.mapping.drain({ timeoutMs: 30_000 });
        } finally {
            await outbox.mapping.stop();
        }
        for (const queue of Object.values(queues)) await untilDepth(fauxqs, queue, 2);
    });
    after(async () => {
        s3?.destroy();
        await fauxqs?.stop();
        destroyStreamsClients();
    });

    /**
     * Run the library's consumer on a queue until it handed `count` messages, then stop it as its users do. The SDK
     * v2 client sends to the queue URL's host, and fauxqs's URLs name a host that only resolves in AWS: the URL is
     * given with fauxqs's endpoint as its host.
     */
    async function consume(
        queue: { queueUrl: string },
        count: number,
        options: Partial<BigPayload.SqsConsumerOptions> & { s3Endpoint?: string } = {},
    ): Promise<{ handed: Handed[]; s3Errors: unknown[] }> {
        const credentials = {
            accessKeyId: LOCAL_CREDENTIALS.accessKeyId,
            secretAccessKey: LOCAL_CREDENTIALS.secretAccessKey,
        };
        const handed: Handed[] = [];
        const s3Errors: unknown[] = [];
        const { SqsConsumer, SqsConsumerEvents } = library;
        const sqs = new AWS.SQS({ endpoint: fauxqs.endpoint, region: LOCAL_REGION, credentials });
        // The receive in flight when the consumer stops returns without the poll-ended event: awaited by its request.
        let inFlight: Promise<unknown> = Promise.resolve();
        const receive = sqs.receiveMessage.bind(sqs) as (
            p: AwsSdkV2.SQS.ReceiveMessageRequest,
        ) => AwsSdkV2.Request<AwsSdkV2.SQS.ReceiveMessageResult, AwsSdkV2.AWSError>;
        sqs.receiveMessage = ((params: AwsSdkV2.SQS.ReceiveMessageRequest) => {
            const request = receive(params);
            inFlight = new Promise((resolve) => request.on("complete", resolve));
            return request;
        }) as typeof sqs.receiveMessage;
        const consumer = SqsConsumer.create({
            queueUrl: `${fauxqs.endpoint}${queue.queueUrl.replace(/^https?:\/\/[^/]+/, "")}`,
            sqs,
            s3: new AWS.S3({
                endpoint: options.s3Endpoint ?? fauxqs.endpoint,
                region: LOCAL_REGION,
                credentials,
                s3ForcePathStyle: true,
                maxRetries: 0,
            }),
            getPayloadFromS3: true,
            extendedLibraryCompatibility: true,
            waitTimeSeconds: 1,
            parsePayload: (raw: Buffer | string) => JSON.parse(raw.toString()),
            handleMessage: async ({ payload, s3PayloadMeta }) => {
                handed.push({ payload, fromS3: s3PayloadMeta !== undefined });
            },
            ...options,
        });
        const errors: unknown[] = [];
        consumer.on(SqsConsumerEvents.s3PayloadError, (e) => void s3Errors.push(e));
        for (const event of [SqsConsumerEvents.error, SqsConsumerEvents.processingError])
            consumer.on(event, (e) => void errors.push(e));
        consumer.start();
        const deadline = Date.now() + 20_000;
        while (handed.length < count && errors.length === 0 && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 50));
        consumer.stop();
        await inFlight;
        assert.deepEqual(errors, [], "the library reported no error");
        return { handed, s3Errors };
    }

    it("with raw delivery, hands its consumer the writer's payload, fetched from S3 for the claim check and inline for the other", async () => {
        const { handed } = await consume(queues.raw, 2);
        assert.equal(handed.length, 2);
        const large = handed.find((h) => h.fromS3);
        assert.ok(large !== undefined, "one came from S3");
        assert.deepEqual(large.payload, LARGE, "the writer's payload, not the pointer");
        assert.deepEqual(handed.find((h) => !h.fromS3)?.payload, SMALL, "the inline one as it travelled");
    });

    it("through SNS's envelope, hands the pointer as the payload: the attribute it looks for is inside the body, where it does not look (use raw delivery, or createPayloadResolver)", async () => {
        const { handed } = await consume(queues.enveloped, 2, {
            transformMessageBody: (body: string) => (JSON.parse(body) as { Message: string }).Message,
        });
        const pointer = handed.find((h) => Array.isArray(h.payload));
        assert.equal((pointer?.payload as unknown[])[0], POINTER_CLASS);
        assert.equal(pointer?.fromS3, false);
    });

    it("when S3 refuses the read, emits s3-payload-error and still hands the pointer as the payload (S3's AccessDenied from a proxy in front of fauxqs's S3)", async () => {
        const proxy = await startS3RefusingProxy(fauxqs.endpoint);
        try {
            proxy.refuse((r) =>
                r.method === "GET" ? { status: 403, code: "AccessDenied", message: "Access Denied" } : undefined,
            );
            const { handed, s3Errors } = await consume(queues.refused, 2, { s3Endpoint: proxy.endpoint });
            assert.equal(s3Errors.length, 1, "the refusal, as an event");
            const pointer = handed.find((h) => Array.isArray(h.payload));
            assert.equal((pointer?.payload as unknown[])[0], POINTER_CLASS, "and the pointer as the payload");
        } finally {
            await proxy.stop();
        }
    });
});
