/**
 * `npm run bench`: our relay against the Streams article's naive relay, side by side, in one run, on the same
 * DynamoDB Local (a fresh instance of it per measured run, warmed by an untimed run of the same relay, see below) and the same local SNS (the
 * AWS fault server, whose per-call latency can be set), with the same orders. Prints two tables, or with `--json` one object:
 * `{"offload":{...},"drain":{...},"ours":{...},"naive":{...},"claim":{...},"lambda":{...}}`.
 *
 * - `offload`: an offloaded write's cost (the claim check): write latency inline against offloaded, calls and bytes
 *   per message (dev/bench/offload-cost.ts).
 *
 * - `drain`: one shard draining a backlog written beforehand, with a latency added to every DynamoDB and SNS call
 *   of the relay (dev/bench/drain-run.ts): msgs/s, sequential round trips per 100-record batch, calls per message;
 *   ours and the naive relay on the same orders, then ours on a FIFO topic and with ordering keys, the keyed drain
 *   at `parallelizationFactor` 1 and at {@link KEYED_PARALLEL_FACTOR}, each with its per-key order check; then ours,
 *   keyless and keyed, to an SQS queue and to an EventBridge bus (the fault server's stand-in) with the same latency
 *   per destination call, beside the SNS runs (`drain.destinations`: msgs/s, round trips, calls per message and the
 *   entries per call the server saw).
 *
 * - `ours`/`naive`: calls, capacity units, throughput and write → SNS-acknowledgement latency per message, with
 *   SNS answering at once, and under `withSnsLatency` with `--sns-latency-ms` added to every SNS call (local
 *   latency understates AWS, and call counts matter more on a real network).
 * - `claim`: read units and Query pages of one 100-record fast-path claim at backlogs of 1000 and 50000
 *   (`measureClaimCost` from dev/bench/claim-cost.ts).
 * - `lambda`: the publisher archive as the component builds it in this repository's program and as an installed
 *   package's consumer gets it (dev/bench/lambda-cost.ts), and each one's cold load time on Lambda's Node.
 *
 * Progress goes to stderr, so `--json` output can be piped.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { startDynamoDbLocal, type DynamoDbLocal } from "../emulators/dynamodb-local";
import { startAwsFaultServer } from "../emulators/aws-fault-server";
import { measureClaimCost } from "./claim-cost";
import { measureLambdaCost, type LambdaCost } from "./lambda-cost";
import { measureOffloadCost, offloadTable } from "./offload-cost";
import type { DestinationKind } from "../../runtime/destination/kind";
import { BATCH_ACTIONS } from "./drain-destination";
import { runDrain, type DrainRunResult, type DrainVariant } from "./drain-run";
import { runRelay, type RelayKind, type RelayRunResult } from "./relay-run";
import { round } from "./stats";
import { stopOnSignals } from "../demo/shutdown";
import { exitWithoutJava, optionsOrExit } from "./script-start";

/** The flags of the benchmark. */
export interface BenchOptions {
    /** Small sizes that finish in under a minute. @default false */
    readonly quick: boolean;
    /**
     * The smallest sizes, for the bench smoke in `npm test`: every section runs and emits its JSON keys, and no
     * figure is meant to be read. Implies `quick`. @default false
     */
    readonly smoke: boolean;
    /** Print one JSON object instead of the table. @default false */
    readonly json: boolean;
    /** Messages per burst. @default 200 with --quick, else 2000 */
    readonly messages: number;
    /** Latency added to every SNS call in the second mode, ms. @default 5 */
    readonly snsLatencyMs: number;
    /** The pace of the latency runs, orders per second. @default a third of the slower relay's burst throughput in that mode */
    readonly latencyRate?: number;
    /** Records in each drain run's backlog. @default 300 with --quick, else 1000 */
    readonly drainMessages: number;
    /** Latency added to every DynamoDB call of the relay in the drain runs, ms. @default 5 */
    readonly drainDynamoDbLatencyMs: number;
    /** Latency added to every destination call (SNS, SQS or EventBridge) of the relay in the drain runs, ms. @default 15 */
    readonly drainSnsLatencyMs: number;
    /** Run the drain only (no end-to-end runs, no claim or archive figures). @default false */
    readonly drainOnly: boolean;
}

/** The sizes of the runs that are not flags: the warm-ups, the claim backlogs, the offload writes, the cold loads. */
interface BenchSizes {
    /** Orders each end-to-end run first writes and relays as a burst through a fresh DynamoDB Local, untimed. */
    readonly relayWarmUp: number;
    /** Records each drain first moves through a fresh DynamoDB Local, untimed, so no relay is timed on a cold JVM. */
    readonly drainWarmUp: number;
    /** The backlogs one 100-record claim is measured against. */
    readonly claimBacklogs: readonly number[];
    /** Claims measured per backlog. */
    readonly claims: number;
    /** Sequential writes per offload run. */
    readonly offloadWrites: number;
    /** Cold loads each archive's median is over. */
    readonly coldLoads: number;
}

