/**
 * The Pulumi side of the package: the `Outbox` component, its args, defaults and validation, and the IAM policy
 * builders. Importing it declares no resource. The CrossGuard policies are not re-exported here: they are the
 * `dynamodb-outbox/policy` entry (`policy/policies.ts`), so that `@pulumi/policy`'s types stay out of the
 * component's type graph.
 *
 * @packageDocumentation
 */
// First: a missing @pulumi/pulumi or @pulumi/aws (optional peers) is named before anything requires it.
import { COMPONENT_PEERS, assertPeers } from "./peers";
assertPeers("dynamodb-outbox", COMPONENT_PEERS);

export * from "./outbox";
export * from "./consumer";
// The args' own types besides those outbox.ts re-exports, and the typed form of a callback transform.
export type {
    OutboxBucketArgs,
    OutboxBucketPolicyArgs,
    OutboxMetricAlarmArgs,
    OutboxPermissionArgs,
    OutboxRoleArgs,
    OutboxRolePolicyAttachmentArgs,
    OutboxTableIndex,
    OutboxVpc,
    OutboxCloudEvents,
} from "./args";
export { OutboxAttributeType, OutboxProjectionType } from "./args";
export { transformCallback, type OutboxTransformCallback } from "./transform";
export * from "./defaults";
export * from "./arg-problem";
export * from "./validation";
export * from "./iam";
export * from "./consumer-policy";
// The destination kinds the component's args, IAM and outputs speak of (the runtime's own, one binding).
export { DESTINATION_KINDS, type DestinationKind } from "../runtime/destination/kind";
