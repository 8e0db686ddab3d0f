/**
 * Grants as resources: an IAM policy document attached to a role the caller owns, as an `aws.iam.RolePolicy` that
 * is a child of the component. `Outbox.grantWrite` and `Outbox.grantReadPayloads` attach the very JSON of the
 * `writerPolicy` and `readerPolicy` outputs, so a grant and its output never disagree.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { OutboxError } from "../runtime/errors";
import { isUnknown, show } from "./arg-checks";
import type { PolicyDocument } from "./iam";

/**
 * The role a grant attaches to: the `aws.iam.Role` resource, or the role's name (a plain string, or an Output such
 * as another stack's through a `StackReference`).
 */
export type GrantRole = aws.iam.Role | pulumi.Input<string>;

/** What {@link grantName} needs: the component, the grant, the role and the caller's name for it. */
export interface GrantNaming {
    /** The component's name. */
    readonly componentName: string;
    /** The grant, as the name spells it, e.g. `write` or `read-payloads`. */
    readonly grant: string;
    /** The method, for messages, e.g. `grantWrite`. */
    readonly method: string;
    /** The role the grant attaches to. */
    readonly role: GrantRole;
    /** The caller's name for the RolePolicy. @default derived from the component's name, the grant and the role's */
    readonly name?: string;
}

/** The Pulumi name a resource was declared with: the engine keeps it on the resource, and no public getter reads it. */
function declaredName(resource: pulumi.Resource): string | undefined {
    const name: unknown = (resource as unknown as { __name?: unknown }).__name;
    return typeof name === "string" && name !== "" ? name : undefined;
}

function invalid(method: string, what: string, value: unknown, allowed: string, fix: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", `${method}: ${what} ${show(value)} is not valid; ${allowed}; ${fix}`, {
        context: { method, value: show(value) },
    });
}

/**
 * The Pulumi name of a grant's RolePolicy: the caller's `name` when given, else
 * `<component>-grant-<grant>-<role>`, where `<role>` is the role resource's Pulumi name or the plain role name.
 *
 * @throws OutboxError `INVALID_CONFIG` when `name` is given but is not a non-empty string; when the role is neither
 *   a role resource nor a non-empty name; and when the role's name is an Output (not known while the program
 *   declares resources) and no `name` is given.
 */
export function grantName(n: GrantNaming): string {
    if (n.name !== undefined) {
        if (typeof n.name !== "string" || n.name.trim() === "")
            throw invalid(
                n.method,
                "name",
                n.name,
                "a grant's name is a non-empty string",
                "give the RolePolicy's Pulumi name, or leave it out to derive one",
            );
        return n.name;
    }
    const { role } = n;
    const roleName = aws.iam.Role.isInstance(role)
        ? declaredName(role)
        : typeof role === "string" && role.trim() !== ""
          ? role
          : undefined;
    if (roleName !== undefined) return `${n.componentName}-grant-${n.grant}-${roleName}`;
    if (isUnknown(role))
        throw invalid(
            n.method,
            "role",
            "<Output>",
            "a role name that is an Output is not known while the program declares resources, so no grant name can be derived from it",
            `give the grant a name: outbox.${n.method}(role, "${n.componentName}-${n.grant}-app")`,
        );
    throw invalid(
        n.method,
        "role",
        role,
        "the role is an aws.iam.Role or a role's name (a non-empty string, or an Output of one)",
        `pass the role resource, or its name: outbox.${n.method}(appRole) or outbox.${n.method}("app-role")`,
    );
}

/**
 * An `aws.iam.RolePolicy` that attaches `document` to `role`, as a child of `parent`.
 *
 * @param parent - The component the RolePolicy is a child of.
 * @param name - Its Pulumi name (see {@link grantName}).
 * @param role - The role: the resource (its name is used), or the name.
 * @param document - The policy: a document, or its JSON.
 */
export function grantRolePolicy(
    parent: pulumi.Resource,
    name: string,
    role: GrantRole,
    document: pulumi.Input<string | PolicyDocument>,
): aws.iam.RolePolicy {
    return new aws.iam.RolePolicy(
        name,
        {
            role: aws.iam.Role.isInstance(role) ? role.name : role,
            policy: pulumi.output(document).apply((d) => (typeof d === "string" ? d : JSON.stringify(d))),
        },
        { parent },
    );
}
