/**
 * An `aws.iam.RolePolicy` from a policy document: the one way the consumer's grants reach a role. Its own file,
 * as other grants (the outbox's) may use the same shape.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import type { PolicyDocument } from "./iam";

/** A role, or its name. */
export type RoleOrName = aws.iam.Role | pulumi.Input<string>;

/**
 * The name `aws.iam.RolePolicy` takes for `role`: its `name` output, or the name given.
 *
 * @param role - The role, or its name.
 */
export function roleName(role: RoleOrName): pulumi.Input<string> {
    return role instanceof aws.iam.Role ? role.name : role;
}

/**
 * Declares an inline policy on `role` whose document `document` builds from the resolved `targets`.
 *
 * @param name - The policy's Pulumi name.
 * @param role - The role, or its name.
 * @param targets - The ARNs (Inputs) the document is built from.
 * @param document - Builds the document from the resolved targets; it may throw `INVALID_CONFIG`.
 * @param opts - Resource options (`{ parent }`).
 */
export function declareRolePolicy<T extends object>(
    name: string,
    role: RoleOrName,
    targets: { [K in keyof T]: pulumi.Input<T[K]> },
    document: (resolved: T) => PolicyDocument,
    opts: pulumi.CustomResourceOptions,
): aws.iam.RolePolicy {
    const policy = pulumi.output(targets).apply((resolved) => JSON.stringify(document(resolved as T)));
    return new aws.iam.RolePolicy(name, { role: roleName(role), policy }, opts);
}
