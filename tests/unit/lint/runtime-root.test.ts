/**
 * The runtime's root holds only what every role shares, and docs/contributing.md's map says which files those are:
 * the files at `runtime/`'s root are exactly the ones its "`runtime/` (root)" row names, and there are at most 12 of
 * them (issue 36). A file added at the root without the map, or a map that names a file no longer there, fails here.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.join(__dirname, "..", "..", "..");

/** The `.ts` files directly under `runtime/`, sorted. */
function rootFiles(): string[] {
    return fs
        .readdirSync(path.join(ROOT, "runtime"), { withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
        .map((entry) => entry.name)
        .sort();
}

/** The file names that docs/contributing.md's "`runtime/` (root)" row names in its role column, sorted. */
function documentedRootFiles(): string[] {
    const doc = fs.readFileSync(path.join(ROOT, "docs", "contributing.md"), "utf8");
    const row = doc.split("\n").find((line) => line.startsWith("| `runtime/` (root) |"));
    assert.ok(row, 'docs/contributing.md has no "| `runtime/` (root) |" row');
    const role = row.split("|")[2] ?? "";
    return [...role.matchAll(/`([\w-]+\.ts)`/g)].map((match) => match[1] ?? "").sort();
}

describe("runtime/'s root", function () {
    it("holds at most 12 files", function () {
        const files = rootFiles();
        assert.ok(files.length <= 12, `runtime/ has ${files.length} files at its root: ${files.join(", ")}`);
    });

    it("holds exactly the files docs/contributing.md's map names", function () {
        assert.deepEqual(rootFiles(), documentedRootFiles());
    });
});
