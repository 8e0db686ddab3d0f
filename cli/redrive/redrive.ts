/**
 * `dynamodb-outbox redrive`: move dead-lettered outbox messages back into the outbox (see runtime/writer/redrive.ts), then
 * print one line per record it wrote (`redriven <dead-lettered id> as <new id> outbox.id <identity>`) and one summary
 * line: `redrive received <n> redriven <r> already-redriven <a> not-redrivable <x> failed <f>`.
 * Exits 1 when any message failed or the redrive failed, 2 on a usage mistake. Its flags are its own
 * (cli/redrive/args.ts): it also reads the table and DLQ URL from the environment, as the runtime does.
 *
 * @packageDocumentation
 */
import { createJsonLogger } from "../../runtime/observability/json-logger";
import { redriveDeadLetters, type RedriveResult } from "../../runtime/writer/redrive";
import { systemClock } from "../../runtime/ports";
import { OutboxWriter } from "../../runtime/writer/writer";
import { boundDynamoDbClient, createSqsClient, credentialsFromEnv } from "../shared/client";
import { startDeadline, type CommandDeadline } from "../shared/deadline";
import { checkSdkFiles } from "../shared/read-file";
import { explainDeadline } from "../shared/failure";
import { closableIo, errorText, type CliIo } from "../shared/io";
import { parseRedriveArgs, REDRIVE_USAGE, type RedriveArgs } from "./args";

/** The summary line of a redrive. */
export function redriveSummary(r: RedriveResult, dryRun: boolean): string {
    return `redrive${dryRun ? " (dry run)" : ""} received ${r.received} redriven ${r.redriven} already-redriven ${r.alreadyRedriven} not-redrivable ${r.notRedrivable} failed ${r.failed}`;
}

/**
 * The lines a redrive prints: one per record it wrote (or, in a dry run, would write), naming the dead-lettered
 * record, the new record and the identity consumers see (`outbox.id`, kept through the redrive), then the summary.
 */
export function redriveLines(r: RedriveResult, dryRun: boolean): string[] {
    return [
        ...r.records.map(
            ([originalId, recordId, outboxId]) =>
                `${dryRun ? "would redrive" : "redriven"} ${originalId} as ${recordId} outbox.id ${outboxId}`,
        ),
        redriveSummary(r, dryRun),
    ];
}

/**
 * The `--json` object of a redrive that ran to its end. Each of its `records` names the dead-lettered record
 * (`originalId`), the record written (`recordId`) and the identity consumers see (`outboxId`, kept through the
 * redrive).
 */
export function redriveJson(args: RedriveArgs, r: RedriveResult, durationMs: number): object {
    return {
        command: "redrive",
        table: args.table,
        dlqUrl: args.dlqUrl,
        ...(args.region === undefined ? {} : { region: args.region }),
        ...(args.endpoint === undefined ? {} : { endpoint: args.endpoint }),
        ...(args.sqsEndpoint === undefined ? {} : { sqsEndpoint: args.sqsEndpoint }),
        dryRun: args.dryRun,
        ok: r.failed === 0,
        counts: {
            received: r.received,
            redriven: r.redriven,
            alreadyRedriven: r.alreadyRedriven,
            notRedrivable: r.notRedrivable,
            failed: r.failed,
        },
        records: r.records.map(([originalId, recordId, outboxId]) => ({ originalId, recordId, outboxId })),
        notRedrivable: r.problems,
        durationMs,
    };
}

/**
 * Run a redrive with the parsed flags.
 *
 * @param args - From {@link parseRedriveArgs}.
 * @param io - The environment (region, credentials), the clock (for `--expires-in`) and stderr, where the JSON
 *   log lines go (ids only).
 * @param deadline - The command's deadline: every call carries its signal. @default one of `args.timeoutMs`
 */
export async function runRedrive(
    args: RedriveArgs,
    io: Pick<CliIo, "env" | "stderr" | "clock">,
    deadline?: CommandDeadline,
): Promise<RedriveResult> {
    const bound = deadline ?? startDeadline("redrive", args.timeoutMs);
    const region = args.region ?? (io.env.AWS_REGION || undefined) ?? (io.env.AWS_DEFAULT_REGION || undefined);
    const credentials = credentialsFromEnv(io.env);
    const dynamodb = boundDynamoDbClient({ region, endpoint: args.endpoint, credentials }, bound);
    const sqs = createSqsClient(
        {
            region,
            endpoint: args.sqsEndpoint,
            queueUrl: args.dlqUrl,
            credentials,
            settings: "--dlq-url, --sqs-endpoint and --region",
        },
        bound,
    );
    const now = io.clock?.now() ?? Date.now();
    try {
        return await redriveDeadLetters({
            sqs,
            queueUrl: args.dlqUrl,
            writer: new OutboxWriter({ client: dynamodb, tableName: args.table, fifo: args.fifo }),
            maxMessages: args.max,
            ...(args.expiresInSeconds !== undefined ? { expiresAt: new Date(now + args.expiresInSeconds * 1000) } : {}),
            dryRun: args.dryRun,
            logger: createJsonLogger({
                level: "info",
                fields: { tool: "redrive" },
                write: (line) => io.stderr(`${line}\n`),
            }),
        });
    } finally {
        dynamodb.destroy();
        sqs.destroy();
        if (bound !== deadline) bound.dispose();
    }
}

/**
 * The `redrive` command: parse, run within `--timeout`, print the summary (or, with `--json`, one JSON object).
 *
 * @param argv - The arguments after `redrive`.
 * @param io - The process surface.
 * @returns 0 when every received message was handled, 1 when one failed, the redrive failed or `--timeout` ran
 *   out, 2 on bad input.
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
    const failed = (error: string): number => {
        io.stderr(`redrive failed: ${error}\n`);
        if (args.json)
            io.stdout(
                `${JSON.stringify({ command: "redrive", table: args.table, dlqUrl: args.dlqUrl, ok: false, error }, null, 2)}\n`,
            );
        return 1;
    };
    try {
        // Before the deadline's race: its refusal must win even when the start took longer than --timeout.
        await checkSdkFiles(io.env, "redrive");
    } catch (err) {
        return failed(errorText(err));
    }
    const deadline = startDeadline("redrive", args.timeoutMs, io.startedAt);
    const gate = closableIo(io);
    const clock = io.clock ?? systemClock;
    const started = clock.now();
    try {
        const settled = await deadline.settle(runRedrive(args, gate.io, deadline));
        if (settled === undefined || settled.late) return failed(explainDeadline(deadline));
        const result = settled.value;
        if (args.json) io.stdout(`${JSON.stringify(redriveJson(args, result, clock.now() - started), null, 2)}\n`);
        else io.stdout(`${redriveLines(result, args.dryRun).join("\n")}\n`);
        return result.failed > 0 ? 1 : 0;
    } catch (err) {
        return failed(errorText(err));
    } finally {
        gate.close();
        deadline.dispose();
    }
}
