/**
 * Command-line parsing for `dynamodb-outbox`: the commands, their flags, the usage text generated from the same
 * table, and the validation that turns bad input into an `INVALID_CONFIG` {@link OutboxError} naming the flag,
 * the bad value, what is allowed and the fix. The caller prints the message with the usage and exits 2.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../../runtime/errors";
import { HANDLER_LIMITS } from "../../runtime/limits";
import { isRegionName } from "../../runtime/record/origin";
import { readFlags, type FlagProblem, type FlagToken, type FlagTypes } from "./flag-tokens";

/** The commands the tool knows. */
export type CommandName = "verify" | "migrate" | "doctor" | "adopt";

/** The commands, with the one-line summary the usage prints. */
export const COMMANDS: Readonly<Record<CommandName, string>> = {
    verify: "check a table against the outbox schema and prove the expiry path end to end (changes nothing but a test record it removes)",
    migrate: "plan (default) or --apply the changes that make a table match the schema: indexes, TTL, stream, backfill",
    doctor: "check a live outbox end to end: table, publisher mapping, sweeper schedule, DLQ depth, oldest pending record, publisher metrics (changes nothing)",
    adopt: "on a global table, take over an evacuated region's undelivered records: re-stamp them with --region's, pending, for its sweeper",
};

/**
 * The command with a parser of its own (cli/redrive/args.ts): `main` hands it everything after it, so it must come
 * first. Listed in the usage with {@link REDRIVE_SUMMARY}.
 */
export const REDRIVE_COMMAND = "redrive";

/** The usage line of {@link REDRIVE_COMMAND}. */
export const REDRIVE_SUMMARY =
    "move dead-lettered messages from the DLQ back into the outbox (flags: dynamodb-outbox redrive --help)";

type FlagKind = "boolean" | "string" | "url" | "queue-url" | "seconds" | "count";

/** One flag: its name without dashes, its value kind, the commands that accept it and its help text. */
interface FlagSpec {
    readonly name: string;
    readonly kind: FlagKind;
    readonly commands: readonly CommandName[];
    readonly valueName?: string;
    readonly help: string;
    /** The largest value of a `count` flag. @default MAX_PAGE_SIZE */
    readonly max?: number;
    /** A value to show in the message of a bad `url` or `queue-url` flag. */
    readonly example?: string;
}

const BOTH: readonly CommandName[] = ["verify", "migrate"];
const ALL: readonly CommandName[] = ["verify", "migrate", "doctor", "adopt"];

