/**
 * `dynamodb-outbox redrive`: move dead-lettered outbox messages back into the outbox (see runtime/redrive.ts), then
 * print one summary line: `redrive received <n> redriven <r> already-redriven <a> not-redrivable <x> failed <f>`.
 * Exits 1 when any message failed or the redrive failed, 2 on a usage mistake. Its flags are its own
 * (cli/redrive-args.ts): it also reads the table and DLQ URL from the environment, as the runtime does.
 *
 * @packageDocumentation
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { isOutboxError } from "../runtime/errors";
import { createJsonLogger } from "../runtime/json-logger";
import { redriveDeadLetters, type RedriveResult } from "../runtime/redrive";
import { OutboxWriter } from "../runtime/writer";
import { credentialsFromEnv } from "./client";
import type { CliIo } from "./io";
import { parseRedriveArgs, REDRIVE_USAGE, type RedriveArgs } from "./redrive-args";

/** The summary line of a redrive. */
export function redriveSummary(r: RedriveResult, dryRun: boolean): string {
    return `redrive${dryRun ? " (dry run)" : ""} received ${r.received} redriven ${r.redriven} already-redriven ${r.alreadyRedriven} not-redrivable ${r.notRedrivable} failed ${r.failed}`;
}

/**
 * Run a redrive with the parsed flags.
 *
 * @param args - From {@link parseRedriveArgs}.
 * @param io - The environment (region, credentials), the clock (for `--expires-in`) and stderr, where the JSON
 *   log lines go (ids only).
 */
export async function runRedrive(args: RedriveArgs, io: Pick<CliIo, "env" | "stderr" | "clock">): Promise<RedriveResult> {
    const region = args.region ?? (io.env.AWS_REGION || undefined) ?? (io.env.AWS_DEFAULT_REGION || undefined);
    const credentials = credentialsFromEnv(io.env);
    const common = { ...(region !== undefined ? { region } : {}), ...(credentials !== undefined ? { credentials } : {}) };
    const dynamodb = new DynamoDBClient({ ...common, ...(args.endpoint !== undefined ? { endpoint: args.endpoint } : {}) });
    const sqs = new SQSClient({ ...common, ...(args.sqsEndpoint !== undefined ? { endpoint: args.sqsEndpoint } : {}) });
    const now = io.clock?.now() ?? Date.now();
    try {
        return await redriveDeadLetters({
            sqs,
            queueUrl: args.dlqUrl,
            writer: new OutboxWriter({ client: dynamodb, tableName: args.table, fifo: args.fifo }),
            maxMessages: args.max,
            ...(args.expiresInSeconds !== undefined ? { expiresAt: new Date(now + args.expiresInSeconds * 1000) } : {}),
            dryRun: args.dryRun,
            logger: createJsonLogger({ level: "info", fields: { tool: "redrive" }, write: (line) => io.stderr(`${line}\n`) }),
        });
    } finally {
        dynamodb.destroy();
        sqs.destroy();
    }
}

/**
 * The `redrive` command: parse, run, print the summary.
 *
 * @param argv - The arguments after `redrive`.
 * @param io - The process surface.
 * @returns 0 when every received message was handled, 1 when one failed or the redrive failed, 2 on bad input.
 */
export async function redriveCommand(argv: readonly string[], io: CliIo): Promise<number> {
    let args: RedriveArgs;
    try {
        args = parseRedriveArgs(argv, io.env);
    } catch (err) {
        io.stderr(`${err instanceof Error ? err.message : String(err)}\n\n${REDRIVE_USAGE}\n`);
        return 2;
    }
    if (args.help) {
        io.stdout(`${REDRIVE_USAGE}\n`);
        return 0;
    }
    try {
        const result = await runRedrive(args, io);
        io.stdout(`${redriveSummary(result, args.dryRun)}\n`);
        return result.failed > 0 ? 1 : 0;
    } catch (err) {
        io.stderr(`redrive failed: ${isOutboxError(err) ? `[${err.code}] ${err.message}` : err instanceof Error ? err.message : String(err)}\n`);
        return 1;
    }
}
