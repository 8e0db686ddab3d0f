/**
 * `OutboxConsumer` under Pulumi's mocks (issue 39): for each kind of destination (an SNS topic, standard and FIFO;
 * an SQS queue; an EventBridge bus), `new OutboxConsumer(name, { destinationArn, consume })` declares the wiring
 * docs/consumers.md writes by hand, every child a child of the component and named from it, and each grant scoped
 * to its one ARN. The same from a `StackReference` output, with `functionArn`, and with a given inbox table.
 */
import * as assert from "node:assert/strict";
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { OutboxConsumer, OUTBOX_CONSUMER_TYPE, type OutboxConsumerArgs } from "../../../components/consumer";
import { consumerPolicyDocument } from "../../../components/consumer-policy";
import * as packageEntry from "../../../index";
import { INBOX_ENV } from "../../../runtime/inbox/lambda";
import { INBOX_MARKER } from "../../../runtime/schema";
import { RecordedResource, STACK_REFERENCE_OUTPUTS, recordedNamed, unwrap } from "../../support/pulumi-mocks";
import { TYPE, waitForRPCs } from "../../support/component-harness";

const ACCOUNT = "111111111111";
const TOPIC = `arn:aws:sns:eu-west-1:${ACCOUNT}:orders-topic`;
const FIFO_TOPIC = `arn:aws:sns:eu-west-1:${ACCOUNT}:orders-topic.fifo`;
const QUEUE = `arn:aws:sqs:eu-west-1:${ACCOUNT}:orders-events`;
const BUS = `arn:aws:events:eu-west-1:${ACCOUNT}:event-bus/orders`;
const FUNCTION = `arn:aws:lambda:eu-west-1:${ACCOUNT}:function:billing-java`;

const T = {
    ...TYPE,
    consumer: OUTBOX_CONSUMER_TYPE,
    subscription: "aws:sns/topicSubscription:TopicSubscription",
    queuePolicy: "aws:sqs/queuePolicy:QueuePolicy",
    redrive: "aws:sqs/redrivePolicy:RedrivePolicy",
    rolePolicy: "aws:iam/rolePolicy:RolePolicy",
} as const;

const consume: OutboxConsumerArgs["consume"] = (message) => [
    { Put: { TableName: "billing", Item: { PK: { S: `INVOICE#${message.outboxId}` }, SK: { S: "META" } } } },
];

interface Built {
    consumer: OutboxConsumer;
    urn: string;
    resources: RecordedResource[];
    all(type: string): RecordedResource[];
    one(type: string, name?: string): RecordedResource;
}

async function build(name: string, args: OutboxConsumerArgs): Promise<Built> {
    const consumer = new OutboxConsumer(name, args);
    await waitForRPCs();
    const resources = recordedNamed(name);
    const all = (type: string) => resources.filter((r) => r.type === type);
    return {
        consumer,
        urn: await unwrap(consumer.urn),
        resources,
        all,
        one(type: string, childName?: string) {
            const found = all(type).filter((r) => childName === undefined || r.name === childName);
            assert.equal(found.length, 1, `one ${type}${childName ? ` ${childName}` : ""} in ${name}`);
            return found[0]!;
        },
    };
}

function statementsOf(policy: RecordedResource): { Sid: string; Action: string[]; Resource: string[] }[] {
    return JSON.parse(policy.inputs.policy).Statement;
}

