/**
 * `outbox-encryption-at-rest` and the outbox's destination (issue 25): when the outbox table uses a customer managed
 * key, the topic, queue or event bus the publisher's environment names, declared in the same stack, must use a KMS
 * key too. Stacks recorded under the mocks: an Outbox with a key, publishing to a queue or a bus declared beside it.
 */
import * as assert from "node:assert/strict";
import * as aws from "@pulumi/aws";
import { outboxPolicies } from "../../../policy/outbox-policies";
import { encryptionAtRestViolations } from "../../../policy/security";
import { ENV } from "../../../runtime/config";
import { RecordedResource, recordedNamed } from "../../support/pulumi-mocks";
import { TYPE, buildOutbox, waitForRPCs } from "../../support/component-harness";
import { policyResources, violationsOf } from "../../support/policy/bridge";

const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
const BUS_TYPE = "aws:cloudwatch/eventBus:EventBus";

/** An Outbox named `name` publishing to the destination `declare` makes (named `<name>-events`), with its stack. */
async function stackWith(
    name: string,
    declare: () => { arn: aws.sqs.Queue["arn"] },
    kind: "queueArn" | "eventBusArn",
    kmsKeyArn?: string,
): Promise<RecordedResource[]> {
    const destination = declare();
    await buildOutbox(name, { [kind]: destination.arn, ...(kmsKeyArn !== undefined ? { kmsKeyArn } : {}) });
    await waitForRPCs();
    return recordedNamed(name);
}

function messages(resources: RecordedResource[]): string[] {
    return encryptionAtRestViolations(policyResources(resources)).map((v) => v.message);
}

function change(
    resources: RecordedResource[],
    type: string,
    f: (inputs: Record<string, any>) => Record<string, any>,
): RecordedResource[] {
    return resources.map((r) =>
        r.type === type && r.name.endsWith("-events") ? { ...r, inputs: f({ ...r.inputs }) } : r,
    );
}

describe("outbox-encryption-at-rest: the outbox's destination", function () {
    let queueStack: RecordedResource[];
    let busStack: RecordedResource[];

    before(async function () {
        queueStack = await stackWith(
            "polq",
            () => new aws.sqs.Queue("polq-events", { kmsMasterKeyId: KMS_KEY }),
            "queueArn",
            KMS_KEY,
        );
        busStack = await stackWith(
            "polbus",
            () => new aws.cloudwatch.EventBus("polbus-events", { kmsKeyIdentifier: KMS_KEY }),
            "eventBusArn",
            KMS_KEY,
        );
    });

    it("finds the destination by the ARN the publisher's environment names", function () {
        const queueArn = queueStack.find((r) => r.name === "polq-events")?.computed?.arn;
        assert.equal(
            queueStack.find((r) => r.name === "polq-publisher")?.inputs.environment.variables[ENV.queueArn],
            queueArn,
        );
        const busArn = busStack.find((r) => r.name === "polbus-events")?.computed?.arn;
        assert.match(String(busArn), /^arn:aws:events:eu-west-1:111111111111:event-bus\/polbus-events-abc$/);
        assert.equal(
            busStack.find((r) => r.name === "polbus-publisher")?.inputs.environment.variables[ENV.eventBusArn],
            busArn,
        );
    });

    it("passes a queue and a bus that use a KMS key, and the whole pack has nothing to say about either stack", async function () {
        assert.deepEqual(messages(queueStack), []);
        assert.deepEqual(messages(busStack), []);
        assert.deepEqual(await violationsOf(outboxPolicies, queueStack), []);
        assert.deepEqual(await violationsOf(outboxPolicies, busStack), []);
    });

    it("flags a destination queue without kmsMasterKeyId while the table has a customer managed key", function () {
        const bare = change(queueStack, TYPE.queue, ({ kmsMasterKeyId, ...rest }) => rest);
        const violations = encryptionAtRestViolations(policyResources(bare));
        assert.deepEqual(
            violations.map((v) => v.message),
            [
                `outbox destination queue "polq-events" has no kmsMasterKeyId while outbox table "polq-table" is encrypted with the customer managed key ${KMS_KEY}; set kmsMasterKeyId to a customer managed key, and give the Outbox that key as destinationKmsKeyArn unless it is kmsKeyArn`,
            ],
        );
        assert.match(violations[0]!.urn, /::polq-events$/);
        // The DLQ, found by the mapping and not by the environment, is still judged by the DLQ's own rule.
        const both = bare.map((r) =>
            r.name === "polq-dlq" ? { ...r, inputs: { ...r.inputs, kmsMasterKeyId: undefined } } : r,
        );
        const judged = messages(both);
        assert.equal(judged.length, 2, judged.join("\n"));
        assert.match(judged[0]!, /^outbox DLQ "polq-dlq" uses SSE-SQS while outbox table "polq-table"/);
        assert.match(judged[1]!, /^outbox destination queue "polq-events" has no kmsMasterKeyId/);
    });

    it("flags an event bus without kmsKeyIdentifier (its KMS property in @pulumi/aws 7.x)", function () {
        const bare = change(busStack, BUS_TYPE, ({ kmsKeyIdentifier, ...rest }) => rest);
        assert.deepEqual(messages(bare), [
            `outbox event bus "polbus-events" has no kmsKeyIdentifier while outbox table "polbus-table" is encrypted with the customer managed key ${KMS_KEY}; set kmsKeyIdentifier to a customer managed key, and give the Outbox that key as destinationKmsKeyArn unless it is kmsKeyArn`,
        ]);
        assert.deepEqual(
            messages(change(busStack, BUS_TYPE, (inputs) => ({ ...inputs, kmsKeyIdentifier: "" }))).length,
            1,
            "an empty key is no key",
        );
    });

    it("says nothing of a destination without a key when the table has no customer managed key", async function () {
        const plain = await stackWith("polqplain", () => new aws.sqs.Queue("polqplain-events", {}), "queueArn");
        const plainBus = await stackWith(
            "polbusplain",
            () => new aws.cloudwatch.EventBus("polbusplain-events", {}),
            "eventBusArn",
        );
        assert.deepEqual(messages(plain), []);
        assert.deepEqual(messages(plainBus), []);
    });

    it("judges only a destination declared in the stack: one declared elsewhere is not found", function () {
        const elsewhere = queueStack.filter((r) => r.name !== "polq-events");
        assert.deepEqual(messages(elsewhere), []);
    });
});
