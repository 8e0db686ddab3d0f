/**
 * docs/runtime.md's Powertools recipe ("The alternative: Powertools for AWS Lambda"), run as a reader would run it:
 * the real `@aws-lambda-powertools/idempotency` with its `DynamoDBPersistenceLayer` on DynamoDB Local, on what the
 * real publisher put on a fauxqs SNS topic from an outbox table's real stream, through a raw-delivery subscription
 * and one with SNS's envelope. Then the three cases the page says Powertools applies an event again in, on the same
 * library: a crash between the effect and the COMPLETED record (the failed write that stands for the crash is
 * injected into the persistence layer's client: no emulator fails one write on demand), the expiry window, and a
 * key path that selects nothing.
 */
import * as assert from "node:assert/strict";
import { GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import * as idempotency from "@aws-lambda-powertools/idempotency";
import { IdempotencyConfig, makeIdempotent } from "@aws-lambda-powertools/idempotency";
import * as idempotencyDynamoDb from "@aws-lambda-powertools/idempotency/dynamodb";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import type { Context, SQSBatchResponse, SQSRecord } from "aws-lambda";
import { localDynamoDbClient } from "../../../dev/emulators/dynamodb-local";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import * as runtimeEntry from "../../../runtime";
import type { LambdaSqsRecord } from "../../../runtime";
import { ensureTable, localDynamoDbModule } from "../../support/docs-examples";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { tsBlockUnder } from "../../support/markdown";
import { relayedOutbox, untilDepth } from "../../support/runtime/relay";
import { runModule } from "../../support/run-module";
import { receiveEvent, type Queue } from "../../support/sqs-lambda";
import { destroyStreamsClients } from "../../support/stream-table";

const PAGE = "docs/runtime.md";
const HEADING = "### The alternative: Powertools for AWS Lambda";

type Handler = (event: { Records: readonly unknown[] }, context: Context) => Promise<SQSBatchResponse>;

/** What Lambda passes: the recipe registers it, for the time an INPROGRESS record may last. */
const CONTEXT = { getRemainingTimeInMillis: () => 60_000 } as Context;

describe("docs/runtime.md's Powertools idempotency recipe, run as written (the real @aws-lambda-powertools/idempotency on DynamoDB Local)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient;
    let fauxqs: LocalFauxqs;
    let handler: Handler;
    let endpoint: string;
    const run = Date.now();
    const orders = [`o-${run}-1`, `o-${run}-2`];
    const queues: Record<"raw" | "enveloped", Queue> = {} as never;
    const records: Record<"raw" | "enveloped", readonly LambdaSqsRecord[]> = { raw: [], enveloped: [] };

    before(async () => {
        ddb = await dynamoClient();
        endpoint = await dynamoEndpoint();
        await ensureTable("idempotency", "id", "S");
        await ensureTable("billing", "PK", "S", "SK");
        const recipe = runModule(tsBlockUnder(PAGE, HEADING), `${PAGE} (Powertools).ts`, {
            "@aws-sdk/client-dynamodb": await localDynamoDbModule(),
            "@aws-lambda-powertools/idempotency": idempotency,
            "@aws-lambda-powertools/idempotency/dynamodb": idempotencyDynamoDb,
            "dynamodb-outbox/runtime": runtimeEntry,
        });
        handler = recipe.handler as Handler;

        fauxqs = await startFauxqs();
        const topicArn = await fauxqs.createTopic(`powertools-${run}`);
        for (const [name, raw] of [
            ["raw", true],
            ["enveloped", false],
        ] as const) {
            queues[name] = await fauxqs.createQueue(`powertools-${name}-${run}`);
            await fauxqs.subscribe(topicArn, queues[name].queueArn, { rawMessageDelivery: raw });
        }
        const outbox = await relayedOutbox(ddb, fauxqs, topicArn, false, "powertools");
        try {
            await outbox.writer.write({
                messages: orders.map((orderId) => ({
                    partition: `ORDER#${orderId}`,
                    type: "OrderPlaced",
                    payload: { orderId, total: 42 },
                })),
            });
            await outbox.mapping.drain({ timeoutMs: 30_000 });
        } finally {
            await outbox.mapping.stop();
        }
        for (const name of ["raw", "enveloped"] as const) {
            await untilDepth(fauxqs, queues[name], orders.length);
            records[name] = (await receiveEvent(fauxqs.sqs, queues[name])).Records;
            assert.equal(records[name].length, orders.length, `${name}: both orders delivered`);
        }
    });
    after(async () => {
        await fauxqs?.stop();
        destroyStreamsClients();
    });

    async function charged(orderId: string): Promise<number | undefined> {
        const item = await ddb.send(
            new GetItemCommand({
                TableName: "billing",
                Key: { PK: { S: `ORDER#${orderId}` }, SK: { S: "CHARGE" } },
                ConsistentRead: true,
            }),
        );
        return item.Item?.charged?.N !== undefined ? Number(item.Item.charged.N) : undefined;
    }

    it("charges each order once: raw delivery and SNS's envelope give the same key, and each copy handled twice changes nothing", async () => {
        for (const name of ["raw", "enveloped"] as const) {
            for (let time = 0; time < 2; time += 1)
                assert.deepEqual(await handler({ Records: records[name] }, CONTEXT), { batchItemFailures: [] });
        }
        for (const orderId of orders) assert.equal(await charged(orderId), 42, `${orderId} charged once`);
    });

    it("fails a record whose outbox id the path does not find, and charges nothing (throwOnNoIdempotencyKey)", async () => {
        const orderId = `o-${run}-keyless`;
        const raw = records.raw[0]!;
        const keyless = {
            ...raw,
            messageId: "keyless",
            body: JSON.stringify({ orderId, total: 42 }),
            messageAttributes: {},
        };
        assert.deepEqual(await handler({ Records: [keyless] }, CONTEXT), {
            batchItemFailures: [{ itemIdentifier: "keyless" }],
        });
        assert.equal(await charged(orderId), undefined);
    });

    describe("the three cases in which Powertools applies an event again (the same library, a counting effect)", () => {
        const record = (id: string) =>
            ({
                messageId: id,
                body: "{}",
                messageAttributes: { "outbox.id": { stringValue: id, dataType: "String" } },
            }) as unknown as SQSRecord;

        function idempotent(options: { expiresAfterSeconds: number; failFirstCompletion?: boolean }) {
            const applied: string[] = [];
            let fail = options.failFirstCompletion ?? false;
            // Stands for a crash after the effect: the write of the COMPLETED record fails once (an injected fault).
            const client = localDynamoDbClient(endpoint);
            client.middlewareStack.add(
                (next, context) => async (args) => {
                    if (fail && context.commandName === "UpdateItemCommand") {
                        fail = false;
                        throw Object.assign(new Error("the function died before it was written"), {
                            name: "InjectedCrash",
                        });
                    }
                    return next(args);
                },
                { step: "initialize", name: "failFirstCompletion" },
            );
            const config = new IdempotencyConfig({
                eventKeyJmesPath: 'messageAttributes."outbox.id".stringValue',
                throwOnNoIdempotencyKey: true,
                expiresAfterSeconds: options.expiresAfterSeconds,
            });
            const handle = makeIdempotent(async (r: SQSRecord) => void applied.push(r.messageId), {
                persistenceStore: new DynamoDBPersistenceLayer({ tableName: "idempotency", awsSdkV3Client: client }),
                config,
            });
            config.registerLambdaContext(CONTEXT);
            return { applied, handle, config };
        }

        it("a crash between the effect and the COMPLETED record: the redelivery, once the INPROGRESS item lapsed, applies it again", async () => {
            const { applied, handle, config } = idempotent({ expiresAfterSeconds: 3600, failFirstCompletion: true });
            config.registerLambdaContext({ getRemainingTimeInMillis: () => 500 } as Context);
            const id = `crash-${run}`;
            await assert.rejects(handle(record(id)));
            assert.deepEqual(applied, [id], "the effect ran");
            await new Promise((resolve) => setTimeout(resolve, 1_100));
            await handle(record(id));
            assert.deepEqual(applied, [id, id], "and ran again");
        });

        it("after the expiry window, the same id applies again", async () => {
            const { applied, handle } = idempotent({ expiresAfterSeconds: 1 });
            const id = `expiry-${run}`;
            await handle(record(id));
            await handle(record(id));
            assert.deepEqual(applied, [id], "within the window: once");
            await new Promise((resolve) => setTimeout(resolve, 2_100));
            await handle(record(id));
            assert.deepEqual(applied, [id, id], "after it: again");
        });

        it("a key path that selects nothing runs the function without idempotency, unless throwOnNoIdempotencyKey", async () => {
            const persistenceStore = new DynamoDBPersistenceLayer({ tableName: "idempotency", awsSdkV3Client: ddb });
            const applied: number[] = [];
            const handle = makeIdempotent(async (_record: SQSRecord) => void applied.push(1), {
                persistenceStore,
                // The attribute's path alone, on SNS's envelope: the id is inside the body.
                config: new IdempotencyConfig({ eventKeyJmesPath: 'messageAttributes."outbox.id".stringValue' }),
            });
            const enveloped = records.enveloped[0]! as unknown as SQSRecord;
            const warn = console.warn;
            console.warn = () => undefined;
            try {
                await handle(enveloped);
                await handle(enveloped);
            } finally {
                console.warn = warn;
            }
            assert.equal(applied.length, 2, "applied twice: no key, no idempotency");
        });
    });
});
