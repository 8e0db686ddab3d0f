/**
 * The flags of `npm start` (dev/demo/start.ts): parsed strictly, so a typo fails with a message that names the
 * flag, the bad value, what is allowed and the fix, before anything is started.
 *
 * @packageDocumentation
 */
import { readFlags, type FlagProblem, type FlagTypes } from "../../cli/shared/flag-tokens";
import { DESTINATION_KINDS, type DestinationKind } from "../../runtime/destination/kind";
import { MAPPING_LIMITS } from "../../runtime/limits";

/** What `npm start` runs. */
export interface StartOptions {
    /** Orders (one event each) the demo producer writes. @default 1000 */
    readonly count: number;
    /** Orders written per second; 0 writes as fast as DynamoDB takes them. @default 100 */
    readonly rate: number;
    /**
     * Ordering keys (customers). 0: every order is keyless and takes the batched fast path. N > 0: order i belongs
     * to customer i mod N, and each customer's events are published strictly in write order (the claim path).
     * @default 0
     */
    readonly keys: number;
    /** Batches of one stream shard the local event source mapping runs at once, 1 to 10 (Lambda's `ParallelizationFactor`). @default 1 */
    readonly parallelizationFactor: number;
    /** Share of orders written already expired, from 0 to 1; they must land in the DLQ, not on the topic. @default 0 */
    readonly expireRatio: number;
    /**
     * Where the relay publishes: an SNS topic (fauxqs, subscribed by the consumer's queue), an SQS queue (fauxqs, read
     * by the consumer), or an EventBridge bus (the fault server's stand-in, routed to a queue the consumer reads).
     * @default "sns"
     */
    readonly destination: DestinationKind;
    /**
     * Share of the destination's batch calls (PublishBatch, SendMessageBatch or PutEvents) that fail (HTTP 500), from
     * 0 to 0.9; the fault-injecting server then holds the destination. @default 0
     */
    readonly failRate: number;
    /**
     * The size of each order's event payload, in bytes of JSON; 0 keeps the small payload. Past SNS's 256 KiB the
     * writer offloads it to fauxqs's S3 (the claim check) and the consumer resolves and checks it. @default 0
     */
    readonly payloadBytes: number;
    /**
     * Regions, 1 or 2. 2 runs the outbox on a global table: the two-region stand-in (two DynamoDB Locals replicated
     * both ways), a writer and a relay per region, keyed and keyless events; only `--count`, `--keys`, `--rate` and
     * `--keep` go with it. @default 1
     */
    readonly regions: number;
    /** An existing DynamoDB endpoint to use instead of starting DynamoDB Local (the demo table is deleted on exit). @default undefined */
    readonly endpoint?: string;
    /** Stay up after the summary, until Ctrl-C, to poke at the table, topic and queues. @default false */
    readonly keep: boolean;
    /** Print the usage and exit. @default false */
    readonly help: boolean;
}

/** The defaults of {@link StartOptions}. */
export const START_DEFAULTS: StartOptions = {
    count: 1000,
    rate: 100,
    keys: 0,
    parallelizationFactor: 1,
    expireRatio: 0,
    destination: DESTINATION_KINDS.sns,
    failRate: 0,
    payloadBytes: 0,
    regions: 1,
    keep: false,
    help: false,
};

/** A command-line mistake: the message is the whole explanation, shown without a stack. */
export class UsageError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "UsageError";
    }
}

/** The usage text of `npm start`. */
export const START_USAGE = `Usage: npm start -- [options]

Runs a whole outbox on this machine: DynamoDB Local and a local SNS -> SQS (fauxqs), a producer writing
orders with their events in one transaction, the stream relay into the same publisher code the Lambda runs,
the sweeper, and a consumer that deduplicates on the record id.

Options:
  --count <n>          orders to write, 1 to 1000000                          (default ${START_DEFAULTS.count})
  --rate <n>           orders per second, 0 for as fast as possible            (default ${START_DEFAULTS.rate})
  --keys <n>           ordering keys (customers), 0 for keyless orders         (default ${START_DEFAULTS.keys})
  --parallelization-factor <n>  batches of one stream shard at once, 1 to 10  (default ${START_DEFAULTS.parallelizationFactor})
  --expire-ratio <r>   share of orders written already expired (-> DLQ), 0..1  (default ${START_DEFAULTS.expireRatio})
  --destination <kind> sns (a topic), sqs (a queue) or eventbridge (a bus: the  (default ${START_DEFAULTS.destination})
                       fault server's stand-in, no maintained emulator exists)
  --fail-rate <r>      share of the destination's batch calls that fail, 0..0.9 (default ${START_DEFAULTS.failRate})
  --payload-bytes <n>  each event's payload size, 0..100000000; past 256 KiB it  (default ${START_DEFAULTS.payloadBytes})
                       goes to S3 (fauxqs) as a claim check and the consumer fetches and checks it
  --regions <n>        1, or 2 for a global table: two DynamoDB Locals       (default ${START_DEFAULTS.regions})
                       replicated both ways, a writer and a relay per region; every other event keyed
                       (over --keys customers, 4 when 0), each customer written from its home region
  --endpoint <url>     use this DynamoDB instead of starting DynamoDB Local (the demo table is deleted on exit)
  --keep               stay up after the summary until Ctrl-C
  --help               show this text

The last line of the summary is: delivered <d>/<n> lost <l> duplicates <u> dlq <q>`;

