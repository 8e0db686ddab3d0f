/**
 * The package as Pulumi's CLI runs it when another language uses it (`pulumi package add`, then a YAML or Python
 * program): a provider plugin, started by `pulumi-language-nodejs` and driven over gRPC.
 *
 * 1. A clean checkout: this repository's tracked (and new, not ignored) files copied to a temporary folder, no
 *    `dist/`, `node_modules` linked to this repository's. npm runs the `prepare` script of the private workspace
 *    `dev/toolchain` there, as `npm install` does in a checkout (the CLI installs a git source that way; a local
 *    path is the user's own checkout, installed by them). The package itself declares no install-time script.
 * 2. The plugin, started the way `pulumi-language-nodejs` starts it: `node <root>/node_modules/@pulumi/pulumi/cmd/run-plugin
 *    <root> <engine address>`, with the working directory the engine's, a consumer's project that has no
 *    `package.json` above it (a Python or YAML project). It prints its port.
 * 3. A fake engine (`fake-engine.ts`: no Pulumi CLI exists where the tests run) serves the engine and the
 *    resource monitor; the test calls GetPluginInfo, GetSchema and Construct as the engine would: an update with
 *    a secret input, a preview with unknown inputs, and an invalid arg.
 *
 * Real parts: npm's script runner and the package's build, run-plugin, Pulumi's component provider host, its
 * schema analyzer, the component, Pulumi's closure serializer and code-path walk, the gRPC wire format (secrets,
 * unknowns, archives). Fake: the engine and the resource monitor (they answer every registration with the
 * inputs plus made-up ARNs and names), and the Lambda runtime (the archive is loaded by Node with only the AWS SDK
 * on NODE_PATH, as in the Lambda Node.js runtime).
 *
 * The examples are checked against the schema this plugin served.
 */
import * as assert from "node:assert/strict";
import { ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { ServiceError } from "@grpc/grpc-js";
import { OUTBOX_TYPE } from "../../../components/outbox";
import type { OutboxArgs } from "../../../components/args";
import { GLOBAL_SECONDARY_INDEXES, OUTBOX_TABLE_TAG } from "../../../runtime/schema";
import { BuiltOutbox, buildOutbox } from "../../support/component-harness";
import { ComponentShape, componentShape } from "../../support/component-shape";
import {
    ARCHIVE_SIG,
    ASSET_SIG,
    FakeEngine,
    PluginClient,
    Registration,
    SIG_KEY,
    UNKNOWN,
    isSecret,
    secret,
} from "./fake-engine";
import {
    ProgramUse,
    ValueKind,
    pythonModule,
    pythonName,
    readPythonProgram,
    readYamlProgram,
} from "../../support/examples";
import { runAsync, type Ran } from "../../support/run-async";

const REPO = path.resolve(__dirname, "..", "..", "..");
const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as {
    name: string;
    version: string;
};
/** The private workspace that installs the toolchain's Node and builds the package after an install. */
const TOOLCHAIN_DIR = "dev/toolchain";
const TOOLCHAIN = JSON.parse(fs.readFileSync(path.join(REPO, TOOLCHAIN_DIR, "package.json"), "utf8")) as {
    name: string;
    scripts: Record<string, string>;
};
const PROJECT = "consumer";
const STACK = "dev";
const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
/** An output value (what an engine that accepts them sends for an input): `value` absent means unknown. */
const OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
/** The plain args of the update, given the same in-process for comparison. */
const UPDATE_ARGS = { maximumRetryAttempts: 7, memorySize: 512, tags: { team: "payments" } } satisfies OutboxArgs;

/** The environment for npm: this process's, without the `npm_*` variables an enclosing `npm test` sets. */
function npmEnvironment(): NodeJS.ProcessEnv {
    return Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || /^npm_config_cache$/i.test(key)),
    );
}

