/**
 * `dynamodb-outbox doctor`: a live outbox checked end to end. The table as `verify` checks it (provisioning only:
 * doctor writes nothing), then the publisher's event source mapping, the sweeper's schedule rule, the destination
 * (topic, queue or bus), the DLQ depth, the oldest pending record and the publisher's recent metrics. Exit 0 only
 * when every line is ✓ (or !).
 *
 * @packageDocumentation
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SqsClientLike } from "../../runtime/writer/redrive";
import { Checklist } from "../shared/checklist";
import type { DoctorAws } from "./aws";
import { checkDestination } from "./destination";
import {
    checkDlqDepth,
    checkMapping,
    checkOldestPending,
    checkPublisherMetrics,
    checkSweeperRule,
    DOCTOR_THRESHOLDS,
    sweeperArn,
} from "./checks";
import type { StackOutputs } from "./outputs";
import { seconds, type Output } from "../shared/io";
import { describeOutboxTable } from "../shared/table-state";
import { checkProvisioning } from "../verify/table";

/** doctor's defaults. */
export const DOCTOR_DEFAULTS = {
    /** `--timeout`: the bound on the whole command, ms. */
    timeoutMs: 60_000,
} as const;

/** What doctor needs. */
export interface DoctorOptions {
    /** The DynamoDB client. */
    readonly client: DynamoDBClient;
    /** The SQS client of the DLQ (and of a destination queue). */
    readonly sqs: SqsClientLike;
    /** Lambda, EventBridge, CloudWatch and SNS. */
    readonly aws: DoctorAws;
    /** The target: `--table` alone gives `{ tableName }`; `--outputs` gives the stack outputs. */
    readonly target: Omit<StackOutputs, "tableName"> & { readonly tableName: string };
    /** The region, for the report. */
    readonly region: string;
    /** `--max-pending-age`, ms. @default 300000 */
    readonly maxPendingAgeMs?: number;
    /** Output. */
    readonly out: Output;
}

/**
 * Run doctor and print the checklist (or the JSON object).
 *
 * @returns The exit code: 0 when nothing failed or was skipped, 1 otherwise.
 */
export async function runDoctor(options: DoctorOptions): Promise<number> {
    const { out, target } = options;
    const tableName = target.tableName;
    const started = out.clock.now();
    out.line(`dynamodb-outbox doctor: table "${tableName}" (${options.region})`);
    const checks = new Checklist(out);
    const described = await describeOutboxTable(options.client, tableName);
    let streamArn = target.streamArn;
    if (described === undefined) {
        checks.add(
            "table",
            `table "${tableName}" exists and is ACTIVE`,
            "fail",
            `not found in ${options.region}: check --table (or the outputs' tableName) and --region`,
        );
    } else {
        checkProvisioning(checks, tableName, described.shape);
        streamArn ??= described.table.LatestStreamArn;
    }
    const publisherArn = await checkMapping(checks, options.aws.lambda, {
        publisherFunctionName: target.publisherFunctionName,
        streamArn,
        dlqArn: target.dlqArn,
    });
    await checkSweeperRule(
        checks,
        options.aws.eventBridge,
        sweeperArn(publisherArn, target.sweeperFunctionName),
        target.sweeperFunctionName,
    );
    await checkDestination(
        checks,
        { sns: options.aws.sns, sqs: options.sqs, eventBridge: options.aws.eventBridge },
        // A stack of 0.1 names its topic only by topicArn.
        target.destinationArn ?? target.topicArn,
    );
    await checkDlqDepth(checks, options.sqs, target.dlqUrl, tableName);
    if (described !== undefined)
        await checkOldestPending(
            checks,
            options.client,
            tableName,
            out.clock.now(),
            options.maxPendingAgeMs ?? DOCTOR_THRESHOLDS.maxPendingAgeMs,
        );
    await checkPublisherMetrics(
        checks,
        options.aws.cloudWatch,
        target.publisherFunctionName ?? functionNameOf(publisherArn),
        out.clock.now(),
    );

    const counts = checks.counts();
    const ok = checks.ok;
    const elapsed = out.clock.now() - started;
    out.line(
        ok
            ? `healthy: ${counts.pass} passed${counts.warn > 0 ? `, ${counts.warn} warning(s)` : ""} (${seconds(elapsed)})`
            : `NOT healthy: ${counts.fail} failed, ${counts.skip} skipped, ${counts.pass} passed (${seconds(elapsed)}); each ✗ says its fix`,
    );
    out.result({
        command: "doctor",
        table: tableName,
        region: options.region,
        ok,
        counts,
        checks: checks.results,
        durationMs: elapsed,
    });
    return ok ? 0 : 1;
}

function functionNameOf(arn: string | undefined): string | undefined {
    const at = arn?.lastIndexOf(":function:") ?? -1;
    return arn === undefined || at < 0 ? undefined : arn.slice(at + ":function:".length).split(":")[0];
}
