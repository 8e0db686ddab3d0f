/**
 * The Outbox's alarms and dashboard under the Pulumi mocks: every alarm's metric, namespace, dimensions,
 * statistic, threshold, period, evaluation periods, missing-data rule and actions, as declared; thresholds and
 * actions from the args; `alarms: false` and `dashboard: false` declare none.
 */
import * as assert from "node:assert/strict";
import { ALARM_THRESHOLD_RANGES } from "../../../components/defaults";
import { scheduleIntervalSeconds } from "../../../components/alarms";
import { dashboardName } from "../../../components/naming";
import { unwrap } from "../../support/pulumi-mocks";
import { BuiltOutbox, TYPE, buildOutbox } from "../../support/component-harness";

const ONCALL = "arn:aws:sns:eu-west-1:111111111111:oncall";
const PAGER = "arn:aws:sns:eu-west-1:111111111111:pager";

/** The fields of an alarm a test asserts, in one object. */
function alarmShape(inputs: Record<string, any>): Record<string, unknown> {
    const keys = [
        "namespace",
        "metricName",
        "dimensions",
        "statistic",
        "extendedStatistic",
        "threshold",
        "comparisonOperator",
        "period",
        "evaluationPeriods",
        "datapointsToAlarm",
        "treatMissingData",
        "metricQueries",
        "alarmActions",
        "okActions",
    ];
    return Object.fromEntries(keys.filter((k) => inputs[k] !== undefined).map((k) => [k, inputs[k]]));
}

/** The alarm shapes of a built outbox, by Pulumi name. */
function alarmsOf(built: BuiltOutbox): Record<string, Record<string, unknown>> {
    return Object.fromEntries(
        built.resources.filter((r) => r.type === TYPE.alarm).map((r) => [r.name, alarmShape(r.inputs)]),
    );
}