/** The sizes of a full run, of `--quick` and of `--smoke`. */
function benchSizes(options: Pick<BenchOptions, "quick" | "smoke">): BenchSizes {
    if (options.smoke)
        return {
            relayWarmUp: 20,
            drainWarmUp: 20,
            claimBacklogs: [100, 200],
            claims: 1,
            offloadWrites: 3,
            coldLoads: 1,
        };
    return {
        relayWarmUp: 100,
        drainWarmUp: 200,
        claimBacklogs: [1000, 50_000],
        claims: options.quick ? 1 : 3,
        offloadWrites: options.quick ? 20 : 100,
        coldLoads: 7,
    };
}

/** One relay's drain figures in the JSON (see {@link DrainRunResult}). */
export type DrainFigures = Pick<
    DrainRunResult,
    | "msgsPerSec"
    | "roundTripsPerBatch"
    | "snsCallsPerMessage"
    | "ddbCallsPerMessage"
    | "msPerBatch"
    | "emulatorCpuMsPerMessage"
>;

/** A keyed drain's figures: the keys, the mapping's factor, how many batches overlapped, and the order check. */
export type KeyedDrainFigures = DrainFigures &
    Pick<DrainRunResult, "peakConcurrentBatches"> & {
        readonly keys: number;
        readonly parallelizationFactor: number;
        readonly inversions: number;
    };

/** The keyed drain's second `parallelizationFactor`: what a higher factor buys on one shard (issue 24 point 5). */
export const KEYED_PARALLEL_FACTOR = 4;

/** One destination kind's drain figures (ours), keyless or keyed, in `drain.destinations`. */
export type DestinationDrainFigures = Pick<
    DrainRunResult,
    | "msgsPerSec"
    | "roundTripsPerBatch"
    | "destinationCallsPerMessage"
    | "entriesPerCall"
    | "busChecksPerMessage"
    | "ddbCallsPerMessage"
    | "msPerBatch"
    | "emulatorCpuMsPerMessage"
> & {
    /** The kind's batch call: `PublishBatch`, `SendMessageBatch`, `PutEvents`. */
    readonly batchAction: string;
    /** Keyed only: records accepted out of their key's order (on a bus, in the order the publisher put them). */
    readonly inversions?: number;
};

/** The `drain.destinations` object: ours drained to each kind, keyless and keyed, with the same latency per call. */
export type DestinationsReport = Record<
    DestinationKind,
    { readonly keyless: DestinationDrainFigures; readonly keyed: DestinationDrainFigures }
> & {
    /** The latency added to every DynamoDB call and every destination call of the relay. */
    readonly latencyMs: { readonly dynamodb: number; readonly destination: number };
};

/** The `drain` object of the JSON. */
export interface DrainReport {
    /** Ours, keyless records on a standard topic. */
    readonly ours: DrainFigures;
    /** The naive relay on the same orders. */
    readonly naive: DrainFigures;
    /** Ours, keyless records on a FIFO topic (each order its own message group). */
    readonly fifo: DrainFigures;
    /** Ours, records with ordering keys (the claim path), on a standard topic; `inversions` must be 0. */
    readonly keyed: KeyedDrainFigures;
    /** The same keyed drain with the local mapping at `parallelizationFactor` {@link KEYED_PARALLEL_FACTOR}. */
    readonly keyedParallel: KeyedDrainFigures;
    /** Ours to an SNS topic (the `ours` and `keyed` runs), an SQS queue and an EventBridge bus, side by side. */
    readonly destinations: DestinationsReport;
    /** The latency added to every relay call. */
    readonly latencyMs: { readonly dynamodb: number; readonly sns: number };
    /** Records per backlog. */
    readonly messages: number;
}

/** Per relay figures in the JSON, named and documented as in {@link RelayRunResult}: the burst run's, but the latencies are the paced run's. */
export interface RelayFigures extends Pick<
    RelayRunResult,
    | "snsCallsPerMessage"
    | "ddbCallsPerMessage"
    | "wcuPerMessage"
    | "rcuPerMessage"
    | "msgsPerSec"
    | "p50LatencyMs"
    | "p99LatencyMs"
    | "p99PartsMs"
> {
    /** The same run with `latencyMs` added to every SNS call. */
    readonly withSnsLatency: {
        readonly latencyMs: number;
        readonly msgsPerSec: number;
        readonly p50LatencyMs: number;
        readonly p99LatencyMs: number;
        readonly p99PartsMs: RelayRunResult["p99PartsMs"];
        readonly paceMsgsPerSec: number;
    };
    /** The pace of the latency run, orders per second. */
    readonly paceMsgsPerSec: number;
    /** Capacity units per message by who spent them (the writer, the relay) and where (`table` or a GSI's name). */
    readonly unitsByPerMessage: { readonly writer: Record<string, number>; readonly relay: Record<string, number> };
    /** Calls per message by command. */
    readonly callsPerMessage: Record<string, number>;
    /** Mean milliseconds per call by command, in the burst without added SNS latency. */
    readonly msPerCall: Record<string, number>;
}

/** The claim figures: per backlog size, one 100-record claim's read units and Query pages. */
export type ClaimFigures = Record<string, { readonly rcu: number; readonly pages: number }>;

