/**
 * Issue 36's move of the runtime into rooms (`writer/`, `relay/`, `observability/`, `record/`, `destination/`) and
 * of the fault server to `dev/emulators/aws-fault-server/`, as a codemod that can be run again:
 *
 *     npx ts-node -T dev/codemods/rooms.ts
 *
 * 1. Every file still at an old path of {@link MOVES} is moved with `git mv` (a folder entry moves each file under
 *    it, so a file a merge adds to the old folder follows the others).
 * 2. Every relative string in the code (`import … from`, `export … from`, `require`, `import()`, `require.resolve`,
 *    a mock's path: any string literal that starts with `./` or `../`) that no longer names a file, but named one
 *    of the moved files from where its file was, is rewritten to the file's new place, in its own spelling (with
 *    or without the extension, a folder or its `index`).
 * 3. Every path of a moved runtime file written out in text (docs, README, CHANGELOG, comments, paths that tests
 *    build: `runtime/publisher.ts`, `../runtime/lambda`, `dist/runtime/lambda.js`) and the fault server's old
 *    names ({@link WORDS}) are rewritten.
 *
 * A second run changes nothing; a run after a merge fixes only what the merge brought in with the old paths.
 * docs/api is generated (`npm run docs`) and is left alone, as are node_modules/ and dist/.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..");

/** The runtime's files that move into a folder of their role: old path → new path, from the repository root. */
const RUNTIME_MOVES: Readonly<Record<string, string>> = {
    // The write path and its checks; the redrive writes dead letters back through the writer.
    "runtime/writer.ts": "runtime/writer/writer.ts",
    "runtime/outbox-message.ts": "runtime/writer/outbox-message.ts",
    "runtime/payload-json.ts": "runtime/writer/payload-json.ts",
    "runtime/sendable-text.ts": "runtime/writer/sendable-text.ts",
    "runtime/transaction-failure.ts": "runtime/writer/transaction-failure.ts",
    "runtime/transaction-size.ts": "runtime/writer/transaction-size.ts",
    "runtime/message-trace.ts": "runtime/writer/message-trace.ts",
    "runtime/redrive.ts": "runtime/writer/redrive.ts",
    // What the writer, the relay and the inbox all read: the message built from a record, sizes, the caller's actions.
    "runtime/message.ts": "runtime/record/message.ts",
    "runtime/item-size.ts": "runtime/record/item-size.ts",
    "runtime/transact-items.ts": "runtime/record/transact-items.ts",
    "runtime/typed-events.ts": "runtime/record/typed-events.ts",
    // The relay: the stream publisher, the claim path, lanes, the sweeper and its cursor, expiry, its Lambda entries.
    "runtime/publisher.ts": "runtime/relay/publisher.ts",
    "runtime/stream-batch.ts": "runtime/relay/stream-batch.ts",
    "runtime/stream-candidates.ts": "runtime/relay/stream-candidates.ts",
    "runtime/stream-source.ts": "runtime/relay/stream-source.ts",
    "runtime/keyed-doorbell.ts": "runtime/relay/keyed-doorbell.ts",
    "runtime/keyless-outcomes.ts": "runtime/relay/keyless-outcomes.ts",
    "runtime/keyless-publish.ts": "runtime/relay/keyless-publish.ts",
    "runtime/lane-delivery.ts": "runtime/relay/lane-delivery.ts",
    "runtime/claimed-delivery.ts": "runtime/relay/claimed-delivery.ts",
    "runtime/delivery.ts": "runtime/relay/delivery.ts",
    "runtime/sweeper.ts": "runtime/relay/sweeper.ts",
    "runtime/sweep-scan.ts": "runtime/relay/sweep-scan.ts",
    "runtime/sweep-cursor.ts": "runtime/relay/sweep-cursor.ts",
    "runtime/expiry-sweep.ts": "runtime/relay/expiry-sweep.ts",
    "runtime/unclaimable.ts": "runtime/relay/unclaimable.ts",
    "runtime/fenced-partition.ts": "runtime/relay/fenced-partition.ts",
    "runtime/server-clock.ts": "runtime/relay/server-clock.ts",
    "runtime/lambda.ts": "runtime/relay/lambda.ts",
    // Metrics, logs and traces.
    "runtime/emf.ts": "runtime/observability/emf.ts",
    "runtime/json-logger.ts": "runtime/observability/json-logger.ts",
    "runtime/metric-catalog.ts": "runtime/observability/metric-catalog.ts",
    "runtime/open-telemetry.ts": "runtime/observability/open-telemetry.ts",
    "runtime/trace-context.ts": "runtime/observability/trace-context.ts",
    // The destinations' ARNs and the DLQ's URL, beside the destinations.
    "runtime/aws-resource-names.ts": "runtime/destination/aws-resource-names.ts",
};

