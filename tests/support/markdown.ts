/**
 * What the docs test reads out of the Markdown pages: the hand-written pages, their fenced code blocks, the
 * commands they show, and a type-check of their `ts` blocks against this package's sources. Links are not
 * checked here: `remark-validate-links` does that (see docs.test.ts).
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

/** The repository root. */
export const ROOT = path.join(__dirname, "..", "..");

/** The hand-written pages: the README, the changelog and every page of `docs/` (the generated `docs/api/` aside). */
export function handWrittenPages(): string[] {
    const docs = fs
        .readdirSync(path.join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => path.join("docs", f));
    return ["README.md", "CHANGELOG.md", ...docs.sort()];
}

/** A fenced code block: its info string's language, its text and the page line its first text line is on. */
export interface CodeBlock {
    readonly page: string;
    readonly lang: string;
    readonly line: number;
    readonly text: string;
}

/** Every fenced (```) code block of a page's text. */
export function codeBlocks(page: string, text: string): CodeBlock[] {
    const blocks: CodeBlock[] = [];
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i += 1) {
        const open = /^(\s*)```(\S*)/.exec(lines[i]);
        if (!open) continue;
        const body: string[] = [];
        let j = i + 1;
        while (j < lines.length && !/^\s*```\s*$/.test(lines[j])) body.push(lines[j++]);
        if (j === lines.length) throw new Error(`${page}:${i + 1}: a code block is opened and never closed`);
        blocks.push({ page, lang: open[2], line: i + 2, text: body.join("\n") });
        i = j;
    }
    return blocks;
}

/**
 * The one `ts` block of a page's section under `heading` (a whole heading line, e.g. `## A stack`), up to the next
 * heading of level 2 or 3. Fails when the section is missing or holds other than one `ts` block.
 */
export function tsBlockUnder(page: string, heading: string): string {
    const blocks = tsBlocksUnder(page, heading);
    if (blocks.length !== 1) throw new Error(`${page} "${heading}" holds ${blocks.length} ts blocks, not one`);
    return blocks[0];
}

/**
 * The `ts` blocks of a page's section under `heading` (a whole heading line), up to the next heading of level 2 or
 * 3, in page order. Fails when the section is missing.
 */
