/**
 * Flags of `dynamodb-outbox redrive`, parsed into options or an `INVALID_CONFIG` {@link OutboxError} naming the flag, the
 * bad value, what is allowed and the fix.
 *
 * @packageDocumentation
 */
import { ENV } from "../../runtime/config";
import { OutboxError } from "../../runtime/errors";
import { REDRIVE_LIMITS } from "../../runtime/limits";
import { plainInteger, plainSeconds, queueUrlProblem, SECONDS_RANGE, urlProblem } from "../shared/args";

/** redrive's defaults. */
export const REDRIVE_DEFAULTS = {
    /** `--timeout`: the bound on the whole command, ms (a run stopped by it is resumed by running it again). */
    timeoutMs: 3_600_000,
} as const;

/** The longest `--expires-in`, seconds: 365 days. */
export const MAX_EXPIRES_IN_SECONDS = 365 * 24 * 3600;

/** Parsed flags of `dynamodb-outbox redrive`. */
export interface RedriveArgs {
    /** `--table`, else `OUTBOX_TABLE_NAME`. */
    readonly table: string;
    /** `--dlq-url`, else `OUTBOX_DLQ_URL`. */
    readonly dlqUrl: string;
    /** `--region`. @default AWS_REGION, then AWS_DEFAULT_REGION, then the SDK's own resolution */
    readonly region?: string;
    /** `--endpoint`: the DynamoDB endpoint (e.g. DynamoDB Local). @default the AWS endpoint */
    readonly endpoint?: string;
    /** `--sqs-endpoint`: the SQS endpoint (e.g. a local SQS). @default the AWS endpoint */
    readonly sqsEndpoint?: string;
    /** `--max`: DLQ messages to receive at most. @default 1000 */
    readonly max: number;
    /** `--expires-in`: seconds from now after which redriven messages expire. @default never */
    readonly expiresInSeconds?: number;
    /** `--fifo`: the topic is FIFO (checks group ids as the publisher uses them). @default false */
    readonly fifo: boolean;
    /** `--dry-run`: report what would be redriven, change nothing. @default false */
    readonly dryRun: boolean;
    /** `--timeout`, ms: the bound on the whole command. @default REDRIVE_DEFAULTS.timeoutMs */
    readonly timeoutMs: number;
    /** `--json`: print one JSON object on stdout instead of the summary line. @default false */
    readonly json: boolean;
    /** `--help`. */
    readonly help: boolean;
}

/** The usage text. */
export const REDRIVE_USAGE = `Usage: dynamodb-outbox redrive --table <name> --dlq-url <url> [options]

Moves dead-lettered outbox messages back into the outbox: each becomes a fresh record (same partition, ordering
key, type, headers and payload; id "redrive.<original id>") and is deleted from the DLQ once written. Safe to
run again: a message already redriven is only deleted.

  --table <name>          the outbox table (default: $${ENV.tableName})
  --dlq-url <url>         the DLQ URL, the Outbox component's dlqUrl output (default: $${ENV.dlqUrl})
  --region <region>       AWS region (default: AWS_REGION, then AWS_DEFAULT_REGION)
  --endpoint <url>        DynamoDB endpoint, e.g. http://127.0.0.1:8000 for DynamoDB Local
  --sqs-endpoint <url>    SQS endpoint, for a local SQS
  --max <n>               receive at most n DLQ messages (1-1000000, default 1000)
  --expires-in <seconds>  give redriven messages an expiry this far ahead (at most ${MAX_EXPIRES_IN_SECONDS}, 365 days; default: never expire)
  --fifo                  the topic is FIFO: check ordering keys and partitions as MessageGroupIds
  --dry-run               print what would be redriven; write and delete nothing
  --timeout <seconds>     bound on the whole command, start-up to exit, every AWS call in it (default ${REDRIVE_DEFAULTS.timeoutMs / 1000}; run again to resume)
  --json                  print one JSON object on stdout instead of the summary line (logs stay on stderr)
  --help                  this text

exit codes: 0 every message received was handled, 1 a message failed or the redrive failed, 2 bad command line`;

const VALUED = new Set(["table", "dlq-url", "region", "endpoint", "sqs-endpoint", "max", "expires-in", "timeout"]);
const BOOLEAN = new Set(["fifo", "dry-run", "json", "help"]);

function bad(flag: string, value: string, allowed: string, fix: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", `redrive: --${flag} is ${JSON.stringify(value)}; expected ${allowed}; ${fix}`, { context: { flag, value } });
}

