/**
 * `outbox-consumer-queue` on the resources `OutboxConsumer`s record under the mocks: none for what the component
 * declares, and one for each half a change makes wrong (the redrive policy to a DLQ; the visibility timeout against
 * 6 × the function's timeout). A consumer wired by hand is out of its scope.
 */
import * as assert from "node:assert/strict";
import * as aws from "@pulumi/aws";
import * as fc from "fast-check";
import { OutboxConsumer, type OutboxConsumerArgs } from "../../../components/consumer";
import {
    AWS_DEFAULT_SECONDS,
    REDRIVE_POLICY_TYPE,
    consumerQueueViolations,
    declaredInsideOutboxConsumer,
    outboxPolicies,
} from "../../../policy/outbox-policies";
import { waitForRPCs } from "../../support/component-harness";
import { policyResources, violationsOf } from "../../support/policy/bridge";
import { recorded, type RecordedResource } from "../../support/pulumi-mocks";

const ACCOUNT = "111111111111";
const TOPIC = `arn:aws:sns:eu-west-1:${ACCOUNT}:orders-topic`;
const QUEUE = `arn:aws:sqs:eu-west-1:${ACCOUNT}:orders-events`;
const FUNCTION = `arn:aws:lambda:eu-west-1:${ACCOUNT}:function:billing-java`;
const QUEUE_TYPE = "aws:sqs/queue:Queue";
const FUNCTION_TYPE = "aws:lambda/function:Function";

const consume: OutboxConsumerArgs["consume"] = (message) => [
    { Put: { TableName: "billing", Item: { PK: { S: `INVOICE#${message.outboxId}` }, SK: { S: "META" } } } },
];

async function declared(name: string, args: OutboxConsumerArgs): Promise<RecordedResource[]> {
    const before = recorded.length;
    new OutboxConsumer(name, args);
    await waitForRPCs();
    return recorded.slice(before);
}

const queueViolations = async (resources: RecordedResource[]) =>
    (await violationsOf(outboxPolicies, resources)).filter((v) => v.startsWith("outbox-consumer-queue:"));

/** `resources` with the inputs of the one resource of `type` named `name` changed by `edit`. */
function change(
    resources: RecordedResource[],
    type: string,
    name: string,
    edit: (inputs: Record<string, any>) => Record<string, any>,
): RecordedResource[] {
    assert.equal(resources.filter((r) => r.type === type && r.name === name).length, 1, `one ${type} ${name}`);
    return resources.map((r) => (r.type === type && r.name === name ? { ...r, inputs: edit({ ...r.inputs }) } : r));
}

