/**
 * The claim check on DynamoDB Local and fauxqs's S3: what an offloaded write leaves in the table and the bucket,
 * what a small write leaves (the record a writer without `largePayloads` writes, byte for byte), what a failed
 * transaction leaves (only the object, under the prefix the bucket's lifecycle rule expires), a retry reusing the
 * object, and the resolver's answers to a tampered object, a deleted one, a pointer to another bucket, and S3
 * refusing the read (AccessDenied, a KMS key disabled: answered by a proxy in front of fauxqs's S3, which enforces
 * neither IAM nor KMS).
 * fauxqs verifies neither the SHA-256 checksum of a put nor `If-None-Match`: those are in the unit tests
 * (tests/unit/runtime/claim-check.test.ts), on a recorded client.
 * Not proven here: delivery (tests/integration/relay/large-payloads.test.ts).
 */
import assert from "node:assert/strict";
import { DeleteObjectCommand, PutObjectCommand, type S3 } from "@aws-sdk/client-s3";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createPayloadBucket, localPayloadObjects, payloadKeys } from "../../../dev/emulators/local-s3";
import { startS3RefusingProxy } from "../../../dev/emulators/s3-refusals";
import { isOutboxError } from "../../../runtime/errors";
import { messageAttributes, outboundMessage } from "../../../runtime/record/message";
import { Inbox } from "../../../runtime/inbox/inbox";
import { createInboxHandler, type InboxMessage } from "../../../runtime/inbox/handler";
import { toLambdaSqsRecord, type LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import type { OutboxRecord } from "../../../runtime/record/codec";
import { CLAIM_CHECK_ATTRIBUTE, parsePointer, type ClaimCheckPointer } from "../../../runtime/claim-check/pointer";
import { createPayloadResolver } from "../../../runtime/claim-check/resolver";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { PAYLOAD_EXPIRY_PREFIX } from "../../../components/payload-bucket";
import { dynamoClient } from "../../support/dynamodb";
import { createConsumerTable, createOutboxTable, scanItems, scanRecords } from "../../support/runtime/table";

const T0 = Date.UTC(2026, 10, 30, 5, 0, 0);
const clock = { now: () => T0, sleep: async () => undefined };
const BUCKET = "orders-payloads";

const large = (id: string, bytes = 300 * 1024): OutboxMessage => ({
    id,
    partition: "ORDER#1",
    type: "OrderPlaced",
    payload: { id, blob: "é".repeat(bytes / 2) },
    headers: { tenant: "acme" },
});

describe("claim check on DynamoDB Local and fauxqs's S3", function () {
    this.timeout(60_000);
    let fauxqs: LocalFauxqs;
    let s3: S3;
    let ddb: DynamoDBClient;

    before(async function () {
        fauxqs = await startFauxqs();
        s3 = localPayloadObjects(fauxqs.endpoint);
        await createPayloadBucket(s3, BUCKET);
        await createPayloadBucket(s3, "other-payloads");
        ddb = await dynamoClient();
    });
    after(async function () {
        s3?.destroy();
        await fauxqs?.stop();
    });

    async function writerOn(tableName: string): Promise<OutboxWriter> {
        return new OutboxWriter({ client: ddb, tableName, clock, largePayloads: { objects: s3, bucket: BUCKET } });
    }

    it("stores a payload past 256 KiB in the bucket and its pointer in a record under 4 KB; the resolver gives back the writer's bytes", async function () {
        const tableName = await createOutboxTable(ddb, "claim");
        const writer = await writerOn(tableName);
        const message = large("evt-big");
        await writer.write({ messages: [message] });
        const [item] = (await scanItems(ddb, tableName)).filter((i) => i.SK?.S?.startsWith("OUTBOX#"));
        const itemBytes = Buffer.byteLength(JSON.stringify(item));
        assert.ok(itemBytes < 4096, `the item is ${itemBytes} bytes`);
        const [record] = await scanRecords(ddb, tableName);
        const pointer = parsePointer(record!.envelope.payload) as ClaimCheckPointer;
        assert.equal(pointer.bucket, BUCKET);
        assert.ok((await payloadKeys(s3, BUCKET)).includes(pointer.key));
        const outbound = outboundMessage(record!);
        assert.equal(outbound.headers[CLAIM_CHECK_ATTRIBUTE], String(pointer.byteLength));
        const resolved = await createPayloadResolver({ objects: s3, bucket: BUCKET }).resolveMessage({
            outboxId: outbound.id,
            type: outbound.type,
            headers: outbound.headers,
            body: outbound.body,
        });
        assert.equal(resolved.body, JSON.stringify(message.payload));
        assert.deepEqual(resolved.headers, { tenant: "acme" });
        assert.deepEqual(resolved.claimCheck, pointer);
    });

    it("writes a small message's record exactly as a writer without largePayloads does (GoBridge's layout), and puts nothing", async function () {
        const withOffload = await createOutboxTable(ddb, "small-a");
        const without = await createOutboxTable(ddb, "small-b");
        const message: OutboxMessage = {
            id: "evt-small",
            partition: "ORDER#2",
            type: "OrderPlaced",
            payload: { orderId: 2, note: "<&>" },
            headers: { tenant: "acme" },
            orderingKey: "k",
        };
        const before = await payloadKeys(s3, BUCKET);
        await (await writerOn(withOffload)).write({ messages: [message] });
        await new OutboxWriter({ client: ddb, tableName: without, clock }).write({ messages: [message] });
        assert.deepEqual(await scanItems(ddb, withOffload), await scanItems(ddb, without));
        assert.deepEqual(await payloadKeys(s3, BUCKET), before);
    });

    it("leaves only the object when the transaction fails after the put, under the prefix the lifecycle rule expires; the retry reuses it", async function () {
        const tableName = await createOutboxTable(ddb, "failed");
        const writer = await writerOn(tableName);
        const before = await payloadKeys(s3, BUCKET);
        const failing = {
            ConditionCheck: {
                TableName: tableName,
                Key: { PK: { S: "ORDER#3" }, SK: { S: "META" } },
                ConditionExpression: "attribute_exists(PK)",
            },
        };
        await assert.rejects(writer.write({ items: [failing], messages: [large("evt-failed")] }), (err: unknown) =>
            isOutboxError(err, "CONDITION_FAILED"),
        );
        assert.deepEqual(await scanItems(ddb, tableName), [], "nothing in the table: no record, no id guard");
        const left = (await payloadKeys(s3, BUCKET)).filter((k) => !before.includes(k));
        assert.equal(left.length, 1, "one object");
        assert.ok(
            left[0]!.startsWith(PAYLOAD_EXPIRY_PREFIX),
            `${left[0]} is under the lifecycle rule's prefix ${PAYLOAD_EXPIRY_PREFIX}`,
        );
        await writer.write({ messages: [large("evt-failed")] });
        assert.deepEqual(
            (await payloadKeys(s3, BUCKET)).filter((k) => !before.includes(k)),
            left,
            "the retry put to the same key",
        );
        const [record] = await scanRecords(ddb, tableName);
        assert.equal((parsePointer(record!.envelope.payload) as ClaimCheckPointer).key, left[0]);
    });

    it("fails the write when S3 refuses a put (no such bucket), naming the message and the object, and writes nothing to the table", async function () {
        const tableName = await createOutboxTable(ddb, "claim-put-fails");
        const writer = new OutboxWriter({
            client: ddb,
            tableName,
            clock,
            largePayloads: { objects: s3, bucket: "missing-payloads" },
        });
        await assert.rejects(
            writer.write({ messages: [{ ...large("evt-small"), payload: { small: true } }, large("evt-nobucket")] }),
            (err: unknown) => {
                assert.ok(isOutboxError(err), String(err));
                assert.match(
                    err.message,
                    /^write: storing the payload of messages\[1\] \(id "evt-nobucket", \d+ bytes\) at s3:\/\/missing-payloads\/.+ failed \(\w+\); nothing was written to the table/,
                );
                assert.equal(err.context.messageId, "evt-nobucket");
                assert.equal(err.context.bucket, "missing-payloads");
                return true;
            },
        );
        assert.deepEqual(await scanItems(ddb, tableName), []);
    });

    it("refuses a tampered object, a deleted one and a pointer to another bucket, naming the record id", async function () {
        const tableName = await createOutboxTable(ddb, "tamper");
        const writer = await writerOn(tableName);
        await writer.write({ messages: [large("evt-tampered"), large("evt-deleted"), large("evt-elsewhere")] });
        const records = new Map((await scanRecords(ddb, tableName)).map((r) => [r.recordId, outboundMessage(r)]));
        const delivered = (id: string) => {
            const m = records.get(id)!;
            return { outboxId: m.id, type: m.type, headers: m.headers, body: m.body };
        };
        const keyOf = (id: string) => (parsePointer(records.get(id)!.body) as ClaimCheckPointer).key;
        const resolver = createPayloadResolver({ objects: s3, bucket: BUCKET });

        const original = Buffer.from(
            await (await s3.getObject({ Bucket: BUCKET, Key: keyOf("evt-tampered") })).Body!.transformToByteArray(),
        );
        const changed = Buffer.from(original);
        changed[10] = changed[10]! ^ 1;
        await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyOf("evt-tampered"), Body: changed }));
        await assert.rejects(resolver.resolveMessage(delivered("evt-tampered")), (err: unknown) => {
            assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
            assert.match(
                err.message,
                /^claim check of outbox id "evt-tampered": the payload s3:\/\/orders-payloads\/.* is \d+ bytes with SHA-256 .*, but the pointer says \d+ bytes with SHA-256 .*: the object is not the one written/,
            );
            assert.equal(err.context.outboxId, "evt-tampered");
            return true;
        });

        await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: keyOf("evt-deleted") }));
        await assert.rejects(resolver.resolveMessage(delivered("evt-deleted")), (err: unknown) => {
            assert.ok(isOutboxError(err, "NOT_FOUND"), String(err));
            assert.match(
                err.message,
                /^claim check of outbox id "evt-deleted": the payload s3:\/\/orders-payloads\/.* is gone \(NoSuchKey\): deleted, or expired by the bucket's lifecycle rule/,
            );
            return true;
        });

        await assert.rejects(
            createPayloadResolver({ objects: s3, bucket: "other-payloads" }).resolveMessage(delivered("evt-elsewhere")),
            (err: unknown) => {
                assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
                assert.match(
                    err.message,
                    /^claim check of outbox id "evt-elsewhere": the pointer names bucket "orders-payloads", not the payload bucket "other-payloads" this consumer reads; refused/,
                );
                return true;
            },
        );
        const untouched = await resolver.resolveMessage(delivered("evt-elsewhere"));
        assert.deepEqual(
            JSON.parse(untouched.body),
            large("evt-elsewhere").payload,
            "the untouched one still resolves",
        );
    });

    it("createInboxHandler with payloads hands consume the payload; without them a claim check fails as a misconfiguration, never as its pointer", async function () {
        const tableName = await createOutboxTable(ddb, "inbox-claim");
        await (await writerOn(tableName)).write({ messages: [large("evt-inbox")] });
        const [record] = await scanRecords(ddb, tableName);
        /** What SNS raw delivery puts in the subscribed queue: the body and the publisher's attributes. */
        const delivered = (r: OutboxRecord): LambdaSqsRecord => {
            const m = outboundMessage(r);
            return toLambdaSqsRecord(
                {
                    MessageId: `sqs-${r.recordId}`,
                    ReceiptHandle: "rh",
                    Body: m.body,
                    MessageAttributes: messageAttributes(m),
                    Attributes: { ApproximateReceiveCount: "1" },
                },
                "arn:aws:sqs:us-east-1:000000000000:billing",
            );
        };
        const consumerTable = await createConsumerTable(ddb, "billing");
        const seen: InboxMessage[] = [];
        const errors: string[] = [];
        const logger = {
            debug: () => undefined,
            info: () => undefined,
            warn: () => undefined,
            error: (_m: string, a?: Record<string, unknown>) => void errors.push(String(a?.error)),
        };
        const inbox = new Inbox({ client: ddb, consumer: "billing", tableName: consumerTable });
        const consume = (m: InboxMessage) => void seen.push(m);

        const without = createInboxHandler({ inbox, consume, logger });
        assert.deepEqual(await without({ Records: [delivered(record!)] }), {
            batchItemFailures: [{ itemIdentifier: "sqs-evt-inbox" }],
        });
        assert.equal(seen.length, 0, "consume never got the pointer");
        assert.match(
            errors[0]!,
            /SQS message sqs-evt-inbox \(outbox id "evt-inbox"\) is a claim check \(its payload is in S3\); pass payloads: createPayloadResolver/,
        );

        const handler = createInboxHandler({
            inbox,
            consume,
            logger,
            payloads: createPayloadResolver({ objects: s3, bucket: BUCKET }),
        });
        assert.deepEqual(await handler({ Records: [delivered(record!)] }), { batchItemFailures: [] });
        assert.deepEqual(seen[0]!.payload, large("evt-inbox").payload);
        assert.deepEqual(seen[0]!.headers, { tenant: "acme" });
        assert.equal(seen[0]!.claimCheck?.outboxId, "evt-inbox");

        await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: seen[0]!.claimCheck!.key }));
        const again = { ...delivered(record!), messageId: "sqs-again" };
        assert.deepEqual(
            await handler({ Records: [again] }),
            { batchItemFailures: [{ itemIdentifier: "sqs-again" }] },
            "a payload gone fails the message, for the queue's redrive policy",
        );
        assert.match(errors.at(-1)!, /claim check of outbox id "evt-inbox": the payload .* is gone/);
        assert.throws(
            () => createInboxHandler({ inbox, consume, payloads: {} as never }),
            /payloads must be a PayloadResolver/,
        );
    });

    it("takes S3's AccessDenied and a KMS refusal as the deployment's fault: the message is retried, never called poison, and is applied once the read is allowed (S3 refusals from a proxy in front of fauxqs's S3)", async function () {
        const tableName = await createOutboxTable(ddb, "refused");
        await (await writerOn(tableName)).write({ messages: [large("evt-refused")] });
        const [record] = await scanRecords(ddb, tableName);
        const m = outboundMessage(record!);
        const sqsRecord = toLambdaSqsRecord(
            {
                MessageId: "sqs-refused",
                ReceiptHandle: "rh",
                Body: m.body,
                MessageAttributes: messageAttributes(m),
                Attributes: { ApproximateReceiveCount: "1" },
            },
            "arn:aws:sqs:us-east-1:000000000000:billing",
        );
        // fauxqs's S3 enforces no IAM and no KMS: the proxy answers GetObject with S3's error document instead.
        const proxy = await startS3RefusingProxy(fauxqs.endpoint);
        const reader = localPayloadObjects(proxy.endpoint);
        try {
            const logs: { level: string; message: string; code?: unknown; error?: unknown }[] = [];
            const log =
                (level: string) =>
                (message: string, a?: Record<string, unknown>): void =>
                    void logs.push({ level, message, code: a?.code, error: a?.error });
            const logger = { debug: () => undefined, info: () => undefined, warn: log("warn"), error: log("error") };
            const seen: InboxMessage[] = [];
            const payloads = createPayloadResolver({ objects: reader, bucket: BUCKET });
            const handler = createInboxHandler({
                inbox: new Inbox({
                    client: ddb,
                    consumer: "refused",
                    tableName: await createConsumerTable(ddb, "refused"),
                }),
                consume: (message) => void seen.push(message),
                logger,
                payloads,
            });
            const refusals = [
                { status: 403, code: "AccessDenied", message: "Access Denied" },
                {
                    status: 400,
                    code: "KMS.DisabledException",
                    message: "The specified KMS key is disabled.",
                },
            ];
            for (const refusal of refusals) {
                proxy.refuse((request) => (request.method === "GET" ? refusal : undefined));
                logs.length = 0;
                await assert.rejects(payloads.resolve(sqsRecord), (err: unknown) => {
                    assert.ok(isOutboxError(err, "NOT_AUTHORIZED"), String(err));
                    assert.equal(err.transient, true, `${refusal.code}: retried, not the message's fault`);
                    assert.match(
                        err.message,
                        new RegExp(
                            `^claim check of outbox id "evt-refused": S3 refused to read s3://orders-payloads/\\S+ \\(${refusal.code.replace(".", "\\.")}\\): a fault of the deployment, not of the message, .* grant the consumer's role the Outbox component's readerPolicy`,
                        ),
                    );
                    assert.equal(
                        (err.cause as Error).name,
                        refusal.code,
                        "the SDK's own error, parsed from S3's answer",
                    );
                    return true;
                });
                assert.deepEqual(await handler({ Records: [sqsRecord] }), {
                    batchItemFailures: [{ itemIdentifier: "sqs-refused" }],
                });
                assert.deepEqual(
                    logs.filter((l) => l.level === "error" || /poison/.test(l.message)),
                    [],
                    `${refusal.code}: not logged as a poison message`,
                );
                assert.deepEqual(
                    logs.map((l) => [l.level, l.message, l.code]),
                    [["warn", "inbox: the payload could not be fetched; SQS redelivers the message", "NOT_AUTHORIZED"]],
                );
                assert.match(String(logs[0]!.error), /a fault of the deployment/);
            }
            assert.equal(seen.length, 0, "consume never ran");
            proxy.refuse(undefined);
            assert.deepEqual(await handler({ Records: [sqsRecord] }), { batchItemFailures: [] }, "the grant fixed");
            assert.deepEqual(seen[0]!.payload, large("evt-refused").payload);
            assert.equal(
                proxy.refused.length,
                4,
                "two reads refused for each refusal: the resolver's and the handler's",
            );
        } finally {
            reader.destroy();
            await proxy.stop();
        }
    });
});
