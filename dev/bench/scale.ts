/**
 * `npm run bench:scale`: the per-key write ceiling, simulated. The writer, the stream publisher and the sweeper run
 * on DynamoDB Local through a client wrapper that accounts write units per partition key value, on the table and
 * on each GSI, per simulated second, and throttles like AWS above 1,000 WCU/s per key value
 * (dev/bench/capacity-model.ts). A model of AWS's per-partition limits, not a measurement of AWS.
 *
 * 1. Mixes, accounted without throttling (50 messages/s for 2 s): keyless, keyed, expiring with 1 and with 8
 *    expiry shards. For each, the hottest key value's share of the write units.
 * 2. Expiring messages at twice the single-key ceiling (the rate whose ExpiryIndex units are 2,000 per second on
 *    one key value, derived from the expiring mix's units per message), for 2 simulated seconds, with 1 and with
 *    8 expiry shards: throttles, what they cost, and whether the retries lost anything. Every 10th message expires
 *    2 s after its write and every 7th record never reaches the publisher, so the sweeper's expiry and missed-record
 *    steps run under the same throttles.
 *
 * Prints a table, or with `--json` one object `{"model":…,"mixes":[…],"ceiling":{…},"atTwiceTheCeiling":[…]}`
 * (the table then goes to stderr with the progress).
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import {
    JAVA_MISSING_MESSAGE,
    javaAvailable,
    localDynamoDbClient,
    startDynamoDbLocal,
    type DynamoDbLocal,
} from "../emulators/dynamodb-local";
import { EXPIRY_INDEX } from "../../runtime/schema";
import { runScaleScenario, type ScaleResult } from "./scale-run";
import { round } from "./stats";

/** Messages per second of the mixes (2 s each): enough for the shares, few enough to keep the run short. */
const MIX_RATE = 50;

/** The ceiling the model throttles above, WCU per second per partition key value. */
const CEILING = 1000;

/** What the output says the figures are. */
const MODEL_NOTE = `A model of AWS's per-partition write limit (${CEILING} WCU/s per partition key value, table and each GSI), run on DynamoDB Local with a simulated clock; not a measurement of AWS.`;

const USAGE = `Usage: npm run bench:scale -- [--json]

  --json   print one JSON object on stdout (the table and progress go to stderr)

${MODEL_NOTE}`;

function percent(share: number): string {
    return `${round(share * 100, 1)}%`;
}

function table(
    mixes: readonly ScaleResult[],
    ceiling: { readonly expiryUnitsPerMessage: number; readonly singleKeyMessagesPerSec: number },
    runs: readonly ScaleResult[],
): string {
    const lines = [
        MODEL_NOTE,
        "",
        `Hottest partition key value, by mix (${MIX_RATE} msg/s for 2 s, accounted, not throttled):`,
        "",
    ];
    lines.push(
        `| mix | expiry shards | units | hottest key value | its share | ${EXPIRY_INDEX.indexName}'s hottest share |`,
        "|---|---|---|---|---|---|",
    );
    for (const m of mixes) {
        const expiry = m.units.byIndex[EXPIRY_INDEX.indexName]!;
        lines.push(
            `| ${m.mix} | ${m.expiryShards} | ${m.units.total} | ${m.units.hottest.index} "${m.units.hottest.key}" | ${percent(m.units.hottest.share)} | ${expiry.units === 0 ? "-" : percent(expiry.hottestShare)} |`,
        );
    }
    lines.push(
        "",
        `An expiring message costs ${ceiling.expiryUnitsPerMessage} ${EXPIRY_INDEX.indexName} units (insert in the write transaction, removal on completion):`,
        `one key value caps expiring messages at ${ceiling.singleKeyMessagesPerSec}/s. Twice that, for 2 s (every 10th message expires 2 s after its write; every 7th record never reaches the publisher, so the sweeper delivers it):`,
        "",
        "| expiry shards | offered msg/s | throttled requests (writer / publisher / sweeper) | extra write attempts | batch retries | duplicates published | drained after | p50 / p99 latency | published | expired → DLQ | lost | left pending |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const r of runs) {
        const by = (who: string) => r.throttles.byActor[who] ?? 0;
        lines.push(
            `| ${r.expiryShards} | ${r.offeredPerSec} | ${r.throttles.total} (${by("writer")} / ${by("publisher")} / ${by("sweeper")}) | ${r.retries.writeAttempts} | ${r.retries.batchRetries} | ${r.delivery.duplicates} | ${r.drainedAfterSeconds} s | ${r.latencyMs.p50} / ${r.latencyMs.p99} ms | ${r.delivery.published} of ${r.messages} | ${r.delivery.expired} | ${r.delivery.lost} | ${r.delivery.pendingLeft} |`,
        );
    }
    lines.push(
        "",
        "Latency, drain time and throttles are simulated-clock figures of the model; 'lost' counts written messages neither published nor dead-lettered.",
    );
    return lines.join("\n");
}

