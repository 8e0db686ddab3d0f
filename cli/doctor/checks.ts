/**
 * The live checks of `doctor` beyond the table: the publisher's event source mapping, the sweeper's schedule rule,
 * the DLQ depth, the oldest pending record and the publisher's recent metrics. Each adds checklist lines, each ✗
 * with its fix.
 *
 * @packageDocumentation
 */
import {
    ScanCommand,
    type DynamoDBClient,
    type ScanCommandOutput,
    type AttributeValue,
} from "@aws-sdk/client-dynamodb";
import { GetQueueAttributesCommand, type GetQueueAttributesCommandOutput } from "@aws-sdk/client-sqs";
import { isDeepStrictEqual } from "node:util";
import type { SqsClientLike } from "../../runtime/writer/redrive";
import { ATTR, CLAIM_INDEX, STREAM_FILTER_PATTERN, streamFilterPatternJson } from "../../runtime/schema";
import type { Checklist } from "../shared/checklist";
import type { CloudWatchPort, EventBridgePort, EventSourceMappingInfo, LambdaPort, Port } from "./aws";
import { errorText, seconds } from "../shared/io";

/** doctor's thresholds. */
export const DOCTOR_THRESHOLDS = {
    /** A pending record older than this fails the oldest-record check (the sweeper's default sweepAfter is far below). */
    maxPendingAgeMs: 5 * 60_000,
    /** A publisher IteratorAge above this fails the metrics check. */
    maxIteratorAgeMs: 60_000,
    /** The metrics window. */
    metricsWindowMs: 15 * 60_000,
    /** ClaimIndex Scan pages read at most for the oldest record. */
    maxScanPages: 10,
} as const;

/** Where doctor looks for the publisher's mapping: by function name, else by the table's stream. */
interface MappingTarget {
    publisherFunctionName?: string;
    streamArn?: string;
    dlqArn?: string;
}

const MAPPING_TITLE = "publisher event source mapping";

/** The mapping check: exists, enabled, filter, start, destination, last result. Returns the publisher's function ARN. */
export async function checkMapping(
    checks: Checklist,
    lambda: Port<LambdaPort>,
    target: MappingTarget,
): Promise<string | undefined> {
    const mapping = await findMapping(checks, lambda, target);
    if (mapping === undefined) return undefined;
    checkMappingSettings(checks, mapping, target);
    return mapping.FunctionArn;
}

/** The mapping of the target, with its "exists" line; undefined (with its skip or fail line) when there is none. */
async function findMapping(
    checks: Checklist,
    lambda: Port<LambdaPort>,
    target: MappingTarget,
): Promise<EventSourceMappingInfo | undefined> {
    const title = MAPPING_TITLE;
    if ("missing" in lambda) {
        checks.add("mapping", title, "skip", `needs ${lambda.missing}: npm install ${lambda.missing}`);
        return undefined;
    }
    if (target.publisherFunctionName === undefined && target.streamArn === undefined) {
        checks.add(
            "mapping",
            title,
            "skip",
            "no publisher function and no stream to look it up by: pass --outputs with publisherFunctionName, or enable the table's stream",
        );
        return undefined;
    }
    const query =
        target.publisherFunctionName !== undefined
            ? { FunctionName: target.publisherFunctionName }
            : { EventSourceArn: target.streamArn };
    let mappings;
    try {
        mappings = (await lambda.port.listEventSourceMappings(query)).EventSourceMappings ?? [];
    } catch (err) {
        checks.add(
            "mapping",
            title,
            "fail",
            `ListEventSourceMappings failed: ${errorText(err)}; the tool needs lambda:ListEventSourceMappings`,
        );
        return undefined;
    }
    const mapping = mappings.find((m) => target.streamArn === undefined || m.EventSourceArn === target.streamArn);
    const where =
        target.publisherFunctionName !== undefined
            ? `function "${target.publisherFunctionName}"`
            : `stream ${target.streamArn}`;
    if (mapping === undefined) {
        checks.add(
            "mapping",
            `${title} exists`,
            "fail",
            `none for ${where}${target.streamArn !== undefined ? " on the table's stream" : ""}: the publisher gets nothing and only the sweeper delivers; fix: pulumi up (the Outbox component creates it)`,
        );
        return undefined;
    }
    checks.add("mapping", `${title} exists`, "pass", `${mapping.UUID ?? "?"} on ${where}`);
    return mapping;
}

