/**
 * `consumer.nodes` under Pulumi's mocks: each node is the child the `OutboxConsumer` registered under its name and
 * type (its URN is the recorded one), a child not declared for the destination's kind or the args is `undefined`,
 * the getter adds no output to the component's schema (consumer-multi-language.test.ts lists the outputs), and the
 * grant node's policy is `consumerPolicy` itself.
 */
import * as assert from "node:assert/strict";
import * as fc from "fast-check";
import * as pulumi from "@pulumi/pulumi";
import { OutboxConsumer, type OutboxConsumerArgs, type OutboxConsumerNodes } from "../../../components/consumer";
import { consumerPolicyDocument } from "../../../components/consumer-policy";
import { waitForRPCs } from "../../support/component-harness";
import { recorded, unwrap, type RecordedResource } from "../../support/pulumi-mocks";

const ACCOUNT = "111111111111";
const DESTINATIONS = {
    sns: `arn:aws:sns:eu-west-1:${ACCOUNT}:orders-topic`,
    sqs: `arn:aws:sqs:eu-west-1:${ACCOUNT}:orders-events`,
    eventbridge: `arn:aws:events:eu-west-1:${ACCOUNT}:event-bus/orders`,
} as const;
const FUNCTION = `arn:aws:lambda:eu-west-1:${ACCOUNT}:function:billing-java`;

/** Each node's Pulumi name suffix and type, spelled here rather than read from the component. */
const NODE: Record<Exclude<keyof OutboxConsumerNodes, "alarms">, [string, string]> = {
    queue: ["queue", "aws:sqs/queue:Queue"],
    dlq: ["dlq", "aws:sqs/queue:Queue"],
    redrivePolicy: ["redrive", "aws:sqs/redrivePolicy:RedrivePolicy"],
    subscription: ["subscription", "aws:sns/topicSubscription:TopicSubscription"],
    rule: ["rule", "aws:cloudwatch/eventRule:EventRule"],
    target: ["target", "aws:cloudwatch/eventTarget:EventTarget"],
    queuePolicy: ["queue-policy", "aws:sqs/queuePolicy:QueuePolicy"],
    inboxTable: ["inbox", "aws:dynamodb/table:Table"],
    function: ["function", "aws:lambda/function:Function"],
    role: ["role", "aws:iam/role:Role"],
    logs: ["logs", "aws:cloudwatch/logGroup:LogGroup"],
    logsPolicy: ["logs-policy", "aws:iam/rolePolicy:RolePolicy"],
    consumePolicy: ["consume-policy", "aws:iam/rolePolicy:RolePolicy"],
    mapping: ["mapping", "aws:lambda/eventSourceMapping:EventSourceMapping"],
};
const ALARM_TYPE = "aws:cloudwatch/metricAlarm:MetricAlarm";

const consume: OutboxConsumerArgs["consume"] = (message) => [
    { Put: { TableName: "billing", Item: { PK: { S: `INVOICE#${message.outboxId}` }, SK: { S: "META" } } } },
];

async function declared(
    name: string,
    args: OutboxConsumerArgs,
): Promise<{ c: OutboxConsumer; mine: RecordedResource[] }> {
    const before = recorded.length;
    const c = new OutboxConsumer(name, args);
    await waitForRPCs();
    return { c, mine: recorded.slice(before) };
}

/** Each node is the recorded child of its name and type, or `undefined` exactly when no such child was recorded. */
async function assertNodes(name: string, c: OutboxConsumer, mine: RecordedResource[]): Promise<string[]> {
    const present: string[] = [];
    for (const [key, [suffix, type]] of Object.entries(NODE) as [keyof typeof NODE, [string, string]][]) {
        const child = mine.find((r) => r.type === type && r.name === `${name}-${suffix}`);
        const node = c.nodes[key] as pulumi.Resource | undefined;
        assert.equal(
            node !== undefined,
            child !== undefined,
            `nodes.${key} is there exactly when ${name}-${suffix} is`,
        );
        if (node === undefined) continue;
        present.push(key);
        assert.equal(await unwrap(node.urn), child!.urn, `nodes.${key} is ${name}-${suffix}`);
    }
    // In the nodes' documented order; the mocks record them in whatever order their registrations finish.
    const alarms = mine.filter((r) => r.type === ALARM_TYPE);
    const urns = await Promise.all(c.nodes.alarms.map((a) => unwrap(a.urn)));
    assert.deepEqual([...urns].sort(), alarms.map((a) => a.urn!).sort());
    if (urns.length > 0)
        assert.deepEqual(
            urns.map((u) => u.split("::").at(-1)),
            ["dlq-depth-alarm", "oldest-message-alarm", "errors-alarm"].map((s) => `${name}-${s}`),
        );
    return present;
}

