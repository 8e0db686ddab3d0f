/**
 * A fake Pulumi engine for driving the package as a provider plugin without the CLI: one gRPC server holding the
 * engine service (logs, root resource) and the resource monitor (registrations), and a client for the plugin's
 * own provider service.
 *
 * It is a fake because no Pulumi CLI exists where the tests run. It answers like the engine in the ways the
 * plugin can observe: every feature the Node SDK asks about that needs no callback server is supported (secrets,
 * resource references, output values, aliases, deletedWith), URNs are built from the parent's type chain, a
 * custom resource's outputs are its inputs plus the computed attributes the component reads (unknown in a
 * preview, as the engine leaves them before create). It records each registration's request, untouched.
 *
 * @packageDocumentation
 */
import * as grpc from "@grpc/grpc-js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import * as engineproto from "@pulumi/pulumi/proto/engine_pb";
import * as enginerpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as plugproto from "@pulumi/pulumi/proto/plugin_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as resproto from "@pulumi/pulumi/proto/resource_pb";
import * as resrpc from "@pulumi/pulumi/proto/resource_grpc_pb";
import { computed } from "../../support/package/fixtures/mock-cloud";

/** The property a secret value is wrapped in on the wire, and the signature marking it a secret. */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
/** The signature of a secret. */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** The signature of an archive. */
export const ARCHIVE_SIG = "0def7320c3a5731c473e5ecbe6d01bc7";
/** The signature of an asset. */
export const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";
/** The string that stands for a value not known until the update (a preview's unknown). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A secret on the wire. */
export function secret(value: unknown): Record<string, unknown> {
    return { [SIG_KEY]: SECRET_SIG, value };
}

/** Whether a wire value is a secret. */
export function isSecret(value: unknown): value is { value: unknown } {
    return typeof value === "object" && value !== null && (value as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

/** The features the fake engine supports; the others need a callback server the plugin would have to serve. */
const FEATURES = new Set(["secrets", "resourceReferences", "outputValues", "aliasSpecs", "deletedWith"]);

/** One `RegisterResource` the plugin sent. */
export interface Registration {
    readonly urn: string;
    readonly type: string;
    readonly name: string;
    /** The parent URN, `""` for none. */
    readonly parent: string;
    readonly custom: boolean;
    /** The inputs, as sent (secrets, archives and unknowns keep their wire form). */
    readonly inputs: Record<string, any>;
    readonly additionalSecretOutputs: string[];
    /** The ID of its `import` resource option, `""` when it is created. */
    readonly importId: string;
    /** The construct request's name this registration arrived under (set by the test before each Construct). */
    readonly session: string;
}

/** A log line the plugin sent to the engine. */
export interface LogLine {
    readonly severity: number;
    readonly message: string;
    readonly urn: string;
}

function unary<Req, Res>(handler: (request: Req) => Res): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
        try {
            callback(null, handler(call.request));
        } catch (e) {
            callback({ code: grpc.status.INTERNAL, details: e instanceof Error ? e.message : String(e) }, null);
        }
    };
}

/** The fake engine and resource monitor, on one gRPC server. */
export class FakeEngine {
    /** Every registration, in arrival order. */
    readonly registrations: Registration[] = [];
    /** Every log line. */
    readonly logs: LogLine[] = [];
    /** Registered outputs of component resources, by URN. */
    readonly outputs = new Map<string, Record<string, any>>();
    /** The label the next registrations are recorded under. */
    session = "";
    private readonly server = new grpc.Server();
    private readonly types = new Map<string, string>();
    private project = "";
    private stack = "";
    private dryRun = false;

    private constructor() {}

