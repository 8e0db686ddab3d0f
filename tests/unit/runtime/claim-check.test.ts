/**
 * The claim check's pure parts and the writer's side of it without I/O beyond a recorded client: which messages
 * are offloaded and what their records hold, the pointer's shape (the AWS Extended Clients'), the key, the put's
 * checksum and create-only condition, and every refusal of the options and of the headers. The S3 stand-in is in
 * memory (the unit tier runs no emulator); the same paths run on fauxqs's S3 in
 * tests/integration/runtime/large-payloads.test.ts.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { isOutboxError } from "../../../runtime/errors";
import { decodeEnvelope } from "../../../runtime/record/envelope";
import { ATTR } from "../../../runtime/schema";
import {
    CLAIM_CHECK_ATTRIBUTE,
    LEGACY_CLAIM_CHECK_ATTRIBUTE,
    POINTER_CLASS,
    claimCheckKey,
    parsePointer,
    pointerText,
} from "../../../runtime/claim-check/pointer";
import { LARGE_PAYLOAD_LIMITS } from "../../../runtime/claim-check/offload";
import {
    DLQ_MAX_MESSAGE_BYTES,
    MAX_SOURCE_LENGTH,
    SNS_MAX_MESSAGE_BYTES,
    snsMessageSize,
    worstCaseDeadLetterSize,
    type OutboundMessage,
} from "../../../runtime/record/message";
import { createPayloadResolver } from "../../../runtime/claim-check/resolver";
import { redriveRecordId } from "../../../runtime/record/redrive-id";
import { context, createTraceState, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { FakeDynamoDb } from "../../support/store/fake-client";
import { MemoryObjects, s3Error } from "../../support/claim-check/memory-objects";

const T0 = Date.UTC(2026, 10, 30, 5, 0, 0);
const clock = { now: () => T0, sleep: async () => undefined };
const BUCKET = "orders-payloads";

function setup(over: { thresholdBytes?: number } = {}) {
    const ddb = new FakeDynamoDb().on("TransactWriteItems", () => ({}));
    const objects = new MemoryObjects();
    const writer = new OutboxWriter({
        client: ddb as never,
        tableName: "outbox",
        clock,
        largePayloads: { objects, bucket: BUCKET, ...over },
    });
    return { ddb, objects, writer };
}

function recordOf(ddb: FakeDynamoDb, n = 0) {
    const item = ddb.of("TransactWriteItems")[0]!.input.TransactItems[n].Put.Item;
    return { item, envelope: decodeEnvelope(item[ATTR.envelopeJson].S) };
}

const big = (bytes: number): OutboxMessage => ({
    id: "evt-1",
    partition: "ORDER#1",
    type: "OrderPlaced",
    payload: { blob: "x".repeat(bytes) },
    headers: { tenant: "acme" },
});

/** The published form the writer measures for a message of {@link big}'s shape (the id, type and headers it sends). */
function outboundOf(message: OutboxMessage): OutboundMessage {
    return {
        id: message.id!,
        type: message.type,
        partition: message.partition,
        body: JSON.stringify(message.payload),
        headers: message.headers ?? {},
        createdAt: T0,
        expiresAt: 0,
    };
}

async function refuses(promise: Promise<unknown> | (() => unknown), code: string, pattern: RegExp): Promise<void> {
    const run = typeof promise === "function" ? Promise.resolve().then(promise) : promise;
    await assert.rejects(run, (err: unknown) => {
        assert.ok(isOutboxError(err), String(err));
        assert.equal(err.code, code, err.message);
        assert.match(err.message, pattern);
        return true;
    });
}

