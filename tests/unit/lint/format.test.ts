/**
 * The formatter's check, proven on a fault: `npm run lint` ends with `prettier --check .`, and Prettier, with the
 * repository's own .prettierrc.json, refuses a file that is not in its format and accepts the same code formatted.
 * Prettier runs in this process, through its Node API.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as prettier from "prettier";

const ROOT = path.join(__dirname, "..", "..", "..");

describe("format check", () => {
    const config = JSON.parse(fs.readFileSync(path.join(ROOT, ".prettierrc.json"), "utf8")) as prettier.Options;
    const options = { ...config, filepath: path.join(ROOT, "runtime", "example.ts") };

    it("is part of npm run lint", () => {
        const scripts = (
            JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
        ).scripts;
        assert.match(scripts.lint ?? "", /prettier --check \./);
    });

    it("refuses an unformatted file, and accepts it once formatted", async () => {
        const unformatted = "export const add = (a: number,b: number) => { return a+b }\n";
        assert.equal(await prettier.check(unformatted, options), false);
        const formatted = await prettier.format(unformatted, options);
        assert.equal(formatted, "export const add = (a: number, b: number) => {\n    return a + b;\n};\n");
        assert.equal(await prettier.check(formatted, options), true);
    });
});