/** The found mapping's settings: enabled, the schema's filter, TRIM_HORIZON, the DLQ as destination, the last result. */
function checkMappingSettings(checks: Checklist, mapping: EventSourceMappingInfo, target: MappingTarget): void {
    const enabled = mapping.State === "Enabled";
    checks.add(
        "mapping:state",
        "mapping is enabled",
        enabled ? "pass" : "fail",
        enabled
            ? ""
            : `state ${mapping.State ?? "unknown"}: nothing is published from the stream; fix: aws lambda update-event-source-mapping --uuid ${mapping.UUID ?? "<uuid>"} --enabled`,
    );
    const patterns = (mapping.FilterCriteria?.Filters ?? []).map((f) => f.Pattern ?? "");
    const filterOk = patterns.length === 1 && parses(patterns[0] as string, STREAM_FILTER_PATTERN);
    checks.add(
        "mapping:filter",
        "mapping filter is the schema's (INSERTs of outbox records)",
        filterOk ? "pass" : "fail",
        filterOk
            ? ""
            : `filters ${JSON.stringify(patterns)}; expected exactly ${streamFilterPatternJson()}; fix: pulumi up, or update-event-source-mapping --filter-criteria with that pattern`,
    );
    const start = mapping.StartingPosition;
    checks.add(
        "mapping:start",
        "mapping starts from TRIM_HORIZON",
        start === "TRIM_HORIZON" ? "pass" : "fail",
        start === "TRIM_HORIZON"
            ? ""
            : `starts from ${start ?? "unknown"}: records written before the mapping existed are left to the sweeper; a starting position cannot be changed: recreate the mapping (pulumi up with the Outbox component)`,
    );
    const destination = mapping.DestinationConfig?.OnFailure?.Destination;
    const destinationOk =
        destination !== undefined &&
        destination !== "" &&
        (target.dlqArn === undefined || destination === target.dlqArn);
    checks.add(
        "mapping:destination",
        "mapping has its on-failure destination",
        destinationOk ? "pass" : "fail",
        destinationOk
            ? destination
            : destination === undefined || destination === ""
              ? `none: a batch that keeps failing is dropped with no trace once the stream retention ends; fix: update-event-source-mapping --destination-config OnFailure={Destination=${target.dlqArn ?? "<dlq arn>"}}`
              : `${destination}, not the DLQ ${target.dlqArn}; fix: pulumi up`,
    );
    // A warning, not a failure: the mapping delivers without them, but DroppedEventCount (the dropped-events alarm)
    // and FilteredOutEventCount exist only when they are on.
    const metrics = mapping.MetricsConfig?.Metrics ?? [];
    checks.add(
        "mapping:metrics",
        "mapping's EventCount metrics are on",
        metrics.includes("EventCount") ? "pass" : "warn",
        metrics.includes("EventCount")
            ? metrics.join(", ")
            : `off: the mapping reports no DroppedEventCount nor FilteredOutEventCount, so the dropped-events alarm cannot fire; fix: pulumi up, or aws lambda update-event-source-mapping --uuid ${mapping.UUID ?? "<uuid>"} --metrics-config Metrics=EventCount`,
    );
    const last = mapping.LastProcessingResult ?? "unknown";
    checks.add(
        "mapping:last-result",
        "mapping's last processing result",
        last.startsWith("PROBLEM") ? "fail" : "pass",
        last.startsWith("PROBLEM") ? `${last}; fix: read the publisher's logs and the mapping's permissions` : last,
    );
}

function parses(text: string, expected: unknown): boolean {
    try {
        return isDeepStrictEqual(JSON.parse(text), expected);
    } catch {
        return false;
    }
}

/** The sweeper's ARN: the publisher's ARN with the sweeper's function name. */
export function sweeperArn(
    publisherArn: string | undefined,
    sweeperFunctionName: string | undefined,
): string | undefined {
    if (publisherArn === undefined || sweeperFunctionName === undefined) return undefined;
    const at = publisherArn.lastIndexOf(":function:");
    return at < 0 ? undefined : `${publisherArn.slice(0, at)}:function:${sweeperFunctionName}`;
}

