/**
 * Runs CrossGuard resource policies in-process on resources recorded under the Pulumi mocks, the way the
 * policy analyzer would call them (`pulumi preview --policy-pack` needs the CLI and its plugins).
 */
import type { PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import type { RecordedResource } from "../support/pulumi-mocks";

/** The analyzer's arguments for one recorded resource. `isType` mimics the engine's `__pulumiType` check. */
export function validationArgs(r: RecordedResource): ResourceValidationArgs {
    const isType = (cls: any): boolean => typeof cls?.isInstance === "function" && cls.isInstance({ __pulumiType: r.type });
    return {
        type: r.type,
        props: r.inputs,
        name: r.name,
        urn: `urn:pulumi:test::dynamodb-outbox::${r.type}::${r.name}`,
        opts: {
            protect: false,
            ignoreChanges: [],
            aliases: [],
            additionalSecretOutputs: [],
            customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
        } as any,
        stackTags: new Map(),
        isType,
        asType: ((cls: any) => (isType(cls) ? r.inputs : undefined)) as any,
        getConfig: (<T>() => ({}) as T) as any,
        notApplicable: (reason?: string): never => {
            throw Object.assign(new Error(reason), { notApplicable: true });
        },
    } as ResourceValidationArgs;
}

/**
 * The stack view of a recorded resource. The engine gives stack policies the resources' outputs; the mocks
 * record inputs, so a test adds the outputs a policy reads (e.g. a table's `streamArn`) to `inputs`.
 */
export function policyResource(r: RecordedResource): PolicyResource {
    const args = validationArgs(r);
    return { type: r.type, props: r.inputs, urn: args.urn, name: r.name, opts: args.opts, dependencies: [], propertyDependencies: {}, isType: args.isType, asType: args.asType } as PolicyResource;
}

/** Every violation `policies` report for `resources` (resource and stack policies), as `policy-name: message`. */
export async function violationsOf(policies: readonly (ResourceValidationPolicy | StackValidationPolicy)[], resources: readonly RecordedResource[]): Promise<string[]> {
    const out: string[] = [];
    for (const policy of policies) {
        if ("validateStack" in policy) {
            const notApplicable = (reason?: string): never => {
                throw Object.assign(new Error(reason), { notApplicable: true });
            };
            try {
                await policy.validateStack(
                    { resources: resources.map(policyResource), stackTags: new Map(), getConfig: (<T>() => ({}) as T) as any, notApplicable },
                    (message) => out.push(`${policy.name}: ${message}`),
                );
            } catch (e: any) {
                if (!e.notApplicable) throw e;
            }
            continue;
        }
        const validations = Array.isArray(policy.validateResource) ? policy.validateResource : policy.validateResource ? [policy.validateResource] : [];
        for (const r of resources) {
            for (const validate of validations) {
                try {
                    await validate(validationArgs(r), (message) => out.push(`${policy.name}: ${message}`));
                } catch (e: any) {
                    if (!e.notApplicable) throw e;
                }
            }
        }
    }
    return out;
}
