/**
 * `outbox.grantWrite(role)` and `outbox.grantReadPayloads(role)` under Pulumi's mocks: each declares one
 * `aws.iam.RolePolicy`, a child of the outbox, on the role given (a resource, a name, or a name that is an Output),
 * whose policy is exactly the `writerPolicy` / `readerPolicy` output; the names it derives; its refusals; and the
 * policy pack finds nothing to say about the grants.
 */
import * as assert from "node:assert/strict";
import * as fc from "fast-check";
import * as pulumi from "@pulumi/pulumi";
import * as aws from "../../../components/aws";
import { grantName } from "../../../components/grants";
import { readerPolicyDocument } from "../../../components/payload-bucket";
import { isOutboxError } from "../../../runtime/errors";
import { outboxPolicies } from "../../../policy/outbox-policies";
import { TYPE, buildOutbox, waitForRPCs } from "../../support/component-harness";
import { recorded, unwrap, type RecordedResource } from "../../support/pulumi-mocks";
import { violationsOf } from "../../support/policy/bridge";

const ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";
const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/** The one RolePolicy recorded under `name`, once every registration reached the mocks. */
async function rolePolicy(name: string): Promise<RecordedResource> {
    await waitForRPCs();
    const found = recorded.filter((r) => r.type === ROLE_POLICY && r.name === name);
    assert.equal(found.length, 1, `one RolePolicy named ${name}`);
    return found[0]!;
}

function invalidConfig(pattern: RegExp): (err: unknown) => boolean {
    return (err) => isOutboxError(err, "INVALID_CONFIG") && pattern.test((err as Error).message);
}

describe("outbox.grantWrite and outbox.grantReadPayloads", () => {
    it("grantWrite(role resource): a RolePolicy, child of the outbox, on the role's name, whose policy is writerPolicy", async () => {
        const built = await buildOutbox("grw", { largePayloads: true, kmsKeyArn: KMS_KEY });
        const role = new aws.iam.Role("grw-app", {
            assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
        });
        const policy = built.outbox.grantWrite(role);
        const r = await rolePolicy("grw-grant-write-grw-app");
        assert.equal(r.parent, built.one(TYPE.outbox).urn, "a child of the outbox");
        assert.equal(r.inputs.role, await unwrap(role.name));
        const writer = await unwrap(built.outbox.writerPolicy);
        assert.equal(r.inputs.policy, writer, "the writerPolicy output's very JSON");
        assert.deepEqual(
            (JSON.parse(r.inputs.policy as string) as { Statement: { Sid: string }[] }).Statement.map((s) => s.Sid),
            ["WriteOutboxRecords", "PutOutboxPayloads", "UseOutboxKey"],
            "the statements writerPolicy has with a payload bucket and a key",
        );
        assert.equal(await unwrap(policy.policy), writer);
    });

    it("grantWrite(role name) derives its name from the outbox and the role; an explicit name wins", async () => {
        const built = await buildOutbox("grn");
        built.outbox.grantWrite("orders-api-role");
        const derived = await rolePolicy("grn-grant-write-orders-api-role");
        assert.equal(derived.inputs.role, "orders-api-role");
        assert.equal(derived.inputs.policy, await unwrap(built.outbox.writerPolicy));
        built.outbox.grantWrite("billing-role", "grn-billing-writes");
        assert.equal((await rolePolicy("grn-billing-writes")).inputs.role, "billing-role");
    });

    it("grantWrite(role name that is an Output, e.g. from a StackReference) needs a name, and takes it", async () => {
        const built = await buildOutbox("gro");
        const fromOtherStack = pulumi.output("api-role-from-stack");
        assert.throws(() => built.outbox.grantWrite(fromOtherStack), invalidConfig(/give the grant a name/));
        built.outbox.grantWrite(fromOtherStack, "gro-api-writes");
        const r = await rolePolicy("gro-api-writes");
        assert.equal(r.inputs.role, "api-role-from-stack");
        assert.equal(r.inputs.policy, await unwrap(built.outbox.writerPolicy));
    });

    it("grantReadPayloads: a RolePolicy whose policy is readerPolicy: s3:GetObject on the payloads, kms:Decrypt on the key", async () => {
        const built = await buildOutbox("grr", { largePayloads: true, kmsKeyArn: KMS_KEY });
        built.outbox.grantReadPayloads("consumer-role");
        const r = await rolePolicy("grr-grant-read-payloads-consumer-role");
        const reader = await unwrap(built.outbox.readerPolicy);
        assert.equal(r.inputs.policy, reader);
        const bucket = built.one("aws:s3/bucket:Bucket").computed!.arn as string;
        assert.deepEqual(JSON.parse(r.inputs.policy as string), readerPolicyDocument(bucket, KMS_KEY));
        assert.equal(r.parent, built.one(TYPE.outbox).urn);
    });

    it("grantReadPayloads works on a given payload bucket too, and refuses an outbox with none", async () => {
        const given = await buildOutbox("grg", { payloadBucketArn: "arn:aws:s3:::their-payloads" });
        given.outbox.grantReadPayloads("consumer-role");
        assert.deepEqual(
            JSON.parse((await rolePolicy("grg-grant-read-payloads-consumer-role")).inputs.policy as string),
            readerPolicyDocument("arn:aws:s3:::their-payloads"),
        );
        const none = await buildOutbox("grnone");
        assert.throws(
            () => none.outbox.grantReadPayloads("consumer-role"),
            invalidConfig(/Outbox "grnone" has no payload bucket.*set largePayloads: true/),
        );
        await waitForRPCs();
        assert.equal(recorded.filter((r) => r.type === ROLE_POLICY && r.name.startsWith("grnone")).length, 0);
    });

    it("refuses a role that is neither a role nor a name, and an empty grant name, naming the value", async () => {
        const built = await buildOutbox("grbad");
        for (const bad of ["", "  ", 42, null, undefined, { name: "x" }]) {
            assert.throws(
                () => built.outbox.grantWrite(bad as never),
                invalidConfig(/grantWrite: role .* is not valid; the role is an aws.iam.Role or a role's name/),
                `role ${JSON.stringify(bad)}`,
            );
        }
        assert.throws(() => built.outbox.grantWrite("app-role", ""), invalidConfig(/grantWrite: name "" is not valid/));
    });

    it("declares grants the policy pack finds nothing wrong with", async () => {
        const built = await buildOutbox("grpol", { largePayloads: true });
        built.outbox.grantWrite("app-role");
        built.outbox.grantReadPayloads("consumer-role");
        await waitForRPCs();
        const resources = recorded.filter((r) => r.name === "grpol" || r.name.startsWith("grpol-"));
        assert.equal(resources.filter((r) => r.type === ROLE_POLICY).length, 2);
        assert.deepEqual(await violationsOf(outboxPolicies, resources), []);
    });

    it("derives <outbox>-grant-<grant>-<role> for any role name, and an explicit name as given (property)", () => {
        fc.assert(
            fc.property(
                fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
                fc.stringMatching(/^[\w+=,.@-]{1,64}$/),
                fc.constantFrom("write", "read-payloads"),
                fc.option(fc.stringMatching(/^[a-z][\w-]{0,30}$/), { nil: undefined }),
                (componentName, role, grant, name) => {
                    const got = grantName({
                        componentName,
                        grant,
                        method: "grantWrite",
                        role,
                        ...(name !== undefined ? { name } : {}),
                    });
                    assert.equal(got, name ?? `${componentName}-grant-${grant}-${role}`);
                },
            ),
        );
    });
});
