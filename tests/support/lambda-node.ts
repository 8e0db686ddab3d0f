/**
 * The Node.js that runs the Lambda archives in the tests and the bench: this process's own. Lambda runs the
 * functions on `nodejs22.x`, and the repository's toolchain runs every npm script on Node 22: the private workspace
 * `dev/toolchain` installs the Node 22 binary package of the machine's platform, whose bin npm links as
 * `node_modules/.bin/node`, first on the PATH of `npm run` and `npx` (docs/packaging.md). So the archives run on
 * Lambda's major without a second Node; the root hook (`hooks.ts`) prints which Node runs the tests.
 *
 * @packageDocumentation
 */

/** The major of Lambda's `nodejs22.x`, on which the component runs its functions. */
export const LAMBDA_NODE_MAJOR = 22;

/** A Node.js binary to run an archive with. */
export interface LambdaNode {
    /** The executable's path. */
    readonly path: string;
    /** Its version, as `process.version` reports it inside it (`v22.23.5`). */
    readonly version: string;
}

/** This process's Node: the toolchain's Node 22 under `npm test`, `npm run` and `npx`. */
export function lambdaNode(): LambdaNode {
    return { path: process.execPath, version: process.version };
}

/** The major of a `process.version` string (`v22.23.5` → 22). */
export function majorOf(version: string): number {
    return Number(/^v(\d+)\./.exec(version)?.[1] ?? NaN);
}
