/**
 * The merge behind `transform` (issue 39), on plain values and Outputs, as examples and as fast-check properties:
 * a key of the component's args the transform does not name is never dropped, every leaf the transform gives is
 * kept, arrays are replaced, the inputs are never changed; the table keeps its outbox tag whatever the transform.
 * And the failing inputs of `transform`, `globalSecondaryIndexes` and `vpc`.
 */
import * as assert from "node:assert/strict";
import fc from "fast-check";
import * as pulumi from "@pulumi/pulumi";
import type { OutboxArgs } from "../../../components/args";
import { findOutboxArgProblems } from "../../../components/validation";
import { MAX_EXTRA_INDEXES } from "../../../components/index-validation";
import { deepMerge, isPlainObject, transformCallback, transformed } from "../../../components/transform";
import { OUTBOX_TABLE_TAG } from "../../../runtime/schema";
import { unwrap } from "../../support/pulumi-mocks";

/** JSON-like values: the shapes resource args take (no undefined: a key set to undefined is a removal). */
const { value: json } = fc.letrec((tie) => ({
    value: fc.oneof(
        { depthSize: "small" },
        fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
        fc.array(tie("value"), { maxLength: 3 }),
        tie("object"),
    ),
    object: fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), tie("value"), {
        maxKeys: 4,
        noNullPrototype: true,
    }),
}));
const object = json.filter(isPlainObject) as fc.Arbitrary<Record<string, unknown>>;

/** Every path to a leaf (a value that is not a plain object, or an empty object), with the leaf. */
function leaves(value: unknown, path: string[] = []): [string[], unknown][] {
    if (!isPlainObject(value) || Object.keys(value).length === 0) return [[path, value]];
    return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
}

function at(value: unknown, path: string[]): unknown {
    return path.reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), value);
}

/** Whether `override` names `path` or a prefix of it with a value that is not a plain object (which replaces). */
function replacedBy(override: unknown, path: string[]): boolean {
    let v = override;
    for (const key of path) {
        if (!isPlainObject(v)) return true;
        if (!(key in v)) return false;
        v = v[key];
    }
    return true;
}

const TABLE_ARGS_OWNER = { name: "props", t: {} };

