/**
 * The one Pulumi mocks installation of the test run. `setMocks` is process-global: a second call would replace
 * these mocks and silently empty the other file's records, so every test file imports from here and never
 * calls `setMocks` itself.
 *
 * Every registered resource is recorded with its inputs. Mocked state echoes the inputs and adds the computed
 * fields the component reads (`arn`, `name`, `streamArn`, `url`); a `name` left unset is autonamed `<Pulumi name>-abc`.
 */
import * as pulumi from "@pulumi/pulumi";
import { writerPolicyDocument } from "../../components/iam";
import { ACCOUNT, REGION, call, computed } from "./package/fixtures/mock-cloud";

/** One resource registration seen by the mocks. */
export interface RecordedResource {
    readonly type: string;
    readonly name: string;
    readonly inputs: Record<string, any>;
    /** The URN the mocks gave it (`<parent type>$<type>` when it has a parent); absent on one a test makes up. */
    readonly urn?: string;
    /** The parent's URN, when it was declared with a parent. */
    readonly parent?: string;
    /** The outputs the mocks computed besides echoing the inputs (`arn`, `name`, `streamArn`, `url`). */
    readonly computed?: Record<string, any>;
    /** The URNs each input property depends on (a property given a resource's Output), as the engine tracks them. */
    readonly propertyDependencies?: Record<string, string[]>;
    /**
     * The ID it was declared to import (its `import` resource option), which the mocks receive as
     * `MockResourceArgs.id`; absent when it is created.
     */
    readonly importId?: string;
    /**
     * The region its ARNs name: that of the `aws` provider it was declared with (`region` of a
     * `pulumi:providers:aws` the mocks recorded), else the default provider's, {@link MOCK_REGION}.
     */
    readonly region?: string;
}

/** Every resource registered in this process, in registration order. */
export const recorded: RecordedResource[] = [];

/** The default provider's region, which `aws:getRegion` answers. */
export const MOCK_REGION = REGION;

/** The region of each `aws` provider resource registered, by URN. */
const providerRegions = new Map<string, string>();

/** The region of the provider a resource is declared with: its reference is `<urn>::<id>`. */
function regionOf(provider: string | undefined): string {
    if (provider === undefined || provider === "") return REGION;
    return providerRegions.get(provider.slice(0, provider.lastIndexOf("::"))) ?? REGION;
}

/** Outputs the mocked StackReference `acme/outbox/prod` exposes. */
export const STACK_REFERENCE_OUTPUTS: Record<string, string> = {
    tableName: "orders-table-abc",
    tableArn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/orders-table-abc`,
    streamArn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/orders-table-abc/stream/2026-01-01T00:00:00.000`,
    destinationArn: `arn:aws:sns:${REGION}:${ACCOUNT}:orders-topic-abc`,
    topicArn: `arn:aws:sns:${REGION}:${ACCOUNT}:orders-topic-abc`,
    dlqUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/orders-dlq-abc`,
    dlqArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:orders-dlq-abc`,
    publisherFunctionName: "orders-publisher-abc",
    writerPolicy: JSON.stringify(
        writerPolicyDocument({ tableArn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/orders-table-abc` }),
    ),
};

void pulumi.runtime.setMocks(
    {
        newResource(args: pulumi.runtime.MockResourceArgs): { id: string; state: Record<string, any> } {
            const request = registering;
            registering = undefined;
            if (args.type === "pulumi:pulumi:StackReference") {
                recorded.push({ type: args.type, name: args.name, inputs: args.inputs });
                return {
                    id: args.id ?? args.inputs.name,
                    state: { name: args.inputs.name, outputs: STACK_REFERENCE_OUTPUTS, secretOutputNames: [] },
                };
            }
            const region = regionOf(args.provider);
            const outputs = computed(args.type, args.name, args.inputs, region);
            const parent = request?.getParent() || undefined;
            const propertyDependencies: Record<string, string[]> = {};
            for (const [property, dependencies] of request?.getPropertydependenciesMap().entries() ?? []) {
                const urns = (dependencies as { getUrnsList(): string[] }).getUrnsList();
                if (urns.length > 0) propertyDependencies[property as string] = urns;
            }
            const urn = monitor.newUrn(parent, args.type, args.name);
            if (args.type === "pulumi:providers:aws" && typeof args.inputs.region === "string")
                providerRegions.set(urn, args.inputs.region);
            // The request's import ID ("" when none) is the `id` the mocks are given.
            const importId = args.id || undefined;
            recorded.push({
                type: args.type,
                name: args.name,
                inputs: args.inputs,
                urn,
                parent,
                computed: outputs,
                propertyDependencies,
                ...(importId === undefined ? {} : { importId }),
                region,
            });
            return { id: importId ?? `${args.name}-id`, state: { ...args.inputs, ...outputs } };
        },
        call,
    },
    "dynamodb-outbox",
    "test",
    false,
);

interface RegisterResourceRequest {
    getParent(): string;
    getPropertydependenciesMap(): { entries(): Iterable<[string, unknown]> };
}

/**
 * The mock monitor (internal to @pulumi/pulumi). Its `newResource` call is not told the parent or the property
 * dependencies; the registration request carries them, and the monitor calls `newResource` synchronously at the
 * start of `registerResource`, so the request is kept at hand for it.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const monitor = (require("@pulumi/pulumi/runtime/settings") as { getMonitor(): any }).getMonitor() as {
    registerResource(request: RegisterResourceRequest, callback: unknown): unknown;
    newUrn(parent: string | undefined, type: string, name: string): string;
};
let registering: RegisterResourceRequest | undefined;
const registerResource = monitor.registerResource.bind(monitor);
monitor.registerResource = (request, callback) => {
    registering = request;
    try {
        return registerResource(request, callback);
    } finally {
        registering = undefined;
    }
};

/** The resources of `type` recorded so far, optionally only those whose name starts with `prefix`. */
export function recordedOfType(type: string, prefix?: string): RecordedResource[] {
    return recorded.filter((r) => r.type === type && (prefix === undefined || r.name.startsWith(prefix)));
}

/** The resources whose name starts with `prefix` (the component's own name). */
export function recordedNamed(prefix: string): RecordedResource[] {
    return recorded.filter((r) => r.name === prefix || r.name.startsWith(`${prefix}-`));
}

/** Resolve an Output to a promise the test can await (assertions inside `.apply` would never be awaited). */
export function unwrap<T>(output: pulumi.Output<T>): Promise<T> {
    return new Promise<T>((resolve) =>
        output.apply((v) => {
            resolve(v);
            return v;
        }),
    );
}
