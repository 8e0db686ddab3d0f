import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { dynamoEndpoint } from "../../support/dynamodb";
import { createOutboxTable, dropTable, LOCAL_ENV } from "../../support/cli";
import { runAsync, type Ran } from "../../support/run-async";

const REPO = path.resolve(__dirname, "..", "..", "..");

/** What `npm install dynamodb-outbox` lays out: the package under node_modules, its bin linked in node_modules/.bin. */
function installedLayout(): { root: string; bin: string } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "dynamodb-outbox-install-"));
    const modules = path.join(root, "node_modules");
    const pkg = path.join(modules, "dynamodb-outbox");
    fs.mkdirSync(pkg, { recursive: true });
    for (const entry of ["package.json", "tsconfig.json", "tsconfig.base.json", "index.ts", "bin", "cli", "runtime"]) {
        fs.cpSync(path.join(REPO, entry), path.join(pkg, entry), { recursive: true });
    }
    // The package's dependencies, hoisted next to it as npm does (linked, not copied, to keep the test fast).
    for (const dep of fs.readdirSync(path.join(REPO, "node_modules"))) {
        if (dep.startsWith(".")) continue;
        fs.symlinkSync(path.join(REPO, "node_modules", dep), path.join(modules, dep));
    }
    fs.mkdirSync(path.join(modules, ".bin"));
    const bin = path.join(modules, ".bin", "dynamodb-outbox");
    fs.symlinkSync(path.join("..", "dynamodb-outbox", "bin", "dynamodb-outbox.js"), bin);
    return { root, bin };
}

/** Run the installed `bin` in `cwd` with only PATH, HOME and the local credentials in its environment. */
function spawnBin(bin: string, args: string[], cwd: string): Promise<Ran> {
    return runAsync(bin, args, { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, ...LOCAL_ENV } });
}

describe("cli: the installed executable", function () {
    this.timeout(120_000);
    let layout: { root: string; bin: string };
    let table: string;
    before(async () => {
        layout = installedLayout();
        table = await createOutboxTable({}, "cli-bin");
    });
    after(async () => {
        await dropTable(table);
        fs.rmSync(layout.root, { recursive: true, force: true });
    });

    it("runs from node_modules/.bin as npx would: verify passes on a correct table with exit 0, and a bad flag exits 2 with the usage", async () => {
        const run = await spawnBin(
            layout.bin,
            [
                "verify",
                "--table",
                table,
                "--endpoint",
                await dynamoEndpoint(),
                "--expiry",
                "1",
                "--poll-interval",
                "0.2",
            ],
            layout.root,
        );
        assert.equal(run.stderr, "");
        assert.match(run.stdout, new RegExp(`^dynamodb-outbox verify: table "${table}"`));
        assert.match(run.stdout, /✓ store preflight passes/);
        assert.match(run.stdout, /\nverified: \d+ passed/);
        assert.equal(run.status, 0, run.stdout);

        const bad = await spawnBin(layout.bin, ["verify", "--tabel", table], layout.root);
        assert.equal(bad.status, 2);
        assert.equal(bad.stdout, "");
        assert.match(
            bad.stderr,
            /^dynamodb-outbox: unknown flag "--tabel"; see the flags below\n\nusage: dynamodb-outbox/,
        );
    });
});
