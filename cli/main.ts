/**
 * The `dynamodb-outbox` command line, as a function: `main(argv, io)` parses, runs the command against the
 * injected streams, environment and clock, and resolves to the exit code. The bin launcher calls it with the
 * process; tests call it in-process.
 *
 * @packageDocumentation
 */
import { isOutboxError } from "../runtime/errors";
import { parseArgs, REDRIVE_COMMAND, usage, type CliArgs, type CommandName } from "./shared/args";
import { createDynamoDbClient, createSqsClient, credentialsFromEnv, resolveRegion } from "./shared/client";
import { startDeadline, type CommandDeadline } from "./shared/deadline";
import { DOCTOR_DEFAULTS, runDoctor } from "./doctor/doctor";
import { loadDoctorAws } from "./doctor/aws";
import { readStackOutputs, type StackOutputs } from "./doctor/outputs";
import { explainDeadline } from "./shared/failure";
import { checkSdkFiles } from "./shared/read-file";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { closableIo, createOutput, errorText, type CliIo, type Output } from "./shared/io";
import { MIGRATE_DEFAULTS, runMigrate } from "./migrate/migrate";
import { redriveCommand } from "./redrive/redrive";
import { runVerify, VERIFY_DEFAULTS } from "./verify/verify";
import { ADOPT_DEFAULTS, runAdopt } from "./adopt/adopt";

/** Exit codes. */
export const EXIT = {
    /** Everything passed, or the plan was printed or applied. */
    ok: 0,
    /** A check failed, the migration was refused, a step failed, or `--timeout` ran out. */
    failed: 1,
    /** The command line was wrong. */
    usage: 2,
} as const;

/** `--timeout`, or the command's default: the bound on the whole command, ms. */
function timeoutOf(command: CommandName, timeoutMs: number | undefined): number {
    if (timeoutMs !== undefined) return timeoutMs;
    if (command === "adopt") return ADOPT_DEFAULTS.timeoutMs;
    return command === "migrate"
        ? MIGRATE_DEFAULTS.timeoutMs
        : command === "doctor"
          ? DOCTOR_DEFAULTS.timeoutMs
          : VERIFY_DEFAULTS.timeoutMs;
}

/** What doctor checks: the stack outputs of `--outputs`, read within the deadline, or the `--table` alone. */
async function doctorTarget(args: CliArgs, deadline: CommandDeadline): Promise<StackOutputs> {
    return args.outputsFile !== undefined ? readStackOutputs(args.outputsFile, deadline) : { tableName: args.table };
}

/** `adopt`: the region of the client takes over `--from`'s undelivered records. */
async function adopt(args: CliArgs, io: CliIo, deadline: CommandDeadline): Promise<number> {
    const region = resolveRegion(args, io.env);
    const client = createDynamoDbClient({ region, endpoint: args.endpoint }, io.env, deadline);
    try {
        const out = createOutput(io, args.json);
        return await runAdopt({ client, tableName: args.table, from: args.from ?? "", region, out });
    } finally {
        client.destroy();
    }
}

/** `verify`, with a cleanup client of its own that outlives `--timeout` a little. */
async function verifyCommand(
    args: CliArgs,
    io: CliIo,
    deadline: CommandDeadline,
    client: DynamoDBClient,
    region: string,
    out: Output,
): Promise<number> {
    const cleanupClient = createDynamoDbClient(
        { region, endpoint: args.endpoint },
        io.env,
        deadline,
        deadline.cleanupSignal,
    );
    try {
        return await runVerify({
            client,
            cleanupClient,
            deadline,
            tableName: args.table,
            region,
            endpoint: args.endpoint,
            credentials: credentialsFromEnv(io.env),
            timeoutMs: deadline.timeoutMs,
            pollIntervalMs: args.pollIntervalMs,
            expiryMs: args.expiryMs,
            dlqUrl: args.dlqUrl,
            sqsEndpoint: args.sqsEndpoint,
            expiryShards: args.expiryShards,
            regions: args.regions,
            out,
        });
    } finally {
        cleanupClient.destroy();
    }
}

