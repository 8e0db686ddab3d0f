/**
 * The {@link Outbox}'s CloudWatch alarms: one per way an outbox fails quietly. Metric names, the namespace and the
 * dimensions of the handlers' own metrics come from `runtime/observability/metric-catalog.ts`, the module the handlers' EMF
 * lines are written from; a test runs the real handlers and fails if an alarm names a metric they never emit.
 *
 * Every alarm fires when its statistic is greater than its threshold (`alarmThresholds`, defaults in
 * `ALARM_THRESHOLD_RANGES`), and notifies `alarmActions` on ALARM and again on OK, so an on-call tool that opens an
 * incident also resolves it.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import {
    DELIVERY_METRICS,
    HANDLER_FUNCTIONS,
    METRIC_NAMESPACE,
    SWEEPER_METRICS,
    handlerDimensions,
    type HandlerFunction,
} from "../runtime/observability/metric-catalog";
import { DESTINATION_LABELS } from "../runtime/destination/kind";
import { withTags } from "./children";
import type { OutboxParent } from "./handlers";
import type { OutboxChild } from "./naming";
import type { OutboxSettings } from "./settings";
import { transformed } from "./transform";

/** The AWS namespaces the alarms read besides the handlers' own. */
export const AWS_NAMESPACES = { lambda: "AWS/Lambda", sqs: "AWS/SQS", dynamodb: "AWS/DynamoDB" } as const;

/** The outputs the alarms and the dashboard are built from. */
export interface MonitoredOutbox {
    /** The table's name (the handlers' `Table` dimension). */
    readonly tableName: pulumi.Input<string>;
    /** The publisher function's name. */
    readonly publisherFunctionName: pulumi.Input<string>;
    /** The sweeper function's name. */
    readonly sweeperFunctionName: pulumi.Input<string>;
    /** The DLQ's name (its `QueueName` dimension). */
    readonly dlqName: pulumi.Input<string>;
    /** The stream mapping's UUID (the `EventSourceMappingUUID` dimension of its event counts). */
    readonly mappingUuid: pulumi.Input<string>;
}

/** One alarm: the child it is declared as, and its args. */
export interface OutboxAlarm {
    /** Its child key; the Pulumi name is `childName(outbox name, child)`. */
    readonly child: OutboxChild;
    /** The `aws.cloudwatch.MetricAlarm` args. */
    readonly args: aws.cloudwatch.MetricAlarmArgs;
}

/** Five minutes, in seconds: the period of every alarm but the stream lag's. */
const FIVE_MINUTES = 300;

/** The interval of a `rate(N unit)` schedule in seconds; `undefined` for a cron expression or an unknown value. */
export function scheduleIntervalSeconds(schedule: unknown): number | undefined {
    const rate = typeof schedule === "string" ? /^rate\((\d+) (minute|hour|day)s?\)$/.exec(schedule) : null;
    if (rate === null) return undefined;
    return Number(rate[1]) * { minute: 60, hour: 3600, day: 86400 }[rate[2] as "minute" | "hour" | "day"];
}

/** The dimensions of one handler's custom metrics, as the runtime writes them. */
function customDimensions(fn: HandlerFunction, tableName: pulumi.Input<string>): pulumi.Output<Record<string, string>> {
    return pulumi.output(tableName).apply((table) => handlerDimensions(fn, table));
}

/** The args every alarm shares: how it compares, whom it notifies, its tags. */
type CommonAlarmArgs = Pick<
    aws.cloudwatch.MetricAlarmArgs,
    "comparisonOperator" | "alarmActions" | "okActions" | "tags"
>;

/** One alarm's metric, statistic, evaluation and threshold: its args but the common ones and the description. */
type AlarmMetric = Omit<aws.cloudwatch.MetricAlarmArgs, keyof CommonAlarmArgs | "alarmDescription" | "threshold"> & {
    readonly threshold: pulumi.Input<number>;
};

