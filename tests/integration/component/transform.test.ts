/**
 * `transform` under Pulumi's mocks (issue 39): a key for every child, each an object deep-merged over the computed
 * args or a callback; the table's outbox tag survives any transform; extra indexes beside the outbox's three; the
 * functions in a VPC, with the grant Lambda needs whichever way the VPC came.
 */
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import type * as aws from "@pulumi/aws";
import { OutboxBillingMode } from "../../../components/outbox";
import { CHILD_SUFFIX, type OutboxChild, childName } from "../../../components/naming";
import { TRANSFORM_KEYS, transformCallback } from "../../../components/transform";
import { VPC_ACCESS_POLICY } from "../../../components/vpc";
import { ENV } from "../../../runtime/config";
import { GLOBAL_SECONDARY_INDEXES, OUTBOX_TABLE_TAG } from "../../../runtime/schema";
import { BuiltOutbox, TYPE, buildOutbox } from "../../support/component-harness";

const SUBNETS = ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"];
const GROUPS = ["sg-0123456789abcdef0"];
const VPC_ACCESS_ARN = `arn:aws:iam::aws:policy/${VPC_ACCESS_POLICY}`;
const ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment";

describe("transform: a key for every child, merged deep or given as a callback", function () {
    // Each outbox serializes its two functions: seconds apiece on a loaded machine.
    this.timeout(240_000);

    describe("a callback on every key", () => {
        const calls = new Map<OutboxChild, { name: string; args: Record<string, unknown> }>();
        let built: BuiltOutbox;

        before(async () => {
            const transform = Object.fromEntries(
                TRANSFORM_KEYS.map((key) => [
                    key,
                    (args: Record<string, unknown>, opts: pulumi.CustomResourceOptions, name: string) => {
                        calls.set(key, { name, args });
                        // An option the mocks cannot see, but the harness records: proof the change reached the child.
                        opts.ignoreChanges = [`marker-${key}`];
                    },
                ]),
            );
            // largePayloads and a VPC, so that every child the component can declare is declared.
            built = await buildOutbox("xfall", {
                largePayloads: true,
                vpc: { subnetIds: SUBNETS, securityGroupIds: GROUPS },
                transform,
            });
        });

        it("declares every child of CHILD_SUFFIX, and calls each key's callback once with that child's name", () => {
            const children = built.resources.filter((r) => r.type !== TYPE.outbox).map((r) => r.name);
            assert.deepEqual(
                children.sort(),
                TRANSFORM_KEYS.map((k) => childName("xfall", k)).sort(),
                "one child per key, one key per child",
            );
            assert.deepEqual([...calls.keys()].sort(), [...TRANSFORM_KEYS].sort());
            for (const key of TRANSFORM_KEYS) assert.equal(calls.get(key)?.name, `xfall-${CHILD_SUFFIX[key]}`, key);
        });

        it("declares each child with the options its callback changed, and the component's own kept", () => {
            for (const key of TRANSFORM_KEYS) {
                const opts = built.options.get(childName("xfall", key));
                assert.deepEqual(opts?.ignoreChanges, [`marker-${key}`], key);
                assert.equal(opts?.parent, built.outbox, `${key} is still the component's child`);
            }
            assert.equal(built.options.get("xfall-stream-mapping")?.deleteBeforeReplace, true);
        });

        it("hands each callback the args the component computed", () => {
            assert.equal(calls.get("table")?.args.streamViewType, "NEW_IMAGE");
            assert.equal(calls.get("publisher")?.args.memorySize, 256);
            assert.equal(calls.get("schedulePermission")?.args.principal, "events.amazonaws.com");
            assert.equal(calls.get("payloadBucketPublicAccess")?.args.blockPublicPolicy, true);
            assert.equal(calls.get("iteratorAgeAlarm")?.args.metricName, "IteratorAge");
        });
    });

    describe("objects and callbacks on the table's tags", () => {
        let objects: BuiltOutbox;

        before(async () => {
            objects = await buildOutbox("xftags", {
                tags: { team: "payments", env: "prod" },
                transform: {
                    // Tries to drop the outbox tag by giving it another value: the tag is the component's.
                    table: { tags: { env: "staging", owner: "orders", [OUTBOX_TABLE_TAG.key]: "false" } },
                    queue: { tags: { tier: "dlq" } },
                    publisher: { environment: { variables: { EXTRA: "1" } } },
                    sweeperRole: { maxSessionDuration: 7200 },
                },
            });
        });

        it("merges transform.table.tags into tags (the transform wins on a key), and keeps the outbox tag", () => {
            assert.deepEqual(objects.one(TYPE.table).inputs.tags, {
                team: "payments",
                env: "staging",
                owner: "orders",
                [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value,
            });
            assert.deepEqual(objects.one(TYPE.queue).inputs.tags, { team: "payments", env: "prod", tier: "dlq" });
        });

        it("adds a variable without restating the environment, and keeps the rest of each child's args", () => {
            const publisher = objects.one(TYPE.fn, "xftags-publisher").inputs;
            assert.equal(publisher.environment.variables.EXTRA, "1");
            assert.equal(publisher.environment.variables[ENV.maxPublishAttempts], "3");
            assert.equal(publisher.runtime, "nodejs22.x");
            assert.equal(
                objects.one(TYPE.fn, "xftags-sweeper").inputs.environment.variables.EXTRA,
                undefined,
                "the sweeper's environment is its own",
            );
            const role = objects.one(TYPE.role, "xftags-sweeper-role").inputs;
            assert.equal(role.maxSessionDuration, 7200);
            assert.equal(JSON.parse(role.inlinePolicies[0].policy).Statement.length > 0, true);
        });

        it("keeps the outbox tag when a callback replaces the tags, or returns new args without them", async () => {
            const callbacks = await buildOutbox("xftagscb", {
                tags: { team: "payments" },
                transform: {
                    table: transformCallback<aws.dynamodb.TableArgs>((args) => ({ ...args, tags: { only: "mine" } })),
                    topic: transformCallback<aws.sns.TopicArgs>((args) => {
                        args.tags = { only: "mine" };
                    }),
                    publisher: transformCallback<aws.lambda.FunctionArgs>((args) => {
                        (args.environment as { variables: Record<string, string> }).variables.EXTRA = "1";
                    }),
                },
            });
            assert.deepEqual(callbacks.one(TYPE.table).inputs.tags, {
                only: "mine",
                [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value,
            });
            assert.deepEqual(
                callbacks.one(TYPE.topic).inputs.tags,
                { only: "mine" },
                "only the table has a required tag",
            );
            assert.equal(callbacks.one(TYPE.fn, "xftagscb-publisher").inputs.environment.variables.EXTRA, "1");
            assert.equal(
                callbacks.one(TYPE.fn, "xftagscb-sweeper").inputs.environment.variables.EXTRA,
                undefined,
                "a callback's change to the shared environment stays on its own function",
            );
        });
    });

    describe("globalSecondaryIndexes: indexes of your own beside the outbox's three", () => {
        it("adds each index after the outbox's, with its key attributes merged into the definitions and the capacity", async () => {
            const built = await buildOutbox("xfgsi", {
                billingMode: OutboxBillingMode.Provisioned,
                provisionedCapacity: 4,
                globalSecondaryIndexes: [
                    { name: "CustomerIndex", hashKey: "customer_id", rangeKey: "created_at", rangeKeyType: "N" },
                    // An outbox attribute, with the outbox's type: defined once.
                    { name: "ByPartition", hashKey: "PK", projectionType: "INCLUDE", nonKeyAttributes: ["status"] },
                ],
            });
            const table = built.one(TYPE.table).inputs;
            assert.deepEqual(
                table.globalSecondaryIndexes.map((i: any) => i.name),
                [...GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName), "CustomerIndex", "ByPartition"],
            );
            assert.deepEqual(table.globalSecondaryIndexes.slice(3), [
                {
                    name: "CustomerIndex",
                    keySchemas: [
                        { attributeName: "customer_id", keyType: "HASH" },
                        { attributeName: "created_at", keyType: "RANGE" },
                    ],
                    projectionType: "ALL",
                    readCapacity: 4,
                    writeCapacity: 4,
                },
                {
                    name: "ByPartition",
                    keySchemas: [{ attributeName: "PK", keyType: "HASH" }],
                    projectionType: "INCLUDE",
                    nonKeyAttributes: ["status"],
                    readCapacity: 4,
                    writeCapacity: 4,
                },
            ]);
            const attributes = table.attributes.map((a: any) => `${a.name}:${a.type}`);
            assert.deepEqual(attributes.slice(-2), ["customer_id:S", "created_at:N"]);
            assert.equal(attributes.filter((a: string) => a.startsWith("PK:")).length, 1, "PK defined once");
        });
    });

    describe("vpc: both functions in a VPC, with what Lambda needs there", () => {
        let built: BuiltOutbox;

        before(async () => {
            built = await buildOutbox("xfvpc", { vpc: { subnetIds: SUBNETS, securityGroupIds: GROUPS } });
        });

        it("sets both functions' vpcConfig", () => {
            for (const fn of ["publisher", "sweeper"])
                assert.deepEqual(built.one(TYPE.fn, `xfvpc-${fn}`).inputs.vpcConfig, {
                    subnetIds: SUBNETS,
                    securityGroupIds: GROUPS,
                });
        });

        it("attaches AWSLambdaVPCAccessExecutionRole to each function's own role, before the function is created", () => {
            for (const fn of ["publisher", "sweeper"]) {
                const attachment = built.one(ATTACHMENT, `xfvpc-${fn}-vpc-access`);
                assert.deepEqual(attachment.inputs, { role: `xfvpc-${fn}-role-abc`, policyArn: VPC_ACCESS_ARN });
                const dependsOn = built.options.get(`xfvpc-${fn}`)?.dependsOn as pulumi.Resource[];
                assert.ok(Array.isArray(dependsOn) && dependsOn.length === 1, `${fn} depends on its grant`);
                assert.equal(built.options.get(`xfvpc-${fn}-vpc-access`)?.parent, built.outbox);
            }
        });

        it("grants the same when the VPC comes through transform.publisher.vpcConfig or a sweeper callback, and nothing without one", async () => {
            const viaTransform = await buildOutbox("xfvpctr", {
                transform: {
                    publisher: { vpcConfig: { subnetIds: SUBNETS, securityGroupIds: GROUPS } },
                    sweeper: transformCallback<aws.lambda.FunctionArgs>((args) => {
                        args.vpcConfig = { subnetIds: SUBNETS.slice(0, 1), securityGroupIds: GROUPS };
                    }),
                },
            });
            assert.deepEqual(
                viaTransform.resources
                    .filter((r) => r.type === ATTACHMENT)
                    .map((r) => [r.name, r.inputs.policyArn])
                    .sort(),
                [
                    ["xfvpctr-publisher-vpc-access", VPC_ACCESS_ARN],
                    ["xfvpctr-sweeper-vpc-access", VPC_ACCESS_ARN],
                ],
            );
            assert.deepEqual(viaTransform.one(TYPE.fn, "xfvpctr-sweeper").inputs.vpcConfig.subnetIds, [SUBNETS[0]]);
            assert.equal(
                built.resources.filter((r) => r.type === ATTACHMENT).length,
                2,
                "the vpc arg's outbox has exactly its two",
            );
        });
    });
});