describe("consumer.nodes", () => {
    it("from a topic: the queue, its subscription and policy, the DLQ, the table, the function, role, logs, both grants, the mapping, three alarms", async () => {
        const { c, mine } = await declared("cnsns", { destinationArn: DESTINATIONS.sns, consume });
        assert.deepEqual((await assertNodes("cnsns", c, mine)).sort(), [
            "consumePolicy",
            "dlq",
            "function",
            "inboxTable",
            "logs",
            "logsPolicy",
            "mapping",
            "queue",
            "queuePolicy",
            "role",
            "subscription",
        ]);
        assert.equal(c.nodes.alarms.length, 3);
    });

    it("from a queue: no queue, subscription, rule nor queue policy; the redrive policy on the destination queue", async () => {
        const { c, mine } = await declared("cnsqs", { destinationArn: DESTINATIONS.sqs, consume });
        const present = await assertNodes("cnsqs", c, mine);
        assert.ok(present.includes("redrivePolicy"));
        for (const absent of ["queue", "subscription", "rule", "target", "queuePolicy"] as const)
            assert.equal(c.nodes[absent], undefined, absent);
    });

    it("from a bus: the rule and its target, no subscription", async () => {
        const { c, mine } = await declared("cnbus", { destinationArn: DESTINATIONS.eventbridge, consume });
        const present = await assertNodes("cnbus", c, mine);
        assert.ok(present.includes("rule") && present.includes("target"));
        assert.equal(c.nodes.subscription, undefined);
    });

    it("the grant node's policy is consumerPolicy, with consumerPolicy's statements on the queue and the table", async () => {
        const { c, mine } = await declared("cngrant", { destinationArn: DESTINATIONS.sns, consume });
        const policy = await unwrap(c.nodes.consumePolicy!.policy);
        assert.equal(policy, await unwrap(c.consumerPolicy));
        assert.deepEqual(
            JSON.parse(policy),
            consumerPolicyDocument({
                queueArn: mine.find((r) => r.name === "cngrant-queue")!.computed!.arn,
                inboxTableArn: mine.find((r) => r.name === "cngrant-inbox")!.computed!.arn,
            }),
        );
        assert.equal(await unwrap(c.nodes.consumePolicy!.role), await unwrap(c.nodes.role!.name));
    });

    it("has each optional node exactly when its child was declared, whatever the args combine (property)", async () => {
        let run = 0;
        await fc.assert(
            fc.asyncProperty(
                fc.record({
                    kind: fc.constantFrom("sns", "sqs", "eventbridge") as fc.Arbitrary<keyof typeof DESTINATIONS>,
                    functionArn: fc.boolean(),
                    roleName: fc.boolean(),
                    table: fc.boolean(),
                    alarms: fc.boolean(),
                }),
                async (o) => {
                    run += 1;
                    const name = `cnprop${run}`;
                    const { c, mine } = await declared(name, {
                        destinationArn: DESTINATIONS[o.kind],
                        ...(o.functionArn
                            ? {
                                  functionArn: FUNCTION,
                                  ...(o.roleName ? { functionRoleName: "billing-java-role" } : {}),
                              }
                            : { consume }),
                        ...(o.table ? { inboxTableName: "billing-inbox" } : {}),
                        alarms: o.alarms,
                    });
                    await assertNodes(name, c, mine);
                    assert.equal(c.nodes.function === undefined, o.functionArn);
                    assert.equal(c.nodes.consumePolicy === undefined, o.functionArn && !o.roleName);
                    assert.equal(c.nodes.inboxTable === undefined, o.table);
                    assert.equal(c.nodes.queue === undefined, o.kind === "sqs");
                    assert.equal(c.nodes.alarms.length, o.alarms ? 3 : 0);
                },
            ),
            { numRuns: 12 },
        );
    });
});