const USAGE = `Usage: npm run bench -- [--quick | --smoke] [--json] [--messages <n>] [--sns-latency-ms <n>] [--latency-rate <n>]
                          [--drain-messages <n>] [--drain-dynamodb-ms <n>] [--drain-sns-ms <n>] [--drain-only]

Drain: a backlog of <drain-messages> orders written first, then drained through the local event source mapping
(one shard, batch size 100) with a latency added to every DynamoDB and destination call of the relay; ours and
the naive relay, then ours on a FIFO topic and with ordering keys, then ours keyless and keyed to an SQS queue
and to an EventBridge bus (the fault server's stand-in), beside SNS.

End to end: for each relay and each SNS mode, a burst of <messages> orders written as fast as DynamoDB takes them
(calls, capacity units, messages/s), then <messages>/4 orders paced at a third of the slower relay's burst rate,
the same pace for both (latency percentiles: the pipeline's, not a queue's).

Every measured run gets a fresh DynamoDB Local, first warmed by an untimed run of the same relay (200 records
drained, or a 100-order burst; 20 of each with --smoke), so no relay is timed on a cold JVM.

  --quick              200 messages per burst, claim backlogs of 1000 and 50000 claimed once; the default is 2000
  --smoke              the smallest sizes (50 per burst, 100 per drain, claim backlogs of 100 and 200, one cold
                       load): every section runs and prints its JSON keys, no figure is meant to be read (the bench
                       smoke in npm test runs it)
  --json               print {"offload":{...},"drain":{...},"ours":{...},"naive":{...},"claim":{...},"lambda":{...}} on stdout (the tables go to stderr)
  --messages <n>       messages per burst, 50 to 100000
  --sns-latency-ms <n> latency added to each SNS call in the second mode, 0 to 1000 (default 5)
  --latency-rate <n>   orders per second in the latency runs, 1 to 1000, instead of the measured pace
  --drain-messages <n> records per drain backlog, 100 to 100000 (default 1000, 300 with --quick)
  --drain-dynamodb-ms <n> latency added to each DynamoDB call in the drain, 0 to 1000 (default 5)
  --drain-sns-ms <n>   latency added to each destination call (SNS, SQS, EventBridge) in the drain, 0 to 1000 (default 15)
  --drain-only         the drain table only`;

function parseBenchArgs(argv: readonly string[]): BenchOptions | "help" {
    let quick = false;
    let smoke = false;
    let json = false;
    let messages: number | undefined;
    let snsLatencyMs = 5;
    let latencyRate: number | undefined;
    let drainMessages: number | undefined;
    let drainDynamoDbLatencyMs = 5;
    let drainSnsLatencyMs = 15;
    let drainOnly = false;
    const integer = (flag: string, raw: string | undefined, min: number, max: number): number => {
        const value = Number(raw);
        if (raw === undefined || raw.trim() === "" || !Number.isInteger(value) || value < min || value > max) {
            throw new Error(
                `${flag} is ${raw === undefined ? "missing its value" : JSON.stringify(raw)}; expected an integer from ${min} to ${max}, e.g. ${flag} ${min * 2}`,
            );
        }
        return value;
    };
    for (let i = 0; i < argv.length; i += 1) {
        const arg = argv[i]!;
        if (arg === "--help" || arg === "-h") return "help";
        else if (arg === "--quick") quick = true;
        else if (arg === "--smoke") smoke = quick = true;
        else if (arg === "--json") json = true;
        else if (arg === "--messages") messages = integer(arg, argv[(i += 1)], 50, 100_000);
        else if (arg === "--sns-latency-ms") snsLatencyMs = integer(arg, argv[(i += 1)], 0, 1000);
        else if (arg === "--latency-rate") latencyRate = integer(arg, argv[(i += 1)], 1, 1000);
        else if (arg === "--drain-messages") drainMessages = integer(arg, argv[(i += 1)], 100, 100_000);
        else if (arg === "--drain-dynamodb-ms") drainDynamoDbLatencyMs = integer(arg, argv[(i += 1)], 0, 1000);
        else if (arg === "--drain-sns-ms") drainSnsLatencyMs = integer(arg, argv[(i += 1)], 0, 1000);
        else if (arg === "--drain-only") drainOnly = true;
        else {
            throw new Error(
                `unknown option ${JSON.stringify(arg)}; the options are --quick, --smoke, --json, --messages, --sns-latency-ms, --latency-rate, --drain-messages, --drain-dynamodb-ms, --drain-sns-ms, --drain-only (see --help)`,
            );
        }
    }
    return {
        quick,
        smoke,
        json,
        messages: messages ?? (smoke ? 50 : quick ? 200 : 2000),
        snsLatencyMs,
        ...(latencyRate === undefined ? {} : { latencyRate }),
        drainMessages: drainMessages ?? (smoke ? 100 : quick ? 300 : 1000),
        drainDynamoDbLatencyMs,
        drainSnsLatencyMs,
        drainOnly,
    };
}

function perMessage(record: Record<string, number>, n: number, digits = 3): Record<string, number> {
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, round(v / n, digits)]));
}

/** A burst (throughput, calls, units) and a paced run (latency) of one relay in one SNS mode. */
interface Measured {
    readonly burst: RelayRunResult;
    readonly paced: RelayRunResult;
}