/** Copies what a clone of this repository would hold (tracked files, and new files not ignored) into `to`. */
function copyCheckout(to: string): number {
    const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
        cwd: REPO,
        encoding: "utf8",
    });
    assert.equal(listed.status, 0, `git ls-files: ${listed.stderr}`);
    const files = listed.stdout
        .split("\0")
        .filter((f) => f !== "" && f !== "node_modules" && fs.existsSync(path.join(REPO, f)));
    for (const file of files) {
        fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
        fs.copyFileSync(path.join(REPO, file), path.join(to, file));
    }
    fs.symlinkSync(fs.realpathSync(path.join(REPO, "node_modules")), path.join(to, "node_modules"), "dir");
    return files.length;
}

/** The paths in `value` where a string holding `needle` is sent in the clear (outside any secret). */
function plainOccurrences(value: unknown, needle: string, at = ""): string[] {
    if (isSecret(value)) return [];
    if (typeof value === "string") return value.includes(needle) ? [at] : [];
    if (Array.isArray(value)) return value.flatMap((v, i) => plainOccurrences(v, needle, `${at}[${i}]`));
    if (typeof value === "object" && value !== null)
        return Object.entries(value).flatMap(([k, v]) => plainOccurrences(v, needle, at === "" ? k : `${at}.${k}`));
    return [];
}

/** The paths in `value` of secrets whose value holds `needle`. */
function secretOccurrences(value: unknown, needle: string, at = ""): string[] {
    if (isSecret(value)) return JSON.stringify(value.value).includes(needle) ? [at] : [];
    if (Array.isArray(value)) return value.flatMap((v, i) => secretOccurrences(v, needle, `${at}[${i}]`));
    if (typeof value === "object" && value !== null)
        return Object.entries(value).flatMap(([k, v]) => secretOccurrences(v, needle, at === "" ? k : `${at}.${k}`));
    return [];
}

/** The properties of the schema type or property `prop` (reached through `#/types/` refs) that have no type. */
function untyped(schema: any, prop: any, where: string, seen: Set<string>): string[] {
    if (prop === undefined || (prop.type === undefined && prop.$ref === undefined)) return [where];
    if (prop.$ref !== undefined) {
        const local = /^#\/types\/(.+)$/.exec(prop.$ref);
        if (local === null || seen.has(local[1]!)) return [];
        seen.add(local[1]!);
        const type = schema.types?.[local[1]!];
        if (type === undefined) return [`${where} → ${prop.$ref} (no such type)`];
        return Object.entries(type.properties ?? {}).flatMap(([k, p]) => untyped(schema, p, `${local[1]}.${k}`, seen));
    }
    if (prop.type === "array") return untyped(schema, prop.items, `${where}[]`, seen);
    if (prop.type === "object" && prop.additionalProperties !== undefined)
        return untyped(schema, prop.additionalProperties, `${where}{}`, seen);
    return [];
}

