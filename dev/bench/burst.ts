/**
 * `npm run bench:burst`: where the keyed burst's time goes, keyless and keyed side by side in one run, with or
 * without a deliberate CPU load (`--load N`: N spinning processes beside the run, dev/bench/cpu-load.ts).
 *
 * Each burst (dev/bench/burst-run.ts) is the demo's (`npm start -- --count 1500 --rate 0 --keys 30` and `--keys 0`),
 * with the sweeper running every 2 s at `sweepAfterSeconds` 5 as there, on a fresh DynamoDB Local warmed first by an
 * untimed burst of the same kind, and the local SNS of the bench (the fault server) as the destination. Prints a
 * table, or with `--json` one object on stdout: `{"keyless":{...},"keyed":{...},"keyedOverKeyless":{...},"settings":{...}}`.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { startDynamoDbLocal, type DynamoDbLocal } from "../emulators/dynamodb-local";
import { startAwsFaultServer } from "../emulators/aws-fault-server";
import { CALL_CLASSES, runBurst, type BurstRunResult } from "./burst-run";
import { startCpuLoad, type CpuLoad } from "./cpu-load";
import { round } from "./stats";
import { stopOnSignals } from "../demo/shutdown";
import { exitWithoutJava, optionsOrExit } from "./script-start";

/** The flags of `npm run bench:burst`. */
export interface BurstOptions {
    /** Orders per burst. @default 1500 (60 with --smoke) */
    readonly messages: number;
    /** Ordering keys of the keyed burst. @default 30 (3 with --smoke) */
    readonly keys: number;
    /** Spinning processes beside the run. @default 0 */
    readonly load: number;
    /** The sweeper's `sweepAfterSeconds`. @default 5 (the demo's) */
    readonly sweepAfterSeconds: number;
    /** Orders of the untimed warm-up burst on each fresh DynamoDB Local. @default 200 (20 with --smoke) */
    readonly warmUp: number;
    /** Print one JSON object on stdout (the table goes to stderr). @default false */
    readonly json: boolean;
}

const USAGE = `Usage: npm run bench:burst -- [--smoke] [--json] [--messages <n>] [--keys <n>] [--load <n>] [--sweep-after <s>] [--warm-up <n>]

The demo's burst (npm start -- --rate 0), keyless and keyed, one after the other in one run, each on a fresh
DynamoDB Local warmed by an untimed burst: the producer writes <messages> orders as fast as DynamoDB Local takes
them, the local mapping (one shard, batch size 100) invokes the publisher, the sweeper runs every 2 s. Every
record's latency is cut into its write, its wait for the stream, its wait in the mapping's buffer and the relay;
the publisher's time by what it waited on; and CPU is read from /proc for DynamoDB Local, this process, the load
and the machine.

  --messages <n>     orders per burst, 20 to 100000 (default 1500)
  --keys <n>         ordering keys of the keyed burst, 1 to 10000 (default 30)
  --load <n>         processes spinning beside the run, 0 to 64 (default 0): a CPU-starved machine, reproducibly
  --sweep-after <s>  the sweeper's sweepAfterSeconds, 1 to 86400 (default 5, the demo's; the component's is 120)
  --warm-up <n>      orders of each untimed warm-up burst, 0 to 10000 (default 200)
  --smoke            60 orders over 3 keys, warm-up 20: every part runs, no figure is meant to be read
  --json             print {"keyless","keyed","keyedOverKeyless","settings"} on stdout (the table goes to stderr)`;

/** Parse the flags; "help" for --help. */
export function parseBurstArgs(argv: readonly string[]): BurstOptions | "help" {
    let smoke = false;
    let json = false;
    const given: Partial<Record<"messages" | "keys" | "load" | "sweepAfterSeconds" | "warmUp", number>> = {};
    const integer = (flag: string, raw: string | undefined, min: number, max: number): number => {
        const value = Number(raw);
        if (raw === undefined || raw.trim() === "" || !Number.isInteger(value) || value < min || value > max)
            throw new Error(
                `${flag} is ${raw === undefined ? "missing its value" : JSON.stringify(raw)}; expected an integer from ${min} to ${max}, e.g. ${flag} ${Math.max(1, min) * 2}`,
            );
        return value;
    };
    for (let i = 0; i < argv.length; i += 1) {
        const arg = argv[i]!;
        if (arg === "--help" || arg === "-h") return "help";
        else if (arg === "--smoke") smoke = true;
        else if (arg === "--json") json = true;
        else if (arg === "--messages") given.messages = integer(arg, argv[(i += 1)], 20, 100_000);
        else if (arg === "--keys") given.keys = integer(arg, argv[(i += 1)], 1, 10_000);
        else if (arg === "--load") given.load = integer(arg, argv[(i += 1)], 0, 64);
        else if (arg === "--sweep-after") given.sweepAfterSeconds = integer(arg, argv[(i += 1)], 1, 86_400);
        else if (arg === "--warm-up") given.warmUp = integer(arg, argv[(i += 1)], 0, 10_000);
        else
            throw new Error(
                `unknown option ${JSON.stringify(arg)}; the options are --smoke, --json, --messages, --keys, --load, --sweep-after, --warm-up (see --help)`,
            );
    }
    return {
        messages: given.messages ?? (smoke ? 60 : 1500),
        keys: given.keys ?? (smoke ? 3 : 30),
        load: given.load ?? 0,
        sweepAfterSeconds: given.sweepAfterSeconds ?? 5,
        warmUp: given.warmUp ?? (smoke ? 20 : 200),
        json,
    };
}

