/**
 * The inbox's part of `npm run bench:scale`: one consumer's ceiling, before and after `markerShards`. `Inbox.apply`
 * runs on DynamoDB Local through the per-key capacity model (dev/bench/capacity-model.ts, with a `ConditionCheck`
 * charged as AWS bills it), each message with one business item of its own (an invoice row, under 1 KB) from one
 * source, on a simulated clock in 100 ms ticks.
 *
 * 1. Accounted, not throttled: the write units per message on the inbox's keys and on the business item, how many
 *    marker partition keys were used, and the hottest one's units. The consumer's ceiling is the rate at which
 *    that hottest key reaches 1,000 WCU/s: 1,000 × messages / (its units); and the table's default quota of
 *    40,000 WCU/s caps it again at 40,000 / (units per message).
 * 2. Throttled, at twice the unsharded ceiling for 2 simulated seconds: how many transactions the model
 *    throttled (each retried, as SQS would redeliver, after 100 ms doubling up to 5 s), and every message applied
 *    exactly once at the end.
 *
 * A model of AWS's per-partition write limit, not a measurement of AWS.
 *
 * @packageDocumentation
 */
import { type DynamoDBClient, type TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../runtime/errors";
import { Inbox } from "../../runtime/inbox/inbox";
import { INBOX_MARKER } from "../../runtime/schema";
import { createConsumerTable, scanItems } from "../../tests/support/runtime/table";
import { manualClock } from "../../tests/support/runtime/harness";
import { createCapacityModel } from "./capacity-model";
import { round } from "./stats";

/** DynamoDB's default per-table quota, write units per second (AWS Service Quotas; raisable on request). */
export const TABLE_WCU_QUOTA = 40_000;

/** One inbox configuration. */
export interface InboxScaleScenario {
    /** Its name in the report. */
    readonly name: string;
    /** The inbox's `markerShards`. */
    readonly markerShards: number;
    /** The inbox's `legacyMarkerCheck` (its default is on). */
    readonly legacyMarkerCheck: boolean;
    /** The inbox's `previousMarkerShards` window, on for the whole run. @default undefined (none) */
    readonly previousMarkerShards?: number;
    /** Messages per simulated second. */
    readonly ratePerSec: number;
    /** Simulated seconds of offered load. */
    readonly seconds: number;
    /** Throttle above 1,000 WCU/s per key value (`false`: account only). */
    readonly throttle: boolean;
}

/** What one inbox scenario did. */
export interface InboxScaleResult {
    readonly name: string;
    readonly markerShards: number;
    readonly legacyMarkerCheck: boolean;
    readonly previousMarkerShards: number | null;
    readonly offeredPerSec: number;
    readonly messages: number;
    /** Write units per message: on the inbox's own keys (markers and checks), on the business item, and in all. */
    readonly unitsPerMessage: { readonly inbox: number; readonly business: number; readonly total: number };
    /** Distinct partition key values the inbox wrote or checked. */
    readonly inboxKeys: number;
    /** The inbox key value with the most units, and its units. */
    readonly hottestInboxKey: { readonly key: string; readonly units: number };
    /**
     * Messages per second for this consumer and source: where the hottest inbox key reaches 1,000 WCU/s, where the
     * table's default quota is reached, and the lower of the two.
     */
    readonly ceilingPerSec: { readonly hotKey: number; readonly tableQuota: number; readonly consumer: number };
    /** Throttled transactions (each retried until applied). */
    readonly throttled: number;
    /** Simulated seconds until every message was applied. */
    readonly drainedAfterSeconds: number;
    /** Messages whose business item shows more or fewer than one apply at the end (must be 0). */
    readonly notAppliedOnce: number;
}

const TICK_MS = 100;
const MAX_BACKOFF_MS = 5_000;
const MAX_DRAIN_SECONDS = 120;
const CONSUMER = "billing";
const SOURCE = "orders";

/** The consumer's own write for a message: its invoice row (under 1 KB), an Update counting its applies. */
function invoice(table: string, id: string): TransactWriteItem {
    return {
        Update: {
            TableName: table,
            Key: { PK: { S: `INVOICE#${id}` }, SK: { S: "META" } },
            UpdateExpression: "ADD applied :one",
            ExpressionAttributeValues: { ":one": { N: "1" } },
        },
    };
}

/**
 * Run one inbox scenario on a fresh consumer table of `backend`.
 *
 * @param backend - A DynamoDB Local client.
 * @param scenario - The inbox's settings and the offered load.
 * @param progress - Where progress lines go.
 */
export async function runInboxScaleScenario(
    backend: DynamoDBClient,
    scenario: InboxScaleScenario,
    progress: (line: string) => void,
): Promise<InboxScaleResult> {
    const tableName = await createConsumerTable(backend, `inbox-scale-${scenario.name}`);
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const model = createCapacityModel({
        backend,
        clock,
        tableName,
        throttle: scenario.throttle,
        chargeConditionChecks: true,
    });
    const inbox = new Inbox({
        client: model.client as DynamoDBClient,
        consumer: CONSUMER,
        tableName,
        clock,
        markerShards: scenario.markerShards,
        legacyMarkerCheck: scenario.legacyMarkerCheck,
        ...(scenario.previousMarkerShards !== undefined
            ? { previousMarkerShards: { shards: scenario.previousMarkerShards } }
            : {}),
    });
    const messages = scenario.ratePerSec * scenario.seconds;
    const perTick = (scenario.ratePerSec * TICK_MS) / 1000;
    const queue: { id: string; due: number; attempt: number }[] = [];
    let offered = 0;
    let applied = 0;
    let throttled = 0;
    const start = clock.now();
    const offeredUntil = start + scenario.seconds * 1000;
    while (applied < messages) {
        if (clock.now() - offeredUntil > MAX_DRAIN_SECONDS * 1000)
            throw new Error(
                `inbox scenario ${scenario.name}: ${messages - applied} messages not applied after the drain`,
            );
        if (clock.now() < offeredUntil) {
            const target = Math.round(((clock.now() - start) / TICK_MS + 1) * perTick);
            for (; offered < target && offered < messages; offered++)
                queue.push({ id: `evt-${String(offered).padStart(6, "0")}`, due: clock.now(), attempt: 0 });
        }
        const due = queue.filter((m) => m.due <= clock.now());
        for (const m of due) {
            try {
                await inbox.apply({ outboxId: m.id, source: SOURCE }, [invoice(tableName, m.id)]);
                applied += 1;
                queue.splice(queue.indexOf(m), 1);
            } catch (err) {
                if (!isOutboxError(err, "THROTTLED")) throw err;
                throttled += 1;
                m.attempt += 1;
                m.due = clock.now() + Math.min(MAX_BACKOFF_MS, TICK_MS * 2 ** (m.attempt - 1));
            }
        }
        clock.advance(TICK_MS);
    }
    const drainedAfterSeconds = round((clock.now() - start) / 1000, 1);

    const prefix = `${INBOX_MARKER.partitionPrefix}${CONSUMER}`;
    const totals = model.totals().filter((t) => t.index === "table");
    const inboxRows = totals.filter((t) => t.key.startsWith(prefix));
    const inboxUnits = inboxRows.reduce((n, t) => n + t.units, 0);
    const businessUnits = totals.filter((t) => !t.key.startsWith(prefix)).reduce((n, t) => n + t.units, 0);
    const hottest = inboxRows.reduce((a, b) => (b.units > a.units ? b : a), { index: "table", key: "", units: 0 });
    const perMessage = (units: number) => round(units / messages, 3);
    const hotKey = Math.floor((1000 * messages) / hottest.units);
    const tableQuota = Math.floor((TABLE_WCU_QUOTA * messages) / (inboxUnits + businessUnits));
    const counts = (await scanItems(backend, tableName))
        .filter((i) => i.PK?.S?.startsWith("INVOICE#"))
        .map((i) => Number(i.applied?.N ?? "0"));
    const notAppliedOnce = messages - counts.filter((c) => c === 1).length;
    progress(
        `inbox ${scenario.name}: ${messages} messages, ${throttled} throttled, drained after ${drainedAfterSeconds} s`,
    );
    return {
        name: scenario.name,
        markerShards: scenario.markerShards,
        legacyMarkerCheck: scenario.legacyMarkerCheck,
        previousMarkerShards: scenario.previousMarkerShards ?? null,
        offeredPerSec: scenario.ratePerSec,
        messages,
        unitsPerMessage: {
            inbox: perMessage(inboxUnits),
            business: perMessage(businessUnits),
            total: perMessage(inboxUnits + businessUnits),
        },
        inboxKeys: inboxRows.length,
        hottestInboxKey: { key: hottest.key, units: hottest.units },
        ceilingPerSec: { hotKey, tableQuota, consumer: Math.min(hotKey, tableQuota) },
        throttled,
        drainedAfterSeconds,
        notAppliedOnce,
    };
}
