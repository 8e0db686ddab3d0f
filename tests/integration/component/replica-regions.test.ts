/**
 * `replicaRegions` (issue 37): the table's replicas, and in each replica region a provider of its own and, through
 * it, a relay (DLQ, publisher and mapping on the replica's stream, sweeper and schedule), each with its region's
 * origin scope. Under Pulumi's mocks, whose ARNs name the region of the provider a resource is declared with.
 */
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import fc from "fast-check";
import type { OutboxArgs } from "../../../components/args";
import { REPLICATED_STREAM_VIEW_TYPE } from "../../../components/children";
import { homeOrigin } from "../../../components/replica-regions";
import { REGION_CHILD_PREFIX_MAX_LENGTH } from "../../../components/replica-validation";
import type { OutboxSettings } from "../../../components/settings";
import { findOutboxArgProblems, validateOutboxArgs } from "../../../components/validation";
import { ENV, readHandlerEnvironment } from "../../../runtime/config";
import { isOutboxError } from "../../../runtime/errors";
import { STREAM_VIEW_TYPE, streamFilterPatterns, type OriginScope } from "../../../runtime/schema";
import { TYPE, buildOutbox, inlineStatements, waitForRPCs, type BuiltOutbox } from "../../support/component-harness";
import { MOCK_REGION, unwrap, type RecordedResource } from "../../support/pulumi-mocks";

const HOME = MOCK_REGION;
const WEST = "us-west-2";
const PROVIDER = "pulumi:providers:aws";

/** The relay children each region has, by Pulumi name suffix and type. */
const RELAY_CHILDREN: readonly [string, string][] = [
    ["dlq", TYPE.queue],
    ["publisher", TYPE.fn],
    ["publisher-role", TYPE.role],
    ["publisher-logs", TYPE.logGroup],
    ["stream-mapping", TYPE.mapping],
    ["sweeper", TYPE.fn],
    ["sweeper-role", TYPE.role],
    ["sweeper-logs", TYPE.logGroup],
    ["sweep-schedule", TYPE.rule],
    ["sweep-target", TYPE.target],
    ["sweep-permission", TYPE.permission],
];

/** A function's environment, as the mocks recorded it. */
function environmentOf(built: BuiltOutbox, name: string): Record<string, string> {
    return built.one(TYPE.fn, name).inputs.environment.variables;
}

/** A mapping's filters, parsed. */
function filtersOf(built: BuiltOutbox, name: string): unknown[] {
    return built
        .one(TYPE.mapping, name)
        .inputs.filterCriteria.filters.map((f: { pattern: string }) => JSON.parse(f.pattern));
}

/** The names and types of an outbox's children, its own name replaced by `<name>`. */
function shape(resources: readonly RecordedResource[], name: string): string[] {
    return resources.map((r) => `${r.type} ${r.name.replace(name, "<name>")}`).sort();
}

function problemsOf(args: OutboxArgs, name = "orders") {
    return findOutboxArgProblems(args, name);
}