describe("transform's merge", () => {
    describe("deepMerge, examples", () => {
        it("merges plain objects key by key, replaces arrays and other values, removes a key set to undefined", () => {
            const base = { a: 1, n: { x: 1, y: [1, 2], z: { deep: true } }, list: [1, 2, 3], gone: "x" };
            const merged = deepMerge(base, { n: { y: [9], w: 2 }, list: [4], gone: undefined, b: "new" });
            assert.deepEqual(merged, { a: 1, n: { x: 1, y: [9], z: { deep: true }, w: 2 }, list: [4], b: "new" });
            assert.deepEqual(base.n.y, [1, 2], "the inputs are not changed");
        });

        it("merges an Output object with a plain one once both are known, and keeps it secret", async () => {
            const merged = deepMerge(pulumi.secret({ team: "a", env: "prod" }), { env: "staging" });
            assert.ok(pulumi.Output.isInstance(merged));
            const out = merged as pulumi.Output<Record<string, string>>;
            assert.deepEqual(await unwrap(out), { team: "a", env: "staging" });
            assert.equal(await out.isSecret, true);
            // An Output that resolves to something else than an object replaces.
            assert.deepEqual(await unwrap(deepMerge({ a: 1 }, pulumi.output(["x"])) as pulumi.Output<unknown>), ["x"]);
        });

        it("keeps a key named __proto__ a key, never the merged object's prototype", () => {
            const override = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
            const merged = deepMerge({ a: 1 }, override) as Record<string, unknown>;
            assert.equal(Object.getPrototypeOf(merged), Object.prototype);
            assert.deepEqual(Object.getOwnPropertyDescriptor(merged, "__proto__")?.value, { polluted: true });
            assert.equal(({} as Record<string, unknown>).polluted, undefined);
        });

        it("treats resources, Outputs and class instances as values: they replace, and are never copied", () => {
            class Thing {
                constructor(readonly v: number) {}
            }
            const thing = new Thing(1);
            const merged = deepMerge({ a: { v: 2 }, b: 1 }, { a: thing }) as { a: unknown; b: number };
            assert.equal(merged.a, thing);
            assert.equal(merged.b, 1);
            const output = pulumi.output(1);
            assert.equal((deepMerge({ a: 2 }, { a: output }) as { a: unknown }).a, output);
        });
    });

    describe("deepMerge, properties", () => {
        it("never drops a leaf of the component's args that the transform does not name, keeps every leaf it gives, changes neither", () => {
            fc.assert(
                fc.property(object, object, (base, override) => {
                    const before = JSON.stringify([base, override]);
                    const merged = deepMerge(base, override);
                    for (const [path, leaf] of leaves(base)) {
                        if (!replacedBy(override, path)) assert.deepEqual(at(merged, path), leaf, path.join("."));
                    }
                    for (const [path, leaf] of leaves(override)) {
                        if (isPlainObject(leaf) && Object.keys(leaf).length === 0) continue;
                        assert.deepEqual(at(merged, path), leaf, path.join("."));
                    }
                    assert.equal(JSON.stringify([base, override]), before);
                }),
                { numRuns: 300 },
            );
        });

        it("is idempotent: merging the same transform twice gives what merging it once does", () => {
            fc.assert(
                fc.property(object, object, (base, override) => {
                    const once = deepMerge(base, override);
                    assert.deepEqual(deepMerge(once, override), once);
                }),
                { numRuns: 200 },
            );
        });
    });

    describe("the table's outbox tag", () => {
        const tags = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.string({ maxLength: 6 }), {
            maxKeys: 4,
            noNullPrototype: true,
        });
        /** A transform.table as a caller may write it: tags as an object (maybe with the outbox tag), or a callback. */
        const tableTransform = fc.oneof(
            tags.map((t) => ({ kind: "object", t, value: { tags: t } as Record<string, unknown> })),
            tags.map((t) => ({
                kind: "callback",
                t,
                value: (args: Record<string, unknown>) => {
                    args.tags = t;
                },
            })),
            tags.map((t) => ({ kind: "returns", t, value: (args: object) => ({ ...args, tags: t }) })),
            fc.constant({ kind: "removes", t: {}, value: (args: Record<string, unknown>) => void delete args.tags }),
        );

        it("is kept with its value, over the tags arg and any transform, and the other tags merge with the transform winning", async () => {
            await fc.assert(
                fc.asyncProperty(tags, tableTransform, async (given, transform) => {
                    const [, args] = transformed(
                        { ...TABLE_ARGS_OWNER, t: { table: transform.value as never } },
                        "table",
                        { tags: pulumi.output(given), billingMode: "PAY_PER_REQUEST" },
                        {},
                    );
                    const final = await unwrap(
                        pulumi.output(args.tags as unknown as pulumi.Input<Record<string, string>>),
                    );
                    const expected =
                        transform.kind === "object"
                            ? { ...given, ...transform.t }
                            : transform.kind === "removes"
                              ? {}
                              : { ...transform.t };
                    assert.deepEqual(final, { ...expected, [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value });
                    assert.equal(args.billingMode, "PAY_PER_REQUEST");
                }),
                { numRuns: 100 },
            );
        });
    });

    describe("transformed", () => {
        it("calls a callback with a copy of the args, the options and the child's name, and keeps what it changed or returned", () => {
            const base = { nested: { a: 1 }, list: [1] };
            const seen: unknown[] = [];
            const [name, args, opts] = transformed(
                {
                    name: "orders",
                    t: {
                        queue: ((a: typeof base, o: pulumi.CustomResourceOptions, n: string) => {
                            seen.push(n);
                            a.nested.a = 2;
                            a.list.push(2);
                            o.protect = true;
                        }) as never,
                    },
                },
                "queue",
                base,
                { deleteBeforeReplace: true } as pulumi.CustomResourceOptions,
            );
            assert.deepEqual([name, seen], ["orders-dlq", ["orders-dlq"]]);
            assert.deepEqual(args, { nested: { a: 2 }, list: [1, 2] });
            assert.deepEqual(opts, { deleteBeforeReplace: true, protect: true });
            assert.deepEqual(base, { nested: { a: 1 }, list: [1] }, "the component's args are not changed");
            const [, returned] = transformed(
                { name: "orders", t: { queue: (() => ({ replaced: true })) as never } },
                "queue",
                base,
                {},
            );
            assert.deepEqual(returned, { replaced: true });
        });

        it("refuses a callback that returns something other than args, and a key that is neither object nor function", () => {
            for (const bad of [42, "x", ["a"]]) {
                assert.throws(
                    () => transformed({ name: "orders", t: { topic: (() => bad) as never } }, "topic", {}, {}),
                    (e: any) =>
                        e.code === "INVALID_CONFIG" &&
                        /^transform\.topic returned an? (number|string|array) .*allowed: nothing \(change args in place\) or the args object of orders-topic/.test(
                            e.message,
                        ),
                );
            }
            for (const [bad, type] of [
                [7, "a number"],
                ["x", "a string"],
                [[{}], "an array"],
                [true, "a boolean"],
            ] as const) {
                assert.throws(
                    () => transformed({ name: "orders", t: { table: bad as never } }, "table", {}, {}),
                    (e: any) =>
                        e.code === "INVALID_CONFIG" &&
                        e.message.startsWith(`transform.table is ${type}; allowed: an object of orders-table's args`),
                );
            }
        });
    });
});

