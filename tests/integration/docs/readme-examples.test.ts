/**
 * The README's three examples, run as a reader would run them: the stack under the shared Pulumi mocks, the write
 * and the inbox consumer against DynamoDB Local. The only change the test makes to them is where their
 * `DynamoDBClient` points: it gives them a client class that adds the local endpoint to whatever config they pass.
 */
import * as assert from "node:assert/strict";
import { DeleteItemCommand, GetItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import * as pulumi from "@pulumi/pulumi";
import * as packageEntry from "../../../index";
import * as runtimeEntry from "../../../runtime";
import { OutboxStore } from "../../../runtime";
import { waitForRPCs } from "../../support/component-harness";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { ensureTable, localDynamoDbModule } from "../../support/docs-examples";
import { recorded, unwrap } from "../../support/pulumi-mocks";
import { runModule } from "../../support/run-module";
import { tsBlockUnder } from "../../support/markdown";

/** An SQS record as SNS delivers an outbox message with raw message delivery. */
function sqsRecord(messageId: string, outboxId: string | undefined, body: unknown): SQSRecord {
    return {
        messageId,
        receiptHandle: `handle-${messageId}`,
        body: JSON.stringify(body),
        attributes: {
            ApproximateReceiveCount: "1",
            SentTimestamp: "0",
            SenderId: "sns",
            ApproximateFirstReceiveTimestamp: "0",
        },
        messageAttributes:
            outboxId === undefined
                ? {}
                : {
                      "outbox.id": {
                          stringValue: outboxId,
                          dataType: "String",
                          stringListValues: [],
                          binaryListValues: [],
                      },
                  },
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:billing",
        awsRegion: "us-east-1",
    };
}

describe("the README's examples", function () {
    this.timeout(120_000);

    it("the stack declares the outbox with its alarms notifying the on-call topic, and exports what it says", async () => {
        const before = recorded.length;
        const exported = runModule(tsBlockUnder("README.md", "## A stack"), "README.md (A stack).ts", {
            "dynamodb-outbox": packageEntry,
        });
        await waitForRPCs();
        const mine = recorded.slice(before);
        const onCall = mine.find((r) => r.type === "aws:sns/topic:Topic" && r.name === "on-call");
        assert.ok(onCall, "the on-call topic");
        assert.ok(
            mine.some((r) => r.type === "dynamodb-outbox:index:Outbox" && r.name === "orders"),
            "the Outbox",
        );
        const table = mine.find((r) => r.type === "aws:dynamodb/table:Table" && r.name === "orders-table");
        assert.equal(table?.inputs.deletionProtectionEnabled, true);
        const alarms = mine.filter((r) => r.type === "aws:cloudwatch/metricAlarm:MetricAlarm");
        assert.equal(alarms.length, 10);
        for (const alarm of alarms) assert.deepEqual(alarm.inputs.alarmActions, [onCall.computed?.arn], alarm.name);
        assert.deepEqual(Object.keys(exported).sort(), ["tableName", "topicArn", "writerPolicy"]);
        const policy = JSON.parse(await unwrap(exported.writerPolicy as pulumi.Output<string>)) as {
            Statement: { Action: string[] }[];
        };
        assert.ok(
            policy.Statement.some((s) => s.Action.includes("dynamodb:PutItem")),
            "the writer policy lets a role put items",
        );
    });

    it("the write commits the order item and its OrderCreated record together, on DynamoDB Local", async () => {
        const outboxTable = uniqueTableName("readme-outbox");
        const client = await dynamoClient();
        await new OutboxStore({ client, tableName: outboxTable }).createTable();
        await ensureTable("orders", "PK", "S", "SK");
        await client.send(
            new DeleteItemCommand({ TableName: "orders", Key: { PK: { S: "ORDER#1001" }, SK: { S: "META" } } }),
        );
        process.env.OUTBOX_TABLE_NAME = outboxTable;
        // The block calls its async function without awaiting it (no top-level await in CommonJS): the writer it
        // builds records each write's promise, and the test waits for them.
        const writes: Promise<unknown>[] = [];
        class RecordingWriter extends runtimeEntry.OutboxWriter {
            override write(...args: Parameters<runtimeEntry.OutboxWriter["write"]>) {
                const written = super.write(...args);
                writes.push(written);
                return written;
            }
        }
        try {
            runModule(tsBlockUnder("README.md", "## Writing an event"), "README.md (Writing an event).ts", {
                "@aws-sdk/client-dynamodb": await localDynamoDbModule(),
                "dynamodb-outbox/runtime": { ...runtimeEntry, OutboxWriter: RecordingWriter },
            });
            assert.equal(writes.length, 1, "the block writes once");
            await Promise.all(writes);
        } finally {
            delete process.env.OUTBOX_TABLE_NAME;
        }
        const order = await client.send(
            new GetItemCommand({
                TableName: "orders",
                Key: { PK: { S: "ORDER#1001" }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        assert.equal(order.Item?.total?.N, "42");
        const records = await client.send(
            new QueryCommand({
                TableName: outboxTable,
                KeyConditionExpression: "PK = :pk AND begins_with(SK, :outbox)",
                ExpressionAttributeValues: { ":pk": { S: "ORDER#1001" }, ":outbox": { S: "OUTBOX#" } },
                ConsistentRead: true,
            }),
        );
        assert.equal(records.Items?.length, 1);
        assert.equal(records.Items?.[0].status?.S, "pending");
        assert.equal(records.Items?.[0].ordering_key?.S, "customer-77");
    });

    describe("the inbox consumer, on DynamoDB Local", () => {
        let handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
        before(async () => {
            await ensureTable("billing", "PK", "S", "SK");
            const consumer = runModule(
                tsBlockUnder("README.md", "## Consuming events: the inbox"),
                "README.md (Consuming events).ts",
                {
                    "@aws-sdk/client-dynamodb": await localDynamoDbModule(),
                    "dynamodb-outbox/runtime": runtimeEntry,
                },
            );
            handler = consumer.handler as typeof handler;
        });

        async function invoice(orderId: number) {
            const client = await dynamoClient();
            return (
                await client.send(
                    new GetItemCommand({
                        TableName: "billing",
                        Key: { PK: { S: `INVOICE#${orderId}` }, SK: { S: "META" } },
                        ConsistentRead: true,
                    }),
                )
            ).Item;
        }

        it("applies each outbox id once: a repeat, in the same batch or a later one, changes nothing; one marker, under INBOX#billing", async () => {
            const id = `01J${uniqueTableName("")
                .replace(/[^A-Za-z0-9]/g, "")
                .toUpperCase()}`;
            const orderId = Date.now();
            assert.deepEqual(
                await handler({
                    Records: [sqsRecord("m1", id, { orderId, total: 42 }), sqsRecord("m2", id, { orderId, total: 42 })],
                }),
                { batchItemFailures: [] },
            );
            assert.deepEqual(await handler({ Records: [sqsRecord("m3", id, { orderId, total: 99 })] }), {
                batchItemFailures: [],
            });
            assert.equal(
                (await invoice(orderId))?.total?.N,
                "42",
                "the repeat with another body did not overwrite the first",
            );
            const client = await dynamoClient();
            const markers = await client.send(
                new QueryCommand({
                    TableName: "billing",
                    KeyConditionExpression: "PK = :pk AND SK = :id",
                    ExpressionAttributeValues: { ":pk": { S: "INBOX#billing" }, ":id": { S: id } },
                    ConsistentRead: true,
                }),
            );
            assert.equal(markers.Count, 1);
        });

        it("reads SNS's envelope too, when raw delivery is off", async () => {
            const orderId = Date.now() + 1;
            const id = `01JENV${orderId}`;
            const record = sqsRecord("e1", undefined, {});
            const body = JSON.stringify({
                Type: "Notification",
                TopicArn: "arn:aws:sns:us-east-1:123456789012:orders",
                Message: JSON.stringify({ orderId, total: 7 }),
                MessageAttributes: { "outbox.id": { Type: "String", Value: id } },
            });
            assert.deepEqual(await handler({ Records: [{ ...record, body }] }), { batchItemFailures: [] });
            assert.equal((await invoice(orderId))?.total?.N, "7");
        });

        it("fails a message without the outbox.id attribute (for the queue's redrive policy), and applies the rest of the batch", async () => {
            const orderId = Date.now() + 2;
            const logged: string[] = [];
            const write = process.stdout.write;
            process.stdout.write = ((chunk: unknown) => (
                logged.push(String(chunk)),
                true
            )) as typeof process.stdout.write;
            let response: SQSBatchResponse;
            try {
                response = await handler({
                    Records: [
                        sqsRecord("no-id", undefined, { orderId: 1, total: 1 }),
                        sqsRecord("ok", `01JOK${orderId}`, { orderId, total: 5 }),
                    ],
                });
            } finally {
                process.stdout.write = write;
            }
            assert.deepEqual(response.batchItemFailures, [{ itemIdentifier: "no-id" }]);
            assert.equal((await invoice(orderId))?.total?.N, "5");
            assert.match(
                logged.join(""),
                /"level":"error","message":"inbox: poison message failed[^"]*","function":"inbox billing".*"messageId":"no-id"/,
            );
        });
    });
});
