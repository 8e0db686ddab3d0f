/**
 * The alarms and the dashboard name only custom metrics the handlers really emit. The component is built under
 * the Pulumi mocks and every `DynamoDBOutbox` metric its alarms and dashboard widgets name is read from what it
 * declared (not from a list written here); then the real publisher and sweeper run on DynamoDB Local and the SNS
 * test server through the paths those metrics count (stream delivery, sweeper delivery, expiry to the DLQ by
 * each, a partition fenced above their claim version met by each), and their EMF lines are parsed. Each named metric must appear in a line of the same namespace with
 * exactly the same dimension names and values (the `Table` value being the table's name on both sides).
 */
import assert from "node:assert/strict";
import { METRIC_DIMENSIONS, METRIC_NAMESPACE } from "../../../runtime/observability/metric-catalog";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { TYPE, buildOutbox } from "../../support/component-harness";

/** One custom metric as an alarm or a widget names it: name and dimensions, and who names it. */
interface NamedMetric {
    readonly metricName: string;
    readonly dimensions: Record<string, string>;
    readonly namedBy: string;
}

type EmfDoc = Record<string, unknown> & {
    _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
};

/** `name {dim=value,…}`, dimensions sorted: the identity CloudWatch gives a metric in one namespace. */
function identity(metricName: string, dimensions: Record<string, string>): string {
    return `${metricName} {${Object.keys(dimensions)
        .sort()
        .map((k) => `${k}=${dimensions[k]}`)
        .join(",")}}`;
}

/** Every custom metric the lines define, with the dimensions of their directive, as identities; other namespaces apart. */
function emitted(lines: readonly string[]): { identities: Set<string>; otherNamespaces: Set<string> } {
    const identities = new Set<string>();
    const otherNamespaces = new Set<string>();
    for (const line of lines) {
        const doc = JSON.parse(line) as EmfDoc;
        for (const directive of doc._aws.CloudWatchMetrics) {
            if (directive.Namespace !== METRIC_NAMESPACE) otherNamespaces.add(directive.Namespace);
            for (const set of directive.Dimensions) {
                const dimensions = Object.fromEntries(set.map((d) => [d, String(doc[d])]));
                for (const m of directive.Metrics)
                    identities.add(`${directive.Namespace} ${identity(m.Name, dimensions)}`);
            }
        }
    }
    return { identities, otherNamespaces };
}

/** The custom metrics the component's alarms and dashboard name, read from what it declared under the mocks. */
async function namedByComponent(name: string): Promise<{ metrics: NamedMetric[]; tableName: string }> {
    const built = await buildOutbox(name);
    const tableName = built.one(TYPE.table).computed!.name as string;
    const metrics: NamedMetric[] = [];
    for (const alarm of built.resources.filter((r) => r.type === TYPE.alarm)) {
        if (alarm.inputs.namespace === METRIC_NAMESPACE)
            metrics.push({
                metricName: alarm.inputs.metricName,
                dimensions: alarm.inputs.dimensions,
                namedBy: `alarm ${alarm.name}`,
            });
        // A metric math alarm names its metrics in its queries.
        for (const query of (alarm.inputs.metricQueries ?? []) as {
            id: string;
            metric?: { namespace: string; metricName: string; dimensions: Record<string, string> };
        }[]) {
            if (query.metric?.namespace === METRIC_NAMESPACE)
                metrics.push({
                    metricName: query.metric.metricName,
                    dimensions: query.metric.dimensions,
                    namedBy: `alarm ${alarm.name} (query ${query.id})`,
                });
        }
    }
    const body = JSON.parse(built.one(TYPE.dashboard).inputs.dashboardBody) as {
        widgets: { properties: { title: string; metrics: unknown[][] } }[];
    };
    for (const widget of body.widgets) {
        for (const m of widget.properties.metrics) {
            if (m[0] !== METRIC_NAMESPACE) continue;
            const pairs = m.slice(2).filter((x): x is string => typeof x === "string");
            const dimensions: Record<string, string> = {};
            for (let i = 0; i + 1 < pairs.length; i += 2) dimensions[pairs[i]!] = pairs[i + 1]!;
            metrics.push({ metricName: m[1] as string, dimensions, namedBy: `widget "${widget.properties.title}"` });
        }
    }
    return { metrics, tableName };
}

