/**
 * The policy pack turned on for a whole stack: the pack in `policy/`, started the way `pulumi preview --policy-pack
 * policy` starts it (Pulumi's ts-node, type-checking), judges stacks recorded under the mocks through its analyzer
 * server, which also applies the enforcement levels of the pack's config. The stacks hold what a real one holds
 * next to an outbox: a default CallbackFunction (its role and nine managed policies, seven of them *FullAccess), a
 * plain table, a Kinesis mapping starting at LATEST with an unencrypted DLQ, a role allowing `*` with
 * AmazonS3FullAccess attached.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as aws from "@pulumi/aws";
import {
    OUTBOX_ALARMS_DEFAULT_LEVEL,
    OUTBOX_POLICY_DEFAULT_LEVEL,
    OUTBOX_POLICY_NAMES,
    outboxPolicyPackConfig,
} from "../../../policy/outbox-policies";
import { RecordedResource, recordedNamed } from "../../support/pulumi-mocks";
import { TYPE, buildOutbox, waitForRPCs } from "../../support/component-harness";
import { Diagnostic, RunningPack, UNKNOWN } from "../../support/policy/analyzer";

const ROOT = path.join(__dirname, "..", "..", "..");
const readme = fs.readFileSync(path.join(ROOT, "docs", "policy.md"), "utf8");

/** A stack's resources that belong to no outbox, named `<prefix>-…`. */
function declareUnrelated(prefix: string): void {
    const handler = new aws.lambda.CallbackFunction(`${prefix}-handler`, { callback: async () => undefined });
    new aws.dynamodb.Table(`${prefix}-users`, { hashKey: "id", attributes: [{ name: "id", type: "S" }] });
    const clicks = new aws.kinesis.Stream(`${prefix}-clicks`, { shardCount: 1 });
    const dlq = new aws.sqs.Queue(`${prefix}-clicks-dlq`, { sqsManagedSseEnabled: false });
    new aws.lambda.EventSourceMapping(`${prefix}-clicks-mapping`, {
        eventSourceArn: clicks.arn,
        functionName: handler.arn,
        startingPosition: "LATEST",
        destinationConfig: { onFailure: { destinationArn: dlq.arn } },
    });
    const reports = new aws.iam.Role(`${prefix}-reports`, {
        assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
        inlinePolicies: [
            {
                name: "everything",
                policy: JSON.stringify({
                    Version: "2012-10-17",
                    Statement: [{ Effect: "Allow", Action: "*", Resource: "*" }],
                }),
            },
        ],
    });
    new aws.iam.RolePolicyAttachment(`${prefix}-reports-s3`, {
        role: reports.name,
        policyArn: aws.iam.ManagedPolicy.AmazonS3FullAccess,
    });
}

/** Every diagnostic as `level policy: message`, sorted. */
function shown(diagnostics: readonly Diagnostic[]): string[] {
    return diagnostics.map((d) => `${d.enforcementLevel} ${d.policyName}: ${d.message}`).sort();
}

