/**
 * Events of any size, end to end (issue 26): the writer offloads 1 MB and 10 MB payloads to fauxqs's S3; DynamoDB
 * Local's real stream feeds the publisher exactly as the component ships it (the serialized archive, through the
 * local event source mapping with the component's filter and batch size); it publishes the pointer to fauxqs's
 * SNS, which delivers it to two SQS queues, one with raw delivery and one with SNS's envelope; the resolver gives
 * each consumer the writer's bytes. The record and the SNS message stay under 4 KB. A dead-lettered claim check
 * keeps its pointer, and the redrive writes it back without copying the object.
 *
 * Not proven here: IAM (the component tests), S3's checksum verification and `If-None-Match` (fauxqs enforces
 * neither; tests/unit/runtime/claim-check.test.ts shows the writer sends them).
 */
import assert from "node:assert/strict";
import type { S3 } from "@aws-sdk/client-s3";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createPayloadBucket, localPayloadObjects, payloadKeys } from "../../../dev/emulators/local-s3";
import { CLAIM_CHECK_ATTRIBUTE, parsePointer, type ClaimCheckPointer } from "../../../runtime/claim-check/pointer";
import { createPayloadResolver } from "../../../runtime/claim-check/resolver";
import type { LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import { itemSize } from "../../../runtime/record/item-size";
import { redriveDeadLetters } from "../../../runtime/writer/redrive";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { TYPE, buildOutbox } from "../../support/component-harness";
import { dynamoClient } from "../../support/dynamodb";
import { localLambdaEnvironment, preserveEnvironment } from "../../support/local-environment";
import { createOutboxTable, scanRecordItems, scanRecords } from "../../support/runtime/table";
import { entryText, loadSerialized } from "../../support/serialized";
import { receiveEvent, type Queue } from "../../support/sqs-lambda";
import { componentMappingOptions, destroyStreamsClients, outboxStreamMapping } from "../../support/stream-table";
import { HANDLER_ENVIRONMENT } from "../../support/writer/lambda-process";

type Handler = (
    event: LambdaStreamEvent,
    context?: unknown,
) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

const BUCKET = "relay-payloads";
const MB = 1_000_000;

/** A payload whose JSON text is exactly `bytes` long, with multi-byte characters in it. */
function payloadOf(bytes: number, tag: string): { tag: string; text: string } {
    const filler = "0123456789abcdef"
        .repeat(Math.ceil(bytes / 16))
        .slice(0, bytes - Buffer.byteLength(JSON.stringify({ tag, text: "é€" })));
    const payload = { tag, text: `é€${filler}` };
    assert.equal(Buffer.byteLength(JSON.stringify(payload)), bytes);
    return payload;
}

/** The SNS size of a received raw-delivery record: the body and the attributes' names, types and values. */
function messageSize(record: LambdaSqsRecord): number {
    let size = Buffer.byteLength(record.body);
    for (const [name, a] of Object.entries(record.messageAttributes ?? {}))
        size += Buffer.byteLength(name) + Buffer.byteLength(a.dataType ?? "") + Buffer.byteLength(a.stringValue ?? "");
    return size;
}

/**
 * Run `work` with the handler's JSON lines (its EMF metrics) kept off stdout and the SDK's one warning about
 * fauxqs's queue URLs (see tests/integration/relay/publisher.test.ts) kept off stderr; any other warning fails.
 */
async function quietly(work: () => Promise<void>): Promise<void> {
    const write = process.stdout.write;
    const warn = console.warn;
    const warnings: unknown[] = [];
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
        String(chunk).startsWith("{")
            ? true
            : (write as (...a: unknown[]) => boolean).call(
                  process.stdout,
                  chunk,
                  ...rest,
              )) as typeof process.stdout.write;
    console.warn = (...args: unknown[]) => void warnings.push(args[0]);
    try {
        await work();
    } finally {
        process.stdout.write = write;
        console.warn = warn;
    }
    for (const w of warnings) assert.match(String(w), /Invalid URL/);
}