async function run(args: CliArgs & { command: CommandName }, io: CliIo, deadline: CommandDeadline): Promise<number> {
    const out = createOutput(io, args.json);
    const region = resolveRegion(args, io.env);
    const client = createDynamoDbClient({ region, endpoint: args.endpoint }, io.env, deadline);
    try {
        if (args.command === "doctor") {
            const target = await doctorTarget(args, deadline);
            const credentials = credentialsFromEnv(io.env);
            const sqs = createSqsClient(
                {
                    region,
                    endpoint: args.sqsEndpoint,
                    queueUrl: target.dlqUrl,
                    credentials,
                    settings: "the outputs' dlqUrl, --sqs-endpoint and --region",
                },
                deadline,
            );
            const aws = (io.doctorAws ?? loadDoctorAws)({ region, credentials, deadline });
            try {
                return await runDoctor({
                    client,
                    sqs,
                    aws,
                    target,
                    region,
                    maxPendingAgeMs: args.maxPendingAgeMs,
                    out,
                });
            } finally {
                sqs.destroy();
                aws.destroy();
            }
        }
        if (args.command === "verify") return await verifyCommand(args, io, deadline, client, region, out);
        return await runMigrate({
            client,
            tableName: args.table,
            region,
            endpoint: args.endpoint,
            apply: args.apply,
            recreateClaimIndex: args.recreateClaimIndex,
            confirmedTable: args.confirmTable,
            timeoutMs: deadline.timeoutMs,
            pollIntervalMs: args.pollIntervalMs,
            pageSize: args.pageSize,
            expiryShards: args.expiryShards,
            out,
        });
    } finally {
        client.destroy();
    }
}

/**
 * Run a command within its `--timeout`. A command still running a little after it (CLEANUP_GRACE_MS) is given up
 * on: the message names the call in flight, and whatever the command writes later is dropped.
 */
async function runWithin(args: CliArgs & { command: CommandName }, io: CliIo): Promise<number> {
    const deadline = startDeadline(args.command, timeoutOf(args.command, args.timeoutMs), io.startedAt);
    const gate = closableIo(io);
    try {
        // Before the deadline's race: its refusal must win even when the start took longer than --timeout.
        await checkSdkFiles(io.env, args.command);
        const command = args.command === "adopt" ? adopt(args, gate.io, deadline) : run(args, gate.io, deadline);
        const settled = await deadline.settle(command);
        if (settled !== undefined && !settled.late) return settled.value;
        const text = explainDeadline(deadline);
        io.stderr(`dynamodb-outbox ${args.command}: ${text}\n`);
        if (settled === undefined && args.json)
            io.stdout(
                `${JSON.stringify({ command: args.command, table: args.table, ok: false, error: text }, null, 2)}\n`,
            );
        return EXIT.failed;
    } finally {
        gate.close();
        deadline.dispose();
    }
}

/**
 * Run the command line. `--timeout` bounds the whole command (cli/shared/deadline.ts): it resolves within a few seconds of
 * it, whatever the endpoints do.
 *
 * @param argv - The arguments after the executable, e.g. `["verify", "--table", "orders-outbox"]`. `redrive` must
 *   come first: its flags are its own (cli/redrive/args.ts).
 * @param io - Output writers, environment and clock.
 * @returns The exit code ({@link EXIT}).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
    if (argv[0] === REDRIVE_COMMAND) return redriveCommand(argv.slice(1), io);
    let args: CliArgs;
    try {
        args = parseArgs(argv);
    } catch (err) {
        io.stderr(`dynamodb-outbox: ${isOutboxError(err) ? err.message : errorText(err)}\n\n${usage()}\n`);
        return EXIT.usage;
    }
    if (args.help) {
        io.stdout(`${usage(args.command)}\n`);
        return EXIT.ok;
    }
    try {
        return await runWithin(args as CliArgs & { command: CommandName }, io);
    } catch (err) {
        if (isOutboxError(err, "INVALID_CONFIG")) {
            io.stderr(`dynamodb-outbox: ${err.message}\n\n${usage(args.command)}\n`);
            return EXIT.usage;
        }
        io.stderr(`dynamodb-outbox ${args.command}: ${errorText(err)}\n`);
        if (args.json)
            io.stdout(
                `${JSON.stringify({ command: args.command, table: args.table, ok: false, error: errorText(err) }, null, 2)}\n`,
            );
        return EXIT.failed;
    }
}
