/**
 * THE end-to-end test: the publisher exactly as it ships. The Outbox component is declared under the Pulumi
 * mocks; the publisher function's archive (`__index.js`, what Lambda would load) is read from the recorded
 * CallbackFunction, loaded in sloppy mode with the environment the component set (names pointed at the local
 * resources, SDK endpoints at the emulators), and driven by the local event source mapping with the filter and
 * batch size the component provisioned, on DynamoDB Local's real stream, publishing to fauxqs (real SNS → SQS
 * delivery). Nothing in between is a fake. A third case swaps fauxqs for the AWS fault server (a
 * fake, for faults no emulator can produce) and shows that rewinds lose nothing and keep per-key order; the same
 * with the component given an SQS FIFO queue, and an EventBridge bus (the fault server's stand-in: no maintained
 * EventBridge emulator exists), each with faults in its own kind's codes.
 *
 * Not proven here: IAM (component tests), real AWS limits and timings, GSI lag.
 */
import assert from "node:assert/strict";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { startAwsFaultServer } from "../../../dev/emulators/aws-fault-server";
import { ENV } from "../../../runtime/config";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { unmarshalRecord } from "../../../runtime/record/codec";
import { ATTR } from "../../../runtime/schema";
import { OutboxWriter, type OutboxMessage } from "../../../runtime/writer/writer";
import { TYPE, buildOutbox } from "../../support/component-harness";
import { componentMappingOptions, destroyStreamsClients, outboxStreamMapping } from "../../support/stream-table";
import { dynamoClient } from "../../support/dynamodb";
import { entryText, loadSerialized } from "../../support/serialized";
import { localLambdaEnvironment, type LocalNames } from "../../support/local-environment";
import { createOutboxTable, scanRecordItems, scanRecords, sparseIndexCounts } from "../../support/runtime/table";
import { capturingStdout, HANDLER_ENVIRONMENT } from "../../support/writer/lambda-process";
import { writeKeyedAndKeyless } from "../../support/writer/world";
import { preserveEnvironment } from "../../support/local-environment";

type Handler = (
    event: LambdaStreamEvent,
    context?: unknown,
) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

interface Written {
    readonly id: string;
    readonly message: OutboxMessage;
    readonly expired: boolean;
}

/**
 * Point the serialized handler at the local world: the component's environment with its names replaced by the
 * local resources, and the SDK's own variables aiming its clients at DynamoDB Local and `endpoint` (SNS and SQS).
 */
async function setLambdaEnvironment(
    componentEnvironment: Record<string, string>,
    names: LocalNames,
    endpoint: string,
    extra: Record<string, string> = {},
): Promise<void> {
    Object.assign(process.env, await localLambdaEnvironment(componentEnvironment, names, endpoint, extra));
}

/** Drain the table's stream through `handler` with the component's filter, retrying a failed batch at once, forever. */
async function drainThroughFaults(
    ddb: Awaited<ReturnType<typeof dynamoClient>>,
    tableName: string,
    handler: Handler,
    mapping: { inputs: Record<string, any> },
): Promise<void> {
    const esm = await outboxStreamMapping(ddb, tableName, handler, {
        filterPattern: componentMappingOptions(mapping).filterPattern,
        batchSize: 25,
        maximumRetryAttempts: -1,
        retryBackoffMs: 1,
    });
    try {
        await esm.drain({ timeoutMs: 60_000 });
    } finally {
        await esm.stop();
    }
    assert.ok(esm.stats().retries > 0, "faults forced rewinds");
}

/** Every written id delivered at least once, and each key's first deliveries in write order. */
function assertDeliveredInKeyOrder(
    delivered: readonly string[],
    written: readonly { id: string; key?: string }[],
): void {
    assert.deepEqual([...new Set(delivered)].sort(), written.map((w) => w.id).sort(), "every message at least once");
    for (const key of new Set(written.flatMap((w) => (w.key ? [w.key] : [])))) {
        const expected = written.filter((w) => w.key === key).map((w) => w.id);
        const firsts = delivered.filter((id, i) => delivered.indexOf(id) === i && expected.includes(id));
        assert.deepEqual(firsts, expected, `first deliveries of ${key} in order`);
    }
}

