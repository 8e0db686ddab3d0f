/**
 * What goes into the publisher's and sweeper's Lambda archives besides the serialized handler.
 *
 * `CallbackFunction` zips every package reachable from the program's `package.json` `dependencies` (except
 * `@pulumi/*`), plus `codePathOptions.extraIncludePackages`, minus `extraExcludePackages`. Exclusion matches
 * exact package names (no globs, no scopes) and stops the walk at the excluded package, so its own dependencies
 * are skipped too, unless another non-excluded package reaches them.
 *
 * Two cases, decided the way Pulumi's closure serializer decides (`captureModuleAsync`: a module is captured by
 * value when its path relative to the program's working directory runs through no `node_modules` folder):
 * - **Local runtime** (this repository's own program, or a linked checkout): the runtime modules are captured by
 *   value into `__index.js`, and their only imports are AWS SDK v3 clients (`@aws-sdk/*`, `@smithy/*`), which
 *   the Lambda Node.js runtime ships. The archive needs nothing from `node_modules`: every direct dependency of
 *   the program and every installed `@aws-sdk/*` / `@smithy/*` package is excluded.
 * - **Installed package** (`npm install dynamodb-outbox`): Pulumi emits `require("dynamodb-outbox/dist/runtime/…")`
 *   for the runtime modules instead of their code, so those files must be in the archive. When the package sits
 *   at `node_modules/dynamodb-outbox` under the program (npm's usual layout), the archive holds only what those
 *   requires load: the package's `package.json` (its `exports["./dist/runtime/*"]` is what lets Node resolve
 *   them) and the `.js` files the handlers' module loads, directly or not, listed as `extraIncludePaths`. In a
 *   built package that module, `dist/runtime/relay/lambda.js`, is one esbuild bundle of the relay (dev/build.mjs),
 *   so that list is that one file; in an unbundled build it is the relay's modules (not the writer's, the inbox's
 *   or the test kit's); the package is excluded by name, so the components,
 *   CLI, policy pack, README and declarations stay out. Anywhere else (hoisted above
 *   the program in a workspace, nested under another package) the paths would not be `node_modules/<name>/…`
 *   in the archive, which is where `require` looks from the archive's root: there the package is included by
 *   name, whole, and Pulumi's own walk places it. Its own dependencies (the SDK clients and `@pulumi/*`) stay
 *   out in both forms.
 *
 * The trade-off in both cases: the functions run the SDK version of the Lambda runtime, not the pinned one.
 *
 * Both decisions, Pulumi's and this module's, start from `process.cwd()`: Pulumi names captured modules relative
 * to it, and its code-path walk reads the first `package.json` at or above it (and fails when there is none). In a
 * Pulumi program that is the project. In Pulumi's provider host (`pulumi package add`, then a YAML or Python
 * program using the component) it is not: `pulumi-language-nodejs` starts `@pulumi/pulumi/cmd/run-plugin` with the
 * engine's working directory, the consumer's project, which holds no `package.json` at all for a Python or YAML
 * program. There the component first makes this package's root the working directory ({@link enterSerializationRoot}):
 * the runtime is then local (captured by value) and the walk reads this package's own `package.json`.
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { OutboxError } from "../runtime/errors";

/** Package scopes that the Lambda Node.js runtime provides (AWS SDK for JavaScript v3 and its Smithy core). */
export const RUNTIME_PROVIDED_SCOPES = ["@aws-sdk", "@smithy"] as const;

/** The folder holding the handlers' runtime modules, next to this file's folder both in the sources and in `dist/`. */
const RUNTIME_DIR = path.join(__dirname, "..", "runtime");

/** The directory holding the nearest `package.json` at or above `start`, as Pulumi's code-path walk finds it. */
function nearestPackageDir(start: string): string | undefined {
    let dir = path.resolve(start);
    for (;;) {
        if (fs.existsSync(path.join(dir, "package.json"))) return dir;
        const parent = path.dirname(dir);
        if (parent === dir) return undefined;
        dir = parent;
    }
}

/** This package's root, holding its `package.json`: found above this module, in the sources and in `dist/` alike. */
export const PACKAGE_DIR: string = nearestPackageDir(path.join(__dirname, "..")) ?? path.join(__dirname, "..");

/** The entry module `pulumi-language-nodejs` runs a Node.js provider plugin with. */
const PROVIDER_HOST_ENTRY = /[\\/]@pulumi[\\/]pulumi[\\/]cmd[\\/]run-plugin(?:[\\/]index\.js)?$/;

/**
 * Whether this process is Pulumi's provider host for a component package (`@pulumi/pulumi/cmd/run-plugin`), as
 * opposed to a Pulumi program (`@pulumi/pulumi/cmd/run`), a test runner or a plain script.
 *
 * @param main - the process's entry module. @default require.main?.filename
 */
export function isProviderHost(main: string | undefined = require.main?.filename): boolean {
    return main !== undefined && PROVIDER_HOST_ENTRY.test(main);
}

