import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { handlerCodePathOptions, runtimeCapturedByReference } from "../../components/code-path";

describe("package: the archive's code-path options in each layout", () => {
    let dir: string;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-layout-"));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("says by reference exactly when the runtime folder, seen from the program, runs through node_modules", () => {
        assert.equal(runtimeCapturedByReference(dir, path.join(dir, "runtime")), false);
        assert.equal(runtimeCapturedByReference(dir, path.join(dir, "node_modules", "dynamodb-outbox", "dist", "runtime")), true);
        // A linked checkout (npm link) resolves outside node_modules: Pulumi captures it by value.
        assert.equal(runtimeCapturedByReference(path.join(dir, "app"), path.join(dir, "checkout", "dist", "runtime")), false);
        // This repository's own program.
        assert.equal(runtimeCapturedByReference(path.join(__dirname, "..", "..")), false);
    });

    it("installed: includes the package by name, keeps its dependencies and the program's other dependencies out", () => {
        fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ dependencies: { "dynamodb-outbox": "0.1.0", express: "4.0.0" } }));
        const pkg = path.join(dir, "node_modules", "dynamodb-outbox");
        fs.mkdirSync(path.join(pkg, "dist", "runtime"), { recursive: true });
        fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "dynamodb-outbox", dependencies: { "@aws-sdk/client-sns": "3.0.0", "@pulumi/pulumi": "3.0.0" } }));
        fs.mkdirSync(path.join(dir, "node_modules", "@smithy", "core"), { recursive: true });
        assert.deepEqual(handlerCodePathOptions(dir, pkg, path.join(pkg, "dist", "runtime")), {
            extraIncludePackages: ["dynamodb-outbox"],
            extraExcludePackages: ["@aws-sdk/client-sns", "@pulumi/pulumi", "@smithy/core", "express"],
        });
    });

    it("local: includes nothing and excludes every dependency of the program, this package included", () => {
        fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ dependencies: { "dynamodb-outbox": "0.1.0", express: "4.0.0" } }));
        assert.deepEqual(handlerCodePathOptions(dir, undefined, path.join(dir, "runtime")), {
            extraIncludePackages: [],
            extraExcludePackages: ["dynamodb-outbox", "express"],
        });
    });

    it("returns fresh lists on every call (CallbackFunction appends to the one it is given)", () => {
        const a = handlerCodePathOptions();
        const b = handlerCodePathOptions();
        assert.notEqual(a.extraExcludePackages, b.extraExcludePackages);
        a.extraExcludePackages.push("aws-sdk");
        assert.ok(!b.extraExcludePackages.includes("aws-sdk"));
    });
});