function figures(plainPair: Measured, slowPair: Measured, latencyMs: number): RelayFigures {
    const plain = plainPair.burst;
    const n = plain.messages;
    const calls: Record<string, number> = {};
    const ms: Record<string, number> = {};
    for (const tally of [plain.detail.writer, plain.detail.relay, plain.detail.sns]) {
        for (const [k, v] of Object.entries(tally.calls))
            calls[k.replace(/Command$/, "")] = (calls[k.replace(/Command$/, "")] ?? 0) + v;
        for (const [k, v] of Object.entries(tally.ms))
            ms[k.replace(/Command$/, "")] = (ms[k.replace(/Command$/, "")] ?? 0) + v;
    }
    const msPerCall = Object.fromEntries(
        Object.entries(ms).map(([k, v]) => [k, round(v / Math.max(1, calls[k] ?? 1), 1)]),
    );
    return {
        snsCallsPerMessage: plain.snsCallsPerMessage,
        ddbCallsPerMessage: plain.ddbCallsPerMessage,
        wcuPerMessage: plain.wcuPerMessage,
        rcuPerMessage: plain.rcuPerMessage,
        msgsPerSec: plain.msgsPerSec,
        p50LatencyMs: plainPair.paced.p50LatencyMs,
        p99LatencyMs: plainPair.paced.p99LatencyMs,
        p99PartsMs: plainPair.paced.p99PartsMs,
        paceMsgsPerSec: plainPair.paced.ratePerSec,
        withSnsLatency: {
            latencyMs,
            msgsPerSec: slowPair.burst.msgsPerSec,
            p50LatencyMs: slowPair.paced.p50LatencyMs,
            p99LatencyMs: slowPair.paced.p99LatencyMs,
            p99PartsMs: slowPair.paced.p99PartsMs,
            paceMsgsPerSec: slowPair.paced.ratePerSec,
        },
        unitsByPerMessage: {
            writer: perMessage(plain.detail.writer.unitsBy, n),
            relay: perMessage(plain.detail.relay.unitsBy, n),
        },
        callsPerMessage: perMessage(calls, n),
        msPerCall,
    };
}

function ratio(a: number, b: number): string {
    return b === 0 ? "-" : `${round(a / b, 2)}x`;
}

function drainFigures(r: DrainRunResult): DrainFigures {
    return {
        msgsPerSec: r.msgsPerSec,
        roundTripsPerBatch: r.roundTripsPerBatch,
        snsCallsPerMessage: r.snsCallsPerMessage,
        ddbCallsPerMessage: r.ddbCallsPerMessage,
        msPerBatch: r.msPerBatch,
        emulatorCpuMsPerMessage: r.emulatorCpuMsPerMessage,
    };
}

function destinationFigures(r: DrainRunResult, keyed: boolean): DestinationDrainFigures {
    return {
        msgsPerSec: r.msgsPerSec,
        roundTripsPerBatch: r.roundTripsPerBatch,
        destinationCallsPerMessage: r.destinationCallsPerMessage,
        entriesPerCall: r.entriesPerCall,
        busChecksPerMessage: r.busChecksPerMessage,
        ddbCallsPerMessage: r.ddbCallsPerMessage,
        msPerBatch: r.msPerBatch,
        emulatorCpuMsPerMessage: r.emulatorCpuMsPerMessage,
        batchAction: BATCH_ACTIONS[r.destination],
        ...(keyed ? { inversions: r.inversions ?? Number.NaN } : {}),
    };
}

const KINDS: readonly DestinationKind[] = ["sns", "sqs", "eventbridge"];
const KIND_NAMES: Readonly<Record<DestinationKind, string>> = { sns: "SNS", sqs: "SQS", eventbridge: "EventBridge" };

/** The destinations table: each kind keyless, then keyed, with ratios against SNS from the same run. */
function destinationsTable(d: DestinationsReport, messages: number): string {
    const columns = (["keyless", "keyed"] as const).flatMap((records) =>
        KINDS.map((kind) => ({ name: `${KIND_NAMES[kind]} ${records}`, records, kind, f: d[kind][records] })),
    );
    const vsSns = (pick: (f: DestinationDrainFigures) => number) => (c: (typeof columns)[number]) =>
        ratio(pick(c.f), pick(d.sns[c.records]));
    const rows: [string, (c: (typeof columns)[number]) => string | number][] = [
        ["messages / s", (c) => c.f.msgsPerSec],
        ["messages / s against SNS", vsSns((f) => f.msgsPerSec)],
        ["sequential round trips / 100 records", (c) => c.f.roundTripsPerBatch],
        ["round trips against SNS", vsSns((f) => f.roundTripsPerBatch)],
        ["destination calls / message", (c) => c.f.destinationCallsPerMessage],
        ["calls / message against SNS", vsSns((f) => f.destinationCallsPerMessage)],
        ["entries / destination call (observed)", (c) => c.f.entriesPerCall],
        ["bus checks (DescribeEventBus) / msg", (c) => c.f.busChecksPerMessage],
        ["DynamoDB calls / message", (c) => c.f.ddbCallsPerMessage],
        ["ms / 100-record batch", (c) => c.f.msPerBatch],
        ["inversions (keyed; a bus: put order)", (c) => c.f.inversions ?? "-"],
    ];
    const widths = columns.map((c) => Math.max(c.name.length, 8));
    return [
        `destinations: ours, ${messages} records each, one shard, +${d.latencyMs.destination} ms per destination call (PublishBatch, SendMessageBatch, PutEvents) and +${d.latencyMs.dynamodb} ms per DynamoDB call; SQS is a standard queue, EventBridge the fault server's stand-in (a real bus keeps no order)`,
        "",
        `| ${"figure".padEnd(38)} | ${columns.map((c, i) => c.name.padStart(widths[i]!)).join(" | ")} |`,
        `|${"-".repeat(40)}|${widths.map((w) => `${"-".repeat(w + 1)}:`).join("|")}|`,
        ...rows.map(
            ([name, cell]) =>
                `| ${name.padEnd(38)} | ${columns.map((c, i) => String(cell(c)).padStart(widths[i]!)).join(" | ")} |`,
        ),
    ].join("\n");
}

