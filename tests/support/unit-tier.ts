/**
 * The unit tier's rule, enforced: `npm run test:unit` loads this before any test file (`--require`), and from then
 * on every way of starting a child process throws, naming the test that tried. DynamoDB Local is a Java child
 * process, so a test that needs it fails here, loudly, instead of making the fast tier slow; so does a test that
 * runs Lambda's Node, npm or a CLI. `DYNAMODB_ENDPOINT` (a DynamoDB Local already running) is ignored, for the
 * same reason. Such a test belongs in tests/integration/ (DynamoDB Local, the local SNS/SQS/S3, the component
 * under Pulumi's mocks) or tests/e2e/ (anything run in a process of its own).
 *
 * It also refuses to start when a test file sits outside the three tiers, where no npm script would run it.
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import * as path from "node:path";
// The module object itself (not an import-star copy), so that every caller sees the replacements below.
import childProcess = require("node:child_process");

const TESTS = path.join(__dirname, "..");
const TIERS = ["unit", "integration", "e2e"] as const;

/** The `.test.ts` files under `dir`, relative to the repository root. */
function testFiles(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) return entry.name === "node_modules" ? [] : testFiles(full);
        return entry.name.endsWith(".test.ts") ? [path.relative(path.join(TESTS, ".."), full)] : [];
    });
}

const outside = testFiles(TESTS).filter(
    (file) => !TIERS.some((tier) => file.startsWith(path.join("tests", tier) + path.sep)),
);
if (outside.length > 0) {
    throw new Error(
        `test files outside tests/unit, tests/integration and tests/e2e, which no npm script runs: ${outside.join(", ")}; move each into the tier that matches what it starts (see docs/contributing.md)`,
    );
}

delete process.env.DYNAMODB_ENDPOINT;

/** The test running now, set by the root hooks below; undefined during a `before`/`after` hook or a file's load. */
let running: string | undefined;

/** Where in a unit test file the call came from (`tests/unit/…:line`), read off the stack. */
function callSite(): string | undefined {
    const frames = (new Error().stack ?? "").split("\n");
    const unit = path.join(TESTS, "unit") + path.sep;
    const frame = frames.find((line) => line.includes(unit));
    const match = frame === undefined ? null : /\(?([^()\s]+):(\d+):\d+\)?$/.exec(frame.trim());
    return match === null ? undefined : `${path.relative(path.join(TESTS, ".."), match[1]!)}:${match[2]}`;
}

const STARTERS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;

for (const name of STARTERS) {
    const refuse = (command: unknown, args?: unknown): never => {
        const shown = [String(command), ...(Array.isArray(args) ? args.slice(0, 3).map(String) : [])].join(" ");
        const where = [callSite(), running === undefined ? "in a hook or while loading" : `test "${running}"`]
            .filter((s) => s !== undefined)
            .join(", ");
        throw new Error(
            `unit tier: child_process.${name}(${JSON.stringify(shown)}) refused (${where}). The unit tier starts no child process: ` +
                "no DynamoDB Local (Java), no Lambda's Node, no npm or CLI. Move the test to tests/integration/ (DynamoDB Local, " +
                "the local SNS/SQS/S3, the component under Pulumi's mocks) or tests/e2e/ (processes of its own).",
        );
    };
    (childProcess as Record<string, unknown>)[name] = refuse;
}
// ES modules that import these names get the refusing ones too.
syncBuiltinESMExports();

export const mochaHooks = {
    beforeEach(this: Mocha.Context): void {
        running = this.currentTest?.fullTitle();
    },
    afterEach(): void {
        running = undefined;
    },
};
