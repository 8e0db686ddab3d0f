/**
 * The schema version's edges, generatively (fast-check): whatever version (and number of headers beside it) the
 * writer accepts, each destination delivers and the inbox reads back equal; whatever it refuses, it refuses with
 * `INVALID_PAYLOAD` naming the field. Each run writes with `OutboxWriter` on DynamoDB Local, reads the stored record
 * back, publishes it with the real destinations (an SNS topic on fauxqs with a raw and an enveloped subscription,
 * an SQS queue on fauxqs, and an EventBridge bus on the project's fault server routed to a queue, as a rule's SQS
 * target delivers: the stand-in, because EventBridge has no emulator), receives every copy with ReceiveMessage and
 * reads it with the inbox's `parseDelivery`.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SQSClient } from "@aws-sdk/client-sqs";
import fc from "fast-check";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startAwsFaultServer, type AwsFaultServer } from "../../../dev/emulators/aws-fault-server";
import type { LocalFauxqs } from "../../../dev/emulators/fauxqs";
import type { Destination } from "../../../runtime/destination/destination";
import { eventBridgeDestination } from "../../../runtime/destination/eventbridge";
import { snsDestination } from "../../../runtime/destination/sns";
import { sqsDestination } from "../../../runtime/destination/sqs";
import { isOutboxError } from "../../../runtime/errors";
import { parseDelivery } from "../../../runtime/inbox/delivery-formats";
import { outboundMessage } from "../../../runtime/record/message";
import { schemaVersionProblem } from "../../../runtime/record/typed-events";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { startConsumerWorld, stopConsumerWorld } from "../../support/inbox/world";
import { untilDepth } from "../../support/runtime/relay";
import { createOutboxTable, scanRecords } from "../../support/runtime/table";
import { receiveEvent, settle, type Queue } from "../../support/sqs-lambda";

const SOURCE = "orders-outbox";

/** Versions the writer takes, and strings near and far from them. */
const VERSION_CHARS = "abcXYZ0189._-+";
const candidateVersion = fc.oneof(
    fc.string({ unit: fc.constantFrom(...VERSION_CHARS), minLength: 1, maxLength: 64 }),
    fc.string({ unit: fc.constantFrom(...VERSION_CHARS), minLength: 60, maxLength: 70 }),
    fc.string({ unit: "grapheme", maxLength: 12 }),
    fc.string({ unit: "binary", maxLength: 12 }),
    fc.constantFrom("", " ", "1 0", "v#1", "1/2", "é", "\u0000"),
);

describe("schema version: what the writer accepts, every destination delivers and the inbox reads back equal (fast-check)", function () {
    this.timeout(300_000);
    let ddb: DynamoDBClient, fauxqs: LocalFauxqs, server: AwsFaultServer;
    let table: string, writer: OutboxWriter;
    const routes: { name: string; destination: Destination; queue: Queue; sqs: SQSClient; async: boolean }[] = [];

    before(async () => {
        ({ ddb, fauxqs } = await startConsumerWorld("schema-version-consumer"));
        server = await startAwsFaultServer();
        table = await createOutboxTable(ddb, "schema-version");
        writer = new OutboxWriter({ client: ddb, tableName: table, traceContext: "none" });
        const topicArn = await fauxqs.createTopic("schema-version");
        const raw = await fauxqs.createQueue("schema-version-raw");
        const enveloped = await fauxqs.createQueue("schema-version-enveloped");
        await fauxqs.subscribe(topicArn, raw.queueArn, { rawMessageDelivery: true });
        await fauxqs.subscribe(topicArn, enveloped.queueArn, { rawMessageDelivery: false });
        const sns = snsDestination(fauxqs.sns, topicArn, false);
        const own = await fauxqs.createQueue("schema-version-queue");
        const busArn = server.createEventBus("schema-version");
        const target = server.createQueue("schema-version-rule-target");
        server.routeBusToQueue(busArn, target);
        const local = { endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
        routes.push(
            { name: "sns raw", destination: sns, queue: raw, sqs: fauxqs.sqs, async: true },
            { name: "sns enveloped", destination: sns, queue: enveloped, sqs: fauxqs.sqs, async: true },
            {
                name: "sqs",
                destination: sqsDestination(fauxqs.sqs, own.queueArn, false),
                queue: own,
                sqs: fauxqs.sqs,
                async: false,
            },
            {
                name: "eventbridge",
                destination: eventBridgeDestination(new EventBridgeClient(local), busArn, "dynamodb-outbox"),
                queue: { queueUrl: target, queueArn: server.queueArn(target) },
                sqs: new SQSClient(local),
                async: false,
            },
        );
    });
    after(async () => {
        await server?.stop();
        await stopConsumerWorld(fauxqs);
    });

    it("accepts exactly the versions of 1-64 letters, digits, '.', '_', '-' and '+' that fit the attribute budget; each is delivered by SNS (raw and enveloped), SQS and EventBridge and read back equal", async () => {
        let delivered = 0;
        await fc.assert(
            fc.asyncProperty(candidateVersion, fc.integer({ min: 0, max: 7 }), async (schemaVersion, headerCount) => {
                const headers = Object.fromEntries(Array.from({ length: headerCount }, (_, i) => [`h${i}`, `v${i}`]));
                const attempt = writer.write({
                    messages: [{ partition: "P", type: "OrderPlaced", payload: { n: 1 }, headers, schemaVersion }],
                });
                const versionOk = schemaVersionProblem(schemaVersion) === undefined;
                // outbox.id, outbox.type and outbox.source, the version and the headers: SNS carries 10 attributes.
                const fits = 3 + 1 + headerCount <= 10;
                if (!versionOk || !fits) {
                    await assert.rejects(
                        attempt,
                        (err: Error) =>
                            isOutboxError(err, "INVALID_PAYLOAD") &&
                            (versionOk
                                ? /outbox\.schema-version/.test(err.message)
                                : /messages\[0\]\.schemaVersion is .*; a schema version/.test(err.message)),
                    );
                    return;
                }
                const [id] = (await attempt).messageIds;
                const record = (await scanRecords(ddb, table)).find((r) => r.recordId === id);
                assert.ok(record !== undefined, "the record is stored");
                const message = outboundMessage(record, SOURCE);
                for (const destination of new Set(routes.map((r) => r.destination)))
                    assert.deepEqual(
                        (await destination.sendCall([message])).map((r) => r.ok),
                        [true],
                        `${destination.kind} accepted it`,
                    );
                for (const route of routes) {
                    if (route.async) await untilDepth(fauxqs, route.queue, 1);
                    const event = await receiveEvent(route.sqs, route.queue);
                    assert.equal(event.Records.length, 1, `${route.name}: one message`);
                    const read = parseDelivery(event.Records[0]!).message;
                    assert.deepEqual(
                        [read.outboxId, read.source, read.schemaVersion, read.headers],
                        [id, SOURCE, schemaVersion, headers],
                        `${route.name} reads back the version ${JSON.stringify(schemaVersion)}`,
                    );
                    await settle(route.sqs, route.queue, event, { batchItemFailures: [] });
                }
                delivered += 1;
            }),
            { numRuns: 40 },
        );
        assert.ok(delivered > 0, "some runs went all the way through");
    });
});
