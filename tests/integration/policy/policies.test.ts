import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as aws from "@pulumi/aws";
import * as ts from "typescript";
import {
    OUTBOX_POLICY_LEVELS,
    OUTBOX_POLICY_NAMES,
    declaredInsideOutbox,
    outboxPolicies,
    outboxPolicyPackConfig,
    urnTypes,
} from "../../../policy/outbox-policies";
import { tableArgs } from "../../../components/children";
import { resolveOutboxSettings } from "../../../components/settings";
import { CLAIM_INDEX, OUTBOX_TABLE_TAG, streamFilterPatternJson } from "../../../runtime/schema";
import { RecordedResource, recordedNamed, unwrap } from "../../support/pulumi-mocks";
import { TYPE, buildOutbox, waitForRPCs } from "../../support/component-harness";
import { violationsOf } from "../../support/policy/bridge";

const CLAIM = `{keys: PK (S) HASH, claim_sort (S) RANGE; projection: ALL} (the claim query filters on the non-key status attribute)`;

/** The component's GSIs with ClaimIndex changed by `change` (undefined drops it), for transform.table. */
function indexesWithClaim(change: (claim: Record<string, any>) => Record<string, any> | undefined): any[] {
    const computed = tableArgs(resolveOutboxSettings({})).globalSecondaryIndexes as Record<string, any>[];
    return computed.flatMap((i) =>
        i.name === CLAIM_INDEX.indexName ? [change({ ...i })].filter((x) => x !== undefined) : [i],
    );
}

/** The recorded resources with the table's `streamArn` output added, as the engine shows them to stack policies. */
async function withStreamArn(built: Awaited<ReturnType<typeof buildOutbox>>): Promise<RecordedResource[]> {
    const streamArn = await unwrap(built.outbox.streamArn);
    return built.resources.map((r) => (r.type === TYPE.table ? { ...r, inputs: { ...r.inputs, streamArn } } : r));
}

async function violationsOfOutbox(name: string, transform: Parameters<typeof buildOutbox>[1]): Promise<string[]> {
    return violationsOf(outboxPolicies, await withStreamArn(await buildOutbox(name, transform)));
}