describe("outbox-consumer-queue", () => {
    let topic: RecordedResource[];
    let fromQueue: RecordedResource[];
    before(async () => {
        topic = await declared("pcq", { destinationArn: TOPIC, consume, timeout: 20 });
        fromQueue = await declared("pcqq", { destinationArn: QUEUE, consume });
    });

    it("finds nothing wrong with what OutboxConsumer declares: from a topic, from a queue, with functionArn", async () => {
        assert.deepEqual(await queueViolations(topic), []);
        assert.deepEqual(await queueViolations(fromQueue), []);
        assert.deepEqual(
            await queueViolations(await declared("pcqf", { destinationArn: TOPIC, functionArn: FUNCTION })),
            [],
        );
        assert.ok(topic.some((r) => r.type === "aws:lambda/eventSourceMapping:EventSourceMapping"));
        assert.ok(
            topic
                .filter((r) => r.type !== "dynamodb-outbox:index:OutboxConsumer")
                .every((r) => declaredInsideOutboxConsumer(r.urn!)),
        );
    });

    describe("the redrive policy to a DLQ", () => {
        it("flags the consumer's queue without a redrive policy, on the queue", async () => {
            const v = await violationsOf(
                outboxPolicies,
                change(topic, QUEUE_TYPE, "pcq-queue", ({ redrivePolicy: _, ...rest }) => rest),
            );
            assert.deepEqual(
                v.filter((x) => x.startsWith("outbox-consumer-queue:")),
                [
                    'outbox-consumer-queue: consumer queue "pcq-queue" (read by mapping "pcq-mapping") has no redrive policy; a message that fails every receive is retried until its retention ends, then lost: give it a redrivePolicy with a deadLetterTargetArn and a maxReceiveCount (the OutboxConsumer component does)',
                ],
            );
        });

        it("flags a redrive policy without a deadLetterTargetArn, or with a maxReceiveCount of 0, and one that is not JSON", async () => {
            for (const [policy, says] of [
                [JSON.stringify({ maxReceiveCount: 5 }), /has a redrive policy without a deadLetterTargetArn/],
                [
                    JSON.stringify({ deadLetterTargetArn: `${QUEUE}-dlq`, maxReceiveCount: 0 }),
                    /has a redrive policy without a maxReceiveCount of at least 1/,
                ],
                ["{", /has a redrive policy that is not JSON/],
            ] as const) {
                const v = await queueViolations(
                    change(topic, QUEUE_TYPE, "pcq-queue", (i) => ({ ...i, redrivePolicy: policy })),
                );
                assert.equal(v.length, 1, String(policy));
                assert.match(v[0]!, says);
            }
        });

        it("flags a destination queue read as it is whose RedrivePolicy is gone, on the mapping, naming the queue's ARN", async () => {
            assert.ok(fromQueue.some((r) => r.type === REDRIVE_POLICY_TYPE));
            assert.deepEqual(await queueViolations(fromQueue.filter((r) => r.type !== REDRIVE_POLICY_TYPE)), [
                `outbox-consumer-queue: the queue consumer mapping "pcqq-mapping" reads (${QUEUE}) has no redrive policy; a message that fails every receive is retried until its retention ends, then lost: give it a redrivePolicy with a deadLetterTargetArn and a maxReceiveCount (the OutboxConsumer component does)`,
            ]);
        });
    });

    describe("the visibility timeout against the function's timeout", () => {
        it("passes at exactly 6 × the timeout and flags one second less, naming both figures", async () => {
            const at = (seconds: number) =>
                queueViolations(
                    change(topic, QUEUE_TYPE, "pcq-queue", (i) => ({ ...i, visibilityTimeoutSeconds: seconds })),
                );
            assert.deepEqual(await at(120), []);
            assert.deepEqual(await at(119), [
                'outbox-consumer-queue: consumer queue "pcq-queue" (read by mapping "pcq-mapping") has a visibility timeout of 119 s, below 6 × the timeout of function "pcq-function" (20 s) = 120 s; a message of a batch still in flight is handed out again: set visibilityTimeoutSeconds to at least 120 (the OutboxConsumer component sets 6 × timeout)',
            ]);
        });

        it("flags a function timeout raised past the queue's sixth, and counts an absent setting as AWS's default", async () => {
            const raised = change(topic, FUNCTION_TYPE, "pcq-function", (i) => ({ ...i, timeout: 21 }));
            assert.match((await queueViolations(raised))[0] ?? "", /visibility timeout of 120 s, below .* = 126 s/);
            const noVisibility = change(topic, QUEUE_TYPE, "pcq-queue", ({ visibilityTimeoutSeconds: _, ...i }) => i);
            assert.match(
                (await queueViolations(noVisibility))[0] ?? "",
                new RegExp(`visibility timeout of ${AWS_DEFAULT_SECONDS.visibilityTimeout} s, below`),
            );
            const noTimeout = change(
                change(topic, FUNCTION_TYPE, "pcq-function", ({ timeout: _, ...i }) => i),
                QUEUE_TYPE,
                "pcq-queue",
                (i) => ({ ...i, visibilityTimeoutSeconds: 6 * AWS_DEFAULT_SECONDS.functionTimeout }),
            );
            assert.deepEqual(await queueViolations(noTimeout), [], "6 × Lambda's default of 3 s");
        });

        it("is judged exactly when the visibility timeout is below 6 × the function's timeout (property)", async () => {
            const views = policyResources(topic);
            const queue = views.find((r) => r.type === QUEUE_TYPE && r.name === "pcq-queue")!;
            const fn = views.find((r) => r.type === FUNCTION_TYPE)!;
            fc.assert(
                fc.property(fc.integer({ min: 1, max: 900 }), fc.integer({ min: 0, max: 43_200 }), (t, v) => {
                    queue.props.visibilityTimeoutSeconds = v;
                    fn.props.timeout = t;
                    const found = consumerQueueViolations(views);
                    return found.length === (v < 6 * t ? 1 : 0);
                }),
            );
        });
    });

    it("leaves alone a consumer wired by hand: no DLQ, a visibility timeout equal to the function's", async () => {
        const before = recorded.length;
        const queue = new aws.sqs.Queue("handq", { visibilityTimeoutSeconds: 30 });
        const fn = new aws.lambda.Function("handq", {
            role: "arn:aws:iam::111111111111:role/r",
            runtime: "nodejs22.x",
            handler: "index.handler",
            timeout: 30,
        });
        new aws.lambda.EventSourceMapping("handq", { eventSourceArn: queue.arn, functionName: fn.arn });
        await waitForRPCs();
        assert.deepEqual(await queueViolations(recorded.slice(before)), []);
    });

    it("judges nothing it does not know yet: a redrive policy or a visibility timeout unknown in a preview", () => {
        class UnknownValueError extends Error {}
        const unknown = (views: ReturnType<typeof policyResources>, type: string, name: string, property: string) => {
            const r = views.find((x) => x.type === type && x.name === name)!;
            Object.defineProperty(r.props, property, {
                get: () => {
                    throw new UnknownValueError(property);
                },
            });
            return views;
        };
        const bad = change(
            change(topic, QUEUE_TYPE, "pcq-queue", (i) => ({ ...i, redrivePolicy: undefined })),
            QUEUE_TYPE,
            "pcq-queue",
            (i) => ({ ...i, visibilityTimeoutSeconds: 1 }),
        );
        assert.equal(consumerQueueViolations(policyResources(bad)).length, 2, "both halves, when known");
        const views = unknown(
            unknown(policyResources(bad), QUEUE_TYPE, "pcq-queue", "redrivePolicy"),
            QUEUE_TYPE,
            "pcq-queue",
            "visibilityTimeoutSeconds",
        );
        assert.deepEqual(consumerQueueViolations(views), []);
    });
});
