/**
 * The package as a consumer meets it: built, packed with `npm pack`, installed by npm into a fresh project
 * together with its production dependency closure, required by name from a plain JavaScript Pulumi program (no
 * ts-node, no TypeScript sources), used by a plain application, type-checked by a default Pulumi TypeScript
 * project, run as a CLI from the bin npm linked, and its Lambda archive run the way the Lambda Node.js runtime
 * runs it.
 *
 * The install is `npm install --offline --no-audit --no-fund <tarball>`, from the local npm cache only, so the
 * test needs no network. `npm ci` (what CI runs first) fills the cache with the lock's tarballs and their
 * abbreviated registry documents, but npm 11 resolves a dependency with no lock entry through the *full*
 * registry document, which `npm ci` never fetches: a bare `npm install --offline <tarball>` fails with
 * ENOTCACHED on the first dependency. So the consumer starts with a package-lock.json that lists this
 * repository's locked versions of the tarball's production dependency closure: the closure is walked from the
 * `dependencies` of the package.json inside the tarball, through the repository's package-lock.json. npm then
 * reads the tarball's manifest itself, checks each dependency against those entries, installs them from the
 * cache and links the `bin`. A dependency the tarball does not declare is not installed, as in a real consumer.
 * `--prefer-offline` was not used: it would fetch every full registry document and resolve newer versions
 * than the lock's. No `--legacy-peer-deps` is needed: the closure holds every required peer.
 *
 * Real parts: the build (`npm run build`), `npm pack` (its file list is what ships), npm's install of the
 * tarball (its `dependencies`, `bin`, `exports` and `typesVersions` as a consumer gets them), Pulumi's closure
 * serializer and code-path walk on the installed layout, Node's module resolution, tsc with Pulumi's template
 * tsconfig. The devDependencies (ts-node, typescript, mocha, the emulators) are not installed; tsc runs from this
 * repository. The Lambda folder gets `@aws-sdk/*` and `@smithy/*` only through NODE_PATH, as the Lambda runtime
 * provides them; the application and the CLI get them only from the installed closure.
 */
import * as assert from "node:assert/strict";
import { spawnSync, SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { builtinModules } from "node:module";
import { ENV } from "../../runtime/config";
import { OUTBOX_TYPE } from "../../components/naming";
import { tableArgs } from "../../components/children";
import { resolveOutboxSettings } from "../../components/settings";
import { OUTBOX_TABLE_TAG } from "../../runtime/schema";
import { OUTBOX_POLICY_NAMES } from "../../components/policies";
import { RunningPack } from "../policy/analyzer";
import { runAsync, type Ran } from "../support/run-async";

const REPO = path.resolve(__dirname, "..", "..");
const FIXTURES = path.join(__dirname, "fixtures");
const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { name: string; version: string };
const TSC = require.resolve("typescript/bin/tsc");

/**
 * The budgets for each function's archive when the package is installed: `__index.js`, the package's
 * package.json and the `.js` files of its `dist/runtime`, nothing else. The whole package (compiled JS, .d.ts,
 * README) made it 951,998 bytes raw, 319,705 deflated, under a 960 KB budget; listing only the runtime's files
 * took it to 272,880 bytes raw, 79,659 deflated (the sweeper, 55 files), so these leave about a fifth of headroom.
 */
const CONSUMED_ARCHIVE_BUDGET = { raw: 320 * 1024, deflated: 96 * 1024 } as const;

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

/** A default Pulumi TypeScript program using both entries, as the README shows them. */
const TYPESCRIPT_PROGRAM = [
    `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";`,
    `import { Outbox, OutboxArgs } from "${MANIFEST.name}";`,
    `import { ENV, OutboxError, OutboxWriter } from "${MANIFEST.name}/runtime";`,
    ``,
    `const args: OutboxArgs = {};`,
    `const outbox = new Outbox("orders", args);`,
    `export const tableName = outbox.tableName;`,
    `export const writer = (client: DynamoDBClient): OutboxWriter => new OutboxWriter({ client, tableName: "orders-outbox" });`,
    `export const fail = (): OutboxError => new OutboxError("INVALID_CONFIG", ENV.tableName);`,
    ``,
].join("\n");

/** A policy pack of one's own, from the policy entry. */
const TYPESCRIPT_POLICY_PROGRAM = [`import { outboxPolicies } from "${MANIFEST.name}/policy";`, `export const names: string[] = outboxPolicies.map((p) => p.name);`, ``].join("\n");

interface LockEntry {
    version?: string;
    dev?: boolean;
    devOptional?: boolean;
    peer?: boolean;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    [field: string]: unknown;
}

/**
 * The lock locations (`node_modules/a`, `node_modules/a/node_modules/b`) that `roots` need, walked through
 * `lock` as Node resolves: from the requiring package's folder up to the root. Required peers are followed,
 * optional ones are not.
 *
 * @throws when a dependency has no lock entry: the package.json and package-lock.json are out of step.
 */
function lockClosure(lock: Record<string, LockEntry>, roots: readonly string[]): Set<string> {
    const locate = (from: string, name: string): string | undefined => {
        for (let base = from; ; ) {
            const location = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
            if (lock[location] !== undefined) return location;
            if (base === "") return undefined;
            const up = base.lastIndexOf("/node_modules/");
            base = up < 0 ? "" : base.slice(0, up);
        }
    };
    const seen = new Set<string>();
    const queue: [string, string][] = roots.map((name) => ["", name]);
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [from, name] = next;
        const location = locate(from, name);
        if (location === undefined) {
            throw new Error(`${name} (needed by ${from || "the packed package.json"}) has no entry in package-lock.json: the lock is out of step with package.json; run npm install and commit package-lock.json`);
        }
        if (seen.has(location)) continue;
        seen.add(location);
        const entry = lock[location]!;
        for (const dep of [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {})]) queue.push([location, dep]);
        for (const dep of Object.keys(entry.peerDependencies ?? {})) if (entry.peerDependenciesMeta?.[dep]?.optional !== true) queue.push([location, dep]);
    }
    return seen;
}