describe("outboxPolicies on resources recorded under the mocks", () => {
    let resources: RecordedResource[];

    before(async () => {
        resources = await withStreamArn(
            await buildOutbox("pol", {
                fifo: true,
                kmsKeyArn: "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab",
            }),
        );
    });

    /**
     * The violations of the component's recorded resources with the child of `type` changed by `change`: the
     * misprovisioned variants, without declaring a new outbox for each (the `transform` path is shown twice below).
     */
    function violationsOfVariant(
        type: string,
        change: (inputs: Record<string, any>) => Record<string, any>,
    ): Promise<string[]> {
        return violationsOf(
            outboxPolicies,
            resources.map((r) => (r.type === type ? { ...r, inputs: change({ ...r.inputs }) } : r)),
        );
    }

    it("finds no violation in the component's own resources, and does apply to its table and mapping", async () => {
        assert.deepEqual(await violationsOf(outboxPolicies, resources), []);
        // The same resources with the recognised shape broken must be flagged, so the empty list above means "checked".
        const broken = resources.map((r: RecordedResource) =>
            r.type === TYPE.table
                ? { ...r, inputs: { ...r.inputs, ttl: undefined } }
                : r.type === TYPE.mapping
                  ? { ...r, inputs: { ...r.inputs, startingPosition: "LATEST" } }
                  : r,
        );
        assert.equal((await violationsOf(outboxPolicies, broken)).length, 2);
    });

    it("flags a ClaimIndex projected KEYS_ONLY, made through transform.table", async () => {
        const v = await violationsOfOutbox("polko", {
            transform: {
                table: { globalSecondaryIndexes: indexesWithClaim((c) => ({ ...c, projectionType: "KEYS_ONLY" })) },
            },
        });
        assert.deepEqual(v, [
            `outbox-table-shape: outbox table "polko-table": index ClaimIndex must be ${CLAIM}; it is {keys: PK (S) HASH, claim_sort (S) RANGE; projection: KEYS_ONLY}`,
        ]);
    });

    it("flags a ClaimIndex projected INCLUDE, listing the included attributes", async () => {
        const v = await violationsOfVariant(TYPE.table, (t) => ({
            ...t,
            globalSecondaryIndexes: indexesWithClaim((c) => ({
                ...c,
                projectionType: "INCLUDE",
                nonKeyAttributes: ["status", "claim_version"],
            })),
        }));
        assert.deepEqual(v, [
            `outbox-table-shape: outbox table "pol-table": index ClaimIndex must be ${CLAIM}; it is {keys: PK (S) HASH, claim_sort (S) RANGE; projection: INCLUDE [status, claim_version]}`,
        ]);
    });

    it("flags a missing ClaimIndex on a table recognised by the outbox tag", async () => {
        const v = await violationsOfVariant(TYPE.table, (t) => ({
            ...t,
            globalSecondaryIndexes: indexesWithClaim(() => undefined),
        }));
        assert.deepEqual(v, [
            `outbox-table-shape: outbox table "pol-table": index ClaimIndex is missing; expected ${CLAIM}; indexes present: ExpiryIndex, RecordIDIndex`,
        ]);
    });

    it("flags a mapping starting at LATEST, made through transform.eventSourceMapping", async () => {
        const v = await violationsOfOutbox("pollatest", {
            transform: { eventSourceMapping: { startingPosition: "LATEST" } },
        });
        assert.deepEqual(v, [
            `outbox-stream-mapping: outbox stream mapping "pollatest-stream-mapping": startingPosition must be TRIM_HORIZON (LATEST skips records written before the mapping existed); it is "LATEST"`,
        ]);
    });

    it("flags a mapping without an on-failure destination", async () => {
        const v = await violationsOfVariant(TYPE.mapping, (m) => ({ ...m, destinationConfig: undefined }));
        assert.deepEqual(v, [
            `outbox-stream-mapping: outbox stream mapping "pol-stream-mapping": destinationConfig.onFailure must name a DLQ (else a poison batch is dropped without a trace); it is absent`,
        ]);
    });

    it("flags a mapping that ignores batch item failures, retries forever and filters on the wrong key", async () => {
        const wrongFilter = streamFilterPatternJson().replace('"Keys"', '"NewImage"');
        const v = await violationsOfVariant(TYPE.mapping, (m) => ({
            ...m,
            functionResponseTypes: [],
            maximumRetryAttempts: -1,
            filterCriteria: { filters: [{ pattern: wrongFilter }] },
        }));
        assert.deepEqual(v, [
            `outbox-stream-mapping: outbox stream mapping "pol-stream-mapping": functionResponseTypes must include ReportBatchItemFailures (else the publisher's batchItemFailures are ignored and the whole batch retries); it is []`,
            `outbox-stream-mapping: outbox stream mapping "pol-stream-mapping": maximumRetryAttempts must be a bound from 0 to 10000 (absent or -1 retries a poison batch for the stream's 24 h retention); it is -1`,
            `outbox-stream-mapping: outbox stream mapping "pol-stream-mapping": the filter must be exactly ${streamFilterPatternJson()}, or on a global table streamFilterPatterns(scope) of the region's origin scope (a wrong filter silently drops events); it is [${wrongFilter}]`,
        ]);
    });

    it("finds no violation in an outbox with replicaRegions, and flags a region's mapping whose filter names another region", async () => {
        const global = await withStreamArn(await buildOutbox("polglobal", { replicaRegions: ["us-west-2"] }));
        assert.deepEqual(await violationsOf(outboxPolicies, global), []);
        assert.equal(global.filter((r) => r.type === TYPE.mapping).length, 2);
        // The replica's filter with its region's stamp replaced by the home region's: every region's filter but
        // the one scope gives is refused, so the empty list above means "checked".
        const wrong = global.map((r) =>
            r.type === TYPE.mapping && r.name === "polglobal-us-west-2-stream-mapping"
                ? {
                      ...r,
                      inputs: {
                          ...r.inputs,
                          filterCriteria: {
                              filters: [
                                  ...r.inputs.filterCriteria.filters,
                                  {
                                      pattern: r.inputs.filterCriteria.filters[0].pattern.replace(
                                          "us-west-2",
                                          "eu-west-1",
                                      ),
                                  },
                              ],
                          },
                      },
                  }
                : r,
        );
        const v = await violationsOf(outboxPolicies, wrong);
        assert.equal(v.length, 1, JSON.stringify(v));
        assert.match(v[0], /"polglobal-us-west-2-stream-mapping": the filter must be exactly/);
    });

    it("flags the Outbox's mapping with no filter at all", async () => {
        const v = await violationsOfVariant(TYPE.mapping, (m) => ({ ...m, filterCriteria: undefined }));
        assert.deepEqual(v, [
            `outbox-stream-mapping: outbox stream mapping "pol-stream-mapping": the filter must be exactly ${streamFilterPatternJson()}, or on a global table streamFilterPatterns(scope) of the region's origin scope (a wrong filter silently drops events); it is []`,
        ]);
    });

    it("flags a mapping declared outside the Outbox on its table's stream, through the stream ARN (stack policy), and not one on another stream", async () => {
        const streamArn = resources.find((r) => r.type === TYPE.table)!.computed!.streamArn as string;
        const reader = (eventSourceArn: string): RecordedResource => ({
            type: TYPE.mapping,
            name: "audit-reader",
            inputs: { eventSourceArn, functionName: "audit", startingPosition: "LATEST" },
        });
        const at = (field: string) => `outbox-stream-mapping-external: outbox stream mapping "audit-reader": ${field}`;
        assert.deepEqual(await violationsOf(outboxPolicies, [...resources, reader(streamArn)]), [
            at(
                `startingPosition must be TRIM_HORIZON (LATEST skips records written before the mapping existed); it is "LATEST"`,
            ),
            at(
                `functionResponseTypes must include ReportBatchItemFailures (else the publisher's batchItemFailures are ignored and the whole batch retries); it is absent`,
            ),
            at(
                `destinationConfig.onFailure must name a DLQ (else a poison batch is dropped without a trace); it is absent`,
            ),
            at(
                `maximumRetryAttempts must be a bound from 0 to 10000 (absent or -1 retries a poison batch for the stream's 24 h retention); it is absent`,
            ),
            at(
                `the filter must be exactly ${streamFilterPatternJson()}, or on a global table streamFilterPatterns(scope) of the region's origin scope (a wrong filter silently drops events); it is []`,
            ),
        ]);
        assert.deepEqual(
            await violationsOf(outboxPolicies, [...resources, reader(streamArn.replace("pol-table", "users"))]),
            [],
        );
    });

    it("flags TTL on the wrong attribute and a keys-only stream, and accepts the deprecated hashKey/rangeKey form of a correct index", async () => {
        const legacy = indexesWithClaim((c) => ({
            name: c.name,
            hashKey: "PK",
            rangeKey: "claim_sort",
            projectionType: "ALL",
        }));
        const v = await violationsOfVariant(TYPE.table, (t) => ({
            ...t,
            ttl: { attributeName: "expires", enabled: true },
            streamViewType: "KEYS_ONLY",
            globalSecondaryIndexes: legacy,
        }));
        assert.deepEqual(v, [
            `outbox-table-shape: outbox table "pol-table": TTL must be enabled on "ttl" (terminal records expire by it); it is {"attributeName":"expires","enabled":true}`,
            `outbox-table-shape: outbox table "pol-table": the stream must be enabled with new images (NEW_IMAGE) for the publisher; it is streamEnabled true, streamViewType "KEYS_ONLY"`,
        ]);
    });

    it("flags TTL disabled on the right attribute, made through transform.table", async () => {
        const v = await violationsOfOutbox("polttloff", {
            transform: { table: { ttl: { attributeName: "ttl", enabled: false } } },
        });
        assert.deepEqual(v, [
            `outbox-table-shape: outbox table "polttloff-table": TTL must be enabled on "ttl" (terminal records expire by it); it is {"attributeName":"ttl","enabled":false}`,
        ]);
    });

    it("flags a disabled stream that still names NEW_IMAGE (transform.table refuses streamEnabled: false, so on recorded inputs)", async () => {
        const v = await violationsOfVariant(TYPE.table, (t) => ({ ...t, streamEnabled: false }));
        assert.deepEqual(v, [
            `outbox-table-shape: outbox table "pol-table": the stream must be enabled with new images (NEW_IMAGE) for the publisher; it is streamEnabled false, streamViewType "NEW_IMAGE"`,
        ]);
    });

    it("flags a wrong primary key: another hash key (through transform.table), PK and SK swapped, the range key missing", async () => {
        const rule = `outbox-table-shape: outbox table`;
        const expected = `primary key must be PK HASH, SK RANGE; it is`;
        assert.deepEqual(await violationsOfOutbox("polpk", { transform: { table: { hashKey: "id" } } }), [
            `${rule} "polpk-table": ${expected} "id" HASH, "SK" RANGE`,
        ]);
        assert.deepEqual(await violationsOfVariant(TYPE.table, (t) => ({ ...t, hashKey: "SK", rangeKey: "PK" })), [
            `${rule} "pol-table": ${expected} "SK" HASH, "PK" RANGE`,
        ]);
        assert.deepEqual(await violationsOfVariant(TYPE.table, ({ rangeKey, ...t }) => t), [
            `${rule} "pol-table": ${expected} "PK" HASH, absent RANGE`,
        ]);
    });

    it("flags a *FullAccess managed policy attached to an outbox role, and not a read-only one or one on another role", async () => {
        const role = resources.find((r) => r.type === TYPE.role && r.name === "pol-publisher-role")?.computed?.name;
        assert.equal(role, "pol-publisher-role-abc", "the outbox's publisher role is recorded with its physical name");
        const attach = (policyArn: string, to = role): RecordedResource => ({
            type: TYPE.policyAttachment,
            name: "pol-publisher-extra",
            inputs: { role: to, policyArn },
        });
        const flagged = (policyArn: string) =>
            `outbox-least-privilege-attached: role policy attachment "pol-publisher-extra" attaches ${policyArn} to outbox role "pol-publisher-role", far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox's ARNs`;
        for (const arn of [
            "arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess",
            "arn:aws:iam::aws:policy/AWSLambda_FullAccess",
            "arn:aws:iam::aws:policy/CloudWatchFullAccessV2",
        ]) {
            assert.deepEqual(await violationsOf(outboxPolicies, [...resources, attach(arn)]), [flagged(arn)], arn);
        }
        assert.deepEqual(
            await violationsOf(outboxPolicies, [
                ...resources,
                attach("arn:aws:iam::aws:policy/AmazonDynamoDBReadOnlyAccess"),
            ]),
            [],
        );
        assert.deepEqual(
            await violationsOf(outboxPolicies, [
                ...resources,
                attach("arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess", "reports-role"),
            ]),
            [],
        );
    });

    it("flags a too-broad customer managed policy attached to an outbox role", async () => {
        const policy: RecordedResource = {
            type: "aws:iam/policy:Policy",
            name: "pol-wide",
            inputs: {
                policy: JSON.stringify({
                    Version: "2012-10-17",
                    Statement: [{ Effect: "Allow", Action: "sqs:*", Resource: "arn:aws:sqs:eu-west-1:111111111111:q" }],
                }),
            },
            computed: { arn: "arn:aws:iam::111111111111:policy/pol-wide" },
        };
        const attachment: RecordedResource = {
            type: TYPE.policyAttachment,
            name: "pol-wide-attach",
            inputs: { role: "pol-sweeper-role-abc", policyArn: "arn:aws:iam::111111111111:policy/pol-wide" },
        };
        assert.deepEqual(await violationsOf(outboxPolicies, [...resources, policy, attachment]), [
            `outbox-least-privilege-attached: policy "pol-wide" attached to outbox role "pol-sweeper-role" by role policy attachment "pol-wide-attach" statement 0: action "sqs:*" grants every action of the service; name the actions the function calls`,
        ]);
    });

    it("judges a table by the outbox tag or an Outbox parent, never by its shape; leaves other tables and mappings alone", async () => {
        const handmade = (tags?: Record<string, string>): RecordedResource => ({
            type: TYPE.table,
            name: "handmade",
            inputs: {
                hashKey: "PK",
                rangeKey: "SK",
                attributes: [
                    { name: "PK", type: "S" },
                    { name: "claim_sort", type: "S" },
                ],
                globalSecondaryIndexes: indexesWithClaim((c) => c).slice(2),
                tags,
            },
        });
        const plainTable: RecordedResource = {
            type: TYPE.table,
            name: "users",
            inputs: { hashKey: "id", attributes: [{ name: "id", type: "S" }] },
        };
        const sqsMapping: RecordedResource = {
            type: TYPE.mapping,
            name: "jobs",
            inputs: {
                eventSourceArn: "arn:aws:sqs:eu-west-1:111111111111:jobs",
                functionName: "f",
                filterCriteria: { filters: [{ pattern: streamFilterPatternJson() }] },
            },
        };
        assert.deepEqual(
            await violationsOf(outboxPolicies, [handmade(), plainTable, sqsMapping]),
            [],
            "a ClaimIndex alone does not make an outbox table",
        );
        assert.deepEqual(
            await violationsOf(outboxPolicies, [
                handmade({ [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value }),
                plainTable,
                sqsMapping,
            ]),
            [
                `outbox-table-shape: outbox table "handmade": index ExpiryIndex is missing; expected {keys: has_expiry (S) HASH, expires_at (N) RANGE; projection: KEYS_ONLY} (the expiry sweep finds pending records past expires_at); indexes present: ClaimIndex`,
                `outbox-table-shape: outbox table "handmade": index RecordIDIndex is missing; expected {keys: record_id (S) HASH; projection: KEYS_ONLY} (complete and release resolve a record id to its keys); indexes present: ClaimIndex`,
                `outbox-table-shape: outbox table "handmade": TTL must be enabled on "ttl" (terminal records expire by it); it is absent`,
                `outbox-table-shape: outbox table "handmade": the stream must be enabled with new images (NEW_IMAGE) for the publisher; it is streamEnabled absent, streamViewType absent`,
                // The stack declares no alarm at all: the advice applies to a tagged table as to an Outbox's.
                `outbox-alarms: outbox table "handmade" has no CloudWatch alarm: none declared in its Outbox, none on the table, its publisher or its DLQ; an outbox fails quietly, so keep the Outbox's alarms on (alarms: true, the default) or declare your own`,
            ],
        );
        // The Outbox's own table without its tag is still the Outbox's: its parent says so.
        const untagged = resources.map((r) =>
            r.type === TYPE.table ? { ...r, inputs: { ...r.inputs, tags: {}, ttl: undefined } } : r,
        );
        assert.deepEqual(await violationsOf(outboxPolicies, untagged), [
            `outbox-table-shape: outbox table "pol-table": TTL must be enabled on "ttl" (terminal records expire by it); it is absent`,
        ]);
    });

    it("still finds a table whose tags came through transform.table.tags, by its outbox tag; and a VPC outbox with an extra index passes", async () => {
        const built = await buildOutbox("poltr", {
            tags: { env: "prod" },
            transform: { table: { tags: { team: "payments", [OUTBOX_TABLE_TAG.key]: "false" } } },
            vpc: { subnetIds: ["subnet-0123456789abcdef0"], securityGroupIds: ["sg-0123456789abcdef0"] },
            globalSecondaryIndexes: [{ name: "CustomerIndex", hashKey: "customer_id" }],
        });
        const own = await withStreamArn(built);
        assert.deepEqual(await violationsOf(outboxPolicies, own), [], "its VPC grant and extra index are fine");
        const table = built.one(TYPE.table);
        assert.deepEqual(table.inputs.tags, { env: "prod", team: "payments", [OUTBOX_TABLE_TAG.key]: "true" });
        // The same table declared outside any Outbox (adopted by another stack, say), its TTL broken: the pack
        // finds it by the tag alone. With the tags a top-level merge left (transform's only), it would not.
        const outside = (tags: Record<string, string>): RecordedResource => ({
            type: TYPE.table,
            name: "poltr-outside",
            inputs: { ...table.inputs, tags, ttl: undefined },
        });
        const shape = async (r: RecordedResource) =>
            (await violationsOf(outboxPolicies, [r])).filter((v) => v.startsWith("outbox-table-shape:"));
        assert.deepEqual(await shape(outside(table.inputs.tags)), [
            `outbox-table-shape: outbox table "poltr-outside": TTL must be enabled on "ttl" (terminal records expire by it); it is absent`,
        ]);
        assert.deepEqual(await shape(outside({ team: "payments" })), []);
    });

    it("flags grants on a role declared outside the Outbox that its publisher runs as (transform.publisher.role)", async () => {
        const role = new aws.iam.Role("polrole-own", {
            assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
            inlinePolicies: [
                {
                    name: "wide",
                    policy: JSON.stringify({
                        Version: "2012-10-17",
                        Statement: [{ Sid: "Tables", Effect: "Allow", Action: "dynamodb:*", Resource: "*" }],
                    }),
                },
            ],
        });
        new aws.iam.RolePolicyAttachment("polrole-own-dynamodb", {
            role: role.name,
            policyArn: aws.iam.ManagedPolicy.AmazonDynamoDBFullAccess,
        });
        await buildOutbox("polrole", { transform: { publisher: { role: role.arn } } });
        await waitForRPCs();
        const stack = recordedNamed("polrole");
        assert.deepEqual(
            stack.find((r) => r.name === "polrole-own-dynamodb")?.propertyDependencies,
            { role: [stack.find((r) => r.name === "polrole-own")!.urn!] },
            "the attachment names the role by an Output",
        );
        const expected = [
            `outbox-least-privilege-attached: role policy attachment "polrole-own-dynamodb" attaches arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess to outbox role "polrole-own", far beyond what an outbox function needs; grant the actions in an inline policy scoped to the outbox's ARNs`,
            `outbox-least-privilege-attached: outbox role "polrole-own" inline policy statement "Tables": action "dynamodb:*" grants every action of the service; name the actions the function calls`,
            `outbox-least-privilege-attached: outbox role "polrole-own" inline policy statement "Tables": resource "*" on "dynamodb:*"; scope them to the outbox's ARNs (only dynamodb:ListStreams, xray:PutTraceSegments, xray:PutTelemetryRecords, cloudwatch:PutMetricData require "*")`,
        ];
        assert.deepEqual(await violationsOf(outboxPolicies, stack), expected);
        // The role's name and ARN unknown (a preview of a new role): the property dependencies still tie it in.
        const previewed = stack.map((r) =>
            r.name === "polrole-own"
                ? { ...r, computed: {} }
                : r.name === "polrole-own-dynamodb" || r.name === "polrole-publisher"
                  ? { ...r, inputs: { ...r.inputs, role: undefined } }
                  : r,
        );
        assert.deepEqual(await violationsOf(outboxPolicies, previewed), expected);
    });

    it("tells what an Outbox declares by the types its URN spells before the resource's own", () => {
        const outbox = "dynamodb-outbox:index:Outbox";
        const table = "aws:dynamodb/table:Table";
        assert.deepEqual(urnTypes(`urn:pulumi:dev::shop::acme:index:Shop$${outbox}$${table}::orders-table`), [
            "acme:index:Shop",
            outbox,
            table,
        ]);
        assert.equal(
            declaredInsideOutbox(`urn:pulumi:dev::shop::acme:index:Shop$${outbox}$${table}::orders-table`),
            true,
            "an Outbox inside a component of one's own",
        );
        assert.equal(
            declaredInsideOutbox(
                `urn:pulumi:dev::shop::${outbox}$aws:lambda/function:Function$aws:iam/role:Role::orders-publisher`,
            ),
            true,
            "a grandchild",
        );
        assert.equal(declaredInsideOutbox(`urn:pulumi:dev::shop::${outbox}::orders`), false, "the Outbox itself");
        assert.equal(declaredInsideOutbox(`urn:pulumi:dev::shop::${table}::users`), false);
        assert.equal(
            declaredInsideOutbox(`urn:pulumi:dev::shop::acme:index:Shop$${table}::users`),
            false,
            "inside another component",
        );
        assert.equal(
            declaredInsideOutbox(`urn:pulumi:dev::shop::${table}::orders::Outbox$x`),
            false,
            "a name holding the type's text",
        );
    });
});

describe("outbox-alarms (advisory): an outbox without alarms", () => {
    const policy = () => outboxPolicies.find((p) => p.name === "outbox-alarms")!;
    const alarmViolations = async (resources: RecordedResource[]) =>
        (await violationsOf(outboxPolicies, resources)).filter((v) => v.startsWith("outbox-alarms:"));

    it("is advisory", () => {
        assert.equal(policy().enforcementLevel, "advisory");
    });

    it("reports an Outbox declared with alarms: false, on its table, and stays silent on the default", async () => {
        const quiet = await withStreamArn(await buildOutbox("polquiet", { alarms: false }));
        assert.deepEqual(await alarmViolations(quiet), [
            `outbox-alarms: outbox table "polquiet-table" has no CloudWatch alarm: none declared in its Outbox, none on the table, its publisher or its DLQ; an outbox fails quietly, so keep the Outbox's alarms on (alarms: true, the default) or declare your own`,
        ]);
        const loud = await withStreamArn(await buildOutbox("polloud"));
        assert.deepEqual(await alarmViolations(loud), []);
        assert.ok(
            loud.some((r) => r.type === TYPE.alarm),
            "the default declares alarms",
        );
    });

    it("stays silent when an alarm declared elsewhere watches the outbox's publisher, DLQ or table, and not for an alarm on something else", async () => {
        const quiet = await withStreamArn(await buildOutbox("polown", { alarms: false }));
        const named = (type: string, child: string) =>
            quiet.find((r) => r.type === type && r.name === child)!.computed!.name as string;
        const alarm = (dimensions: Record<string, string>): RecordedResource => ({
            type: TYPE.alarm,
            name: "team-alarm",
            inputs: { metricName: "Errors", namespace: "AWS/Lambda", dimensions },
        });
        assert.deepEqual(
            await alarmViolations([...quiet, alarm({ FunctionName: named(TYPE.fn, "polown-publisher") })]),
            [],
        );
        assert.deepEqual(await alarmViolations([...quiet, alarm({ QueueName: named(TYPE.queue, "polown-dlq") })]), []);
        assert.deepEqual(
            await alarmViolations([...quiet, alarm({ TableName: named(TYPE.table, "polown-table") })]),
            [],
        );
        assert.equal((await alarmViolations([...quiet, alarm({ FunctionName: "billing-handler" })])).length, 1);
    });
});

describe("outboxPolicyPackConfig", () => {
    it("accepts each policy and all, as a level or { enforcementLevel }, and returns levels", () => {
        assert.deepEqual(
            outboxPolicyPackConfig({
                all: "advisory",
                "outbox-table-shape": { enforcementLevel: "mandatory" },
                "outbox-encryption-at-rest": "disabled",
            }),
            {
                all: "advisory",
                "outbox-table-shape": "mandatory",
                "outbox-encryption-at-rest": "disabled",
            },
        );
        for (const level of OUTBOX_POLICY_LEVELS)
            assert.deepEqual(
                outboxPolicyPackConfig(Object.fromEntries(OUTBOX_POLICY_NAMES.map((n) => [n, level]))),
                Object.fromEntries(OUTBOX_POLICY_NAMES.map((n) => [n, level])),
            );
        assert.deepEqual(outboxPolicyPackConfig({}), {});
    });

    it("fails with INVALID_CONFIG naming the key on a bad level, an unknown policy, an extra property or a non-object", () => {
        const fails = (config: unknown, text: string) =>
            assert.throws(
                () => outboxPolicyPackConfig(config),
                (e: any) => e.code === "INVALID_CONFIG" && e.message.includes(text),
                `${JSON.stringify(config)} → ${text}`,
            );
        fails(
            { "outbox-table-shape": "warn" },
            `"outbox-table-shape" has enforcement level "warn"; it must be one of advisory, mandatory, disabled`,
        );
        fails({ "outbox-table-shape": "remediate" }, `"outbox-table-shape" has enforcement level "remediate"`);
        fails(
            { "outbox-least-privilege": { enforcementLevel: "Mandatory" } },
            `"outbox-least-privilege" has enforcement level "Mandatory"`,
        );
        fails({ all: 1 }, `"all" has enforcement level 1`);
        fails({ "outbox-least-privilege": {} }, `"outbox-least-privilege" has enforcement level undefined`);
        fails(
            { "outbox-table-shap": "advisory" },
            `the outbox policy pack has no policy "outbox-table-shap"; its policies are ${OUTBOX_POLICY_NAMES.join(", ")} (or "all")`,
        );
        fails(
            { "outbox-stream-mapping": { enforcementLevel: "advisory", exempt: ["x"] } },
            `"outbox-stream-mapping" takes only enforcementLevel; it has "exempt"`,
        );
        for (const bad of [null, [], "advisory"])
            fails(bad, "the outbox policy pack config must be an object of policy name to enforcement level");
    });
});

describe("the policy pack folder", () => {
    const root = path.join(__dirname, "..", "..", "..");

    function sourceFiles(dir: string): string[] {
        return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
            if (e.name === "node_modules" || e.name.startsWith(".")) return [];
            const p = path.join(dir, e.name);
            return e.isDirectory() ? sourceFiles(p) : /\.(ts|js)$/.test(e.name) ? [p] : [];
        });
    }

    it("is runnable with `pulumi preview --policy-pack policy`: PulumiPolicy.yaml, a versioned package.json, the entry file, a tsconfig.json", () => {
        // Pulumi's ts-node type-checks the pack with this folder's tsconfig.json; without one it uses ES2020
        // libraries, in which runtime/errors.ts's Error cause does not compile (stack.test.ts starts the pack so).
        // It extends the repository's tsconfig.base.json: read it as ts-node does, with the base applied.
        const configFile = path.join(root, "policy", "tsconfig.json");
        const tsconfig = ts.parseJsonConfigFileContent(
            ts.readConfigFile(configFile, ts.sys.readFile).config,
            ts.sys,
            path.dirname(configFile),
        );
        assert.deepEqual(tsconfig.errors, []);
        assert.deepEqual(tsconfig.options.lib, ["lib.es2022.d.ts"]);
        assert.equal(tsconfig.options.skipLibCheck, true);
        const yaml = fs.readFileSync(path.join(root, "policy", "PulumiPolicy.yaml"), "utf8");
        assert.match(yaml, /^runtime: nodejs$/m);
        const manifest = JSON.parse(fs.readFileSync(path.join(root, "policy", "package.json"), "utf8"));
        assert.match(manifest.version, /^\d+\.\d+\.\d+$/, "PolicyPack reads its version from here");
        assert.equal(manifest.main, "index.ts");
        assert.ok(fs.existsSync(path.join(root, "policy", manifest.main)));
    });

    it("constructs PolicyPack (which starts a server) in its entry file only", () => {
        const constructing = sourceFiles(root)
            .filter((f) => !f.includes(`${path.sep}tests${path.sep}`))
            .filter((f) => /new\s+PolicyPack\s*\(/.test(fs.readFileSync(f, "utf8")))
            .map((f) => path.relative(root, f));
        assert.deepEqual(constructing, [path.join("policy", "index.ts")]);
    });
});
