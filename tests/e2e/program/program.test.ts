import { writerPolicyDocument } from "../../../components/iam";
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { outboxArgsFromConfig, configKeys } from "../../../program/config";
import { validateOutboxArgs } from "../../../components/validation";
import { ENV } from "../../../runtime/config";
import { recordedNamed, unwrap } from "../../support/pulumi-mocks";
import { TYPE, mockedOutboxOutputs, resolvedOutboxOutputs, waitForRPCs } from "../../support/component-harness";
import { outboxPolicies } from "../../../policy/outbox-policies";
import { violationsOf } from "../../support/policy/bridge";

const ROOT = path.join(__dirname, "..", "..", "..");
const PROJECT = "dynamodb-outbox";

/** Replace the stack config with `values` (keys without the project prefix), for the duration of `body`. */
async function withStackConfig<T>(values: Record<string, string>, body: () => Promise<T> | T): Promise<T> {
    const saved = pulumi.runtime.allConfig();
    pulumi.runtime.setAllConfig(Object.fromEntries(Object.entries(values).map(([k, v]) => [`${PROJECT}:${k}`, v])));
    try {
        return await body();
    } finally {
        pulumi.runtime.setAllConfig(saved);
    }
}

describe("the deployable program (Pulumi.yaml main)", () => {
    it("names a program file that is not the package barrel", () => {
        const yaml = fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8");
        assert.match(yaml, /^name: dynamodb-outbox$/m);
        assert.match(yaml, /^main: program\/index\.ts$/m);
        assert.ok(fs.existsSync(path.join(ROOT, "program", "index.ts")));
    });

    it("declares in Pulumi.yaml every config key the program reads", () => {
        const yaml = fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8");
        const configSection = yaml.slice(yaml.indexOf("\nconfig:\n"));
        const declared = [...configSection.matchAll(/^ {2}(\w+):$/gm)].map((m) => m[1]).sort();
        // `tags` is an object, a type project config cannot declare; docs/component.md shows `pulumi config set --path`.
        assert.deepEqual(
            declared,
            configKeys()
                .filter((k) => k !== "tags")
                .sort(),
        );
    });

    it("deploys one Outbox from the stack config and exports its outputs", async () => {
        const config = {
            outboxName: "prog",
            fifo: "true",
            maximumRetryAttempts: "4",
            sweepSchedule: "rate(5 minutes)",
            sweepAfterSeconds: "300",
            tags: JSON.stringify({ team: "payments" }),
        };
        const program = await withStackConfig(config, async () => {
            const loaded = await import("../../../program/index");
            await waitForRPCs();
            return loaded;
        });
        const children = recordedNamed("prog");
        const one = (type: string) => children.filter((r) => r.type === type);
        assert.equal(one(TYPE.outbox).length, 1);
        assert.equal(one(TYPE.topic)[0].inputs.fifoTopic, true);
        assert.equal(one(TYPE.mapping)[0].inputs.maximumRetryAttempts, 4);
        assert.equal(one(TYPE.rule)[0].inputs.scheduleExpression, "rate(5 minutes)");
        assert.equal(
            one(TYPE.fn).find((f) => f.name === "prog-sweeper")?.inputs.environment.variables[ENV.sweepAfterSeconds],
            "300",
        );
        assert.equal(one(TYPE.table)[0].inputs.tags.team, "payments");
        assert.deepEqual(
            await violationsOf(outboxPolicies, children),
            [],
            "the deployed outbox passes the policy pack",
        );

        assert.deepEqual(
            { ...(await resolvedOutboxOutputs(program)), writerPolicy: JSON.parse(await unwrap(program.writerPolicy)) },
            {
                ...mockedOutboxOutputs("prog"),
                writerPolicy: writerPolicyDocument({ tableArn: mockedOutboxOutputs("prog").tableArn }),
            },
        );
    });

    it("maps only the keys that are set, leaving the rest to the component's defaults", async () => {
        await withStackConfig({}, () => assert.deepEqual(outboxArgsFromConfig(new pulumi.Config()), {}));
        await withStackConfig(
            { billingMode: "PROVISIONED", provisionedCapacity: "8", deletionProtection: "true" },
            () =>
                assert.deepEqual(outboxArgsFromConfig(new pulumi.Config()), {
                    billingMode: "PROVISIONED",
                    provisionedCapacity: 8,
                    deletionProtection: true,
                }),
        );
        await withStackConfig({ importTableName: "legacy-outbox" }, () =>
            assert.deepEqual(outboxArgsFromConfig(new pulumi.Config()), { importTableName: "legacy-outbox" }),
        );
        const bus = {
            eventBusArn: "arn:aws:events:eu-west-1:111111111111:event-bus/orders",
            eventSource: "com.acme.orders",
            destinationKmsKeyArn: "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        };
        await withStackConfig(bus, () => assert.deepEqual(outboxArgsFromConfig(new pulumi.Config()), bus));
        await withStackConfig({ queueArn: "arn:aws:sqs:eu-west-1:111111111111:orders.fifo", fifo: "true" }, () =>
            assert.deepEqual(outboxArgsFromConfig(new pulumi.Config()), {
                queueArn: "arn:aws:sqs:eu-west-1:111111111111:orders.fifo",
                fifo: true,
            }),
        );
    });

    it("fails on a config value of the wrong type naming the key, and on one out of range naming the arg", async () => {
        await withStackConfig({ batchSize: "lots" }, () =>
            assert.throws(
                () => outboxArgsFromConfig(new pulumi.Config()),
                (e: any) => e.message.includes(`${PROJECT}:batchSize`) && e.message.includes("number"),
            ),
        );
        await withStackConfig({ batchSize: "0" }, () =>
            assert.throws(
                () => validateOutboxArgs(outboxArgsFromConfig(new pulumi.Config())),
                (e: any) => e.code === "INVALID_CONFIG" && e.message.includes("args.batchSize is 0"),
            ),
        );
    });
});

describe("the package barrel (index.ts) and the policy entry (policy/policies.ts)", () => {
    it("exports the component and the runtime, not the policies, loads no @pulumi/policy, and declares nothing when imported", () => {
        // A fresh process with the mocks installed: the import must register no resource and start no policy
        // server (a PolicyPack would print its port and keep the process alive). The policies are the separate
        // entry dynamodb-outbox/policy, so @pulumi/policy stays out of the root entry's graph.
        const script = [
            "const barrel = require('./index');",
            "const policyLoaded = Object.keys(require.cache).filter((m) => m.includes('@pulumi/policy'));",
            "const policy = require('./policy/policies');",
            "const mocks = require('./tests/support/pulumi-mocks');",
            "require('@pulumi/pulumi/runtime/settings').waitForRPCs().then(() => {",
            "  console.log(JSON.stringify({ recorded: mocks.recorded.length, exports: Object.keys(barrel), policyLoaded, policy: Object.keys(policy) }));",
            "});",
        ].join("\n");
        const out = execFileSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], {
            cwd: ROOT,
            env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
            encoding: "utf8",
            timeout: 60000,
        });
        const result = JSON.parse(out.trim().split("\n").pop() ?? "{}");
        assert.equal(result.recorded, 0);
        for (const name of [
            "Outbox",
            "OUTBOX_TYPE",
            "validateOutboxArgs",
            "OUTBOX_RANGES",
            "publisherPolicyDocument",
            "OutboxError",
            "GLOBAL_SECONDARY_INDEXES",
        ]) {
            assert.ok(result.exports.includes(name), `index.ts exports ${name}`);
        }
        for (const name of ["outboxPolicies", "outboxPolicyPackArgs", "isOutboxTable"]) {
            assert.ok(
                !result.exports.includes(name),
                `index.ts does not export ${name}: it is the dynamodb-outbox/policy entry's`,
            );
            assert.ok(result.policy.includes(name), `policy/policies.ts exports ${name}`);
        }
        assert.deepEqual(result.policyLoaded, [], "requiring index.ts loads no @pulumi/policy module");
    });
});