/** Everything that moves: the runtime's files, and the fault server (a folder: every file under it) and its tests. */
export const MOVES: Readonly<Record<string, string>> = {
    ...RUNTIME_MOVES,
    "dev/emulators/sns-test-server/": "dev/emulators/aws-fault-server/",
    "tests/integration/emulators/sns-test-server.test.ts": "tests/integration/emulators/aws-fault-server.test.ts",
    "tests/integration/emulators/sns-test-server-sqs.test.ts":
        "tests/integration/emulators/aws-fault-server-sqs.test.ts",
    "tests/integration/emulators/sns-test-server-eventbridge.test.ts":
        "tests/integration/emulators/aws-fault-server-eventbridge.test.ts",
};

/** The fault server's old names, in code and prose: old → new, whole words only, longest first. */
const WORDS: readonly (readonly [string, string])[] = [
    ["fault-injecting SNS test server", "AWS fault server"],
    ["fault-injecting SNS server", "AWS fault server"],
    ["SNS fault server", "AWS fault server"],
    ["fault-injecting test server", "AWS fault server"],
    ["startSnsTestServer", "startAwsFaultServer"],
    ["SnsTestServerOptions", "AwsFaultServerOptions"],
    ["SnsTestServer", "AwsFaultServer"],
    ["SNS test server", "AWS fault server"],
];

/** What the text rewrite skips: generated, installed or built, and this file (its tables name the old paths). */
const SKIPPED = [/^docs\/api\//, /(^|\/)node_modules\//, /^dist\//, /^dev\/codemods\//, /package-lock\.json$/];
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|json|ya?ml)$/;

const posix = path.posix;

function git(...args: string[]): string {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8" });
}

/** Every file of the worktree, tracked or not (but not ignored), from the root, with `/`. */
function worktreeFiles(): string[] {
    return git("ls-files", "--cached", "--others", "--exclude-standard", "-z")
        .split("\0")
        .filter((f) => f !== "" && fs.existsSync(path.join(ROOT, f)));
}

/** Where `file` goes, or undefined when it does not move. */
function movedTo(file: string): string | undefined {
    if (MOVES[file] !== undefined) return MOVES[file];
    for (const [from, to] of Object.entries(MOVES))
        if (from.endsWith("/") && file.startsWith(from)) return to + file.slice(from.length);
    return undefined;
}

/** Where `file` came from, or itself. */
function cameFrom(file: string): string {
    for (const [from, to] of Object.entries(MOVES)) {
        if (to === file) return from;
        if (to.endsWith("/") && file.startsWith(to)) return from + file.slice(to.length);
    }
    return file;
}

/** Step 1: `git mv` what is still at an old path. Returns how many files moved. */
function moveFiles(files: readonly string[]): number {
    let moved = 0;
    for (const file of files) {
        const to = movedTo(file);
        if (to === undefined) continue;
        if (fs.existsSync(path.join(ROOT, to))) throw new Error(`${file} and ${to} both exist: merge them by hand`);
        fs.mkdirSync(path.dirname(path.join(ROOT, to)), { recursive: true });
        if (git("ls-files", file).trim() === file) git("mv", file, to);
        else fs.renameSync(path.join(ROOT, file), path.join(ROOT, to));
        moved += 1;
    }
    return moved;
}

/** The file a relative specifier names from `dir` among `exists`, with how it was spelled. */
function resolveIn(
    spec: string,
    dir: string,
    exists: (file: string) => boolean,
): { file: string; spelling: "exact" | "bare" | "folder" } | undefined {
    const base = posix.normalize(posix.join(dir, spec)).replace(/\/$/, "");
    if (exists(base)) return { file: base, spelling: "exact" };
    for (const ext of [".ts", ".d.ts", ".js", ".mjs", ".json"])
        if (exists(base + ext)) return { file: base + ext, spelling: "bare" };
    for (const index of ["/index.ts", "/index.js"])
        if (exists(base + index)) return { file: base + index, spelling: "folder" };
    return undefined;
}