/**
 * Parse the flags.
 *
 * @param argv - The arguments after `redrive`.
 * @param env - The environment, for the table and DLQ fallbacks.
 * @throws OutboxError `INVALID_CONFIG` for an unknown flag, a missing value, a bad number, a missing table or DLQ URL,
 *   or a DLQ URL or endpoint that is not an http(s) URL.
 */
export function parseRedriveArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): RedriveArgs {
    const values: Record<string, string> = {};
    const flags = new Set<string>();
    for (let i = 0; i < argv.length; i += 1) {
        const arg = argv[i]!;
        if (!arg.startsWith("--")) throw bad("(positional)", arg, "only --flags", "run with --help for the flags");
        const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
        if (BOOLEAN.has(name)) {
            flags.add(name);
            continue;
        }
        if (!VALUED.has(name)) throw bad(name, arg, `one of --${[...VALUED, ...BOOLEAN].join(", --")}`, "run with --help for the flags");
        const value = inline ?? argv[i + 1];
        if (value === undefined || (inline === undefined && value.startsWith("--"))) throw bad(name, "", "a value", `write --${name} <value>`);
        if (inline === undefined) i += 1;
        values[name] = value;
    }
    if (flags.has("help")) return { table: "", dlqUrl: "", max: 1000, fifo: false, dryRun: false, timeoutMs: REDRIVE_DEFAULTS.timeoutMs, json: false, help: true };
    const table = values.table ?? env[ENV.tableName] ?? "";
    const dlqUrl = values["dlq-url"] ?? env[ENV.dlqUrl] ?? "";
    if (table === "") throw bad("table", "", "the outbox table's name", `pass --table or set ${ENV.tableName}`);
    if (dlqUrl === "") throw bad("dlq-url", "", "the DLQ URL (the Outbox component's dlqUrl output)", `pass --dlq-url or set ${ENV.dlqUrl}`);
    const dlqProblem = queueUrlProblem(dlqUrl, values["sqs-endpoint"]);
    if (dlqProblem !== undefined) {
        const from = values["dlq-url"] !== undefined ? "--dlq-url" : ENV.dlqUrl;
        throw bad("dlq-url", dlqUrl, `the DLQ's URL (the Outbox component's dlqUrl output), but it ${dlqProblem}`, `fix ${from}, e.g. https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq`);
    }
    for (const flag of ["endpoint", "sqs-endpoint"]) {
        const value = values[flag];
        const problem = value === undefined ? undefined : urlProblem(value);
        if (problem !== undefined) throw bad(flag, value as string, `an http:// or https:// URL, but it ${problem}`, `e.g. --${flag} http://127.0.0.1:${flag === "endpoint" ? 8000 : 4566}`);
    }
    const maxLimit = REDRIVE_LIMITS.maxMessages;
    const max = values.max === undefined ? maxLimit.fallback : plainInteger(values.max, maxLimit.min, maxLimit.max);
    if (max === undefined) throw bad("max", values.max ?? "", `an integer from ${maxLimit.min} to ${maxLimit.max}`, `omit it for ${maxLimit.fallback}`);
    let expiresInSeconds: number | undefined;
    if (values["expires-in"] !== undefined) {
        expiresInSeconds = plainInteger(values["expires-in"], 1, MAX_EXPIRES_IN_SECONDS);
        if (expiresInSeconds === undefined) {
            throw bad("expires-in", values["expires-in"], `a whole number of seconds ≥ 1 and ≤ ${MAX_EXPIRES_IN_SECONDS} (365 days)`, "omit it for messages that never expire");
        }
    }
    const timeoutMs = values.timeout === undefined ? REDRIVE_DEFAULTS.timeoutMs : plainSeconds(values.timeout);
    if (timeoutMs === undefined) throw bad("timeout", values.timeout ?? "", `a positive number of seconds in plain digits, from ${SECONDS_RANGE.min} to ${SECONDS_RANGE.max}`, `e.g. --timeout 600, or omit it for ${REDRIVE_DEFAULTS.timeoutMs / 1000}`);
    return {
        table,
        dlqUrl,
        ...(values.region !== undefined ? { region: values.region } : {}),
        ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
        ...(values["sqs-endpoint"] !== undefined ? { sqsEndpoint: values["sqs-endpoint"] } : {}),
        max,
        ...(expiresInSeconds !== undefined ? { expiresInSeconds } : {}),
        fifo: flags.has("fifo"),
        dryRun: flags.has("dry-run"),
        timeoutMs,
        json: flags.has("json"),
        help: false,
    };
}