/** Every flag, in the order the usage lists them. */
const FLAGS: readonly FlagSpec[] = [
    {
        name: "table",
        kind: "string",
        commands: ALL,
        valueName: "name",
        help: "the outbox table (required, but for doctor with --outputs)",
    },
    {
        name: "outputs",
        kind: "string",
        commands: ["doctor"],
        valueName: "file",
        help: "the stack outputs, as pulumi stack output --json writes them (instead of --table)",
    },
    {
        name: "region",
        kind: "string",
        commands: ALL,
        valueName: "region",
        help: "AWS region (default: AWS_REGION, then AWS_DEFAULT_REGION)",
    },
    {
        name: "endpoint",
        kind: "url",
        commands: ALL,
        valueName: "url",
        example: "http://127.0.0.1:8000",
        help: "DynamoDB endpoint, e.g. http://127.0.0.1:8000 for DynamoDB Local",
    },
    { name: "json", kind: "boolean", commands: ALL, help: "print one JSON object on stdout (progress goes to stderr)" },
    {
        name: "timeout",
        kind: "seconds",
        commands: ALL,
        valueName: "seconds",
        help: "bound on the whole command, start-up to exit, every wait and AWS call in it (verify default 60, migrate default 3600, doctor default 60)",
    },
    {
        name: "poll-interval",
        kind: "seconds",
        commands: BOTH,
        valueName: "seconds",
        help: "seconds between status polls (verify default 1, migrate default 5)",
    },
    {
        name: "expiry",
        kind: "seconds",
        commands: ["verify"],
        valueName: "seconds",
        help: "expiry of the verification record (default 2)",
    },
    {
        name: "dlq-url",
        kind: "queue-url",
        commands: ["verify"],
        valueName: "url",
        example: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq",
        help: "also send the expired verification record to this SQS DLQ",
    },
    {
        name: "sqs-endpoint",
        kind: "url",
        commands: ["verify", "doctor"],
        valueName: "url",
        example: "http://127.0.0.1:4566",
        help: "SQS endpoint for the DLQ, e.g. a local emulator (default: the region's)",
    },
    {
        name: "max-pending-age",
        kind: "seconds",
        commands: ["doctor"],
        valueName: "seconds",
        help: "oldest pending record allowed (doctor default 300)",
    },
    {
        name: "apply",
        kind: "boolean",
        commands: ["migrate"],
        help: "carry the plan out (without it, print the plan and change nothing)",
    },
    {
        name: "confirm-table",
        kind: "string",
        commands: ["migrate"],
        valueName: "name",
        help: "with --apply: change a table that shows no sign of being an outbox (no outbox index, record, FENCE or OUTBOX_META row); repeat --table's name",
    },
    {
        name: "recreate-claim-index",
        kind: "boolean",
        commands: ["migrate"],
        help: "allow deleting and recreating a ClaimIndex that is not projected ALL (claims fail while it is absent; nothing is lost)",
    },
    {
        name: "page-size",
        kind: "count",
        commands: ["migrate"],
        valueName: "n",
        help: "items per backfill Scan page (default 100, at most 1000)",
    },
    {
        name: "expiry-shards",
        kind: "count",
        commands: BOTH,
        valueName: "n",
        max: HANDLER_LIMITS.expiryShards.max,
        help: `the writers' expiryShards: verify's record and migrate's has_expiry backfill use it (default 1, at most ${HANDLER_LIMITS.expiryShards.max})`,
    },
    {
        name: "regions",
        kind: "string",
        commands: ["verify"],
        valueName: "list",
        help: "the table's regions, comma-separated (e.g. us-east-1,us-west-2): report pending records without an origin stamp of one of them, as on a global table (default: DescribeTable's replicas)",
    },
    {
        name: "from",
        kind: "string",
        commands: ["adopt"],
        valueName: "region",
        help: "the evacuated region whose records to adopt (required); --region is the region that takes over",
    },
    { name: "help", kind: "boolean", commands: ALL, help: "show this help" },
];

/** The largest backfill page: a page is read and written before the next, so it bounds the work in flight. */
export const MAX_PAGE_SIZE = 1000;

/** The range of every seconds flag: a millisecond, to a day (longer waits belong to a rerun: every command resumes). */
export const SECONDS_RANGE = { min: 0.001, max: 86_400 } as const;

/**
 * A number of seconds as an operator types it, in ms: digits with an optional fraction (no sign, exponent, hex or
 * spaces), within {@link SECONDS_RANGE}.
 *
 * @returns The milliseconds, or `undefined` for anything else.
 */
export function plainSeconds(raw: string): number | undefined {
    const n = Number(raw);
    return /^\d+(\.\d+)?$/.test(raw) && n >= SECONDS_RANGE.min && n <= SECONDS_RANGE.max
        ? Math.round(n * 1000)
        : undefined;
}

/**
 * A whole number as an operator types it: digits only (no sign, exponent, hex or fraction), from `min` to `max`.
 *
 * @returns The number, or `undefined` for anything else.
 */
export function plainInteger(raw: string, min: number, max: number): number | undefined {
    const n = Number(raw);
    return /^\d+$/.test(raw) && n >= min && n <= max ? n : undefined;
}

/**
 * Check that `raw` is an http(s) URL, as an endpoint or queue URL must be.
 *
 * @returns The reason it is not, or `undefined` when it is.
 */
