/**
 * `consumerPolicy(queueArn, inboxTableArn)`: the IAM policy an inbox consumer's function role needs. The DynamoDB
 * side is derived from what the handler really calls: its commands on DynamoDB Local are recorded and turned into
 * the IAM actions AWS authorizes them with (a new message, a duplicate, a failed consumer write), and the policy
 * must grant exactly those on the inbox table and nothing on the consumer's own table. The SQS side is what
 * Lambda's event source mapping calls with the role (AWS documents it; no emulator runs Lambda's poller): the
 * handler itself has no SQS client. The Output is checked under Pulumi's mocks, with a queue and a table declared.
 */
import * as assert from "node:assert/strict";
import * as aws from "@pulumi/aws";
import {
    CONSUMER_INBOX_TABLE_ACTIONS,
    CONSUMER_QUEUE_ACTIONS,
    consumerPolicy,
    consumerPolicyDocument,
} from "../../../components/consumer-policy";
import { readerPolicyDocument } from "../../../components/payload-bucket";
import * as packageEntry from "../../../index";
import { createInboxHandler, Inbox } from "../../../runtime";
import { isOutboxError } from "../../../runtime/errors";
import { dynamoClient } from "../../support/dynamodb";
import { recordingClient, type Authorization } from "../../support/iam-recording";
import { unwrap } from "../../support/pulumi-mocks";
import { createConsumerTable } from "../../support/runtime/table";
import { waitForRPCs } from "../../support/component-harness";

const QUEUE_ARN = "arn:aws:sqs:eu-west-1:111111111111:billing";
const TABLE_ARN = "arn:aws:dynamodb:eu-west-1:111111111111:table/billing-inbox";

function record(messageId: string, outboxId: string, source?: string) {
    return {
        messageId,
        body: JSON.stringify({ orderId: messageId }),
        messageAttributes: {
            "outbox.id": { stringValue: outboxId, dataType: "String" },
            ...(source === undefined ? {} : { "outbox.source": { stringValue: source, dataType: "String" } }),
        },
        eventSource: "aws:sqs",
        eventSourceARN: QUEUE_ARN,
    };
}