describe("alarms and dashboard name only metrics the real handlers emit (Pulumi mocks + DynamoDB Local)", function () {
    let h: Harness;
    after(async function () {
        await h?.close();
    });

    it("every custom metric of every alarm and widget is in the handlers' EMF lines, with the same dimensions", async function () {
        const { metrics, tableName } = await namedByComponent("drift");
        // Guards against a vacuous pass: the component does name custom metrics, through both alarms and widgets.
        assert.ok(
            metrics.filter((m) => m.namedBy.startsWith("alarm")).length >= 3,
            metrics.map((m) => m.namedBy).join("\n"),
        );
        assert.ok(
            metrics.filter((m) => m.namedBy.startsWith("widget")).length >= 8,
            metrics.map((m) => m.namedBy).join("\n"),
        );
        for (const m of metrics)
            assert.equal(
                m.dimensions[METRIC_DIMENSIONS.table],
                tableName,
                `${m.namedBy}: the Table dimension is the table's name`,
            );

        h = await createHarness();
        const now = h.clock.now();
        // 1. The stream path: two records published, one expired record dead-lettered.
        await h.writer.write({ messages: [1, 2].map((n) => ({ partition: `ORDER#${n}`, type: "T", payload: n })) });
        await h.writer.write({
            messages: [{ partition: "ORDER#3", type: "T", payload: 3, expiresAt: new Date(now + 1_000) }],
        });
        h.clock.advance(2_000);
        const publisherEvent = await h.streamEvent();
        await h.publisher()(publisherEvent);
        // 2. The sweep path: a record whose stream event never reached the publisher, and one that expired unseen.
        await h.writer.write({ messages: [{ partition: "ORDER#4", type: "T", payload: 4 }] });
        await h.writer.write({
            messages: [{ partition: "ORDER#5", type: "T", payload: 5, expiresAt: new Date(h.clock.now() + 1_000) }],
        });
        h.clock.advance(121_000);
        const sweep = await createSweeper(h.config())();
        assert.deepEqual([sweep.published, sweep.expired], [1, 1], "the sweep delivered one record and expired one");
        assert.equal(h.deadLetters().length, 2, "one expired record dead-lettered by each handler");
        // 3. A partition whose fence another claimer raised above the handlers' version, met by each handler.
        await h.writer.write({ messages: [{ partition: "ORDER#6", type: "T", payload: 6, orderingKey: "k" }] });
        await new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock }).claim(
            "ORDER#6",
            { owner: "relay-1", version: 7n },
            0,
        );
        const fencedEvent = await h.streamEvent();
        assert.equal((await h.publisher()(fencedEvent)).batchItemFailures.length, 1, "the doorbell is reported");
        h.clock.advance(121_000);
        await assert.rejects(createSweeper(h.config())(), /fence of partition ORDER#6/);

        const { identities, otherNamespaces } = emitted(h.metricLines);
        assert.deepEqual([...otherNamespaces], [], "every line is in the outbox's namespace");
        const missing = metrics
            .map((m) => ({
                m,
                id: `${METRIC_NAMESPACE} ${identity(m.metricName, { ...m.dimensions, [METRIC_DIMENSIONS.table]: h.tableName })}`,
            }))
            .filter(({ id }) => !identities.has(id))
            .map(({ m, id }) => `${m.namedBy} names ${id}`);
        assert.deepEqual(missing, [], `emitted:\n${[...identities].sort().join("\n")}`);
    });
});