function drainTable(drain: DrainReport, shards: number): string {
    const { ours, keyed, naive } = drain;
    const rows: [string, number, number, number][] = [
        ["messages / s, one shard", ours.msgsPerSec, keyed.msgsPerSec, naive.msgsPerSec],
        [
            "sequential round trips / 100 records",
            ours.roundTripsPerBatch,
            keyed.roundTripsPerBatch,
            naive.roundTripsPerBatch,
        ],
        ["ms / 100-record batch", ours.msPerBatch, keyed.msPerBatch, naive.msPerBatch],
        [
            "DynamoDB Local CPU ms / msg",
            ours.emulatorCpuMsPerMessage ?? Number.NaN,
            keyed.emulatorCpuMsPerMessage ?? Number.NaN,
            naive.emulatorCpuMsPerMessage ?? Number.NaN,
        ],
        ["SNS calls / message", ours.snsCallsPerMessage, keyed.snsCallsPerMessage, naive.snsCallsPerMessage],
        ["DynamoDB calls / message", ours.ddbCallsPerMessage, keyed.ddbCallsPerMessage, naive.ddbCallsPerMessage],
        // The CPU row is absent where /proc cannot be read.
    ].filter((row) => row.slice(1).every((v) => Number.isFinite(v))) as [string, number, number, number][];
    const variant = (name: string, f: DrainFigures): string =>
        `${name}: ${f.msgsPerSec} messages/s (${ratio(f.msgsPerSec, naive.msgsPerSec)} the naive relay), ${f.roundTripsPerBatch} round trips per batch, ${f.snsCallsPerMessage} SNS and ${f.ddbCallsPerMessage} DynamoDB calls per message`;
    const cell = (v: string | number, width: number) => String(v).padStart(width);
    return [
        `drain: ${drain.messages} records written first, then drained through one shard (batch size 100${shards > 1 ? `; DynamoDB Local split the stream into ${shards} shards, served one after the other` : ""}), +${drain.latencyMs.dynamodb} ms per DynamoDB call and +${drain.latencyMs.sns} ms per SNS call of the relay`,
        "",
        `| ${"figure".padEnd(36)} | ${cell("keyless (ours)", 14)} | ${cell(`keyed, ${keyed.keys} keys (ours)`, 21)} | ${cell("naive", 9)} | ${cell("keyless/naive", 13)} | ${cell("keyed/naive", 11)} |`,
        `|${"-".repeat(38)}|${"-".repeat(15)}:|${"-".repeat(22)}:|${"-".repeat(10)}:|${"-".repeat(14)}:|${"-".repeat(12)}:|`,
        ...rows.map(
            ([name, a, k, n]) =>
                `| ${name.padEnd(36)} | ${cell(a, 14)} | ${cell(k, 21)} | ${cell(n, 9)} | ${cell(ratio(a, n), 13)} | ${cell(ratio(k, n), 11)} |`,
        ),
        "",
        variant("ours, FIFO topic (one message group per order)", drain.fifo),
        ...[drain.keyed, drain.keyedParallel].map(
            (k) =>
                `ours, keyed, parallelizationFactor ${k.parallelizationFactor}: ${k.msgsPerSec} messages/s (${ratio(k.msgsPerSec, naive.msgsPerSec)} the naive relay, ` +
                `${ratio(k.msgsPerSec, keyed.msgsPerSec)} factor 1), up to ${k.peakConcurrentBatches} batches at once, ${k.inversions} inversions, ` +
                `${k.snsCallsPerMessage} SNS and ${k.ddbCallsPerMessage} DynamoDB calls per message`,
        ),
        "",
        destinationsTable(drain.destinations, drain.messages),
    ].join("\n");
}

