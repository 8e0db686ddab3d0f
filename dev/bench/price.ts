/**
 * `npm run bench:price [-- --json] [-- --messages <n>]`: the price per million events, measured units priced at
 * list prices (dev/bench/price-model.ts).
 *
 * On one DynamoDB Local and the local fault server, it runs:
 * - the end-to-end relay (dev/bench/relay-run.ts) for ours keyless, ours keyed and the naive relay, for the writer's
 *   units (the order and its event, indexes included);
 * - the drain (dev/bench/drain-run.ts) for ours keyless and keyed to each destination kind and the naive relay to
 *   SNS, for the relay's units, its destination calls and its handler time (5 ms added to each DynamoDB call and
 *   15 ms to each destination call, the bench's defaults), after one untimed warm-up drain.
 *
 * Measured: every unit count. Corrected: transactional writes, to AWS's 2 units per entry (DynamoDB Local reports
 * fewer for some). Modelled: EventBridge Pipes (no Lambda; the naive relay's transaction; one pipe request and one
 * target request per event), and one 64 KB chunk per billed request (the demo's events are far smaller).
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { JAVA_MISSING_MESSAGE, javaAvailable, startDynamoDbLocal } from "../emulators/dynamodb-local";
import { startAwsFaultServer } from "../emulators/aws-fault-server";
import type { DestinationKind } from "../../runtime/destination/kind";
import { OUTBOX_RANGES } from "../../components/defaults";
import { runDrain, type DrainRunResult, type DrainVariant } from "./drain-run";
import {
    billedWriteUnits,
    LAMBDA_X86_GB_SECOND_USD,
    pricePerMillion,
    type BilledUnits,
    type PricePerMillion,
} from "./price-model";
import { runRelay, type RelayKind } from "./relay-run";
import { round } from "./stats";

const DESTINATIONS: readonly DestinationKind[] = ["sns", "sqs", "eventbridge"];
const LATENCY_MS = { dynamodb: 5, sns: 15 } as const;
const KEYS = 10;

/** One row of the table: who, where, the billed units per message and the price per million. */
export interface PriceRow {
    readonly relay: "ours keyless" | "ours keyed" | "naive relay" | "EventBridge Pipes";
    readonly destination: DestinationKind;
    /** Write units as DynamoDB Local reported them, before the transaction correction. */
    readonly reportedWriteUnits: number;
    readonly units: BilledUnits;
    readonly usd: PricePerMillion;
    /** Where ours' units go, per message: `writer:<where>` and `relay:<where>` as the tallies report them. */
    readonly unitsBy: Record<string, number>;
}

interface WriterUnits {
    readonly reported: number;
    readonly billed: number;
    readonly unitsBy: Record<string, number>;
}

function usage(): string {
    return "Usage: npm run bench:price -- [--json] [--messages <n>]   (n: 100 to 5000, default 200; drains of n records)";
}

function parse(argv: readonly string[]): { json: boolean; messages: number } {
    let json = false;
    let messages = 200;
    for (let i = 0; i < argv.length; i += 1) {
        const arg = argv[i];
        if (arg === "--json") json = true;
        else if (arg === "--messages") {
            const value = Number(argv[(i += 1)]);
            if (!Number.isInteger(value) || value < 100 || value > 5000)
                throw new Error(`--messages must be an integer from 100 to 5000\n${usage()}`);
            messages = value;
        } else if (arg === "--help") {
            process.stdout.write(`${usage()}\n`);
            process.exit(0);
        } else throw new Error(`unknown option ${JSON.stringify(arg)}\n${usage()}`);
    }
    return { json, messages };
}

const perMessage = (by: Record<string, number>, n: number, prefix: string): Record<string, number> =>
    Object.fromEntries(Object.entries(by).map(([where, units]) => [`${prefix}:${where}`, round(units / n, 3)]));

function lambdaUnits(drain: DrainRunResult): Pick<BilledUnits, "lambdaRequests" | "lambdaGbSeconds"> {
    return {
        lambdaRequests: drain.invocations / drain.messages,
        lambdaGbSeconds: (drain.handlerMsPerMessage / 1000) * (OUTBOX_RANGES.memorySize.fallback / 1024),
    };
}

/** Billed destination requests per message: a batch call per 64 KB chunk for SNS and SQS, each entry for EventBridge. */
function destinationRequests(drain: DrainRunResult): number {
    return drain.destination === "eventbridge"
        ? drain.destinationCallsPerMessage * drain.entriesPerCall
        : drain.destinationCallsPerMessage;
}

