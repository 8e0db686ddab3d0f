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
 * 3. The inbox (dev/bench/inbox-scale.ts): one consumer's write units per message and its ceiling, with 1, 8 and 64
 *    marker shards, with and without `legacyMarkerCheck` and during a `previousMarkerShards` window (accounted, 200
 *    messages each); then 1 and 8 shards at twice the unsharded ceiling for 2 simulated seconds, throttled.
 *
 * Prints a table, or with `--json` one object
 * `{"model":…,"mixes":[…],"ceiling":{…},"atTwiceTheCeiling":[…],"inbox":{"accounted":[…],"atTwiceTheCeiling":[…]}}`
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
import { runInboxScaleScenario, TABLE_WCU_QUOTA, type InboxScaleResult, type InboxScaleScenario } from "./inbox-scale";
import { round } from "./stats";

/** Messages per second of the mixes (2 s each): enough for the shares, few enough to keep the run short. */
const MIX_RATE = 50;

/** The ceiling the model throttles above, WCU per second per partition key value. */
const CEILING = 1000;

/** What the output says the figures are. */
const MODEL_NOTE = `A model of AWS's per-partition write limit (${CEILING} WCU/s per partition key value, table and each GSI), run on DynamoDB Local with a simulated clock; not a measurement of AWS.`;

/** The inbox's accounted configurations: today's keys (with the check on by default and off), sharded, and a window. */
const INBOX_ACCOUNTED: readonly Omit<InboxScaleScenario, "ratePerSec" | "seconds" | "throttle">[] = [
    { name: "shards-1", markerShards: 1, legacyMarkerCheck: false },
    { name: "shards-1-legacy-check", markerShards: 1, legacyMarkerCheck: true },
    { name: "shards-8", markerShards: 8, legacyMarkerCheck: false },
    { name: "shards-8-legacy-check", markerShards: 8, legacyMarkerCheck: true },
    { name: "shards-8-window-from-1", markerShards: 8, legacyMarkerCheck: false, previousMarkerShards: 1 },
    { name: "shards-64", markerShards: 64, legacyMarkerCheck: false },
];

function inboxTable(accounted: readonly InboxScaleResult[], throttled: readonly InboxScaleResult[]): string {
    const lines = [
        "",
        `The inbox: one consumer, one source, one business item per message (accounted, not throttled, ${accounted[0]?.messages ?? 0} messages each). Ceiling = where the hottest inbox key reaches ${CEILING} WCU/s, or the table's default quota (${TABLE_WCU_QUOTA.toLocaleString("en-US")} WCU/s), whichever is lower:`,
        "",
        "| markerShards | legacyMarkerCheck | previousMarkerShards | WCU per message (inbox + business = total) | inbox keys | hottest inbox key (units) | ceiling at the hot key | at the table quota | consumer ceiling, msg/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ];
    for (const r of accounted) {
        lines.push(
            `| ${r.markerShards} | ${r.legacyMarkerCheck ? "on" : "off"} | ${r.previousMarkerShards ?? "-"} | ${r.unitsPerMessage.inbox} + ${r.unitsPerMessage.business} = ${r.unitsPerMessage.total} | ${r.inboxKeys} | "${r.hottestInboxKey.key}" (${r.hottestInboxKey.units}) | ${r.ceilingPerSec.hotKey} | ${r.ceilingPerSec.tableQuota} | **${r.ceilingPerSec.consumer}** |`,
        );
    }
    lines.push(
        "",
        `At twice the unsharded ceiling (${throttled[0]?.offeredPerSec ?? 0} msg/s for 2 simulated s, throttled; a throttled message retried after 100 ms doubling up to 5 s):`,
        "",
        "| markerShards | throttled transactions | drained after | applied other than once |",
        "|---|---|---|---|",
    );
    for (const r of throttled)
        lines.push(`| ${r.markerShards} | ${r.throttled} | ${r.drainedAfterSeconds} s | ${r.notAppliedOnce} |`);
    return lines.join("\n");
}

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
    const inboxAccounted = await withDynamo(async (client) => {
        const out: InboxScaleResult[] = [];
        for (const s of INBOX_ACCOUNTED) {
            say(`inbox ${s.name}…`);
            out.push(await runInboxScaleScenario(client, { ...s, ratePerSec: 100, seconds: 2, throttle: false }, say));
        }
        return out;
    });
    const unsharded = inboxAccounted.find((r) => r.name === "shards-1")!;
    const inboxThrottled: InboxScaleResult[] = [];
    for (const shards of [1, 8]) {
        inboxThrottled.push(
            await withDynamo((client) =>
                runInboxScaleScenario(
                    client,
                    {
                        name: `twice-ceiling-${shards}`,
                        markerShards: shards,
                        legacyMarkerCheck: false,
                        ratePerSec: 2 * unsharded.ceilingPerSec.consumer,
                        seconds: 2,
                        throttle: true,
                    },
                    say,
                ),
            ),
        );
    }
    const inbox = { accounted: inboxAccounted, atTwiceTheCeiling: inboxThrottled };
    const text = `${table(mixes, ceiling, runs)}\n${inboxTable(inboxAccounted, inboxThrottled)}`;
    say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s (wall clock)`);
    if (json) {
        say(text);
        process.stdout.write(
            `${JSON.stringify({ model: MODEL_NOTE, mixes, ceiling, atTwiceTheCeiling: runs, inbox })}\n`,
        );
    } else {
        process.stdout.write(`${text}\n`);
    }
    const lost = runs.reduce((n, r) => n + r.delivery.lost + r.delivery.pendingLeft, 0);
    if (lost > 0) throw new Error(`${lost} message(s) were lost or left pending under the simulated throttles`);
    const notOnce = [...inboxAccounted, ...inboxThrottled].reduce((n, r) => n + r.notAppliedOnce, 0);
    if (notOnce > 0) throw new Error(`${notOnce} inbox message(s) were applied other than once`);
}

main().catch((err: unknown) => {
    process.stderr.write(
        `npm run bench:scale failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
});