/** keyed / keyless, as a ratio rounded to 2 decimals; `null` where keyless is 0. */
function ratio(keyed: number, keyless: number): number | null {
    return keyless === 0 || !Number.isFinite(keyed / keyless) ? null : round(keyed / keyless, 2);
}

function table(keyless: BurstRunResult, keyed: BurstRunResult, options: BurstOptions): string {
    const share = (v: number | undefined) => (v === undefined ? "-" : `${round(v * 100, 1)}%`);
    const rows: [string, (r: BurstRunResult) => string | number | undefined, boolean][] = [
        ["write -> acknowledgement p50, ms", (r) => r.p50LatencyMs, true],
        ["write -> acknowledgement p99, ms", (r) => r.p99LatencyMs, true],
        ["messages / s (first write -> last ack)", (r) => r.msgsPerSec, true],
        ["orders written / s", (r) => r.writesPerSec, true],
        ["mean ms: the write", (r) => r.stagesMs.write.mean, true],
        ["mean ms: wait for the stream (GetRecords)", (r) => r.stagesMs.waitForStream.mean, true],
        ["mean ms: wait in the mapping's buffer", (r) => r.stagesMs.waitInBuffer.mean, true],
        ["mean ms: the relay (invocation -> ack)", (r) => r.stagesMs.relay.mean, true],
        ["p99 ms write answer -> GetRecords", (r) => r.p99StreamLagMs, true],
        ["records published by the sweeper", (r) => r.sweeper.published, false],
        ["  not yet read by the mapping", (r) => r.sweeper.notYetRead, false],
        ["  read, in the mapping's buffer", (r) => r.sweeper.inBuffer, false],
        ["  in a running invocation", (r) => r.sweeper.inInvocation, false],
        ["  their p50 age, ms", (r) => r.sweeper.p50AgeMs, false],
        ["sweeper runs", (r) => r.sweeper.runs, false],
        ["duplicates acknowledged", (r) => r.duplicates, false],
        ["publisher invocations", (r) => r.publisher.invocations, true],
        ["records / invocation", (r) => r.publisher.recordsPerInvocation, true],
        ["ms / invocation", (r) => r.publisher.msPerInvocation, true],
        ...CALL_CLASSES.map((c): [string, (r: BurstRunResult) => string, boolean] => [
            `invocation time: ${c} (calls/msg, ms/call)`,
            (r) =>
                `${share(r.publisher.timeShare[c])} (${r.publisher.callsPerMessage[c]}, ${r.publisher.msPerCall[c]})`,
            false,
        ]),
        ["invocation time: no call in flight", (r) => share(r.publisher.timeShare.none), false],
        ["mapping: in the handler", (r) => share(r.mapping.inHandler), false],
        ["mapping: in stream calls", (r) => share(r.mapping.inStreamCalls), false],
        ["mapping: neither (poll pause, own code)", (r) => share(r.mapping.other), false],
        ["CPU ms / msg: DynamoDB Local", (r) => r.cpu.emulatorMsPerMessage, true],
        ["CPU ms / msg: this process", (r) => r.cpu.benchMsPerMessage, true],
        [`CPU ms / msg: the load (${options.load} spinners)`, (r) => r.cpu.loadMsPerMessage, false],
        ["DynamoDB Local, cores busy", (r) => r.cpu.emulatorCores, true],
        ["machine busy (all cores)", (r) => share(r.cpu.machineBusy), false],
        ["event loop delay p50 / p99, ms", (r) => `${r.cpu.eventLoopDelayP50Ms} / ${r.cpu.eventLoopDelayP99Ms}`, false],
        ["load average (1 min) at start / end", (r) => `${r.loadAverage.start} / ${r.loadAverage.end}`, false],
    ];
    const w = 52;
    return [
        `burst: ${options.messages} orders at once, keyless and over ${options.keys} keys; sweeper every 2 s, sweepAfterSeconds ${options.sweepAfterSeconds}; load: ${options.load} spinning processes; ${options.warmUp}-order warm-up on each fresh DynamoDB Local`,
        "",
        `| ${"figure".padEnd(w)} | ${"keyless".padStart(18)} | ${"keyed".padStart(18)} | ${"keyed/keyless".padStart(13)} |`,
        `|${"-".repeat(w + 2)}|${"-".repeat(19)}:|${"-".repeat(19)}:|${"-".repeat(14)}:|`,
        ...rows.map(([name, cell, withRatio]) => {
            const a = cell(keyless);
            const b = cell(keyed);
            const q = withRatio && typeof a === "number" && typeof b === "number" ? ratio(b, a) : null;
            return `| ${name.padEnd(w)} | ${String(a ?? "-").padStart(18)} | ${String(b ?? "-").padStart(18)} | ${(q === null ? "" : `${q}x`).padStart(13)} |`;
        }),
        "",
        ...(
            [
                ["keyless", keyless],
                ["keyed", keyed],
            ] as const
        ).map(
            ([name, r]) =>
                `${name}, the publisher's calls per message by class:command: ${Object.entries(
                    r.publisher.callsPerMessageByCommand,
                )
                    .map(([k, v]) => `${k} ${v}`)
                    .join(", ")}`,
        ),
    ].join("\n");
}

