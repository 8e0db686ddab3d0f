/**
 * The linter's rules, proven on faults: the repository's own eslint.config.mjs, copied as it is into a temporary
 * tree next to the repository's package.json and tsconfig.base.json, lints a few small files that each break one
 * rule (an import cycle, a type-only one among them, Pulumi in runtime/, a layer imported upward, the relay and the
 * writer importing each other, a devDependency in shipped code, an import in runtime/schema.ts, a function over 80
 * lines), and files that break none. ESLint runs in this process, through
 * its Node API, so this is a unit test; `npm run lint` runs the same config on the whole tree.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ESLint } from "eslint";

const ROOT = path.join(__dirname, "..", "..", "..");

/** `n` statements, one a line. */
const statements = (n: number) => Array.from({ length: n }, (_, i) => `    total += ${i};`).join("\n");

/** The fixture tree: path → source. */
const FILES: Record<string, string> = {
    // Clean: the schema imports nothing; the runtime imports the schema and the AWS SDK; the component, Pulumi.
    "runtime/schema.ts": `export const TABLE = "t";\n`,
    "runtime/clean.ts": `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";\nimport { TABLE } from "./schema";\nexport const client = (): [DynamoDBClient, string] => [new DynamoDBClient({}), TABLE];\n`,
    "components/component.ts": `import * as pulumi from "@pulumi/pulumi";\nimport { TABLE } from "../runtime/schema";\nexport const output = pulumi.output(TABLE);\n`,
    // The runtime's rooms, each importing what sits below it.
    "runtime/record/message.ts": `import { TABLE } from "../schema";\nexport const topic = (): string => TABLE;\n`,
    "runtime/writer/writer.ts": `import { topic } from "../record/message";\nexport const write = (): string => topic();\n`,
    "runtime/relay/publisher.ts": `import { topic } from "../record/message";\nexport const publish = (): string => topic();\n`,
    // The faults.
    // A type-only circle: erased from the JavaScript, yet each module needs the other to be understood.
    "runtime/types-a.ts": `import type { B } from "./types-b";\nexport interface A { readonly b?: B }\n`,
    "runtime/types-b.ts": `import type { A } from "./types-a";\nexport interface B { readonly a?: A }\n`,
    // The relay and the writer importing each other's room (types only, so no cycle rule sees them).
    "runtime/relay/rewrite.ts": `import type { write } from "../writer/writer";\nexport type Write = typeof write;\n`,
    "runtime/writer/relayed.ts": `import type { publish } from "../relay/publisher";\nexport type Publish = typeof publish;\n`,
    "runtime/cycle-a.ts": `import { b } from "./cycle-b";\nexport const a = (): number => b() + 1;\n`,
    "runtime/cycle-b.ts": `import { a } from "./cycle-a";\nexport const b = (): number => (a.length > 0 ? 0 : 1);\n`,
    "runtime/pulumi.ts": `import * as pulumi from "@pulumi/pulumi";\nexport const stack = pulumi.getStack;\n`,
    "runtime/upward.ts": `import { output } from "../components/component";\nexport const up = output;\n`,
    "runtime/dev-only.ts": `import { startFauxqs } from "fauxqs";\nexport const start = startFauxqs;\n`,
    "cli/pulumi-side.ts": `import { output } from "../components/component";\nexport const side = output;\n`,
    "runtime/long.ts": [
        "// 80 lines of code pass; blank lines and comments do not count.",
        "export function screen(): number {",
        "    let total = 0;",
        "    // why",
        "",
        statements(76),
        "    return total;",
        "}",
        "export function longer(): number {",
        "    let total = 0;",
        statements(77),
        "    return total;",
        "}",
        "",
    ].join("\n"),
};

interface Finding {
    readonly file: string;
    readonly line: number;
    readonly rule: string | null;
    readonly severity: number;
    readonly message: string;
}

