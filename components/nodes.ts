/**
 * `Outbox.nodes`: the component's child resources, typed, as SST's `nodes` and awsx's resource properties give them,
 * for what the component's args do not cover (another alarm on the table, the function's ARN in a policy of one's
 * own). A child the component did not declare (the topic when a destination is given, the payload bucket without
 * `largePayloads`, the dashboard with `dashboard: false`) is `undefined`.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { OutboxError } from "../runtime/errors";
import { childName, type OutboxChild } from "./naming";

/** The child resources of an `Outbox`. */
export interface OutboxNodes {
    /** The outbox table (or the one it adopts with `importTableName`). */
    readonly table: aws.dynamodb.Table;
    /** The SNS topic the component created; `undefined` when a destination is given (`topicArn`, `queueArn`, `eventBusArn`). */
    readonly topic: aws.sns.Topic | undefined;
    /** The dead-letter queue. */
    readonly dlq: aws.sqs.Queue;
    /** The publisher function. */
    readonly publisher: aws.lambda.Function;
    /** The publisher's role. */
    readonly publisherRole: aws.iam.Role;
    /** The publisher's log group. */
    readonly publisherLogs: aws.cloudwatch.LogGroup;
    /** The mapping from the table's stream to the publisher. */
    readonly eventSourceMapping: aws.lambda.EventSourceMapping;
    /** The sweeper function. */
    readonly sweeper: aws.lambda.Function;
    /** The sweeper's role. */
    readonly sweeperRole: aws.iam.Role;
    /** The sweeper's log group. */
    readonly sweeperLogs: aws.cloudwatch.LogGroup;
    /** The EventBridge rule that runs the sweeper on `sweepSchedule`. */
    readonly schedule: aws.cloudwatch.EventRule;
    /** The rule's target: the sweeper. */
    readonly scheduleTarget: aws.cloudwatch.EventTarget;
    /** The permission that lets the rule invoke the sweeper. */
    readonly schedulePermission: aws.lambda.Permission;
    /** The CloudWatch alarms, in the order of `alarmArns`; empty with `alarms: false`. */
    readonly alarms: readonly aws.cloudwatch.MetricAlarm[];
    /** The CloudWatch dashboard; `undefined` with `dashboard: false`. */
    readonly dashboard: aws.cloudwatch.Dashboard | undefined;
    /** The payload bucket the component created (`largePayloads`); `undefined` without one, or when `payloadBucketArn` is given. */
    readonly payloadBucket: aws.s3.Bucket | undefined;
}

/** A resource class's instance check, as every `@pulumi/aws` resource class has one. */
interface ResourceClass<T> {
    readonly name: string;
    isInstance(obj: unknown): obj is T;
}

/**
 * The child of `parent` declared as `childName(outboxName, child)`. The engine keeps each resource's children and
 * declared name on it (`__childResources`, `__name`), without a public getter: this reads them for the children the
 * declaring functions do not return.
 *
 * @throws OutboxError `INVALID_CONFIG` when no such child of that class was declared (a change of the component,
 *   or of `@pulumi/pulumi`'s internals, that the nodes tests catch).
 */
export function declaredChild<T>(
    parent: pulumi.Resource,
    outboxName: string,
    child: OutboxChild,
    cls: ResourceClass<T>,
): T {
    const name = childName(outboxName, child);
    const children = (parent as unknown as { __childResources?: Iterable<unknown> }).__childResources ?? [];
    for (const c of children) {
        if ((c as { __name?: unknown }).__name === name && cls.isInstance(c)) return c;
    }
    throw new OutboxError(
        "INVALID_CONFIG",
        `Outbox "${outboxName}" has no child ${cls.name} named "${name}" for nodes.${child}; this is a bug of dynamodb-outbox: report it`,
        { context: { outboxName, child: name } },
    );
}

/** The children the declaring functions return; {@link outboxNodes} finds the others. */
export type ReturnedNodes = Omit<
    OutboxNodes,
    | "publisherRole"
    | "publisherLogs"
    | "sweeperRole"
    | "sweeperLogs"
    | "schedule"
    | "scheduleTarget"
    | "schedulePermission"
>;

/**
 * The nodes of the Outbox `parent` named `outboxName`: the children given, and the roles, log groups and schedule
 * found among its children by their names (`components/handlers.ts` declares them and returns only the functions and
 * the mapping).
 */
export function outboxNodes(parent: pulumi.Resource, outboxName: string, returned: ReturnedNodes): OutboxNodes {
    return {
        ...returned,
        publisherRole: declaredChild(parent, outboxName, "publisherRole", aws.iam.Role),
        publisherLogs: declaredChild(parent, outboxName, "publisherLogs", aws.cloudwatch.LogGroup),
        sweeperRole: declaredChild(parent, outboxName, "sweeperRole", aws.iam.Role),
        sweeperLogs: declaredChild(parent, outboxName, "sweeperLogs", aws.cloudwatch.LogGroup),
        schedule: declaredChild(parent, outboxName, "schedule", aws.cloudwatch.EventRule),
        scheduleTarget: declaredChild(parent, outboxName, "scheduleTarget", aws.cloudwatch.EventTarget),
        schedulePermission: declaredChild(parent, outboxName, "schedulePermission", aws.lambda.Permission),
    };
}

/** Per component, the state its getters and grant methods read (kept off the class: see `Outbox.nodes`). */
export interface OutboxHandles {
    /** The children. */
    readonly nodes: OutboxNodes;
    /** Whether the outbox has a payload bucket (created, or `payloadBucketArn`): what `grantReadPayloads` needs. */
    readonly hasPayloadBucket: boolean;
    /** The component's name. */
    readonly name: string;
}

const handles = new WeakMap<pulumi.ComponentResource, OutboxHandles>();

/** Keep `h` for `component`. */
export function keepHandles(component: pulumi.ComponentResource, h: OutboxHandles): void {
    handles.set(component, h);
}

/**
 * What {@link keepHandles} kept for `component`.
 *
 * @throws OutboxError `INVALID_CONFIG` when nothing was kept (the component's constructor did not finish).
 */
export function handlesOf(component: pulumi.ComponentResource): OutboxHandles {
    const h = handles.get(component);
    if (h === undefined)
        throw new OutboxError("INVALID_CONFIG", "this Outbox was not fully constructed: it has no nodes");
    return h;
}
