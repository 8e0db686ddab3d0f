/**
 * The Pulumi names of the {@link Outbox} component's children, derived from the component's name so that two
 * outboxes in one stack never collide and a rename of the component renames every child. Physical AWS names
 * are left to Pulumi's autonaming (a random suffix, or the stack's `pulumi:autonaming` config); for a FIFO topic
 * the AWS provider's autonaming appends the `.fifo` suffix AWS requires (pulumi-aws `aws_sns_topic` name
 * PostTransform). The dashboard is the exception, as the provider does not autoname it: see {@link dashboardName}.
 *
 * @packageDocumentation
 */
import { createHash } from "node:crypto";

/**
 * The component's type token (`<package>:index:<Class>`, as multi-language component hosting requires). Here
 * rather than in `outbox.ts` so the policy pack can recognise an Outbox's children without loading the component
 * and the runtime it serializes.
 */
export const OUTBOX_TYPE = "dynamodb-outbox:index:Outbox";

/** The suffix of each child's Pulumi name. The keys are also the `transform` keys, one per child. */
export const CHILD_SUFFIX = {
    table: "table",
    topic: "topic",
    queue: "dlq",
    publisher: "publisher",
    publisherRole: "publisher-role",
    publisherLogs: "publisher-logs",
    publisherVpcAccess: "publisher-vpc-access",
    eventSourceMapping: "stream-mapping",
    sweeper: "sweeper",
    sweeperRole: "sweeper-role",
    sweeperLogs: "sweeper-logs",
    sweeperVpcAccess: "sweeper-vpc-access",
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
    fencedPartitionsAlarm: "fenced-partitions-alarm",
    droppedEventsAlarm: "dropped-events-alarm",
    dashboard: "dashboard",
    payloadBucket: "payloads",
    payloadBucketPublicAccess: "payloads-public-access",
    payloadBucketPolicy: "payloads-policy",
    payloadBucketEncryption: "payloads-encryption",
    payloadBucketLifecycle: "payloads-lifecycle",
} as const;

/** A child of the component. */
export type OutboxChild = keyof typeof CHILD_SUFFIX;

/** The Pulumi name of `child` in the outbox named `outboxName`, e.g. `orders-stream-mapping`. */
export function childName(outboxName: string, child: OutboxChild): string {
    return `${outboxName}-${CHILD_SUFFIX[child]}`;
}

/** The length of {@link dashboardName}'s suffix, as long as the random suffix of Pulumi's default autonaming. */
export const DASHBOARD_SUFFIX_LENGTH = 7;

/**
 * The physical name of the outbox's dashboard. `aws.cloudwatch.Dashboard` requires `dashboardName` and the AWS
 * provider does not autoname it, so the component names it the way Pulumi's default autonaming names the other
 * children: the child's Pulumi name and a 7-character hex suffix, `<outbox name>-dashboard-<suffix>`. Autonaming's
 * suffix is random and kept in the state; this one is the start of the SHA-256 of the project, the stack and the
 * component's name, so each stack's dashboard has a name of its own (dashboard names are unique per account) and
 * keeps it from one update to the next. The component's name holds only characters a dashboard name may (letters,
 * digits, `-` and `_`).
 *
 * @param outboxName - the component's name.
 * @param project - the Pulumi project.
 * @param stack - the Pulumi stack.
 */
export function dashboardName(outboxName: string, project: string, stack: string): string {
    const suffix = createHash("sha256")
        .update(JSON.stringify([project, stack, outboxName]))
        .digest("hex")
        .slice(0, DASHBOARD_SUFFIX_LENGTH);
    return `${childName(outboxName, "dashboard")}-${suffix}`;
}
