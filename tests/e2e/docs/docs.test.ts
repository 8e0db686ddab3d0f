/**
 * The docs test: the README, the changelog and `docs/` hold no broken relative link or anchor (checked by
 * remark-validate-links, a maintained checker), show no command that does not exist, and every `ts` block in them
 * type-checks against this package. The generated API reference (`docs/api/`, `npm run docs`) is what TypeDoc
 * makes of the TSDoc today, and its `OutboxArgs` page gives each arg the default `components/defaults.ts` applies.
 */
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { COMMANDS, REDRIVE_COMMAND } from "../../../cli/shared/args";
import { ALARM_THRESHOLD_RANGES, OUTBOX_DEFAULTS, OUTBOX_RANGES } from "../../../components/defaults";
import { DEFAULT_EVENT_SOURCE } from "../../../runtime/destination/kind";
import { filesUnder } from "../../support/serialized";
import { LITERAL_DEFAULT_ARGS } from "../../support/component-args";
import {
    PULUMI_COMMONJS_OPTIONS,
    ROOT,
    codeBlocks,
    handWrittenPages,
    shownCommands,
    typeCheckBlocks,
    unknownCommands,
} from "../../support/markdown";

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
const CLI_COMMANDS = [...Object.keys(COMMANDS), REDRIVE_COMMAND];
const read = (page: string) => fs.readFileSync(path.resolve(ROOT, page), "utf8");