interface NumberRule {
    readonly min: number;
    readonly max: number;
    readonly integer: boolean;
    readonly allowed: string;
    readonly example: string;
}

const NUMBER_FLAGS: Readonly<
    Record<
        string,
        {
            readonly key:
                | "count"
                | "rate"
                | "keys"
                | "parallelizationFactor"
                | "expireRatio"
                | "failRate"
                | "payloadBytes"
                | "regions";
            readonly rule: NumberRule;
        }
    >
> = {
    "--count": {
        key: "count",
        rule: { min: 1, max: 1_000_000, integer: true, allowed: "an integer from 1 to 1000000", example: "100" },
    },
    "--rate": {
        key: "rate",
        rule: {
            min: 0,
            max: 100_000,
            integer: false,
            allowed: "a number of orders per second from 0 (as fast as possible) to 100000",
            example: "200",
        },
    },
    "--keys": {
        key: "keys",
        rule: { min: 0, max: 100_000, integer: true, allowed: "an integer from 0 (keyless) to 100000", example: "8" },
    },
    "--parallelization-factor": {
        key: "parallelizationFactor",
        rule: {
            min: MAPPING_LIMITS.parallelizationFactor.min,
            max: MAPPING_LIMITS.parallelizationFactor.max,
            integer: true,
            allowed: "an integer from 1 to 10",
            example: "4",
        },
    },
    "--expire-ratio": {
        key: "expireRatio",
        rule: { min: 0, max: 1, integer: false, allowed: "a share from 0 to 1", example: "0.1" },
    },
    "--fail-rate": {
        key: "failRate",
        rule: { min: 0, max: 0.9, integer: false, allowed: "a share from 0 to 0.9", example: "0.2" },
    },
    "--payload-bytes": {
        key: "payloadBytes",
        rule: {
            min: 0,
            max: 100_000_000,
            integer: true,
            allowed: "an integer number of bytes from 0 (the small payload) to 100000000",
            example: "1048576",
        },
    },
    "--regions": {
        key: "regions",
        rule: {
            min: 1,
            max: 2,
            integer: true,
            allowed: "1 (one table) or 2 (a global table on the two-region stand-in)",
            example: "2",
        },
    },
};

/** The flags `--regions 2` takes: its world is its own (two DynamoDB Locals, the fault server's topic). */
const TWO_REGION_FLAGS = ["--count", "--keys", "--rate", "--regions", "--keep", "--help", "-h"];

function parseNumber(flag: string, raw: string, rule: NumberRule): number {
    const value = raw.trim() === "" ? Number.NaN : Number(raw);
    if (!Number.isFinite(value) || (rule.integer && !Number.isInteger(value)) || value < rule.min || value > rule.max) {
        throw new UsageError(
            `${flag} is ${JSON.stringify(raw)}; expected ${rule.allowed}. Example: ${flag} ${rule.example}`,
        );
    }
    return value;
}

function parseEndpoint(raw: string): string {
    let url: URL | undefined;
    try {
        url = new URL(raw);
    } catch {
        url = undefined;
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
        throw new UsageError(
            `--endpoint is ${JSON.stringify(raw)}; expected an http(s) URL of a running DynamoDB, e.g. --endpoint http://127.0.0.1:8000`,
        );
    }
    return raw.replace(/\/+$/, "");
}

/** The kinds `--destination` takes, in the order the usage names them. */
const DESTINATION_CHOICES: readonly DestinationKind[] = Object.values(DESTINATION_KINDS);