/** What the alarms are built from. */
interface AlarmContext {
    /** The component's name. */
    readonly name: string;
    readonly common: CommonAlarmArgs;
    readonly th: OutboxSettings["alarmThresholds"];
    readonly t: MonitoredOutbox;
    /** Whether an empty period of the sweeper's OldestPendingAge breaches. */
    readonly sweeperSilence: pulumi.Output<string>;
    /** What the destination is called: `SNS`, `SQS` or `EventBridge`. */
    readonly destination: string;
}

/** One alarm's child key, what it means and what to do, and its metric. */
interface AlarmSpec extends AlarmMetric {
    /** Its child key. */
    readonly child: OutboxChild;
    /** What the alarm means, given its threshold. */
    readonly says: (threshold: number) => string;
    /** The first thing to do about it. */
    readonly action: string;
}

/** One alarm: the common args, the metric, and a description that says what crossed the threshold and what to do. */
function alarm(c: AlarmContext, { child, says, action, ...metric }: AlarmSpec): OutboxAlarm {
    // A threshold may be an Output (a StackReference's, say): the description quotes it once it resolves.
    const alarmDescription = pulumi
        .output(metric.threshold)
        .apply((v) => `dynamodb-outbox "${c.name}": ${says(v)}. ${action} (docs/operations.md, Alarms).`);
    return { child, args: { ...c.common, alarmDescription, ...metric } };
}

/** The alarms on lateness: the stream's lag, the oldest pending record, the age at publish. */
function latenessAlarms(c: AlarmContext): OutboxAlarm[] {
    const { th, t } = c;
    return [
        alarm(c, {
            child: "iteratorAgeAlarm",
            says: (v) => `the publisher's stream lag (IteratorAge) is above ${v} ms`,
            action: "Look for a failing batch in the publisher's logs and the DLQ; records past maximumRecordAgeInSeconds fall to the sweeper",
            namespace: AWS_NAMESPACES.lambda,
            metricName: "IteratorAge",
            dimensions: { FunctionName: t.publisherFunctionName },
            statistic: "Maximum",
            period: 60,
            evaluationPeriods: 3,
            datapointsToAlarm: 3,
            threshold: th.iteratorAgeMs,
            // Lambda reports IteratorAge only for invocations: no data means no records to be behind on.
            treatMissingData: "notBreaching",
        }),
        alarm(c, {
            child: "oldestPendingAlarm",
            says: (v) => `a record has waited more than ${v} ms undelivered, or the sweeper reported nothing`,
            action: "Run dynamodb-outbox doctor: check the mapping is enabled, the sweeper's schedule and its errors",
            namespace: METRIC_NAMESPACE,
            metricName: SWEEPER_METRICS.oldestPendingAge,
            dimensions: customDimensions(HANDLER_FUNCTIONS.sweeper, t.tableName),
            statistic: "Maximum",
            period: FIVE_MINUTES,
            evaluationPeriods: 2,
            datapointsToAlarm: 2,
            threshold: th.oldestPendingAgeMs,
            treatMissingData: c.sweeperSilence,
        }),
        alarm(c, {
            child: "ageAtPublishAlarm",
            says: (v) => `the p99 write-to-publish age of the publisher's records is above ${v} ms`,
            action: `Check the publisher's IteratorAge, throttles and ${c.destination} errors`,
            namespace: METRIC_NAMESPACE,
            metricName: DELIVERY_METRICS.ageAtPublish,
            dimensions: customDimensions(HANDLER_FUNCTIONS.publisher, t.tableName),
            extendedStatistic: "p99",
            period: FIVE_MINUTES,
            evaluationPeriods: 2,
            datapointsToAlarm: 2,
            threshold: th.ageAtPublishP99Ms,
            // Written only when records are published: no data means nothing was late.
            treatMissingData: "notBreaching",
        }),
    ];
}

