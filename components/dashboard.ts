/**
 * The {@link Outbox}'s CloudWatch dashboard: the metrics its alarms watch, plus published and dead-lettered
 * records and what each published record costs in DynamoDB capacity units. The handlers' metric names, namespace
 * and dimensions come from `runtime/metric-catalog.ts`, like the alarms'.
 *
 * The runtime emits no cost metric of its own. The per-record cost widget divides DynamoDB's own
 * `ConsumedWriteCapacityUnits` and `ConsumedReadCapacityUnits` (the table's and each GSI's, from `runtime/schema.ts`)
 * by the records published (the publisher's and the sweeper's `Published`).
 *
 * @packageDocumentation
 */
import { GLOBAL_SECONDARY_INDEXES } from "../runtime/schema";
import { DELIVERY_METRICS, HANDLER_FUNCTIONS, METRIC_DIMENSIONS, METRIC_NAMESPACE, SWEEPER_METRICS, type HandlerFunction } from "../runtime/metric-catalog";
import { AWS_NAMESPACES } from "./alarms";

/** The resolved names a dashboard shows. */
export interface DashboardTargets {
    /** The region the widgets read from. */
    readonly region: string;
    /** The table's name. */
    readonly tableName: string;
    /** The publisher function's name. */
    readonly publisherFunctionName: string;
    /** The sweeper function's name. */
    readonly sweeperFunctionName: string;
    /** The DLQ's name. */
    readonly dlqName: string;
}

/** One entry of a metric widget's `metrics`: `[namespace, name, dim, value, …, options]`, or a math expression. */
export type DashboardMetric = (string | Record<string, unknown>)[];

/** One metric widget of the dashboard body. */
export interface DashboardWidget {
    readonly type: "metric";
    readonly x: number;
    readonly y: number;
    readonly width: number;
    readonly height: number;
    readonly properties: {
        readonly title: string;
        readonly region: string;
        readonly view: "timeSeries";
        readonly period: number;
        readonly metrics: DashboardMetric[];
    };
}

const WIDTH = 12;
const HEIGHT = 6;

/**
 * The dashboard body (`dashboardBody` is its JSON): seven widgets, two per row.
 *
 * @param t - The names the widgets show.
 */
export function dashboardBody(t: DashboardTargets): { widgets: DashboardWidget[] } {
    const custom = (name: string, fn: HandlerFunction, options: Record<string, unknown>): DashboardMetric => [
        METRIC_NAMESPACE,
        name,
        METRIC_DIMENSIONS.function,
        fn,
        METRIC_DIMENSIONS.table,
        t.tableName,
        options,
    ];
    const lambda = (name: string, functionName: string, options: Record<string, unknown>): DashboardMetric => [AWS_NAMESPACES.lambda, name, "FunctionName", functionName, options];
    const capacity = (metric: string, prefix: string): DashboardMetric[] => [
        [AWS_NAMESPACES.dynamodb, metric, "TableName", t.tableName, { id: `${prefix}0`, stat: "Sum", visible: false }],
        ...GLOBAL_SECONDARY_INDEXES.map((index, i): DashboardMetric => [
            AWS_NAMESPACES.dynamodb,
            metric,
            "TableName",
            t.tableName,
            "GlobalSecondaryIndexName",
            index.indexName,
            { id: `${prefix}${i + 1}`, stat: "Sum", visible: false },
        ]),
    ];
    const filled = (prefix: string): string => [0, ...GLOBAL_SECONDARY_INDEXES.map((_, i) => i + 1)].map((i) => `FILL(${prefix}${i}, 0)`).join(" + ");
    const published = "(FILL(p0, 0) + FILL(p1, 0))";
    const panels: { title: string; period: number; metrics: DashboardMetric[] }[] = [
        { title: "Stream lag: publisher IteratorAge (ms, max)", period: 60, metrics: [lambda("IteratorAge", t.publisherFunctionName, { stat: "Maximum" })] },
        { title: "Oldest undelivered record (ms, max)", period: 60, metrics: [custom(SWEEPER_METRICS.oldestPendingAge, HANDLER_FUNCTIONS.sweeper, { stat: "Maximum" })] },
        {
            title: "Write-to-publish age (ms)",
            period: 300,
            metrics: [
                custom(DELIVERY_METRICS.ageAtPublish, HANDLER_FUNCTIONS.publisher, { stat: "p50", label: "publisher p50" }),
                custom(DELIVERY_METRICS.ageAtPublish, HANDLER_FUNCTIONS.publisher, { stat: "p99", label: "publisher p99" }),
                custom(DELIVERY_METRICS.ageAtPublish, HANDLER_FUNCTIONS.sweeper, { stat: "p99", label: "sweeper p99" }),
            ],
        },
        {
            title: "Published and dead-lettered records",
            period: 300,
            metrics: [
                custom(DELIVERY_METRICS.published, HANDLER_FUNCTIONS.publisher, { stat: "Sum", label: "published by the publisher" }),
                custom(DELIVERY_METRICS.published, HANDLER_FUNCTIONS.sweeper, { stat: "Sum", label: "published by the sweeper (missed by the stream)" }),
                custom(DELIVERY_METRICS.deadLettered, HANDLER_FUNCTIONS.publisher, { stat: "Sum", label: "dead-lettered by the publisher" }),
                custom(DELIVERY_METRICS.deadLettered, HANDLER_FUNCTIONS.sweeper, { stat: "Sum", label: "dead-lettered by the sweeper" }),
            ],
        },
        { title: "DLQ depth (messages, max)", period: 300, metrics: [[AWS_NAMESPACES.sqs, "ApproximateNumberOfMessagesVisible", "QueueName", t.dlqName, { stat: "Maximum" }]] },
        {
            title: "Errors and throttles",
            period: 300,
            metrics: [
                lambda("Errors", t.publisherFunctionName, { stat: "Sum", label: "publisher errors" }),
                lambda("Throttles", t.publisherFunctionName, { stat: "Sum", label: "publisher throttles" }),
                lambda("Errors", t.sweeperFunctionName, { stat: "Sum", label: "sweeper errors" }),
            ],
        },
        {
            title: "Capacity units per published record (table and GSIs)",
            period: 300,
            metrics: [
                [{ expression: `(${filled("w")}) / ${published}`, label: "write units per record", id: "wpr" }],
                [{ expression: `(${filled("r")}) / ${published}`, label: "read units per record", id: "rpr" }],
                ...capacity("ConsumedWriteCapacityUnits", "w"),
                ...capacity("ConsumedReadCapacityUnits", "r"),
                custom(DELIVERY_METRICS.published, HANDLER_FUNCTIONS.publisher, { id: "p0", stat: "Sum", visible: false }),
                custom(DELIVERY_METRICS.published, HANDLER_FUNCTIONS.sweeper, { id: "p1", stat: "Sum", visible: false }),
            ],
        },
    ];
    return {
        widgets: panels.map((p, i) => ({
            type: "metric",
            x: (i % 2) * WIDTH,
            y: Math.floor(i / 2) * HEIGHT,
            width: WIDTH,
            height: HEIGHT,
            properties: { title: p.title, region: t.region, view: "timeSeries", period: p.period, metrics: p.metrics },
        })),
    };
}