/** `target`, spelled from `dir` the way `spelling` says. */
function respell(target: string, dir: string, spelling: "exact" | "bare" | "folder", spec: string): string {
    let file = target;
    if (spelling === "folder") file = posix.dirname(target);
    else if (spelling === "bare") file = target.replace(/(\.d)?\.(ts|js|mjs|json)$/, "");
    let rel = posix.relative(dir, file);
    if (!rel.startsWith(".")) rel = `./${rel}`;
    if (spelling === "folder" && spec.endsWith("/")) rel += "/";
    return rel;
}

/** Step 2: the relative strings of one code file that named a moved file. */
function rewriteSpecifiers(file: string, text: string, now: ReadonlySet<string>): string {
    const isNow = (f: string) => now.has(f);
    // What existed before the moves: a file now at a new path was at its old one.
    const wasThen = (f: string) => (now.has(f) && movedTo(f) === undefined) || movedTo(f) !== undefined;
    const dir = posix.dirname(file);
    const dirThen = posix.dirname(cameFrom(file));
    return text.replace(/(["'`])(\.\.?\/[^"'`\n$]*)\1/g, (whole, quote: string, spec: string) => {
        const current = resolveIn(spec, dir, isNow)?.file;
        for (const from of new Set([dirThen, dir])) {
            const then = resolveIn(spec, from, wasThen);
            if (then === undefined) continue;
            const target = movedTo(then.file) ?? then.file;
            // What the string names today stands, unless it named a moved file: `../runtime/writer` was writer.ts
            // and would now find the folder writer/ instead.
            if (current !== undefined && (movedTo(then.file) === undefined || target === current)) return whole;
            if (!now.has(target)) continue;
            return `${quote}${respell(target, dir, then.spelling, spec)}${quote}`;
        }
        return whole;
    });
}

/** The names of the moved runtime files, for the text rewrite: `publisher` → `relay/publisher`. */
const RUNTIME_NAMES = Object.entries(RUNTIME_MOVES).map(([from, to]) => ({
    name: posix.basename(from, ".ts"),
    to: to.slice("runtime/".length, -".ts".length),
}));
const NEW_FOLDERS = new Set(Object.values(RUNTIME_MOVES).map((to) => posix.dirname(to).slice("runtime/".length)));

/** A path's prefix before `runtime/` that still means the repository's (or the package's) runtime folder. */
const RUNTIME_PREFIX = /^(|\.\/|(\.\.\/)+|.*\bdist\/|.*\/blob\/[^/]+\/)$/;

/** Step 3: the moved runtime files' paths written out, and the fault server's old names. */
function rewriteText(text: string): string {
    let out = text.replace(
        /([\w./@${}-]*?)runtime\/([a-z-]+)((?:\.d)?\.(?:ts|js))?(?![\w/-]|\.(?!d\.ts|ts|js)\w)/g,
        (whole, prefix: string, name: string, ext: string | undefined, offset: number, all: string) => {
            if (!RUNTIME_PREFIX.test(prefix)) return whole;
            const move = RUNTIME_NAMES.find((m) => m.name === name);
            if (move === undefined) return whole;
            // Without an extension, only a name in backticks, and never a name that is now a folder's.
            if (ext === undefined && (all[offset + whole.length] !== "`" || NEW_FOLDERS.has(name))) return whole;
            return `${prefix}runtime/${move.to}${ext ?? ""}`;
        },
    );
    for (const [from, to] of WORDS) out = out.replace(new RegExp(`(?<![\\w-])${from}(?![\\w-])`, "g"), to);
    // The folder, and the files named for it (`sns-test-server-sqs.test.ts`).
    return out.replace(/(?<![\w-])sns-test-server/g, "aws-fault-server");
}

function main(): void {
    const moved = moveFiles(worktreeFiles());
    const files = worktreeFiles();
    const now = new Set(files);
    let changed = 0;
    for (const file of files) {
        if (!TEXT.test(file) || SKIPPED.some((p) => p.test(file))) continue;
        const before = fs.readFileSync(path.join(ROOT, file), "utf8");
        let after = CODE.test(file) ? rewriteSpecifiers(file, before, now) : before;
        after = rewriteText(after);
        if (after !== before) {
            fs.writeFileSync(path.join(ROOT, file), after);
            changed += 1;
        }
    }
    process.stdout.write(`rooms: moved ${moved} file(s), rewrote ${changed} file(s)\n`);
}

if (require.main === module) main();
