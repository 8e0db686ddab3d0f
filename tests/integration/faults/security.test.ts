/**
 * Security posture, asserted: the component's IAM documents pass the least-privilege rule (no `*` action, a `*`
 * resource only where AWS requires one), the policy pack's least-privilege and encryption-at-rest rules pass the
 * component's own resources and flag the misprovisioned variants, and encryption at rest is plumbed to the table,
 * the topic and the DLQ when a key is given. Runs on resources recorded under the Pulumi mocks.
 */
import * as assert from "node:assert/strict";
import {
    KMS_ACTIONS,
    type GrantTargets,
    publisherPolicyDocument,
    sweeperPolicyDocument,
} from "../../../components/iam";
import { outboxPolicies } from "../../../policy/outbox-policies";
import {
    encryptionAtRestViolations,
    leastPrivilegeViolations,
    WILDCARD_RESOURCE_ACTIONS,
} from "../../../policy/security";
import { RecordedResource, unwrap } from "../../support/pulumi-mocks";
import { TYPE, buildOutbox, type BuiltOutbox } from "../../support/component-harness";
import { policyResources, violationsOf } from "../../support/policy/bridge";

const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/** The recorded resources with the outputs the engine shows stack policies: table streamArn, queue/topic/function arn. */
async function withOutputs(built: BuiltOutbox, name: string): Promise<RecordedResource[]> {
    const streamArn = await unwrap(built.outbox.streamArn);
    const dlqArn = await unwrap(built.outbox.dlqArn);
    const topicArn = await unwrap(built.outbox.destinationArn);
    const functionArn = built.one(TYPE.mapping).inputs.functionName as string;
    return built.resources.map((r) => {
        if (r.type === TYPE.table) return { ...r, inputs: { ...r.inputs, streamArn } };
        if (r.type === TYPE.queue) return { ...r, inputs: { ...r.inputs, arn: dlqArn } };
        if (r.type === TYPE.topic) return { ...r, inputs: { ...r.inputs, arn: topicArn } };
        if (r.type === TYPE.fn && r.name === `${name}-publisher`)
            return { ...r, inputs: { ...r.inputs, arn: functionArn } };
        return r;
    });
}

function change(
    resources: RecordedResource[],
    type: string,
    f: (inputs: Record<string, any>) => Record<string, any>,
): RecordedResource[] {
    return resources.map((r) => (r.type === type ? { ...r, inputs: f({ ...r.inputs }) } : r));
}

const security = (v: string[]) =>
    v.filter((x) => x.startsWith("outbox-least-privilege") || x.startsWith("outbox-encryption-at-rest"));

