/**
 * The advisory policy `outbox-alarms`: an outbox that nothing alarms on. An outbox fails quietly (a disabled
 * mapping, a poison record holding a shard, a growing DLQ all look healthy), so a stack that turned the `Outbox`'s
 * alarms off (`alarms: false`), or holds a tagged table provisioned by hand, should alarm on it some other way.
 * Like `outbox-policies.ts`, this module only exports the policy; `outboxPolicies` includes it.
 *
 * @packageDocumentation
 */
import { EnforcementLevel, StackValidationPolicy } from "@pulumi/policy";
import { RESOURCE_TYPES, StackResourceView, known, outboxScope, stackPolicy } from "./scope";

/** The enforcement level of `outbox-alarms` when the pack's config sets none: advice, not a blocked deployment. */
export const OUTBOX_ALARMS_DEFAULT_LEVEL: EnforcementLevel = "advisory";

/** The dimension values an alarm watches: its `dimensions`, and those of its metric queries. `undefined` when any is unknown. */
function watchedValues(alarm: StackResourceView): string[] | undefined {
    const dimensions = known(() => {
        const queries: unknown = alarm.props.metricQueries;
        const fromQueries = Array.isArray(queries)
            ? queries.map((q) => (q as { metric?: { dimensions?: unknown } })?.metric?.dimensions)
            : [];
        return [alarm.props.dimensions, ...fromQueries].flatMap((d) =>
            d !== null && typeof d === "object" ? Object.values(d as Record<string, unknown>) : [],
        );
    });
    if (dimensions === undefined) return undefined;
    const values: string[] = [];
    for (const v of dimensions) {
        if (typeof v !== "string") return undefined;
        values.push(v);
    }
    return values;
}

/** The names an alarm on this outbox would carry as a dimension: its table's, its publishers', its DLQs'. `undefined` when one is unknown. */
function outboxIdentifiers(
    table: StackResourceView,
    resources: readonly StackResourceView[],
    mappings: readonly StackResourceView[],
): string[] | undefined {
    const reads: unknown[] = [known(() => table.props.name)];
    for (const mapping of mappings) {
        const fn = known(() => mapping.props.functionName);
        const target = resources.find(
            (f) =>
                f.type === RESOURCE_TYPES.fn &&
                fn !== undefined &&
                (known(() => f.props.arn) === fn || known(() => f.props.name) === fn),
        );
        reads.push(target === undefined ? fn : known(() => target.props.name));
        const dlqArn = known(() => mapping.props.destinationConfig?.onFailure?.destinationArn);
        const queue = resources.find(
            (q) => q.type === RESOURCE_TYPES.queue && dlqArn !== undefined && known(() => q.props.arn) === dlqArn,
        );
        if (queue !== undefined) reads.push(known(() => queue.props.name));
    }
    if (reads.some((v) => typeof v !== "string")) return undefined;
    // A function named by its ARN: the FunctionName dimension holds the name, the ARN's last part.
    return (reads as string[]).map((v) => (v.startsWith("arn:") ? v.split(":").pop()! : v));
}

function sameResource(a: StackResourceView | undefined, b: StackResourceView | undefined): boolean {
    return a !== undefined && b !== undefined && (a === b || a.urn === b.urn);
}

/**
 * The outbox tables that no CloudWatch alarm of the stack watches. An alarm watches an outbox when it was declared in
 * the same `Outbox`, or when one of its dimensions (or its metric queries') is the table's name, the name of a
 * function its stream mapping invokes, or its DLQ's name. A table whose names, or an alarm's dimensions, are still
 * unknown (a preview) is not reported, unless the stack declares no alarm at all.
 *
 * @param resources - The stack's resources, as a stack policy gets them.
 */
export function outboxAlarmViolations(resources: readonly StackResourceView[]): { urn: string; message: string }[] {
    const scope = outboxScope(resources);
    const alarms = resources.filter((r) => r.type === RESOURCE_TYPES.metricAlarm);
    const mappings = [...scope.ownMappings, ...scope.externalMappings];
    const out: { urn: string; message: string }[] = [];
    for (const table of scope.tables) {
        if (alarms.some((a) => sameResource(a.parent, table.parent))) continue;
        if (alarms.length > 0) {
            const identifiers = outboxIdentifiers(
                table,
                resources,
                mappings.filter((m) => sameResource(scope.tableOf(m), table)),
            );
            const watched = alarms.map(watchedValues);
            if (identifiers === undefined || watched.some((w) => w === undefined)) continue;
            if (watched.some((w) => w!.some((v) => identifiers.includes(v)))) continue;
        }
        out.push({
            urn: table.urn,
            message: `outbox table "${table.name}" has no CloudWatch alarm: none declared in its Outbox, none on the table, its publisher or its DLQ; an outbox fails quietly, so keep the Outbox's alarms on (alarms: true, the default) or declare your own`,
        });
    }
    return out;
}

/** The `outbox-alarms` policy, at `enforcementLevel`. */
export function outboxAlarmsPolicy(
    enforcementLevel: EnforcementLevel = OUTBOX_ALARMS_DEFAULT_LEVEL,
): StackValidationPolicy {
    return stackPolicy(
        "outbox-alarms",
        "An outbox has CloudWatch alarms: the Outbox's own (alarms: true, the default), or alarms declared elsewhere on its table, publisher or DLQ.",
        enforcementLevel,
        outboxAlarmViolations,
    );
}
