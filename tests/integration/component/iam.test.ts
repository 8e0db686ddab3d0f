import * as assert from "node:assert/strict";
import { publisherPolicyDocument, sweeperPolicyDocument } from "../../../components/iam";
import { recorded, unwrap } from "../../support/pulumi-mocks";
import { BuiltOutbox, TYPE, buildOutbox, inlineStatements, type RoleStatement } from "../../support/component-harness";

const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
// What both handlers call on the table (relay-policy.test.ts records it): no PutItem, no DescribeTable.
const TABLE_ACTIONS = ["dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"];

type Statement = RoleStatement;

/** `action → resources`, one entry per action, so a test states the whole grant at once. */
function grants(statements: Statement[]): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const s of statements) {
        assert.equal(s.Effect, "Allow");
        for (const action of s.Action) out[action] = [...(out[action] ?? []), ...s.Resource].sort();
    }
    return out;
}

describe("Outbox IAM", () => {
    let std: BuiltOutbox;
    let arns: { table: string; stream: string; topic: string; dlq: string; publisherLogs: string; sweeperLogs: string };

    before(async () => {
        std = await buildOutbox("iam");
        const logArn = (name: string) => `arn:aws:logs:eu-west-1:111111111111:log-group:${name}-abc`;
        arns = {
            table: await unwrap(std.outbox.tableArn),
            stream: await unwrap(std.outbox.streamArn),
            topic: await unwrap(std.outbox.destinationArn),
            dlq: await unwrap(std.outbox.dlqArn),
            publisherLogs: logArn("iam-publisher-logs"),
            sweeperLogs: logArn("iam-sweeper-logs"),
        };
        std.one(TYPE.logGroup, "iam-publisher-logs");
    });

    /** What both handlers are granted: the table and its indexes, the topic, the DLQ, and their own log group. */
    function sharedGrants(logs: string): Record<string, string[]> {
        const table = [arns.table, `${arns.table}/index/*`].sort();
        const expected: Record<string, string[]> = {
            "sns:Publish": [arns.topic],
            "sqs:SendMessage": [arns.dlq],
            "logs:CreateLogStream": [`${logs}:*`],
            "logs:PutLogEvents": [`${logs}:*`],
        };
        for (const action of TABLE_ACTIONS) expected[action] = table;
        return expected;
    }

    it("grants the publisher exactly: its stream, the table and its indexes, the topic, the DLQ, its logs", () => {
        assert.deepEqual(grants(inlineStatements(std, "iam-publisher-role")), {
            ...sharedGrants(arns.publisherLogs),
            "dynamodb:BatchGetItem": [arns.table, `${arns.table}/index/*`].sort(),
            "dynamodb:DescribeStream": [arns.stream],
            "dynamodb:GetRecords": [arns.stream],
            "dynamodb:GetShardIterator": [arns.stream],
            "dynamodb:ListStreams": ["*"],
        });
    });

    it("grants the sweeper the same minus stream read, on its own log group, plus Scan on ClaimIndex only", () => {
        assert.deepEqual(grants(inlineStatements(std, "iam-sweeper-role")), {
            ...sharedGrants(arns.sweeperLogs),
            "dynamodb:Scan": [`${arns.table}/index/ClaimIndex`],
        });
    });

    it("uses a * resource only for dynamodb:ListStreams, which AWS authorizes only on *", () => {
        for (const role of ["iam-publisher-role", "iam-sweeper-role"]) {
            const wildcards = inlineStatements(std, role).filter((s) =>
                s.Resource.some((r) => r === "*" || r.endsWith(":*:*")),
            );
            assert.deepEqual(
                wildcards.flatMap((s) => s.Action),
                role === "iam-publisher-role" ? ["dynamodb:ListStreams"] : [],
            );
        }
    });

    it("grants no KMS action without a key, and Decrypt/GenerateDataKey* on exactly the key when given", async () => {
        for (const role of ["iam-publisher-role", "iam-sweeper-role"]) {
            assert.equal(
                inlineStatements(std, role).filter((s) => s.Action.some((a) => a.startsWith("kms:"))).length,
                0,
            );
        }
        const kms = await buildOutbox("iamkms", { kmsKeyArn: KMS_KEY });
        for (const role of ["iamkms-publisher-role", "iamkms-sweeper-role"]) {
            const g = grants(inlineStatements(kms, role));
            assert.deepEqual(g["kms:Decrypt"], [KMS_KEY]);
            assert.deepEqual(g["kms:GenerateDataKey*"], [KMS_KEY]);
            assert.deepEqual(
                Object.keys(g)
                    .filter((a) => a.startsWith("kms:"))
                    .sort(),
                ["kms:Decrypt", "kms:GenerateDataKey*"],
            );
        }
    });

    it("lets only Lambda assume the roles, with no managed policy: no *FullAccess anywhere", () => {
        for (const role of ["iam-publisher-role", "iam-sweeper-role"]) {
            const inputs = std.one(TYPE.role, role).inputs;
            const trust =
                typeof inputs.assumeRolePolicy === "string"
                    ? JSON.parse(inputs.assumeRolePolicy)
                    : inputs.assumeRolePolicy;
            assert.deepEqual(trust.Statement, [
                {
                    Action: "sts:AssumeRole",
                    Effect: "Allow",
                    Principal: { Service: "lambda.amazonaws.com" },
                    Sid: "AllowAssumeRole",
                },
            ]);
            assert.equal(inputs.managedPolicyArns, undefined);
        }
        assert.deepEqual(
            std.resources.filter((r) => r.type === TYPE.policyAttachment),
            [],
        );
        const anyFullAccess = recorded.filter(
            (r) => r.name.startsWith("iam") && JSON.stringify(r.inputs).includes("FullAccess"),
        );
        assert.deepEqual(
            anyFullAccess.map((r) => r.name),
            [],
        );
    });

    it("runs each function under its own role", async () => {
        const role = (name: string) => `arn:aws:iam::111111111111:role/${name}-abc`;
        assert.equal(std.one(TYPE.fn, "iam-publisher").inputs.role, role("iam-publisher-role"));
        assert.equal(std.one(TYPE.fn, "iam-sweeper").inputs.role, role("iam-sweeper-role"));
    });

    it("refuses to build a publisher policy for a table without a stream, naming the table", () => {
        const targets = {
            tableArn: "arn:aws:dynamodb:eu-west-1:111111111111:table/t",
            destinationKind: "sns" as const,
            destinationArn: "t",
            dlqArn: "d",
            logGroupArn: "l",
        };
        assert.throws(
            () => publisherPolicyDocument(targets),
            (e: any) => e.code === "INVALID_CONFIG" && /table\/t has no stream/.test(e.message),
        );
        assert.equal(sweeperPolicyDocument(targets).Statement.length, 5);
    });
});
