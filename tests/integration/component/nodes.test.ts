/**
 * `outbox.nodes` under Pulumi's mocks: each node is the child the component registered under its name and type
 * (its URN is the recorded one), optional children are `undefined` when the component did not declare them, and
 * the getter adds no output to the component's schema (tests/integration/component/multi-language.test.ts lists
 * the outputs).
 */
import * as assert from "node:assert/strict";
import * as fc from "fast-check";
import * as pulumi from "@pulumi/pulumi";
import type { OutboxNodes } from "../../../components/nodes";
import { TYPE, buildOutbox, type BuiltOutbox } from "../../support/component-harness";
import { unwrap } from "../../support/pulumi-mocks";

const BUCKET_TYPE = "aws:s3/bucket:Bucket";
const QUEUE_ARN = "arn:aws:sqs:eu-west-1:111111111111:orders-events";

/** Every node that is always declared: its Pulumi name suffix and type. Spelled here, not read from the component. */
const ALWAYS: Record<
    Exclude<keyof OutboxNodes, "topic" | "alarms" | "dashboard" | "payloadBucket">,
    [string, string]
> = {
    table: ["table", TYPE.table],
    dlq: ["dlq", TYPE.queue],
    publisher: ["publisher", TYPE.fn],
    publisherRole: ["publisher-role", TYPE.role],
    publisherLogs: ["publisher-logs", TYPE.logGroup],
    eventSourceMapping: ["stream-mapping", TYPE.mapping],
    sweeper: ["sweeper", TYPE.fn],
    sweeperRole: ["sweeper-role", TYPE.role],
    sweeperLogs: ["sweeper-logs", TYPE.logGroup],
    schedule: ["sweep-schedule", TYPE.rule],
    scheduleTarget: ["sweep-target", TYPE.target],
    schedulePermission: ["sweep-permission", TYPE.permission],
};

/** The recorded URN of the child `<outbox>-<suffix>` of `type`. */
function urnOf(built: BuiltOutbox, name: string, suffix: string, type: string): string {
    return built.one(type, `${name}-${suffix}`).urn!;
}

describe("outbox.nodes", () => {
    it("gives every child the component declares, each the resource registered under its name and type", async () => {
        const built = await buildOutbox("nodes", { largePayloads: true });
        const { nodes } = built.outbox;
        for (const [key, [suffix, type]] of Object.entries(ALWAYS)) {
            const node = nodes[key as keyof typeof ALWAYS];
            assert.ok(pulumi.CustomResource.isInstance(node), `nodes.${key} is a resource`);
            assert.equal(await unwrap(node.urn), urnOf(built, "nodes", suffix, type), `nodes.${key}`);
        }
        assert.equal(await unwrap(nodes.topic!.urn), urnOf(built, "nodes", "topic", TYPE.topic));
        assert.equal(await unwrap(nodes.dashboard!.urn), urnOf(built, "nodes", "dashboard", TYPE.dashboard));
        assert.equal(await unwrap(nodes.payloadBucket!.urn), urnOf(built, "nodes", "payloads", BUCKET_TYPE));
        assert.deepEqual(
            await unwrap(pulumi.all(nodes.alarms.map((a) => a.arn))),
            await unwrap(built.outbox.alarmArns),
            "the alarms, in the order of alarmArns",
        );
        assert.equal(nodes.alarms.length, built.resources.filter((r) => r.type === TYPE.alarm).length);
        assert.equal(await unwrap(nodes.table.name), await unwrap(built.outbox.tableName));
        assert.equal(await unwrap(nodes.publisher.name), await unwrap(built.outbox.publisherFunctionName));
        assert.equal(await unwrap(nodes.publisher.role), await unwrap(nodes.publisherRole.arn));
        assert.equal(await unwrap(nodes.sweeper.role), await unwrap(nodes.sweeperRole.arn));
    });

    it("is undefined for each optional child the component did not declare: the topic, the dashboard, the payload bucket; no alarms", async () => {
        const built = await buildOutbox("nodesbare", { queueArn: QUEUE_ARN, dashboard: false, alarms: false });
        const { nodes } = built.outbox;
        assert.equal(nodes.topic, undefined);
        assert.equal(nodes.dashboard, undefined);
        assert.equal(nodes.payloadBucket, undefined);
        assert.deepEqual(nodes.alarms, []);
        assert.equal(built.resources.filter((r) => r.type === TYPE.topic).length, 0);
        // The always-declared children are there all the same.
        assert.equal(await unwrap(nodes.schedule.urn), urnOf(built, "nodesbare", "sweep-schedule", TYPE.rule));
    });

    it("has no payload bucket node for a given payloadBucketArn (the bucket is the caller's)", async () => {
        const built = await buildOutbox("nodesgiven", { payloadBucketArn: "arn:aws:s3:::their-payloads" });
        assert.equal(built.outbox.nodes.payloadBucket, undefined);
        assert.equal(await unwrap(built.outbox.payloadBucketName), "their-payloads");
    });

    it("has each optional node exactly when its child was declared, whatever the settings combine (property)", async function () {
        let run = 0;
        await fc.assert(
            fc.asyncProperty(
                fc.record({
                    queue: fc.boolean(),
                    dashboard: fc.boolean(),
                    alarms: fc.boolean(),
                    payloads: fc.boolean(),
                }),
                async (o) => {
                    run += 1;
                    const name = `nodesprop${run}`;
                    const built = await buildOutbox(name, {
                        ...(o.queue ? { queueArn: QUEUE_ARN } : {}),
                        dashboard: o.dashboard,
                        alarms: o.alarms,
                        largePayloads: o.payloads,
                    });
                    const { nodes } = built.outbox;
                    const declared = (type: string) => built.resources.filter((r) => r.type === type);
                    assert.equal(nodes.topic !== undefined, declared(TYPE.topic).length === 1);
                    assert.equal(nodes.topic !== undefined, !o.queue);
                    assert.equal(nodes.dashboard !== undefined, o.dashboard);
                    assert.equal(nodes.dashboard !== undefined, declared(TYPE.dashboard).length === 1);
                    assert.equal(nodes.payloadBucket !== undefined, o.payloads);
                    assert.equal(nodes.payloadBucket !== undefined, declared(BUCKET_TYPE).length === 1);
                    assert.equal(nodes.alarms.length, declared(TYPE.alarm).length);
                    assert.equal(nodes.alarms.length > 0, o.alarms);
                },
            ),
            { numRuns: 8 },
        );
    });

    it("keeps each outbox's own children apart when a program declares two", async () => {
        const a = await buildOutbox("nodesa");
        const b = await buildOutbox("nodesb");
        assert.equal(await unwrap(a.outbox.nodes.sweeperRole.urn), urnOf(a, "nodesa", "sweeper-role", TYPE.role));
        assert.equal(await unwrap(b.outbox.nodes.sweeperRole.urn), urnOf(b, "nodesb", "sweeper-role", TYPE.role));
    });
});