function table(
    ours: RelayFigures,
    naive: RelayFigures,
    claim: ClaimFigures,
    lambda: LambdaCost,
    options: BenchOptions,
): string {
    const rows: [string, number, number][] = [
        ["SNS calls / message", ours.snsCallsPerMessage, naive.snsCallsPerMessage],
        ["DynamoDB calls / message", ours.ddbCallsPerMessage, naive.ddbCallsPerMessage],
        ["WCU / message (GSIs incl.)", ours.wcuPerMessage, naive.wcuPerMessage],
        ["RCU / message", ours.rcuPerMessage, naive.rcuPerMessage],
        ["messages / s", ours.msgsPerSec, naive.msgsPerSec],
        ["p50 ms write->publish", ours.p50LatencyMs, naive.p50LatencyMs],
        ["p99 ms write->publish", ours.p99LatencyMs, naive.p99LatencyMs],
        [
            `messages / s, SNS +${options.snsLatencyMs} ms`,
            ours.withSnsLatency.msgsPerSec,
            naive.withSnsLatency.msgsPerSec,
        ],
        [
            `p50 ms, SNS +${options.snsLatencyMs} ms`,
            ours.withSnsLatency.p50LatencyMs,
            naive.withSnsLatency.p50LatencyMs,
        ],
        [
            `p99 ms, SNS +${options.snsLatencyMs} ms`,
            ours.withSnsLatency.p99LatencyMs,
            naive.withSnsLatency.p99LatencyMs,
        ],
    ];
    const out = [
        `${options.messages} messages per burst (messages/s, calls, units); ${Math.max(50, Math.round(options.messages / 4))} paced at ${ours.paceMsgsPerSec}/s, and ${ours.withSnsLatency.paceMsgsPerSec}/s with SNS latency (latency); same DynamoDB Local build (a fresh one per run) and the same local SNS for both`,
        "",
        `| ${"figure".padEnd(30)} | ${"ours".padStart(9)} | ${"naive".padStart(9)} | ${"ours/naive".padStart(10)} |`,
        `|${"-".repeat(32)}|${"-".repeat(10)}:|${"-".repeat(10)}:|${"-".repeat(11)}:|`,
        ...rows.map(
            ([name, a, b]) =>
                `| ${name.padEnd(30)} | ${String(a).padStart(9)} | ${String(b).padStart(9)} | ${ratio(a, b).padStart(10)} |`,
        ),
        "",
        ...(["ours", "naive"] as const).flatMap((who) => {
            const by = (who === "ours" ? ours : naive).unitsByPerMessage;
            const list = (r: Record<string, number>): string =>
                Object.entries(r)
                    .map(([k, v]) => `${k} ${v}`)
                    .join(", ") || "none";
            return [`${who}, capacity units per message: writer ${list(by.writer)}; relay ${list(by.relay)}`];
        }),
        ...(["ours", "naive"] as const).map((who) => {
            const f = who === "ours" ? ours : naive;
            return `${who}, calls per message (mean ms per call): ${Object.entries(f.callsPerMessage)
                .map(([k, v]) => `${k} ${v} (${f.msPerCall[k]} ms)`)
                .join(", ")}`;
        }),
        `claim (one 100-record claim): ${Object.entries(claim)
            .map(([size, c]) => `backlog ${size}: ${c.rcu} RCU, ${c.pages} pages`)
            .join("; ")}`,
        `lambda: publisher archive ${lambda.archiveBytes} bytes (${lambda.archiveDeflatedBytes} deflated), cold load ${lambda.initMs} ms; installed package ${lambda.installedArchiveBytes} bytes (${lambda.installedDeflatedBytes} deflated, ${lambda.installedArchiveFiles} files), cold load ${lambda.installedInitMs} ms (medians of ${lambda.initRuns}, Node ${lambda.nodeVersion})`,
    ];
    return out.join("\n");
}