export function tsBlocksUnder(page: string, heading: string): string[] {
    const text = fs.readFileSync(path.join(ROOT, page), "utf8");
    const start = text.indexOf(`\n${heading}\n`);
    if (start < 0) throw new Error(`${page} has no section "${heading}"`);
    const next = text.slice(start + 1).search(/\n#{2,3} /);
    const section = next < 0 ? text.slice(start) : text.slice(start, start + 1 + next);
    return codeBlocks(page, section)
        .filter((b) => b.lang === "ts")
        .map((b) => b.text);
}

/** A command a page shows, where it shows it. */
export interface ShownCommand {
    readonly page: string;
    readonly line: number;
    readonly kind: "npm-script" | "cli";
    readonly name: string;
}

/**
 * The `npm run <script>` and `dynamodb-outbox <command>` commands a page shows, in code blocks and inline code
 * alike. Prose that names the tool (`dynamodb-outbox`'s table, "the dynamodb-outbox package") is not a command:
 * only the tool name followed by a lower-case word is.
 */
export function shownCommands(page: string, text: string): ShownCommand[] {
    const found: ShownCommand[] = [];
    text.split("\n").forEach((lineText, i) => {
        for (const m of lineText.matchAll(/\bnpm run ([a-z][\w:-]*)/g))
            found.push({ page, line: i + 1, kind: "npm-script", name: m[1] });
        for (const m of lineText.matchAll(/(?:^|[\s`(])(?:npx )?dynamodb-outbox ([a-z][\w-]*)/g))
            found.push({ page, line: i + 1, kind: "cli", name: m[1] });
    });
    return found;
}

/** Words that follow `dynamodb-outbox` in prose without being a command of the tool. */
const PROSE_AFTER_TOOL_NAME = new Set([
    "is",
    "and",
    "or",
    "package",
    "component",
    "table",
    "tool",
    "bin",
    "runtime",
    "policy",
    "to",
    "itself",
]);

/**
 * The shown commands that do not exist: an `npm run` script not in `package.json`, or a `dynamodb-outbox`
 * command the CLI does not know.
 *
 * @param scripts - the `scripts` of `package.json`.
 * @param cliCommands - the CLI's commands.
 */
export function unknownCommands(
    shown: readonly ShownCommand[],
    scripts: Readonly<Record<string, string>>,
    cliCommands: readonly string[],
): ShownCommand[] {
    return shown.filter((c) =>
        c.kind === "npm-script"
            ? !(c.name in scripts)
            : !cliCommands.includes(c.name) && !PROSE_AFTER_TOOL_NAME.has(c.name),
    );
}

/** How the docs' TypeScript resolves this package: the entries of `package.json`'s `exports`, from the sources. */
const PACKAGE_PATHS: Record<string, string[]> = {
    "dynamodb-outbox": ["index.ts"],
    "dynamodb-outbox/runtime": ["runtime/index.ts"],
    "dynamodb-outbox/testing": ["runtime/testing/index.ts"],
    "dynamodb-outbox/policy": ["policy/policies.ts"],
};

/**
 * The compiler options of `pulumi new typescript`'s `tsconfig.json` (CommonJS, classic `node` resolution, ES2020),
 * under which a top-level `await` does not compile (TS1378). `skipLibCheck` is added: `@pulumi/policy` 1.21.0's
 * own declarations do not type-check (docs/packaging.md).
 */
export const PULUMI_COMMONJS_OPTIONS: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    experimentalDecorators: true,
    noFallthroughCasesInSwitch: true,
    noImplicitReturns: true,
    forceConsistentCasingInFileNames: true,
    skipLibCheck: true,
};

/** The options {@link typeCheckBlocks} uses by default: a strict ES module project (top-level `await` allowed). */
export const ES_MODULE_OPTIONS: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    esModuleInterop: true,
    skipLibCheck: true,
    resolveJsonModule: true,
};

/**
 * Type-check code blocks as a user's strict TypeScript project would, each block its own module (so same-named
 * constants in different blocks are fine), importing this package by its published names. Blocks are written
 * under `scratchDir`, which must be inside the repository so that `node_modules` resolves, and removed afterwards.
 *
 * @param options - the project's compiler options. @default {@link ES_MODULE_OPTIONS}
 * @param scope - `blocks` reports the blocks' diagnostics only: under options other than the repository's, the
 * package's sources (which the blocks resolve to, in place of the `.d.ts` a consumer compiles against) are not
 * what is being checked; `npm run typecheck` checks them. @default "all"
 * @returns one line per diagnostic, as `page:line: message`, with the block's line mapped back to the page.
 */
export function typeCheckBlocks(
    blocks: readonly CodeBlock[],
    scratchDir: string,
    options: ts.CompilerOptions = ES_MODULE_OPTIONS,
    scope: "all" | "blocks" = "all",
): string[] {
    fs.rmSync(scratchDir, { recursive: true, force: true });
    fs.mkdirSync(scratchDir, { recursive: true });
    try {
        const files = new Map<string, CodeBlock>();
        blocks.forEach((block, i) => {
            const file = path.join(scratchDir, `${path.basename(block.page, ".md")}-${i}.ts`);
            fs.writeFileSync(file, `${block.text}\nexport {};\n`);
            files.set(path.resolve(file), block);
        });
        const program = ts.createProgram([...files.keys()], {
            ...options,
            noEmit: true,
            types: ["node"],
            baseUrl: ROOT,
            paths: PACKAGE_PATHS,
        });
        const diagnostics = ts
            .getPreEmitDiagnostics(program)
            .filter((d) => scope === "all" || (d.file !== undefined && files.has(path.resolve(d.file.fileName))));
        return diagnostics.map((d) => {
            const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
            const block = d.file ? files.get(path.resolve(d.file.fileName)) : undefined;
            if (!d.file || d.start === undefined) return `(no file): ${message}`;
            const { line } = d.file.getLineAndCharacterOfPosition(d.start);
            return block
                ? `${block.page}:${block.line + line}: ${message}`
                : `${path.relative(ROOT, d.file.fileName)}:${line + 1}: ${message}`;
        });
    } finally {
        fs.rmSync(scratchDir, { recursive: true, force: true });
    }
}