async function receiveAllRecords(fauxqs: LocalFauxqs, queue: Queue, expected: number): Promise<LambdaSqsRecord[]> {
    const out: LambdaSqsRecord[] = [];
    const deadline = Date.now() + 20_000;
    while (out.length < expected && Date.now() < deadline) {
        const event = await receiveEvent(fauxqs.sqs, queue);
        out.push(...event.Records);
        if (event.Records.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return out;
}

describe("end to end: payloads of 1 MB and 10 MB through S3, the serialized publisher, SNS and SQS", function () {
    this.timeout(180_000);
    let restoreEnvironment: () => void;
    let fauxqs: LocalFauxqs;
    let s3: S3;

    before(function () {
        restoreEnvironment = preserveEnvironment(HANDLER_ENVIRONMENT);
    });
    after(async function () {
        restoreEnvironment();
        s3?.destroy();
        await fauxqs?.stop();
        destroyStreamsClients();
    });

    it("gives raw and enveloped consumers the writer's bytes; the record and the SNS message stay under 4 KB; a redriven claim check keeps its object", async function () {
        const built = await buildOutbox("lprelay", { largePayloads: true });
        const fn = built.one(TYPE.fn, "lprelay-publisher");
        const mapping = built.one(TYPE.mapping);

        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "lprelay");
        fauxqs = await startFauxqs();
        s3 = localPayloadObjects(fauxqs.endpoint);
        await createPayloadBucket(s3, BUCKET);
        const topicArn = await fauxqs.createTopic("orders-events");
        const raw = await fauxqs.createQueue("raw-consumer");
        const enveloped = await fauxqs.createQueue("enveloped-consumer");
        await fauxqs.subscribe(topicArn, raw.queueArn, { rawMessageDelivery: true });
        await fauxqs.subscribe(topicArn, enveloped.queueArn, { rawMessageDelivery: false });
        const dlq = await fauxqs.createQueue("orders-dlq");
        Object.assign(
            process.env,
            await localLambdaEnvironment(
                fn.inputs.environment.variables as Record<string, string>,
                { tableName, topicArn, dlqUrl: dlq.queueUrl },
                fauxqs.endpoint,
            ),
        );
        const handler = loadSerialized<Handler>(await entryText(fn));

        const writer = new OutboxWriter({ client: ddb, tableName, largePayloads: { objects: s3, bucket: BUCKET } });
        const messages: OutboxMessage[] = [
            {
                id: "order-1mb",
                partition: "ORDER#1",
                type: "OrderPlaced",
                payload: payloadOf(1 * MB, "1mb"),
                headers: { tenant: "acme" },
            },
            {
                id: "order-10mb",
                partition: "ORDER#2",
                type: "OrderPlaced",
                payload: payloadOf(10 * MB, "10mb"),
                headers: { tenant: "acme" },
                orderingKey: "customer-7",
            },
            { id: "order-small", partition: "ORDER#3", type: "OrderPlaced", payload: { tag: "small" } },
            // Expires before the mapping runs: the publisher dead-letters its pointer.
            {
                id: "order-expired",
                partition: "ORDER#4",
                type: "OrderPlaced",
                payload: payloadOf(1 * MB, "expired"),
                expiresAt: new Date(Date.now() + 300),
            },
        ];
        for (const message of messages) await writer.write({ messages: [message] });
        await new Promise((resolve) => setTimeout(resolve, 400));
        const items = await scanRecordItems(ddb, tableName);
        for (const item of items) assert.ok(itemSize(item) < 4096, `record ${item.SK?.S} is ${itemSize(item)} bytes`);
        const keysAfterWrite = await payloadKeys(s3, BUCKET);
        assert.equal(keysAfterWrite.length, 3, "three payloads offloaded, the small one inline");

        const esm = await outboxStreamMapping(ddb, tableName, handler, {
            ...componentMappingOptions(mapping),
            maximumRetryAttempts: 5,
        });
        try {
            await quietly(() => esm.drain({ timeoutMs: 60_000 }));
            const resolver = createPayloadResolver({ objects: s3, bucket: BUCKET });
            const live = messages.filter((m) => m.expiresAt === undefined);
            for (const queue of [raw, enveloped]) {
                const records = await receiveAllRecords(fauxqs, queue, live.length);
                assert.equal(records.length, live.length, `${queue.queueUrl}: every live message once`);
                for (const record of records) {
                    const resolved = await resolver.resolve(record);
                    const written = live.find((m) => m.id === resolved.outboxId)!;
                    assert.equal(
                        resolved.body,
                        JSON.stringify(written.payload),
                        `${resolved.outboxId} on ${queue === raw ? "raw" : "enveloped"} delivery: the writer's bytes`,
                    );
                    assert.deepEqual(resolved.headers, written.headers ?? {});
                    assert.equal(resolved.claimCheck !== undefined, written.id !== "order-small");
                    if (queue === raw) {
                        assert.ok(
                            messageSize(record) < 4096,
                            `the SNS message of ${resolved.outboxId} is ${messageSize(record)} bytes`,
                        );
                        if (resolved.claimCheck !== undefined)
                            assert.equal(
                                record.messageAttributes?.[CLAIM_CHECK_ATTRIBUTE]?.stringValue,
                                String(resolved.claimCheck.byteLength),
                            );
                    }
                }
            }

            // The dead letter kept the pointer; redrive writes it back as it is, with no S3 client at all, and copies nothing.
            const [expiredRecord] = (await scanRecords(ddb, tableName)).filter((r) => r.recordId === "order-expired");
            assert.equal(expiredRecord!.status, "expired");
            const redriven = await redriveDeadLetters({
                sqs: fauxqs.sqs,
                queueUrl: dlq.queueUrl,
                writer: new OutboxWriter({ client: ddb, tableName }),
            });
            assert.equal(redriven.redriven, 1, JSON.stringify(redriven.problems));
            await quietly(() => esm.drain({ timeoutMs: 60_000 }));
            const [again] = await receiveAllRecords(fauxqs, raw, 1);
            const resolvedAgain = await resolver.resolve(again!);
            // Published under the dead-lettered event's identity (issue 33), which the pointer names too.
            assert.equal(resolvedAgain.outboxId, "order-expired");
            assert.equal(resolvedAgain.body, JSON.stringify(messages[3]!.payload));
            assert.equal(resolvedAgain.claimCheck!.outboxId, "order-expired", "the pointer is the original record's");
            const [redrivenRecord] = (await scanRecords(ddb, tableName)).filter(
                (r) => r.recordId === "redrive.order-expired",
            );
            assert.deepEqual(
                parsePointer(redrivenRecord!.envelope.payload),
                parsePointer(
                    (await scanRecords(ddb, tableName)).find((r) => r.recordId === "order-expired")!.envelope.payload,
                ) as ClaimCheckPointer,
            );
            assert.deepEqual(await payloadKeys(s3, BUCKET), keysAfterWrite, "the redrive copied no object");
        } finally {
            await esm.stop();
        }
    });
});
