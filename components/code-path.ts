/**
 * What goes into the publisher's and sweeper's Lambda archives besides the serialized handler.
 *
 * `CallbackFunction` zips every package reachable from the program's `package.json` `dependencies` (except
 * `@pulumi/*`), unless excluded. `codePathOptions.extraExcludePackages` matches exact package names (no globs,
 * no scopes) and stops the walk at the excluded package, so its own dependencies are skipped too, unless
 * another non-excluded package reaches them.
 *
 * The handlers need nothing from `node_modules`: the runtime code is captured by value, and its only imports
 * are AWS SDK v3 clients (`@aws-sdk/*`, `@smithy/*`), which the Lambda Node.js runtime ships. So the component
 * excludes every direct dependency of the program (the walk's roots, this package included when a consumer
 * installs it) and every installed `@aws-sdk/*` and `@smithy/*` package (in case something else reaches them).
 * The trade-off: the functions run the SDK version of the Lambda runtime, not the pinned one.
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** Package scopes that the Lambda Node.js runtime provides (AWS SDK for JavaScript v3 and its Smithy core). */
export const RUNTIME_PROVIDED_SCOPES = ["@aws-sdk", "@smithy"] as const;

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

function readDependencyNames(packageDir: string): string[] {
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    return Object.keys(manifest.dependencies ?? {});
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
 * The package names to pass as `codePathOptions.extraExcludePackages` so that the archive holds only the
 * serialized handler. Reads the nearest `package.json` from `cwd` (Pulumi's own starting point).
 *
 * @param cwd - where the Pulumi program runs. @default process.cwd()
 */
export function handlerExcludePackages(cwd: string = process.cwd()): string[] {
    const packageDir = nearestPackageDir(cwd);
    if (packageDir === undefined) return [];
    return [...new Set([...readDependencyNames(packageDir), ...installedScopePackages(packageDir)])].sort();
}