/**
 * The consumer's package-lock.json before the install: this repository's locked versions of the tarball's
 * production closure, and of the consumer's own devDependencies (flagged dev when only they need them). The
 * package itself is not in it: npm adds it from the tarball.
 */
function consumerLock(packedDependencies: Record<string, string>, devDependencies: Record<string, string>): object {
    const lock = (JSON.parse(fs.readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages;
    const production = lockClosure(lock, Object.keys(packedDependencies));
    const dev = lockClosure(lock, Object.keys(devDependencies));
    const packages: Record<string, object> = { "": { name: "consumer", version: "1.0.0", devDependencies } };
    for (const location of [...new Set([...production, ...dev])].sort()) {
        const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lock[location]!;
        packages[location] = production.has(location) ? entry : { ...entry, dev: true };
    }
    return { name: "consumer", version: "1.0.0", lockfileVersion: 3, requires: true, packages };
}

/**
 * The environment for npm in the consumer: this process's, without the `npm_*` variables an enclosing
 * `npm test` sets (`npm_config_local_prefix` would point npm at this repository), but with `npm_config_cache`,
 * so that a cache chosen that way still applies.
 */
function npmEnvironment(): NodeJS.ProcessEnv {
    return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || /^npm_config_cache$/i.test(key)));
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): SpawnSyncReturns<string> {
    const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (result.error) throw result.error;
    return result;
}

