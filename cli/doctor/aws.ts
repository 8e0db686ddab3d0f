/**
 * The AWS services `doctor` reads besides DynamoDB and SQS, as minimal ports: Lambda (event source mappings),
 * EventBridge (the sweeper's schedule rule, and an event bus destination), CloudWatch (the publisher's metrics) and
 * SNS (a topic destination). `@aws-sdk/client-eventbridge` and `@aws-sdk/client-sns` are dependencies of this
 * package (the runtime sends through them); `@aws-sdk/client-lambda` and `@aws-sdk/client-cloudwatch`, which only
 * `doctor` uses, are optional peer dependencies, which npm does not install: an application that only writes or
 * relays events does not get them (docs/packaging.md). {@link loadDoctorAws} loads each one lazily, so a check whose
 * package is not installed names the package to install (`needs @aws-sdk/client-lambda: npm install
 * @aws-sdk/client-lambda`) instead of crashing the other checks. Tests pass fakes of the ports, and one test drives the
 * real clients against a local HTTP endpoint.
 *
 * @packageDocumentation
 */
import type { EnvCredentials } from "../shared/credentials";
import { bindToDeadline, requestBounds, type CommandDeadline } from "../shared/deadline";

/** An event source mapping, as Lambda's ListEventSourceMappings returns it (the fields doctor reads). */
export interface EventSourceMappingInfo {
    /** The mapping's UUID. */
    readonly UUID?: string;
    /** The stream ARN. */
    readonly EventSourceArn?: string;
    /** The function ARN. */
    readonly FunctionArn?: string;
    /** `Enabled`, `Disabled`, `Creating`, … */
    readonly State?: string;
    /** `TRIM_HORIZON`, `LATEST`, … */
    readonly StartingPosition?: string;
    /** The filter patterns, as JSON strings. */
    readonly FilterCriteria?: { readonly Filters?: readonly { readonly Pattern?: string }[] };
    /** The on-failure destination. */
    readonly DestinationConfig?: { readonly OnFailure?: { readonly Destination?: string } };
    /** E.g. `OK`, `No records processed`, `PROBLEM: …`. */
    readonly LastProcessingResult?: string;
    /** The metrics the mapping produces (`EventCount` turns on its event counts). */
    readonly MetricsConfig?: { readonly Metrics?: readonly string[] };
}

/** The Lambda calls doctor makes. */
export interface LambdaPort {
    /** ListEventSourceMappings (one call; doctor asks for one function or one stream). */
    listEventSourceMappings(input: {
        FunctionName?: string;
        EventSourceArn?: string;
    }): Promise<{ EventSourceMappings?: readonly EventSourceMappingInfo[] }>;
}

/** The EventBridge calls doctor makes. */
export interface EventBridgePort {
    /** ListRuleNamesByTarget. */
    listRuleNamesByTarget(input: { TargetArn: string }): Promise<{ RuleNames?: readonly string[] }>;
    /** DescribeRule. */
    describeRule(input: { Name: string }): Promise<{ Name?: string; State?: string; ScheduleExpression?: string }>;
    /** DescribeEventBus (`Name` takes the bus's name or ARN). */
    describeEventBus(input: { Name: string }): Promise<{ Name?: string; Arn?: string }>;
}

/** The SNS calls doctor makes. */
export interface SnsPort {
    /** GetTopicAttributes. */
    getTopicAttributes(input: { TopicArn: string }): Promise<{ Attributes?: Readonly<Record<string, string>> }>;
}

/** One metric statistics request, as CloudWatch's GetMetricStatistics takes it. */
export interface MetricStatisticsInput {
    readonly Namespace: string;
    readonly MetricName: string;
    readonly Dimensions: readonly { readonly Name: string; readonly Value: string }[];
    readonly StartTime: Date;
    readonly EndTime: Date;
    readonly Period: number;
    readonly Statistics: readonly ("Maximum" | "Sum")[];
}

/** The CloudWatch calls doctor makes. */
export interface CloudWatchPort {
    /** GetMetricStatistics. */
    getMetricStatistics(
        input: MetricStatisticsInput,
    ): Promise<{ Datapoints?: readonly { readonly Maximum?: number; readonly Sum?: number }[] }>;
}

/** A port, or the reason it is not there: the npm package to install. */
export type Port<T> = { readonly port: T } | { readonly missing: string };

