/**
 * The `writerPolicy` output (issue 10, across stacks): the IAM policy an application role needs for
 * `OutboxWriter.write`, derived from what the writer really calls. The SDK commands of real writes on DynamoDB
 * Local are recorded and turned into the IAM actions AWS authorizes them with; the policy must allow exactly
 * those, on the outbox table's ARN only. The component's output is checked under Pulumi's mocks.
 */
import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { WRITER_TABLE_ACTIONS, writerPolicyDocument } from "../../../components/iam";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { recordingClient, type Authorization } from "../../support/iam-recording";
import { unwrap } from "../../support/pulumi-mocks";
import { createOutboxTable } from "../../support/runtime/table";
import { buildOutbox } from "../../support/component-harness";

describe("writerPolicy: what an application role needs to write events", () => {
    it("allows exactly the IAM actions real writes need (keyless, keyed, expiring, caller ids, with the app's own item), on the outbox table only", async function () {
        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "writer-policy");
        const orders = uniqueTableName("orders");
        await ddb.send(
            new CreateTableCommand({
                TableName: orders,
                KeySchema: [{ AttributeName: "PK", KeyType: "HASH" }],
                AttributeDefinitions: [{ AttributeName: "PK", AttributeType: "S" }],
                BillingMode: "PAY_PER_REQUEST",
            }),
        );
        const sent: Authorization[] = [];
        const writer = new OutboxWriter({ client: recordingClient(ddb, sent), tableName });
        await writer.write({ messages: [{ partition: "ORDER#1", type: "OrderCreated", payload: { n: 1 } }] });
        await writer.write({
            messages: [{ partition: "ACCOUNT#1", type: "BalanceChanged", payload: { n: 2 }, orderingKey: "acct-1" }],
        });
        await writer.write({
            messages: [
                {
                    partition: "ORDER#2",
                    type: "OrderCreated",
                    payload: { n: 3 },
                    expiresAt: new Date(Date.now() + 60_000),
                },
            ],
        });
        await writer.write({
            messages: [{ id: "order-4-created", partition: "ORDER#4", type: "OrderCreated", payload: { n: 4 } }],
        });
        await writer.write({
            items: [{ Put: { TableName: orders, Item: { PK: { S: "ORDER#5" }, total: { N: "42" } } } }],
            messages: [{ partition: "ORDER#5", type: "OrderCreated", payload: { n: 5 }, orderingKey: "order-5" }],
        });

        const onOutbox = [...new Set(sent.filter((a) => a.table === tableName).map((a) => a.action))].sort();
        assert.deepEqual(
            onOutbox,
            [...WRITER_TABLE_ACTIONS].sort(),
            "the actions the writes needed on the outbox table",
        );
        assert.deepEqual(
            [...new Set(sent.map((a) => a.table))].sort(),
            [orders, tableName].sort(),
            "the app's own table is the only other one touched",
        );

        const tableArn = `arn:aws:dynamodb:eu-west-1:111111111111:table/${tableName}`;
        const policy = writerPolicyDocument({ tableArn });
        assert.deepEqual(
            policy.Statement.flatMap((s) => s.Resource),
            [tableArn],
            "the table's ARN only: no index, no wildcard",
        );
        assert.deepEqual([...policy.Statement.flatMap((s) => s.Action)].sort(), onOutbox);
    });

    it("is an output of the component: the table's ARN, and the KMS key when one is given", async function () {
        const plain = await buildOutbox("wp-plain");
        const doc = JSON.parse(await unwrap(plain.outbox.writerPolicy));
        assert.deepEqual(doc, writerPolicyDocument({ tableArn: await unwrap(plain.outbox.tableArn) }));

        const key = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        const keyed = await buildOutbox("wp-kms", { kmsKeyArn: key });
        const withKey = JSON.parse(await unwrap(keyed.outbox.writerPolicy)) as {
            Statement: { Action: string[]; Resource: string[] }[];
        };
        assert.deepEqual(
            withKey.Statement.map((s) => s.Resource),
            [[await unwrap(keyed.outbox.tableArn)], [key]],
        );
        assert.deepEqual(withKey.Statement[1]!.Action, ["kms:Decrypt", "kms:GenerateDataKey*"]);
    });
});