/** The sweeper's schedule rule: some rule targets it and is ENABLED. */
export async function checkSweeperRule(
    checks: Checklist,
    events: Port<EventBridgePort>,
    arn: string | undefined,
    sweeperFunctionName: string | undefined,
): Promise<void> {
    const title = "sweeper schedule rule is enabled";
    if ("missing" in events)
        return checks.add("sweeper-rule", title, "skip", `needs ${events.missing}: npm install ${events.missing}`);
    if (arn === undefined) {
        return checks.add(
            "sweeper-rule",
            title,
            "skip",
            sweeperFunctionName === undefined
                ? "no sweeper function: pass --outputs with sweeperFunctionName"
                : "the sweeper's ARN is derived from the publisher mapping's function ARN, which was not found",
        );
    }
    try {
        const names = (await events.port.listRuleNamesByTarget({ TargetArn: arn })).RuleNames ?? [];
        if (names.length === 0)
            return checks.add(
                "sweeper-rule",
                title,
                "fail",
                `no EventBridge rule targets ${arn}: missed records are never swept and expired ones never dead-lettered; fix: pulumi up`,
            );
        const rules = await Promise.all(names.map((Name) => events.port.describeRule({ Name })));
        const enabled = rules.find((r) => r.State === "ENABLED");
        if (enabled !== undefined)
            return checks.add(
                "sweeper-rule",
                title,
                "pass",
                `${enabled.Name ?? "?"} ${enabled.ScheduleExpression ?? ""}`.trim(),
            );
        return checks.add(
            "sweeper-rule",
            title,
            "fail",
            `${names.join(", ")} ${rules.map((r) => r.State ?? "unknown").join(", ")}: missed records are never swept and expired ones never dead-lettered; fix: aws events enable-rule --name ${names[0]}`,
        );
    } catch (err) {
        return checks.add(
            "sweeper-rule",
            title,
            "fail",
            `EventBridge failed: ${errorText(err)}; the tool needs events:ListRuleNamesByTarget and events:DescribeRule`,
        );
    }
}

/** The DLQ depth: ApproximateNumberOfMessages must be 0. */
export async function checkDlqDepth(
    checks: Checklist,
    sqs: SqsClientLike,
    dlqUrl: string | undefined,
    tableName: string,
): Promise<void> {
    const title = "DLQ is empty";
    if (dlqUrl === undefined) return checks.add("dlq", title, "skip", "no DLQ URL: pass --outputs with dlqUrl");
    try {
        const out = (await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
        )) as GetQueueAttributesCommandOutput;
        const depth = Number(out.Attributes?.ApproximateNumberOfMessages ?? "0");
        if (depth === 0) return checks.add("dlq", title, "pass", "0 messages");
        return checks.add(
            "dlq",
            title,
            "fail",
            `${depth} message(s) dead-lettered; fix the cause (each says its reason), then: dynamodb-outbox redrive --table ${tableName} --dlq-url ${dlqUrl}`,
        );
    } catch (err) {
        return checks.add(
            "dlq",
            title,
            "fail",
            `GetQueueAttributes failed: ${errorText(err)}; the tool needs sqs:GetQueueAttributes`,
        );
    }
}

