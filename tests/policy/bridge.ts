/**
 * Runs CrossGuard resource policies in-process on resources recorded under the Pulumi mocks, the way the
 * policy analyzer would call them (`pulumi preview --policy-pack` needs the CLI and its plugins).
 */
import type { ResourceValidationArgs, ResourceValidationPolicy } from "@pulumi/policy";
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

/** Every violation `policies` report for `resources`, as `policy-name: message`. */
export async function violationsOf(policies: readonly ResourceValidationPolicy[], resources: readonly RecordedResource[]): Promise<string[]> {
    const out: string[] = [];
    for (const policy of policies) {
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
