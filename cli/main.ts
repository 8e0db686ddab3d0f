/**
 * The `dynamodb-outbox` command line, as a function: `main(argv, io)` parses, runs the command against the
 * injected streams, environment and clock, and resolves to the exit code. The bin launcher calls it with the
 * process; tests call it in-process.
 *
 * @packageDocumentation
 */
import { isOutboxError } from "../runtime/errors";
import { parseArgs, REDRIVE_COMMAND, usage, type CliArgs } from "./args";
import { createDynamoDbClient, credentialsFromEnv, resolveRegion } from "./client";
import { createOutput, errorText, type CliIo } from "./io";
import { SQSClient } from "@aws-sdk/client-sqs";
import { runDoctor } from "./doctor";
import { loadDoctorAws } from "./doctor-aws";
import { readStackOutputs } from "./doctor-outputs";
import { runMigrate } from "./migrate";
import { redriveCommand } from "./redrive";
import { runVerify } from "./verify";

/** Exit codes. */
export const EXIT = {
    /** Everything passed, or the plan was printed or applied. */
    ok: 0,
    /** A check failed, the migration was refused, or a step failed. */
    failed: 1,
    /** The command line was wrong. */
    usage: 2,
} as const;

async function run(args: CliArgs, io: CliIo): Promise<number> {
    const out = createOutput(io, args.json);
    const region = resolveRegion(args, io.env);
    const client = createDynamoDbClient({ region, endpoint: args.endpoint }, io.env);
    try {
        if (args.command === "doctor") {
            const target = args.outputsFile !== undefined ? readStackOutputs(args.outputsFile) : { tableName: args.table };
            const credentials = credentialsFromEnv(io.env);
            const sqs = new SQSClient({ region, ...(args.sqsEndpoint !== undefined ? { endpoint: args.sqsEndpoint } : {}), ...(credentials !== undefined ? { credentials } : {}), maxAttempts: 5 });
            const aws = (io.doctorAws ?? loadDoctorAws)({ region, credentials });
            try {
                return await runDoctor({ client, sqs, aws, target, region, maxPendingAgeMs: args.maxPendingAgeMs, out });
            } finally {
                sqs.destroy();
                aws.destroy();
            }
        }
        if (args.command === "verify") {
            return await runVerify({
                client,
                tableName: args.table,
                region,
                endpoint: args.endpoint,
                credentials: credentialsFromEnv(io.env),
                timeoutMs: args.timeoutMs,
                pollIntervalMs: args.pollIntervalMs,
                expiryMs: args.expiryMs,
                dlqUrl: args.dlqUrl,
                sqsEndpoint: args.sqsEndpoint,
                expiryShards: args.expiryShards,
                out,
            });
        }
        return await runMigrate({
            client,
            tableName: args.table,
            region,
            endpoint: args.endpoint,
            apply: args.apply,
            recreateClaimIndex: args.recreateClaimIndex,
            timeoutMs: args.timeoutMs,
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
 * Run the command line.
 *
 * @param argv - The arguments after the executable, e.g. `["verify", "--table", "orders-outbox"]`. `redrive` must
 *   come first: its flags are its own (cli/redrive-args.ts).
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
        return await run(args, io);
    } catch (err) {
        if (isOutboxError(err, "INVALID_CONFIG")) {
            io.stderr(`dynamodb-outbox: ${err.message}\n\n${usage(args.command)}\n`);
            return EXIT.usage;
        }
        io.stderr(`dynamodb-outbox ${args.command}: ${errorText(err)}\n`);
        if (args.json) io.stdout(`${JSON.stringify({ command: args.command, table: args.table, ok: false, error: errorText(err) }, null, 2)}\n`);
        return EXIT.failed;
    }
}
