/**
 * Builds an Outbox under the shared mocks and waits until every child registration reached them.
 * Give each test's outbox its own hyphen-free name, so `recordedNamed(name)` selects only its children.
 */
import * as pulumi from "@pulumi/pulumi";
import { Outbox, OutboxArgs } from "../../components/outbox";
import { ENV } from "../../runtime/config";
import { ACCOUNT, REGION } from "./package/fixtures/mock-cloud";
import { RecordedResource, recordedNamed, unwrap } from "./pulumi-mocks";

// Internal to @pulumi/pulumi (used by `disconnect`): resolves once the RPC queue, mocked registrations included, is drained.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const settings = require("@pulumi/pulumi/runtime/settings") as { waitForRPCs(): Promise<void> };

/** Resolves once every registration made so far has reached the mocks. */
export function waitForRPCs(): Promise<void> {
    return settings.waitForRPCs();
}

/** An Outbox and its recorded children. */
export interface BuiltOutbox {
    readonly outbox: Outbox;
    /** Every recorded resource whose name is the outbox's or starts with `<name>-`. */
    readonly resources: RecordedResource[];
    /** The one recorded child of `type`, optionally with the exact Pulumi `name`; fails if not exactly one. */
    one(type: string, name?: string): RecordedResource;
    /**
     * The resource options each child was declared with, by Pulumi name. The mocks never see options, so a
     * (legacy, in-process) `transformations` entry on the component records them as children are constructed.
     */
    readonly options: ReadonlyMap<string, pulumi.CustomResourceOptions>;
}

/** Declare `new Outbox(name, args)` and wait for all of its registrations. */
export async function buildOutbox(name: string, args?: OutboxArgs): Promise<BuiltOutbox> {
    const options = new Map<string, pulumi.CustomResourceOptions>();
    const outbox = new Outbox(name, args, {
        transformations: [
            (child) => {
                options.set(child.name, child.opts);
                return undefined;
            },
        ],
    });
    await waitForRPCs();
    const resources = recordedNamed(name);
    return {
        outbox,
        resources,
        options,
        one(type: string, childName?: string): RecordedResource {
            const found = resources.filter((r) => r.type === type && (childName === undefined || r.name === childName));
            if (found.length !== 1)
                throw new Error(
                    `expected one ${type}${childName ? ` named ${childName}` : ""} in ${name}, found ${found.length}`,
                );
            return found[0];
        },
    };
}

/**
 * The outputs every `Outbox` that creates its topic resolves (a program exports them to its stack), as they are
 * under the mocks for one named `name`: each child autonamed `<name>-<child>-abc`, in the mocks' region and account.
 * @param name - The component's name.
 */
export function mockedOutboxOutputs(name: string) {
    const tableArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}-table-abc`;
    const topicArn = `arn:aws:sns:${REGION}:${ACCOUNT}:${name}-topic-abc`;
    return {
        tableName: `${name}-table-abc`,
        tableArn,
        streamArn: `${tableArn}/stream/2026-01-01T00:00:00.000`,
        destinationArn: topicArn,
        topicArn,
        dlqUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}-dlq-abc`,
        dlqArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}-dlq-abc`,
        publisherFunctionName: `${name}-publisher-abc`,
        sweeperFunctionName: `${name}-sweeper-abc`,
    };
}

/** The names of the outputs {@link mockedOutboxOutputs} gives. */
type OutboxOutputName = keyof ReturnType<typeof mockedOutboxOutputs>;

/**
 * Each output {@link mockedOutboxOutputs} names, resolved.
 * @param source - The component, or a program's exports.
 */
export async function resolvedOutboxOutputs(
    source: Record<OutboxOutputName, pulumi.Output<unknown>>,
): Promise<Record<OutboxOutputName, unknown>> {
    const names = Object.keys(mockedOutboxOutputs("")) as OutboxOutputName[];
    return Object.fromEntries(
        await Promise.all(names.map(async (n) => [n, await unwrap(source[n])] as const)),
    ) as Record<OutboxOutputName, unknown>;
}

/** Resource type tokens of the children. */
export const TYPE = {
    outbox: "dynamodb-outbox:index:Outbox",
    table: "aws:dynamodb/table:Table",
    topic: "aws:sns/topic:Topic",
    queue: "aws:sqs/queue:Queue",
    fn: "aws:lambda/function:Function",
    role: "aws:iam/role:Role",
    logGroup: "aws:cloudwatch/logGroup:LogGroup",
    mapping: "aws:lambda/eventSourceMapping:EventSourceMapping",
    rule: "aws:cloudwatch/eventRule:EventRule",
    target: "aws:cloudwatch/eventTarget:EventTarget",
    permission: "aws:lambda/permission:Permission",
    policyAttachment: "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    alarm: "aws:cloudwatch/metricAlarm:MetricAlarm",
    dashboard: "aws:cloudwatch/dashboard:Dashboard",
} as const;

/** One statement of a role's inline policy. */
export interface RoleStatement {
    Sid: string;
    Effect: string;
    Action: string[];
    Resource: string[];
}

/** The statements of the role `roleName`'s only inline policy, parsed; fails unless it has exactly one. */
export function inlineStatements(built: BuiltOutbox, roleName: string): RoleStatement[] {
    const role = built.one(TYPE.role, roleName).inputs;
    if (role.inlinePolicies?.length !== 1)
        throw new Error(`${roleName} has ${role.inlinePolicies?.length ?? 0} inline policies; expected one`);
    return JSON.parse(role.inlinePolicies[0].policy).Statement;
}

/** The variables every destination shares, as the component sets them by default. */
export async function commonEnvironment(built: BuiltOutbox, fifo: boolean): Promise<Record<string, string>> {
    return {
        [ENV.tableName]: await unwrap(built.outbox.tableName),
        [ENV.dlqUrl]: await unwrap(built.outbox.dlqUrl),
        [ENV.fifo]: String(fifo),
        [ENV.completionGraceSeconds]: "3600",
        [ENV.sweepAfterSeconds]: "120",
        [ENV.maxPublishAttempts]: "3",
        [ENV.expiryShards]: "1",
        [ENV.maxPartitionsPerRun]: "200",
        [ENV.claimVersion]: "1",
    };
}