/** The alarms on what the relay could not deliver: dead letters, and records only the sweeper caught. */
function missedDeliveryAlarms(c: AlarmContext): OutboxAlarm[] {
    const { th, t } = c;
    return [
        alarm(c, {
            child: "dlqDepthAlarm",
            says: (v) => `the dead-letter queue holds more than ${v} messages`,
            action: "Read the messages' reason, fix the cause, then dynamodb-outbox redrive",
            namespace: AWS_NAMESPACES.sqs,
            metricName: "ApproximateNumberOfMessagesVisible",
            dimensions: { QueueName: t.dlqName },
            statistic: "Maximum",
            period: FIVE_MINUTES,
            evaluationPeriods: 1,
            threshold: th.dlqDepth,
            // SQS stops reporting only for a queue idle and empty for six hours: nothing to redrive.
            treatMissingData: "notBreaching",
        }),
        // FilteredOutEventCount cannot say which events the filter dropped: every claim, completion and TTL removal
        // of an outbox record is a MODIFY or REMOVE the filter drops on purpose, as is every business item written
        // beside it, and the metric has no dimension but the mapping. So the alarm watches DroppedEventCount:
        // records the mapping gave up on (past maximumRetryAttempts or maximumRecordAgeInSeconds).
        alarm(c, {
            child: "droppedEventsAlarm",
            says: (v) =>
                `the stream mapping dropped more than ${v} records after its retries or past its maximum record age`,
            action: "Read the DLQ's batch descriptions and the publisher's errors; the sweeper publishes the dropped records still pending",
            namespace: AWS_NAMESPACES.lambda,
            metricName: "DroppedEventCount",
            dimensions: { EventSourceMappingUUID: t.mappingUuid },
            statistic: "Sum",
            period: FIVE_MINUTES,
            evaluationPeriods: 1,
            threshold: th.droppedEvents,
            // Counted only when the mapping drops something: no data means nothing was dropped.
            treatMissingData: "notBreaching",
        }),
        alarm(c, {
            child: "sweeperPublishedAlarm",
            says: (v) => `the sweeper published more than ${v} records the stream path missed`,
            action: "Check the stream mapping (enabled, its filter, its last processing result) with dynamodb-outbox doctor",
            namespace: METRIC_NAMESPACE,
            metricName: DELIVERY_METRICS.published,
            dimensions: customDimensions(HANDLER_FUNCTIONS.sweeper, t.tableName),
            statistic: "Sum",
            period: FIVE_MINUTES,
            evaluationPeriods: 1,
            threshold: th.sweeperPublished,
            // The counter is written only when the sweeper published something: no data means nothing.
            treatMissingData: "notBreaching",
        }),
    ];
}

/** The alarms on the functions: errors of each, and the publisher's throttles. */
function functionAlarms(c: AlarmContext): OutboxAlarm[] {
    const { th, t } = c;
    return [
        ...(["publisher", "sweeper"] as const).map((fn) =>
            alarm(c, {
                child: fn === "publisher" ? "publisherErrorsAlarm" : "sweeperErrorsAlarm",
                says: (v) => `the ${fn} failed more than ${v} invocations`,
                action: `Read the ${fn}'s log group for the error`,
                namespace: AWS_NAMESPACES.lambda,
                metricName: "Errors",
                dimensions: { FunctionName: fn === "publisher" ? t.publisherFunctionName : t.sweeperFunctionName },
                statistic: "Sum",
                period: FIVE_MINUTES,
                evaluationPeriods: 1,
                threshold: th.errors,
                // No invocation, no error.
                treatMissingData: "notBreaching",
            }),
        ),
        alarm(c, {
            child: "publisherThrottlesAlarm",
            says: (v) => `more than ${v} publisher invocations were throttled`,
            action: "Raise the account's or the function's concurrency; a throttled shard waits",
            namespace: AWS_NAMESPACES.lambda,
            metricName: "Throttles",
            dimensions: { FunctionName: t.publisherFunctionName },
            statistic: "Sum",
            period: FIVE_MINUTES,
            evaluationPeriods: 1,
            threshold: th.throttles,
            // No invocation, no throttle.
            treatMissingData: "notBreaching",
        }),
    ];
}