async function main(): Promise<void> {
    const options = optionsOrExit("npm run bench:burst", parseBurstArgs, USAGE);
    if (options === undefined) return;
    exitWithoutJava();
    const say = (line: string): void => {
        process.stderr.write(`${line}\n`);
    };
    const sns = await startAwsFaultServer();
    const starting = [startDynamoDbLocal(), startDynamoDbLocal()];
    let load: CpuLoad | undefined;
    let stopped = false;
    const stop = async (): Promise<void> => {
        if (stopped) return;
        stopped = true;
        await Promise.allSettled([
            ...starting.map((s) => s.then((d) => d.stop())),
            sns.stop(),
            load?.stop() ?? Promise.resolve(),
        ]);
    };
    stopOnSignals(stop);
    try {
        const started = Date.now();
        const dynamos: DynamoDbLocal[] = await Promise.all(starting);
        load = startCpuLoad(options.load);
        const runId = Date.now().toString(36);
        const burst = async (dynamo: DynamoDbLocal, keys: number): Promise<BurstRunResult> => {
            const kind = keys > 0 ? "keyed" : "keyless";
            const common = { endpoint: dynamo.endpoint, sns, keys, sweepAfterSeconds: options.sweepAfterSeconds, load };
            if (options.warmUp > 0) {
                say(`burst: warming DynamoDB Local with ${options.warmUp} ${kind} orders, untimed…`);
                await runBurst({ ...common, messages: options.warmUp, runId: `${runId}-${kind}-warm` });
            }
            say(`burst: ${options.messages} ${kind} orders…`);
            const result = await runBurst({
                ...common,
                ...(dynamo.pid === undefined ? {} : { emulatorPid: dynamo.pid }),
                messages: options.messages,
                runId: `${runId}-${kind}`,
            });
            say(
                `burst: ${kind} p50 ${result.p50LatencyMs} ms, p99 ${result.p99LatencyMs} ms, ${result.sweeper.published} by the sweeper, load average ${result.loadAverage.start} → ${result.loadAverage.end}`,
            );
            return result;
        };
        const keyless = await burst(dynamos[0]!, 0);
        const keyed = await burst(dynamos[1]!, options.keys);
        say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const text = table(keyless, keyed, options);
        const keyedOverKeyless = {
            p50LatencyMs: ratio(keyed.p50LatencyMs, keyless.p50LatencyMs),
            p99LatencyMs: ratio(keyed.p99LatencyMs, keyless.p99LatencyMs),
            msgsPerSec: ratio(keyed.msgsPerSec, keyless.msgsPerSec),
            emulatorCpuMsPerMessage:
                keyed.cpu.emulatorMsPerMessage === undefined || keyless.cpu.emulatorMsPerMessage === undefined
                    ? null
                    : ratio(keyed.cpu.emulatorMsPerMessage, keyless.cpu.emulatorMsPerMessage),
        };
        const settings = {
            messages: options.messages,
            keys: options.keys,
            load: options.load,
            sweepAfterSeconds: options.sweepAfterSeconds,
            warmUp: options.warmUp,
        };
        if (options.json) {
            say(text);
            process.stdout.write(`${JSON.stringify({ keyless, keyed, keyedOverKeyless, settings })}\n`);
        } else {
            process.stdout.write(`${text}\n`);
        }
    } finally {
        await stop();
    }
    process.exit(0);
}

if (require.main === module)
    main().catch((err: unknown) => {
        process.stderr.write(
            `npm run bench:burst failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
        process.exit(1);
    });