    /** Starts the server on a free local port; `address` is what the plugin is given. */
    static async start(): Promise<FakeEngine & { address: string }> {
        const engine = new FakeEngine();
        engine.server.addService(resrpc.ResourceMonitorService, engine.monitor());
        engine.server.addService(enginerpc.EngineService, engine.engineService());
        const port = await new Promise<number>((resolve, reject) =>
            engine.server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
                err ? reject(err) : resolve(p),
            ),
        );
        return Object.assign(engine, { address: `127.0.0.1:${port}` });
    }

    /** Sets what the next Construct runs as: project, stack, preview or not, and the label its registrations get. */
    expect(project: string, stack: string, dryRun: boolean, session: string): void {
        this.project = project;
        this.stack = stack;
        this.dryRun = dryRun;
        this.session = session;
    }

    /** The registrations recorded under `session`. */
    of(session: string): Registration[] {
        return this.registrations.filter((r) => r.session === session);
    }

    /** Stops the server. */
    stop(): Promise<void> {
        return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
    }

    private urn(type: string, name: string, parent: string): string {
        const parentType = parent === "" ? undefined : this.types.get(parent);
        const chain = parentType === undefined ? type : `${parentType}$${type}`;
        const urn = `urn:pulumi:${this.stack}::${this.project}::${chain}::${name}`;
        this.types.set(urn, chain);
        return urn;
    }

    private monitor(): resrpc.IResourceMonitorServer {
        const unsupported =
            (what: string): grpc.handleUnaryCall<any, any> =>
            (_call, callback) =>
                callback(
                    { code: grpc.status.UNIMPLEMENTED, details: `the fake engine does not implement ${what}` },
                    null,
                );
        return {
            supportsFeature: unary((req: resproto.SupportsFeatureRequest) =>
                new resproto.SupportsFeatureResponse().setHassupport(FEATURES.has(req.getId())),
            ),
            registerResource: unary((req: resproto.RegisterResourceRequest) => {
                const inputs = (req.getObject()?.toJavaScript() ?? {}) as Record<string, any>;
                const urn = this.urn(req.getType(), req.getName(), req.getParent());
                this.registrations.push({
                    urn,
                    type: req.getType(),
                    name: req.getName(),
                    parent: req.getParent(),
                    custom: req.getCustom(),
                    inputs,
                    additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
                    importId: req.getImportid(),
                    session: this.session,
                });
                const response = new resproto.RegisterResourceResponse().setUrn(urn);
                if (!req.getCustom()) return response;
                // A table without a stream has no streamArn: a Struct holds no undefined.
                const attributes = Object.fromEntries(
                    Object.entries(computed(req.getType(), req.getName(), inputs)).filter(([, v]) => v !== undefined),
                );
                const state = this.dryRun
                    ? Object.fromEntries(Object.keys(attributes).map((k) => [k, UNKNOWN]))
                    : attributes;
                return response
                    .setId(this.dryRun ? "" : req.getImportid() || `${req.getName()}-id`)
                    .setObject(Struct.fromJavaScript({ ...inputs, ...state }));
            }),
            registerResourceOutputs: unary((req: resproto.RegisterResourceOutputsRequest) => {
                this.outputs.set(req.getUrn(), (req.getOutputs()?.toJavaScript() ?? {}) as Record<string, any>);
                return new Empty();
            }),
            registerPackage: unary((req: resproto.RegisterPackageRequest) =>
                new resproto.RegisterPackageResponse().setRef(`${req.getName()}-${req.getVersion()}`),
            ),
            signalAndWaitForShutdown: unary(() => new Empty()),
            getDeploymentInfo: unsupported("GetDeploymentInfo"),
            invoke: unsupported("Invoke (the component calls no data source)"),
            call: unsupported("Call"),
            readResource: unsupported("ReadResource"),
            existsResource: unsupported("ExistsResource (the component reads no existing resource)"),
            registerStackTransform: unsupported("RegisterStackTransform"),
            registerStackInvokeTransform: unsupported("RegisterStackInvokeTransform"),
            registerResourceHook: unsupported("RegisterResourceHook"),
            registerErrorHook: unsupported("RegisterErrorHook"),
        };
    }

    private engineService(): enginerpc.IEngineServer {
        return {
            log: unary((req: engineproto.LogRequest) => {
                this.logs.push({ severity: req.getSeverity(), message: req.getMessage(), urn: req.getUrn() });
                return new Empty();
            }),
            getRootResource: unary(() => new engineproto.GetRootResourceResponse().setUrn("")),
            setRootResource: unary(() => new engineproto.SetRootResourceResponse()),
            startDebugging: unary(() => new Empty()),
            requirePulumiVersion: unary(() => new engineproto.RequirePulumiVersionResponse()),
        };
    }
}

/** The plugin's provider service, as the engine calls it. */
export class PluginClient {
    private readonly client: provrpc.ResourceProviderClient;

    constructor(port: number) {
        this.client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    }

    /** `GetPluginInfo`: the plugin's version. */
    pluginInfo(): Promise<string> {
        return new Promise((resolve, reject) =>
            this.client.getPluginInfo(new Empty(), (err, res) =>
                err ? reject(err) : resolve((res as plugproto.PluginInfo).getVersion()),
            ),
        );
    }

    /** `GetSchema` (version 0), parsed. */
    schema(): Promise<any> {
        return new Promise((resolve, reject) =>
            this.client.getSchema(new provproto.GetSchemaRequest().setVersion(0), (err, res) =>
                err ? reject(err) : resolve(JSON.parse(res.getSchema())),
            ),
        );
    }

    /** `Construct` of one component: its URN and state, or the gRPC error. */
    construct(args: {
        monitor: string;
        project: string;
        stack: string;
        dryRun: boolean;
        type: string;
        name: string;
        inputs: Record<string, unknown>;
    }): Promise<{ urn: string; state: Record<string, any> }> {
        const req = new provproto.ConstructRequest()
            .setProject(args.project)
            .setStack(args.stack)
            .setDryrun(args.dryRun)
            .setParallel(16)
            .setMonitorendpoint(args.monitor)
            .setType(args.type)
            .setName(args.name)
            .setAcceptsOutputValues(true)
            .setInputs(Struct.fromJavaScript(args.inputs as Record<string, any>));
        return new Promise((resolve, reject) =>
            this.client.construct(req, (err, res) =>
                err
                    ? reject(err)
                    : resolve({
                          urn: res.getUrn(),
                          state: (res.getState()?.toJavaScript() ?? {}) as Record<string, any>,
                      }),
            ),
        );
    }

    /** Closes the channel. */
    close(): void {
        this.client.close();
    }
}