describe("the linter (eslint.config.mjs)", function () {
    this.timeout(60000);
    let tree: string;
    let linted: string[];
    let findings: Finding[];

    before(async () => {
        tree = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-lint-"));
        for (const file of ["eslint.config.mjs", "package.json", "tsconfig.base.json"])
            fs.copyFileSync(path.join(ROOT, file), path.join(tree, file));
        fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(tree, "node_modules"), "dir");
        for (const [file, text] of Object.entries(FILES)) {
            fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
            fs.writeFileSync(path.join(tree, file), text);
        }
        const results = await new ESLint({ cwd: tree }).lintFiles(["."]);
        linted = results.map((r) => path.relative(tree, r.filePath)).sort();
        findings = results
            .flatMap((r) =>
                r.messages.map((m) => ({
                    file: path.relative(tree, r.filePath),
                    line: m.line,
                    rule: m.ruleId,
                    severity: m.severity,
                    message: m.message,
                })),
            )
            .sort((x, y) => x.file.localeCompare(y.file) || x.line - y.line);
    });

    after(() => fs.rmSync(tree, { recursive: true, force: true }));

    const of = (file: string) => findings.filter((f) => f.file === file);

    it("lints every file of the tree, and not node_modules/", () => {
        assert.deepEqual(linted, [...Object.keys(FILES), "eslint.config.mjs"].sort());
    });

    /** The cycle finding on line 1 of `file`, whose import of `via` leads back to it. */
    const cycle = (file: string, via: string): Finding => ({
        file,
        line: 1,
        rule: "outbox/no-cycle",
        severity: 2,
        message: `Dependency cycle detected (type-only imports count): ${via} leads back to this file.`,
    });

    /** The findings of `file` are exactly one error on line 1, from `rule`, saying `message`. */
    const onlyError = (file: string, rule: string, message: string) =>
        assert.deepEqual(of(file), [{ file, line: 1, rule, severity: 2, message }]);

    it("fails an import cycle, on both sides", () => {
        assert.deepEqual(of("runtime/cycle-a.ts"), [cycle("runtime/cycle-a.ts", "./cycle-b")]);
        assert.deepEqual(of("runtime/cycle-b.ts"), [cycle("runtime/cycle-b.ts", "./cycle-a")]);
    });

    it("fails a type-only import cycle, on both sides", () => {
        assert.deepEqual(of("runtime/types-a.ts"), [cycle("runtime/types-a.ts", "./types-b")]);
        assert.deepEqual(of("runtime/types-b.ts"), [cycle("runtime/types-b.ts", "./types-a")]);
    });

    it("fails the relay importing the writer, and the writer importing the relay, types only as well", () => {
        onlyError(
            "runtime/relay/rewrite.ts",
            "import-x/no-restricted-paths",
            'Unexpected path "../writer/writer" imported in restricted zone. runtime/relay/ never imports the writer or the inbox: they share only what sits below them (the runtime\'s root files, record/, store/, destination/, observability/).',
        );
        onlyError(
            "runtime/writer/relayed.ts",
            "import-x/no-restricted-paths",
            'Unexpected path "../relay/publisher" imported in restricted zone. runtime/writer/ never imports the relay or the inbox.',
        );
    });

    it("fails a Pulumi import in runtime/", () => {
        onlyError(
            "runtime/pulumi.ts",
            "no-restricted-imports",
            "'@pulumi/pulumi' import is restricted from being used by a pattern. runtime/ and the CLI never import Pulumi.",
        );
    });

    it("fails an import up the layers, whichever way it is spelled", () => {
        onlyError(
            "runtime/upward.ts",
            "import-x/no-restricted-paths",
            'Unexpected path "../components/component" imported in restricted zone. runtime/ runs in an application or a Lambda: it imports only runtime/ and the AWS SDK.',
        );
        onlyError(
            "cli/pulumi-side.ts",
            "import-x/no-restricted-paths",
            'Unexpected path "../components/component" imported in restricted zone. The CLI imports runtime/ and the AWS SDK, never the Pulumi side.',
        );
    });

    it("fails a devDependency in shipped code", () => {
        onlyError(
            "runtime/dev-only.ts",
            "import-x/no-extraneous-dependencies",
            "'fauxqs' should be listed in the project's dependencies, not devDependencies.",
        );
    });

    it("warns on a function over 80 lines of code, and not on one of 80", () => {
        assert.deepEqual(of("runtime/long.ts"), [
            {
                file: "runtime/long.ts",
                line: 84,
                rule: "max-lines-per-function",
                severity: 1,
                message: "Function 'longer' has too many lines (81). Maximum allowed is 80.",
            },
        ]);
    });

    it("passes the files that keep the rules, and nothing else is reported", () => {
        const faulty = [
            "runtime/cycle-a.ts",
            "runtime/cycle-b.ts",
            "runtime/types-a.ts",
            "runtime/types-b.ts",
            "runtime/relay/rewrite.ts",
            "runtime/writer/relayed.ts",
            "runtime/pulumi.ts",
            "runtime/upward.ts",
            "cli/pulumi-side.ts",
            "runtime/dev-only.ts",
            "runtime/long.ts",
        ];
        assert.deepEqual(
            findings.filter((f) => !faulty.includes(f.file)),
            [],
        );
    });

    it("fails any import in runtime/schema.ts", async () => {
        const schema = path.join(tree, "runtime", "schema.ts");
        const [result] = await new ESLint({ cwd: tree }).lintText(
            `import { randomUUID } from "node:crypto";\nexport const id = randomUUID;\n`,
            { filePath: schema },
        );
        assert.deepEqual(
            result!.messages.map((m) => [m.line, m.ruleId, m.message]),
            [
                [
                    1,
                    "no-restricted-syntax",
                    "runtime/schema.ts imports nothing: Lambda code, Pulumi programs and policy packs all load it.",
                ],
            ],
        );
    });
});
