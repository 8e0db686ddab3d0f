/**
 * The check of the optional peer dependencies, run when an entry that needs them loads. `@pulumi/pulumi`,
 * `@pulumi/aws` and `@pulumi/policy` are optional peers (docs/packaging.md): npm does not install them, so that an
 * application importing only `dynamodb-outbox/runtime` installs no Pulumi. An entry that needs one that is missing
 * fails at once, naming the missing packages and the command that installs them, instead of with Node's
 * `Cannot find module` from deep inside the package.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../runtime/errors";

/** The peers the `dynamodb-outbox` entry (the component) loads. */
export const COMPONENT_PEERS = ["@pulumi/pulumi", "@pulumi/aws"] as const;

/** The peers the `dynamodb-outbox/policy` entry (the CrossGuard policies) loads. */
export const POLICY_PEERS = ["@pulumi/policy", "@pulumi/pulumi", "@pulumi/aws"] as const;

/** Node's resolution from this file: the package's place in the consumer's node_modules. */
const resolveFromHere = (request: string): string => require.resolve(request);

/**
 * The packages of `peers` that do not resolve.
 *
 * @param peers - package names.
 * @param resolve - resolves a request the way `require` would. @default require.resolve from this module
 * @throws whatever `resolve` throws other than `MODULE_NOT_FOUND` (a broken install is not a missing one).
 */
export function missingPeers(
    peers: readonly string[],
    resolve: (request: string) => string = resolveFromHere,
): string[] {
    return peers.filter((peer) => {
        try {
            resolve(peer);
            return false;
        } catch (err) {
            if ((err as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND") return true;
            throw err;
        }
    });
}

/**
 * Throw `INVALID_CONFIG` when one of `peers` is not installed, naming the entry, the missing packages, the npm
 * command that installs them and, for the component, the entry that needs none.
 *
 * @param entry - the entry being loaded (`dynamodb-outbox`, `dynamodb-outbox/policy`).
 * @param peers - the peers it loads.
 * @param resolve - as in {@link missingPeers}. @default require.resolve from this module
 */
export function assertPeers(
    entry: string,
    peers: readonly string[],
    resolve: (request: string) => string = resolveFromHere,
): void {
    const missing = missingPeers(peers, resolve);
    if (missing.length === 0) return;
    const one = missing.length === 1;
    const runtimeHint = entry.endsWith("/policy")
        ? ""
        : ` An application that only writes or relays events needs none of them: import "${entry}/runtime" instead.`;
    throw new OutboxError(
        "INVALID_CONFIG",
        `${entry} needs ${missing.join(" and ")}, which ${one ? "is" : "are"} not installed: ` +
            `${one ? "it is an optional peer dependency" : "they are optional peer dependencies"}, which npm does not install by itself. ` +
            `Install ${one ? "it" : "them"} next to it: npm install ${missing.join(" ")}.${runtimeHint}`,
        { context: { entry, missing: missing.join(" ") } },
    );
}