describe("Outbox replicaRegions", function () {
    let single: BuiltOutbox;
    let global: BuiltOutbox;

    before(async function () {
        // Two outboxes, each serializing its functions: more than the default on a busy machine.
        this.timeout(300_000);
        single = await buildOutbox("rrsingle");
        global = await buildOutbox("rrglobal", { replicaRegions: [WEST] });
    });

    describe("the table", function () {
        it("declares a replica in each region, with the table's point-in-time recovery, deletion protection and tags", function () {
            const table = global.one(TYPE.table).inputs;
            assert.deepEqual(table.replicas, [
                { regionName: WEST, pointInTimeRecovery: true, deletionProtectionEnabled: false, propagateTags: true },
            ]);
            assert.equal(table.streamEnabled, true);
            assert.equal(table.streamViewType, REPLICATED_STREAM_VIEW_TYPE);
            assert.equal(REPLICATED_STREAM_VIEW_TYPE, "NEW_AND_OLD_IMAGES");
        });

        it("declares the replicas on a table it takes over (importTableName)", async function () {
            const built = await buildOutbox("rradopt", { importTableName: "orders-outbox", replicaRegions: [WEST] });
            const table = built.one(TYPE.table);
            assert.equal(table.importId, "orders-outbox");
            assert.deepEqual(
                table.inputs.replicas.map((r: { regionName: string }) => r.regionName),
                [WEST],
            );
        });
    });

    describe("each replica region", function () {
        it("gets a provider of its region, a child of the component, named from it", function () {
            const provider = global.one(PROVIDER, `rrglobal-${WEST}-provider`);
            // Only the region, beside the two defaults the provider class fills in itself: credentials and the rest
            // come from the environment.
            assert.deepEqual(
                Object.keys(provider.inputs)
                    .filter((k) => k !== "version")
                    .sort(),
                ["region", "skipCredentialsValidation", "skipRegionValidation"],
            );
            assert.deepEqual(
                [provider.inputs.skipCredentialsValidation, provider.inputs.skipRegionValidation],
                ["false", "true"],
            );
            assert.equal(provider.inputs.region, WEST);
            assert.equal(provider.parent, global.one(TYPE.outbox).urn);
        });

        it("gets a DLQ, a publisher, its mapping, a sweeper and its schedule, each declared through that provider", async function () {
            const provider = global.one(PROVIDER);
            for (const [suffix, type] of RELAY_CHILDREN) {
                const name = `rrglobal-${WEST}-${suffix}`;
                const child = global.one(type, name);
                assert.equal(child.region, WEST, name);
                assert.equal(child.parent, global.one(TYPE.outbox).urn, `${name} is a child of the component`);
                const given = global.options.get(name)?.provider;
                assert.ok(given instanceof pulumi.ProviderResource, `${name} is given a provider`);
                assert.equal(await unwrap(given.urn), provider.urn, name);
            }
            // The home region's children keep the component's own provider.
            for (const [suffix, type] of RELAY_CHILDREN)
                assert.equal(global.one(type, `rrglobal-${suffix}`).region, HOME, suffix);
        });

        it("maps the replica's stream to the region's publisher, with the region's filters and DLQ", function () {
            const mapping = global.one(TYPE.mapping, `rrglobal-${WEST}-stream-mapping`).inputs;
            const table = global.one(TYPE.table).computed as { name: string };
            assert.equal(
                mapping.eventSourceArn,
                `arn:aws:dynamodb:${WEST}:111111111111:table/${table.name}/stream/2026-01-01T00:00:00.000`,
            );
            assert.equal(mapping.functionName, global.one(TYPE.fn, `rrglobal-${WEST}-publisher`).computed?.arn);
            assert.equal(
                mapping.destinationConfig.onFailure.destinationArn,
                global.one(TYPE.queue, `rrglobal-${WEST}-dlq`).computed?.arn,
            );
            assert.match(mapping.destinationConfig.onFailure.destinationArn, new RegExp(`^arn:aws:sqs:${WEST}:`));
            assert.deepEqual(
                filtersOf(global, `rrglobal-${WEST}-stream-mapping`),
                streamFilterPatterns({ region: WEST, otherRegions: [HOME], home: false }),
            );
        });

        it("gives the home mapping the home scope's filters: its own records, the unstamped, and none of the replicas'", function () {
            const home: OriginScope = { region: HOME, otherRegions: [WEST], home: true };
            assert.deepEqual(filtersOf(global, "rrglobal-stream-mapping"), streamFilterPatterns(home));
            assert.equal(
                global.one(TYPE.mapping, "rrglobal-stream-mapping").inputs.eventSourceArn,
                global.one(TYPE.table).computed?.streamArn,
            );
        });

        it("sets each region's origin scope in both functions' environment, which the relay reads back", async function () {
            const tableName = await unwrap(global.outbox.tableName);
            const destination = await unwrap(global.outbox.destinationArn);
            const scopes: [string, OriginScope, string][] = [
                ["rrglobal", { region: HOME, otherRegions: [WEST], home: true }, "rrglobal-dlq"],
                [`rrglobal-${WEST}`, { region: WEST, otherRegions: [HOME], home: false }, `rrglobal-${WEST}-dlq`],
            ];
            for (const [prefix, scope, dlq] of scopes) {
                for (const fn of ["publisher", "sweeper"]) {
                    const env = environmentOf(global, `${prefix}-${fn}`);
                    assert.equal(env[ENV.originRegion], scope.region);
                    assert.equal(env[ENV.otherRegions], scope.otherRegions.join(","));
                    assert.equal(env[ENV.homeRegion], String(scope.home));
                    // As Lambda runs it: AWS_REGION is the region of the function.
                    const read = readHandlerEnvironment({ ...env, AWS_REGION: scope.region });
                    assert.deepEqual(read.origin, scope, `${prefix}-${fn}`);
                    // One table name, one destination in the home region; the DLQ is the region's own.
                    assert.equal(read.tableName, tableName);
                    assert.equal(read.destination.arn, destination);
                    assert.match(destination, new RegExp(`^arn:aws:sns:${HOME}:`));
                    assert.equal(read.dlqUrl, global.one(TYPE.queue, dlq).computed?.url);
                }
            }
        });

        it("with two replicas, tells each region the other two, passes pointInTimeRecovery and deletionProtection to both, and applies transform keys in every region", async function () {
            const built = await buildOutbox("rrthree", {
                replicaRegions: [WEST, "ap-southeast-2"],
                pointInTimeRecovery: false,
                deletionProtection: true,
                transform: { queue: { delaySeconds: 5 } },
            });
            // A transform key applies to every region's child of that key.
            assert.deepEqual(
                built.resources.filter((r) => r.type === TYPE.queue).map((r) => [r.name, r.inputs.delaySeconds]),
                [
                    ["rrthree-dlq", 5],
                    [`rrthree-${WEST}-dlq`, 5],
                    ["rrthree-ap-southeast-2-dlq", 5],
                ],
            );
            // Each replica takes the table's point-in-time recovery and deletion protection.
            assert.deepEqual(
                built
                    .one(TYPE.table)
                    .inputs.replicas.map((r: Record<string, unknown>) => [
                        r.regionName,
                        r.pointInTimeRecovery,
                        r.deletionProtectionEnabled,
                    ]),
                [
                    [WEST, false, true],
                    ["ap-southeast-2", false, true],
                ],
            );
            const others = (prefix: string) => environmentOf(built, `${prefix}-publisher`)[ENV.otherRegions];
            assert.equal(others("rrthree"), `${WEST},ap-southeast-2`);
            assert.equal(others(`rrthree-${WEST}`), `${HOME},ap-southeast-2`);
            assert.equal(others("rrthree-ap-southeast-2"), `${HOME},${WEST}`);
            assert.equal(built.resources.filter((r) => r.type === PROVIDER).length, 2);
        });
    });

    describe("IAM, scoped per region", function () {
        for (const role of ["publisher-role", "sweeper-role"]) {
            it(`${role}: the region's role grants what the home region's does, on its own region's table, stream, DLQ and logs`, function () {
                const home = inlineStatements(global, `rrglobal-${role}`);
                const west = inlineStatements(global, `rrglobal-${WEST}-${role}`);
                assert.deepEqual(
                    west.map((s) => [s.Sid, s.Action]),
                    home.map((s) => [s.Sid, s.Action]),
                );
                const destination = global.one(TYPE.topic).computed?.arn as string;
                for (const statement of west) {
                    for (const resource of statement.Resource) {
                        if (resource === "*" || resource === destination) continue;
                        assert.match(resource, new RegExp(`^arn:aws:[a-z]+:${WEST}:`), `${statement.Sid}: ${resource}`);
                    }
                }
                const tableArn = `arn:aws:dynamodb:${WEST}:111111111111:table/${(global.one(TYPE.table).computed as { name: string }).name}`;
                assert.deepEqual(west.find((s) => s.Sid === "OutboxTable")?.Resource, [
                    tableArn,
                    `${tableArn}/index/*`,
                ]);
                assert.deepEqual(west.find((s) => s.Sid === "SendToDeadLetterQueue")?.Resource, [
                    global.one(TYPE.queue, `rrglobal-${WEST}-dlq`).computed?.arn,
                ]);
                // The home role names no replica's resource.
                for (const statement of home)
                    for (const resource of statement.Resource) assert.doesNotMatch(resource, new RegExp(`:${WEST}:`));
            });
        }
    });

    describe("without replicaRegions", function () {
        it("declares the same children as before, and a replica region only adds its provider and relay", function () {
            const added = global.resources.filter((r) => r.name.startsWith(`rrglobal-${WEST}-`));
            const rest = global.resources.filter((r) => !added.includes(r));
            assert.deepEqual(shape(rest, "rrglobal"), shape(single.resources, "rrsingle"));
            assert.deepEqual(
                shape(added, `rrglobal-${WEST}`),
                [...RELAY_CHILDREN, ["provider", PROVIDER] as [string, string]]
                    .map(([suffix, type]) => `${type} <name>-${suffix}`)
                    .sort(),
            );
            assert.equal(single.resources.filter((r) => r.type === PROVIDER).length, 0);
        });

        it("keeps today's table stream, no replicas, today's one filter and no origin variable", async function () {
            for (const built of [single, await buildOutbox("rrempty", { replicaRegions: [] })]) {
                const table = built.one(TYPE.table).inputs;
                assert.equal(table.streamViewType, STREAM_VIEW_TYPE);
                assert.equal(table.replicas, undefined);
                const mapping = built.resources.find((r) => r.type === TYPE.mapping)!;
                assert.deepEqual(
                    mapping.inputs.filterCriteria.filters.map((f: { pattern: string }) => f.pattern),
                    ['{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}'],
                );
                for (const fn of built.resources.filter((r) => r.type === TYPE.fn))
                    for (const variable of [ENV.originRegion, ENV.otherRegions, ENV.homeRegion])
                        assert.equal(fn.inputs.environment.variables[variable], undefined, `${fn.name} ${variable}`);
            }
        });
    });

    describe("refuses", function () {
        const refusal = (args: OutboxArgs, path: string, allowed: RegExp, name = "orders") => {
            const problems = problemsOf(args, name);
            const found = problems.find((p) => p.path === path);
            assert.ok(found, `${path} in ${JSON.stringify(problems.map((p) => p.path))}`);
            assert.match(found.allowed, allowed);
            assert.throws(
                () => validateOutboxArgs(args, name),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && err.message.includes(`${path} is `),
            );
        };

        it("a value that is not a list", function () {
            refusal({ replicaRegions: "us-west-2" as never }, "args.replicaRegions", /a list of AWS region names/);
        });

        it("an Output for the list, or for a region in it", function () {
            refusal(
                { replicaRegions: pulumi.output([WEST]) as never },
                "args.replicaRegions",
                /a plain list of region names/,
            );
            refusal(
                { replicaRegions: [pulumi.output(WEST) as never] },
                "args.replicaRegions[0]",
                /a plain AWS region name/,
            );
        });

        it("an entry that is not a region name", function () {
            for (const bad of ["", "US-WEST-2", "us-west", "uswest2", "arn:aws:dynamodb:us-west-2", 7])
                refusal(
                    { replicaRegions: [WEST, bad as never] },
                    "args.replicaRegions[1]",
                    /region name like "us-west-2"/,
                );
        });

        it("a region listed twice", function () {
            refusal({ replicaRegions: [WEST, "eu-central-1", WEST] }, "args.replicaRegions[2]", /each region once/);
        });

        it("a region whose children's names would pass 40 characters", function () {
            const name = "a".repeat(REGION_CHILD_PREFIX_MAX_LENGTH - WEST.length);
            refusal({ replicaRegions: [WEST] }, "args.replicaRegions[0]", /at most 40 characters \(it is 41/, name);
            assert.deepEqual(problemsOf({ replicaRegions: [WEST] }, name.slice(1)), []);
        });

        it("a customer key, a VPC, an SQS destination, provisioned capacity or transform.table.replicas beside replicas", function () {
            const kms = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
            const cases: [OutboxArgs, string, RegExp][] = [
                [{ kmsKeyArn: kms }, "args.kmsKeyArn", /a KMS key is regional/],
                [
                    { vpc: { subnetIds: ["subnet-0123456789abcdef0"], securityGroupIds: ["sg-0123456789abcdef0"] } },
                    "args.vpc",
                    /subnets and security groups are regional/,
                ],
                [{ queueArn: "arn:aws:sqs:eu-west-1:111111111111:events" }, "args.queueArn", /one SQS client/],
                [{ billingMode: "PROVISIONED" }, "args.billingMode", /auto scaling/],
                [
                    { transform: { table: { replicas: [{ regionName: WEST }] } } },
                    "args.transform.table.replicas",
                    /replicaRegions declares the replicas/,
                ],
            ];
            for (const [args, path, allowed] of cases) {
                refusal({ ...args, replicaRegions: [WEST] }, path, allowed);
                // Each is fine on a single-region table.
                assert.equal(problemsOf(args).filter((p) => p.path === path).length, 0, path);
                assert.equal(
                    problemsOf({ ...args, replicaRegions: [] }).filter((p) => p.path === path).length,
                    0,
                    path,
                );
            }
        });

        it("the home region among the replicas, once the provider's region is known", async function () {
            const parent = new pulumi.ComponentResource("test:index:Parent", "rrhomeparent");
            const s = { replicaRegions: [WEST, HOME] } as unknown as OutboxSettings;
            const origin = homeOrigin({ parent, name: "rrhome", s, t: {} }) as unknown as {
                promise(): Promise<unknown>;
            };
            await assert.rejects(
                origin.promise(),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    err.message.includes(`args.replicaRegions lists ${HOME}, the outbox's own region`) &&
                    err.message.includes(`remove ${HOME} from replicaRegions`),
            );
            await waitForRPCs();
        });

        it("property: any list of distinct region names is accepted, and any other entry is named by its index", function () {
            const region = fc
                .tuple(
                    fc.constantFrom("us", "eu", "ap", "ca", "sa", "me", "af", "il", "mx"),
                    fc.constantFrom("east", "west", "central", "north", "south", "southeast", "northeast"),
                    fc.integer({ min: 1, max: 9 }),
                )
                .map(([a, b, n]) => `${a}-${b}-${n}`);
            fc.assert(
                fc.property(fc.uniqueArray(region, { maxLength: 5 }), (regions) => {
                    assert.deepEqual(problemsOf({ replicaRegions: regions }, "orders"), []);
                }),
            );
            fc.assert(
                fc.property(
                    fc.uniqueArray(region, { maxLength: 4 }),
                    fc.string().filter((s) => !/^[a-z]{2,}(-[a-z0-9]+)+-\d{1,2}$/.test(s)),
                    fc.nat(),
                    (regions, bad, at) => {
                        const i = at % (regions.length + 1);
                        const list = [...regions.slice(0, i), bad, ...regions.slice(i)];
                        assert.deepEqual(
                            problemsOf({ replicaRegions: list }).map((p) => p.path),
                            [`args.replicaRegions[${i}]`],
                        );
                    },
                ),
            );
        });
    });
});