describe("claim check: the writer's side", function () {
    it("keeps a message that fits inline as it is: no put, and the same record as a writer without largePayloads", async function () {
        const { ddb, objects, writer } = setup();
        const plain = new FakeDynamoDb().on("TransactWriteItems", () => ({}));
        const message: OutboxMessage = {
            id: "evt-small",
            partition: "ORDER#1",
            type: "OrderPlaced",
            payload: { orderId: 1 },
            headers: { tenant: "acme" },
        };
        await writer.write({ messages: [message] });
        await new OutboxWriter({ client: plain as never, tableName: "outbox", clock }).write({ messages: [message] });
        assert.equal(objects.puts.length, 0);
        assert.deepEqual(ddb.of("TransactWriteItems")[0]!.input, plain.of("TransactWriteItems")[0]!.input);
    });

    it("offloads a message past SNS's 256 KiB: the put carries the bytes, their SHA-256 and If-None-Match; the record holds the Extended Clients' pointer, ExtendedPayloadSize and SQSLargePayloadSize", async function () {
        const { ddb, objects, writer } = setup();
        await writer.write({ messages: [big(300 * 1024)] });
        assert.equal(objects.puts.length, 1);
        const put = objects.puts[0]!;
        const bytes = Buffer.from(JSON.stringify({ blob: "x".repeat(300 * 1024) }), "utf8");
        const sha = createHash("sha256").update(bytes).digest();
        assert.ok(Buffer.from(put.Body).equals(bytes));
        assert.equal(put.ContentLength, bytes.byteLength);
        assert.equal(put.ChecksumSHA256, sha.toString("base64"));
        assert.equal(put.IfNoneMatch, "*");
        assert.equal(put.Key, `outbox-payloads/evt-1/${sha.toString("hex")}`);
        const { item, envelope } = recordOf(ddb);
        assert.deepEqual(JSON.parse(envelope.payload), [
            POINTER_CLASS,
            {
                s3BucketName: BUCKET,
                s3Key: put.Key,
                byteLength: bytes.byteLength,
                sha256: sha.toString("base64"),
                outboxId: "evt-1",
            },
        ]);
        assert.deepEqual(envelope.headers, {
            tenant: "acme",
            [CLAIM_CHECK_ATTRIBUTE]: String(bytes.byteLength),
            [LEGACY_CLAIM_CHECK_ATTRIBUTE]: String(bytes.byteLength),
        });
        assert.equal(item[ATTR.status].S, "pending");
        assert.ok(JSON.stringify(item).length < 4096, "the record is small");
    });

    it("offloads at the threshold the user sets, and not one byte below it", async function () {
        const { objects, writer } = setup({ thresholdBytes: 2048 });
        // The SNS size is the body plus the attributes (outbox.id, outbox.type, outbox.source, tenant: names, types
        // and values), outbox.source as long as a relay may stamp it (issue 33).
        const attributes =
            "outbox.id".length +
            6 +
            "evt-1".length +
            "outbox.type".length +
            6 +
            "OrderPlaced".length +
            "outbox.source".length +
            6 +
            MAX_SOURCE_LENGTH +
            "tenant".length +
            6 +
            "acme".length;
        const bodyAt = (n: number) => JSON.stringify({ blob: "x".repeat(n) }).length;
        const fill = 2048 - attributes - bodyAt(0);
        assert.equal(bodyAt(fill) + attributes, 2048);
        await writer.write({ messages: [big(fill)] });
        assert.equal(objects.puts.length, 0, "exactly at the threshold: inline");
        await writer.write({ messages: [{ ...big(fill + 1), id: "evt-2" }] });
        assert.equal(objects.puts.length, 1, "one byte past it: offloaded");
    });

    it("reuses the key on a retry, and takes S3's 412 (the object is there) as done", async function () {
        const { ddb, objects, writer } = setup();
        await writer.write({ messages: [big(300 * 1024)] });
        objects.putFailures.push(s3Error("PreconditionFailed", 412));
        await writer.write({ messages: [big(300 * 1024)] });
        assert.equal(objects.puts[0]!.Key, objects.puts[1]!.Key);
        assert.equal(ddb.count("TransactWriteItems"), 2, "the retry went on to its transaction");
    });

    it("writes nothing to the table when a put fails, and says which message, bucket and key", async function () {
        const { ddb, objects, writer } = setup();
        objects.putFailures.push(s3Error("AccessDenied", 403));
        await refuses(
            writer.write({ messages: [big(300 * 1024)] }),
            "NOT_AUTHORIZED",
            /messages\[0\] \(id "evt-1", \d+ bytes\) at s3:\/\/orders-payloads\/outbox-payloads\/evt-1\/[0-9a-f]{64} failed \(AccessDenied\); nothing was written/,
        );
        assert.equal(ddb.count("TransactWriteItems"), 0);
    });

    it("checks without I/O: check() measures the pointer, not the payload, and puts nothing", async function () {
        const { objects, writer } = setup();
        writer.check({ messages: [big(5 * 1024 * 1024)] });
        assert.equal(objects.puts.length, 0);
    });

    it("refuses an offloaded message with 7 headers: the claim check's two attributes need the ninth and tenth slots", async function () {
        const { objects, writer } = setup();
        const headers = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`h${i}`, "v"]));
        await refuses(
            writer.write({ messages: [{ ...big(300 * 1024), headers }] }),
            "INVALID_PAYLOAD",
            /offloaded to S3, and its message carries the ExtendedPayloadSize and SQSLargePayloadSize attributes besides the outbox.s \(outbox.id, outbox.type, outbox.source\), so at most 5 headers fit .* it has 7: move 2 into the payload/,
        );
        assert.equal(objects.puts.length, 0);
        // Five are fine.
        await writer.write({
            messages: [{ ...big(300 * 1024), headers: Object.fromEntries(Object.entries(headers).slice(0, 5)) }],
        });
    });

    it("refuses a payload past the limits without largePayloads, as before", async function () {
        const ddb = new FakeDynamoDb();
        await refuses(
            new OutboxWriter({ client: ddb as never, tableName: "outbox", clock }).write({
                messages: [big(300 * 1024)],
            }),
            "INVALID_PAYLOAD",
            /SNS accepts at most 262144/,
        );
    });

    it("refuses the claim check's attribute names as headers, unless the payload is a pointer that agrees with it (a redriven claim check)", async function () {
        const { writer } = setup();
        for (const name of [CLAIM_CHECK_ATTRIBUTE, "SQSLargePayloadSize", "extendedpayloadsize"]) {
            await refuses(
                writer.write({
                    messages: [{ partition: "P", type: "T", payload: { a: 1 }, headers: { [name]: "7" } }],
                }),
                "INVALID_PAYLOAD",
                /reserved/,
            );
        }
        const pointer = {
            bucket: BUCKET,
            key: "outbox-payloads/evt-1/ab",
            byteLength: 300_000,
            sha256: "A".repeat(43) + "=",
            outboxId: "evt-1",
        };
        const payload = JSON.parse(pointerText(pointer)) as unknown;
        await refuses(
            writer.write({
                messages: [{ partition: "P", type: "T", payload, headers: { [CLAIM_CHECK_ATTRIBUTE]: "299999" } }],
            }),
            "INVALID_PAYLOAD",
            /pointer says the payload is 300000 bytes/,
        );
        // A redriven claim check, on a writer with no S3 at all: written as it is, nothing put.
        const ddb = new FakeDynamoDb().on("TransactWriteItems", () => ({}));
        await new OutboxWriter({ client: ddb as never, tableName: "outbox", clock }).write({
            messages: [
                {
                    id: "redrive.evt-1",
                    partition: "P",
                    type: "T",
                    payload,
                    headers: { [CLAIM_CHECK_ATTRIBUTE]: "300000" },
                },
            ],
        });
        assert.equal(recordOf(ddb).envelope.payload, pointerText(pointer));
        // Today's claim check carries both names; each must agree with the pointer; the legacy one alone is not ours.
        const both = { [CLAIM_CHECK_ATTRIBUTE]: "300000", [LEGACY_CLAIM_CHECK_ATTRIBUTE]: "300000" };
        await new OutboxWriter({ client: ddb as never, tableName: "outbox", clock }).write({
            messages: [{ id: "redrive.evt-2", partition: "P", type: "T", payload, headers: both }],
        });
        assert.deepEqual(recordOf(ddb, 0).envelope.headers, { [CLAIM_CHECK_ATTRIBUTE]: "300000" });
        assert.deepEqual(
            decodeEnvelope(ddb.of("TransactWriteItems")[1]!.input.TransactItems[0].Put.Item[ATTR.envelopeJson].S)
                .headers,
            both,
        );
        await refuses(
            writer.write({
                messages: [
                    {
                        partition: "P",
                        type: "T",
                        payload,
                        headers: { ...both, [LEGACY_CLAIM_CHECK_ATTRIBUTE]: "299999" },
                    },
                ],
            }),
            "INVALID_PAYLOAD",
            /headers\["SQSLargePayloadSize"\] is "299999", but the pointer says the payload is 300000 bytes/,
        );
        await refuses(
            writer.write({
                messages: [
                    { partition: "P", type: "T", payload, headers: { [LEGACY_CLAIM_CHECK_ATTRIBUTE]: "300000" } },
                ],
            }),
            "INVALID_PAYLOAD",
            /headers name "SQSLargePayloadSize" is reserved/,
        );
    });

    it("offloads a message whose published form fits but whose dead-letter form would pass the DLQ's 256 KiB", async function () {
        const { objects, writer } = setup();
        // The DLQ message adds the record's identity, reason and a worst-case error text of 1 KiB to the payload.
        const near = (n: number) => ({ ...big(n), headers: {} });
        const fill = (n: number) => snsMessageSize(outboundOf(near(n)));
        let bytes = SNS_MAX_MESSAGE_BYTES - 600;
        while (fill(bytes) > SNS_MAX_MESSAGE_BYTES - 200) bytes -= 1;
        const message = near(bytes);
        assert.ok(snsMessageSize(outboundOf(message)) <= SNS_MAX_MESSAGE_BYTES, "its SNS message fits the threshold");
        assert.ok(worstCaseDeadLetterSize(outboundOf(message)) > DLQ_MAX_MESSAGE_BYTES, "its DLQ message would not");
        await writer.write({ messages: [message] });
        assert.equal(objects.puts.length, 1, "offloaded for the DLQ's sake");
    });

    it("refuses bad largePayloads options with INVALID_CONFIG, naming the field and the fix", function () {
        const objects = new MemoryObjects();
        const make = (largePayloads: unknown) => () =>
            new OutboxWriter({
                client: new FakeDynamoDb() as never,
                tableName: "outbox",
                largePayloads: largePayloads as never,
            });
        assert.throws(
            make({ objects, bucket: "arn:aws:s3:::orders-payloads" }),
            /largePayloads\.bucket is "arn:aws:s3:::orders-payloads"; it must be an S3 bucket name .* not an ARN/,
        );
        assert.throws(make({ objects, bucket: "Orders" }), /largePayloads\.bucket/);
        assert.throws(
            make({ objects: {}, bucket: BUCKET }),
            /objects must be an S3 client with putObject: new S3\(\{\}\)/,
        );
        assert.throws(
            make({ objects, bucket: BUCKET, thresholdBytes: LARGE_PAYLOAD_LIMITS.thresholdBytes.min - 1 }),
            /thresholdBytes is 1023; expected an integer from 1024 to 262144/,
        );
        assert.throws(
            make({ objects, bucket: BUCKET, thresholdBytes: LARGE_PAYLOAD_LIMITS.thresholdBytes.max + 1 }),
            /thresholdBytes is 262145; expected an integer from 1024 to 262144/,
        );
        assert.throws(make({ objects, bucket: BUCKET, keyPrefix: "with space/" }), /keyPrefix is "with space\/"/);
        assert.throws(make("yes"), /largePayloads must be \{ objects, bucket \}/);
        for (const thresholdBytes of [1024, 262144]) make({ objects, bucket: BUCKET, thresholdBytes })();
    });
});

