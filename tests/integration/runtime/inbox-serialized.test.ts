/**
 * The inbox handler as Pulumi's `CallbackFunction` would ship it from this repository's own code: serialized by
 * value (`pulumi.runtime.serializeFunction` with a factory, the classes rebuilt from their text), loaded as
 * Lambda loads `__index.js` (sloppy mode), and run on DynamoDB Local. Code that serializes but then breaks in
 * Lambda (class field initializers, `#private`, a captured module-level Map or Set: test-infra §7) fails here.
 */
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { createInboxHandler, type InboxHandler } from "../../../runtime/inbox/handler";
import { Inbox } from "../../../runtime/inbox/inbox";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { loadSerialized } from "../../support/serialized";
import { createConsumerTable } from "../../support/runtime/table";

/**
 * A fresh consumer table, and what a serialized factory captures to reach the same DynamoDB Local from the code it
 * is turned into: the endpoint, region and credentials.
 */
async function serializedWorld(prefix: string) {
    const ddb = await dynamoClient();
    return {
        ddb,
        table: await createConsumerTable(ddb, prefix),
        endpoint: await dynamoEndpoint(),
        region: LOCAL_REGION,
        credentials: { ...LOCAL_CREDENTIALS },
    };
}

describe("the inbox handler serialized by value, as CallbackFunction ships it", function () {
    this.timeout(120_000);

    it("loads and applies a message once, handing it its trace context, a duplicate changing nothing, a FIFO group held after a failure", async () => {
        const { ddb, table, endpoint, region, credentials } = await serializedWorld("inbox-serialized");
        const factory = () => {
            const inbox = new Inbox({
                client: new DynamoDBClient({ endpoint, region, credentials }),
                consumer: "serialized",
                tableName: table,
            });
            return createInboxHandler({
                inbox,
                consume: (message) => {
                    if ((message.payload as { fail?: boolean }).fail === true) throw new Error("refused");
                    // The trace context it was handed goes into the effect, so the test can read what the serialized code parsed.
                    return [
                        {
                            Update: {
                                TableName: table,
                                Key: { PK: { S: `EFFECT#${message.outboxId}` }, SK: { S: "META" } },
                                UpdateExpression: "ADD applied :one SET traceparent = :tp",
                                ExpressionAttributeValues: {
                                    ":one": { N: "1" },
                                    ":tp": { S: message.traceparent ?? "none" },
                                },
                            },
                        },
                    ];
                },
                logger: {
                    debug: () => undefined,
                    info: () => undefined,
                    warn: () => undefined,
                    error: () => undefined,
                },
            });
        };
        const serialized = await pulumi.runtime.serializeFunction(factory, { isFactoryFunction: true });
        assert.match(
            serialized.text,
            /partitionPrefix: "INBOX#"/,
            "the inbox's code travels by value, not as a require of this repository",
        );
        const handler = loadSerialized<InboxHandler>(serialized.text);
        assert.equal(typeof handler, "function");

        const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        const record = (messageId: string, outboxId: string, payload: unknown, groupId?: string) => ({
            messageId,
            body: JSON.stringify(payload),
            attributes: { ApproximateReceiveCount: "1", ...(groupId !== undefined ? { MessageGroupId: groupId } : {}) },
            messageAttributes: {
                "outbox.id": { stringValue: outboxId, dataType: "String" },
                traceparent: { stringValue: traceparent, dataType: "String" },
            },
            eventSource: "aws:sqs",
            eventSourceARN: `arn:aws:sqs:eu-west-1:111111111111:serialized${groupId !== undefined ? ".fifo" : ""}`,
        });
        assert.deepEqual(await handler({ Records: [record("m1", "s-1", {}), record("m2", "s-1", {})] }), {
            batchItemFailures: [],
        });
        const effect = await ddb.send(
            new GetItemCommand({
                TableName: table,
                Key: { PK: { S: "EFFECT#s-1" }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        assert.equal(effect.Item?.applied?.N, "1");
        assert.equal(
            effect.Item?.traceparent?.S,
            traceparent,
            "the serialized delivery format read the trace context (runtime/observability/trace-context.ts travels by value too)",
        );
        const fifo = await handler({
            Records: [
                record("f1", "s-f1", { fail: true }, "g"),
                record("f2", "s-f2", {}, "g"),
                record("h1", "s-h1", {}, "h"),
            ],
        });
        assert.deepEqual(
            fifo.batchItemFailures.map((f) => f.itemIdentifier),
            ["f1", "f2"],
        );
    });

    it("typed: an asynchronous Standard Schema validator fails a payload it refuses as poison, and the consumer's documentItems are applied with the marker", async () => {
        const { ddb, table, endpoint, region, credentials } = await serializedWorld("inbox-serialized-typed");
        const factory = () =>
            createInboxHandler<{ OrderPlaced: { orderId: string } }>({
                inbox: new Inbox({
                    client: new DynamoDBClient({ endpoint, region, credentials }),
                    consumer: "serialized-typed",
                    tableName: table,
                }),
                validators: {
                    OrderPlaced: {
                        "~standard": {
                            version: 1,
                            vendor: "hand-made",
                            validate: async (value: unknown) =>
                                typeof (value as { orderId?: unknown } | null)?.orderId === "string"
                                    ? { value: value as { orderId: string } }
                                    : { issues: [{ message: "orderId must be a string", path: ["orderId"] }] },
                        },
                    },
                },
                consume: (message) => ({
                    documentItems: [
                        { Put: { TableName: table, Item: { PK: `ORDER#${message.payload.orderId}`, SK: "META" } } },
                    ],
                }),
                logger: {
                    debug: () => undefined,
                    info: () => undefined,
                    warn: () => undefined,
                    error: () => undefined,
                },
            });
        const handler = loadSerialized<InboxHandler>(
            (await pulumi.runtime.serializeFunction(factory, { isFactoryFunction: true })).text,
        );
        const record = (messageId: string, payload: unknown) => ({
            messageId,
            body: JSON.stringify(payload),
            attributes: { ApproximateReceiveCount: "1" },
            messageAttributes: {
                "outbox.id": { stringValue: `id-${messageId}`, dataType: "String" },
                "outbox.type": { stringValue: "OrderPlaced", dataType: "String" },
            },
            eventSource: "aws:sqs",
            eventSourceARN: "arn:aws:sqs:eu-west-1:111111111111:serialized-typed",
        });
        assert.deepEqual(
            await handler({ Records: [record("ok", { orderId: "o-1" }), record("bad", { orderId: 1 })] }),
            { batchItemFailures: [{ itemIdentifier: "bad" }] },
        );
        const written = await ddb.send(
            new GetItemCommand({ TableName: table, Key: { PK: { S: "ORDER#o-1" }, SK: { S: "META" } } }),
        );
        assert.ok(written.Item !== undefined, "the native item was marshalled and applied");
    });
});
