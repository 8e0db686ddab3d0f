/**
 * The application-stack example (`examples/writer-stack`): it reads the outbox stack's outputs through a
 * StackReference and attaches `writerPolicy` to its function's role. Run under Pulumi's mocks, whose
 * StackReference serves what the outbox program exports.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { writerPolicyDocument } from "../../../components/iam";
import { waitForRPCs } from "../../support/component-harness";
import { STACK_REFERENCE_OUTPUTS, recordedNamed, recordedOfType } from "../../support/pulumi-mocks";
import { runModule } from "../../support/run-module";

const EXAMPLE = path.join(__dirname, "..", "..", "..", "examples", "writer-stack", "index.ts");

describe("examples/writer-stack: an application stack writing to another stack's outbox", () => {
    it("attaches the outbox's writerPolicy to its function's role and passes the table name and the destination, with no hand-written IAM", async () => {
        runModule(fs.readFileSync(EXAMPLE, "utf8"), "examples/writer-stack/index.ts");
        await waitForRPCs();
        assert.ok(
            recordedOfType("pulumi:pulumi:StackReference").some((r) => r.inputs.name === "acme/orders-outbox/prod"),
        );
        const rolePolicy = recordedNamed("orders-api-outbox-writer").find(
            (r) => r.type === "aws:iam/rolePolicy:RolePolicy",
        );
        assert.ok(rolePolicy, "a RolePolicy is declared");
        assert.equal(rolePolicy.inputs.role, "orders-api-id", "on the function's role");
        assert.deepEqual(
            JSON.parse(rolePolicy.inputs.policy),
            writerPolicyDocument({ tableArn: STACK_REFERENCE_OUTPUTS.tableArn! }),
        );
        const fn = recordedNamed("orders-api").find((r) => r.type === "aws:lambda/function:Function");
        assert.equal(fn?.inputs.environment.variables.OUTBOX_TABLE_NAME, STACK_REFERENCE_OUTPUTS.tableName);
        assert.equal(
            fn?.inputs.environment.variables.OUTBOX_DESTINATION_ARN,
            STACK_REFERENCE_OUTPUTS.destinationArn,
            "the destination, which the app's OutboxWriter records as each event's address",
        );
        assert.match(
            fs.readFileSync(path.join(path.dirname(EXAMPLE), "app", "index.js"), "utf8"),
            /address: process\.env\.OUTBOX_DESTINATION_ARN/,
        );
        const role = recordedNamed("orders-api").find((r) => r.type === "aws:iam/role:Role");
        assert.ok(
            role !== undefined && typeof fn?.inputs.role === "string" && fn.inputs.role.includes("orders-api"),
            "the function runs as that role",
        );
    });
});
