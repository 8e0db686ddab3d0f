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
import { readFlags, type FlagProblem, type FlagTypes } from "../shared/flag-tokens";

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
key, type, headers and payload; id "redrive.<original id>") and is deleted from the DLQ once written. The record
is published under the event's original identity (outbox.id), so a consumer that applied it before does not
apply it again. Prints one line per record written, then a summary. Safe to run again: a message already
redriven is only deleted.

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
const FLAG_TYPES: FlagTypes = Object.fromEntries([
    ...[...VALUED].map((name) => [name, { type: "string" }] as const),
    ...[...BOOLEAN].map((name) => [name, { type: "boolean" }] as const),
]);

function bad(flag: string, value: string, allowed: string, fix: string): OutboxError {
    return new OutboxError(
        "INVALID_CONFIG",
        `redrive: --${flag} is ${JSON.stringify(value)}; expected ${allowed}; ${fix}`,
        { context: { flag, value } },
    );
}

/** The flags as given: the valued ones' values and the boolean ones' names. */
interface GivenFlags {
    readonly values: Readonly<Record<string, string>>;
    readonly flags: ReadonlySet<string>;
}

/** The error for the first word the flag reader refused. */
function problemError(problem: FlagProblem): OutboxError {
    if (problem.kind === "dash-value") {
        // A value that would be refused anyway gets its own message; a good one is refused only for how it is written.
        const error = valueError(problem.name, problem.value, `--${problem.name}`, undefined);
        return (
            error ??
            bad(
                problem.name,
                problem.value,
                "a value that does not read as a flag",
                `if it is the value, write --${problem.name}=${problem.value}`,
            )
        );
    }
    if (problem.kind === "missing-value") return bad(problem.name, "", "a value", `write --${problem.name} <value>`);
    if (problem.kind === "value-on-boolean")
        return bad(problem.name, problem.raw, "no value", `write just --${problem.name}`);
    // redrive has no one-letter flags: a single-dash word is no flag at all.
    if (!problem.flag.startsWith("--"))
        return bad("(positional)", problem.raw, "only --flags", "run with --help for the flags");
    return bad(
        problem.name,
        problem.raw,
        `one of --${[...VALUED, ...BOOLEAN].join(", --")}`,
        "run with --help for the flags",
    );
}

/** Read the words into values and names, refusing a positional word and the first word the flag reader refused. */
function readRedriveFlags(argv: readonly string[]): GivenFlags {
    const { tokens, problem } = readFlags(argv, FLAG_TYPES);
    const values: Record<string, string> = {};
    const flags = new Set<string>();
    for (const token of tokens) {
        if (token.kind === "positional")
            throw bad("(positional)", token.raw, "only --flags", "run with --help for the flags");
        if (token.value === undefined) flags.add(token.name);
        else values[token.name] = token.value;
    }
    if (problem !== undefined) throw problemError(problem);
    return { values, flags };
}

/**
 * The error for a bad value of one valued flag, or `undefined`. `from` says where the value came from (the flag or
 * the environment variable); `sqsEndpoint` decides which DLQ URL hosts the SDK can reach.
 */
function valueError(
    flag: string,
    value: string,
    from: string,
    sqsEndpoint: string | undefined,
): OutboxError | undefined {
    if (flag === "dlq-url") {
        const problem = queueUrlProblem(value, sqsEndpoint);
        return problem === undefined
            ? undefined
            : bad(
                  "dlq-url",
                  value,
                  `the DLQ's URL (the Outbox component's dlqUrl output), but it ${problem}`,
                  `fix ${from}, e.g. https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq`,
              );
    }
    if (flag === "endpoint" || flag === "sqs-endpoint") {
        const problem = urlProblem(value);
        return problem === undefined
            ? undefined
            : bad(
                  flag,
                  value,
                  `an http:// or https:// URL, but it ${problem}`,
                  `e.g. --${flag} http://127.0.0.1:${flag === "endpoint" ? 8000 : 4566}`,
              );
    }
    const maxLimit = REDRIVE_LIMITS.maxMessages;
    if (flag === "max" && plainInteger(value, maxLimit.min, maxLimit.max) === undefined)
        return bad(
            "max",
            value,
            `an integer from ${maxLimit.min} to ${maxLimit.max}`,
            `omit it for ${maxLimit.fallback}`,
        );
    if (flag === "expires-in" && plainInteger(value, 1, MAX_EXPIRES_IN_SECONDS) === undefined) {
        return bad(
            "expires-in",
            value,
            `a whole number of seconds ≥ 1 and ≤ ${MAX_EXPIRES_IN_SECONDS} (365 days)`,
            "omit it for messages that never expire",
        );
    }
    if (flag === "timeout" && plainSeconds(value) === undefined) {
        return bad(
            "timeout",
            value,
            `a positive number of seconds in plain digits, from ${SECONDS_RANGE.min} to ${SECONDS_RANGE.max}`,
            `e.g. --timeout 600, or omit it for ${REDRIVE_DEFAULTS.timeoutMs / 1000}`,
        );
    }
    return undefined;
}