async function main(): Promise<void> {
    const argv = process.argv.slice(2);
    if (argv.includes("--help") || argv.includes("-h")) {
        process.stdout.write(`${USAGE}\n`);
        return;
    }
    const unknown = argv.find((a) => a !== "--json");
    if (unknown !== undefined)
        throw new Error(`unknown option ${JSON.stringify(unknown)}; the only option is --json (see --help)`);
    const json = argv.includes("--json");
    if (!javaAvailable()) throw new Error(JAVA_MISSING_MESSAGE);
    const say = (line: string): void => void process.stderr.write(`${line}\n`);
    const started = Date.now();
    // A fresh DynamoDB Local per phase: it slows down as its in-memory database grows.
    const withDynamo = async <T>(work: (client: ReturnType<typeof localDynamoDbClient>) => Promise<T>): Promise<T> => {
        let local: DynamoDbLocal | undefined;
        try {
            local = await startDynamoDbLocal();
            const client = localDynamoDbClient(local.endpoint);
            try {
                return await work(client);
            } finally {
                client.destroy();
            }
        } finally {
            await local?.stop();
        }
    };
    say(MODEL_NOTE);
    const mixes = await withDynamo(async (client) => {
        const out: ScaleResult[] = [];
        for (const [mix, shards] of [
            ["keyless", 1],
            ["keyed", 1],
            ["expiring", 1],
            ["expiring", 8],
        ] as const) {
            say(`mix ${mix}, ${shards} expiry shard(s)…`);
            out.push(
                await runScaleScenario(
                    client,
                    {
                        name: `mix-${mix}-${shards}`,
                        mix,
                        ratePerSec: MIX_RATE,
                        seconds: 2,
                        expiryShards: shards,
                        throttle: false,
                    },
                    say,
                ),
            );
        }
        return out;
    });
    const expiring = mixes.find((m) => m.mix === "expiring" && m.expiryShards === 1)!;
    const expiryUnitsPerMessage = round(expiring.units.byIndex[EXPIRY_INDEX.indexName]!.units / expiring.messages, 3);
    const singleKeyMessagesPerSec = Math.floor(CEILING / expiryUnitsPerMessage);
    const ceiling = { unitsPerKeyPerSec: CEILING, expiryUnitsPerMessage, singleKeyMessagesPerSec };
    const runs: ScaleResult[] = [];
    for (const shards of [1, 8]) {
        runs.push(
            await withDynamo((client) =>
                runScaleScenario(
                    client,
                    {
                        name: `twice-ceiling-${shards}`,
                        mix: "expiring",
                        ratePerSec: 2 * singleKeyMessagesPerSec,
                        seconds: 2,
                        expiryShards: shards,
                        throttle: true,
                        shortExpiryEvery: 10,
                        streamLossEvery: 7,
                    },
                    say,
                ),
            ),
        );
    }
    const text = table(mixes, ceiling, runs);
    say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s (wall clock)`);
    if (json) {
        say(text);
        process.stdout.write(`${JSON.stringify({ model: MODEL_NOTE, mixes, ceiling, atTwiceTheCeiling: runs })}\n`);
    } else {
        process.stdout.write(`${text}\n`);
    }
    const lost = runs.reduce((n, r) => n + r.delivery.lost + r.delivery.pendingLeft, 0);
    if (lost > 0) throw new Error(`${lost} message(s) were lost or left pending under the simulated throttles`);
}

main().catch((err: unknown) => {
    process.stderr.write(
        `npm run bench:scale failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
});