/** remark with the repository's link-checking config, on the given paths (from `cwd`). */
function remark(paths: readonly string[], cwd = ROOT) {
    const cli = path.join(ROOT, "node_modules", "remark-cli", "cli.js");
    const run = spawnSync(
        process.execPath,
        [
            cli,
            "--rc-path",
            path.join(ROOT, ".remarkrc.json"),
            "--no-stdout",
            "--frail",
            "--quiet",
            "--no-color",
            ...paths,
        ],
        { cwd, encoding: "utf8" },
    );
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Every file under `dir`, relative to it, with its text. */
function tree(dir: string): Map<string, string> {
    return new Map(filesUnder(dir).map((file) => [path.relative(dir, file), fs.readFileSync(file, "utf8")]));
}

/** The files that differ between two trees: missing on one side, or with other text. */
function treeDifferences(expected: Map<string, string>, actual: Map<string, string>): string[] {
    const names = new Set([...expected.keys(), ...actual.keys()]);
    return [...names].filter((name) => expected.get(name) !== actual.get(name)).sort();
}

/** The `@default` each property of a generated interface page shows, by property name. */
function generatedDefaults(page: string): Map<string, string> {
    const defaults = new Map<string, string>();
    for (const section of read(page).split(/^### /m).slice(1)) {
        const name = /^(\w+)\??/.exec(section)?.[1];
        const value = /#### Default\s+```ts\n([\s\S]*?)\n```/.exec(section)?.[1];
        if (name && value !== undefined) defaults.set(name, value.trim());
    }
    return defaults;
}

describe("the docs", function () {
    this.timeout(180_000);

    describe("links", () => {
        it("every relative link and anchor of the README, the changelog and docs/ (the API pages included) resolves", () => {
            const run = remark(["README.md", "CHANGELOG.md", "docs"]);
            assert.equal(run.status, 0, run.output);
        });

        it("the checker fails on a missing page and on a missing heading", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-docs-"));
            try {
                fs.writeFileSync(
                    path.join(dir, "a.md"),
                    "# A\n\n[gone](gone.md) and [b](b.md#no-such-heading) and [fine](b.md#b)\n",
                );
                fs.writeFileSync(path.join(dir, "b.md"), "# B\n");
                const run = remark(["a.md", "b.md"], dir);
                assert.notEqual(run.status, 0, run.output);
                assert.match(run.output, /gone\.md/);
                assert.match(run.output, /no-such-heading/);
                assert.doesNotMatch(run.output, /`#b`/);
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
        });
    });

    describe("commands", () => {
        it("every `npm run X` shown is a script of package.json, and every `dynamodb-outbox X` a command of the CLI", () => {
            const shown = handWrittenPages().flatMap((page) => shownCommands(page, read(page)));
            assert.ok(
                shown.some((c) => c.kind === "npm-script") && shown.some((c) => c.kind === "cli"),
                "the pages show both kinds",
            );
            const unknown = unknownCommands(shown, pkg.scripts, CLI_COMMANDS);
            assert.deepEqual(
                unknown.map((c) => `${c.page}:${c.line}: ${c.kind} ${c.name}`),
                [],
            );
        });

        it("finds a script and a CLI command that do not exist", () => {
            const shown = shownCommands(
                "x.md",
                "run `npm run nope`, then\n```sh\nnpx dynamodb-outbox frobnicate --table t\ndynamodb-outbox verify\n```\n",
            );
            assert.deepEqual(
                unknownCommands(shown, pkg.scripts, CLI_COMMANDS).map((c) => `${c.line} ${c.name}`),
                ["1 nope", "3 frobnicate"],
            );
        });
    });

    describe("TypeScript blocks", () => {
        it("every `ts` block type-checks against the package, as a strict project importing it by name", () => {
            const blocks = handWrittenPages()
                .flatMap((page) => codeBlocks(page, read(page)))
                .filter((b) => b.lang === "ts");
            assert.ok(blocks.length >= 10, `found ${blocks.length} ts blocks`);
            assert.deepEqual(typeCheckBlocks(blocks, path.join(ROOT, ".docs-blocks")), []);
        });

        it("every `ts` block of the README and docs/ compiles in Pulumi's CommonJS template (module commonjs: no top-level await)", () => {
            const blocks = ["README.md", ...handWrittenPages().filter((p) => p.startsWith("docs"))]
                .flatMap((page) => codeBlocks(page, read(page)))
                .filter((b) => b.lang === "ts");
            assert.ok(blocks.length >= 10, `found ${blocks.length} ts blocks`);
            assert.deepEqual(
                typeCheckBlocks(blocks, path.join(ROOT, ".docs-blocks-cjs"), PULUMI_COMMONJS_OPTIONS, "blocks"),
                [],
            );
        });

        it("reports a top-level await under the CommonJS template, at its page and line (and accepts it as an ES module)", () => {
            const text =
                'intro\n\n```ts\nimport { OutboxError } from "dynamodb-outbox/runtime";\nawait Promise.resolve(new OutboxError("INVALID_CONFIG", "x"));\n```\n';
            const errors = typeCheckBlocks(
                codeBlocks("tla.md", text),
                path.join(ROOT, ".docs-blocks-tla"),
                PULUMI_COMMONJS_OPTIONS,
                "blocks",
            );
            assert.equal(errors.length, 1, errors.join("\n"));
            assert.match(
                errors[0],
                /^tla\.md:5: Top-level 'await' expressions are only allowed when the 'module' option/,
            );
            assert.deepEqual(typeCheckBlocks(codeBlocks("tla.md", text), path.join(ROOT, ".docs-blocks-tla")), []);
        });

        it("reports a block that does not type-check, at its page and line", () => {
            const text =
                'intro\n\n```ts\nimport { Outbox } from "dynamodb-outbox";\nnew Outbox("orders", { batchSize: "many" });\n```\n';
            const errors = typeCheckBlocks(codeBlocks("bad.md", text), path.join(ROOT, ".docs-blocks-bad"));
            assert.equal(errors.length, 1, errors.join("\n"));
            assert.match(errors[0], /^bad\.md:5: .*'string'.*/);
        });
    });

    describe("the API reference (docs/api, npm run docs)", () => {
        it("is what TypeDoc makes of the TSDoc today: run `npm run docs` after changing an exported symbol's TSDoc", () => {
            const out = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-api-"));
            try {
                const typedoc = path.join(ROOT, "node_modules", "typedoc", "bin", "typedoc");
                const run = spawnSync(process.execPath, [typedoc, "--out", out], { cwd: ROOT, encoding: "utf8" });
                assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
                assert.deepEqual(treeDifferences(tree(out), tree(path.join(ROOT, "docs", "api"))), []);
            } finally {
                fs.rmSync(out, { recursive: true, force: true });
            }
        });

        it("the comparison finds a page that changed, went missing or is extra", () => {
            const a = new Map([
                ["x.md", "1"],
                ["y.md", "2"],
            ]);
            assert.deepEqual(
                treeDifferences(
                    a,
                    new Map([
                        ["x.md", "1"],
                        ["y.md", "2"],
                    ]),
                ),
                [],
            );
            assert.deepEqual(
                treeDifferences(
                    a,
                    new Map([
                        ["x.md", "1!"],
                        ["z.md", "3"],
                    ]),
                ),
                ["x.md", "y.md", "z.md"],
            );
        });

        it("the Outbox args page gives every arg the default components/defaults.ts applies", () => {
            const args = generatedDefaults(path.join("docs", "api", "index", "interfaces", "OutboxArgs.md"));
            for (const key of Object.keys(OUTBOX_RANGES) as (keyof typeof OUTBOX_RANGES)[])
                assert.equal(args.get(key), String(OUTBOX_RANGES[key].fallback), key);
            for (const key of LITERAL_DEFAULT_ARGS) {
                assert.equal(args.get(key), JSON.stringify(OUTBOX_DEFAULTS[key]), key);
            }
            assert.equal(args.get("eventSource"), JSON.stringify(DEFAULT_EVENT_SOURCE), "eventSource");
            const thresholds = generatedDefaults(
                path.join("docs", "api", "index", "interfaces", "OutboxAlarmThresholds.md"),
            );
            for (const key of Object.keys(ALARM_THRESHOLD_RANGES) as (keyof typeof ALARM_THRESHOLD_RANGES)[]) {
                assert.equal(
                    thresholds.get(key),
                    String(ALARM_THRESHOLD_RANGES[key].fallback),
                    `alarmThresholds.${key}`,
                );
            }
        });

        it("reads a generated page's defaults as TypeDoc writes them", () => {
            const page = path.join(os.tmpdir(), `outbox-defaults-${process.pid}.md`);
            fs.writeFileSync(
                page,
                "# Interface\n\n### batchSize?\n\ntext\n\n#### Default\n\n```ts\n100\n```\n\n***\n\n### tags?\n\nno default\n",
            );
            try {
                assert.deepEqual([...generatedDefaults(page)], [["batchSize", "100"]]);
            } finally {
                fs.rmSync(page, { force: true });
            }
        });
    });
});
