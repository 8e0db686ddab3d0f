/**
 * The package as a consumer meets it: built, packed with `npm pack`, installed by npm into a fresh Pulumi project
 * (with the latest `@pulumi/pulumi` and `@pulumi/aws` of its own, the package's optional peers) together with its
 * production dependency closure, required by name from a plain JavaScript Pulumi program (no ts-node, no TypeScript
 * sources), used by a plain application, type-checked by a default Pulumi TypeScript project, run as a CLI from the
 * bin npm linked, and its Lambda archive run the way the Lambda Node.js runtime runs it. The same tarball is also
 * installed into a plain Node application with no dependency of its own, which uses only `dynamodb-outbox/runtime`
 * and must get no Pulumi.
 *
 * The install is `npm install --offline --no-audit --no-fund <tarball>`, from the local npm cache only, so the
 * test needs no network (`support/consumer-project.ts` says how, and why the consumer starts with a lock).
 *
 * Real parts: the build (`npm run build`), `npm pack` (its file list is what ships), npm's install of the
 * tarball (its `dependencies`, `bin`, `exports` and `typesVersions` as a consumer gets them), Pulumi's closure
 * serializer and code-path walk on the installed layout, Node's module resolution, tsc with Pulumi's template
 * tsconfig. The devDependencies (ts-node, typescript, mocha, the emulators) are not installed; tsc runs from this
 * repository. The Lambda folder runs on Lambda's Node major (this process's, see tests/support/lambda-node.ts) and
 * gets `@aws-sdk/*` and `@smithy/*` only through NODE_PATH, as the Lambda runtime provides them; the application
 * and the CLI get them only from the installed closure.
 */