/** What every kind declares alike: DLQ, table, the function with its role and grants, the mapping, the alarms. */
async function assertCommon(b: Built, name: string, queueArn: string, fifo: boolean): Promise<void> {
    for (const r of b.resources.filter((r) => r.type !== T.consumer)) {
        assert.equal(r.parent, b.urn, `${r.name} is a child of the component`);
        assert.ok(r.name.startsWith(`${name}-`), `${r.name} is named from the component`);
    }
    const dlq = b.one(T.queue, `${name}-dlq`);
    assert.equal(dlq.inputs.fifoQueue ?? false, fifo);
    const table = b.one(T.table, `${name}-inbox`);
    assert.equal(table.inputs.hashKey, INBOX_MARKER.partitionKey);
    assert.equal(table.inputs.rangeKey, INBOX_MARKER.sortKey);
    assert.deepEqual(table.inputs.ttl, { attributeName: INBOX_MARKER.ttl, enabled: true });
    const tableArn: string = table.computed!.arn;

    const fn = b.one(T.fn, `${name}-function`);
    assert.equal(fn.inputs.runtime, "nodejs22.x");
    assert.equal(fn.inputs.timeout, 60);
    assert.deepEqual(fn.inputs.environment.variables, {
        [INBOX_ENV.tableName]: table.computed!.name,
        [INBOX_ENV.consumer]: name,
    });
    const role = b.one(T.role, `${name}-role`);
    assert.equal(fn.inputs.role, role.computed!.arn);
    assert.equal(role.inputs.inlinePolicies, undefined, "the role's grants are RolePolicy children");
    const grant = b.one(T.rolePolicy, `${name}-consume-policy`);
    assert.equal(grant.inputs.role, role.computed!.name);
    assert.deepEqual(
        JSON.parse(grant.inputs.policy),
        consumerPolicyDocument({ queueArn, inboxTableArn: tableArn }),
        "exactly consumerPolicy's statements, on the one queue and the one table",
    );
    const logs = b.one(T.logGroup, `${name}-logs`);
    assert.deepEqual(
        statementsOf(b.one(T.rolePolicy, `${name}-logs-policy`)).map((s) => s.Resource),
        [[`${logs.computed!.arn}:*`]],
    );
    assert.equal(fn.inputs.loggingConfig.logGroup, logs.computed!.name);

    const mapping = b.one(T.mapping, `${name}-mapping`);
    assert.equal(mapping.inputs.eventSourceArn, queueArn);
    assert.equal(mapping.inputs.functionName, fn.computed!.arn);
    assert.deepEqual(mapping.inputs.functionResponseTypes, ["ReportBatchItemFailures"]);
    assert.equal(mapping.inputs.batchSize, 10);
    assert.equal(mapping.inputs.maximumBatchingWindowInSeconds, fifo ? undefined : 0);

    const alarms = b
        .all(T.alarm)
        .map((a) => [a.name, a.inputs.metricName, a.inputs.dimensions])
        .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    assert.deepEqual(alarms, [
        [`${name}-dlq-depth-alarm`, "ApproximateNumberOfMessagesVisible", { QueueName: dlq.computed!.name }],
        [`${name}-errors-alarm`, "Errors", { FunctionName: fn.computed!.name }],
        [`${name}-oldest-message-alarm`, "ApproximateAgeOfOldestMessage", { QueueName: queueArn.split(":")[5] }],
    ]);

    assert.equal(await unwrap(b.consumer.queueArn), queueArn);
    assert.equal(await unwrap(b.consumer.dlqUrl), dlq.computed!.url);
    assert.equal(await unwrap(b.consumer.functionName), fn.computed!.name);
    assert.equal(await unwrap(b.consumer.inboxTableName), table.computed!.name);
    assert.deepEqual(
        JSON.parse(await unwrap(b.consumer.consumerPolicy)),
        consumerPolicyDocument({ queueArn, inboxTableArn: tableArn }),
    );
}

/** The created queue: FIFO like the destination, redriven to the DLQ after 5 receives, visibility 6 × 60 s. */
function assertCreatedQueue(b: Built, name: string, fifo: boolean): RecordedResource {
    const queue = b.one(T.queue, `${name}-queue`);
    assert.equal(queue.inputs.fifoQueue ?? false, fifo);
    assert.equal(queue.inputs.visibilityTimeoutSeconds, 360);
    assert.deepEqual(JSON.parse(queue.inputs.redrivePolicy), {
        deadLetterTargetArn: b.one(T.queue, `${name}-dlq`).computed!.arn,
        maxReceiveCount: 5,
    });
    return queue;
}

/** The queue policy: only `service`, only SendMessage, only on the queue, only from `sourceArn`. */
function assertQueuePolicy(b: Built, name: string, queue: RecordedResource, service: string, sourceArn: string): void {
    const policy = b.one(T.queuePolicy, `${name}-queue-policy`);
    assert.equal(policy.inputs.queueUrl, queue.computed!.url);
    assert.deepEqual(JSON.parse(policy.inputs.policy).Statement, [
        {
            Sid: "OnlyTheOutboxDestination",
            Effect: "Allow",
            Principal: { Service: service },
            Action: "sqs:SendMessage",
            Resource: queue.computed!.arn,
            Condition: { ArnEquals: { "aws:SourceArn": sourceArn } },
        },
    ]);
}

