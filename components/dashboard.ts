/**
 * The {@link Outbox}'s CloudWatch dashboard: the metrics its alarms watch, plus published and dead-lettered
 * records and what each published record costs in DynamoDB capacity units. The handlers' metric names, namespace
 * and dimensions come from `runtime/observability/metric-catalog.ts`, like the alarms'.
 *
 * The runtime emits no cost metric of its own. The per-record cost widget divides DynamoDB's own
 * `ConsumedWriteCapacityUnits` and `ConsumedReadCapacityUnits` (the table's and each GSI's, from `runtime/schema.ts`)
 * by the records published (the publisher's and the sweeper's `Published`).
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { GLOBAL_SECONDARY_INDEXES } from "../runtime/schema";
import {
    DELIVERY_METRICS,
    HANDLER_FUNCTIONS,
    METRIC_DIMENSIONS,
    METRIC_NAMESPACE,
    SWEEPER_METRICS,
    type HandlerFunction,
} from "../runtime/observability/metric-catalog";
import { AWS_NAMESPACES, type MonitoredOutbox } from "./alarms";
import { dashboardName } from "./naming";
import { transformed } from "./transform";
import type { OutboxParent } from "./handlers";

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
    /** The stream mapping's UUID. */
    readonly mappingUuid: string;
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

/** One panel: its title, period and metrics; its place on the grid comes from its position in the list. */
interface DashboardPanel {
    readonly title: string;
    readonly period: number;
    readonly metrics: DashboardMetric[];
}

/** One of the handlers' own metrics, with its `Function` and `Table` dimensions. */
function customMetric(
    t: DashboardTargets,
    name: string,
    fn: HandlerFunction,
    options: Record<string, unknown>,
): DashboardMetric {
    return [METRIC_NAMESPACE, name, METRIC_DIMENSIONS.function, fn, METRIC_DIMENSIONS.table, t.tableName, options];
}

/** A Lambda metric of one function. */
function lambdaMetric(name: string, functionName: string, options: Record<string, unknown>): DashboardMetric {
    return [AWS_NAMESPACES.lambda, name, "FunctionName", functionName, options];
}