/** The kinds of literal a program may give a schema property. */
function acceptedKinds(schema: any, prop: any): ValueKind[] {
    const expression: ValueKind[] = prop.plain === true ? [] : ["expression"];
    if (prop.$ref !== undefined) {
        const type = schema.types?.[String(prop.$ref).replace(/^#\/types\//, "")];
        return [type?.enum !== undefined ? (type.type as ValueKind) : "object", ...expression];
    }
    return [prop.type as ValueKind, ...expression];
}

/**
 * The outputs that hold a value for an Outbox without a payload bucket: `payloadBucketName` and `readerPolicy` are
 * undefined without `largePayloads` or `payloadBucketArn`, and the SDK's serializer leaves an undefined output out of
 * both Construct's result and the registered outputs. The schema still declares every output (the GetSchema test).
 */
const BUCKET_OUTPUTS: readonly string[] = ["payloadBucketName", "readerPolicy"];
const hasValueWithoutBucket = (output: string): boolean => !BUCKET_OUTPUTS.includes(output);

describe("plugin: the package as a provider plugin, driven over gRPC as the engine drives it", function () {
    this.timeout(600_000);
    let work: string;
    let root: string;
    let consumer: string;
    let build: Ran;
    let shape: ComponentShape;
    let inProcess: BuiltOutbox;
    let engine: FakeEngine & { address: string };
    let plugin: ChildProcessWithoutNullStreams;
    let pluginStderr = "";
    let client: PluginClient;
    let schema: any;
    let outbox: any;
    const timings: Record<string, number> = {};

    async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
        const started = Date.now();
        try {
            return await work();
        } finally {
            timings[label] = Date.now() - started;
        }
    }

    function construct(
        session: string,
        dryRun: boolean,
        inputs: Record<string, unknown>,
    ): Promise<{ urn: string; state: Record<string, any> }> {
        engine.expect(PROJECT, STACK, dryRun, session);
        return client.construct({
            monitor: engine.address,
            project: PROJECT,
            stack: STACK,
            dryRun,
            type: OUTBOX_TYPE,
            name: session,
            inputs,
        });
    }

    before(async () => {
        work = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-plugin-"));
        root = path.join(work, "checkout");
        const copied = copyCheckout(root);
        assert.ok(
            copied > 100 && !fs.existsSync(path.join(root, "dist")),
            `a clean checkout: ${copied} files, no dist/`,
        );
        // The build runs in its own process while this one reads the component's shape and builds it in-process.
        const building = timed("npm run prepare (toolchain workspace)", () =>
            runAsync("npm", ["run", "prepare", "--workspace", TOOLCHAIN.name], { cwd: root, env: npmEnvironment() }),
        );
        shape = componentShape().shape;
        inProcess = await buildOutbox("plugged", { ...UPDATE_ARGS, kmsKeyArn: KMS_KEY });
        build = await building;
        assert.equal(
            build.status,
            0,
            `npm run prepare --workspace ${TOOLCHAIN.name} in the clean checkout exited ${build.status}\n${build.stdout}\n${build.stderr}`,
        );

        // A Python consumer's project: what the engine's working directory is when it starts the plugin.
        consumer = path.join(work, "consumer");
        fs.mkdirSync(consumer);
        fs.writeFileSync(
            path.join(consumer, "Pulumi.yaml"),
            `name: ${PROJECT}\nruntime: python\npackages:\n  ${MANIFEST.name}: ${root}\n`,
        );
        for (let dir = consumer; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
            assert.ok(
                !fs.existsSync(path.join(dir, "package.json")),
                `no package.json may sit above the consumer's project, found one in ${dir}`,
            );
        }

        engine = await FakeEngine.start();
        const port = await timed("plugin start", () => {
            plugin = spawn(
                process.execPath,
                [path.join(root, "node_modules", "@pulumi", "pulumi", "cmd", "run-plugin"), root, engine.address],
                {
                    cwd: consumer,
                    env: {
                        PATH: process.env.PATH ?? "",
                        HOME: work,
                        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
                    },
                },
            );
            plugin.stderr.on("data", (c: Buffer) => (pluginStderr += c.toString()));
            return new Promise<number>((resolve, reject) => {
                let stdout = "";
                plugin.stdout.on("data", (c: Buffer) => {
                    stdout += c.toString();
                    if (stdout.includes("\n")) resolve(Number(stdout.split("\n")[0]));
                });
                plugin.on("exit", (code) =>
                    reject(
                        new Error(
                            `the plugin exited ${code} before printing its port\nstdout: ${stdout}\nstderr: ${pluginStderr}`,
                        ),
                    ),
                );
            });
        });
        assert.ok(Number.isInteger(port) && port > 0, `the plugin's first stdout line is its port: ${port}`);
        client = new PluginClient(port);
        schema = await timed("GetSchema", () => client.schema());
        outbox = schema.resources?.[OUTBOX_TYPE];
    });

    after(async () => {
        console.log(`      timings (ms): ${JSON.stringify(timings)}`);
        client?.close();
        plugin?.kill();
        await engine?.stop();
        if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
    });

    describe("the install step and the start", () => {
        it("builds dist/ in a clean checkout through the toolchain workspace's prepare script, which npm install runs, while the package declares no install-time script", () => {
            const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
                main: string;
                workspaces: string[];
                scripts: Record<string, string>;
            };
            assert.deepEqual(manifest.workspaces, [TOOLCHAIN_DIR]);
            assert.match(TOOLCHAIN.scripts.prepare, /npm run --prefix \.\.\/\.\. build/);
            // npm 11 lists a dependency's preinstall, install and postinstall, and its prepare from a git, file or
            // tarball source, among the install scripts each consumer must approve; prepack runs only on npm pack.
            for (const script of ["preinstall", "install", "postinstall", "prepare"])
                assert.equal(manifest.scripts[script], undefined, `the package's own ${script} script`);
            assert.match(manifest.scripts.prepack ?? "", /^npm run build$/);
            assert.ok(fs.existsSync(path.join(root, manifest.main)), `${manifest.main} exists after prepare`);
            assert.match(fs.readFileSync(path.join(root, "PulumiPlugin.yaml"), "utf8"), /^runtime: nodejs$/m);
        });

        it("starts from a consumer's project with no package.json, and reports the package.json version", async () => {
            assert.equal(await client.pluginInfo(), MANIFEST.version);
        });
    });

    describe("GetSchema", () => {
        it("serves Outbox under <package name>:index:Outbox as a component", () => {
            assert.equal(schema.name, MANIFEST.name);
            assert.ok(outbox, `resources: ${Object.keys(schema.resources ?? {}).join(", ")}`);
            assert.equal(outbox.isComponent, true);
        });

        it("has every arg of OutboxArgs as an input, each typed down to the AWS shapes transform takes", () => {
            assert.deepEqual(Object.keys(outbox.inputProperties).sort(), [...shape.inputs].sort());
            const seen = new Set<string>();
            assert.deepEqual(
                Object.entries(outbox.inputProperties).flatMap(([k, p]) => untyped(schema, p, `OutboxArgs.${k}`, seen)),
                [],
            );
            assert.ok(seen.size > 40, `the input types reached: ${seen.size}`);
            assert.equal(outbox.inputProperties.maximumRetryAttempts.type, "number");
            assert.equal(outbox.inputProperties.tags.type, "object");
        });

        it("has every output of the Outbox class, each a string but alarmArns, a list of strings", () => {
            assert.deepEqual(Object.keys(outbox.properties).sort(), [...shape.outputs].sort());
            const { alarmArns, ...strings } = outbox.properties as Record<string, any>;
            for (const [name, prop] of Object.entries<any>(strings)) assert.equal(prop.type, "string", name);
            assert.deepEqual(
                { type: alarmArns.type, items: alarmArns.items },
                { type: "array", items: { type: "string" } },
            );
        });
    });

    describe("Construct, an update with a secret input", () => {
        let result: { urn: string; state: Record<string, any> };
        let registered: Registration[];
        let component: Registration;
        const one = (type: string, name?: string): Registration => {
            const found = registered.filter((r) => r.type === type && (name === undefined || r.name === name));
            assert.equal(found.length, 1, `one ${type} ${name ?? ""}: ${found.length}`);
            return found[0]!;
        };

        before(async () => {
            result = await timed("Construct (update)", () =>
                construct("plugged", false, { ...UPDATE_ARGS, kmsKeyArn: secret(KMS_KEY) }),
            );
            registered = engine.of("plugged");
            component = one(OUTBOX_TYPE);
        });

        it("returns every output of the class, resolved to the children's values", () => {
            console.log(`      Construct state: ${JSON.stringify(result.state)}`);
            assert.equal(result.urn, component.urn);
            assert.deepEqual(Object.keys(result.state).sort(), [...shape.outputs].filter(hasValueWithoutBucket).sort());
            // writerPolicy names the KMS key, given as a secret here, so the policy comes back secret too.
            assert.ok(isSecret(result.state.writerPolicy), "writerPolicy holds the secret key ARN: it stays secret");
            const plain = {
                ...result.state,
                writerPolicy: isSecret(result.state.writerPolicy) ? result.state.writerPolicy.value : undefined,
            };
            const { alarmArns, ...strings } = plain as Record<string, unknown>;
            for (const [name, value] of Object.entries(strings))
                assert.ok(
                    typeof value === "string" && value !== "" && value !== UNKNOWN,
                    `${name}: ${JSON.stringify(value)}`,
                );
            assert.ok(
                Array.isArray(alarmArns) &&
                    alarmArns.length === 10 &&
                    alarmArns.every((a: unknown) => typeof a === "string" && a.startsWith("arn:")),
                `alarmArns: ${JSON.stringify(alarmArns)}`,
            );
            assert.equal(result.state.tableName, one("aws:dynamodb/table:Table").name + "-abc");
            assert.deepEqual(
                Object.keys(engine.outputs.get(component.urn) ?? {}).sort(),
                [...shape.outputs].filter(hasValueWithoutBucket).sort(),
                "registerResourceOutputs",
            );
        });

        it("registers every child under the component, the same children the component declares in-process", () => {
            const children = registered.filter((r) => r !== component);
            console.log(
                `      ${children.length} children: ${children
                    .map((r) => r.type.split(":").pop())
                    .sort()
                    .join(", ")}`,
            );
            for (const child of children)
                assert.equal(child.parent, component.urn, `${child.type} ${child.name}'s parent`);
            const expected = inProcess.resources
                .filter((r) => r.type !== OUTBOX_TYPE)
                .map((r) => `${r.type} ${r.name}`)
                .sort();
            assert.deepEqual(children.map((r) => `${r.type} ${r.name}`).sort(), expected);
            assert.ok(children.every((r) => r.custom));
        });

        it("gives the table exactly the GSIs of runtime/schema.ts: names, keys, projections", () => {
            assert.equal(GLOBAL_SECONDARY_INDEXES.length, 3);
            const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);
            assert.deepEqual(
                [...one("aws:dynamodb/table:Table").inputs.globalSecondaryIndexes].sort(byName),
                GLOBAL_SECONDARY_INDEXES.map((i) => ({
                    name: i.indexName,
                    keySchemas: i.keySchema.map((k) => ({ attributeName: k.attributeName, keyType: k.keyType })),
                    projectionType: i.projectionType,
                })).sort(byName),
            );
        });

        it("carries the args to the children: retries to the mapping, memory to both functions, tags to the table", () => {
            assert.equal(
                one("aws:lambda/eventSourceMapping:EventSourceMapping").inputs.maximumRetryAttempts,
                UPDATE_ARGS.maximumRetryAttempts,
            );
            for (const fn of registered.filter((r) => r.type === "aws:lambda/function:Function"))
                assert.equal(fn.inputs.memorySize, UPDATE_ARGS.memorySize, fn.name);
            assert.deepEqual(one("aws:dynamodb/table:Table").inputs.tags, {
                ...UPDATE_ARGS.tags,
                [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value,
            });
        });

        it("keeps the secret KMS key secret wherever it is registered", () => {
            const clear = registered.flatMap((r) => plainOccurrences(r.inputs, KMS_KEY).map((p) => `${r.name}.${p}`));
            assert.deepEqual(clear, [], "the key ARN in the clear");
            const held = registered.flatMap((r) => secretOccurrences(r.inputs, KMS_KEY).map((p) => `${r.name}.${p}`));
            console.log(`      the key, as a secret, in: ${held.join(", ")}`);
            for (const child of [
                "plugged-table",
                "plugged-dlq",
                "plugged-topic",
                "plugged-publisher-role",
                "plugged-sweeper-role",
            ]) {
                assert.ok(
                    held.some((p) => p.startsWith(`${child}.`)),
                    `${child} holds the key as a secret`,
                );
            }
        });

        it("serializes each function's Lambda archive inside the plugin: __index.js only, nothing from node_modules", () => {
            for (const fn of registered.filter((r) => r.type === "aws:lambda/function:Function")) {
                const code = fn.inputs.code;
                assert.equal(code?.[SIG_KEY], ARCHIVE_SIG, `${fn.name}.code is an archive`);
                assert.deepEqual(Object.keys(code.assets), ["__index.js"], `${fn.name}'s archive entries`);
                assert.equal(code.assets["__index.js"][SIG_KEY], ASSET_SIG);
                assert.match(code.assets["__index.js"].text, /exports\.handler/);
            }
            assert.deepEqual(
                engine.logs.filter((l) => l.severity >= 3),
                [],
                "no error logged to the engine",
            );
        });

        it("ships a publisher archive that loads where only the AWS SDK is provided, and answers an empty batch", function () {
            this.timeout(120_000);
            const fn = one("aws:lambda/function:Function", "plugged-publisher");
            const dir = path.join(work, "lambda", "publisher");
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, "__index.js"), fn.inputs.code.assets["__index.js"].text);
            // What the Lambda Node.js runtime puts on NODE_PATH: the AWS SDK v3 and its Smithy core.
            const sdk = path.join(work, "lambda-runtime-modules");
            fs.mkdirSync(sdk, { recursive: true });
            for (const scope of ["@aws-sdk", "@smithy"])
                fs.symlinkSync(path.join(REPO, "node_modules", scope), path.join(sdk, scope));
            const resultFile = path.join(work, "publisher-load.json");
            const variables = fn.inputs.environment.variables as Record<string, string>;
            const loaded = spawnSync(
                process.execPath,
                [path.join(__dirname, "fixtures", "lambda-load.js"), resultFile],
                {
                    cwd: dir,
                    encoding: "utf8",
                    env: {
                        PATH: process.env.PATH ?? "",
                        NODE_PATH: sdk,
                        AWS_REGION: "eu-west-1",
                        AWS_ACCESS_KEY_ID: "test",
                        AWS_SECRET_ACCESS_KEY: "test",
                        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
                        ...variables,
                    },
                },
            );
            assert.equal(loaded.status, 0, `the publisher archive loaded as Lambda loads it\n${loaded.stderr}`);
            const report = JSON.parse(fs.readFileSync(resultFile, "utf8")) as {
                handlerType: string;
                emptyBatch: unknown;
                modules: string[];
            };
            assert.equal(report.handlerType, "function");
            assert.deepEqual(report.emptyBatch, { batchItemFailures: [] });
            const sdkReal = fs.realpathSync(path.join(REPO, "node_modules")) + path.sep;
            const outside = report.modules.filter(
                (m) =>
                    !m.startsWith(fs.realpathSync(dir) + path.sep) &&
                    !m.startsWith(sdkReal) &&
                    !m.endsWith("lambda-load.js"),
            );
            assert.deepEqual(outside, [], "every module from the archive or the runtime-provided SDK");
            assert.deepEqual(
                report.modules.filter((m) => m.includes(`${path.sep}@pulumi${path.sep}`)),
                [],
                "no @pulumi module",
            );
        });
    });

    describe("Construct, adopting a table, with the choices as the plain strings a YAML program sends", () => {
        let result: { urn: string; state: Record<string, any> };
        let registered: Registration[];

        before(async () => {
            result = await timed("Construct (adopt)", () =>
                construct("adopted", false, {
                    importTableName: "legacy-outbox",
                    billingMode: "PROVISIONED",
                    provisionedCapacity: 8,
                    logLevel: "WARN",
                }),
            );
            registered = engine.of("adopted");
        });

        it("imports the table by its name under that name, and nothing else", () => {
            const table = registered.find((r) => r.type === "aws:dynamodb/table:Table");
            assert.deepEqual(
                [table?.importId, table?.inputs.name, table?.inputs.billingMode, table?.inputs.readCapacity],
                ["legacy-outbox", "legacy-outbox", "PROVISIONED", 8],
            );
            assert.deepEqual(
                registered.filter((r) => r.importId !== "").map((r) => r.name),
                ["adopted-table"],
            );
            assert.equal(result.state.tableName, "legacy-outbox");
        });

        it("sets the functions' log level from the string", () => {
            const functions = registered.filter((r) => r.type === "aws:lambda/function:Function");
            assert.equal(functions.length, 2);
            for (const fn of functions) assert.equal(fn.inputs.loggingConfig.applicationLogLevel, "WARN", fn.name);
        });
    });

    describe("Construct, an update publishing to an EventBridge bus", () => {
        const BUS = "arn:aws:events:eu-west-1:111111111111:event-bus/orders";
        let result: { urn: string; state: Record<string, any> };
        let registered: Registration[];

        before(async () => {
            result = await timed("Construct (bus)", () =>
                construct("bussed", false, { eventBusArn: BUS, eventSource: "com.acme.orders" }),
            );
            registered = engine.of("bussed");
        });

        it("creates no topic, and names the bus and the event source in both functions' environment", () => {
            assert.deepEqual(
                registered.filter((r) => r.type === "aws:sns/topic:Topic"),
                [],
            );
            const functions = registered.filter((r) => r.type === "aws:lambda/function:Function");
            assert.equal(functions.length, 2);
            for (const fn of functions) {
                const env = fn.inputs.environment.variables as Record<string, string>;
                assert.deepEqual(
                    [env.OUTBOX_EVENT_BUS_ARN, env.OUTBOX_EVENT_SOURCE, env.OUTBOX_TOPIC_ARN, env.OUTBOX_QUEUE_ARN],
                    [BUS, "com.acme.orders", undefined, undefined],
                    fn.name,
                );
            }
        });

        it("returns destinationArn, the bus, and no topicArn (undefined outputs are left out, as payloadBucketName is)", () => {
            assert.equal(result.state.destinationArn, BUS);
            assert.equal("topicArn" in result.state, false, JSON.stringify(Object.keys(result.state)));
            assert.deepEqual(
                Object.keys(result.state).sort(),
                [...shape.outputs].filter((o) => hasValueWithoutBucket(o) && o !== "topicArn").sort(),
            );
        });
    });

    describe("Construct, an invalid arg", () => {
        let refused: ServiceError | undefined;

        before(async () => {
            refused = await timed("Construct (refused)", () =>
                construct("refused", false, { maximumRetryAttempts: -1 }).then(
                    () => undefined,
                    (e: ServiceError) => e,
                ),
            );
        });

        it("is refused as gRPC code 2 with the arg's name, its value and the fix in the message", () => {
            assert.ok(refused, "Construct failed");
            assert.equal(refused.code, 2);
            assert.match(
                refused.details,
                /^Outbox "refused" has 1 invalid arg:\n {2}- args\.maximumRetryAttempts is -1; allowed: an integer from 0 to 10000 \(retries\); fix: /,
            );
        });

        it("registers nothing, not even the component", () => {
            assert.deepEqual(engine.of("refused"), []);
        });
    });

    describe("Construct, a preview with unknown inputs and a secret tag", () => {
        let result: { urn: string; state: Record<string, any> };
        let registered: Registration[];

        before(async () => {
            result = await timed("Construct (preview)", () =>
                construct("previewed", true, {
                    kmsKeyArn: UNKNOWN,
                    topicArn: { [SIG_KEY]: OUTPUT_VALUE_SIG, dependencies: [] },
                    tags: { team: secret("payments") },
                }),
            );
            registered = engine.of("previewed");
        });

        it("accepts the engine's unknown and an output value without a value, and returns every output", () => {
            assert.ok(registered.some((r) => r.type === OUTBOX_TYPE && r.urn === result.urn));
            assert.deepEqual(Object.keys(result.state).sort(), [...shape.outputs].filter(hasValueWithoutBucket).sort());
        });

        it("passes the unknown key on as unknown and, given a topic, creates none", () => {
            assert.equal(
                registered.find((r) => r.type === "aws:dynamodb/table:Table")?.inputs.serverSideEncryption?.kmsKeyArn,
                UNKNOWN,
            );
            assert.deepEqual(
                registered.filter((r) => r.type === "aws:sns/topic:Topic"),
                [],
            );
            assert.ok(
                registered
                    .filter((r) => r.type === "aws:lambda/function:Function")
                    .every((r) => r.inputs.code?.[SIG_KEY] === ARCHIVE_SIG),
                "the archives are built in a preview too",
            );
        });

        it("keeps the secret tag value secret on every child that takes tags", () => {
            assert.deepEqual(
                registered.flatMap((r) => plainOccurrences(r.inputs, "payments").map((p) => `${r.name}.${p}`)),
                [],
            );
            const tagged = registered.filter((r) => r.inputs.tags !== undefined);
            assert.ok(tagged.length >= 5, `${tagged.length} children take tags`);
            for (const r of tagged) assert.ok(isSecret(r.inputs.tags), `${r.name}.tags is a secret`);
        });
    });

    describe("the examples, against the schema GetSchema served", () => {
        const examples = path.join(REPO, "examples");

        function checkUse(
            program: ProgramUse,
            nameOf: (schemaName: string) => string,
            typeOf: (use: string) => string,
        ): void {
            assert.equal(program.resources.length, 1, "one Outbox");
            const [resource] = program.resources;
            const token = typeOf(resource!.type);
            const declared = schema.resources?.[token];
            assert.ok(declared, `${resource!.type}: no resource ${token} in the schema`);
            const inputs = new Map(Object.keys(declared.inputProperties).map((k) => [nameOf(k), k]));
            for (const [used, kind] of Object.entries(resource!.properties)) {
                const input = inputs.get(used);
                assert.ok(
                    input !== undefined,
                    `${used} is not an input of ${token} (inputs: ${[...inputs.keys()].join(", ")})`,
                );
                const accepted = acceptedKinds(schema, declared.inputProperties[input]);
                assert.ok(
                    accepted.includes(kind),
                    `${used} is given a ${kind}; the schema takes ${accepted.join(" or ")}`,
                );
            }
            const outputs = new Map(Object.keys(declared.properties).map((k) => [nameOf(k), k]));
            assert.ok(program.outputs.length > 0, "exports outputs");
            for (const output of program.outputs) {
                assert.equal(output.resource, resource!.name, `${output.name} reads the Outbox`);
                assert.ok(
                    outputs.has(output.output),
                    `${output.output} is not an output of ${token} (outputs: ${[...outputs.keys()].join(", ")})`,
                );
            }
            const unused = [...outputs.keys()].filter((o) => !program.outputs.some((p) => p.output === o));
            assert.deepEqual(unused, [], "exports every output of the Outbox");
        }

        it("YAML: declares one Outbox with inputs the schema has, of the schema's types, and exports its outputs", () => {
            const program = readYamlProgram(path.join(examples, "yaml", "Pulumi.yaml"));
            assert.equal(
                path.resolve(examples, "yaml", program.packages[MANIFEST.name] ?? "(missing)"),
                REPO,
                "packages points at this package",
            );
            checkUse(
                program,
                (k) => k,
                (type) => type,
            );
        });

        it(`Python: imports ${pythonModule(MANIFEST.name)}, calls Outbox with snake_case args the schema has, and exports its outputs`, () => {
            const program = readPythonProgram(
                path.join(examples, "python", "__main__.py"),
                pythonModule(MANIFEST.name),
            );
            assert.ok(program.imported, `import ${pythonModule(MANIFEST.name)} as <alias>`);
            checkUse(program, pythonName, (cls) => `${MANIFEST.name}:index:${cls}`);
            const project = readYamlProgram(path.join(examples, "python", "Pulumi.yaml"));
            assert.equal(
                path.resolve(examples, "python", project.packages[MANIFEST.name] ?? "(missing)"),
                REPO,
                "packages points at this package",
            );
        });

        it("Python: compiles (python3 -m py_compile)", function () {
            const python = spawnSync("python3", ["--version"], { encoding: "utf8" });
            if (python.error !== undefined || python.status !== 0) {
                console.log("      skipped: no python3 on this machine, so the Python example is not compiled");
                this.skip();
            }
            // The bytecode goes to the temporary folder, not next to the example.
            const compiled = spawnSync("python3", ["-m", "py_compile", path.join(examples, "python", "__main__.py")], {
                encoding: "utf8",
                env: { ...process.env, PYTHONPYCACHEPREFIX: path.join(work, "pycache") },
            });
            assert.equal(compiled.status, 0, `py_compile: ${compiled.stderr}`);
        });
    });
});