/**
 * The directory Pulumi's closure serializer and code-path walk must start from for the handlers' archives: the
 * working directory of a Pulumi program (its project), this package's root in the provider host.
 *
 * @param cwd - the process's working directory. @default process.cwd()
 * @param main - the process's entry module. @default require.main?.filename
 */
export function serializationRoot(
    cwd: string = process.cwd(),
    main: string | undefined = require.main?.filename,
): string {
    return isProviderHost(main) ? PACKAGE_DIR : cwd;
}

/**
 * Makes {@link serializationRoot} the working directory, because Pulumi's serializer reads nothing else. Changes
 * it only in the provider host, a process that runs nothing but this package's components; a Pulumi program's
 * working directory is never touched.
 *
 * @returns the working directory the handlers' archives are computed from.
 */
export function enterSerializationRoot(): string {
    const root = serializationRoot();
    if (path.resolve(root) !== process.cwd()) process.chdir(root);
    return process.cwd();
}

interface Manifest {
    name?: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
}

function readManifest(packageDir: string): Manifest {
    return JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as Manifest;
}

/** The names Pulumi's walk starts from: it normalizes the manifest (`normalize-package-data`), which merges `optionalDependencies` into `dependencies`. */
function declaredDependencies(manifest: Manifest): string[] {
    return [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {})];
}

function installedScopePackages(packageDir: string): string[] {
    const names: string[] = [];
    for (const scope of RUNTIME_PROVIDED_SCOPES) {
        const scopeDir = path.join(packageDir, "node_modules", scope);
        if (!fs.existsSync(scopeDir)) continue;
        for (const entry of fs.readdirSync(scopeDir)) names.push(`${scope}/${entry}`);
    }
    return names;
}

/**
 * Whether Pulumi will capture the runtime modules by reference (`require(…)`) rather than by value: true when the
 * runtime folder, seen from the program's working directory, lies under a `node_modules` folder.
 *
 * @param cwd - where the Pulumi program runs. @default process.cwd()
 * @param runtimeDir - the folder of the runtime modules the factories close over. @default this package's runtime folder
 */
export function runtimeCapturedByReference(cwd: string = process.cwd(), runtimeDir: string = RUNTIME_DIR): boolean {
    return path.relative(path.resolve(cwd), path.resolve(runtimeDir)).split(path.sep).includes("node_modules");
}

/** The `codePathOptions` fields the component sets on each function (a fresh object and fresh lists per call). */
export interface HandlerCodePathOptions {
    /** Packages left out of the archive. */
    extraExcludePackages: string[];
    /**
     * Packages put in the archive although the program does not list them: this package, whole, only when it is
     * installed somewhere other than `node_modules/<name>` under the program; otherwise empty.
     */
    extraIncludePackages: string[];
    /**
     * Files put in the archive under the same path, relative to the program's working directory: this package's
     * `package.json` and the relay's `.js` files (one bundle, in a built package) when it is installed at
     * `node_modules/<name>`; otherwise empty.
     */
    extraIncludePaths: string[];
}

/**
 * Where the archive can hold this package file by file: its folder relative to `cwd`, with `/` separators, when
 * that is exactly `node_modules/<name>` (real paths, so a symlinked working directory does not matter). From
 * the archive's root, that is the folder `require("<name>/dist/runtime/…")` searches. Undefined anywhere else.
 *
 * @param cwd - where the Pulumi program runs.
 * @param packageDir - this package's root (holding its `package.json`).
 * @param name - this package's name, as Pulumi writes it in the `require` calls it emits.
 */
export function archivedPackageFolder(cwd: string, packageDir: string, name: string): string | undefined {
    const relative = path.relative(fs.realpathSync(cwd), fs.realpathSync(packageDir)).split(path.sep).join("/");
    return relative === `node_modules/${name}` ? relative : undefined;
}

/**
 * The module the handlers' factories come from (`runtime/relay/lambda.ts`), relative to the runtime folder. Pulumi
 * serializes a factory by value and emits a `require` of each runtime module it references, all of which this
 * module imports, so the modules it loads, directly or not, are all an archive needs.
 */
export const RELAY_ENTRY = "relay/lambda.js";

/** A compiled module's `require("./…")` and `require("../…")` specifiers (tsc's CommonJS output). */
const RELATIVE_REQUIRE = /\brequire\("(\.{1,2}\/[^"]*)"\)/g;

/** The file Node loads for `specifier` required from `from`: the path, `.js` added, or the folder's `index.js`. */
function resolveRelative(from: string, specifier: string): string | undefined {
    const base = path.resolve(path.dirname(from), specifier);
    return [base, `${base}.js`, path.join(base, "index.js")].find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
}

/**
 * Every module `entry` loads through relative requires, itself included: the closure of what the handler runs.
 *
 * @throws OutboxError INVALID_CONFIG when a relative require resolves to no file: the archive would fail its cold
 *   start with `Cannot find module`.
 */