/** The oldest non-terminal record's age, from the sparse ClaimIndex (`claim_sort` starts with pad19(created_at)). */
export async function checkOldestPending(
    checks: Checklist,
    client: DynamoDBClient,
    tableName: string,
    now: number,
    maxAgeMs: number,
): Promise<void> {
    const title = `oldest pending record is younger than ${seconds(maxAgeMs)}`;
    let oldest: string | undefined;
    let startKey: Record<string, AttributeValue> | undefined;
    let pages = 0;
    try {
        do {
            const page = (await client.send(
                new ScanCommand({
                    TableName: tableName,
                    IndexName: CLAIM_INDEX.indexName,
                    ProjectionExpression: "#s",
                    ExpressionAttributeNames: { "#s": ATTR.claimSort },
                    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
                }),
            )) as ScanCommandOutput;
            for (const item of page.Items ?? []) {
                const sort = item[ATTR.claimSort]?.S;
                if (sort !== undefined && (oldest === undefined || sort < oldest)) oldest = sort;
            }
            startKey = page.LastEvaluatedKey;
            pages++;
        } while (startKey !== undefined && pages < DOCTOR_THRESHOLDS.maxScanPages);
    } catch (err) {
        return checks.add(
            "oldest-pending",
            title,
            "fail",
            `ClaimIndex scan failed: ${errorText(err)}; the tool needs dynamodb:Scan on the index`,
        );
    }
    const partial = startKey !== undefined ? ` (first ${pages} pages of ClaimIndex)` : "";
    if (oldest === undefined) return checks.add("oldest-pending", title, "pass", `no pending record${partial}`);
    const age = now - Number(oldest.slice(0, 19));
    if (age <= maxAgeMs)
        return checks.add("oldest-pending", title, "pass", `${seconds(Math.max(0, age))} old${partial}`);
    return checks.add(
        "oldest-pending",
        title,
        "fail",
        `${seconds(age)} old${partial}: neither the publisher nor the sweeper delivered it; fix the mapping and sweeper lines above, then read the publisher's and sweeper's logs`,
    );
}

/** The publisher's recent IteratorAge (Maximum) and Errors (Sum), AWS/Lambda namespace. */
export async function checkPublisherMetrics(
    checks: Checklist,
    cw: Port<CloudWatchPort>,
    functionName: string | undefined,
    now: number,
): Promise<void> {
    const window = DOCTOR_THRESHOLDS.metricsWindowMs;
    const ids = [
        [
            "metrics:iterator-age",
            `publisher IteratorAge under ${seconds(DOCTOR_THRESHOLDS.maxIteratorAgeMs)} (last ${window / 60_000} min)`,
        ],
        ["metrics:errors", `publisher has no Errors (last ${window / 60_000} min)`],
    ] as const;
    if ("missing" in cw || functionName === undefined) {
        const why =
            "missing" in cw
                ? `needs ${cw.missing}: npm install ${cw.missing}`
                : "no publisher function: pass --outputs with publisherFunctionName";
        for (const [id, title] of ids) checks.add(id, title, "skip", why);
        return;
    }
    const input = (MetricName: string, stat: "Maximum" | "Sum") => ({
        Namespace: "AWS/Lambda",
        MetricName,
        Dimensions: [{ Name: "FunctionName", Value: functionName }],
        StartTime: new Date(now - window),
        EndTime: new Date(now),
        Period: window / 1000,
        Statistics: [stat],
    });
    try {
        const age = (await cw.port.getMetricStatistics(input("IteratorAge", "Maximum"))).Datapoints ?? [];
        const maxAge = Math.max(0, ...age.map((d) => d.Maximum ?? 0));
        checks.add(
            ids[0][0],
            ids[0][1],
            maxAge <= DOCTOR_THRESHOLDS.maxIteratorAgeMs ? "pass" : "fail",
            maxAge <= DOCTOR_THRESHOLDS.maxIteratorAgeMs
                ? `max ${seconds(maxAge)}`
                : `max ${seconds(maxAge)}: the publisher falls behind the stream; fix: read its Errors and Duration, raise its concurrency or batch size`,
        );
        const errors = (await cw.port.getMetricStatistics(input("Errors", "Sum"))).Datapoints ?? [];
        const sum = errors.reduce((n, d) => n + (d.Sum ?? 0), 0);
        // The Outbox component names its log groups /aws/lambda/<project>-<stack>-<child>, not after the function: ask Lambda.
        checks.add(
            ids[1][0],
            ids[1][1],
            sum === 0 ? "pass" : "fail",
            sum === 0
                ? "0"
                : `${sum} error(s): fix: aws logs tail "$(aws lambda get-function-configuration --function-name ${functionName} --query LoggingConfig.LogGroup --output text)" --since 15m`,
        );
    } catch (err) {
        for (const [id, title] of ids)
            checks.add(
                id,
                title,
                "fail",
                `GetMetricStatistics failed: ${errorText(err)}; the tool needs cloudwatch:GetMetricStatistics`,
            );
    }
}
