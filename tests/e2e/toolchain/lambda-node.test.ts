import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { LAMBDA_NODE_MAJOR, lambdaNode, majorOf } from "../../support/lambda-node";
import { assertTestNode } from "../../support/test-node";

const REPO = path.resolve(__dirname, "..", "..", "..");

describe("unit: the Node.js the tests and the Lambda archives run on", () => {
    it(`is Lambda's major (nodejs${LAMBDA_NODE_MAJOR}.x): the toolchain's Node runs the tests`, () => {
        assert.equal(
            majorOf(process.version),
            LAMBDA_NODE_MAJOR,
            `the tests run on Node ${process.version} (${process.execPath}); npm test, npm run and npx run them on the toolchain's Node ${LAMBDA_NODE_MAJOR} (node_modules/.bin/node, from dev/toolchain): is it installed for this platform (npm ci)?`,
        );
        assert.deepEqual(lambdaNode(), { path: process.execPath, version: process.version });
    });

    it("is the binary node_modules/.bin/node links to, where the toolchain installed one for this platform", function () {
        const bin = path.join(REPO, "node_modules", ".bin", process.platform === "win32" ? "node.cmd" : "node");
        if (!fs.existsSync(bin)) this.skip();
        const ran = spawnSync(bin, ["-p", "process.version"], { encoding: "utf8" });
        assert.equal(ran.status, 0, ran.stderr);
        assert.equal(
            ran.stdout.trim(),
            process.version,
            `node_modules/.bin/node is ${ran.stdout.trim()}, the tests run on ${process.version} (${process.execPath}): run them through npm test or npx, which put node_modules/.bin first on PATH`,
        );
    });

    it("reads the major of a version string, and NaN from anything else", () => {
        assert.equal(majorOf("v22.23.5"), 22);
        assert.equal(majorOf("v20.20.2"), 20);
        assert.ok(Number.isNaN(majorOf("22.23.5")));
    });
});

describe("unit: the test suite's Node floor", () => {
    it("accepts Node 22.5 and later", () => {
        for (const version of ["v22.5.0", "v22.23.5", "v24.1.0"])
            assert.doesNotThrow(() => assertTestNode(version, "/bin/node"), version);
    });

    it("refuses an older Node, naming it, its binary and how to run on the toolchain's Node", () => {
        for (const version of ["v20.20.2", "v22.4.1"]) {
            assert.throws(
                () => assertTestNode(version, "/usr/bin/node"),
                (err: Error) => {
                    assert.match(
                        err.message,
                        new RegExp(
                            `need Node\\.js >=22\\.5, and run on ${version.replace(/\./g, "\\.")} \\(/usr/bin/node\\)`,
                        ),
                    );
                    assert.match(err.message, /npm test, npm run test:mocha or npx mocha/);
                    return true;
                },
            );
        }
    });
});