describe("consumerPolicy: what an inbox consumer's role needs", () => {
    it("grants exactly the DynamoDB actions the handler's calls need on the inbox table (applied, duplicate, failed write, a message with its source), and nothing on the consumer's own table", async function () {
        const ddb = await dynamoClient();
        const inboxTable = await createConsumerTable(ddb, "policy-inbox");
        const ownTable = await createConsumerTable(ddb, "policy-own");
        const sent: Authorization[] = [];
        const handler = createInboxHandler({
            inbox: new Inbox({ client: recordingClient(ddb, sent), consumer: "billing", tableName: inboxTable }),
            consume: (m) => [
                { Put: { TableName: ownTable, Item: { PK: { S: `INVOICE#${m.messageId}` }, SK: { S: "META" } } } },
                ...(m.messageId === "m3"
                    ? [
                          {
                              ConditionCheck: {
                                  TableName: ownTable,
                                  Key: { PK: { S: "MISSING" }, SK: { S: "X" } },
                                  ConditionExpression: "attribute_exists(PK)",
                              },
                          },
                      ]
                    : []),
            ],
            logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
        });
        const response = await handler({
            Records: [record("m1", "p-1"), record("m2", "p-1"), record("m3", "p-3"), record("m4", "p-4", "orders")],
        });
        assert.deepEqual(
            response.batchItemFailures,
            [{ itemIdentifier: "m3" }],
            "m2 is a duplicate, m3's own condition failed, m4 (with its source) is checked against the older key",
        );

        const onInbox = [...new Set(sent.filter((a) => a.table === inboxTable).map((a) => a.action))].sort();
        assert.deepEqual(onInbox, [...CONSUMER_INBOX_TABLE_ACTIONS].sort());
        assert.deepEqual(
            [...new Set(sent.map((a) => a.table))].sort(),
            [inboxTable, ownTable].sort(),
            "the consumer's own table is the only other one: its grants are the user's",
        );

        const doc = consumerPolicyDocument({ queueArn: QUEUE_ARN, inboxTableArn: TABLE_ARN });
        assert.deepEqual(doc, {
            Version: "2012-10-17",
            Statement: [
                {
                    Sid: "ReceiveFromQueue",
                    Effect: "Allow",
                    Action: ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
                    Resource: [QUEUE_ARN],
                },
                { Sid: "WriteInboxMarkers", Effect: "Allow", Action: onInbox, Resource: [TABLE_ARN] },
            ],
        });
        assert.deepEqual(
            [...CONSUMER_QUEUE_ACTIONS],
            ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
            "what AWSLambdaSQSQueueExecutionRole grants on queues, and no ChangeMessageVisibility",
        );
        assert.ok(
            doc.Statement.every((s) => s.Resource.every((r) => !r.includes("*"))),
            "no wildcard",
        );
    });

    it("is an Output of the queue's and the table's ARNs, from the package entry, under the mocks", async () => {
        assert.equal(packageEntry.consumerPolicy, consumerPolicy);
        const queue = new aws.sqs.Queue("billing-events");
        const table = new aws.dynamodb.Table("billing-inbox", {
            attributes: [
                { name: "PK", type: "S" },
                { name: "SK", type: "S" },
            ],
            hashKey: "PK",
            rangeKey: "SK",
            billingMode: "PAY_PER_REQUEST",
        });
        const policy = consumerPolicy(queue.arn, table.arn);
        await waitForRPCs();
        const doc = JSON.parse(await unwrap(policy)) as { Statement: { Action: string[]; Resource: string[] }[] };
        assert.deepEqual(
            doc,
            consumerPolicyDocument({ queueArn: await unwrap(queue.arn), inboxTableArn: await unwrap(table.arn) }),
        );
        assert.deepEqual(
            doc.Statement.map((s) => s.Resource),
            [
                ["arn:aws:sqs:eu-west-1:111111111111:billing-events-abc"],
                ["arn:aws:dynamodb:eu-west-1:111111111111:table/billing-inbox-abc"],
            ],
        );
        assert.equal(
            JSON.parse(await unwrap(consumerPolicy(`${QUEUE_ARN}.fifo`, TABLE_ARN))).Statement[0].Resource[0],
            `${QUEUE_ARN}.fifo`,
            "a FIFO queue",
        );
    });

    it("with a payload bucket (and its key), adds exactly readerPolicyDocument's statements, and nothing without one", async () => {
        const bucketArn = "arn:aws:s3:::orders-payloads";
        const keyArn = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        const base = consumerPolicyDocument({ queueArn: QUEUE_ARN, inboxTableArn: TABLE_ARN }).Statement;
        for (const key of [undefined, keyArn]) {
            const doc = consumerPolicyDocument({
                queueArn: QUEUE_ARN,
                inboxTableArn: TABLE_ARN,
                payloadBucketArn: bucketArn,
                payloadKmsKeyArn: key,
            });
            assert.deepEqual(doc.Statement, [...base, ...readerPolicyDocument(bucketArn, key).Statement]);
            assert.deepEqual(
                JSON.parse(await unwrap(consumerPolicy(QUEUE_ARN, TABLE_ARN, bucketArn, key))),
                doc,
                "the Output is the same document",
            );
        }
        assert.deepEqual(
            consumerPolicyDocument({
                queueArn: QUEUE_ARN,
                inboxTableArn: TABLE_ARN,
                payloadBucketArn: bucketArn,
                payloadKmsKeyArn: keyArn,
            })
                .Statement.slice(-2)
                .map((s) => [s.Action, s.Resource]),
            [
                [["s3:GetObject"], [`${bucketArn}/outbox-payloads/*`]],
                [["kms:Decrypt"], [keyArn]],
            ],
        );
        assert.ok(
            base.every((s) => s.Action.every((a) => a.startsWith("sqs:") || a.startsWith("dynamodb:"))),
            "no S3 nor KMS grant without a payload bucket",
        );
    });

    describe("refuses what is not a queue ARN or a table ARN (INVALID_CONFIG, naming the value and the fix)", () => {
        const cases: [string, string, string, RegExp][] = [
            [
                "a queue URL",
                "https://sqs.eu-west-1.amazonaws.com/111111111111/billing",
                TABLE_ARN,
                /queueArn is "https:\/\/sqs[^"]+"; expected an SQS queue ARN, arn:aws:sqs:<region>:<account>:<queue name>; pass the queue's arn \(not its url\)/,
            ],
            ["a topic ARN", "arn:aws:sns:eu-west-1:111111111111:billing", TABLE_ARN, /queueArn is "arn:aws:sns:/],
            ["an empty queue ARN", "", TABLE_ARN, /queueArn is ""/],
            [
                "a table name",
                QUEUE_ARN,
                "billing-inbox",
                /inboxTableArn is "billing-inbox"; expected a DynamoDB table ARN, arn:aws:dynamodb:<region>:<account>:table\/<table name>; pass the table's arn/,
            ],
            ["an index ARN", QUEUE_ARN, `${TABLE_ARN}/index/ClaimIndex`, /inboxTableArn is ".*\/index\/ClaimIndex"/],
            [
                "a stream ARN",
                QUEUE_ARN,
                `${TABLE_ARN}/stream/2026-01-01T00:00:00.000`,
                /inboxTableArn is ".*\/stream\//,
            ],
        ];
        for (const [name, queueArn, inboxTableArn, message] of cases) {
            it(name, async () => {
                assert.throws(
                    () => consumerPolicyDocument({ queueArn, inboxTableArn }),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message),
                );
                // unwrap waits for a value; an Output that failed has none, so read its (internal) promise.
                const output = consumerPolicy(queueArn, inboxTableArn) as unknown as { promise(): Promise<string> };
                await assert.rejects(
                    output.promise(),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message),
                );
            });
        }
    });
});
