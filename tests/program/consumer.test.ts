import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";
import { STACK_REFERENCE_OUTPUTS, recordedNamed, recordedOfType, unwrap } from "../support/pulumi-mocks";
import { waitForRPCs } from "../component/harness";

/**
 * A second stack that reads the outbox stack's outputs: the README's StackReference example, verbatim.
 * It subscribes its own SQS queue to the outbox topic and hands the table name to its own code.
 */
function consumerStack() {
    const outbox = new pulumi.StackReference("acme/outbox/prod");
    const topicArn = outbox.requireOutput("topicArn").apply(String);
    const tableName = outbox.requireOutput("tableName").apply(String);

    const queue = new aws.sqs.Queue("billing-order-events", { sqsManagedSseEnabled: true });
    new aws.sqs.QueuePolicy("billing-order-events", {
        queueUrl: queue.url,
        policy: pulumi.all([queue.arn, topicArn]).apply(([queueArn, sourceArn]) =>
            JSON.stringify({
                Version: "2012-10-17",
                Statement: [
                    {
                        Effect: "Allow",
                        Principal: { Service: "sns.amazonaws.com" },
                        Action: "sqs:SendMessage",
                        Resource: queueArn,
                        Condition: { ArnEquals: { "aws:SourceArn": sourceArn } },
                    },
                ],
            }),
        ),
    });
    new aws.sns.TopicSubscription("billing-order-events", { topic: topicArn, protocol: "sqs", endpoint: queue.arn, rawMessageDelivery: true });
    return { ordersTableName: tableName, ordersTopicArn: topicArn };
}

describe("a consumer stack reading the outbox outputs through a StackReference", () => {
    it("resolves the outputs the outbox program exports and wires them into its own resources", async () => {
        const exported = consumerStack();
        await waitForRPCs();
        assert.equal(await unwrap(exported.ordersTableName), STACK_REFERENCE_OUTPUTS.tableName);
        assert.equal(await unwrap(exported.ordersTopicArn), STACK_REFERENCE_OUTPUTS.topicArn);

        assert.deepEqual(recordedOfType("pulumi:pulumi:StackReference").map((r) => r.inputs.name), ["acme/outbox/prod"]);
        const subscription = recordedNamed("billing-order-events").find((r) => r.type === "aws:sns/topicSubscription:TopicSubscription");
        assert.equal(subscription?.inputs.topic, STACK_REFERENCE_OUTPUTS.topicArn);
        const policy = recordedNamed("billing-order-events").find((r) => r.type === "aws:sqs/queuePolicy:QueuePolicy");
        assert.equal(JSON.parse(policy?.inputs.policy).Statement[0].Condition.ArnEquals["aws:SourceArn"], STACK_REFERENCE_OUTPUTS.topicArn);
    });

    it("mocks every output the outbox program exports (the sweeper's name aside)", () => {
        // Read from the source: importing the program here would declare its outbox before its own test sets the config.
        const source = fs.readFileSync(path.join(__dirname, "..", "..", "program", "index.ts"), "utf8");
        const exported = [...source.matchAll(/^export const (\w+)/gm)].map((m) => m[1]).filter((k) => k !== "sweeperFunctionName");
        assert.deepEqual(Object.keys(STACK_REFERENCE_OUTPUTS).sort(), exported.sort());
    });
});
