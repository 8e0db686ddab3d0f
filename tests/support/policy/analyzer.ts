/**
 * A policy pack run the way the Pulumi CLI runs one, and spoken to over its gRPC analyzer protocol: the CLI
 * starts `node <@pulumi/pulumi/cmd/run-policy-pack> <engine address> .` in the pack's folder (resolving
 * `@pulumi/pulumi` from there), reads the port the pack prints, asks `GetAnalyzerInfo`, sends the reconciled
 * `--policy-pack-config` with `Configure`, then calls `Analyze` with each resource's inputs and, at the end,
 * `AnalyzeStack` with every resource's outputs. What comes back is what `pulumi preview` prints under
 * "Policies". No CLI is needed: this file plays its part.
 *
 * The pack process is this test's own child; `stop()` ends it by its pid.
 */
import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import type { RecordedResource } from "../pulumi-mocks";
import { urnOf } from "./bridge";

/* eslint-disable @typescript-eslint/no-require-imports */
// The generated gRPC code and the protobuf runtime it was generated for, from @pulumi/pulumi's own dependencies.
const pulumiRoot = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const grpc = require(require.resolve("@grpc/grpc-js", { paths: [pulumiRoot] }));
const analyzerrpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const analyzerproto = require("@pulumi/pulumi/proto/analyzer_pb");
const structproto = require(require.resolve("google-protobuf/google/protobuf/struct_pb", { paths: [pulumiRoot] }));
const emptyproto = require(require.resolve("google-protobuf/google/protobuf/empty_pb", { paths: [pulumiRoot] }));
/* eslint-enable @typescript-eslint/no-require-imports */

/** The engine's marker for a value unknown during a preview (its unknown string sentinel, used for every unknown). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The enforcement levels as the analyzer protocol numbers them. */
const LEVELS: Record<string, number> = analyzerproto.EnforcementLevel;
const levelName = (n: number): string =>
    Object.keys(LEVELS)
        .find((k) => LEVELS[k] === n)
        ?.toLowerCase() ?? `level ${n}`;

/** One diagnostic the pack reported. */
export interface Diagnostic {
    /** The policy that reported it. */
    readonly policyName: string;
    /** `advisory`, `mandatory`, … as the CLI would show it. */
    readonly enforcementLevel: string;
    /** The violation's own text (the server prefixes it with the policy's description and a newline). */
    readonly message: string;
    /** The resource it names: the analyzed resource's for `Analyze`, the reported one's for `AnalyzeStack`. */
    readonly urn: string;
}

/** What `GetAnalyzerInfo` reports of one policy. */
export interface PolicyInfo {
    readonly name: string;
    /** `resource` or `stack`. */
    readonly kind: string;
    readonly enforcementLevel: string;
    readonly hasConfigSchema: boolean;
}

/** A resource as the analyzer gets it. */
export interface AnalyzedResource {
    readonly type: string;
    readonly name: string;
    readonly urn: string;
    /** Inputs for `Analyze`, outputs for `AnalyzeStack`; {@link UNKNOWN} marks a value unknown during preview. */
    readonly props: Record<string, unknown>;
    readonly parent?: string;
    readonly propertyDependencies?: Record<string, readonly string[]>;
}

/** A recorded resource as the engine would hand it to `Analyze` (inputs) and `AnalyzeStack` (outputs). */
export function analyzed(r: RecordedResource, view: "inputs" | "outputs"): AnalyzedResource {
    const props = view === "inputs" ? r.inputs : { ...r.inputs, ...(r.computed ?? {}) };
    return {
        type: r.type,
        name: r.name,
        urn: urnOf(r),
        props,
        parent: r.parent,
        propertyDependencies: r.propertyDependencies,
    };
}

/** Plain JSON values: drops `undefined` and turns Pulumi assets into plain objects, which a protobuf Struct can hold. */
function plain(props: Record<string, unknown>): Record<string, unknown> {
    return JSON.parse(JSON.stringify(props)) as Record<string, unknown>;
}

function options(r: AnalyzedResource): unknown {
    const opts = new analyzerproto.AnalyzerResourceOptions();
    if (r.parent !== undefined) opts.setParent(r.parent);
    return opts;
}

/** Sets what an `AnalyzeRequest` and a stack's `AnalyzerResource` share (type, name, URN, properties, options). */
function describeResource<T>(message: T, r: AnalyzedResource): T {
    const m = message as any;
    m.setType(r.type);
    m.setName(r.name);
    m.setUrn(r.urn);
    m.setProperties(structproto.Struct.fromJavaScript(plain(r.props)));
    m.setOptions(options(r));
    return message;
}

function call<T>(client: any, method: string, request: unknown): Promise<T> {
    return new Promise((resolve, reject) =>
        client[method](request, (err: Error | null, response: T) => (err ? reject(err) : resolve(response))),
    );
}

/** A policy pack process serving the analyzer protocol. */
export class RunningPack {
    private constructor(
        private readonly child: ChildProcess,
        private readonly client: any,
        /** What the pack wrote to stderr so far. */
        readonly stderr: () => string,
    ) {}

