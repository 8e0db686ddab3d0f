/**
 * The Node the test suite needs: 22.5 or later (fauxqs 2 needs `node:sqlite`, `@pulumi/pulumi` 3.276 declares
 * `>=22`). `npm test`, `npm run` and `npx` run on the toolchain's Node 22 (`node_modules/.bin/node`), whatever the
 * system's Node; only a runner started outside npm (`node_modules/.bin/mocha` with the system's Node 20) lands here.
 *
 * @packageDocumentation
 */

/** The oldest Node the tests run on. */
export const TEST_NODE_FLOOR = { major: 22, minor: 5 } as const;

/**
 * Throws, naming the Node found and how to get the toolchain's, when `version` is older than {@link TEST_NODE_FLOOR}.
 *
 * @param version - a `process.version` (`v22.23.5`).
 * @param execPath - the binary it came from, for the message.
 */
export function assertTestNode(version: string, execPath: string): void {
    const [major, minor] = version.replace(/^v/, "").split(".").map(Number) as [number, number];
    if (major > TEST_NODE_FLOOR.major || (major === TEST_NODE_FLOOR.major && minor >= TEST_NODE_FLOOR.minor)) return;
    throw new Error(
        `the tests need Node.js >=${TEST_NODE_FLOOR.major}.${TEST_NODE_FLOOR.minor}, and run on ${version} (${execPath}). ` +
            "Run them as npm test, npm run test:mocha or npx mocha: npm puts the toolchain's Node 22 (node_modules/.bin/node, installed by npm ci) first on PATH.",
    );
}