function parseDestination(raw: string): DestinationKind {
    const kind = DESTINATION_CHOICES.find((k) => k === raw);
    if (kind === undefined)
        throw new UsageError(
            `--destination is ${JSON.stringify(raw)}; expected one of ${DESTINATION_CHOICES.join(", ")} (an SNS topic, an SQS queue or an EventBridge bus). Example: --destination sqs`,
        );
    return kind;
}

const FLAG_TYPES: FlagTypes = {
    ...Object.fromEntries(Object.keys(NUMBER_FLAGS).map((flag) => [flag.slice(2), { type: "string" }] as const)),
    destination: { type: "string" },
    endpoint: { type: "string" },
    keep: { type: "boolean" },
    help: { type: "boolean", short: "h" },
};

type Options = { -readonly [K in keyof StartOptions]: StartOptions[K] };

/** Set one valued flag's option from its value. */
function setValue(out: Options, flag: string, value: string): void {
    const numeric = NUMBER_FLAGS[flag];
    if (flag === "--destination") out.destination = parseDestination(value);
    else if (numeric === undefined) out.endpoint = parseEndpoint(value);
    else out[numeric.key] = parseNumber(flag, value, numeric.rule);
}

/** The error for the first word the flag reader refused. */
function problemError(problem: FlagProblem): UsageError {
    const flag = `--${problem.name}`;
    if (problem.kind === "unknown") {
        return new UsageError(
            `unknown option ${JSON.stringify(problem.raw)}; the options are ${[...Object.keys(NUMBER_FLAGS), "--destination", "--endpoint", "--keep", "--help"].join(", ")} (see --help)`,
        );
    }
    if (problem.kind === "value-on-boolean")
        return new UsageError(`${flag} takes no value (got ${JSON.stringify(problem.value)}); write just ${flag}`);
    if (problem.kind === "missing-value")
        return new UsageError(
            `${flag} needs a value, e.g. ${flag} ${NUMBER_FLAGS[flag]?.rule.example ?? (flag === "--destination" ? "sqs" : "http://127.0.0.1:8000")}`,
        );
    // A value that would be refused anyway gets its own message; a good one is refused only for how it is written.
    setValue({ ...START_DEFAULTS }, flag, problem.value);
    return new UsageError(
        `${flag} is followed by ${JSON.stringify(problem.value)}, which reads as a flag; if it is the value, write ${flag}=${problem.value}`,
    );
}

/**
 * Parse `npm start` flags (`--flag value` or `--flag=value`), with Node's `util.parseArgs` in strict mode. A value
 * starting with `-` is given as `--flag=value`.
 *
 * @param argv - The arguments after the script name.
 * @throws UsageError for an unknown flag, a missing value or a value out of range.
 */
export function parseStartArgs(argv: readonly string[]): StartOptions {
    const out: Options = { ...START_DEFAULTS };
    const seen = new Set<string>();
    const { tokens, problem } = readFlags(argv, FLAG_TYPES);
    for (const token of tokens) {
        if (token.kind === "positional")
            throw problemError({ kind: "unknown", name: "", flag: token.raw, raw: token.raw });
        // As written: `--help` and `-h` count apart.
        if (seen.has(token.rawName)) throw new UsageError(`${token.rawName} is given twice; give it once`);
        seen.add(token.rawName);
        if (token.value === undefined) out[token.name === "help" ? "help" : "keep"] = true;
        else setValue(out, token.rawName, token.value);
    }
    if (problem !== undefined && problem.kind !== "unknown" && seen.has(`--${problem.name}`))
        throw new UsageError(`--${problem.name} is given twice; give it once`);
    if (problem !== undefined) throw problemError(problem);
    if (out.payloadBytes > 0 && out.failRate > 0 && out.destination === DESTINATION_KINDS.sns) {
        throw new UsageError(
            "--payload-bytes and --fail-rate do not go together with --destination sns: with --fail-rate the consumer reads what the AWS fault server recorded (it delivers to no queue), and does not fetch payloads from S3; drop one, or use --destination sqs or eventbridge, whose consumer reads a queue",
        );
    }
    const foreign = [...seen].find((flag) => !TWO_REGION_FLAGS.includes(flag));
    if (out.regions === 2 && foreign !== undefined)
        throw new UsageError(
            `${foreign} does not go with --regions 2, which runs its own world (two DynamoDB Locals and one SNS topic on the AWS fault server); with it give only ${TWO_REGION_FLAGS.slice(0, 5).join(", ")}`,
        );
    if (out.keys > out.count)
        throw new UsageError(
            `--keys is ${out.keys} but --count is ${out.count}; use at most one ordering key per order`,
        );
    return out;
}