describe("OutboxConsumer under Pulumi's mocks", () => {
    it("is exported from the package entry with its type token", () => {
        assert.equal(packageEntry.OutboxConsumer, OutboxConsumer);
        assert.equal(OUTBOX_CONSUMER_TYPE, "dynamodb-outbox:index:OutboxConsumer");
    });

    it("from an SNS topic: a queue subscribed with raw delivery, a queue policy for that topic only, and the rest", async () => {
        const b = await build("csns", { destinationArn: TOPIC, consume });
        const queue = assertCreatedQueue(b, "csns", false);
        const sub = b.one(T.subscription, "csns-subscription");
        assert.deepEqual(
            [sub.inputs.topic, sub.inputs.protocol, sub.inputs.endpoint, sub.inputs.rawMessageDelivery],
            [TOPIC, "sqs", queue.computed!.arn, true],
        );
        assert.equal(sub.inputs.filterPolicy, undefined);
        assertQueuePolicy(b, "csns", queue, "sns.amazonaws.com", TOPIC);
        assert.deepEqual(b.all(T.rule), []);
        await assertCommon(b, "csns", queue.computed!.arn, false);
        assert.equal(await unwrap(b.consumer.queueUrl), queue.computed!.url);
    });

    it("from an SNS FIFO topic: the queue and the DLQ are FIFO, and the mapping has no batching window", async () => {
        const b = await build("cfifo", { destinationArn: FIFO_TOPIC, consume });
        const queue = assertCreatedQueue(b, "cfifo", true);
        assert.equal(queue.inputs.contentBasedDeduplication, false);
        assertQueuePolicy(b, "cfifo", queue, "sns.amazonaws.com", FIFO_TOPIC);
        await assertCommon(b, "cfifo", queue.computed!.arn, true);
    });

    it("from an SQS queue: that queue is read as it is, its redrive policy set to the DLQ; no subscription, no queue policy", async () => {
        const b = await build("csqs", { destinationArn: QUEUE, consume });
        assert.deepEqual(
            b.all(T.queue).map((q) => q.name),
            ["csqs-dlq"],
        );
        const redrive = b.one(T.redrive, "csqs-redrive");
        assert.equal(redrive.inputs.queueUrl, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders-events`);
        assert.deepEqual(JSON.parse(redrive.inputs.redrivePolicy), {
            deadLetterTargetArn: b.one(T.queue, "csqs-dlq").computed!.arn,
            maxReceiveCount: 5,
        });
        assert.deepEqual([...b.all(T.subscription), ...b.all(T.queuePolicy), ...b.all(T.rule)], []);
        await assertCommon(b, "csqs", QUEUE, false);
        assert.equal(await unwrap(b.consumer.queueUrl), redrive.inputs.queueUrl);
    });

    it("from an EventBridge bus: a rule on that bus for the outbox's events, its target the queue, a queue policy for that rule only", async () => {
        const b = await build("cbus", { destinationArn: BUS, consume });
        const queue = assertCreatedQueue(b, "cbus", false);
        const rule = b.one(T.rule, "cbus-rule");
        assert.equal(rule.inputs.eventBusName, BUS);
        assert.deepEqual(JSON.parse(rule.inputs.eventPattern), { detail: { outbox: { id: [{ exists: true }] } } });
        const target = b.one(T.target, "cbus-target");
        assert.deepEqual(
            [target.inputs.rule, target.inputs.eventBusName, target.inputs.arn],
            [rule.computed!.name, BUS, queue.computed!.arn],
        );
        assertQueuePolicy(b, "cbus", queue, "events.amazonaws.com", rule.computed!.arn);
        assert.deepEqual(b.all(T.subscription), []);
        await assertCommon(b, "cbus", queue.computed!.arn, false);
    });

    it("takes a filter: the subscription's filter policy on a topic, the rule's pattern on a bus", async () => {
        const onTopic = await build("cfilt", {
            destinationArn: TOPIC,
            consume,
            filter: { "outbox.type": ["OrderPlaced"] },
        });
        assert.deepEqual(JSON.parse(onTopic.one(T.subscription).inputs.filterPolicy), {
            "outbox.type": ["OrderPlaced"],
        });
        const pattern = { source: ["com.example.orders"], "detail-type": ["OrderPlaced"] };
        const onBus = await build("cfiltb", { destinationArn: BUS, consume, filter: pattern });
        assert.deepEqual(JSON.parse(onBus.one(T.rule).inputs.eventPattern), pattern);
    });

    it("derives the visibility timeout from the function's timeout, and takes the batch and maxReceiveCount", async () => {
        const b = await build("ctune", {
            destinationArn: TOPIC,
            consume,
            timeout: 120,
            batchSize: 100,
            maximumBatchingWindowInSeconds: 5,
            maxReceiveCount: 8,
        });
        const queue = b.one(T.queue, "ctune-queue");
        assert.equal(queue.inputs.visibilityTimeoutSeconds, 720);
        assert.equal(JSON.parse(queue.inputs.redrivePolicy).maxReceiveCount, 8);
        assert.equal(b.one(T.fn).inputs.timeout, 120);
        const mapping = b.one(T.mapping);
        assert.deepEqual([mapping.inputs.batchSize, mapping.inputs.maximumBatchingWindowInSeconds], [100, 5]);
    });

    it("from another stack's StackReference output: type-checks, registers, and wires the ARN it resolves to", async () => {
        const ref = new pulumi.StackReference("acme/outbox/prod");
        const b = await build("cref", { destinationArn: ref.getOutput("destinationArn"), consume });
        const sub = b.one(T.subscription, "cref-subscription");
        assert.equal(sub.inputs.topic, STACK_REFERENCE_OUTPUTS.destinationArn);
        assertQueuePolicy(
            b,
            "cref",
            b.one(T.queue, "cref-queue"),
            "sns.amazonaws.com",
            STACK_REFERENCE_OUTPUTS.destinationArn!,
        );
        await assertCommon(b, "cref", b.one(T.queue, "cref-queue").computed!.arn, false);
    });

    it("with functionArn: no function nor role; the mapping calls that function, the grant goes to functionRoleName", async () => {
        const b = await build("cjava", {
            destinationArn: TOPIC,
            functionArn: FUNCTION,
            functionRoleName: "billing-java-role",
        });
        assert.deepEqual([...b.all(T.fn), ...b.all(T.role), ...b.all(T.logGroup)], []);
        assert.equal(b.one(T.mapping).inputs.functionName, FUNCTION);
        assert.equal(await unwrap(b.consumer.functionName), "billing-java");
        const grant = b.one(T.rolePolicy, "cjava-consume-policy");
        assert.equal(grant.inputs.role, "billing-java-role");
        const queueArn = b.one(T.queue, "cjava-queue").computed!.arn;
        assert.deepEqual(
            JSON.parse(grant.inputs.policy),
            consumerPolicyDocument({ queueArn, inboxTableArn: b.one(T.table).computed!.arn }),
        );
        assert.deepEqual(b.all(T.alarm).find((a) => a.inputs.metricName === "Errors")?.inputs.dimensions, {
            FunctionName: "billing-java",
        });
    });

    it("with functionArn and no role: declares no grant, and grantConsume(role) adds one with consumerPolicy's statements", async () => {
        const b = await build("cgrant", { destinationArn: QUEUE, functionArn: FUNCTION });
        assert.deepEqual(b.all(T.rolePolicy), []);
        const role = new aws.iam.Role("cgrant-app-role", {
            assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
        });
        const policy = b.consumer.grantConsume(role);
        b.consumer.grantConsume("other-role");
        await waitForRPCs();
        const grants = recordedNamed("cgrant")
            .filter((r) => r.type === T.rolePolicy)
            .sort((x, y) => x.name.localeCompare(y.name));
        assert.deepEqual(
            grants.map((g) => [g.name, g.inputs.role, g.parent]),
            [
                ["cgrant-consume-grant", "cgrant-app-role-abc", b.urn],
                ["cgrant-consume-grant-2", "other-role", b.urn],
            ],
        );
        const tableArn = b.one(T.table).computed!.arn;
        for (const g of grants) {
            assert.deepEqual(
                JSON.parse(g.inputs.policy),
                consumerPolicyDocument({ queueArn: QUEUE, inboxTableArn: tableArn }),
            );
        }
        assert.equal(await unwrap(policy.policy), await unwrap(b.consumer.consumerPolicy));
    });

    it("with inboxTableName: no table; the grant names that table in the function's account and region", async () => {
        const b = await build("cgiven", {
            destinationArn: TOPIC,
            consume,
            inboxTableName: "billing",
            consumerName: "billing-v1",
        });
        assert.deepEqual(b.all(T.table), []);
        const fn = b.one(T.fn);
        assert.deepEqual(fn.inputs.environment.variables, {
            [INBOX_ENV.tableName]: "billing",
            [INBOX_ENV.consumer]: "billing-v1",
        });
        const statements = JSON.parse(b.one(T.rolePolicy, "cgiven-consume-policy").inputs.policy).Statement;
        assert.deepEqual(statements[1].Resource, [`arn:aws:dynamodb:eu-west-1:${ACCOUNT}:table/billing`]);
        assert.equal(await unwrap(b.consumer.inboxTableName), "billing");
    });

    it("declares no alarm with alarms: false, and notifies alarmActions otherwise", async () => {
        const off = await build("cquiet", { destinationArn: TOPIC, consume, alarms: false });
        assert.deepEqual(off.all(T.alarm), []);
        const on = await build("cloud", { destinationArn: TOPIC, consume, alarmActions: [TOPIC] });
        for (const a of on.all(T.alarm))
            assert.deepEqual([a.inputs.alarmActions, a.inputs.okActions], [[TOPIC], [TOPIC]]);
    });
});