describe("the policy pack on a whole stack, through its analyzer server", function () {
    // The pack type-checks its sources before it serves (about 15 s here); the stacks are declared meanwhile.
    this.timeout(240_000);
    let pack: RunningPack | undefined;
    let mixed: RecordedResource[];
    let bent: RecordedResource[];
    let bentTableUrn: string;
    let bentAttachmentUrn: string;

    before(async function () {
        const started = RunningPack.start(path.join(ROOT, "policy"), {
            PATH: process.env.PATH ?? "",
            HOME: process.env.HOME ?? "",
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
        });
        started.catch(() => undefined);

        declareUnrelated("mixed");
        await buildOutbox("mixed");
        mixed = recordedNamed("mixed");

        // Bent through transform where the component allows it; the stream is turned off on the recorded inputs,
        // because transform.table refuses streamEnabled: false.
        declareUnrelated("bent");
        const built = await buildOutbox("bent", {
            transform: { table: { hashKey: "id", ttl: { attributeName: "ttl", enabled: false } } },
        });
        const role = built.one(TYPE.role, "bent-publisher-role").computed!.name as string;
        new aws.iam.RolePolicyAttachment("bent-publisher-dynamodb", {
            role,
            policyArn: aws.iam.ManagedPolicy.AmazonDynamoDBFullAccess,
        });
        await waitForRPCs();
        bent = recordedNamed("bent").map((r) =>
            r.type === TYPE.table && r.name === "bent-table"
                ? { ...r, inputs: { ...r.inputs, streamEnabled: false } }
                : r,
        );
        bentTableUrn = bent.find((r) => r.name === "bent-table")!.urn!;
        bentAttachmentUrn = bent.find((r) => r.name === "bent-publisher-dynamodb")!.urn!;

        pack = await started;
    });

    after(() => pack?.stop());

    it("holds the resources the stack is meant to hold", () => {
        const count = (type: string) => mixed.filter((r) => r.type === type).length;
        assert.equal(
            mixed.filter((r) => r.type === TYPE.policyAttachment && r.name.startsWith("mixed-handler-")).length,
            9,
            "the CallbackFunction's role gets nine managed policies",
        );
        assert.equal(
            mixed.filter((r) => r.type === TYPE.policyAttachment && r.inputs.policyArn.includes("FullAccess")).length,
            7 + 1,
            "seven of them *FullAccess, and AmazonS3FullAccess",
        );
        assert.equal(count(TYPE.table), 2);
        assert.equal(count(TYPE.mapping), 2);
        assert.equal(count(TYPE.role), 2 + 2, "the handler's and the reports role, the Outbox's two");
        assert.equal(
            mixed.filter((r) => r.type === TYPE.table && r.parent === undefined).length,
            1,
            "the plain table is at the stack's root",
        );
    });

    it("reports each policy's documented default level (mandatory, advisory for outbox-alarms) and no config schema: the level is the one setting", async () => {
        const info = await pack!.info();
        assert.equal(info.name, "dynamodb-outbox");
        assert.deepEqual(
            info.policies.map((p) => p.name),
            OUTBOX_POLICY_NAMES,
        );
        assert.deepEqual(
            info.policies
                .filter((p) => p.enforcementLevel !== OUTBOX_POLICY_DEFAULT_LEVEL)
                .map((p) => `${p.name} ${p.enforcementLevel}`),
            [`outbox-alarms ${OUTBOX_ALARMS_DEFAULT_LEVEL}`],
            "every policy is mandatory but the alarms advice",
        );
        assert.deepEqual(
            info.policies.filter((p) => p.hasConfigSchema),
            [],
        );
    });

    it("is what the policy page's table says: each policy's name, kind and default level", async () => {
        const section = readme;
        const rows = [
            ...section.matchAll(/^\| `(outbox-[a-z-]+)` \| (resource|stack) \| [^|]+ \| `([a-z]+)` \|$/gm),
        ].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
        assert.deepEqual(
            rows,
            (await pack!.info()).policies.map((p) => `${p.name} ${p.kind} ${p.enforcementLevel}`),
        );
    });

    it("gives no violation to the stack's other resources next to a default Outbox", async () => {
        assert.deepEqual(shown(await pack!.preview(mixed)), []);
    });

    it("gives no diagnostic at all when the other resources' values are unknown during a preview", async () => {
        const unknown = (r: RecordedResource, keys: string[]) => ({
            ...r,
            inputs: { ...r.inputs, ...Object.fromEntries(keys.map((k) => [k, UNKNOWN])) },
        });
        const previewed = mixed.map((r) => {
            if (r.name === "mixed-users") return unknown(r, ["tags"]);
            if (r.name === "mixed-clicks-mapping")
                return unknown(r, ["eventSourceArn", "functionName", "destinationConfig"]);
            if (r.name === "mixed-reports-s3") return unknown(r, ["role"]);
            if (r.name === "mixed-clicks-dlq") return { ...unknown(r, []), computed: { ...r.computed, arn: UNKNOWN } };
            return r;
        });
        assert.deepEqual(shown(await pack!.preview(previewed)), []);
    });

    it("gives a bent Outbox exactly one mandatory violation per bend, and none to the other resources", async () => {
        const diagnostics = await pack!.preview(bent);
        assert.deepEqual(shown(diagnostics), [
            `mandatory outbox-least-privilege-attached: role policy attachment "bent-publisher-dynamodb" attaches arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess to outbox role "bent-publisher-role", far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox's ARNs`,
            `mandatory outbox-table-shape: outbox table "bent-table": TTL must be enabled on "ttl" (terminal records expire by it); it is {"attributeName":"ttl","enabled":false}`,
            `mandatory outbox-table-shape: outbox table "bent-table": primary key must be PK HASH, SK RANGE; it is "id" HASH, "SK" RANGE`,
            `mandatory outbox-table-shape: outbox table "bent-table": the stream must be enabled with new images (NEW_IMAGE) for the publisher; it is streamEnabled false, streamViewType "NEW_IMAGE"`,
        ]);
        assert.deepEqual(
            diagnostics.map((d) => d.urn),
            [bentTableUrn, bentTableUrn, bentTableUrn, bentAttachmentUrn],
            "each violation names the bent resource",
        );
    });

    describe("with the pack's config", () => {
        afterEach(async () =>
            pack?.configure(Object.fromEntries(OUTBOX_POLICY_NAMES.map((n) => [n, OUTBOX_POLICY_DEFAULT_LEVEL]))),
        );

        it("reports a policy set to advisory as advisory, and nothing for a disabled one", async () => {
            await pack!.configure({
                ...Object.fromEntries(OUTBOX_POLICY_NAMES.map((n) => [n, OUTBOX_POLICY_DEFAULT_LEVEL])),
                "outbox-table-shape": "advisory",
                "outbox-least-privilege-attached": "disabled",
            });
            const levels = shown(await pack!.preview(bent)).map((d) => d.split(":")[0]);
            assert.deepEqual(levels, [
                "advisory outbox-table-shape",
                "advisory outbox-table-shape",
                "advisory outbox-table-shape",
            ]);
        });

        it("applies the policy page's example config, which outboxPolicyPackConfig accepts", async () => {
            const example = /```json\n(\{[^`]*"outbox-[^`]*\})\n```/.exec(readme);
            assert.ok(example, "the Policy pack section has a ```json config example");
            const config = outboxPolicyPackConfig(JSON.parse(example[1]!));
            // What the CLI sends after reconciling the file with the pack's defaults.
            const reconciled = Object.fromEntries(
                OUTBOX_POLICY_NAMES.map((n) => [n, String(config[n] ?? config.all ?? OUTBOX_POLICY_DEFAULT_LEVEL)]),
            );
            await pack!.configure(reconciled);
            const diagnostics = await pack!.preview(bent);
            for (const d of diagnostics)
                assert.equal(
                    d.enforcementLevel,
                    reconciled[d.policyName],
                    `${d.policyName} reported at its configured level`,
                );
            assert.ok(
                !diagnostics.some((d) => reconciled[d.policyName] === "disabled"),
                "a disabled policy reports nothing",
            );
            assert.ok(diagnostics.length > 0, "the bent stack is still judged");
        });
    });
});