/**
 * The alarm on partitions fenced above `claimVersion`: the publisher's and the sweeper's `FencedPartitions`, summed
 * (either may be the one that meets the partition: a doorbell on the stream, or a due record in a sweep).
 */
function fenceAlarms(c: AlarmContext): OutboxAlarm[] {
    const { th, t } = c;
    const ids = { publisher: "publisher", sweeper: "sweeper" } as const satisfies Record<HandlerFunction, string>;
    return [
        alarm(c, {
            child: "fencedPartitionsAlarm",
            says: (v) =>
                `more than ${v} partitions refused the relay's claims because their fence is above its claimVersion; their records are not delivered`,
            action: "Read the publisher's or the sweeper's error log for the partition and both versions; set claimVersion to at least the fence's version on every relay of the table, or stop the other claimer",
            metricQueries: [
                {
                    id: "fenced",
                    expression: `FILL(${ids.publisher}, 0) + FILL(${ids.sweeper}, 0)`,
                    label: "partitions fenced above claimVersion",
                    returnData: true,
                },
                ...(Object.values(HANDLER_FUNCTIONS) as HandlerFunction[]).map((fn) => ({
                    id: ids[fn],
                    returnData: false,
                    metric: {
                        namespace: METRIC_NAMESPACE,
                        metricName: DELIVERY_METRICS.fencedPartitions,
                        dimensions: customDimensions(fn, t.tableName),
                        stat: "Sum",
                        period: FIVE_MINUTES,
                    },
                })),
            ],
            evaluationPeriods: 1,
            threshold: th.fencedPartitions,
            // Written only when a claim was fenced: no data means none was.
            treatMissingData: "notBreaching",
        }),
    ];
}

/**
 * The args of every alarm of an outbox named `name` (none when `s.alarms` is false).
 *
 * @param name - The component's name, quoted in each alarm's description.
 * @param s - The resolved settings: thresholds, actions, schedule, tags.
 * @param t - The outputs the alarms watch.
 */
export function outboxAlarms(name: string, s: OutboxSettings, t: MonitoredOutbox): OutboxAlarm[] {
    if (!s.alarms) return [];
    const common: CommonAlarmArgs = {
        comparisonOperator: "GreaterThanThreshold",
        alarmActions: s.alarmActions,
        okActions: s.alarmActions,
        tags: withTags(s.tags),
    };
    // The sweeper emits OldestPendingAge on every run, so a five-minute period with no value means the safety net
    // did not run (rule disabled, scan failing, function broken): breaching, when the schedule runs at least that
    // often. With a slower or cron schedule an empty period is normal, so it is not.
    const sweeperSilence = pulumi.output(s.sweepSchedule).apply((schedule) => {
        const interval = scheduleIntervalSeconds(schedule);
        return interval !== undefined && interval <= FIVE_MINUTES ? "breaching" : "notBreaching";
    });
    const c: AlarmContext = {
        name,
        common,
        th: s.alarmThresholds,
        t,
        sweeperSilence,
        destination: DESTINATION_LABELS[s.destinationKind],
    };
    return [...latenessAlarms(c), ...missedDeliveryAlarms(c), ...functionAlarms(c), ...fenceAlarms(c)];
}

/**
 * Declare the alarms of {@link outboxAlarms} as children of the outbox, each with its `transform` key applied.
 *
 * @param o - The component, its name, settings and `transform`.
 * @param t - The outputs the alarms watch.
 * @returns the alarms, in the order of {@link outboxAlarms}.
 */
export function declareOutboxAlarms(o: OutboxParent, t: MonitoredOutbox): aws.cloudwatch.MetricAlarm[] {
    return outboxAlarms(o.name, o.s, t).map(
        (a) => new aws.cloudwatch.MetricAlarm(...transformed(o, a.child, a.args, { parent: o.parent })),
    );
}