describe("security posture", function () {
    let plain: RecordedResource[];
    let keyed: RecordedResource[];

    before(async function () {
        plain = await withOutputs(await buildOutbox("secplain"), "secplain");
        keyed = await withOutputs(await buildOutbox("seckms", { kmsKeyArn: KMS_KEY }), "seckms");
    });

    describe("least privilege", function () {
        const targets: GrantTargets = {
            tableArn: "arn:aws:dynamodb:eu-west-1:111111111111:table/t",
            streamArn: "arn:aws:dynamodb:eu-west-1:111111111111:table/t/stream/x",
            destinationKind: "sns",
            destinationArn: "arn:aws:sns:eu-west-1:111111111111:topic",
            dlqArn: "arn:aws:sqs:eu-west-1:111111111111:dlq",
            logGroupArn: "arn:aws:logs:eu-west-1:111111111111:log-group:/aws/lambda/p",
        };
        const destinations: Pick<GrantTargets, "destinationKind" | "destinationArn">[] = [
            { destinationKind: "sns", destinationArn: "arn:aws:sns:eu-west-1:111111111111:topic" },
            { destinationKind: "sqs", destinationArn: "arn:aws:sqs:eu-west-1:111111111111:events.fifo" },
            { destinationKind: "eventbridge", destinationArn: "arn:aws:events:eu-west-1:111111111111:event-bus/b" },
        ];

        it("the publisher's and sweeper's documents, for each destination, with and without keys, have no * action and a * resource only for actions AWS authorizes on * alone", function () {
            for (const t of destinations.flatMap((d) => [
                { ...targets, ...d },
                { ...targets, ...d, kmsKeyArn: KMS_KEY, destinationKmsKeyArn: `${KMS_KEY}0` },
            ])) {
                for (const doc of [publisherPolicyDocument(t), sweeperPolicyDocument(t)]) {
                    assert.deepEqual(leastPrivilegeViolations("doc", doc), []);
                    for (const s of doc.Statement) {
                        for (const a of s.Action) assert.ok(a !== "*" && !/:\*$/.test(a), `no wildcard action: ${a}`);
                        if (s.Resource.includes("*"))
                            assert.ok(
                                s.Action.every((a) => WILDCARD_RESOURCE_ACTIONS.includes(a)),
                                `* resource only for ${WILDCARD_RESOURCE_ACTIONS.join(", ")}: ${s.Sid}`,
                            );
                    }
                }
            }
            const kms = publisherPolicyDocument({ ...targets, kmsKeyArn: KMS_KEY }).Statement.find((s) =>
                s.Action.includes(KMS_ACTIONS[0]),
            );
            assert.deepEqual(kms?.Resource, [KMS_KEY], "KMS actions on exactly the key");
        });

        it("flags * and service:* actions, NotAction, NotResource and * resources on ARN-scoped actions, naming the statement", function () {
            const doc = {
                Version: "2012-10-17",
                Statement: [
                    { Sid: "All", Effect: "Allow", Action: "*", Resource: "*" },
                    { Sid: "AllSqs", Effect: "Allow", Action: ["sqs:*"], Resource: ["arn:aws:sqs:eu-west-1:1:q"] },
                    {
                        Sid: "Everywhere",
                        Effect: "Allow",
                        Action: ["dynamodb:GetItem", "dynamodb:ListStreams"],
                        Resource: "*",
                    },
                    { Sid: "Not", Effect: "Allow", NotAction: ["iam:*"], Resource: ["arn:aws:s3:::b"] },
                    { Sid: "Fine", Effect: "Allow", Action: ["dynamodb:ListStreams"], Resource: "*" },
                    { Sid: "DenyAll", Effect: "Deny", Action: "*", Resource: "*" },
                ],
            };
            assert.deepEqual(leastPrivilegeViolations('role "r"', JSON.stringify(doc)), [
                'role "r" statement "All": action "*" grants every action of every service; name the actions the function calls',
                `role "r" statement "All": resource "*" on "*"; scope them to the outbox's ARNs (only ${WILDCARD_RESOURCE_ACTIONS.join(", ")} require "*")`,
                'role "r" statement "AllSqs": action "sqs:*" grants every action of the service; name the actions the function calls',
                `role "r" statement "Everywhere": resource "*" on "dynamodb:GetItem"; scope them to the outbox's ARNs (only ${WILDCARD_RESOURCE_ACTIONS.join(", ")} require "*")`,
                'role "r" statement "Not": Allow with NotAction grants everything not listed; list the actions and resources instead',
            ]);
            assert.deepEqual(leastPrivilegeViolations("unknown", "not json yet (an Output during preview)"), []);
        });

        it("the pack passes the component's roles and flags a widened inline policy and a broad managed policy", async function () {
            assert.deepEqual(security(await violationsOf(outboxPolicies, plain)), []);
            const widened = change(plain, TYPE.role, (inputs) => ({
                ...inputs,
                inlinePolicies: [
                    {
                        name: "wide",
                        policy: JSON.stringify({
                            Version: "2012-10-17",
                            Statement: [{ Effect: "Allow", Action: ["dynamodb:*"], Resource: "*" }],
                        }),
                    },
                ],
            }));
            const v = security(await violationsOf(outboxPolicies, widened));
            assert.equal(v.length, 4, "two roles × (service:* action, * resource)");
            assert.ok(
                v.every((x) => x.startsWith('outbox-least-privilege: role "secplain-')),
                v.join("\n"),
            );
            // Declared outside the Outbox, on its publisher role by the role's name.
            const role = plain.find((r) => r.type === TYPE.role && r.name === "secplain-publisher-role")!.computed!
                .name as string;
            const attached = [
                ...plain,
                {
                    type: TYPE.policyAttachment,
                    name: "secplain-admin",
                    inputs: { role, policyArn: "arn:aws:iam::aws:policy/AdministratorAccess" },
                },
            ];
            assert.deepEqual(security(await violationsOf(outboxPolicies, attached)), [
                'outbox-least-privilege-attached: role policy attachment "secplain-admin" attaches arn:aws:iam::aws:policy/AdministratorAccess to outbox role "secplain-publisher-role", far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox\'s ARNs',
            ]);
            const rolePolicy = {
                type: "aws:iam/rolePolicy:RolePolicy",
                name: "secplain-extra",
                inputs: {
                    role,
                    policy: JSON.stringify({ Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: "*" }] }),
                },
            };
            assert.deepEqual(security(await violationsOf(outboxPolicies, [...plain, rolePolicy])), [
                `outbox-least-privilege-attached: role policy "secplain-extra" on outbox role "secplain-publisher-role" statement 0: resource "*" on "s3:GetObject"; scope them to the outbox's ARNs (only ${WILDCARD_RESOURCE_ACTIONS.join(", ")} require "*")`,
            ]);
            // The same grants on a role that belongs to no outbox are not the pack's business.
            const elsewhere = { role: "reports-role" };
            assert.deepEqual(
                security(
                    await violationsOf(outboxPolicies, [
                        ...plain,
                        { ...attached.at(-1)!, inputs: { ...attached.at(-1)!.inputs, ...elsewhere } },
                        { ...rolePolicy, inputs: { ...rolePolicy.inputs, ...elsewhere } },
                    ]),
                ),
                [],
            );
        });
    });

    describe("encryption at rest", function () {
        it("is plumbed: table SSE with the key, topic and DLQ kmsMasterKeyId; without a key the DLQ uses SSE-SQS", function () {
            const one = (rs: RecordedResource[], type: string) => rs.find((r) => r.type === type)!.inputs;
            assert.deepEqual(one(keyed, TYPE.table).serverSideEncryption, { enabled: true, kmsKeyArn: KMS_KEY });
            assert.equal(one(keyed, TYPE.topic).kmsMasterKeyId, KMS_KEY);
            assert.equal(one(keyed, TYPE.queue).kmsMasterKeyId, KMS_KEY);
            assert.equal(one(plain, TYPE.queue).sqsManagedSseEnabled, true);
        });

        it("the pack passes the component with and without a key, and does see its DLQ and topic", async function () {
            assert.deepEqual(security(await violationsOf(outboxPolicies, keyed)), []);
            assert.deepEqual(security(await violationsOf(outboxPolicies, plain)), []);
            // The same resources with the key dropped from the DLQ and topic must be flagged, so the empty lists mean "checked".
            const stripped = change(
                change(keyed, TYPE.queue, ({ kmsMasterKeyId, ...rest }) => ({ ...rest, sqsManagedSseEnabled: true })),
                TYPE.topic,
                ({ kmsMasterKeyId, ...rest }) => rest,
            );
            assert.deepEqual(security(await violationsOf(outboxPolicies, stripped)), [
                `outbox-encryption-at-rest: outbox DLQ "seckms-dlq" uses SSE-SQS while outbox table "seckms-table" is encrypted with the customer managed key ${KMS_KEY}; set kmsMasterKeyId to that key (the Outbox component does when kmsKeyArn is given)`,
                `outbox-encryption-at-rest: outbox topic "seckms-topic" has no kmsMasterKeyId while outbox table "seckms-table" is encrypted with the customer managed key ${KMS_KEY}; set kmsMasterKeyId to that key (the Outbox component does when kmsKeyArn is given)`,
            ]);
        });

        it("flags an unencrypted DLQ", function () {
            const unencrypted = change(plain, TYPE.queue, (inputs) => ({ ...inputs, sqsManagedSseEnabled: false }));
            assert.deepEqual(
                encryptionAtRestViolations(policyResources(unencrypted)).map((v) => v.message),
                [
                    'outbox DLQ "secplain-dlq" is not encrypted at rest (sqsManagedSseEnabled: false, no kmsMasterKeyId); it holds whole payloads: remove sqsManagedSseEnabled: false or set kmsMasterKeyId',
                ],
            );
            assert.deepEqual(
                encryptionAtRestViolations(policyResources(plain.filter((r) => r.type !== TYPE.mapping))),
                [],
                "no mapping, no outbox DLQ to check",
            );
        });

        it("flags an unencrypted DLQ of a mapping declared outside the Outbox on its stream, and not of a mapping on another stream", function () {
            const streamArn = plain.find((r) => r.type === TYPE.table)!.computed!.streamArn as string;
            const dlq: RecordedResource = {
                type: TYPE.queue,
                name: "audit-dlq",
                inputs: { sqsManagedSseEnabled: false },
                computed: { arn: "arn:aws:sqs:eu-west-1:111111111111:audit-dlq" },
            };
            const reader = (eventSourceArn: string): RecordedResource => ({
                type: TYPE.mapping,
                name: "audit-reader",
                inputs: {
                    eventSourceArn,
                    functionName: "audit",
                    destinationConfig: {
                        onFailure: { destinationArn: "arn:aws:sqs:eu-west-1:111111111111:audit-dlq" },
                    },
                },
            });
            assert.deepEqual(
                encryptionAtRestViolations(policyResources([...plain, dlq, reader(streamArn)])).map((v) => v.message),
                [
                    'outbox DLQ "audit-dlq" is not encrypted at rest (sqsManagedSseEnabled: false, no kmsMasterKeyId); it holds whole payloads: remove sqsManagedSseEnabled: false or set kmsMasterKeyId',
                ],
            );
            assert.deepEqual(
                encryptionAtRestViolations(
                    policyResources([...plain, dlq, reader("arn:aws:kinesis:eu-west-1:111111111111:stream/clicks")]),
                ),
                [],
            );
        });
    });
});