async function main(): Promise<void> {
    const { json, messages } = parse(process.argv.slice(2));
    if (!javaAvailable()) throw new Error(JAVA_MISSING_MESSAGE);
    const say = (line: string): void => void process.stderr.write(`${line}\n`);
    const started = Date.now();
    const sns = await startAwsFaultServer();
    const dynamo = await startDynamoDbLocal();
    let run = 0;
    const runId = (): string => `${Date.now().toString(36)}-p${(run += 1)}`;
    try {
        const writerUnits = async (kind: RelayKind, keys: number): Promise<WriterUnits> => {
            sns.reset();
            const result = await runRelay({ kind, endpoint: dynamo.endpoint, sns, messages, keys, runId: runId() });
            const w = result.detail.writer;
            say(
                `price: ${kind} writer (${keys} keys): ${JSON.stringify(w.unitsBy)} over ${messages}, transactions ${JSON.stringify(w.transactions)}`,
            );
            return {
                reported: w.writeUnits / messages,
                billed: billedWriteUnits(w.writeUnits, w.transactions) / messages,
                unitsBy: perMessage(w.unitsBy, messages, "writer"),
            };
        };
        const drain = async (kind: RelayKind, variant: DrainVariant, destination: DestinationKind, n = messages) => {
            sns.reset();
            sns.clearFaults();
            const result = await runDrain({
                kind,
                variant,
                destination,
                endpoint: dynamo.endpoint,
                sns,
                messages: n,
                latencyMs: LATENCY_MS,
                ...(variant === "keyed" ? { keys: KEYS } : {}),
                runId: runId(),
            });
            say(
                `price: drain ${kind} ${variant} ${destination}: ${JSON.stringify(result.relayUnitsByPerMessage)} per message, ${result.destinationCallsPerMessage} calls (${result.entriesPerCall} entries), ${result.invocations} invocations, ${result.handlerMsPerMessage} handler ms per message`,
            );
            return result;
        };
        say("price: warming DynamoDB Local with one untimed drain…");
        await drain("ours", "standard", "sns", 100);

        const rows: PriceRow[] = [];
        for (const [label, variant, keys] of [
            ["ours keyless", "standard", 0],
            ["ours keyed", "keyed", KEYS],
        ] as const) {
            const writer = await writerUnits("ours", keys);
            for (const destination of DESTINATIONS) {
                const d = await drain("ours", variant, destination);
                const units: BilledUnits = {
                    writeUnits: round(writer.billed + d.relayWcuPerMessage, 3),
                    readUnits: d.relayRcuPerMessage,
                    ...lambdaUnits(d),
                    lambdaGbSecondUsd: LAMBDA_X86_GB_SECOND_USD,
                    destination,
                    destinationRequests: destinationRequests(d),
                    pipeRequests: 0,
                };
                rows.push({
                    relay: label,
                    destination,
                    reportedWriteUnits: round(writer.reported + d.relayWcuPerMessage, 3),
                    units,
                    usd: pricePerMillion(units),
                    unitsBy: { ...writer.unitsBy, ...perMessage(d.relayUnitsByPerMessage, 1, "relay") },
                });
            }
        }
        const naiveWriter = await writerUnits("naive", 0);
        const naive = await drain("naive", "standard", "sns");
        const naiveUnits: BilledUnits = {
            writeUnits: round(naiveWriter.billed + naive.relayWcuPerMessage, 3),
            readUnits: naive.relayRcuPerMessage,
            ...lambdaUnits(naive),
            lambdaGbSecondUsd: LAMBDA_X86_GB_SECOND_USD,
            destination: "sns",
            destinationRequests: destinationRequests(naive),
            pipeRequests: 0,
        };
        rows.push({
            relay: "naive relay",
            destination: "sns",
            reportedWriteUnits: round(naiveWriter.reported + naive.relayWcuPerMessage, 3),
            units: naiveUnits,
            usd: pricePerMillion(naiveUnits),
            unitsBy: { ...naiveWriter.unitsBy, ...perMessage(naive.relayUnitsByPerMessage, 1, "relay") },
        });
        for (const destination of DESTINATIONS) {
            const units: BilledUnits = {
                writeUnits: round(naiveWriter.billed, 3),
                readUnits: 0,
                lambdaRequests: 0,
                lambdaGbSeconds: 0,
                lambdaGbSecondUsd: LAMBDA_X86_GB_SECOND_USD,
                destination,
                destinationRequests: 1,
                pipeRequests: 1,
            };
            rows.push({
                relay: "EventBridge Pipes",
                destination,
                reportedWriteUnits: round(naiveWriter.reported, 3),
                units,
                usd: pricePerMillion(units),
                unitsBy: naiveWriter.unitsBy,
            });
        }
        const seconds = round((Date.now() - started) / 1000, 1);
        if (json) {
            process.stdout.write(
                `${JSON.stringify({ date: new Date().toISOString(), messages, latencyMs: LATENCY_MS, memoryMb: OUTBOX_RANGES.memorySize.fallback, seconds, rows }, null, 2)}\n`,
            );
            return;
        }
        const money = (usd: number): string => `$${usd.toFixed(3)}`;
        const lines = [
            `| relay | destination | WCU (reported) | RCU | DynamoDB | Lambda | destination requests | destination | Pipes | total $/million |`,
            `|---|---|---|---|---|---|---|---|---|---|`,
            ...rows.map(
                (r) =>
                    `| ${r.relay} | ${r.destination} | ${r.units.writeUnits} (${r.reportedWriteUnits}) | ${r.units.readUnits} | ${money(r.usd.dynamodb)} | ${money(r.usd.lambda)} | ${round(r.units.destinationRequests, 3)} | ${money(r.usd.destination)} | ${money(r.usd.pipe)} | **${money(r.usd.total)}** |`,
            ),
        ];
        process.stdout.write(
            `${lines.join("\n")}\n\n${messages} records per run, ${seconds} s, ${new Date().toISOString()}\n`,
        );
        for (const r of rows.filter((row) => row.relay.startsWith("ours") && row.destination === "sns"))
            process.stdout.write(`${r.relay} units per message by where: ${JSON.stringify(r.unitsBy)}\n`);
    } finally {
        await Promise.allSettled([dynamo.stop(), sns.stop()]);
    }
}

main().catch((error: unknown) => {
    process.stderr.write(`bench:price: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
});