async function main(): Promise<void> {
    const options = optionsOrExit("npm run bench", parseBenchArgs, USAGE);
    if (options === undefined) return;
    const sizes = benchSizes(options);
    exitWithoutJava();
    const say = (line: string): void => {
        process.stderr.write(`${line}\n`);
    };
    const sns = await startAwsFaultServer();
    // Fresh DynamoDB Locals for each relay and mode: it slows down as its in-memory database grows (DeleteItem
    // went from 7 to 40 ms over six 1000-message runs on one instance, dropped tables or not), which would favour
    // whichever relay runs first. Same jar, same settings, fresh state.
    // Tracked from the moment they start, so a signal during a start still stops them.
    const running = new Set<Promise<DynamoDbLocal>>();
    const withDynamos = async <T>(
        work: (endpoints: string[], pids: (number | undefined)[]) => Promise<T>,
        count = 2,
    ): Promise<T> => {
        const starting = Array.from({ length: count }, () => startDynamoDbLocal());
        for (const s of starting) running.add(s);
        const started = await Promise.allSettled(starting);
        const instances = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
        try {
            const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
            if (failed !== undefined) throw failed.reason;
            return await work(
                instances.map((d) => d.endpoint),
                instances.map((d) => d.pid),
            );
        } finally {
            await Promise.allSettled(instances.map((d) => d.stop()));
            for (const s of starting) running.delete(s);
        }
    };
    let stopped = false;
    const stop = async (): Promise<void> => {
        if (stopped) return;
        stopped = true;
        await Promise.allSettled([...[...running].map((s) => s.then((d) => d.stop())), sns.stop()]);
    };
    stopOnSignals(stop);
    try {
        const started = Date.now();
        let run = 0;
        const latencyMs = { dynamodb: options.drainDynamoDbLatencyMs, sns: options.drainSnsLatencyMs };
        const drainOnce = async (
            kind: RelayKind,
            variant: DrainVariant,
            endpoint: string,
            emulatorPid: number | undefined,
            parallelizationFactor = 1,
            destination: DestinationKind = "sns",
        ): Promise<DrainRunResult> => {
            sns.reset();
            sns.clearFaults();
            run += 1;
            // Warm the fresh emulator the same way for every relay before timing it: the first batches of a cold JVM
            // took about 270 ms more (656 ms against about 380 for ours), a cost that lands on whichever relay
            // drains in fewer batches' time, not on the relay.
            say(
                `drain: warming DynamoDB Local with ${sizes.drainWarmUp} records through ${kind} (${variant}) to ${destination}, untimed…`,
            );
            await runDrain({
                kind,
                variant,
                destination,
                endpoint,
                sns,
                messages: sizes.drainWarmUp,
                latencyMs,
                parallelizationFactor,
                runId: `${Date.now().toString(36)}-${run}-warm`,
            });
            sns.reset();
            say(`drain: writing ${options.drainMessages} records for ${kind} (${variant}) to ${destination}…`);
            const result = await runDrain({
                kind,
                variant,
                destination,
                endpoint,
                emulatorPid,
                sns,
                messages: options.drainMessages,
                latencyMs,
                parallelizationFactor,
                runId: `${Date.now().toString(36)}-${run}`,
            });
            say(
                `drain: ${kind.padEnd(5)} ${variant.padEnd(8)} ${destination.padEnd(11)} factor ${parallelizationFactor} ${result.msgsPerSec} msg/s, ${result.destinationCallsPerMessage} ${kind === "naive" ? "Publish" : BATCH_ACTIONS[destination]} calls per message (${result.entriesPerCall} entries each), ${result.inversions ?? "-"} inversions, ${result.peakConcurrentBatches} batches at once, ${result.roundTripsPerBatch} round trips per batch, ` +
                    `${result.invocations} invocations (${result.failedInvocations} failed), ${result.shards} shard(s); mean ms per call ${JSON.stringify(result.msPerCall)}; ` +
                    `${result.msPerBatch} ms per batch, ${result.msBetweenBatches} ms between batches; CPU ms per message: DynamoDB Local ${result.emulatorCpuMsPerMessage ?? "-"}, bench process ${result.benchCpuMsPerMessage}`,
            );
            return result;
        };
        // A fresh DynamoDB Local per drain, as for the end-to-end runs below; two at a time.
        const [oursDrain, naiveDrain] = await withDynamos(async ([a, b], [pa, pb]) => [
            await drainOnce("ours", "standard", a!, pa),
            await drainOnce("naive", "standard", b!, pb),
        ]);
        const [fifoDrain, keyedDrain] = await withDynamos(async ([a, b], [pa, pb]) => [
            await drainOnce("ours", "fifo", a!, pa),
            await drainOnce("ours", "keyed", b!, pb),
        ]);
        const keyedParallelDrain = await withDynamos(
            async ([a], [pa]) => drainOnce("ours", "keyed", a!, pa, KEYED_PARALLEL_FACTOR),
            1,
        );
        // Ours to the other kinds, keyless then keyed, each on a fresh DynamoDB Local like the SNS runs above.
        const [sqsDrain, busDrain] = await withDynamos(async ([a, b], [pa, pb]) => [
            await drainOnce("ours", "standard", a!, pa, 1, "sqs"),
            await drainOnce("ours", "standard", b!, pb, 1, "eventbridge"),
        ]);
        const [sqsKeyedDrain, busKeyedDrain] = await withDynamos(async ([a, b], [pa, pb]) => [
            await drainOnce("ours", "keyed", a!, pa, 1, "sqs"),
            await drainOnce("ours", "keyed", b!, pb, 1, "eventbridge"),
        ]);
        const destinations: DestinationsReport = {
            sns: { keyless: destinationFigures(oursDrain!, false), keyed: destinationFigures(keyedDrain!, true) },
            sqs: { keyless: destinationFigures(sqsDrain!, false), keyed: destinationFigures(sqsKeyedDrain!, true) },
            eventbridge: {
                keyless: destinationFigures(busDrain!, false),
                keyed: destinationFigures(busKeyedDrain!, true),
            },
            latencyMs: { dynamodb: latencyMs.dynamodb, destination: latencyMs.sns },
        };
        const keyedFigures = (r: DrainRunResult, parallelizationFactor: number): KeyedDrainFigures => ({
            ...drainFigures(r),
            keys: 10,
            parallelizationFactor,
            peakConcurrentBatches: r.peakConcurrentBatches,
            inversions: r.inversions ?? Number.NaN,
        });
        const drain: DrainReport = {
            ours: drainFigures(oursDrain!),
            naive: drainFigures(naiveDrain!),
            fifo: drainFigures(fifoDrain!),
            keyed: keyedFigures(keyedDrain!, 1),
            keyedParallel: keyedFigures(keyedParallelDrain, KEYED_PARALLEL_FACTOR),
            destinations,
            latencyMs,
            messages: options.drainMessages,
        };
        const drainText = drainTable(drain, Math.max(oursDrain!.shards, naiveDrain!.shards));
        if (options.drainOnly) {
            say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
            if (options.json) {
                say(drainText);
                process.stdout.write(`${JSON.stringify({ drain })}\n`);
            } else {
                process.stdout.write(`${drainText}\n`);
            }
            await stop();
            process.exit(0);
        }
        say(
            "lambda: building the component under mocks, then packing and installing the package into a consumer project, and loading each publisher…",
        );
        const lambda = await measureLambdaCost(sizes.coldLoads);
        const once = async (
            kind: RelayKind,
            endpoint: string,
            messages: number,
            latencyMs: number,
            ratePerSec: number,
        ): Promise<RelayRunResult> => {
            sns.reset();
            sns.setFaults({ latencyMs });
            run += 1;
            // Warm the fresh emulator the same way for both relays before timing: on a cold JVM the paced p99 with
            // SNS +5 ms was 1324 ms for ours against 395 for the naive relay, and 94 against 89 after a 100-order
            // burst through the same relay; the first orders paid the emulator's JIT, more of it on the relay
            // whose calls take more code paths.
            await runRelay({
                kind,
                endpoint,
                sns,
                messages: sizes.relayWarmUp,
                runId: `${Date.now().toString(36)}-${run}-warm`,
            });
            sns.reset();
            sns.setFaults({ latencyMs });
            const result = await runRelay({
                kind,
                endpoint,
                sns,
                messages,
                ratePerSec,
                runId: `${Date.now().toString(36)}-${run}`,
            });
            say(
                `${kind.padEnd(5)} ${String(messages).padStart(5)} messages ${ratePerSec > 0 ? `at ${ratePerSec}/s` : "burst"}, SNS +${latencyMs} ms: ` +
                    `${result.msgsPerSec} msg/s, p50 ${result.p50LatencyMs} ms, p99 ${result.p99LatencyMs} ms ` +
                    `(p99 of the write ${result.p99PartsMs.write} ms, of the wait for the relay ${result.p99PartsMs.waitForRelay} ms, of the relay ${result.p99PartsMs.relay} ms)`,
            );
            return result;
        };
        // Latency is measured at a pace both relays keep up with (a third of the slower one's burst throughput in that
        // mode, unless --latency-rate is given), so it is the pipeline's latency, not a queue's.
        // Every run gets its own fresh DynamoDB Local: the two bursts of a mode, then the two paced runs (each pair
        // started side by side, used one after the other).
        // (--quick reuses the burst's instances for the paced runs: 200 messages barely grow them.)
        const measureMode = async (latencyMs: number): Promise<{ ours: Measured; naive: Measured }> => {
            const paced = Math.max(50, Math.round(options.messages / 4));
            const pacedRuns = async (
                [a, b]: string[],
                oursBurst: RelayRunResult,
                naiveBurst: RelayRunResult,
            ): Promise<RelayRunResult[]> => {
                const pace =
                    options.latencyRate ??
                    Math.max(1, Math.floor(Math.min(oursBurst.msgsPerSec, naiveBurst.msgsPerSec) / 3));
                return [
                    await once("ours", a!, paced, latencyMs, pace),
                    await once("naive", b!, paced, latencyMs, pace),
                ];
            };
            const [oursBurst, naiveBurst, oursPaced, naivePaced] = await withDynamos(async (endpoints) => {
                const bursts = [
                    await once("ours", endpoints[0]!, options.messages, latencyMs, 0),
                    await once("naive", endpoints[1]!, options.messages, latencyMs, 0),
                ];
                if (!options.quick) return bursts;
                return [...bursts, ...(await pacedRuns(endpoints, bursts[0]!, bursts[1]!))];
            }).then(async (runs) =>
                runs.length === 4
                    ? runs
                    : [...runs, ...(await withDynamos((endpoints) => pacedRuns(endpoints, runs[0]!, runs[1]!)))],
            );
            return {
                ours: { burst: oursBurst!, paced: oursPaced! },
                naive: { burst: naiveBurst!, paced: naivePaced! },
            };
        };
        const plain = await measureMode(0);
        const slow = await measureMode(options.snsLatencyMs);
        const oursPlain = plain.ours;
        const naivePlain = plain.naive;
        const oursSlow = slow.ours;
        const naiveSlow = slow.naive;
        say(`claim: seeding backlogs of ${sizes.claimBacklogs.join(" and ")} and claiming 100 at a time…`);
        const claimed = await withDynamos(
            ([endpoint]) =>
                measureClaimCost(endpoint, sizes.claimBacklogs, {
                    claims: sizes.claims,
                    progress: (line) => say(`claim: ${line}`),
                }),
            1,
        );
        const claim: ClaimFigures = Object.fromEntries(
            Object.entries(claimed).map(([size, c]) => [size, { rcu: c.rcu, pages: c.pages }]),
        );
        const offload = await withDynamos(
            ([endpoint]) =>
                measureOffloadCost(endpoint, {
                    writes: sizes.offloadWrites,
                    progress: (line) => say(`offload: ${line}`),
                }),
            1,
        );
        const result = {
            offload,
            drain,
            ours: figures(oursPlain, oursSlow, options.snsLatencyMs),
            naive: figures(naivePlain, naiveSlow, options.snsLatencyMs),
            claim,
            lambda,
        };
        say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const text = `${drainText}\n\nend to end:\n${table(result.ours, result.naive, claim, lambda, options)}\n\n${offloadTable(offload)}`;
        // With --json the table still goes to stderr (with the progress), so one run gives both.
        if (options.json) {
            say(text);
            process.stdout.write(`${JSON.stringify(result)}\n`);
        } else {
            process.stdout.write(`${text}\n`);
        }
    } finally {
        await stop();
    }
    process.exit(0);
}

main().catch((err: unknown) => {
    process.stderr.write(`npm run bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
});