function requireClosure(entry: string): string[] {
    const seen = new Set<string>();
    const pending = [entry];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
        if (seen.has(file)) continue;
        seen.add(file);
        for (const [, specifier] of fs.readFileSync(file, "utf8").matchAll(RELATIVE_REQUIRE)) {
            const resolved = resolveRelative(file, specifier!);
            if (resolved === undefined) {
                throw new OutboxError(
                    "INVALID_CONFIG",
                    `${file} requires ${JSON.stringify(specifier)}, which is no file: the Lambda archive would fail its cold start; reinstall the package (npm ci), or rebuild it (npm run build)`,
                    { context: { file, specifier } },
                );
            }
            pending.push(resolved);
        }
    }
    return [...seen];
}

/**
 * The archive paths of an installed package's relay, for `extraIncludePaths`: `<folder>/package.json` and the `.js`
 * files the handlers' module ({@link RELAY_ENTRY}) loads, directly or not, sorted. Those modules require only each
 * other, `node:*` built-ins and `@aws-sdk/*` clients (which the Lambda runtime provides); the writer, the inbox, the
 * claim-check resolver, the runtime's index and the test kit are none of them, and the declarations (`.d.ts`) are
 * left out.
 *
 * @param folder - the package's folder relative to the program, from {@link archivedPackageFolder}.
 * @param packageDir - this package's root.
 * @param runtimeDir - the folder of the runtime modules, inside `packageDir`.
 * @throws OutboxError INVALID_CONFIG when `runtimeDir` is not inside `packageDir`, holds no {@link RELAY_ENTRY}
 *   (an unbuilt package), or a module requires a file that is not there.
 */
export function runtimeArchivePaths(folder: string, packageDir: string, runtimeDir: string): string[] {
    const root = fs.realpathSync(packageDir);
    const runtime = fs.realpathSync(runtimeDir);
    const inside = path.relative(root, runtime);
    if (inside === "" || inside.startsWith("..") || path.isAbsolute(inside)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `the runtime folder ${runtime} is not inside the package folder ${root}, so the Lambda archive cannot name it under ${folder}`,
            {
                context: { runtimeDir: runtime, packageDir: root },
            },
        );
    }
    const entry = path.join(runtime, RELAY_ENTRY);
    if (!fs.existsSync(entry)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `the runtime folder ${runtime} holds no ${RELAY_ENTRY}: build the package (npm run build) before deploying from it`,
            {
                context: { runtimeDir: runtime },
            },
        );
    }
    const files = requireClosure(entry).map(
        (file) => `${folder}/${path.relative(root, file).split(path.sep).join("/")}`,
    );
    return [`${folder}/package.json`, ...files.sort()];
}

/**
 * The `codePathOptions` that keep each function's archive to what its handler needs (see the module notes):
 * nothing but `__index.js` when the runtime is local; `__index.js`, this package's `package.json` and the
 * relay's `.js` files when it is installed at `node_modules/<name>` under `cwd`; `__index.js` plus this whole
 * package (without its dependencies) when it is installed anywhere else. Reads the nearest `package.json` from
 * `cwd` (Pulumi's own starting point).
 *
 * @param cwd - where the Pulumi program runs. @default process.cwd()
 * @param packageDir - this package's root (holding its `package.json`). @default found above this file
 * @param runtimeDir - the folder of the runtime modules the factories close over. @default this package's runtime folder
 */
export function handlerCodePathOptions(
    cwd: string = process.cwd(),
    packageDir?: string,
    runtimeDir: string = RUNTIME_DIR,
): HandlerCodePathOptions {
    const programDir = nearestPackageDir(cwd);
    const programDependencies = programDir === undefined ? [] : declaredDependencies(readManifest(programDir));
    const installed = programDir === undefined ? [] : installedScopePackages(programDir);
    if (!runtimeCapturedByReference(cwd, runtimeDir)) {
        return {
            extraExcludePackages: [...new Set([...programDependencies, ...installed])].sort(),
            extraIncludePackages: [],
            extraIncludePaths: [],
        };
    }
    const selfDir = packageDir ?? PACKAGE_DIR;
    const self = readManifest(selfDir);
    const selfName = self.name ?? "dynamodb-outbox";
    const excluded = new Set([...programDependencies, ...installed, ...declaredDependencies(self)]);
    const folder = archivedPackageFolder(cwd, selfDir, selfName);
    if (folder !== undefined) {
        excluded.add(selfName);
        return {
            extraExcludePackages: [...excluded].sort(),
            extraIncludePackages: [],
            extraIncludePaths: runtimeArchivePaths(folder, selfDir, runtimeDir),
        };
    }
    // Not at node_modules/<name> under the program: listed paths would land elsewhere in the archive than where
    // require() looks, so leave the placing to Pulumi's walk (it resolves the package as Node would, workspaces
    // included) at the cost of the whole package.
    excluded.delete(selfName);
    return { extraExcludePackages: [...excluded].sort(), extraIncludePackages: [selfName], extraIncludePaths: [] };
}

/**
 * The package names to pass as `codePathOptions.extraExcludePackages` (see {@link handlerCodePathOptions}, which
 * the component uses and which also says what to include).
 *
 * @param cwd - where the Pulumi program runs. @default process.cwd()
 */
export function handlerExcludePackages(cwd: string = process.cwd()): string[] {
    return handlerCodePathOptions(cwd).extraExcludePackages;
}