function ok(result: Ran, what: string): string {
    assert.equal(result.status, 0, `${what} exited ${result.status}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
    return result.stdout;
}

function filesUnder(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function measure(dir: string): { files: number; raw: number; deflated: number } {
    const files = filesUnder(dir);
    let raw = 0;
    let deflated = 0;
    for (const file of files) {
        const bytes = fs.readFileSync(file);
        raw += bytes.length;
        deflated += zlib.deflateRawSync(bytes).length;
    }
    return { files: files.length, raw, deflated };
}

interface ArchiveReport {
    entries: Record<string, "text" | "path">;
    environment: Record<string, string>;
}

interface HostReport {
    handlerType: string;
    emptyBatch: unknown;
    missing: Record<string, { loaded?: true; code?: string; message?: string; context?: Record<string, unknown> }>;
    runtimeExports: Record<string, string>;
    modules: string[];
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
    let packedManifest: { dependencies?: Record<string, string>; bin?: unknown };
    let program: Ran;
    let archives: { publisher: ArchiveReport; sweeper: ArchiveReport } | undefined;
    let lambdaRoot: string;
    let sdkPath: string;
    let typeChecks: Record<"node" | "node16" | "policy", Promise<Ran>>;
    const plainEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? "", HOME: work, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" });

    before(() => {
        work = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-consume-"));
        ok(run("npm", ["run", "--silent", "build"], { cwd: REPO }), "npm run build");
        // --ignore-scripts: prepare would build a second time.
        const pack = JSON.parse(ok(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], { cwd: REPO }), "npm pack")) as { filename: string; files: { path: string }[] }[];
        packed = pack[0].files.map((f) => f.path).sort();
        const tarball = path.join(work, pack[0].filename);
        packedManifest = JSON.parse(ok(run("tar", ["-xOzf", tarball, "package/package.json"], { cwd: work }), "tar (package.json)"));

        // The consumer project, as `pulumi new typescript` leaves it (with @types/node as its devDependency), then
        // `npm install <tarball>`.
        project = path.join(work, "project");
        fs.mkdirSync(project);
        const lock = (JSON.parse(fs.readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages;
        const devDependencies = { "@types/node": lock["node_modules/@types/node"]!.version! };
        fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, main: "index.js", devDependencies }, null, 2));
        fs.writeFileSync(path.join(project, "package-lock.json"), JSON.stringify(consumerLock(packedManifest.dependencies ?? {}, devDependencies), null, 2));
        ok(run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: project, env: npmEnvironment() }), `npm install --offline ${pack[0].filename} in the consumer`);
        installed = path.join(project, "node_modules", MANIFEST.name);

        // Type-check default Pulumi TypeScript projects in the background (tsc from this repository: typescript is
        // a devDependency, not installed in the consumer). Each folder resolves packages from the project's
        // node_modules.
        const typeCheck = (name: string, program: string, compilerOptions: object): Promise<Ran> => {
            const dir = path.join(project, "ts", name);
            fs.mkdirSync(dir, { recursive: true });
            fs.writeFileSync(path.join(dir, "index.ts"), program);
            fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ ...PULUMI_TEMPLATE_TSCONFIG, compilerOptions: { ...PULUMI_TEMPLATE_TSCONFIG.compilerOptions, ...compilerOptions } }, null, 2));
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

        // The program, run from the project, so it resolves packages as the consumer's would.
        fs.copyFileSync(path.join(FIXTURES, "consumer-program.js"), path.join(project, "index.js"));
        lambdaRoot = path.join(work, "lambda");
        // Its failure is reported by the tests that need its archives, so the other tests still run.
        program = run(process.execPath, ["index.js", lambdaRoot], { cwd: project, env: plainEnv() });

        // What the Lambda Node.js runtime puts on NODE_PATH: the AWS SDK v3 and its Smithy core, nothing else. It
        // provides them whatever the package declares, so they come from this repository, not the consumer.
        sdkPath = path.join(work, "lambda-runtime-modules");
        fs.mkdirSync(sdkPath);
        for (const scope of ["@aws-sdk", "@smithy"]) fs.symlinkSync(path.join(REPO, "node_modules", scope), path.join(sdkPath, scope));
    });

    /** The archives the consumer program recorded; fails the calling test with the program's output if it failed. */
    function consumerArchives(): { publisher: ArchiveReport; sweeper: ArchiveReport } {
        archives ??= JSON.parse(ok(program, "the consumer program (node index.js in the consumer project)").trim().split("\n").pop() as string);
        return archives!;
    }

    after(() => {
        if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
    });

    it("packs compiled JavaScript with type declarations and the CLI launcher: no TypeScript sources, tests or dev tooling", () => {
        for (const file of ["package.json", "bin/dynamodb-outbox.js", "dist/index.js", "dist/index.d.ts", "dist/runtime/index.js", "dist/runtime/index.d.ts", "dist/runtime/lambda.js", "dist/bin/dynamodb-outbox.js", "dist/policy/index.js", "dist/policy/policies.js", "dist/policy/policies.d.ts", "dist/policy/package.json", "dist/policy/PulumiPolicy.yaml"]) {
            assert.ok(packed.includes(file), `${file} is packed`);
        }
        const sources = packed.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
        assert.deepEqual(sources, [], "no TypeScript sources");
        const stray = packed.filter((f) => /^(dist\/)?(tests|bench|scripts|program|local|scratch)\//.test(f));
        assert.deepEqual(stray, [], "nothing from tests/, bench/, scripts/, program/, local/");
        assert.deepEqual(packed.filter((f) => f.endsWith(".map")), [], "no source maps (they would point at sources that are not shipped)");
    });

    it("is required by name from a plain JavaScript program, which declares an Outbox whose archives hold __index.js, the package's package.json and its runtime's .js files, nothing else", () => {
        const archives = consumerArchives();
        const runtime = path.join(installed, "dist", "runtime");
        const runtimeFiles = filesUnder(runtime)
            .filter((f) => f.endsWith(".js"))
            .map((f) => `node_modules/${MANIFEST.name}/dist/runtime/${path.relative(runtime, f).split(path.sep).join("/")}`);
        assert.ok(runtimeFiles.includes(`node_modules/${MANIFEST.name}/dist/runtime/lambda.js`), runtimeFiles.join(", "));
        const expected = Object.fromEntries([["__index.js", "text"], [`node_modules/${MANIFEST.name}/package.json`, "path"], ...runtimeFiles.map((f) => [f, "path"])]);
        for (const child of ["publisher", "sweeper"] as const) {
            assert.deepEqual(archives[child].entries, expected, `${child}: no declarations, components, CLI or README, and no @aws-sdk/*, @smithy/* or @pulumi/* in the archive`);
        }
        // The case this fix exists for: from node_modules, Pulumi captures the runtime modules by reference.
        const index = fs.readFileSync(path.join(lambdaRoot, "publisher", "__index.js"), "utf8");
        assert.match(index, new RegExp(`require\\("${MANIFEST.name}/dist/runtime/[a-z-/]+\\.js"\\)`));
    });

    it(`keeps each consumed archive within ${CONSUMED_ARCHIVE_BUDGET.raw / 1024} KB raw and ${CONSUMED_ARCHIVE_BUDGET.deflated / 1024} KB deflated`, () => {
        consumerArchives();
        for (const child of ["publisher", "sweeper"] as const) {
            const size = measure(path.join(lambdaRoot, child));
            const index = fs.statSync(path.join(lambdaRoot, child, "__index.js")).size;
            console.log(`      ${child} archive (installed package): ${size.files} files, ${size.raw} bytes raw (__index.js ${index}), ${size.deflated} bytes deflated`);
            assert.ok(size.raw <= CONSUMED_ARCHIVE_BUDGET.raw, `${child} archive is ${size.raw} bytes raw, budget ${CONSUMED_ARCHIVE_BUDGET.raw}`);
            assert.ok(size.deflated <= CONSUMED_ARCHIVE_BUDGET.deflated, `${child} archive is ${size.deflated} bytes deflated, budget ${CONSUMED_ARCHIVE_BUDGET.deflated}`);
        }
    });

    for (const child of ["publisher", "sweeper"] as const) {
        describe(`the ${child} archive loaded as Lambda loads it`, () => {
            let report: HostReport;
            const dropped = [ENV.tableName, ENV.topicArn, ENV.dlqUrl];

            before(() => {
                const dir = path.join(lambdaRoot, child);
                const host = path.join(work, `${child}-host.js`);
                // The host sits outside the archive folder: the handler may only resolve what the archive and NODE_PATH hold.
                fs.copyFileSync(path.join(FIXTURES, "lambda-host.js"), host);
                const resultFile = path.join(work, `${child}-result.json`);
                ok(
                    run(process.execPath, [host, resultFile, JSON.stringify(dropped), child === "publisher" ? "invoke-empty-batch" : ""], {
                        cwd: dir,
                        env: {
                            PATH: process.env.PATH ?? "",
                            NODE_PATH: sdkPath,
                            AWS_REGION: "eu-west-1",
                            AWS_ACCESS_KEY_ID: "test",
                            AWS_SECRET_ACCESS_KEY: "test",
                            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
                            ...consumerArchives()[child].environment,
                        },
                    }),
                    `the ${child} Lambda host`,
                );
                report = JSON.parse(fs.readFileSync(resultFile, "utf8")) as HostReport;
            });

            it("loads: the handler is a function built from the environment the component set", () => {
                assert.equal(report.handlerType, "function");
                if (child === "publisher") assert.deepEqual(report.emptyBatch, { batchItemFailures: [] });
            });

            for (const variable of dropped) {
                it(`fails the cold start with INVALID_CONFIG naming ${variable} when it is missing`, () => {
                    const failure = report.missing[variable];
                    assert.equal(failure.code, "INVALID_CONFIG", JSON.stringify(failure));
                    assert.equal(failure.context?.variable, variable);
                    assert.ok(failure.message?.includes(variable), failure.message);
                });
            }

            it("requires dynamodb-outbox/runtime with no @pulumi/* package anywhere it can resolve from", () => {
                assert.deepEqual(report.runtimeExports, { OutboxError: "function", readHandlerEnvironment: "function" });
                const pulumi = report.modules.filter((m) => m.includes(`${path.sep}@pulumi${path.sep}`));
                assert.deepEqual(pulumi, [], "no @pulumi module loaded");
                // Real paths: this repository's node_modules may itself be a link (a git worktree sharing one).
                const sdk = fs.realpathSync(path.join(REPO, "node_modules")) + path.sep;
                const outside = report.modules.filter((m) => !m.startsWith(path.join(lambdaRoot, child) + path.sep) && !m.startsWith(sdk) && !m.endsWith("-host.js"));
                assert.deepEqual(outside, [], "every module comes from the archive or the runtime-provided SDK (linked to this repository's node_modules)");
            });
        });
    }

    for (const resolution of ["node", "node16"] as const) {
        it(`type-checks a default Pulumi TypeScript project (template tsconfig, no skipLibCheck, moduleResolution ${resolution}) importing Outbox and OutboxWriter`, async () => {
            const tsc = await typeChecks[resolution];
            const hint =
                resolution === "node"
                    ? "moduleResolution node ignores package.json exports: each subpath entry needs its typesVersions entry"
                    : "moduleResolution node16 reads the exports' types conditions";
            assert.equal(tsc.status, 0, `tsc --noEmit in ${path.join("ts", resolution)} (${hint}; no @pulumi/policy may be in the type graph of ${MANIFEST.name} or ${MANIFEST.name}/runtime):\n${tsc.stdout}${tsc.stderr}`);
        });
    }

    it("type-checks a policy program importing outboxPolicies from the policy entry (with skipLibCheck: @pulumi/policy's own declarations)", async () => {
        const tsc = await typeChecks.policy;
        assert.equal(tsc.status, 0, `tsc --noEmit in ts/policy (moduleResolution node: the typesVersions "policy" entry):\n${tsc.stdout}${tsc.stderr}`);
    });

    describe("an application outside Lambda, with only the installed closure (no NODE_PATH)", () => {
        let app: AppReport;

        before(() => {
            fs.copyFileSync(path.join(FIXTURES, "consumer-app.js"), path.join(project, "app.js"));
            app = JSON.parse(ok(run(process.execPath, ["app.js"], { cwd: project, env: plainEnv() }), "the consumer app (node app.js in the consumer project)").trim().split("\n").pop() as string);
        });

        it("finds the compiled files' requires", () => {
            assert.ok(app.requires.some((r) => r.spec === "@aws-sdk/client-dynamodb"), JSON.stringify(app.requires));
        });

        it("declares every package the compiled code requires in the packed package.json's dependencies, and resolves it from the installed closure", () => {
            const declared = Object.keys(packedManifest.dependencies ?? {});
            const modules = path.join(project, "node_modules") + path.sep;
            const problems = app.requires
                .filter((r) => !builtinModules.includes(r.spec))
                .flatMap((r) => {
                    const name = packageOf(r.spec);
                    if (!declared.includes(name)) return [`${r.file} requires ${r.spec}, but ${name} is not in the packed package.json's dependencies (${declared.join(", ")}): move it from devDependencies to dependencies`];
                    if (!r.resolved.startsWith(modules)) return [`${r.file} requires ${r.spec}, which does not resolve from the consumer's node_modules: ${r.resolved}`];
                    return [];
                });
            assert.deepEqual(problems, []);
        });

        it("redrives through the package's own @aws-sdk/client-sqs, loaded from the consumer's node_modules", () => {
            assert.ok(!("error" in app.redrive), `require("${MANIFEST.name}/runtime") and redriveDeadLetters in a plain application: ${"error" in app.redrive ? app.redrive.error : ""} (a production dependency missing from the packed package.json's dependencies?)`);
            assert.deepEqual(app.redrive.sent, ["ReceiveMessageCommand"]);
            assert.equal(app.redrive.result.received, 0);
            const sqs = app.loaded.filter((m) => m.includes(`${path.sep}@aws-sdk${path.sep}client-sqs${path.sep}`));
            assert.ok(sqs.length > 0, "@aws-sdk/client-sqs loaded");
            assert.deepEqual(sqs.filter((m) => !m.startsWith(path.join(project, "node_modules") + path.sep)), [], "@aws-sdk/client-sqs from the consumer's node_modules only");
        });

        it(`requires the policy entry ${MANIFEST.name}/policy, which exports outboxPolicies`, () => {
            assert.ok(!("error" in app.policy), `require("${MANIFEST.name}/policy"): ${"error" in app.policy ? app.policy.error : ""}`);
            assert.ok(app.policy.exports.includes("outboxPolicies"), app.policy.exports.join(", "));
        });
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
            assert.deepEqual((await running.info()).policies.map((p) => p.name), OUTBOX_POLICY_NAMES);
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
            assert.deepEqual(await running.analyze(table), [{ policyName: "outbox-table-shape", enforcementLevel: "mandatory", message: ttl, urn: table.urn }]);
            const elsewhere = { ...table, props: bent, urn: "urn:pulumi:dev::shop::aws:dynamodb/table:Table::users", parent: undefined };
            assert.deepEqual(await running.analyze(elsewhere), [], "the same table at the stack's root, untagged, is no outbox table");
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
            assert.ok(fs.existsSync(bin), `npm linked no working node_modules/.bin/dynamodb-outbox from the packed package.json "bin": ${JSON.stringify(packedManifest.bin)}; it must name a file in the package's "files"`);
        });

        it("prints its usage on --help, and redrive's on redrive --help, and exits 0, with no ts-node installed", () => {
            assert.ok(!fs.existsSync(path.join(project, "node_modules", "ts-node")), "the consumer has no ts-node");
            // Executed as the shell would: the link, its shebang and its mode.
            const help = run(bin, ["--help"], { cwd: project, env: plainEnv() });
            assert.equal(help.status, 0, `node_modules/.bin/dynamodb-outbox --help exited ${help.status}\nstdout: ${help.stdout}\nstderr: ${help.stderr}`);
            assert.match(help.stdout, /^usage: dynamodb-outbox <verify\|migrate\|doctor>/);
            const redrive = run(bin, ["redrive", "--help"], { cwd: project, env: plainEnv() });
            assert.equal(redrive.status, 0, `node_modules/.bin/dynamodb-outbox redrive --help exited ${redrive.status}\nstdout: ${redrive.stdout}\nstderr: ${redrive.stderr}`);
            assert.match(redrive.stdout, /^Usage: dynamodb-outbox redrive --table <name> --dlq-url <url>/);
        });

        it("exits 2 with the message and the usage on a bad flag", () => {
            const bad = run(bin, ["verify", "--tabel", "orders"], { cwd: project, env: plainEnv() });
            assert.equal(bad.stdout, "");
            assert.match(bad.stderr, /^dynamodb-outbox: unknown flag "--tabel"; see the flags below\n\nusage: dynamodb-outbox/);
            assert.equal(bad.status, 2);
        });
    });
});
