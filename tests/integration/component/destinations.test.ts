/**
 * The Outbox's three destinations under Pulumi's mocks (issue 25): the SNS topic (created, or `topicArn`), an SQS
 * queue (`queueArn`) and an EventBridge bus (`eventBusArn`). Which children exist, both functions' environment and
 * grants, the outputs, and the text that names the destination.
 */
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { Outbox, type OutboxArgs } from "../../../components/outbox";
import { ENV } from "../../../runtime/config";
import { recordedNamed, unwrap } from "../../support/pulumi-mocks";
import { BuiltOutbox, TYPE, buildOutbox, commonEnvironment, waitForRPCs } from "../../support/component-harness";

const ACCOUNT = "111111111111";
const QUEUE = `arn:aws:sqs:eu-west-1:${ACCOUNT}:orders-events.fifo`;
const STANDARD_QUEUE = `arn:aws:sqs:eu-west-1:${ACCOUNT}:orders-events`;
const BUS = `arn:aws:events:eu-west-1:${ACCOUNT}:event-bus/orders`;
const TOPIC = `arn:aws:sns:eu-west-1:${ACCOUNT}:shared-events`;
const KMS_KEY = `arn:aws:kms:eu-west-1:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
const DESTINATION_KEY = `arn:aws:kms:eu-west-1:${ACCOUNT}:key/9999abcd-12ab-34cd-56ef-1234567890ab`;

interface Statement {
    Sid: string;
    Effect: string;
    Action: string[];
    Resource: string[];
}

/** A role's inline policy statements. */
function statements(built: BuiltOutbox, role: string): Statement[] {
    return JSON.parse(built.one(TYPE.role, role).inputs.inlinePolicies[0].policy).Statement;
}

/** `action → resources` of every statement whose action starts with one of `prefixes`. */
function grantsOn(built: BuiltOutbox, role: string, prefixes: string[]): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const s of statements(built, role))
        for (const a of s.Action)
            if (prefixes.some((p) => a.startsWith(p))) out[a] = [...(out[a] ?? []), ...s.Resource].sort();
    return out;
}

/** Each function's environment variables. */
function environments(built: BuiltOutbox, name: string): Record<string, string>[] {
    return ["publisher", "sweeper"].map((fn) => built.one(TYPE.fn, `${name}-${fn}`).inputs.environment.variables);
}

const DESTINATION_PREFIXES = ["sns:", "sqs:", "events:"];

describe("Outbox destinations", () => {
    let bus: BuiltOutbox;
    let queue: BuiltOutbox;
    let sns: BuiltOutbox;
    let dlqArns: Record<string, string>;

    before(async () => {
        bus = await buildOutbox("destbus", { eventBusArn: BUS });
        queue = await buildOutbox("destq", { queueArn: QUEUE, fifo: true });
        sns = await buildOutbox("destsns");
        dlqArns = {
            destbus: await unwrap(bus.outbox.dlqArn),
            destq: await unwrap(queue.outbox.dlqArn),
            destsns: await unwrap(sns.outbox.dlqArn),
        };
    });

    describe("an EventBridge bus (eventBusArn)", () => {
        it("declares no topic", () => {
            assert.deepEqual(
                bus.resources.filter((r) => r.type === TYPE.topic),
                [],
            );
        });

        it("grants both functions events:PutEvents (and DescribeEventBus, the cold start's check) on that bus only: no sns:Publish, no sqs:SendMessage but the DLQ's", () => {
            for (const role of ["destbus-publisher-role", "destbus-sweeper-role"]) {
                assert.deepEqual(grantsOn(bus, role, DESTINATION_PREFIXES), {
                    "events:DescribeEventBus": [BUS],
                    "events:PutEvents": [BUS],
                    "sqs:SendMessage": [dlqArns.destbus!],
                });
                assert.deepEqual(
                    statements(bus, role).find((s) => s.Sid === "PutEventsOnBus"),
                    {
                        Sid: "PutEventsOnBus",
                        Effect: "Allow",
                        Action: ["events:PutEvents", "events:DescribeEventBus"],
                        Resource: [BUS],
                    },
                );
            }
        });

        it("names the bus in both functions' environment, with the default event source, and no other destination", async () => {
            const expected = {
                ...(await commonEnvironment(bus, false)),
                [ENV.eventBusArn]: BUS,
                [ENV.eventSource]: "dynamodb-outbox",
                [ENV.checkEventBus]: "true",
            };
            for (const env of environments(bus, "destbus")) assert.deepEqual(env, expected);
        });

        it("sets OUTBOX_EVENT_SOURCE from eventSource, and OUTBOX_CHECK_EVENT_BUS from checkEventBus", async () => {
            const custom = await buildOutbox("destbussrc", {
                eventBusArn: BUS,
                eventSource: "com.acme.orders",
                checkEventBus: false,
            });
            for (const env of environments(custom, "destbussrc")) {
                assert.equal(env[ENV.eventSource], "com.acme.orders");
                assert.equal(env[ENV.eventBusArn], BUS);
                assert.equal(env[ENV.checkEventBus], "false");
            }
        });

        it("resolves destinationArn to the bus and topicArn to undefined", async () => {
            assert.equal(await unwrap(bus.outbox.destinationArn), BUS);
            assert.equal(await unwrap(bus.outbox.topicArn), undefined);
        });

        it("takes the bus as an Output (a StackReference's, say) and grants and names its resolved ARN", async () => {
            const out = await buildOutbox("destbusout", { eventBusArn: pulumi.output(BUS) });
            assert.equal(out.resources.filter((r) => r.type === TYPE.topic).length, 0);
            assert.deepEqual(grantsOn(out, "destbusout-publisher-role", ["events:"]), {
                "events:DescribeEventBus": [BUS],
                "events:PutEvents": [BUS],
            });
            for (const env of environments(out, "destbusout")) assert.equal(env[ENV.eventBusArn], BUS);
            assert.equal(await unwrap(out.outbox.destinationArn), BUS);
        });
    });

    describe("an SQS queue (queueArn)", () => {
        it("declares no topic, and only the DLQ as a queue", () => {
            assert.deepEqual(
                queue.resources.filter((r) => r.type === TYPE.topic),
                [],
            );
            assert.deepEqual(
                queue.resources.filter((r) => r.type === TYPE.queue).map((r) => r.name),
                ["destq-dlq"],
            );
        });

        it("grants both functions sqs:SendMessage on that queue and on the DLQ only, each its own statement", () => {
            for (const role of ["destq-publisher-role", "destq-sweeper-role"]) {
                assert.deepEqual(grantsOn(queue, role, DESTINATION_PREFIXES), {
                    "sqs:SendMessage": [QUEUE, dlqArns.destq!].sort(),
                });
                const sends = statements(queue, role).filter((s) => s.Action.includes("sqs:SendMessage"));
                assert.deepEqual(
                    sends.map((s) => [s.Sid, s.Resource]),
                    [
                        ["SendToQueue", [QUEUE]],
                        ["SendToDeadLetterQueue", [dlqArns.destq]],
                    ],
                );
            }
        });

        it("names the queue in both functions' environment, FIFO, and no other destination", async () => {
            const expected = { ...(await commonEnvironment(queue, true)), [ENV.queueArn]: QUEUE };
            for (const env of environments(queue, "destq")) assert.deepEqual(env, expected);
        });

        it("names a standard queue with OUTBOX_FIFO false", async () => {
            const standard = await buildOutbox("destqstd", { queueArn: STANDARD_QUEUE });
            const expected = { ...(await commonEnvironment(standard, false)), [ENV.queueArn]: STANDARD_QUEUE };
            for (const env of environments(standard, "destqstd")) assert.deepEqual(env, expected);
        });

        it("resolves destinationArn to the queue and topicArn to undefined", async () => {
            assert.equal(await unwrap(queue.outbox.destinationArn), QUEUE);
            assert.equal(await unwrap(queue.outbox.topicArn), undefined);
        });

        it("ignores transform.topic: there is no topic to merge it into", async () => {
            const tr = await buildOutbox("destqtr", {
                queueArn: STANDARD_QUEUE,
                transform: { topic: { displayName: "x" } },
            });
            assert.deepEqual(
                tr.resources.filter((r) => r.type === TYPE.topic),
                [],
            );
        });
    });

    describe("the SNS topic (the default)", () => {
        it("creates the topic, and publishes to it: destinationArn and topicArn are its ARN", async () => {
            const topic = sns.one(TYPE.topic, "destsns-topic");
            const arn = `arn:aws:sns:eu-west-1:${ACCOUNT}:destsns-topic-abc`;
            assert.equal(topic.computed?.arn, arn);
            assert.equal(await unwrap(sns.outbox.destinationArn), arn);
            assert.equal(await unwrap(sns.outbox.topicArn), arn);
            const expected = { ...(await commonEnvironment(sns, false)), [ENV.topicArn]: arn };
            for (const env of environments(sns, "destsns")) assert.deepEqual(env, expected);
            for (const role of ["destsns-publisher-role", "destsns-sweeper-role"])
                assert.deepEqual(grantsOn(sns, role, DESTINATION_PREFIXES), {
                    "sns:Publish": [arn],
                    "sqs:SendMessage": [dlqArns.destsns!],
                });
        });

        it("publishes to a given topic: no topic declared, destinationArn and topicArn are the given ARN", async () => {
            const given = await buildOutbox("destsnsgiven", { topicArn: TOPIC });
            assert.equal(given.resources.filter((r) => r.type === TYPE.topic).length, 0);
            assert.equal(await unwrap(given.outbox.destinationArn), TOPIC);
            assert.equal(await unwrap(given.outbox.topicArn), TOPIC);
            for (const env of environments(given, "destsnsgiven")) assert.equal(env[ENV.topicArn], TOPIC);
        });
    });

    it("declares the default's children but the topic with a queue or a bus, and nothing on the destination itself", () => {
        const children = (built: BuiltOutbox, name: string) =>
            built.resources.map((r) => `${r.type} ${r.name.slice(name.length)}`).sort();
        const withoutTopic = children(sns, "destsns").filter((c) => c !== `${TYPE.topic} -topic`);
        assert.equal(withoutTopic.length, children(sns, "destsns").length - 1);
        assert.deepEqual(children(queue, "destq"), withoutTopic);
        assert.deepEqual(children(bus, "destbus"), withoutTopic);
    });

    it("refuses two destinations with INVALID_CONFIG before any resource is registered, the component included", async () => {
        const pairs: [string, OutboxArgs][] = [
            ["desttwoa", { topicArn: TOPIC, queueArn: STANDARD_QUEUE }],
            ["desttwob", { queueArn: STANDARD_QUEUE, eventBusArn: pulumi.output(BUS) }],
            ["desttwoc", { topicArn: pulumi.output(TOPIC), eventBusArn: BUS }],
        ];
        for (const [name, args] of pairs) {
            assert.throws(
                () => new Outbox(name, args),
                (e: any) =>
                    e.code === "INVALID_CONFIG" &&
                    e.message.startsWith(`Outbox "${name}" has 1 invalid arg:`) &&
                    /is given too: an outbox publishes to exactly one of topicArn, queueArn and eventBusArn/.test(
                        e.message,
                    ),
                name,
            );
        }
        await waitForRPCs();
        assert.deepEqual(
            pairs.flatMap(([name]) => recordedNamed(name).map((r) => r.name)),
            [],
        );
    });

    it("grants kms:GenerateDataKey* and kms:Decrypt on destinationKmsKeyArn, beside kmsKeyArn, and one statement when they are the same key", async () => {
        const keyed = await buildOutbox("destkms", {
            queueArn: STANDARD_QUEUE,
            kmsKeyArn: KMS_KEY,
            destinationKmsKeyArn: DESTINATION_KEY,
        });
        const same = await buildOutbox("destkmssame", {
            eventBusArn: BUS,
            kmsKeyArn: KMS_KEY,
            destinationKmsKeyArn: KMS_KEY,
        });
        const onlyDestination = await buildOutbox("destkmsonly", {
            topicArn: TOPIC,
            destinationKmsKeyArn: DESTINATION_KEY,
        });
        for (const fn of ["publisher", "sweeper"]) {
            assert.deepEqual(grantsOn(keyed, `destkms-${fn}-role`, ["kms:"]), {
                "kms:Decrypt": [DESTINATION_KEY, KMS_KEY].sort(),
                "kms:GenerateDataKey*": [DESTINATION_KEY, KMS_KEY].sort(),
            });
            assert.deepEqual(
                statements(keyed, `destkms-${fn}-role`)
                    .filter((s) => s.Action.some((a) => a.startsWith("kms:")))
                    .map((s) => [s.Sid, s.Resource]),
                [
                    ["UseOutboxKey", [KMS_KEY]],
                    ["UseDestinationKey", [DESTINATION_KEY]],
                ],
            );
            assert.deepEqual(grantsOn(same, `destkmssame-${fn}-role`, ["kms:"]), {
                "kms:Decrypt": [KMS_KEY],
                "kms:GenerateDataKey*": [KMS_KEY],
            });
            assert.deepEqual(grantsOn(onlyDestination, `destkmsonly-${fn}-role`, ["kms:"]), {
                "kms:Decrypt": [DESTINATION_KEY],
                "kms:GenerateDataKey*": [DESTINATION_KEY],
            });
        }
        // The destination's key is the functions' alone: the writer never publishes.
        assert.doesNotMatch(await unwrap(keyed.outbox.writerPolicy), new RegExp(DESTINATION_KEY));
    });

    it("keeps every destination action out of writerPolicy, for each kind: the writer never publishes", async () => {
        for (const [name, built] of [
            ["destsns", sns],
            ["destq", queue],
            ["destbus", bus],
        ] as const) {
            const doc = JSON.parse(await unwrap(built.outbox.writerPolicy)) as { Statement: Statement[] };
            const actions = doc.Statement.flatMap((s) => s.Action);
            assert.deepEqual(
                actions.filter((a) => DESTINATION_PREFIXES.some((p) => a.startsWith(p))),
                [],
                name,
            );
            assert.deepEqual(actions.sort(), ["dynamodb:PutItem", "dynamodb:UpdateItem"]);
        }
    });

    it("says the destination in the publisher's description and the age-at-publish alarm, for each kind", async () => {
        for (const [built, name, label] of [
            [sns, "destsns", "SNS"],
            [queue, "destq", "SQS"],
            [bus, "destbus", "EventBridge"],
        ] as const) {
            assert.equal(
                built.one(TYPE.fn, `${name}-publisher`).inputs.description,
                `Publishes the ${name} outbox's records from the table stream to ${label}`,
            );
            assert.match(
                built.one(TYPE.alarm, `${name}-age-at-publish-alarm`).inputs.alarmDescription,
                new RegExp(`Check the publisher's IteratorAge, throttles and ${label} errors`),
            );
        }
    });
});