describe("claim check: the attribute budget with the active trace context (the real @opentelemetry/api)", function () {
    const contextManager = new AsyncLocalStorageContextManager();
    before(() =>
        assert.ok(context.setGlobalContextManager(contextManager.enable()), "no other context manager is registered"),
    );
    after(() => context.disable());

    it("gives an offloaded message's trace context what the claim check's attributes leave: the traceparent without the tracestate at 4 headers, with a warning", async function () {
        const warnings: string[] = [];
        const ddb = new FakeDynamoDb().on("TransactWriteItems", () => ({}));
        const logger = {
            debug: () => undefined,
            info: () => undefined,
            warn: (m: string) => void warnings.push(m),
            error: () => undefined,
        };
        const writer = new OutboxWriter({
            client: ddb as never,
            tableName: "outbox",
            clock,
            logger,
            largePayloads: { objects: new MemoryObjects(), bucket: BUCKET },
        });
        const headers = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`h${i}`, "v"]));
        const parent = trace.setSpanContext(ROOT_CONTEXT, {
            traceId: "0af7651916cd43dd8448eb211c80319c",
            spanId: "b7ad6b7169203331",
            traceFlags: 1,
            isRemote: true,
            traceState: createTraceState("vendor=1"),
        });
        const span = new TracerProvider().getTracer("claim-check.test").startSpan("write", {}, parent);
        await context.with(trace.setSpan(parent, span), () =>
            writer.write({
                messages: [
                    { ...big(300 * 1024), headers },
                    { ...big(10), id: "evt-inline", headers },
                ],
            }),
        );
        span.end();
        const offloaded = recordOf(ddb, 0).envelope.headers;
        assert.deepEqual(
            Object.keys(offloaded).sort(),
            [...Object.keys(headers), CLAIM_CHECK_ATTRIBUTE, LEGACY_CLAIM_CHECK_ATTRIBUTE, "traceparent"].sort(),
            "no room left for the tracestate",
        );
        assert.deepEqual(
            Object.keys(recordOf(ddb, 1).envelope.headers).sort(),
            [...Object.keys(headers), "traceparent", "tracestate"].sort(),
            "inline: both",
        );
        assert.equal(warnings.length, 1);
        assert.match(
            warnings[0]!,
            /has 6 headers, which leave 1 of SNS's 10 message attributes for the active trace context; it carries the traceparent without the tracestate/,
        );
    });
});

