/**
 * The package as a consumer meets it: built, packed with `npm pack`, unpacked into a fresh project's
 * `node_modules`, required by name from a plain JavaScript Pulumi program (no ts-node, no TypeScript sources),
 * and its Lambda archive run the way the Lambda Node.js runtime runs it.
 *
 * Real parts: the build (`npm run build`), `npm pack` (its file list is what ships), Pulumi's closure serializer
 * and code-path walk on the installed layout, Node's module resolution (package `exports` included) in a folder
 * holding only what the archive holds. The consumer's dependencies are links into this repository's
 * `node_modules` (no network install); the devDependencies (ts-node, typescript, mocha, the emulators, `@types`)
 * are left out, as they are in a consumer's project. The Lambda folder gets `@aws-sdk/*` and `@smithy/*` only
 * through NODE_PATH, as the Lambda runtime provides them.
 */
import * as assert from "node:assert/strict";
import { spawn, spawnSync, SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { ENV } from "../../runtime/config";

const REPO = path.resolve(__dirname, "..", "..");
const FIXTURES = path.join(__dirname, "fixtures");
const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as {
    name: string;
    version: string;
    devDependencies: Record<string, string>;
};

/**
 * The budget for each function's archive when the package is installed: `__index.js` plus the package itself
 * (its compiled JS and .d.ts), none of its dependencies.
 */
const CONSUMED_ARCHIVE_BUDGET_BYTES = 800 * 1024;

/** Package folders in a consumer's node_modules that come from this repository's devDependencies (or npm's own files). */
function devOnly(entry: string): boolean {
    if (entry.startsWith(".")) return true;
    return Object.prototype.hasOwnProperty.call(MANIFEST.devDependencies, entry);
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): SpawnSyncReturns<string> {
    const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (result.error) throw result.error;
    return result;
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
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

describe("package: consumed as an installed dependency", function () {
    this.timeout(120_000);
    let work: string;
    let project: string;
    let installed: string;
    let packed: string[];
    let archives: { publisher: ArchiveReport; sweeper: ArchiveReport };
    let lambdaRoot: string;
    let sdkPath: string;

    before(() => {
        work = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-consume-"));
        ok(run("npm", ["run", "--silent", "build"], { cwd: REPO }), "npm run build");
        // --ignore-scripts: prepack would build a second time.
        const pack = JSON.parse(ok(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], { cwd: REPO }), "npm pack")) as { filename: string; files: { path: string }[] }[];
        packed = pack[0].files.map((f) => f.path).sort();

        // The consumer project: its package.json, the unpacked tarball as node_modules/<name>, its dependencies linked.
        project = path.join(work, "project");
        const modules = path.join(project, "node_modules");
        fs.mkdirSync(modules, { recursive: true });
        fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, dependencies: { [MANIFEST.name]: MANIFEST.version } }));
        ok(run("tar", ["-xzf", path.join(work, pack[0].filename), "-C", modules], { cwd: work }), "tar");
        installed = path.join(modules, MANIFEST.name);
        fs.renameSync(path.join(modules, "package"), installed);
        for (const entry of fs.readdirSync(path.join(REPO, "node_modules"))) {
            if (!devOnly(entry)) fs.symlinkSync(path.join(REPO, "node_modules", entry), path.join(modules, entry));
        }
        fs.mkdirSync(path.join(modules, ".bin"));
        fs.symlinkSync(path.join("..", MANIFEST.name, "bin", "dynamodb-outbox.js"), path.join(modules, ".bin", "dynamodb-outbox"));

        // The program, run from the project (so it resolves packages as the consumer's would). --preserve-symlinks
        // keeps the linked packages at their node_modules paths, so Pulumi resolves the installed package from its
        // own folder, as in a real install.
        fs.copyFileSync(path.join(FIXTURES, "consumer-program.js"), path.join(project, "index.js"));
        lambdaRoot = path.join(work, "lambda");
        const program = run(process.execPath, ["--preserve-symlinks", "index.js", lambdaRoot], {
            cwd: project,
            env: { PATH: process.env.PATH ?? "", HOME: work, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
        });
        archives = JSON.parse(ok(program, "the consumer program").trim().split("\n").pop() as string);

        // What the Lambda Node.js runtime puts on NODE_PATH: the AWS SDK v3 and its Smithy core, nothing else.
        sdkPath = path.join(work, "lambda-runtime-modules");
        fs.mkdirSync(sdkPath);
        for (const scope of ["@aws-sdk", "@smithy"]) fs.symlinkSync(path.join(REPO, "node_modules", scope), path.join(sdkPath, scope));
    });

    after(() => {
        if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
    });

    it("packs compiled JavaScript with type declarations and the CLI launcher: no TypeScript sources, tests or dev tooling", () => {
        for (const file of ["package.json", "bin/dynamodb-outbox.js", "dist/index.js", "dist/index.d.ts", "dist/runtime/index.js", "dist/runtime/index.d.ts", "dist/runtime/lambda.js", "dist/bin/dynamodb-outbox.js", "dist/policy/index.js", "dist/policy/package.json", "dist/policy/PulumiPolicy.yaml"]) {
            assert.ok(packed.includes(file), `${file} is packed`);
        }
        const sources = packed.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
        assert.deepEqual(sources, [], "no TypeScript sources");
        const stray = packed.filter((f) => /^(dist\/)?(tests|bench|scripts|program|local|scratch)\//.test(f));
        assert.deepEqual(stray, [], "nothing from tests/, bench/, scripts/, program/, local/");
        assert.deepEqual(packed.filter((f) => f.endsWith(".map")), [], "no source maps (they would point at sources that are not shipped)");
    });

    it("is required by name from a plain JavaScript program, which declares an Outbox whose archives hold __index.js and the package, nothing else", () => {
        for (const child of ["publisher", "sweeper"] as const) {
            assert.deepEqual(archives[child].entries, { "__index.js": "text", [`node_modules/${MANIFEST.name}`]: "path" }, `${child}: no @aws-sdk/*, @smithy/* or @pulumi/* in the archive`);
        }
        // The case this fix exists for: from node_modules, Pulumi captures the runtime modules by reference.
        const index = fs.readFileSync(path.join(lambdaRoot, "publisher", "__index.js"), "utf8");
        assert.match(index, new RegExp(`require\\("${MANIFEST.name}/dist/runtime/[a-z-/]+\\.js"\\)`));
        const shipped = path.join(lambdaRoot, "publisher", "node_modules", MANIFEST.name);
        assert.ok(fs.existsSync(path.join(shipped, "dist", "runtime", "lambda.js")));
        assert.ok(!fs.existsSync(path.join(shipped, "node_modules")), "none of the package's dependencies nested in it");
    });

    it(`keeps each consumed archive within ${CONSUMED_ARCHIVE_BUDGET_BYTES / 1024} KB`, () => {
        for (const child of ["publisher", "sweeper"] as const) {
            const size = measure(path.join(lambdaRoot, child));
            const index = fs.statSync(path.join(lambdaRoot, child, "__index.js")).size;
            console.log(`      ${child} archive (installed package): ${size.files} files, ${size.raw} bytes raw (__index.js ${index}), ${size.deflated} bytes deflated`);
            assert.ok(size.raw <= CONSUMED_ARCHIVE_BUDGET_BYTES, `${child} archive is ${size.raw} bytes, budget ${CONSUMED_ARCHIVE_BUDGET_BYTES}`);
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
                            ...archives[child].environment,
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
                const outside = report.modules.filter((m) => !m.startsWith(path.join(lambdaRoot, child) + path.sep) && !m.startsWith(path.join(REPO, "node_modules") + path.sep) && !m.endsWith("-host.js"));
                assert.deepEqual(outside, [], "every module comes from the archive or the runtime-provided SDK (linked to this repository's node_modules)");
            });
        });
    }

    it("type-checks a TypeScript consumer importing both entry points through the exports' types conditions", () => {
        fs.writeFileSync(
            path.join(project, "consumer.ts"),
            [
                `import { Outbox, OutboxArgs } from "${MANIFEST.name}";`,
                `import { ENV, OutboxError } from "${MANIFEST.name}/runtime";`,
                `const args: OutboxArgs = {};`,
                `export const make = (): Outbox => new Outbox("orders", args);`,
                `export const fail = (): OutboxError => new OutboxError("INVALID_CONFIG", ENV.tableName);`,
                "",
            ].join("\n"),
        );
        // skipLibCheck: @pulumi/policy 1.21.0 ships an index.d.ts that re-exports names its proxy.d.ts lacks.
        const options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2021", "--module", "node16", "--moduleResolution", "node16", "--types", "node", "consumer.ts"];
        const tsc = run(process.execPath, [path.join(REPO, "node_modules", "typescript", "bin", "tsc"), ...options], { cwd: project });
        assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
    });

    it("ships a runnable policy pack: the compiled entry constructs PolicyPack from its folder and serves (prints its port)", async () => {
        const pack = path.join(installed, "dist", "policy");
        const manifest = JSON.parse(fs.readFileSync(path.join(pack, "package.json"), "utf8"));
        assert.equal(manifest.main, "index.js");
        assert.match(manifest.version, /^\d+\.\d+\.\d+$/, "PolicyPack reads its version from <cwd>/package.json");
        assert.match(fs.readFileSync(path.join(pack, "PulumiPolicy.yaml"), "utf8"), /^runtime: nodejs$/m);
        // Pulumi runs a Node.js pack with the pack folder as cwd and requires the folder; the pack prints the
        // analyzer's gRPC port on stdout once it serves, then keeps serving until stopped.
        const child = spawn(process.execPath, ["--preserve-symlinks", "-e", "require(process.cwd())"], { cwd: pack, env: { PATH: process.env.PATH ?? "", HOME: work } });
        try {
            const first = await new Promise<string>((resolve, reject) => {
                let stdout = "";
                let stderr = "";
                child.stdout.on("data", (c: Buffer) => {
                    stdout += c.toString();
                    if (stdout.includes("\n")) resolve(stdout);
                });
                child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
                child.on("error", reject);
                child.on("exit", (code) => reject(new Error(`the policy pack exited ${code} before serving\nstdout: ${stdout}\nstderr: ${stderr}`)));
            });
            assert.match(first, /^\d+\n$/);
        } finally {
            child.kill();
        }
    });

    it("runs the installed CLI from node_modules/.bin with no ts-node installed", () => {
        assert.ok(!fs.existsSync(path.join(project, "node_modules", "ts-node")), "the consumer has no ts-node");
        const bad = run(process.execPath, [path.join(project, "node_modules", ".bin", "dynamodb-outbox"), "verify", "--tabel", "orders"], {
            cwd: project,
            env: { PATH: process.env.PATH ?? "", HOME: work },
        });
        assert.equal(bad.stdout, "");
        assert.match(bad.stderr, /^dynamodb-outbox: unknown flag "--tabel"; see the flags below\n\nusage: dynamodb-outbox/);
        assert.equal(bad.status, 2);
    });
});
