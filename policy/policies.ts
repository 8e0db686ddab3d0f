/**
 * The `dynamodb-outbox/policy` entry: the outbox's CrossGuard policies (`outboxPolicies`, `outboxPolicyPackArgs`
 * and the checks they are built from), for a policy pack of your own. Importing it starts no analyzer server;
 * only the pack's entry file (`policy/index.ts`) constructs a `PolicyPack`.
 *
 * A separate entry because its type graph holds `@pulumi/policy`, whose 1.21.0 `index.d.ts` re-exports names
 * its `proxy.d.ts` does not declare (TS2305 under a strict `tsc` without `skipLibCheck`). Pulumi runs a policy
 * pack through its own ts-node, which checks only the pack's files, so the pack is unaffected; the `dynamodb-outbox`
 * and `dynamodb-outbox/runtime` entries stay free of it.
 *
 * @packageDocumentation
 */
// First: a missing @pulumi/policy, @pulumi/pulumi or @pulumi/aws (optional peers) is named before anything requires it.
import { POLICY_PEERS, assertPeers } from "../components/peers";
assertPeers("dynamodb-outbox/policy", POLICY_PEERS);

export * from "./outbox-policies";
