/**
 * The {@link Outbox}'s CloudWatch alarms: one per way an outbox fails quietly. Metric names, the namespace and the
 * dimensions of the handlers' own metrics come from `runtime/metric-catalog.ts`, the module the handlers' EMF
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
import { DELIVERY_METRICS, HANDLER_FUNCTIONS, METRIC_NAMESPACE, SWEEPER_METRICS, handlerDimensions, type HandlerFunction } from "../runtime/metric-catalog";
import { withTags } from "./children";
import { OutboxChild, childName } from "./naming";
import type { OutboxSettings } from "./settings";

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

/**
 * The args of every alarm of an outbox named `name` (none when `s.alarms` is false).
 *
 * @param name - The component's name, quoted in each alarm's description.
 * @param s - The resolved settings: thresholds, actions, schedule, tags.
 * @param t - The outputs the alarms watch.
 */
export function outboxAlarms(name: string, s: OutboxSettings, t: MonitoredOutbox): OutboxAlarm[] {
    if (!s.alarms) return [];
    const th = s.alarmThresholds;
    const common = {
        comparisonOperator: "GreaterThanThreshold",
        alarmActions: s.alarmActions,
        okActions: s.alarmActions,
        tags: withTags(s.tags),
    };
    // A threshold may be an Output (a StackReference's, say): the description quotes it once it resolves.
    const about = (what: (threshold: number) => string, threshold: pulumi.Input<number>, action: string): pulumi.Output<string> =>
        pulumi.output(threshold).apply((t) => `dynamodb-outbox "${name}": ${what(t)}. ${action} (docs/operations.md, Alarms).`);
    // The sweeper emits OldestPendingAge on every run, so a five-minute period with no value means the safety net
    // did not run (rule disabled, scan failing, function broken): breaching, when the schedule runs at least that
    // often. With a slower or cron schedule an empty period is normal, so it is not.
    const sweeperSilence = pulumi.output(s.sweepSchedule).apply((schedule) => {
        const interval = scheduleIntervalSeconds(schedule);
        return interval !== undefined && interval <= FIVE_MINUTES ? "breaching" : "notBreaching";
    });
    return [
        {
            child: "iteratorAgeAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `the publisher's stream lag (IteratorAge) is above ${t} ms`, th.iteratorAgeMs, "Look for a failing batch in the publisher's logs and the DLQ; records past maximumRecordAgeInSeconds fall to the sweeper"),
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
            },
        },
        {
            child: "oldestPendingAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `a record has waited more than ${t} ms undelivered, or the sweeper reported nothing`, th.oldestPendingAgeMs, "Run dynamodb-outbox doctor: check the mapping is enabled, the sweeper's schedule and its errors"),
                namespace: METRIC_NAMESPACE,
                metricName: SWEEPER_METRICS.oldestPendingAge,
                dimensions: customDimensions(HANDLER_FUNCTIONS.sweeper, t.tableName),
                statistic: "Maximum",
                period: FIVE_MINUTES,
                evaluationPeriods: 2,
                datapointsToAlarm: 2,
                threshold: th.oldestPendingAgeMs,
                treatMissingData: sweeperSilence,
            },
        },
        {
            child: "ageAtPublishAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `the p99 write-to-publish age of the publisher's records is above ${t} ms`, th.ageAtPublishP99Ms, "Check the publisher's IteratorAge, throttles and SNS errors"),
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
            },
        },
        {
            child: "dlqDepthAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `the dead-letter queue holds more than ${t} messages`, th.dlqDepth, "Read the messages' reason, fix the cause, then dynamodb-outbox redrive"),
                namespace: AWS_NAMESPACES.sqs,
                metricName: "ApproximateNumberOfMessagesVisible",
                dimensions: { QueueName: t.dlqName },
                statistic: "Maximum",
                period: FIVE_MINUTES,
                evaluationPeriods: 1,
                threshold: th.dlqDepth,
                // SQS stops reporting only for a queue idle and empty for six hours: nothing to redrive.
                treatMissingData: "notBreaching",
            },
        },
        {
            child: "sweeperPublishedAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `the sweeper published more than ${t} records the stream path missed`, th.sweeperPublished, "Check the stream mapping (enabled, its filter, its last processing result) with dynamodb-outbox doctor"),
                namespace: METRIC_NAMESPACE,
                metricName: DELIVERY_METRICS.published,
                dimensions: customDimensions(HANDLER_FUNCTIONS.sweeper, t.tableName),
                statistic: "Sum",
                period: FIVE_MINUTES,
                evaluationPeriods: 1,
                threshold: th.sweeperPublished,
                // The counter is written only when the sweeper published something: no data means nothing.
                treatMissingData: "notBreaching",
            },
        },
        ...(["publisher", "sweeper"] as const).map((fn): OutboxAlarm => ({
            child: fn === "publisher" ? "publisherErrorsAlarm" : "sweeperErrorsAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `the ${fn} failed more than ${t} invocations`, th.errors, `Read the ${fn}'s log group for the error`),
                namespace: AWS_NAMESPACES.lambda,
                metricName: "Errors",
                dimensions: { FunctionName: fn === "publisher" ? t.publisherFunctionName : t.sweeperFunctionName },
                statistic: "Sum",
                period: FIVE_MINUTES,
                evaluationPeriods: 1,
                threshold: th.errors,
                // No invocation, no error.
                treatMissingData: "notBreaching",
            },
        })),
        {
            child: "publisherThrottlesAlarm",
            args: {
                ...common,
                alarmDescription: about((t) => `more than ${t} publisher invocations were throttled`, th.throttles, "Raise the account's or the function's concurrency; a throttled shard waits"),
                namespace: AWS_NAMESPACES.lambda,
                metricName: "Throttles",
                dimensions: { FunctionName: t.publisherFunctionName },
                statistic: "Sum",
                period: FIVE_MINUTES,
                evaluationPeriods: 1,
                threshold: th.throttles,
                // No invocation, no throttle.
                treatMissingData: "notBreaching",
            },
        },
    ];
}

/**
 * Declare the alarms of {@link outboxAlarms} as children of `parent`.
 *
 * @returns the alarms, in the order of {@link outboxAlarms}.
 */
export function declareOutboxAlarms(parent: pulumi.Resource, name: string, s: OutboxSettings, t: MonitoredOutbox): aws.cloudwatch.MetricAlarm[] {
    return outboxAlarms(name, s, t).map((a) => new aws.cloudwatch.MetricAlarm(childName(name, a.child), a.args, { parent }));
}