describe("Outbox alarms and dashboard (Pulumi mocks)", () => {
    let built: BuiltOutbox;
    let names: { table: string; publisher: string; sweeper: string; dlq: string; mappingUuid: string };

    before(async () => {
        built = await buildOutbox("alm", { alarmActions: [ONCALL, PAGER] });
        names = {
            table: built.one(TYPE.table).computed!.name,
            publisher: built.one(TYPE.fn, "alm-publisher").computed!.name,
            sweeper: built.one(TYPE.fn, "alm-sweeper").computed!.name,
            dlq: built.one(TYPE.queue).computed!.name,
            mappingUuid: built.one(TYPE.mapping).computed!.uuid,
        };
    });

    it("declares each alarm with its metric, statistic, threshold, period, evaluation periods, missing-data rule and actions", () => {
        const actions = {
            alarmActions: [ONCALL, PAGER],
            okActions: [ONCALL, PAGER],
            comparisonOperator: "GreaterThanThreshold",
        };
        const custom = (fn: string) => ({ Function: fn, Table: names.table });
        /** The shape of the alarms that fire on any datapoint above 0 in one five-minute period. */
        const anyInFiveMinutes = {
            threshold: 0,
            period: 300,
            evaluationPeriods: 1,
            treatMissingData: "notBreaching",
            ...actions,
        };
        const lambda = (metricName: string, functionName: string) => ({
            namespace: "AWS/Lambda",
            metricName,
            dimensions: { FunctionName: functionName },
            statistic: "Sum",
            ...anyInFiveMinutes,
        });
        assert.deepEqual(alarmsOf(built), {
            "alm-iterator-age-alarm": {
                namespace: "AWS/Lambda",
                metricName: "IteratorAge",
                dimensions: { FunctionName: names.publisher },
                statistic: "Maximum",
                threshold: 60000,
                period: 60,
                evaluationPeriods: 3,
                datapointsToAlarm: 3,
                treatMissingData: "notBreaching",
                ...actions,
            },
            "alm-oldest-pending-alarm": {
                namespace: "DynamoDBOutbox",
                metricName: "OldestPendingAge",
                dimensions: custom("sweeper"),
                statistic: "Maximum",
                threshold: 600000,
                period: 300,
                evaluationPeriods: 2,
                datapointsToAlarm: 2,
                treatMissingData: "breaching",
                ...actions,
            },
            "alm-age-at-publish-alarm": {
                namespace: "DynamoDBOutbox",
                metricName: "AgeAtPublish",
                dimensions: custom("publisher"),
                extendedStatistic: "p99",
                threshold: 30000,
                period: 300,
                evaluationPeriods: 2,
                datapointsToAlarm: 2,
                treatMissingData: "notBreaching",
                ...actions,
            },
            "alm-dlq-depth-alarm": {
                namespace: "AWS/SQS",
                metricName: "ApproximateNumberOfMessagesVisible",
                dimensions: { QueueName: names.dlq },
                statistic: "Maximum",
                ...anyInFiveMinutes,
            },
            // The mapping's own count of records it gave up on, by its UUID (its EventCount metrics are on).
            "alm-dropped-events-alarm": {
                namespace: "AWS/Lambda",
                metricName: "DroppedEventCount",
                dimensions: { EventSourceMappingUUID: names.mappingUuid },
                statistic: "Sum",
                threshold: 0,
                period: 300,
                evaluationPeriods: 1,
                treatMissingData: "notBreaching",
                ...actions,
            },
            "alm-sweeper-published-alarm": {
                namespace: "DynamoDBOutbox",
                metricName: "Published",
                dimensions: custom("sweeper"),
                statistic: "Sum",
                ...anyInFiveMinutes,
            },
            "alm-publisher-errors-alarm": lambda("Errors", names.publisher),
            "alm-sweeper-errors-alarm": lambda("Errors", names.sweeper),
            "alm-publisher-throttles-alarm": lambda("Throttles", names.publisher),
            // Either handler may meet the fenced partition: the alarm sums both.
            "alm-fenced-partitions-alarm": {
                metricQueries: [
                    {
                        id: "fenced",
                        expression: "FILL(publisher, 0) + FILL(sweeper, 0)",
                        label: "partitions fenced above claimVersion",
                        returnData: true,
                    },
                    ...["publisher", "sweeper"].map((fn) => ({
                        id: fn,
                        returnData: false,
                        metric: {
                            namespace: "DynamoDBOutbox",
                            metricName: "FencedPartitions",
                            dimensions: custom(fn),
                            stat: "Sum",
                            period: 300,
                        },
                    })),
                ],
                threshold: 0,
                evaluationPeriods: 1,
                treatMissingData: "notBreaching",
                ...actions,
            },
        });
    });

    it("uses every default of ALARM_THRESHOLD_RANGES, parents each alarm on the component and describes what to do", () => {
        const alarms = built.resources.filter((r) => r.type === TYPE.alarm);
        const thresholds = new Set(alarms.map((a) => a.inputs.threshold));
        for (const range of Object.values(ALARM_THRESHOLD_RANGES))
            assert.ok(thresholds.has(range.fallback), `default ${range.fallback} used`);
        for (const a of alarms) {
            assert.equal(a.parent, built.one(TYPE.outbox).urn, `${a.name} is the component's child`);
            assert.match(
                a.inputs.alarmDescription,
                /^dynamodb-outbox "alm": .+\. .+ \(docs\/operations\.md, Alarms\)\.$/,
                a.name,
            );
        }
    });

    it("exposes the alarms' ARNs as the alarmArns output", async () => {
        const arns = await unwrap(built.outbox.alarmArns);
        assert.equal(arns.length, 10);
        assert.deepEqual(
            [...arns].sort(),
            built.resources
                .filter((r) => r.type === TYPE.alarm)
                .map((r) => r.computed!.arn)
                .sort(),
        );
    });

    it("takes each threshold from alarmThresholds, keeping the defaults of the others, and has no actions by default", async () => {
        const tuned = await buildOutbox("almtuned", {
            alarmThresholds: { iteratorAgeMs: 5000, dlqDepth: 10, errors: 3, fencedPartitions: 2, droppedEvents: 7 },
        });
        const alarms = alarmsOf(tuned);
        assert.equal(alarms["almtuned-dropped-events-alarm"]!.threshold, 7);
        assert.equal(alarms["almtuned-fenced-partitions-alarm"]!.threshold, 2);
        assert.equal(alarms["almtuned-iterator-age-alarm"]!.threshold, 5000);
        assert.equal(alarms["almtuned-dlq-depth-alarm"]!.threshold, 10);
        assert.equal(alarms["almtuned-publisher-errors-alarm"]!.threshold, 3);
        assert.equal(alarms["almtuned-sweeper-errors-alarm"]!.threshold, 3);
        assert.equal(alarms["almtuned-oldest-pending-alarm"]!.threshold, 600000);
        for (const [name, a] of Object.entries(alarms)) {
            assert.deepEqual(a.alarmActions, [], name);
            assert.deepEqual(a.okActions, [], name);
        }
    });

    it("treats a silent sweeper as breaching only when its schedule runs at least every five minutes", async () => {
        assert.deepEqual(
            [
                "rate(1 minute)",
                "rate(5 minutes)",
                "rate(6 minutes)",
                "rate(1 hour)",
                "rate(2 days)",
                "cron(0/5 * * * ? *)",
            ].map(scheduleIntervalSeconds),
            [60, 300, 360, 3600, 172800, undefined],
        );
        const hourly = await buildOutbox("almhourly", { sweepSchedule: "rate(1 hour)" });
        assert.equal(alarmsOf(hourly)["almhourly-oldest-pending-alarm"]!.treatMissingData, "notBreaching");
    });

    it("declares no alarm with alarms: false, and no dashboard with dashboard: false", async () => {
        const quiet = await buildOutbox("almoff", { alarms: false, dashboard: false });
        assert.deepEqual(
            quiet.resources.filter((r) => r.type === TYPE.alarm || r.type === TYPE.dashboard).map((r) => r.name),
            [],
        );
        assert.deepEqual(await unwrap(quiet.outbox.alarmArns), []);
        assert.ok(
            quiet.resources.some((r) => r.type === TYPE.fn),
            "the rest of the outbox is declared",
        );
    });

    it("declares one dashboard, named as autonaming would name it, whose widgets read this outbox's names", () => {
        const dashboard = built.one(TYPE.dashboard);
        // The mocks' project and stack are "dynamodb-outbox" and "test".
        assert.match(dashboard.inputs.dashboardName, /^alm-dashboard-[0-9a-f]{7}$/);
        assert.equal(dashboard.inputs.dashboardName, dashboardName("alm", "dynamodb-outbox", "test"));
        assert.equal(dashboard.parent, built.one(TYPE.outbox).urn);
        const body = JSON.parse(dashboard.inputs.dashboardBody) as {
            widgets: { properties: { title: string; region: string; metrics: unknown[][] } }[];
        };
        assert.equal(body.widgets.length, 7);
        for (const w of body.widgets) assert.equal(w.properties.region, "eu-west-1", w.properties.title);
        const text = dashboard.inputs.dashboardBody as string;
        for (const name of Object.values(names))
            assert.ok(text.includes(JSON.stringify(name)), `the body names ${name}`);
        const named = body.widgets.flatMap((w) =>
            w.properties.metrics.filter((m) => typeof m[0] === "string").map((m) => `${m[0]} ${m[1]}`),
        );
        for (const metric of [
            "AWS/Lambda IteratorAge",
            "AWS/Lambda Errors",
            "AWS/Lambda Throttles",
            "AWS/SQS ApproximateNumberOfMessagesVisible",
            "AWS/Lambda DroppedEventCount",
            "DynamoDBOutbox OldestPendingAge",
            "DynamoDBOutbox AgeAtPublish",
            "DynamoDBOutbox Published",
            "DynamoDBOutbox DeadLettered",
            "DynamoDBOutbox FencedPartitions",
            "AWS/DynamoDB ConsumedWriteCapacityUnits",
            "AWS/DynamoDB ConsumedReadCapacityUnits",
        ]) {
            assert.ok(named.includes(metric), `a widget shows ${metric}`);
        }
    });

    it("names each stack's dashboard apart, the same from one update to the next, without spelling out project or stack", () => {
        const names = [
            dashboardName("orders", "shop", "dev"),
            dashboardName("orders", "shop", "prod"),
            dashboardName("orders", "billing", "prod"),
            dashboardName("refunds", "shop", "prod"),
        ];
        assert.equal(new Set(names).size, names.length, names.join(", "));
        assert.equal(dashboardName("orders", "shop", "prod"), names[1]);
        for (const n of names) assert.match(n, /^(orders|refunds)-dashboard-[0-9a-f]{7}$/);
        // A suffix from the joined parts alone would let ("a-b", "c") and ("a", "b-c") collide.
        assert.notEqual(dashboardName("orders", "a-b", "c"), dashboardName("orders", "a", "b-c"));
    });

    it("takes the name given through transform.dashboard", async () => {
        const named = await buildOutbox("almnamed", {
            transform: { dashboard: { dashboardName: "shop-prod-orders" } },
        });
        assert.equal(named.one(TYPE.dashboard).inputs.dashboardName, "shop-prod-orders");
        assert.ok(
            named.one(TYPE.dashboard).inputs.dashboardBody.includes("almnamed-table-abc"),
            "the rest of the args stay the component's",
        );
    });
});
