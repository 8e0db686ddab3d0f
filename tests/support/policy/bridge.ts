/**
 * Runs CrossGuard policies in-process on resources recorded under the Pulumi mocks, the way the policy analyzer
 * calls them: a resource policy with the resource's inputs, URN and parent's URN; a stack policy with every
 * resource's outputs, parent and property dependencies. `pulumi preview --policy-pack` needs the CLI and its
 * plugins; `analyzer.ts` runs the pack's own analyzer server instead, for what only the server does (enforcement
 * levels, config).
 */
import type {
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationPolicy,
} from "@pulumi/policy";
import type { RecordedResource } from "../pulumi-mocks";

/** The URN of a recorded resource: the one the mocks gave it, or a root-level one for a resource a test made up. */
export function urnOf(r: RecordedResource): string {
    return r.urn ?? `urn:pulumi:test::dynamodb-outbox::${r.type}::${r.name}`;
}

/** The analyzer's arguments for one recorded resource. `isType` mimics the engine's `__pulumiType` check. */
export function validationArgs(r: RecordedResource): ResourceValidationArgs {
    const isType = (cls: any): boolean =>
        typeof cls?.isInstance === "function" && cls.isInstance({ __pulumiType: r.type });
    return {
        type: r.type,
        props: r.inputs,
        name: r.name,
        urn: urnOf(r),
        opts: {
            protect: false,
            ignoreChanges: [],
            aliases: [],
            additionalSecretOutputs: [],
            customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
            ...(r.parent === undefined ? {} : { parent: r.parent }),
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
 * The stack view of recorded resources, as the engine gives it to stack policies: each resource's outputs (its
 * inputs, which a test may have changed, and what the mocks computed) with its parent and property dependencies
 * linked to the other resources.
 */
export function policyResources(resources: readonly RecordedResource[]): PolicyResource[] {
    const views = resources.map((r) => {
        const args = validationArgs(r);
        const props = { ...r.inputs, ...(r.computed ?? {}) };
        return {
            type: r.type,
            props,
            urn: args.urn,
            name: r.name,
            opts: args.opts,
            dependencies: [],
            propertyDependencies: {},
            isType: args.isType,
            asType: args.asType,
        } as PolicyResource;
    });
    const byUrn = new Map(views.map((v) => [v.urn, v]));
    resources.forEach((r, i) => {
        const view = views[i]!;
        const parent = r.parent === undefined ? undefined : byUrn.get(r.parent);
        if (parent !== undefined) view.parent = parent;
        for (const [property, urns] of Object.entries(r.propertyDependencies ?? {})) {
            view.propertyDependencies[property] = urns.flatMap((u) => byUrn.get(u) ?? []);
        }
        view.dependencies = [...new Set(Object.values(view.propertyDependencies).flat())];
    });
    return views;
}

/** Every violation `policies` report for `resources` (resource and stack policies), as `policy-name: message`. */
export async function violationsOf(
    policies: readonly (ResourceValidationPolicy | StackValidationPolicy)[],
    resources: readonly RecordedResource[],
): Promise<string[]> {
    const out: string[] = [];
    for (const policy of policies) {
        if ("validateStack" in policy) {
            const notApplicable = (reason?: string): never => {
                throw Object.assign(new Error(reason), { notApplicable: true });
            };
            try {
                await policy.validateStack(
                    {
                        resources: policyResources(resources),
                        stackTags: new Map(),
                        getConfig: (<T>() => ({}) as T) as any,
                        notApplicable,
                    },
                    (message) => out.push(`${policy.name}: ${message}`),
                );
            } catch (e: any) {
                if (!e.notApplicable) throw e;
            }
            continue;
        }
        const validations = Array.isArray(policy.validateResource)
            ? policy.validateResource
            : policy.validateResource
              ? [policy.validateResource]
              : [];
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
