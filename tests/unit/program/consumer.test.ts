import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { STACK_REFERENCE_OUTPUTS, recordedNamed, recordedOfType, unwrap } from "../../support/pulumi-mocks";
import { waitForRPCs } from "../../support/component-harness";
import { runModule } from "../../support/run-module";
import { tsBlockUnder } from "../../support/markdown";

const ROOT = path.join(__dirname, "..", "..", "..");
const EXAMPLE_HEADING = "## A second stack reading the outputs";

describe("a consumer stack reading the outbox outputs through a StackReference", () => {
    it("runs the component page's StackReference example: it resolves the outbox program's outputs and wires them into its own resources", async () => {
        const before = recordedOfType("pulumi:pulumi:StackReference").length;
        const exported = runModule(
            tsBlockUnder(path.join("docs", "component.md"), EXAMPLE_HEADING),
            "docs/component.md (A second stack reading the outputs).ts",
        );
        await waitForRPCs();
        assert.equal(
            await unwrap(exported.ordersTableName as pulumi.Output<string>),
            STACK_REFERENCE_OUTPUTS.tableName,
        );

        assert.deepEqual(
            recordedOfType("pulumi:pulumi:StackReference")
                .slice(before)
                .map((r) => r.inputs.name),
            ["acme/outbox/prod"],
        );
        const subscription = recordedNamed("billing-order-events").find(
            (r) => r.type === "aws:sns/topicSubscription:TopicSubscription",
        );
        assert.equal(subscription?.inputs.topic, STACK_REFERENCE_OUTPUTS.topicArn);
        const policy = recordedNamed("billing-order-events").find((r) => r.type === "aws:sqs/queuePolicy:QueuePolicy");
        assert.equal(
            JSON.parse(policy?.inputs.policy).Statement[0].Condition.ArnEquals["aws:SourceArn"],
            STACK_REFERENCE_OUTPUTS.topicArn,
        );
    });

    it("mocks every output the outbox program exports (the sweeper's name aside)", () => {
        // Read from the source: importing the program here would declare its outbox before its own test sets the config.
        const source = fs.readFileSync(path.join(ROOT, "program", "index.ts"), "utf8");
        const exported = [...source.matchAll(/^export const (\w+)/gm)]
            .map((m) => m[1])
            .filter((k) => k !== "sweeperFunctionName");
        assert.deepEqual(Object.keys(STACK_REFERENCE_OUTPUTS).sort(), exported.sort());
    });
});