/** The problems of `args`, as `path: allowed` lines. */
function problems(args: OutboxArgs): string[] {
    return findOutboxArgProblems(args).map((p) => `${p.path} is ${p.value}: ${p.allowed}`);
}

describe("validation of transform, globalSecondaryIndexes and vpc", () => {
    it("takes an object or a function on each transform key, and refuses anything else naming the key, the value and its type", () => {
        assert.deepEqual(
            problems({ transform: { table: {}, publisherRole: transformCallback(() => undefined), queue: undefined } }),
            [],
        );
        assert.deepEqual(
            problems({
                transform: {
                    table: "x",
                    publisher: 3,
                    sweeperRole: [],
                    topic: null,
                    dashboard: pulumi.output({}),
                } as never,
            }).map((p) => p.replace(/: an object of.*/, "")),
            [
                'args.transform.table is "x" (a string)',
                "args.transform.publisher is 3 (a number)",
                "args.transform.sweeperRole is [] (an array)",
                "args.transform.topic is null (null)",
                "args.transform.dashboard is an Output (not known until deployment)",
            ],
        );
        assert.match(
            problems({ transform: { table: 1 } as never })[0],
            /: an object of the child's args \(deep-merged over the component's\) or a function \(args, opts, name\) => void$/,
        );
    });

    it("refuses an extra index named like the outbox's, given twice, or keyed on an outbox attribute with another type", () => {
        assert.deepEqual(
            problems({
                globalSecondaryIndexes: [
                    { name: "ClaimIndex", hashKey: "x" },
                    { name: "ByCustomer", hashKey: "customer" },
                    { name: "ByCustomer", hashKey: "customer" },
                    { name: "ByPk", hashKey: "PK", hashKeyType: "N" },
                    { name: "ByNumber", hashKey: "customer", hashKeyType: "N" },
                ],
            }).map((p) => p.split(":")[0]),
            [
                'args.globalSecondaryIndexes[0].name is "ClaimIndex"',
                'args.globalSecondaryIndexes[2].name is "ByCustomer"',
                'args.globalSecondaryIndexes[3].hashKeyType is "N"',
                'args.globalSecondaryIndexes[4].hashKeyType is "N"',
            ],
        );
        assert.match(
            problems({ globalSecondaryIndexes: [{ name: "ByPk", hashKey: "PK", hashKeyType: "N" }] })[0],
            /: "S": the outbox defines the attribute PK as "S"/,
        );
        assert.match(
            problems({ globalSecondaryIndexes: [{ name: "ExpiryIndex", hashKey: "x" }] })[0],
            /a name other than the outbox's own indexes \(ExpiryIndex, RecordIDIndex, ClaimIndex\)/,
        );
    });

    it("refuses an extra index's bad fields, a list too long, and an index that is not an object", () => {
        assert.deepEqual(
            problems({
                globalSecondaryIndexes: [
                    { name: "x", hashKey: "" },
                    { name: "Good", hashKey: "a", rangeKeyType: "S" },
                    { name: "Good2", hashKey: "a", hashKeyType: "string" as never, projectionType: "SOME" as never },
                    { name: "Good3", hashKey: "a", projectionType: "INCLUDE" },
                    { name: "Good4", hashKey: "a", nonKeyAttributes: ["b"] },
                    "ByCustomer" as never,
                ],
            }).map((p) => p.split(" is ")[0]),
            [
                "args.globalSecondaryIndexes[0].name",
                "args.globalSecondaryIndexes[0].hashKey",
                "args.globalSecondaryIndexes[1].rangeKeyType",
                "args.globalSecondaryIndexes[2].hashKeyType",
                "args.globalSecondaryIndexes[2].projectionType",
                "args.globalSecondaryIndexes[3].nonKeyAttributes",
                "args.globalSecondaryIndexes[4].nonKeyAttributes",
                "args.globalSecondaryIndexes[5]",
            ],
        );
        const many = Array.from({ length: MAX_EXTRA_INDEXES + 1 }, (_, i) => ({ name: `Index${i}`, hashKey: "a" }));
        assert.deepEqual(problems({ globalSecondaryIndexes: many.slice(0, MAX_EXTRA_INDEXES) }), []);
        assert.deepEqual(problems({ globalSecondaryIndexes: many }), [
            "args.globalSecondaryIndexes is 18 indexes: a list of at most 17 indexes (DynamoDB allows 20 per table, the outbox uses 3)",
        ]);
        assert.match(
            problems({ globalSecondaryIndexes: pulumi.output([]) as never })[0],
            /^args.globalSecondaryIndexes is an Output .*: a plain list of plain objects/,
        );
    });

    it("refuses a vpc that is not an object, and lists of subnets or security groups that are empty, too long or not IDs", () => {
        const subnet = "subnet-0123456789abcdef0";
        const group = "sg-0123456789abcdef0";
        assert.deepEqual(problems({ vpc: { subnetIds: [subnet], securityGroupIds: [group] } }), []);
        assert.deepEqual(
            problems({ vpc: { subnetIds: pulumi.output([subnet]), securityGroupIds: [pulumi.output(group)] } }),
            [],
        );
        assert.deepEqual(
            problems({ vpc: { subnetIds: [], securityGroupIds: ["vpc-0123456789abcdef0"] } }).map(
                (p) => p.split(":")[0],
            ),
            ["args.vpc.subnetIds is []", 'args.vpc.securityGroupIds is ["vpc-0123456789abcdef0"]'],
        );
        assert.match(
            problems({ vpc: { subnetIds: Array(17).fill(subnet), securityGroupIds: [group] } })[0],
            /a list of 1 to 16 subnet IDs/,
        );
        assert.match(
            problems({ vpc: { subnetIds: [subnet], securityGroupIds: Array(6).fill(group) } })[0],
            /a list of 1 to 5 security group IDs/,
        );
        assert.deepEqual(problems({ vpc: "vpc-1" as never }), [
            'args.vpc is "vpc-1": an object { subnetIds, securityGroupIds }',
        ]);
    });
});
