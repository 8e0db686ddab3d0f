/**
 * `npm run redrive`: move dead-lettered outbox messages back into the outbox (see runtime/redrive.ts), then print
 * one summary line: `redrive received <n> redriven <r> already-redriven <a> not-redrivable <x> failed <f>`.
 * Exits 1 when any message failed, 2 on a usage mistake.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { isOutboxError } from "../runtime/errors";
import { createJsonLogger } from "../runtime/json-logger";
import { redriveDeadLetters, type RedriveResult } from "../runtime/redrive";
import { OutboxWriter } from "../runtime/writer";
import { parseRedriveArgs, REDRIVE_USAGE, type RedriveArgs } from "./redrive-args";

/** The summary line of a redrive. */
export function redriveSummary(r: RedriveResult, dryRun: boolean): string {
    return `redrive${dryRun ? " (dry run)" : ""} received ${r.received} redriven ${r.redriven} already-redriven ${r.alreadyRedriven} not-redrivable ${r.notRedrivable} failed ${r.failed}`;
}

/**
 * Run a redrive with the parsed flags.
 *
 * @param args - From {@link parseRedriveArgs}.
 * @param log - Where the JSON log lines go (ids only). @default stderr
 */
export async function runRedrive(args: RedriveArgs, log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<RedriveResult> {
    const region = args.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    const common = region !== undefined ? { region } : {};
    const dynamodb = new DynamoDBClient({ ...common, ...(args.endpoint !== undefined ? { endpoint: args.endpoint } : {}) });
    const sqs = new SQSClient({ ...common, ...(args.sqsEndpoint !== undefined ? { endpoint: args.sqsEndpoint } : {}) });
    try {
        return await redriveDeadLetters({
            sqs,
            queueUrl: args.dlqUrl,
            writer: new OutboxWriter({ client: dynamodb, tableName: args.table, fifo: args.fifo }),
            maxMessages: args.max,
            ...(args.expiresInSeconds !== undefined ? { expiresAt: new Date(Date.now() + args.expiresInSeconds * 1000) } : {}),
            dryRun: args.dryRun,
            logger: createJsonLogger({ level: "info", fields: { tool: "redrive" }, write: log }),
        });
    } finally {
        dynamodb.destroy();
        sqs.destroy();
    }
}

async function main(): Promise<number> {
    let args: RedriveArgs;
    try {
        args = parseRedriveArgs(process.argv.slice(2), process.env);
    } catch (err) {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${REDRIVE_USAGE}\n`);
        return 2;
    }
    if (args.help) {
        process.stdout.write(`${REDRIVE_USAGE}\n`);
        return 0;
    }
    try {
        const result = await runRedrive(args);
        process.stdout.write(`${redriveSummary(result, args.dryRun)}\n`);
        return result.failed > 0 ? 1 : 0;
    } catch (err) {
        process.stderr.write(`redrive failed: ${isOutboxError(err) ? `[${err.code}] ${err.message}` : err instanceof Error ? err.message : String(err)}\n`);
        return 1;
    }
}

if (require.main === module) {
    void main().then((code) => process.exit(code));
}