import * as assert from "node:assert/strict";
import { SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { builtinModules } from "node:module";
import { ENV } from "../../../runtime/config";
import { OUTBOX_TYPE } from "../../../components/naming";
import { tableArgs } from "../../../components/children";
import { resolveOutboxSettings } from "../../../components/settings";
import { OUTBOX_TABLE_TAG } from "../../../runtime/schema";
import { OUTBOX_POLICY_NAMES } from "../../../policy/outbox-policies";
import { RunningPack } from "../../support/policy/analyzer";
import { runAsync, type Ran } from "../../support/run-async";
import { filesUnder, folderSize } from "../../support/serialized";
import { LAMBDA_NODE_MAJOR, lambdaNode, majorOf } from "../../support/lambda-node";
import { runLambdaHost, type HostReport } from "../../support/lambda-host";
import { dynamoEndpoint, uniqueTableName } from "../../support/dynamodb";
import {
    FIXTURES,
    MANIFEST,
    REPO,
    bytesUnder,
    consumerArchivesOf,
    consumerEnvironment,
    installConsumerProject,
    installNewerSdkApp,
    installRuntimeApp,
    installedPackages,
    npmEnvironment,
    ok,
    packPackage,
    pulumiConsumerDependencies,
    run,
    runConsumerProgram,
    type ConsumerArchives,
    type ConsumerProject,
} from "../../support/package/consumer-project";

const TSC = require.resolve("typescript/bin/tsc");

/**
 * The budgets for each function's archive when the package is installed: `__index.js`, the package's
 * package.json and the relay's `.js` files of its `dist/runtime`, nothing else. The whole package (compiled JS, .d.ts,
 * README) made it 951,998 bytes raw, 319,705 deflated, under a 960 KB budget; listing only the runtime's files
 * took it to 272,880 bytes raw, 79,659 deflated (the sweeper, 55 files), under 320 KB raw and 96 KB deflated. The
 * runtime grew into that headroom; the trace context (issue 27: trace-context.js, open-telemetry.js,
 * message-trace.js, about 3.8 KB deflated) took the publisher's to 324,433 bytes raw, 99,429 deflated (75 files),
 * and the claim check (issue 26: runtime/claim-check/, the writer's offload and the consumer's resolver) to 360,888
 * bytes raw, 110,174 deflated (82 files), and the three destination kinds (issue 25: runtime/destination/, and
 * runtime/inbox/json-span.js) to 389,464 bytes raw, 119,692 deflated (91 files); issues 33 and 38 (the record size
 * margin and unclaimable records, the event source check, the bus check, the server clock, the origin id and source,
 * the attribute-keeping middleware) to 431,378 bytes raw, 132,168 deflated (98 files), so the budget is now 440 KB
 * raw and 136 KB deflated. Issue 35 took the archives down to what the handlers' module (runtime/relay/lambda.js)
 * loads, directly or not: 74 files, 298,191 bytes raw and 91,762 deflated (the sweeper's), so the budget is now
 * 300 KB raw and 92 KB deflated. Then the build bundled that module into one file (dev/build.mjs: 72 modules, each
 * deflated on its own in the zip before): 3 files, 310,314 bytes raw and 66,127 deflated, so the budget is now 312 KB
 * raw and 70 KB deflated, the deflated one just under 60% of issue 35's 119,692 bytes. 336 KB raw and 72 KB deflated
 * since the relay carries issue 34's CloudEvents body and schema version and issue 37's origin scope (measured then
 * at 335,314 bytes raw and 71,787 deflated with an S3 require the bundle has since lost).
 */
const CONSUMED_ARCHIVE_BUDGET = { raw: 336 * 1024, deflated: 72 * 1024 } as const;

/** The `tsconfig.json` of Pulumi's TypeScript template (`pulumi new typescript`): strict, no `skipLibCheck`. */
const PULUMI_TEMPLATE_TSCONFIG = {
    compilerOptions: {
        strict: true,
        outDir: "bin",
        target: "es2020",
        module: "commonjs",
        moduleResolution: "node",
        sourceMap: true,
        experimentalDecorators: true,
        pretty: true,
        noFallthroughCasesInSwitch: true,
        noImplicitReturns: true,
        forceConsistentCasingInFileNames: true,
    },
    files: ["index.ts"],
};

/**
 * A default Pulumi TypeScript program using both entries, as the README shows them. The Outbox is assigned to the
 * program's own `pulumi.ComponentResource`: with a second copy of `@pulumi/pulumi` under the package, tsc refuses
 * it (TS2322, "Property 'initialize' is protected but type 'Resource' is not a class derived from 'Resource'").
 */
const TYPESCRIPT_PROGRAM = [
    `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";`,
    `import * as pulumi from "@pulumi/pulumi";`,
    `import { Outbox, OutboxArgs } from "${MANIFEST.name}";`,
    `import { ENV, OutboxError, OutboxWriter } from "${MANIFEST.name}/runtime";`,
    `import { startLocalEventSourceMapping, type LambdaStreamEvent } from "${MANIFEST.name}/testing";`,
    ``,
    `const args: OutboxArgs = {};`,
    `const outbox = new Outbox("orders", args);`,
    `export const resource: pulumi.ComponentResource = outbox;`,
    `export const tableName = outbox.tableName;`,
    `export const writer = (client: DynamoDBClient): OutboxWriter => new OutboxWriter({ client, tableName: "orders-outbox" });`,
    `export const fail = (): OutboxError => new OutboxError("INVALID_CONFIG", ENV.tableName);`,
    `export const start: typeof startLocalEventSourceMapping = startLocalEventSourceMapping;`,
    `export const records = (event: LambdaStreamEvent): number => event.Records.length;`,
    ``,
].join("\n");

/** A policy pack of one's own, from the policy entry. */
const TYPESCRIPT_POLICY_PROGRAM = [
    `import { outboxPolicies } from "${MANIFEST.name}/policy";`,
    `export const names: string[] = outboxPolicies.map((p) => p.name);`,
    ``,
].join("\n");

/** What `fixtures/runtime-app.js` reports. */
interface RuntimeAppReport {
    runtime: { OutboxWriter: string; OutboxError: string; writer: string } | { error: string };
    component: "loaded" | { name: string; code: string; message: string; context: Record<string, string> };
    trace: { headers: Record<string, string>[]; link: unknown } | { error: string };
    testKit: "started" | { name: string; code: string; message: string; context: Record<string, string> };
    pulumiLoaded: string[];
    openTelemetryLoaded: string[];
}

/** The lifecycle scripts npm 11 lists among a dependency's install scripts for its consumers to approve. */
const INSTALL_TIME_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"] as const;

/** The relative link targets of a Markdown text (no scheme, no bare anchor), without their `#anchor`. */
function relativeLinks(markdown: string): string[] {
    return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((m) => m[1]!)
        .filter((t) => !/^[a-z]+:/i.test(t) && !t.startsWith("#"))
        .map((t) => t.split("#")[0]!);
}

interface AppReport {
    requires: { file: string; spec: string; resolved: string }[];
    redrive: { sent: string[]; result: Record<string, unknown> } | { error: string };
    policy: { exports: string[] } | { error: string };
    loaded: string[];
}

/** The package name a bare specifier names: `@scope/name/sub` → `@scope/name`. */
function packageOf(spec: string): string {
    const parts = spec.split("/");
    return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

describe("package: consumed as an installed dependency", function () {
    // npm install and tsc on @pulumi/aws's declarations take a while on a busy machine.
    this.timeout(300_000);
    let work: string;
    let project: string;
    let installed: string;
    let packed: string[];
    let packedManifest: ConsumerProject["packedManifest"];
    let packedBytes: ConsumerProject["packedBytes"];
    let installLog: string;
    let runtimeApp: ConsumerProject;
    let newerSdkApp: ReturnType<typeof installNewerSdkApp>;
    let program: SpawnSyncReturns<string>;
    let archives: ConsumerArchives | undefined;
    let lambdaRoot: string;
    let typeChecks: Record<"node" | "node16" | "policy", Promise<Ran>>;
    const plainEnv = (): NodeJS.ProcessEnv => consumerEnvironment(work);

    before(() => {
        work = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-consume-"));
        const pack = packPackage(work);
        ({ project, installed, packed, packedManifest, packedBytes, installLog } = installConsumerProject(work, pack));
        runtimeApp = installRuntimeApp(work, pack);
        newerSdkApp = installNewerSdkApp(work, pack);

        // Type-check default Pulumi TypeScript projects in the background (tsc from this repository: typescript is
        // a devDependency, not installed in the consumer). Each folder resolves packages from the project's
        // node_modules.
        const typeCheck = (name: string, program: string, compilerOptions: object): Promise<Ran> => {
            const dir = path.join(project, "ts", name);
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, "index.ts"), program);
            fs.writeFileSync(
                path.join(dir, "tsconfig.json"),
                JSON.stringify(
                    {
                        ...PULUMI_TEMPLATE_TSCONFIG,
                        compilerOptions: { ...PULUMI_TEMPLATE_TSCONFIG.compilerOptions, ...compilerOptions },
                    },
                    null,
                    2,
                ),
            );
            return runAsync(process.execPath, [TSC, "--noEmit", "--pretty", "false", "-p", dir], { cwd: dir });
        };
        typeChecks = {
            node: typeCheck("node", TYPESCRIPT_PROGRAM, {}),
            node16: typeCheck("node16", TYPESCRIPT_PROGRAM, { module: "node16", moduleResolution: "node16" }),
            // @pulumi/policy 1.21.0's index.d.ts re-exports names its proxy.d.ts lacks (TS2305), so the policy
            // entry type-checks only with skipLibCheck. That entry is for policy packs, which Pulumi runs through
            // its own ts-node (checking only the pack's files); this checks that its types resolve.
            policy: typeCheck("policy", TYPESCRIPT_POLICY_PROGRAM, { skipLibCheck: true }),
        };
        // Avoid an unhandled rejection if before() fails further down; each test awaits its own.
        for (const check of Object.values(typeChecks)) check.catch(() => undefined);

        // The program, run from the project, so it resolves packages as the consumer's would. Its failure is
        // reported by the tests that need its archives, so the other tests still run.
        lambdaRoot = path.join(work, "lambda");
        program = runConsumerProgram(project, lambdaRoot, plainEnv());
    });

    /** The archives the consumer program recorded; fails the calling test with the program's output if it failed. */
    function consumerArchives(): ConsumerArchives {
        archives ??= consumerArchivesOf(program);
        return archives;
    }

    after(() => {
        if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
    });

    it("packs compiled JavaScript with type declarations and the CLI launcher: no TypeScript sources, tests or dev tooling", () => {
        for (const file of [
            "package.json",
            "bin/dynamodb-outbox.js",
            "dist/index.js",
            "dist/index.d.ts",
            "dist/runtime/index.js",
            "dist/runtime/index.d.ts",
            "dist/runtime/relay/lambda.js",
            "dist/bin/dynamodb-outbox.js",
            "dist/policy/index.js",
            "dist/policy/policies.js",
            "dist/policy/policies.d.ts",
            "dist/policy/package.json",
            "dist/policy/PulumiPolicy.yaml",
        ]) {
            assert.ok(packed.includes(file), `${file} is packed`);
        }
        const sources = packed.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
        assert.deepEqual(sources, [], "no TypeScript sources");
        const stray = packed.filter((f) => /^(dist\/)?(tests|dev|program|scratch)\//.test(f));
        assert.deepEqual(stray, [], "nothing from tests/, dev/, program/");
        assert.deepEqual(
            packed.filter((f) => f.endsWith(".map")),
            [],
            "no source maps (they would point at sources that are not shipped)",
        );
        // npm installs a dependency's optionalDependencies for its consumers, and links their bins: the toolchain's
        // Node binaries (dev/toolchain) would put 185 MB and a node_modules/.bin/node into every consumer's project.
        assert.deepEqual(
            packedManifest.optionalDependencies ?? {},
            {},
            "no optionalDependencies in the packed package.json",
        );
    });

    it("is the size docs/packaging.md says: its file count, its tarball, unpacked and docs bytes, each within 10%", () => {
        const doc = fs.readFileSync(path.join(REPO, "docs", "packaging.md"), "utf8");
        const said = /The packed package is ([\d,]+) files: ([\d,]+) KB as a tarball, ([\d.]+) MB unpacked/.exec(doc);
        assert.ok(said, "docs/packaging.md states the packed package's size");
        const [files, tarballKb, unpackedMb] = [said[1]!, said[2]!, said[3]!].map((n) => Number(n.replace(/,/g, "")));
        const near = (actual: number, stated: number): boolean => Math.abs(actual - stated) <= stated * 0.1;
        const actual = `${packed.length} files, ${packedBytes.tarball} bytes as a tarball, ${packedBytes.unpacked} unpacked`;
        assert.ok(near(packed.length, files!), actual);
        assert.ok(near(packedBytes.tarball, tarballKb! * 1000), actual);
        assert.ok(near(packedBytes.unpacked, unpackedMb! * 1e6), actual);
        const docsSaid = /The docs are packed \(([\d,]+) KB of the unpacked size/.exec(doc);
        assert.ok(docsSaid, "docs/packaging.md states the docs' share");
        const docsBytes = packed
            .filter((f) => f.startsWith("docs/"))
            .reduce((sum, f) => sum + fs.statSync(path.join(REPO, f)).size, 0);
        assert.ok(near(docsBytes, Number(docsSaid[1]!.replace(/,/g, "")) * 1000), `the docs are ${docsBytes} bytes`);
    });

    it("declares Pulumi, @opentelemetry/api and the CLI's and test kit's SDK clients as optional peers, with ranges, and depends only on the runtime's AWS SDK packages, with caret ranges", () => {
        const dependencies = packedManifest.dependencies ?? {};
        assert.deepEqual(Object.keys(dependencies).sort(), [
            "@aws-sdk/client-dynamodb",
            "@aws-sdk/client-eventbridge",
            "@aws-sdk/client-sns",
            "@aws-sdk/client-sqs",
            "@aws-sdk/util-dynamodb",
        ]);
        for (const [dependency, range] of Object.entries(dependencies))
            assert.match(
                range,
                /^\^3\.\d+\.\d+$/,
                `${dependency}: a caret range, so that an application on a newer AWS SDK v3 shares its copy`,
            );
        const peers = packedManifest.peerDependencies ?? {};
        assert.deepEqual(Object.keys(peers).sort(), [
            "@aws-sdk/client-cloudwatch",
            "@aws-sdk/client-dynamodb-streams",
            "@aws-sdk/client-lambda",
            "@aws-sdk/client-s3",
            "@opentelemetry/api",
            "@pulumi/aws",
            "@pulumi/policy",
            "@pulumi/pulumi",
        ]);
        for (const [peer, range] of Object.entries(peers)) {
            assert.match(
                range,
                /^\^\d+\.\d+\.\d+$/,
                `${peer}: a caret range, as @pulumi/awsx declares its Pulumi dependencies`,
            );
            assert.equal(
                packedManifest.peerDependenciesMeta?.[peer]?.optional,
                true,
                `${peer} is optional: npm 7+ installs a required peer by itself, into the runtime-only application too`,
            );
        }
        assert.deepEqual(packedManifest.engines, { node: ">=22" });
    });

    it("ships no install-time script (npm 11 would list it for every consumer to approve), and builds before npm pack (prepack)", () => {
        for (const script of INSTALL_TIME_SCRIPTS)
            assert.equal(packedManifest.scripts?.[script], undefined, `the packed package.json has a ${script} script`);
        assert.equal(packedManifest.scripts?.prepack, "npm run build");
        for (const log of [installLog, runtimeApp.installLog])
            assert.doesNotMatch(
                log,
                new RegExp(`install-scripts.*${MANIFEST.name}@`),
                "npm names no install script of the package",
            );
        assert.doesNotMatch(
            runtimeApp.installLog,
            /install-scripts/,
            "the runtime-only application installs nothing with an install script",
        );
    });

    it("ships every file the README and the docs link to, so their relative links resolve in the package (and on the npm page, against the repository)", () => {
        const broken = ["README.md", ...packed.filter((f) => /^docs\/.*\.md$/.test(f))].flatMap((page) => {
            const text = fs.readFileSync(path.join(installed, page), "utf8");
            return relativeLinks(text)
                .map((target) =>
                    path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(target))),
                )
                .filter(
                    (target) =>
                        !packed.includes(target) && !packed.some((f) => f.startsWith(`${target.replace(/\/$/, "")}/`)),
                )
                .map((target) => `${page} → ${target}`);
        });
        assert.deepEqual(broken, []);
        assert.ok(
            packed.includes("docs/packaging.md") && packed.includes("CHANGELOG.md"),
            "the docs and the changelog are packed",
        );
    });

    it("installs into a Pulumi project on the latest @pulumi/pulumi and @pulumi/aws with one copy of each @pulumi/* package: none nested", () => {
        const modules = path.join(project, "node_modules");
        const pulumiPackages = installedPackages(modules)
            .filter((p) => path.basename(path.dirname(p)) === "@pulumi")
            .map((p) => path.relative(modules, p).split(path.sep).join("/"));
        assert.deepEqual(
            pulumiPackages,
            ["@pulumi/aws", "@pulumi/policy", "@pulumi/pulumi"],
            "only the project's own, at the top of node_modules",
        );
        for (const [name, version] of Object.entries(pulumiConsumerDependencies())) {
            // @pulumi/policy's package.json spells its version "v1.21.0".
            assert.equal(
                (
                    JSON.parse(fs.readFileSync(path.join(modules, name, "package.json"), "utf8")) as { version: string }
                ).version.replace(/^v/, ""),
                version,
                name,
            );
        }
        assert.ok(
            !fs.existsSync(path.join(installed, "node_modules", "@pulumi")),
            `nothing under node_modules/${MANIFEST.name}/node_modules/@pulumi`,
        );
    });

    it("declares an Outbox that is a pulumi.ComponentResource of the program's own @pulumi/pulumi (instanceof holds: one Pulumi, shared)", () => {
        const { component } = consumerArchives();
        assert.equal(
            component.pulumiFromPackage,
            component.pulumiFromProgram,
            "the package resolves the program's @pulumi/pulumi",
        );
        assert.equal(component.instanceOfComponentResource, true);
    });

    it("is required by name from a plain JavaScript program, which declares an Outbox whose archives hold __index.js, the package's package.json and the relay's one bundled module alone: no writer, inbox, runtime index or test kit inside it, and no require but the AWS SDK's and Node's", () => {
        const archives = consumerArchives();
        const runtime = path.join(installed, "dist", "runtime");
        const prefix = `node_modules/${MANIFEST.name}/dist/runtime/`;
        for (const folder of ["testing", "writer", "inbox"])
            assert.ok(
                filesUnder(path.join(runtime, folder)).some((f) => f.endsWith(".js")),
                `the package ships ${folder}/ (so leaving it out is the archive's doing)`,
            );
        for (const child of ["publisher", "sweeper"] as const) {
            const entries = archives[child].entries;
            assert.deepEqual(
                Object.keys(entries).sort(),
                [`${prefix}relay/lambda.js`, "__index.js", `node_modules/${MANIFEST.name}/package.json`].sort(),
                `${child}: the archive's entries`,
            );
            assert.equal(entries["__index.js"], "text");
            assert.equal(entries[`${prefix}relay/lambda.js`], "path");
            // The bundle's modules, by the keys of esbuild's __commonJS wrappers (code, not comments).
            const bundle = fs.readFileSync(path.join(runtime, "relay", "lambda.js"), "utf8");
            const modules = new Set(
                [...bundle.matchAll(/__commonJS\(\{\s*"dist\/runtime\/([^"]+)"/g)].map(([, m]) => m!),
            );
            for (const needed of ["relay/publisher.js", "relay/sweeper.js", "config.js", "store/index.js"])
                assert.ok(modules.has(needed), `${child}: ${needed} is in the bundle`);
            const strays = [...modules].filter(
                (f) => /^(writer|inbox|testing)\//.test(f) || f === "index.js" || f === "claim-check/resolver.js",
            );
            assert.deepEqual(
                strays,
                [],
                `${child}: nothing of the writer, the inbox, the runtime index or the test kit`,
            );
            // Closed: the bundle requires nothing relative, only what the Lambda runtime provides.
            const requires = [...new Set([...bundle.matchAll(/\brequire\("([^"]*)"\)/g)].map(([, r]) => r!))];
            assert.deepEqual(
                requires.filter((r) => !/^(@aws-sdk\/client-[a-z]+|node:[a-z]+)$/.test(r)),
                [],
                `${child}: the bundle requires ${requires.join(", ")}`,
            );
        }
        // The case this fix exists for: from node_modules, Pulumi captures the relay's module by reference.
        const index = fs.readFileSync(path.join(lambdaRoot, "publisher", "__index.js"), "utf8");
        const runtimeRequires = [...index.matchAll(new RegExp(`require\\("${MANIFEST.name}/[^"]*"\\)`, "g"))].map(
            ([r]) => r,
        );
        assert.deepEqual([...new Set(runtimeRequires)], [`require("${MANIFEST.name}/dist/runtime/relay/lambda.js")`]);
    });

    it(`keeps each consumed archive within ${CONSUMED_ARCHIVE_BUDGET.raw / 1024} KB raw and ${CONSUMED_ARCHIVE_BUDGET.deflated / 1024} KB deflated`, () => {
        consumerArchives();
        for (const child of ["publisher", "sweeper"] as const) {
            const size = folderSize(path.join(lambdaRoot, child));
            const index = fs.statSync(path.join(lambdaRoot, child, "__index.js")).size;
            console.log(
                `      ${child} archive (installed package): ${size.files} files, ${size.raw} bytes raw (__index.js ${index}), ${size.deflated} bytes deflated`,
            );
            assert.ok(
                size.raw <= CONSUMED_ARCHIVE_BUDGET.raw,
                `${child} archive is ${size.raw} bytes raw, budget ${CONSUMED_ARCHIVE_BUDGET.raw}`,
            );
            assert.ok(
                size.deflated <= CONSUMED_ARCHIVE_BUDGET.deflated,
                `${child} archive is ${size.deflated} bytes deflated, budget ${CONSUMED_ARCHIVE_BUDGET.deflated}`,
            );
        }
    });

    for (const child of ["publisher", "sweeper"] as const) {
        describe(`the ${child} archive loaded as Lambda loads it`, () => {
            let report: HostReport;
            const dropped = [ENV.tableName, ENV.topicArn, ENV.dlqUrl];

            before(() => {
                // On NODE_PATH, what the Lambda Node.js runtime provides: the AWS SDK v3 and its Smithy core,
                // nothing else, whatever the package declares, so they come from this repository, not the consumer.
                report = runLambdaHost(path.join(lambdaRoot, child), {
                    work,
                    environment: consumerArchives()[child].environment,
                    drop: dropped,
                    invokeEmptyBatch: child === "publisher",
                });
            });

            it(`runs on Lambda's Node.js major (nodejs${LAMBDA_NODE_MAJOR}.x: this process's ${lambdaNode().version})`, () => {
                assert.equal(report.node, lambdaNode().version);
                assert.equal(majorOf(report.node), LAMBDA_NODE_MAJOR, "Lambda's nodejs22.x");
            });

            it("loads: the handler is a function built from the environment the component set", () => {
                assert.equal(report.handlerType, "function");
                if (child === "publisher") assert.deepEqual(report.emptyBatch, { batchItemFailures: [] });
            });

            for (const variable of dropped) {
                it(`fails the cold start with INVALID_CONFIG naming ${variable} when it is missing`, () => {
                    const failure = report.missing[variable];
                    assert.equal(failure.code, "INVALID_CONFIG", JSON.stringify(failure));
                    // A missing topic is a missing destination: the error names the three variables that can name one.
                    const named =
                        variable === ENV.topicArn ? [ENV.topicArn, ENV.queueArn, ENV.eventBusArn].join(", ") : variable;
                    assert.equal(failure.context?.variable, named);
                    assert.ok(failure.message?.includes(variable), failure.message);
                });
            }

            it("loads only modules of the archive or of the runtime-provided SDK, and no @pulumi/* package", () => {
                const pulumi = report.modules.filter((m) => m.includes(`${path.sep}@pulumi${path.sep}`));
                assert.deepEqual(pulumi, [], "no @pulumi module loaded");
                // Real paths: this repository's node_modules may itself be a link (a git worktree sharing one).
                const sdk = fs.realpathSync(path.join(REPO, "node_modules")) + path.sep;
                const outside = report.modules.filter(
                    (m) =>
                        !m.startsWith(path.join(lambdaRoot, child) + path.sep) &&
                        !m.startsWith(sdk) &&
                        !m.endsWith("-host.js"),
                );
                assert.deepEqual(
                    outside,
                    [],
                    "every module comes from the archive or the runtime-provided SDK (linked to this repository's node_modules)",
                );
            });
        });
    }

    for (const resolution of ["node", "node16"] as const) {
        it(`type-checks a default Pulumi TypeScript project (template tsconfig, no skipLibCheck, moduleResolution ${resolution}) importing Outbox, OutboxWriter and the test kit`, async () => {
            const tsc = await typeChecks[resolution];
            const hint =
                resolution === "node"
                    ? "moduleResolution node ignores package.json exports: each subpath entry needs its typesVersions entry"
                    : "moduleResolution node16 reads the exports' types conditions";
            assert.equal(
                tsc.status,
                0,
                `tsc --noEmit in ${path.join("ts", resolution)} (${hint}; no @pulumi/policy may be in the type graph of ${MANIFEST.name} or ${MANIFEST.name}/runtime):\n${tsc.stdout}${tsc.stderr}`,
            );
        });
    }

    it("type-checks a policy program importing outboxPolicies from the policy entry (with skipLibCheck: @pulumi/policy's own declarations)", async () => {
        const tsc = await typeChecks.policy;
        assert.equal(
            tsc.status,
            0,
            `tsc --noEmit in ts/policy (moduleResolution node: the typesVersions "policy" entry):\n${tsc.stdout}${tsc.stderr}`,
        );
    });

    describe("an application outside Lambda, with only the installed closure (no NODE_PATH)", () => {
        let app: AppReport;

        before(() => {
            fs.copyFileSync(path.join(FIXTURES, "consumer-app.js"), path.join(project, "app.js"));
            app = JSON.parse(
                ok(
                    run(process.execPath, ["app.js"], { cwd: project, env: plainEnv() }),
                    "the consumer app (node app.js in the consumer project)",
                )
                    .trim()
                    .split("\n")
                    .pop() as string,
            );
        });

        it("finds the compiled files' requires", () => {
            assert.ok(
                app.requires.some((r) => r.spec === "@aws-sdk/client-dynamodb"),
                JSON.stringify(app.requires),
            );
        });

        it("declares every package the compiled code requires in the packed package.json's dependencies or peerDependencies, and resolves it from the installed closure", () => {
            const declared = [
                ...Object.keys(packedManifest.dependencies ?? {}),
                ...Object.keys(packedManifest.peerDependencies ?? {}),
            ];
            const modules = path.join(project, "node_modules") + path.sep;
            const problems = app.requires
                .filter((r) => !builtinModules.includes(r.spec))
                .flatMap((r) => {
                    const name = packageOf(r.spec);
                    if (!declared.includes(name))
                        return [
                            `${r.file} requires ${r.spec}, but ${name} is not in the packed package.json's dependencies or peerDependencies (${declared.join(", ")}): move it from devDependencies to dependencies`,
                        ];
                    if (!r.resolved.startsWith(modules))
                        return [
                            `${r.file} requires ${r.spec}, which does not resolve from the consumer's node_modules: ${r.resolved}`,
                        ];
                    return [];
                });
            assert.deepEqual(problems, []);
        });

        it("redrives through the package's own @aws-sdk/client-sqs, loaded from the consumer's node_modules", () => {
            assert.ok(
                !("error" in app.redrive),
                `require("${MANIFEST.name}/runtime") and redriveDeadLetters in a plain application: ${"error" in app.redrive ? app.redrive.error : ""} (a production dependency missing from the packed package.json's dependencies?)`,
            );
            assert.deepEqual(app.redrive.sent, ["ReceiveMessageCommand"]);
            assert.equal(app.redrive.result.received, 0);
            const sqs = app.loaded.filter((m) => m.includes(`${path.sep}@aws-sdk${path.sep}client-sqs${path.sep}`));
            assert.ok(sqs.length > 0, "@aws-sdk/client-sqs loaded");
            assert.deepEqual(
                sqs.filter((m) => !m.startsWith(path.join(project, "node_modules") + path.sep)),
                [],
                "@aws-sdk/client-sqs from the consumer's node_modules only",
            );
        });

        it(`requires the policy entry ${MANIFEST.name}/policy, which exports outboxPolicies`, () => {
            assert.ok(
                !("error" in app.policy),
                `require("${MANIFEST.name}/policy"): ${"error" in app.policy ? app.policy.error : ""}`,
            );
            assert.ok(app.policy.exports.includes("outboxPolicies"), app.policy.exports.join(", "));
        });
    });

    describe("a plain Node application that only writes events (no Pulumi of its own)", () => {
        let report: RuntimeAppReport;

        before(() => {
            fs.copyFileSync(path.join(FIXTURES, "runtime-app.js"), path.join(runtimeApp.project, "app.js"));
            report = JSON.parse(
                ok(
                    run(process.execPath, ["app.js"], { cwd: runtimeApp.project, env: plainEnv() }),
                    "the runtime-only app (node app.js)",
                )
                    .trim()
                    .split("\n")
                    .pop() as string,
            );
            const modules = path.join(runtimeApp.project, "node_modules");
            const size = bytesUnder(modules);
            console.log(
                `      runtime-only install: ${installedPackages(modules).length} packages, ${size} bytes (${(size / 1024 / 1024).toFixed(1)} MiB) in node_modules`,
            );
        });

        it("gets no @pulumi or @opentelemetry package in node_modules (the peers are optional: npm installs none)", () => {
            const modules = path.join(runtimeApp.project, "node_modules");
            const peers = installedPackages(modules).filter(
                (p) => p.split(path.sep).includes("@pulumi") || p.split(path.sep).includes("@opentelemetry"),
            );
            assert.deepEqual(peers, []);
            assert.ok(
                fs.existsSync(path.join(modules, "@aws-sdk", "client-dynamodb")),
                "the AWS SDK clients are installed",
            );
        });

        it(`requires ${MANIFEST.name}/runtime and builds an OutboxWriter, loading no @pulumi module`, () => {
            assert.deepEqual(report.runtime, {
                OutboxWriter: "function",
                OutboxError: "function",
                writer: "OutboxWriter",
            });
            assert.deepEqual(report.pulumiLoaded, []);
        });

        it("writes a message's traceparent without @opentelemetry/api installed, reads no active context, and builds a span link of plain data", () => {
            assert.deepEqual(report.trace, {
                headers: [{ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }, {}],
                link: {
                    context: {
                        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
                        spanId: "00f067aa0ba902b7",
                        traceFlags: 1,
                        isRemote: true,
                    },
                },
            });
            assert.deepEqual(report.openTelemetryLoaded, []);
        });

        it(`fails require("${MANIFEST.name}") with INVALID_CONFIG naming the missing peers and the npm install command`, () => {
            assert.notEqual(report.component, "loaded");
            const failure = report.component as Exclude<RuntimeAppReport["component"], "loaded">;
            assert.equal(failure.name, "OutboxError");
            assert.equal(failure.code, "INVALID_CONFIG");
            assert.match(
                failure.message,
                /^dynamodb-outbox needs @pulumi\/pulumi and @pulumi\/aws, which are not installed/,
            );
            assert.match(failure.message, /npm install @pulumi\/pulumi @pulumi\/aws/);
            assert.match(failure.message, /import "dynamodb-outbox\/runtime" instead/);
        });
    });

    describe("a writer-only application on a newer @aws-sdk/client-dynamodb than the lower bound of the package's range", () => {
        const modules = (): string => path.join(newerSdkApp.project, "node_modules");
        /** `3.1169.0` of `^3.1169.0`, as numbers. */
        const lowerBound = (range: string): number[] => range.replace(/^\^/, "").split(".").map(Number);
        const above = (a: number[], b: number[]): boolean => {
            const i = a.findIndex((n, k) => n !== b[k]);
            return i >= 0 && a[i]! > b[i]!;
        };

        it("has one @aws-sdk/client-dynamodb in node_modules, its own, which npm ls finds deduped for the package", () => {
            const range = packedManifest.dependencies?.["@aws-sdk/client-dynamodb"] ?? "";
            assert.ok(
                above(newerSdkApp.dynamodbVersion.split(".").map(Number), lowerBound(range)),
                `the application's ${newerSdkApp.dynamodbVersion} is newer than the lower bound of ${range}`,
            );
            const copies = installedPackages(modules())
                .filter((p) => p.endsWith(`${path.sep}@aws-sdk${path.sep}client-dynamodb`))
                .map((p) => path.relative(modules(), p).split(path.sep).join("/"));
            assert.deepEqual(copies, ["@aws-sdk/client-dynamodb"], "one copy, none nested under the package");
            const version = (
                JSON.parse(
                    fs.readFileSync(path.join(modules(), "@aws-sdk", "client-dynamodb", "package.json"), "utf8"),
                ) as {
                    version: string;
                }
            ).version;
            assert.equal(version, newerSdkApp.dynamodbVersion);
            const ls = JSON.parse(
                ok(
                    run("npm", ["ls", "@aws-sdk/client-dynamodb", "--all", "--json", "--offline"], {
                        cwd: newerSdkApp.project,
                        env: npmEnvironment(),
                    }),
                    "npm ls @aws-sdk/client-dynamodb --all --json",
                ),
            ) as {
                dependencies: Record<string, { version: string; dependencies?: Record<string, { version: string }> }>;
            };
            const seen: string[] = [];
            const walk = (
                deps: Record<string, { version: string; dependencies?: Record<string, { version: string }> }> = {},
            ): void => {
                for (const [name, dep] of Object.entries(deps)) {
                    if (name === "@aws-sdk/client-dynamodb") seen.push(dep.version);
                    walk(dep.dependencies as never);
                }
            };
            walk(ls.dependencies);
            assert.deepEqual(
                [...new Set(seen)],
                [newerSdkApp.dynamodbVersion],
                `npm ls lists every dependent of @aws-sdk/client-dynamodb on one version: ${JSON.stringify(ls)}`,
            );
            assert.ok(seen.length >= 2, "both the application and the package depend on it");
        });

        it("writes an event with an item, on DynamoDB Local, through the application's client: one @aws-sdk/client-dynamodb loaded, the one the package resolves", async () => {
            fs.copyFileSync(path.join(FIXTURES, "writer-app.js"), path.join(newerSdkApp.project, "writer-app.js"));
            const report = JSON.parse(
                ok(
                    run(
                        process.execPath,
                        [
                            "writer-app.js",
                            await dynamoEndpoint(),
                            uniqueTableName("newer-sdk"),
                            uniqueTableName("newer-sdk-app"),
                        ],
                        { cwd: newerSdkApp.project, env: plainEnv() },
                    ),
                    "the writer app on the newer SDK (node writer-app.js)",
                )
                    .trim()
                    .split("\n")
                    .pop() as string,
            ) as { version: string; fromPackage: string; fromApp: string; loaded: string[]; written: unknown };
            const own = path.join(modules(), "@aws-sdk", "client-dynamodb");
            assert.equal(report.version, newerSdkApp.dynamodbVersion);
            assert.equal(report.fromApp, own);
            assert.equal(report.fromPackage, own, "the package's runtime resolves the application's copy");
            assert.deepEqual(report.loaded, [own], "one copy loaded");
            assert.deepEqual(report.written, {
                item: { PK: { S: "ORDER#1" }, total: { N: "42" } },
                records: ["pending"],
            });
        });
    });

    it("the runtime-only application gets none of the CLI's and test kit's SDK clients (optional peers), and the test kit's mapping names the one it needs", () => {
        const modules = path.join(runtimeApp.project, "node_modules");
        const clients = installedPackages(modules)
            .filter((p) => path.basename(path.dirname(p)) === "@aws-sdk" && path.basename(p).startsWith("client-"))
            .map((p) => path.relative(modules, p).split(path.sep).join("/"));
        assert.deepEqual(clients, [
            "@aws-sdk/client-dynamodb",
            "@aws-sdk/client-eventbridge",
            "@aws-sdk/client-sns",
            "@aws-sdk/client-sqs",
        ]);
        const size = bytesUnder(modules);
        console.log(
            `      runtime-only install: ${installedPackages(modules).filter((p) => p.includes(`${path.sep}@aws-sdk${path.sep}`)).length} @aws-sdk packages, ${size} bytes of files`,
        );
        fs.copyFileSync(path.join(FIXTURES, "runtime-app.js"), path.join(runtimeApp.project, "app.js"));
        const report = JSON.parse(
            ok(run(process.execPath, ["app.js"], { cwd: runtimeApp.project, env: plainEnv() }), "node app.js")
                .trim()
                .split("\n")
                .pop() as string,
        ) as RuntimeAppReport;
        assert.notEqual(report.testKit, "started");
        const failure = report.testKit as Exclude<RuntimeAppReport["testKit"], "started">;
        assert.equal(failure.code, "INVALID_CONFIG", JSON.stringify(failure));
        assert.match(
            failure.message,
            /^startLocalEventSourceMapping needs @aws-sdk\/client-dynamodb-streams, which is not installed: .* npm install --save-dev @aws-sdk\/client-dynamodb-streams\.$/,
        );
    });

    it("ships a policy pack that the CLI's runner starts from the installed package and that judges a resource over gRPC", async () => {
        const pack = path.join(installed, "dist", "policy");
        const manifest = JSON.parse(fs.readFileSync(path.join(pack, "package.json"), "utf8"));
        assert.equal(manifest.main, "index.js");
        assert.match(manifest.version, /^\d+\.\d+\.\d+$/, "PolicyPack reads its version from <cwd>/package.json");
        assert.match(fs.readFileSync(path.join(pack, "PulumiPolicy.yaml"), "utf8"), /^runtime: nodejs$/m);
        // As `pulumi preview --policy-pack node_modules/dynamodb-outbox/dist/policy` runs it: the consumer's
        // @pulumi/pulumi/cmd/run-policy-pack in the pack's folder, then the analyzer protocol.
        const running = await RunningPack.start(pack, plainEnv());
        try {
            assert.deepEqual(
                (await running.info()).policies.map((p) => p.name),
                OUTBOX_POLICY_NAMES,
            );
            // A default Outbox's table (its tags are an Output; the analyzer gets them resolved), with TTL off.
            const { tags: _tags, ...computed } = tableArgs(resolveOutboxSettings({}));
            const bent = { ...computed, ttl: { attributeName: "ttl", enabled: false } };
            const table = {
                type: "aws:dynamodb/table:Table",
                name: "orders-table",
                urn: `urn:pulumi:dev::shop::${OUTBOX_TYPE}$aws:dynamodb/table:Table::orders-table`,
                parent: `urn:pulumi:dev::shop::${OUTBOX_TYPE}::orders`,
                props: { ...bent, tags: { [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value } },
            };
            const ttl = `outbox table "orders-table": TTL must be enabled on "ttl" (terminal records expire by it); it is {"attributeName":"ttl","enabled":false}`;
            assert.deepEqual(await running.analyze(table), [
                { policyName: "outbox-table-shape", enforcementLevel: "mandatory", message: ttl, urn: table.urn },
            ]);
            const elsewhere = {
                ...table,
                props: bent,
                urn: "urn:pulumi:dev::shop::aws:dynamodb/table:Table::users",
                parent: undefined,
            };
            assert.deepEqual(
                await running.analyze(elsewhere),
                [],
                "the same table at the stack's root, untagged, is no outbox table",
            );
        } finally {
            running.stop();
        }
    });

    describe("the CLI, from the bin npm linked", () => {
        let bin: string;
        before(() => {
            bin = path.join(project, "node_modules", ".bin", "dynamodb-outbox");
        });

        it("is linked by npm from the packed package.json's bin to a file that exists", () => {
            assert.ok(
                fs.existsSync(bin),
                `npm linked no working node_modules/.bin/dynamodb-outbox from the packed package.json "bin": ${JSON.stringify(packedManifest.bin)}; it must name a file in the package's "files"`,
            );
        });

        it("prints its usage on --help, and redrive's on redrive --help, and exits 0, with no ts-node installed", () => {
            assert.ok(!fs.existsSync(path.join(project, "node_modules", "ts-node")), "the consumer has no ts-node");
            // Executed as the shell would: the link, its shebang and its mode.
            const help = run(bin, ["--help"], { cwd: project, env: plainEnv() });
            assert.equal(
                help.status,
                0,
                `node_modules/.bin/dynamodb-outbox --help exited ${help.status}\nstdout: ${help.stdout}\nstderr: ${help.stderr}`,
            );
            assert.match(help.stdout, /^usage: dynamodb-outbox <verify\|migrate\|doctor\|adopt>/);
            const redrive = run(bin, ["redrive", "--help"], { cwd: project, env: plainEnv() });
            assert.equal(
                redrive.status,
                0,
                `node_modules/.bin/dynamodb-outbox redrive --help exited ${redrive.status}\nstdout: ${redrive.stdout}\nstderr: ${redrive.stderr}`,
            );
            assert.match(redrive.stdout, /^Usage: dynamodb-outbox redrive --table <name> --dlq-url <url>/);
        });

        it("exits 2 with the message and the usage on a bad flag", () => {
            const bad = run(bin, ["verify", "--tabel", "orders"], { cwd: project, env: plainEnv() });
            assert.equal(bad.stdout, "");
            assert.match(
                bad.stderr,
                /^dynamodb-outbox: unknown flag "--tabel"; see the flags below\n\nusage: dynamodb-outbox/,
            );
            assert.equal(bad.status, 2);
        });
    });
});
