/**
 * CloudWatch Embedded Metric Format (EMF) log lines: metrics that cost no API call. CloudWatch Logs turns a
 * JSON line with an `_aws` block into metrics, so a handler collects its counts during one invocation and
 * writes one line at the end.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 * @packageDocumentation
 */

import { METRIC_NAMESPACE } from "./metric-catalog";

/** The metric namespace every outbox handler writes to ({@link METRIC_NAMESPACE}). */
export const EMF_NAMESPACE = METRIC_NAMESPACE;

/** The units the handlers use. */
export type EmfUnit = "Count" | "Milliseconds";

/** Writes one finished log line. In Lambda, stdout is the function's log group. */
export type LineWriter = (line: string) => void;

/** Writes to stdout, where Lambda's log agent picks EMF lines up. */
export const stdoutLineWriter: LineWriter = (line) => {
    process.stdout.write(line + "\n");
};

/** One invocation's metrics. Counters add up; samples keep every value (EMF accepts up to 100 values per metric per line). */
export interface EmfMetrics {
    /** Add `value` to counter `name`. */
    count(name: string, value?: number): void;
    /** Record one sample of `name` (e.g. an age), in `unit`. */
    sample(name: string, value: number, unit: EmfUnit): void;
    /** The counter's value so far (0 when never counted). */
    value(name: string): number;
    /**
     * Write everything collected as EMF lines, then start over. One line when it fits; more when a metric has more
     * than {@link EMF_MAX_VALUES} values or there are more than {@link EMF_MAX_METRICS} metrics, so no value is
     * ever dropped. Writes nothing when nothing was collected.
     */
    flush(): void;
}

/** Options for {@link createEmfMetrics}. */
export interface EmfMetricsOptions {
    /** The dimensions, e.g. `{ Function: "publisher", Table: "orders" }`. Ids only. */
    readonly dimensions: Readonly<Record<string, string>>;
    /** The metric namespace. @default {@link EMF_NAMESPACE} */
    readonly namespace?: string;
    /** Where the line goes. @default {@link stdoutLineWriter} */
    readonly write?: LineWriter;
    /** The line's timestamp source, epoch ms. @default Date.now */
    readonly now?: () => number;
}

/** EMF allows at most 100 values per metric per document (line). */
export const EMF_MAX_VALUES = 100;

/** EMF allows at most 100 metric definitions per `CloudWatchMetrics` directive. */
export const EMF_MAX_METRICS = 100;

/**
 * Create a per-invocation metrics collector that writes EMF lines.
 *
 * @param options - dimensions, namespace, writer and clock.
 */
export function createEmfMetrics(options: EmfMetricsOptions): EmfMetrics {
    const namespace = options.namespace ?? EMF_NAMESPACE;
    const write = options.write ?? stdoutLineWriter;
    const now = options.now ?? (() => Date.now());
    let counters: { name: string; value: number }[] = [];
    let samples: { name: string; unit: EmfUnit; values: number[] }[] = [];

    return {
        count(name, value = 1) {
            const found = counters.find((c) => c.name === name);
            if (found) found.value += value;
            else counters.push({ name, value });
        },
        sample(name, value, unit) {
            const found = samples.find((s) => s.name === name);
            if (!found) samples.push({ name, unit, values: [value] });
            else found.values.push(value);
        },
        value(name) {
            return counters.find((c) => c.name === name)?.value ?? 0;
        },
        flush() {
            // Every value is written: past 100 values of one metric, or 100 metrics, the rest goes in further lines.
            const pending = [
                ...counters.map((c) => ({ name: c.name, unit: "Count" as EmfUnit, values: [c.value] })),
                ...samples.map((s) => ({ name: s.name, unit: s.unit, values: s.values.slice() })),
            ];
            while (pending.length > 0) {
                const batch = pending.slice(0, EMF_MAX_METRICS);
                const line: Record<string, unknown> = {
                    _aws: {
                        Timestamp: now(),
                        CloudWatchMetrics: [
                            {
                                Namespace: namespace,
                                Dimensions: [Object.keys(options.dimensions)],
                                Metrics: batch.map((m) => ({ Name: m.name, Unit: m.unit })),
                            },
                        ],
                    },
                    ...options.dimensions,
                };
                for (const m of batch) {
                    const values = m.values.splice(0, EMF_MAX_VALUES);
                    line[m.name] = values.length === 1 ? values[0] : values;
                }
                write(JSON.stringify(line));
                for (let i = pending.length - 1; i >= 0; i--) if (pending[i]!.values.length === 0) pending.splice(i, 1);
            }
            counters = [];
            samples = [];
        },
    };
}