describe("claim check: the pointer", function () {
    it("reads back what it writes, and says what is wrong with anything else", function () {
        const pointer = { bucket: BUCKET, key: "k", byteLength: 3, sha256: "B".repeat(43) + "=", outboxId: "id" };
        assert.deepEqual(parsePointer(pointerText(pointer)), pointer);
        assert.match(
            (parsePointer("{}") as { problem: string }).problem,
            /not a \["software\.amazon\.payloadoffloading\.PayloadS3Pointer"/,
        );
        assert.match((parsePointer("nope") as { problem: string }).problem, /not JSON/);
        assert.match(
            (
                parsePointer(
                    JSON.stringify([POINTER_CLASS, { ...JSON.parse(pointerText(pointer))[1], sha256: "x" }]),
                ) as { problem: string }
            ).problem,
            /sha256 "x"/,
        );
    });

    it("keys a payload by its record id (URI-encoded) and its SHA-256", function () {
        assert.equal(claimCheckKey("p/", "ORDER#1/a b", "ff"), "p/ORDER%231%2Fa%20b/ff");
    });
});

describe("claim check: the resolver (in memory; on fauxqs in the integration tests)", function () {
    it("passes an inline message through without a call, and refuses a bucket ARN as its configuration", async function () {
        const objects = new MemoryObjects();
        const resolver = createPayloadResolver({ objects, bucket: BUCKET });
        const message = { outboxId: "a", type: "T", headers: { tenant: "acme" }, body: '{"a":1}' };
        assert.deepEqual(await resolver.resolveMessage(message), message);
        assert.equal(objects.gets.length, 0);
        assert.throws(
            () => createPayloadResolver({ objects, bucket: "arn:aws:s3:::x" }),
            /bucket is "arn:aws:s3:::x"; it must be the payload bucket's name/,
        );
        assert.throws(
            () => createPayloadResolver({ objects: {} as never, bucket: BUCKET }),
            /objects must be an S3 client with getObject/,
        );
    });

    it("refuses a message that carries ExtendedPayloadSize with a body that is no pointer, or a size that disagrees", async function () {
        const resolver = createPayloadResolver({ objects: new MemoryObjects(), bucket: BUCKET });
        await refuses(
            resolver.resolveMessage({
                outboxId: "r-1",
                type: "T",
                headers: { [CLAIM_CHECK_ATTRIBUTE]: "3" },
                body: "{}",
            }),
            "INVALID_PAYLOAD",
            /claim check of outbox id "r-1": .* body is no pointer/,
        );
        const body = pointerText({
            bucket: BUCKET,
            key: "k",
            byteLength: 3,
            sha256: "B".repeat(43) + "=",
            outboxId: "r-1",
        });
        await refuses(
            resolver.resolveMessage({ outboxId: "r-1", type: "T", headers: { [CLAIM_CHECK_ATTRIBUTE]: "4" }, body }),
            "INVALID_PAYLOAD",
            /attribute is "4", but the pointer says 3 bytes/,
        );
        await refuses(
            resolver.resolveMessage({
                outboxId: "r-1",
                type: "T",
                headers: { [CLAIM_CHECK_ATTRIBUTE]: "3", [LEGACY_CLAIM_CHECK_ATTRIBUTE]: "4" },
                body,
            }),
            "INVALID_PAYLOAD",
            /its SQSLargePayloadSize attribute is "4", but the pointer says 3 bytes/,
        );
    });

    it("refuses a pointer that is another record's (its outboxId is not the message's), as the message's fault; takes a redriven message's, whose id a redrive derived from the pointer's", async function () {
        const objects = new MemoryObjects();
        const bytes = Buffer.from('{"orderId":7}', "utf8");
        await objects.putObject({
            Bucket: BUCKET,
            Key: "outbox-payloads/evt-7/x",
            Body: bytes,
            ContentLength: bytes.byteLength,
            ContentType: "application/json",
            ChecksumSHA256: createHash("sha256").update(bytes).digest("base64"),
            IfNoneMatch: "*",
        });
        const body = pointerText({
            bucket: BUCKET,
            key: "outbox-payloads/evt-7/x",
            byteLength: bytes.byteLength,
            sha256: createHash("sha256").update(bytes).digest("base64"),
            outboxId: "evt-7",
        });
        const headers = { [CLAIM_CHECK_ATTRIBUTE]: String(bytes.byteLength) };
        const resolver = createPayloadResolver({ objects, bucket: BUCKET });
        await assert.rejects(
            resolver.resolveMessage({ outboxId: "evt-8", type: "T", headers, body }),
            (err: unknown) => {
                assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
                assert.equal(err.transient, false, "the message's fault: poison");
                assert.match(
                    err.message,
                    /^claim check of outbox id "evt-8": the pointer is the claim check of outbox id "evt-7", not of this message; refused/,
                );
                assert.deepEqual(err.context, {
                    outboxId: "evt-8",
                    bucket: BUCKET,
                    key: "outbox-payloads/evt-7/x",
                    pointerOutboxId: "evt-7",
                });
                return true;
            },
        );
        assert.equal(objects.gets.length, 0, "nothing fetched");
        for (const outboxId of ["evt-7", redriveRecordId("evt-7"), redriveRecordId(redriveRecordId("evt-7"))]) {
            const resolved = await resolver.resolveMessage({ outboxId, type: "T", headers, body });
            assert.equal(resolved.body, '{"orderId":7}', outboxId);
        }
    });
});
