/**
 * `dynamodb-outbox verify`: the runbook's verification section as a checklist. Provisioning first
 * (DescribeTable, TTL, stream), then, when the table can take it, the store's preflight and the expiry round
 * trip on a verification record. Exit 0 only when every line is ✓ (or the ! of a costlier-than-needed setting).
 *
 * @packageDocumentation
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../../runtime/errors";
import { OutboxStore } from "../../runtime/store";
import { Checklist } from "../shared/checklist";
import type { EnvCredentials } from "../shared/credentials";
import type { CommandDeadline } from "../shared/deadline";
import { seconds, type Output } from "../shared/io";
import { describeOutboxTable } from "../shared/table-state";
import { checkProvisioning } from "./table";
import { checkLive, type ExpiryProbeReport } from "./expiry";
import { checkOrigins, tableRegions, type OriginReport } from "./origin";

/** verify's defaults. */
export const VERIFY_DEFAULTS = {
    /** Bound on each wait. */
    timeoutMs: 60_000,
    /** Poll interval. */
    pollIntervalMs: 1_000,
    /** Expiry of the verification record. */
    expiryMs: 2_000,
} as const;

/** What verify needs. */
export interface VerifyOptions {
    /** The client. */
    readonly client: DynamoDBClient;
    /** The table. */
    readonly tableName: string;
    /** The region (for the report and the SQS client). */
    readonly region: string;
    /** The endpoint, when not AWS's. */
    readonly endpoint?: string;
    /** Credentials given through the environment, for the SQS client. */
    readonly credentials?: EnvCredentials;
    /** `--timeout`, ms: the bound on each wait (the CLI also ends the whole command then). @default 60000 */
    readonly timeoutMs?: number;
    /** `--poll-interval`, ms. @default 1000 */
    readonly pollIntervalMs?: number;
    /** `--expiry`, ms. @default 2000 */
    readonly expiryMs?: number;
    /** `--dlq-url`. @default undefined */
    readonly dlqUrl?: string;
    /** `--sqs-endpoint`. @default undefined (the region's) */
    readonly sqsEndpoint?: string;
    /**
     * `--expiry-shards`: the writers' `expiryShards`. The verification record is persisted with it, so the expiry
     * round trip goes through the shard a record of those writers takes. @default 1
     */
    readonly expiryShards?: number;
    /**
     * `--regions`: the table's regions. With them, or with replicas in DescribeTable, verify reports the pending
     * records whose origin stamp is missing or names none of them. @default undefined (DescribeTable's replicas)
     */
    readonly regions?: readonly string[];
    /** Output. */
    readonly out: Output;
    /** The command's deadline, for the DLQ's SQS client. @default unbounded */
    readonly deadline?: CommandDeadline;
    /** The client that removes the verification record, with a little time after `--timeout`. @default client */
    readonly cleanupClient?: DynamoDBClient;
}

/**
 * Run verify and print the checklist (or the JSON object).
 *
 * @returns The exit code: 0 when nothing failed, 1 otherwise.
 * @throws OutboxError `INVALID_CONFIG` when `--expiry` is not shorter than `--timeout`.
 */
export async function runVerify(options: VerifyOptions): Promise<number> {
    const { out, tableName } = options;
    const expiryMs = options.expiryMs ?? VERIFY_DEFAULTS.expiryMs;
    const timeoutMs = options.timeoutMs ?? VERIFY_DEFAULTS.timeoutMs;
    if (expiryMs >= timeoutMs) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `--expiry (${seconds(expiryMs)}) must be shorter than --timeout (${seconds(timeoutMs)}): the wait for the sweep would end before the record expires; lower --expiry or raise --timeout`,
            {
                context: { flag: "expiry" },
            },
        );
    }
    const started = out.clock.now();
    out.line(
        `dynamodb-outbox verify: table "${tableName}" (${options.region}${options.endpoint === undefined ? "" : `, ${options.endpoint}`})`,
    );
    const checks = new Checklist(out);
    let probe: ExpiryProbeReport | undefined;
    let origin: OriginReport | undefined;
    const described = await describeOutboxTable(options.client, tableName);
    if (described === undefined) {
        checks.add(
            "table",
            `table "${tableName}" exists and is ACTIVE`,
            "fail",
            `not found in ${options.region}: check --table and --region, or create it with the Outbox component`,
        );
    } else if (checkProvisioning(checks, tableName, described.shape)) {
        probe = await checkLive(checks, {
            store: new OutboxStore({
                client: options.client,
                tableName,
                clock: out.clock,
                expiryShards: options.expiryShards,
            }),
            client: options.client,
            tableName,
            region: options.region,
            expiryMs,
            timeoutMs,
            pollIntervalMs: options.pollIntervalMs ?? VERIFY_DEFAULTS.pollIntervalMs,
            dlqUrl: options.dlqUrl,
            sqsEndpoint: options.sqsEndpoint,
            credentials: options.credentials,
            out,
            deadline: options.deadline,
            cleanupClient: options.cleanupClient,
        });
        const regions = tableRegions(options.region, described.table, options.regions);
        if (regions !== undefined) origin = await checkOrigins(checks, options.client, tableName, regions);
    } else {
        checks.add("live", "store preflight and expiry round trip", "skip", "fix the lines marked ✗ above first");
    }
    const counts = checks.counts();
    const ok = checks.ok;
    const elapsed = out.clock.now() - started;
    out.line(
        ok
            ? `verified: ${counts.pass} passed${counts.warn > 0 ? `, ${counts.warn} warning(s)` : ""} (${seconds(elapsed)})`
            : `NOT verified: ${counts.fail} failed, ${counts.skip} skipped, ${counts.pass} passed (${seconds(elapsed)}); docs/operations.md maps each line to its fix`,
    );
    out.result({
        command: "verify",
        table: tableName,
        region: options.region,
        ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
        ok,
        counts,
        checks: checks.results,
        ...(probe === undefined ? {} : { verificationRecord: probe }),
        ...(origin === undefined ? {} : { origin }),
        durationMs: elapsed,
    });
    return ok ? 0 : 1;
}