/** The ports doctor uses. */
export interface DoctorAws {
    readonly lambda: Port<LambdaPort>;
    readonly eventBridge: Port<EventBridgePort>;
    readonly cloudWatch: Port<CloudWatchPort>;
    readonly sns: Port<SnsPort>;
    /** Destroy the real clients. */
    destroy(): void;
}

/** The SDK packages behind the ports. */
export const DOCTOR_PACKAGES = {
    lambda: "@aws-sdk/client-lambda",
    eventBridge: "@aws-sdk/client-eventbridge",
    cloudWatch: "@aws-sdk/client-cloudwatch",
    sns: "@aws-sdk/client-sns",
} as const;

type Sdk = Record<string, new (input: object) => { send(command: object): Promise<unknown>; destroy(): void }>;

/** `require(name)`, or `undefined` when the package does not resolve. */
function optionalRequire(name: string, load: (name: string) => unknown): Sdk | undefined {
    try {
        return load(name) as Sdk;
    } catch (err) {
        if ((err as { code?: string }).code === "MODULE_NOT_FOUND") return undefined;
        throw err;
    }
}

/** Options of {@link loadDoctorAws}. */
export interface DoctorAwsConfig {
    /** The region of every client. */
    readonly region: string;
    /** Credentials for every client. @default the SDK's default provider chain */
    readonly credentials?: EnvCredentials;
    /** One endpoint URL for all four clients (a local stand-in). @default each service's regional endpoint */
    readonly endpoint?: string;
    /** The command's deadline: every call carries its signal and each request is bounded. @default unbounded */
    readonly deadline?: CommandDeadline;
}

/**
 * Build the real ports from the SDK packages that resolve.
 *
 * @param config - Region, credentials and endpoint for every client.
 * @param load - How a package is loaded. @default require
 */
export function loadDoctorAws(config: DoctorAwsConfig, load: (name: string) => unknown = require): DoctorAws {
    const clients: { destroy(): void }[] = [];
    function build<T>(
        pkg: string,
        clientName: string,
        service: string,
        make: (send: (commandName: string, input: object) => Promise<unknown>) => T,
    ): Port<T> {
        const sdk = optionalRequire(pkg, load);
        const Client = sdk?.[clientName];
        if (sdk === undefined || Client === undefined) return { missing: pkg };
        const client = new Client({
            region: config.region,
            ...(config.credentials !== undefined ? { credentials: config.credentials } : {}),
            ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
            maxAttempts: 5,
            ...(config.deadline !== undefined ? requestBounds(config.deadline.timeoutMs) : {}),
        });
        clients.push(client);
        if (config.deadline !== undefined) {
            bindToDeadline(client, config.deadline, {
                service,
                endpoint: config.endpoint ?? `the ${config.region} endpoint`,
                settings: "--region",
            });
        }
        return {
            port: make((commandName, input) => {
                const Command = sdk[commandName];
                if (Command === undefined) throw new Error(`${pkg} has no ${commandName}: install a current version`);
                return client.send(new Command(input));
            }),
        };
    }
    return {
        lambda: build<LambdaPort>(DOCTOR_PACKAGES.lambda, "LambdaClient", "Lambda", (send) => ({
            listEventSourceMappings: async (input) => (await send("ListEventSourceMappingsCommand", input)) as never,
        })),
        eventBridge: build<EventBridgePort>(
            DOCTOR_PACKAGES.eventBridge,
            "EventBridgeClient",
            "EventBridge",
            (send) => ({
                listRuleNamesByTarget: async (input) => (await send("ListRuleNamesByTargetCommand", input)) as never,
                describeRule: async (input) => (await send("DescribeRuleCommand", input)) as never,
                describeEventBus: async (input) => (await send("DescribeEventBusCommand", input)) as never,
            }),
        ),
        cloudWatch: build<CloudWatchPort>(DOCTOR_PACKAGES.cloudWatch, "CloudWatchClient", "CloudWatch", (send) => ({
            getMetricStatistics: async (input) => (await send("GetMetricStatisticsCommand", input)) as never,
        })),
        sns: build<SnsPort>(DOCTOR_PACKAGES.sns, "SNSClient", "SNS", (send) => ({
            getTopicAttributes: async (input) => (await send("GetTopicAttributesCommand", input)) as never,
        })),
        destroy: () => {
            for (const c of clients) c.destroy();
        },
    };
}