/** The options from the flags given and the environment, refusing a missing table or DLQ URL and a bad value. */
function redriveOptions({ values, flags }: GivenFlags, env: Readonly<Record<string, string | undefined>>): RedriveArgs {
    const table = values.table ?? env[ENV.tableName] ?? "";
    const dlqUrl = values["dlq-url"] ?? env[ENV.dlqUrl] ?? "";
    if (table === "") throw bad("table", "", "the outbox table's name", `pass --table or set ${ENV.tableName}`);
    if (dlqUrl === "")
        throw bad(
            "dlq-url",
            "",
            "the DLQ URL (the Outbox component's dlqUrl output)",
            `pass --dlq-url or set ${ENV.dlqUrl}`,
        );
    const dlqError = valueError(
        "dlq-url",
        dlqUrl,
        values["dlq-url"] !== undefined ? "--dlq-url" : ENV.dlqUrl,
        values["sqs-endpoint"],
    );
    if (dlqError !== undefined) throw dlqError;
    for (const flag of ["endpoint", "sqs-endpoint", "max", "expires-in", "timeout"]) {
        const error =
            values[flag] === undefined
                ? undefined
                : valueError(flag, values[flag], `--${flag}`, values["sqs-endpoint"]);
        if (error !== undefined) throw error;
    }
    const maxLimit = REDRIVE_LIMITS.maxMessages;
    return {
        table,
        dlqUrl,
        ...(values.region !== undefined ? { region: values.region } : {}),
        ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
        ...(values["sqs-endpoint"] !== undefined ? { sqsEndpoint: values["sqs-endpoint"] } : {}),
        max:
            values.max === undefined
                ? maxLimit.fallback
                : (plainInteger(values.max, maxLimit.min, maxLimit.max) as number),
        ...(values["expires-in"] !== undefined
            ? { expiresInSeconds: plainInteger(values["expires-in"], 1, MAX_EXPIRES_IN_SECONDS) as number }
            : {}),
        fifo: flags.has("fifo"),
        dryRun: flags.has("dry-run"),
        timeoutMs: values.timeout === undefined ? REDRIVE_DEFAULTS.timeoutMs : (plainSeconds(values.timeout) as number),
        json: flags.has("json"),
        help: false,
    };
}

/**
 * Parse the flags, with Node's `util.parseArgs` in strict mode. A value starting with `-` is given as `--flag=value`.
 *
 * @param argv - The arguments after `redrive`.
 * @param env - The environment, for the table and DLQ fallbacks.
 * @throws OutboxError `INVALID_CONFIG` for an unknown flag, a missing value, a value on a boolean flag, a bad
 *   number, a missing table or DLQ URL, or a DLQ URL or endpoint that is not an http(s) URL.
 */
export function parseRedriveArgs(
    argv: readonly string[],
    env: Readonly<Record<string, string | undefined>>,
): RedriveArgs {
    const given = readRedriveFlags(argv);
    if (given.flags.has("help"))
        return {
            table: "",
            dlqUrl: "",
            max: 1000,
            fifo: false,
            dryRun: false,
            timeoutMs: REDRIVE_DEFAULTS.timeoutMs,
            json: false,
            help: true,
        };
    return redriveOptions(given, env);
}
