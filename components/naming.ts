/**
 * The Pulumi names of the {@link Outbox} component's children, derived from the component's name so that two
 * outboxes in one stack never collide and a rename of the component renames every child. Physical AWS names
 * are left to Pulumi's auto-naming (a random suffix); for a FIFO topic the AWS provider's auto-naming appends the
 * `.fifo` suffix AWS requires (pulumi-aws `aws_sns_topic` name PostTransform). The log groups are the exception:
 * see {@link logGroupName}.
 *
 * @packageDocumentation
 */

/**
 * The component's type token (`<package>:index:<Class>`, as multi-language component hosting requires). Here
 * rather than in `outbox.ts` so the policy pack can recognise an Outbox's children without loading the component
 * and the runtime it serializes.
 */
export const OUTBOX_TYPE = "dynamodb-outbox:index:Outbox";

/** The suffix of each child's Pulumi name. The keys are also the `transform` keys where one exists. */
export const CHILD_SUFFIX = {
    table: "table",
    topic: "topic",
    queue: "dlq",
    publisher: "publisher",
    publisherRole: "publisher-role",
    publisherLogs: "publisher-logs",
    eventSourceMapping: "stream-mapping",
    sweeper: "sweeper",
    sweeperRole: "sweeper-role",
    sweeperLogs: "sweeper-logs",
    schedule: "sweep-schedule",
    scheduleTarget: "sweep-target",
    schedulePermission: "sweep-permission",
    iteratorAgeAlarm: "iterator-age-alarm",
    oldestPendingAlarm: "oldest-pending-alarm",
    ageAtPublishAlarm: "age-at-publish-alarm",
    dlqDepthAlarm: "dlq-depth-alarm",
    sweeperPublishedAlarm: "sweeper-published-alarm",
    publisherErrorsAlarm: "publisher-errors-alarm",
    publisherThrottlesAlarm: "publisher-throttles-alarm",
    sweeperErrorsAlarm: "sweeper-errors-alarm",
    dashboard: "dashboard",
} as const;

/** A child of the component. */
export type OutboxChild = keyof typeof CHILD_SUFFIX;

/** The Pulumi name of `child` in the outbox named `outboxName`, e.g. `orders-stream-mapping`. */
export function childName(outboxName: string, child: OutboxChild): string {
    return `${outboxName}-${CHILD_SUFFIX[child]}`;
}

/**
 * The physical name of a function's log group: `/aws/lambda/<project>-<stack>-<child name>`, under the prefix
 * Lambda uses for its own groups. Project and stack keep it unique per account and region.
 */
export function logGroupName(project: string, stack: string, outboxName: string, child: "publisher" | "sweeper"): string {
    return `/aws/lambda/${project}-${stack}-${childName(outboxName, child)}`;
}

/**
 * The physical name of the outbox's dashboard: `<project>-<stack>-<outbox name>`, unique per account and region
 * like the log groups (CloudWatch requires a name), with any character a dashboard name cannot hold (only letters,
 * digits, `-` and `_`) replaced by `-`.
 */
export function dashboardName(project: string, stack: string, outboxName: string): string {
    return `${project}-${stack}-${outboxName}`.replace(/[^A-Za-z0-9_-]/g, "-");
}