/** The table's and each GSI's `metric`, hidden, with ids `<prefix>0` (the table), `<prefix>1`… (the GSIs). */
function capacityMetrics(t: DashboardTargets, metric: string, prefix: string): DashboardMetric[] {
    return [
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
}

/** The capacity units of the table and its GSIs, per record published by either handler. */
function costPanel(t: DashboardTargets): DashboardPanel {
    const filled = (prefix: string): string =>
        [0, ...GLOBAL_SECONDARY_INDEXES.map((_, i) => i + 1)].map((i) => `FILL(${prefix}${i}, 0)`).join(" + ");
    const published = "(FILL(p0, 0) + FILL(p1, 0))";
    return {
        title: "Capacity units per published record (table and GSIs)",
        period: 300,
        metrics: [
            [{ expression: `(${filled("w")}) / ${published}`, label: "write units per record", id: "wpr" }],
            [{ expression: `(${filled("r")}) / ${published}`, label: "read units per record", id: "rpr" }],
            ...capacityMetrics(t, "ConsumedWriteCapacityUnits", "w"),
            ...capacityMetrics(t, "ConsumedReadCapacityUnits", "r"),
            customMetric(t, DELIVERY_METRICS.published, HANDLER_FUNCTIONS.publisher, {
                id: "p0",
                stat: "Sum",
                visible: false,
            }),
            customMetric(t, DELIVERY_METRICS.published, HANDLER_FUNCTIONS.sweeper, {
                id: "p1",
                stat: "Sum",
                visible: false,
            }),
        ],
    };
}

/** The seven panels, in grid order. */
function dashboardPanels(t: DashboardTargets): DashboardPanel[] {
    const custom = (name: string, fn: HandlerFunction, options: Record<string, unknown>): DashboardMetric =>
        customMetric(t, name, fn, options);
    const sum = (name: string, fn: HandlerFunction, label: string): DashboardMetric =>
        custom(name, fn, { stat: "Sum", label });
    const { publisher, sweeper } = HANDLER_FUNCTIONS;
    return [
        {
            title: "Stream lag: publisher IteratorAge (ms, max)",
            period: 60,
            metrics: [lambdaMetric("IteratorAge", t.publisherFunctionName, { stat: "Maximum" })],
        },
        {
            title: "Oldest undelivered record (ms, max)",
            period: 60,
            metrics: [custom(SWEEPER_METRICS.oldestPendingAge, sweeper, { stat: "Maximum" })],
        },
        {
            title: "Write-to-publish age (ms)",
            period: 300,
            metrics: [
                custom(DELIVERY_METRICS.ageAtPublish, publisher, { stat: "p50", label: "publisher p50" }),
                custom(DELIVERY_METRICS.ageAtPublish, publisher, { stat: "p99", label: "publisher p99" }),
                custom(DELIVERY_METRICS.ageAtPublish, sweeper, { stat: "p99", label: "sweeper p99" }),
            ],
        },
        {
            title: "Published and dead-lettered records",
            period: 300,
            metrics: [
                sum(DELIVERY_METRICS.published, publisher, "published by the publisher"),
                sum(DELIVERY_METRICS.published, sweeper, "published by the sweeper (missed by the stream)"),
                sum(DELIVERY_METRICS.deadLettered, publisher, "dead-lettered by the publisher"),
                sum(DELIVERY_METRICS.deadLettered, sweeper, "dead-lettered by the sweeper"),
            ],
        },
        {
            title: "DLQ depth (messages, max) and stream records the mapping dropped",
            period: 300,
            metrics: [
                [AWS_NAMESPACES.sqs, "ApproximateNumberOfMessagesVisible", "QueueName", t.dlqName, { stat: "Maximum" }],
                [
                    AWS_NAMESPACES.lambda,
                    "DroppedEventCount",
                    "EventSourceMappingUUID",
                    t.mappingUuid,
                    { stat: "Sum", label: "dropped by the stream mapping" },
                ],
            ],
        },
        {
            title: "Errors, throttles and fenced partitions",
            period: 300,
            metrics: [
                lambdaMetric("Errors", t.publisherFunctionName, { stat: "Sum", label: "publisher errors" }),
                lambdaMetric("Throttles", t.publisherFunctionName, { stat: "Sum", label: "publisher throttles" }),
                lambdaMetric("Errors", t.sweeperFunctionName, { stat: "Sum", label: "sweeper errors" }),
                sum(DELIVERY_METRICS.fencedPartitions, publisher, "partitions fenced above claimVersion (publisher)"),
                sum(DELIVERY_METRICS.fencedPartitions, sweeper, "partitions fenced above claimVersion (sweeper)"),
            ],
        },
        costPanel(t),
    ];
}

/**
 * The dashboard body (`dashboardBody` is its JSON): seven widgets, two per row.
 *
 * @param t - The names the widgets show.
 */
export function dashboardBody(t: DashboardTargets): { widgets: DashboardWidget[] } {
    return {
        widgets: dashboardPanels(t).map((p, i) => ({
            type: "metric",
            x: (i % 2) * WIDTH,
            y: Math.floor(i / 2) * HEIGHT,
            width: WIDTH,
            height: HEIGHT,
            properties: { title: p.title, region: t.region, view: "timeSeries", period: p.period, metrics: p.metrics },
        })),
    };
}

/**
 * Declare the dashboard of the outbox `o` as its child, with `transform.dashboard` applied to its args.
 *
 * @param o - The component, its name, settings and `transform`.
 * @param t - The outputs the widgets show, and the table's ARN, whose region they read from.
 */
export function declareOutboxDashboard(
    o: OutboxParent,
    t: MonitoredOutbox & { readonly tableArn: pulumi.Output<string> },
): aws.cloudwatch.Dashboard {
    const { name, parent } = o;
    // The table's region, from its ARN: the metrics are there, and no data source call is needed.
    const region = t.tableArn.apply((arn) => arn.split(":")[3] ?? "");
    const body = pulumi
        .all([region, t.tableName, t.publisherFunctionName, t.sweeperFunctionName, t.dlqName, t.mappingUuid])
        .apply(([r, tableName, publisherFunctionName, sweeperFunctionName, dlqName, mappingUuid]) =>
            JSON.stringify(
                dashboardBody({
                    region: r,
                    tableName,
                    publisherFunctionName,
                    sweeperFunctionName,
                    dlqName,
                    mappingUuid,
                }),
            ),
        );
    return new aws.cloudwatch.Dashboard(
        ...transformed(
            o,
            "dashboard",
            { dashboardName: dashboardName(name, pulumi.getProject(), pulumi.getStack()), dashboardBody: body },
            { parent },
        ),
    );
}