describe("end to end: the serialized publisher on DynamoDB Local's stream, the local mapping and fauxqs", function () {
    this.timeout(120_000);
    let restoreEnvironment: () => void;
    let fauxqs: LocalFauxqs;

    before(function () {
        restoreEnvironment = preserveEnvironment(HANDLER_ENVIRONMENT);
    });
    after(async function () {
        restoreEnvironment();
        await fauxqs?.stop();
        destroyStreamsClients();
    });

    it("delivers N mixed messages with payloads intact and per-key order, completes every record with a ttl, and dead-letters the expired ones", async function () {
        // The shipped code and the mapping settings, from the component.
        const built = await buildOutbox("e2e");
        const fn = built.one(TYPE.fn, "e2e-publisher");
        const text = await entryText(fn);
        const mapping = built.one(TYPE.mapping);
        const componentEnvironment = fn.inputs.environment.variables as Record<string, string>;

        // The local world.
        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "e2e");
        fauxqs = await startFauxqs();
        const topicArn = await fauxqs.createTopic("orders-events");
        const subscriber = await fauxqs.createQueue("orders-subscriber");
        await fauxqs.subscribe(topicArn, subscriber.queueArn, { rawMessageDelivery: true });
        const dlq = await fauxqs.createQueue("orders-dlq");
        // fauxqs names queues http://sqs.<region>.127.0.0.1:<port>/…, a host WHATWG URL rejects: the SQS client's
        // queue-URL middleware logs that TypeError once per send and keeps the configured endpoint. Harmless here;
        // on AWS the DLQ URL's host is the SQS endpoint itself.
        const dlqUrl = dlq.queueUrl;

        // The component's environment, with its names pointed at the local resources; the SDK's own variables
        // point the handler's clients at the emulators.
        await setLambdaEnvironment(componentEnvironment, { tableName, topicArn, dlqUrl }, fauxqs.endpoint);
        const handler = loadSerialized<Handler>(text);
        assert.equal(typeof handler, "function");

        // N messages: keyless in five order partitions, keyed in one account partition with two keys, some
        // expiring before the mapping runs, some with a far expiry; written in many transactions with business items.
        const writer = new OutboxWriter({ client: ddb, tableName, address: topicArn });
        const written: Written[] = [];
        const soon = Date.now() + 150;
        for (let n = 0; n < 60; n += 1) {
            const keyed = n % 3 === 0;
            const expiring = n % 10 === 7;
            const message: OutboxMessage = {
                partition: keyed ? "ACCOUNT#42" : `ORDER#${n % 5}`,
                type: keyed ? "BalanceChanged" : "OrderUpdated",
                payload: { n, note: `#${n} é <&> "quoted"`, nested: { list: [n, n + 1] } },
                headers: { tenant: n % 2 === 0 ? "acme" : "globex" },
                ...(keyed ? { orderingKey: `acct-${n % 2}` } : {}),
                ...(expiring
                    ? { expiresAt: new Date(soon) }
                    : n % 10 === 3
                      ? { expiresAt: new Date(Date.now() + 3_600_000) }
                      : {}),
            };
            const { messageIds } = await writer.write({
                items: [
                    {
                        Put: {
                            TableName: tableName,
                            Item: {
                                [ATTR.pk]: { S: message.partition },
                                [ATTR.sk]: { S: `STATE#${n}` },
                                n: { N: String(n) },
                            },
                        },
                    },
                ],
                messages: [message],
            });
            written.push({ id: messageIds[0]!, message, expired: expiring });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, soon - Date.now()) + 50));

        const esm = await outboxStreamMapping(ddb, tableName, handler, {
            ...componentMappingOptions(mapping),
            maximumRetryAttempts: 5,
        });
        const sdkWarnings: unknown[] = [];
        const warn = console.warn;
        console.warn = (...args: unknown[]) => void sdkWarnings.push(args[0]);
        // The handler's JSON lines (logs and EMF) go to stdout; keep them to check the level and the metrics.
        let jsonLines: string[];
        try {
            const drained = await capturingStdout(() => esm.drain({ timeoutMs: 60_000 }));
            if (drained.result instanceof Error) throw drained.result;
            jsonLines = drained.lines;
        } finally {
            await esm.stop();
            console.warn = warn;
        }
        for (const w of sdkWarnings)
            assert.match(String(w), /Invalid URL/, "the only SDK warnings are the fauxqs queue-URL quirk");
        assert.equal(esm.stats().recordsDiscarded, 0, "no batch ran out of retries");
        const parsed = jsonLines.map((l) => JSON.parse(l) as Record<string, unknown>);
        const logs = parsed.filter((l) => !("_aws" in l));
        assert.deepEqual(
            logs.filter((l) => l.level !== "error"),
            [],
            "AWS_LAMBDA_LOG_LEVEL=ERROR: the serialized handler writes no log line below error",
        );

        const live = written.filter((w) => !w.expired);
        const expired = written.filter((w) => w.expired);
        assert.ok(expired.length >= 5 && written.some((w) => w.message.orderingKey !== undefined));

        // Every live message reached the subscriber once, payload and attributes intact; no expired one did.
        const received = await fauxqs.receiveAll(subscriber.queueUrl, { expected: live.length, timeoutMs: 15_000 });
        const byId = new Map(received.map((m) => [m.attributes["outbox.id"], m]));
        assert.equal(byId.size, live.length, `${received.length} received for ${live.length} live messages`);
        for (const w of live) {
            const m = byId.get(w.id);
            assert.ok(m, `message ${w.id} delivered`);
            assert.deepEqual(JSON.parse(m.body), w.message.payload);
            assert.equal(m.attributes["outbox.type"], w.message.type);
            assert.equal(m.attributes.tenant, w.message.headers!.tenant);
        }
        for (const w of expired) assert.ok(!byId.has(w.id), `expired ${w.id} was never published`);
        const emf = parsed.filter((l) => "_aws" in l);
        const publishedCount = emf.reduce((sum, l) => sum + (typeof l.Published === "number" ? l.Published : 0), 0);
        assert.equal(publishedCount, live.length, "the serialized handler's EMF lines count every publish");

        // Per-key order, as the subscriber received them.
        for (const key of ["acct-0", "acct-1"]) {
            const expected = live.filter((w) => w.message.orderingKey === key).map((w) => w.id);
            const got = received.map((m) => m.attributes["outbox.id"]).filter((id) => expected.includes(id!));
            assert.deepEqual(got, expected, `order of ${key}`);
        }

        // Every record terminal with a ttl; both sparse indexes empty.
        const records = await scanRecordItems(ddb, tableName);
        assert.equal(records.length, written.length);
        const expiredIds = new Set(expired.map((w) => w.id));
        for (const item of records) {
            const r = unmarshalRecord(item);
            assert.equal(r.status, expiredIds.has(r.recordId) ? "expired" : "completed", r.recordId);
            assert.ok(Number(item[ATTR.ttl]?.N) > Date.now() / 1000, `${r.recordId} has a ttl in the future`);
        }
        const indexes = await sparseIndexCounts(ddb, tableName);
        assert.equal(indexes.claim, 0, "ClaimIndex is empty");
        assert.equal(indexes.expiry, 0, "ExpiryIndex is empty");

        // The expired ones are in the DLQ, with reason "expired" and their payload.
        const dead = await fauxqs.receiveAll(dlq.queueUrl, { expected: expired.length, timeoutMs: 10_000 });
        assert.deepEqual(dead.map((d) => d.attributes["outbox.id"]).sort(), expired.map((w) => w.id).sort());
        for (const d of dead) {
            const body = JSON.parse(d.body) as { reason: string; recordId: string; payload: unknown };
            assert.equal(body.reason, "expired");
            assert.deepEqual(body.payload, expired.find((w) => w.id === body.recordId)!.message.payload);
        }
    });
    it("the serialized sweeper publishes, within one sweep, records whose stream events were never delivered", async function () {
        const built = await buildOutbox("e2esweep");
        const fn = built.one(TYPE.fn, "e2esweep-sweeper");
        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "e2esweep");
        fauxqs ??= await startFauxqs();
        const topicArn = await fauxqs.createTopic("sweep-events");
        const subscriber = await fauxqs.createQueue("sweep-subscriber");
        await fauxqs.subscribe(topicArn, subscriber.queueArn, { rawMessageDelivery: true });
        const dlq = await fauxqs.createQueue("sweep-dlq");
        await setLambdaEnvironment(
            fn.inputs.environment.variables as Record<string, string>,
            { tableName, topicArn, dlqUrl: dlq.queueUrl },
            fauxqs.endpoint,
            {
                [ENV.sweepAfterSeconds]: "1",
            },
        );
        const sweeper = loadSerialized<(event?: unknown) => Promise<{ published: number }>>(await entryText(fn));

        // No mapping runs: these records' stream events are never delivered.
        const writer = new OutboxWriter({ client: ddb, tableName });
        const ids: string[] = [];
        for (let n = 0; n < 5; n += 1) {
            ids.push(
                ...(
                    await writer.write({
                        messages: [
                            {
                                partition: n < 3 ? "ACCOUNT#1" : `ORDER#${n}`,
                                type: "T",
                                payload: { n },
                                ...(n < 3 ? { orderingKey: "acct-1" } : {}),
                            },
                        ],
                    })
                ).messageIds,
            );
        }
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        const result = await sweeper({ source: "aws.events", "detail-type": "Scheduled Event" });
        assert.equal(result.published, 5);
        const received = await fauxqs.receiveAll(subscriber.queueUrl, { expected: 5, timeoutMs: 10_000 });
        assert.deepEqual(received.map((m) => m.attributes["outbox.id"]).sort(), [...ids].sort());
        assert.deepEqual(
            received.map((m) => m.attributes["outbox.id"]).filter((id) => ids.slice(0, 3).includes(id!)),
            ids.slice(0, 3),
            "per-key order",
        );
        const records = await scanRecords(ddb, tableName);
        assert.ok(records.every((r) => r.status === "completed"));
    });
    it("under injected SNS faults (failed entries, throttled calls) the serialized publisher loses nothing and keeps per-key order", async function () {
        const built = await buildOutbox("e2efault");
        const fn = built.one(TYPE.fn, "e2efault-publisher");
        const mapping = built.one(TYPE.mapping);
        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "e2efault");
        // A fake, on purpose: no emulator fails one PublishBatch entry on demand. Seeded, so a failure replays.
        const server = await startAwsFaultServer({
            seed: 2026,
            faults: {
                entries: [{ code: "InternalError", senderFault: false, rate: 0.15 }],
                calls: [{ kind: "Throttled", actions: ["PublishBatch"], rate: 0.1 }],
            },
        });
        try {
            const topicArn = server.createTopic("fault-events");
            const dlqUrl = server.createQueue("fault-dlq");
            await setLambdaEnvironment(
                fn.inputs.environment.variables as Record<string, string>,
                { tableName, topicArn, dlqUrl },
                server.endpoint,
                { AWS_MAX_ATTEMPTS: "1" },
            );
            const handler = loadSerialized<Handler>(await entryText(fn));
            const writer = new OutboxWriter({ client: ddb, tableName });
            const written = await writeKeyedAndKeyless(writer, 80, (n) => (n % 4 === 0 ? `acct-${n % 3}` : undefined));
            await drainThroughFaults(ddb, tableName, handler, mapping);
            assertDeliveredInKeyOrder(
                server.topicMessages(topicArn).map((m) => m.attributes["outbox.id"]!.stringValue!),
                written,
            );
            const records = await scanRecords(ddb, tableName);
            assert.ok(
                records.every((r) => r.status === "completed"),
                "every record completed",
            );
            assert.equal(server.queueMessages(dlqUrl).length, 0, "transient faults never dead-letter");
        } finally {
            await server.stop();
        }
    });

    for (const kind of ["sqs", "eventbridge"] as const) {
        it(`the serialized publisher of an outbox given ${kind === "sqs" ? "an SQS FIFO queue" : "an EventBridge bus"}, under injected faults in that kind's codes, loses nothing and keeps per-key order`, async function () {
            const server = await startAwsFaultServer({ seed: 2027 });
            try {
                const dlqUrl = server.createQueue("dest-dlq");
                const destinationArn =
                    kind === "sqs"
                        ? server.queueArn(server.createQueue("dest-events.fifo"))
                        : server.createEventBus("dest-events");
                const args =
                    kind === "sqs" ? { queueArn: destinationArn, fifo: true } : { eventBusArn: destinationArn };
                const name = `e2e${kind}`;
                const built = await buildOutbox(name, args);
                const fn = built.one(TYPE.fn, `${name}-publisher`);
                const mapping = built.one(TYPE.mapping);
                const componentEnvironment = fn.inputs.environment.variables as Record<string, string>;
                assert.equal(componentEnvironment[kind === "sqs" ? ENV.queueArn : ENV.eventBusArn], destinationArn);
                const action = kind === "sqs" ? "SendMessageBatch" : "PutEvents";
                server.setFaults({
                    entries: [
                        kind === "sqs"
                            ? { actions: [action], code: "InternalError", senderFault: false, rate: 0.15 }
                            : { actions: [action], code: "ThrottlingException", rate: 0.15 },
                    ],
                    calls: [
                        kind === "sqs"
                            ? { kind: "Error", code: "RequestThrottled", status: 400, actions: [action], rate: 0.1 }
                            : { kind: "Error", code: "InternalException", status: 500, actions: [action], rate: 0.1 },
                    ],
                });
                const ddb = await dynamoClient();
                const tableName = await createOutboxTable(ddb, name);
                await setLambdaEnvironment(
                    componentEnvironment,
                    { tableName, [kind === "sqs" ? "queueArn" : "eventBusArn"]: destinationArn, dlqUrl },
                    server.endpoint,
                    { AWS_MAX_ATTEMPTS: "1" },
                );
                const handler = loadSerialized<Handler>(await entryText(fn));
                const writer = new OutboxWriter({ client: ddb, tableName, address: destinationArn, fifo: true });
                const written = await writeKeyedAndKeyless(writer, 60, (n) =>
                    n % 3 === 0 ? `acct-${n % 2}` : undefined,
                );
                await drainThroughFaults(ddb, tableName, handler, mapping);
                assertDeliveredInKeyOrder(
                    kind === "sqs"
                        ? server.queueMessages("dest-events.fifo").map((m) => m.attributes["outbox.id"]!.stringValue!)
                        : server
                              .busEvents(destinationArn)
                              .map((m) => (JSON.parse(m.body) as { outbox: { id: string } }).outbox.id),
                    written,
                );
                assert.ok((await scanRecords(ddb, tableName)).every((r) => r.status === "completed"));
                assert.equal(server.queueMessages(dlqUrl).length, 0, "transient faults never dead-letter");
            } finally {
                await server.stop();
            }
        });
    }
});