    /**
     * Starts the pack in `dir` as the CLI does and connects to it.
     *
     * @param dir - The pack's folder (PulumiPolicy.yaml, package.json, its entry).
     * @param env - The environment of the pack's process.
     * @param timeoutMs - How long the pack may take to print its port (it type-checks a TypeScript pack first).
     */
    static async start(dir: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<RunningPack> {
        const runPolicyPack = require.resolve("@pulumi/pulumi/cmd/run-policy-pack", { paths: [dir] });
        // The engine's address comes first; a policy pack does not call the engine, so nothing listens there.
        const child = spawn(process.execPath, [runPolicyPack, "127.0.0.1:1", "."], {
            cwd: dir,
            env,
            stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
        const port = await new Promise<number>((resolve, reject) => {
            const timer = setTimeout(
                () => reject(new Error(`the pack printed no port within ${timeoutMs} ms\nstderr: ${stderr}`)),
                timeoutMs,
            );
            child.stdout!.on("data", (c: Buffer) => {
                stdout += c.toString();
                const line = /^(\d+)\n/.exec(stdout);
                if (line) {
                    clearTimeout(timer);
                    resolve(Number(line[1]));
                }
            });
            child.on("error", reject);
            child.on("exit", (code) => {
                clearTimeout(timer);
                reject(new Error(`the pack exited ${code} before serving\nstdout: ${stdout}\nstderr: ${stderr}`));
            });
        });
        const client = new analyzerrpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
        return new RunningPack(child, client, () => stderr);
    }

    /** `GetAnalyzerInfo`: the pack's name and each policy's default level. */
    async info(): Promise<{ name: string; policies: PolicyInfo[] }> {
        const info: any = await call(this.client, "getAnalyzerInfo", new emptyproto.Empty());
        return {
            name: info.getName(),
            policies: info.getPoliciesList().map((p: any) => ({
                name: p.getName(),
                kind:
                    p.getPolicyType() === analyzerproto.PolicyType.POLICY_TYPE_STACK
                        ? "stack"
                        : p.getPolicyType() === analyzerproto.PolicyType.POLICY_TYPE_RESOURCE
                          ? "resource"
                          : "unknown",
                enforcementLevel: levelName(p.getEnforcementlevel()),
                hasConfigSchema: p.hasConfigschema(),
            })),
        };
    }

    /**
     * `Configure`, as the CLI sends a config after reconciling it with the pack's defaults: each policy named
     * with its level and its (here empty) properties.
     *
     * @param levels - Policy name to enforcement level.
     */
    async configure(levels: Record<string, string>): Promise<void> {
        const request = new analyzerproto.ConfigureAnalyzerRequest();
        for (const [policy, level] of Object.entries(levels)) {
            const config = new analyzerproto.PolicyConfig();
            const number = LEVELS[level.toUpperCase()];
            if (number === undefined) throw new Error(`no enforcement level ${level} in the analyzer protocol`);
            config.setEnforcementlevel(number);
            config.setProperties(structproto.Struct.fromJavaScript({}));
            request.getPolicyconfigMap().set(policy, config);
        }
        await call(this.client, "configure", request);
    }

    /** `Analyze` one resource's inputs. */
    async analyze(r: AnalyzedResource): Promise<Diagnostic[]> {
        const request = describeResource(new analyzerproto.AnalyzeRequest(), r);
        return diagnostics(await call(this.client, "analyze", request), r.urn);
    }

    /** `AnalyzeStack` with every resource's outputs, parents and property dependencies. */
    async analyzeStack(resources: readonly AnalyzedResource[]): Promise<Diagnostic[]> {
        const request = new analyzerproto.AnalyzeStackRequest();
        request.setResourcesList(
            resources.map((r) => {
                const resource = describeResource(new analyzerproto.AnalyzerResource(), r);
                if (r.parent !== undefined) resource.setParent(r.parent);
                const dependencies = Object.values(r.propertyDependencies ?? {}).flat();
                resource.setDependenciesList([...new Set(dependencies)]);
                for (const [property, urns] of Object.entries(r.propertyDependencies ?? {})) {
                    const deps = new analyzerproto.AnalyzerPropertyDependencies();
                    deps.setUrnsList([...urns]);
                    resource.getPropertydependenciesMap().set(property, deps);
                }
                return resource;
            }),
        );
        return diagnostics(await call(this.client, "analyzeStack", request), "");
    }

    /** What a preview of `resources` reports: `Analyze` of each resource's inputs, then `AnalyzeStack` of their outputs. */
    async preview(resources: readonly RecordedResource[]): Promise<Diagnostic[]> {
        const out: Diagnostic[] = [];
        for (const r of resources) out.push(...(await this.analyze(analyzed(r, "inputs"))));
        out.push(...(await this.analyzeStack(resources.map((r) => analyzed(r, "outputs")))));
        return out;
    }

    /** Closes the connection and ends the pack's process. */
    stop(): void {
        this.client.close();
        if (this.child.exitCode === null) this.child.kill();
    }
}

function diagnostics(response: any, analyzedUrn: string): Diagnostic[] {
    return response.getDiagnosticsList().map((d: any) => {
        const description: string = d.getDescription();
        const text: string = d.getMessage();
        const message = text.startsWith(`${description}\n`) ? text.slice(description.length + 1) : text;
        return {
            policyName: d.getPolicyname(),
            enforcementLevel: levelName(d.getEnforcementlevel()),
            message,
            urn: d.getUrn() || analyzedUrn,
        };
    });
}