export function urlProblem(raw: string): string | undefined {
    let url: URL;
    try {
        url = new URL(raw);
    } catch {
        return "is not a URL";
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
        return `is a ${url.protocol.replace(/:$/, "")} URL, not http or https`;
    return undefined;
}

/**
 * Check that `raw` is an SQS queue URL: http(s), a host and the queue's path. Without an SQS endpoint the SDK sends
 * to the queue URL's host, so the URL must also parse as one; with `--sqs-endpoint` a local emulator's queue URLs
 * (`http://sqs.us-east-1.127.0.0.1:4566/000000000000/q`, which the URL standard refuses) are taken as given.
 *
 * @param raw - The queue URL.
 * @param sqsEndpoint - `--sqs-endpoint`, when given.
 * @returns The reason it is not one, or `undefined` when it is.
 */
export function queueUrlProblem(raw: string, sqsEndpoint: string | undefined): string | undefined {
    if (!/^https?:\/\/[^\s/]+\/\S+$/.test(raw)) return "is not an SQS queue URL";
    if (sqsEndpoint === undefined && urlProblem(raw) !== undefined)
        return "has a host the SDK cannot send to: pass --sqs-endpoint with it";
    return undefined;
}

/** The parsed command line. Durations are milliseconds; absent optional flags are `undefined`. */
export interface CliArgs {
    /** The command, or `undefined` when only `--help` was given. */
    readonly command?: CommandName;
    /** Whether `--help` (or `-h`) was given. */
    readonly help: boolean;
    /** `--table`. Validated present unless `help`. */
    readonly table: string;
    /** `--region`. @default undefined (the environment decides) */
    readonly region?: string;
    /** `--endpoint`. @default undefined (the AWS endpoint of the region) */
    readonly endpoint?: string;
    /** `--json`. @default false */
    readonly json: boolean;
    /** `--timeout`, in ms. @default undefined (the command's own default) */
    readonly timeoutMs?: number;
    /** `--poll-interval`, in ms. @default undefined (the command's own default) */
    readonly pollIntervalMs?: number;
    /** `--expiry`, in ms. @default undefined (verify's default) */
    readonly expiryMs?: number;
    /** `--dlq-url`. @default undefined */
    readonly dlqUrl?: string;
    /** `--sqs-endpoint`. @default undefined (the region's SQS endpoint) */
    readonly sqsEndpoint?: string;
    /** `--apply`. @default false */
    readonly apply: boolean;
    /** `--recreate-claim-index`. @default false */
    readonly recreateClaimIndex: boolean;
    /** `--confirm-table`, which repeats `--table` (migrate, with `--apply`). @default false */
    readonly confirmTable: boolean;
    /** `--page-size`. @default undefined (migrate's default) */
    readonly pageSize?: number;
    /** `--expiry-shards` (verify, migrate). @default undefined (1) */
    readonly expiryShards?: number;
    /** `--outputs` (doctor). @default undefined */
    readonly outputsFile?: string;
    /** `--max-pending-age`, in ms (doctor). @default undefined (doctor's default) */
    readonly maxPendingAgeMs?: number;
    /** `--from` (adopt): the evacuated region. @default undefined */
    readonly from?: string;
    /** `--regions` (verify): the table's regions, split at commas. @default undefined (DescribeTable's replicas) */
    readonly regions?: readonly string[];
}

function usageError(message: string, flag?: string): OutboxError {
    return new OutboxError("INVALID_CONFIG", message, { context: flag === undefined ? {} : { flag } });
}

function isCommand(word: string): word is CommandName {
    return Object.prototype.hasOwnProperty.call(COMMANDS, word);
}

/** DynamoDB's table name rule. */
const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;

function parseValue(spec: FlagSpec, raw: string): string | number {
    const flag = `--${spec.name}`;
    if (spec.kind === "string" || spec.kind === "url" || spec.kind === "queue-url") {
        if (raw.trim() === "") throw usageError(`${flag} needs a non-empty ${spec.valueName}, got ""`, spec.name);
        if ((spec.name === "table" || spec.name === "confirm-table") && !TABLE_NAME.test(raw)) {
            throw usageError(
                `${flag} "${raw}" is not a DynamoDB table name: 3 to 255 characters of a-z, A-Z, 0-9, "_", "-" and "."`,
                spec.name,
            );
        }
    }
    if (spec.kind === "string") return raw;
    if (spec.kind === "url" || spec.kind === "queue-url") {
        // The queue URL's host is checked with --sqs-endpoint known, after every flag is read.
        const problem = spec.kind === "url" ? urlProblem(raw) : queueUrlProblem(raw, "");
        if (problem !== undefined)
            throw usageError(
                `${flag} "${raw}" ${problem}: give ${spec.kind === "queue-url" ? "the queue's" : "an"} http:// or https:// URL, e.g. ${flag} ${spec.example ?? "https://…"}`,
                spec.name,
            );
        return raw;
    }
    if (spec.kind === "seconds") {
        const ms = plainSeconds(raw);
        if (ms === undefined)
            throw usageError(
                `${flag} must be a positive number of seconds, got "${raw}"; write plain digits from ${SECONDS_RANGE.min} to ${SECONDS_RANGE.max}, e.g. ${flag} 30`,
                spec.name,
            );
        return ms;
    }
    const max = spec.max ?? MAX_PAGE_SIZE;
    const n = plainInteger(raw, 1, max);
    if (n === undefined)
        throw usageError(
            `${flag} must be a whole number from 1 to ${max}, got "${raw}"; e.g. ${flag} ${Math.min(100, max)}`,
            spec.name,
        );
    return n;
}

/** The flags for the tokenizer: every one valued but the booleans, and `-h` for `--help`. */
const FLAG_TYPES: FlagTypes = Object.fromEntries(
    FLAGS.map((f) => [
        f.name,
        { type: f.kind === "boolean" ? "boolean" : "string", ...(f.name === "help" ? { short: "h" } : {}) },
    ]),
);

/** The command a positional word names, refusing a second one, `redrive` out of place and unknown commands. */
function commandOf(word: string, command: CommandName | undefined): CommandName {
    if (word === REDRIVE_COMMAND)
        throw usageError(
            `"${REDRIVE_COMMAND}" must come first, before any flag: dynamodb-outbox redrive --table <name> --dlq-url <url>`,
        );
    if (command !== undefined)
        throw usageError(`unexpected argument "${word}" after the command "${command}"; flags start with --`);
    if (!isCommand(word))
        throw usageError(
            `unknown command "${word}"; the commands are ${[...Object.keys(COMMANDS), REDRIVE_COMMAND].join(", ")}`,
        );
    return word;
}

/** Read one accepted flag into `values`, refusing a repeat and a malformed value. */
function readFlag(token: FlagToken & { kind: "flag" }, values: Map<string, string | number | boolean>): void {
    // `-h` sets --help again, as it always has; only --help itself counts as a repeat.
    if (token.rawName === "-h") {
        values.set("help", true);
        return;
    }
    const spec = specOf(token.name, values);
    values.set(spec.name, token.value === undefined ? true : parseValue(spec, token.value));
}

/** The flag's spec, refusing it when it was given already. */
function specOf(name: string, values: ReadonlyMap<string, unknown>): FlagSpec {
    const spec = FLAGS.find((f) => f.name === name) as FlagSpec;
    if (values.has(spec.name)) throw usageError(`--${spec.name} was given twice; give it once`, spec.name);
    return spec;
}

/** The error for the first word the flag reader refused. */
function problemError(problem: FlagProblem, values: ReadonlyMap<string, unknown>): OutboxError {
    if (problem.kind === "unknown")
        return usageError(`unknown flag "${problem.flag}"; see the flags below`, problem.name);
    const spec = specOf(problem.name, values);
    const flag = `--${spec.name}`;
    if (problem.kind === "value-on-boolean")
        return usageError(`${flag} takes no value, got "${problem.raw}"; write just ${flag}`, spec.name);
    if (problem.kind === "missing-value")
        return usageError(`${flag} needs a value: ${flag} <${spec.valueName}>`, spec.name);
    // A value that would be refused anyway gets its own message; a good one is refused only for how it is written.
    parseValue(spec, problem.value);
    return usageError(
        `${flag} is followed by "${problem.value}", which reads as a flag; if it is the value, write ${flag}=${problem.value}`,
        spec.name,
    );
}

/** The checks across flags: each belongs to the command, the pairs that go (or never go) together, --table. */
function checkCombination(
    command: CommandName | undefined,
    values: ReadonlyMap<string, string | number | boolean>,
): void {
    if (command === undefined)
        throw usageError(
            `no command given; the commands are ${[...Object.keys(COMMANDS), REDRIVE_COMMAND].join(", ")}`,
        );
    for (const name of values.keys()) {
        const spec = FLAGS.find((f) => f.name === name) as FlagSpec;
        if (!spec.commands.includes(command)) {
            throw usageError(
                `--${name} is not a flag of "${command}"; it belongs to ${spec.commands.join(", ")}`,
                name,
            );
        }
    }
    if (command === "verify" && values.has("sqs-endpoint") && !values.has("dlq-url"))
        throw usageError("--sqs-endpoint only applies with --dlq-url; add --dlq-url <url> or drop it", "sqs-endpoint");
    const dlqUrl = values.get("dlq-url");
    if (typeof dlqUrl === "string") {
        const problem = queueUrlProblem(dlqUrl, values.get("sqs-endpoint") as string | undefined);
        if (problem !== undefined) throw usageError(`--dlq-url "${dlqUrl}" ${problem}`, "dlq-url");
    }
    if (command === "doctor" && values.has("table") && values.has("outputs")) {
        throw usageError(
            "--table and --outputs were both given; give one: --outputs names the table by its tableName",
            "outputs",
        );
    }
    if (command === "doctor" && !values.has("table") && !values.has("outputs")) {
        throw usageError(
            "doctor needs --table <name> or --outputs <file> (pulumi stack output --json > outputs.json)",
            "table",
        );
    }
    if (command === "adopt" && !values.has("from"))
        throw usageError("adopt needs --from <region>: the evacuated region, e.g. --from us-east-1", "from");
    if (command !== "doctor" && !values.has("table"))
        throw usageError(`--table is required: the name of the outbox table, e.g. --table orders-outbox`, "table");
    checkConfirmTable(values);
}

/** `--confirm-table` goes with `--apply`, and repeats `--table` exactly. */
function checkConfirmTable(values: ReadonlyMap<string, string | number | boolean>): void {
    const confirmed = values.get("confirm-table");
    if (typeof confirmed !== "string") return;
    if (!values.has("apply"))
        throw usageError(
            "--confirm-table only applies with --apply (the plan changes nothing); add --apply or drop it",
            "confirm-table",
        );
    const table = values.get("table") as string;
    if (confirmed !== table)
        throw usageError(
            `--confirm-table "${confirmed}" does not repeat --table "${table}"; it confirms the table by its exact name: --confirm-table ${table}`,
            "confirm-table",
        );
}

/**
 * Parse `argv` (without the node and script paths), with Node's `util.parseArgs` in strict mode. Accepts
 * `--flag value` and `--flag=value`, flags before or after the command; a value starting with `-` only as
 * `--flag=value`.
 *
 * @param argv - The arguments, e.g. `["verify", "--table", "orders-outbox"]`.
 * @throws OutboxError `INVALID_CONFIG` for an unknown command or flag, a flag the command does not take, a
 *   missing or malformed value, or a missing `--table`.
 */
export function parseArgs(argv: readonly string[]): CliArgs {
    let command: CommandName | undefined;
    const values = new Map<string, string | number | boolean>();
    const { tokens, problem } = readFlags(argv, FLAG_TYPES);
    for (const token of tokens) {
        if (token.kind === "positional") command = commandOf(token.raw, command);
        else readFlag(token, values);
    }
    if (problem !== undefined) throw problemError(problem, values);
    const help = values.get("help") === true;
    if (!help) checkCombination(command, values);
    const get = <T>(name: string): T | undefined => values.get(name) as T | undefined;
    return {
        command,
        help,
        table: get<string>("table") ?? "",
        region: get<string>("region"),
        endpoint: get<string>("endpoint"),
        json: get<boolean>("json") ?? false,
        timeoutMs: get<number>("timeout"),
        pollIntervalMs: get<number>("poll-interval"),
        expiryMs: get<number>("expiry"),
        dlqUrl: get<string>("dlq-url"),
        sqsEndpoint: get<string>("sqs-endpoint"),
        apply: get<boolean>("apply") ?? false,
        recreateClaimIndex: get<boolean>("recreate-claim-index") ?? false,
        confirmTable: values.has("confirm-table"),
        pageSize: get<number>("page-size"),
        ...(values.has("expiry-shards") ? { expiryShards: get<number>("expiry-shards") } : {}),
        ...(values.has("outputs") ? { outputsFile: get<string>("outputs") } : {}),
        ...(values.has("max-pending-age") ? { maxPendingAgeMs: get<number>("max-pending-age") } : {}),
        ...(values.has("from") ? { from: get<string>("from") } : {}),
        ...(values.has("regions") ? { regions: regionList(get<string>("regions")!) } : {}),
    };
}

/** `--regions`: region names split at commas, each checked. */
function regionList(raw: string): string[] {
    return raw.split(",").map((r) => {
        const region = r.trim();
        if (isRegionName(region)) return region;
        throw usageError(
            `--regions "${raw}" holds ${JSON.stringify(region)}, which is not an AWS region name; list the table's regions separated by commas, e.g. --regions us-east-1,us-west-2`,
            "regions",
        );
    });
}

function flagLine(spec: FlagSpec): string {
    const left = spec.kind === "boolean" ? `--${spec.name}` : `--${spec.name} <${spec.valueName}>`;
    return `  ${left.padEnd(28)} ${spec.help}`;
}

/**
 * The usage text: commands, flags per command, and how credentials are found.
 *
 * @param command - Limit the flags to this command's. @default every command
 */
export function usage(command?: CommandName): string {
    const commands = command === undefined ? (Object.keys(COMMANDS) as CommandName[]) : [command];
    const lines = [
        `usage: dynamodb-outbox <${commands.join("|")}> --table <name> [flags]`,
        ...(command === undefined
            ? [`       dynamodb-outbox ${REDRIVE_COMMAND} --table <name> --dlq-url <url> [flags]`]
            : []),
        "",
        "commands:",
        ...commands.map((c) => `  ${c.padEnd(28)} ${COMMANDS[c]}`),
        ...(command === undefined ? [`  ${REDRIVE_COMMAND.padEnd(28)} ${REDRIVE_SUMMARY}`] : []),
    ];
    for (const c of commands) {
        lines.push("", `${c} flags:`, ...FLAGS.filter((f) => f.commands.includes(c)).map(flagLine));
    }
    lines.push(
        "",
        "Credentials come from the AWS default provider chain (environment, profile, SSO, instance role).",
        "DynamoDB Local accepts any credentials: AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local, and the same",
        "region as the process that created the table (DynamoDB Local keeps one database per access key and region).",
        "",
        "exit codes: 0 ok, 1 a check failed or the migration was refused or failed, 2 bad command line",
    );
    return lines.join("\n");
}
