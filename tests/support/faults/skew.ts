/**
 * The `skew` scenario's own parts: the partitions that never drain (planted as raw items, more of them than the
 * sweeper's `maxPartitionsPerRun`), the `status: ""` rows an older writer leaves, which partitions lose their
 * stream records, and the accounting of the recovery: how many sweeper runs each healthy partition took to be
 * delivered, against the bound ⌈N / maxPartitionsPerRun⌉ (+ the runs until its last record is due).
 */
import { PutItemCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { marshalRecord, pendingRecord } from "../../../runtime/record/codec";
import { claimSort } from "../../../runtime/record/keys";
import { ATTR, CLAIM_INDEX, STATUS } from "../../../runtime/schema";
import type { PlannedMessage } from "./workload";

/** What the `skew` scenario adds (see {@link ScenarioFaults.skewMix}). */
export interface SkewMix {
    /** The fast writer's clock runs this many ms ahead of the correct writer's (hours). */
    readonly writerAheadMs: number;
    /** Partitions planted so that they never drain; more than the sweeper's `maxPartitionsPerRun`. */
    readonly stuckPartitions: number;
    /**
     * The share of the other partitions (`ACCOUNT#`, `ORDER#`) whose stream records are all lost, so only the
     * sweeper can deliver them. `SKEW#` and `LEGACY#` partitions with an even number lose theirs, the odd ones keep
     * them; the stuck partitions keep theirs (the stream path meets them too).
     */
    readonly streamLossShare: number;
}

/** Whether every stream record of `partition` is lost, for the mix's fixed partitions; `undefined`: the dice decide. */
export function fixedStreamLoss(partition: string): boolean | undefined {
    const own = /^(SKEW|LEGACY)#(\d+)$/.exec(partition);
    if (own !== null) return Number(own[2]) % 2 === 0;
    if (partition.startsWith(STUCK_PREFIX)) return false;
    return undefined;
}

/**
 * The stuck partitions' prefix. `!` sorts before every other partition of the scenario, and DynamoDB Local's
 * ClaimIndex scan returns partitions in PK order (DynamoDB's own is a hash order), so they are first in scan
 * order: the worst case, where a sweeper that always started at the beginning would never get past them.
 */
export const STUCK_PREFIX = "!STUCK#";

/** A planted item and the state it must keep: nothing of this package may deliver or change it. */
export interface StuckItem {
    readonly partition: string;
    readonly sk: string;
    readonly recordId: string;
    /** `pending` or `claimed`. */
    readonly status: string;
    /** The live relay holding it, for a claimed one. */
    readonly claimedBy?: string;
}

/** Claimed by a relay that is alive: its claim goes stale in 30 days, so no claim of this package takes it. */
function heldByAnother(relayNowMs: number): Record<string, AttributeValue> {
    return {
        [ATTR.status]: { S: STATUS.claimed },
        [ATTR.claimedBy]: { S: "another-relay" },
        [ATTR.claimVersion]: { N: "1" },
        [ATTR.claimedAt]: { N: String(relayNowMs + 30 * 86_400_000) },
    };
}

/**
 * Plant `count` partitions that never drain, of three kinds in turn: an undecodable `OUTBOX#` item (its envelope
 * is not JSON), a row no claim can take (held by a live relay), and a key tail behind a held head.
 *
 * @param ddb - DynamoDB Local.
 * @param tableName - The outbox table.
 * @param address - The topic, the rows' address.
 * @param count - How many partitions.
 * @param writerNowMs - The correct writer's clock: the items are stamped a second before it.
 * @param relayNowMs - The relay's clock, for the held claims.
 */
export async function plantStuckPartitions(
    ddb: DynamoDBClient,
    tableName: string,
    address: string,
    count: number,
    writerNowMs: number,
    relayNowMs: number,
): Promise<StuckItem[]> {
    const old = writerNowMs - 1_000;
    const planted: StuckItem[] = [];
    const put = async (
        partition: string,
        id: string,
        createdAt: number,
        options: { orderingKey?: string; seq?: bigint; held?: boolean },
    ): Promise<void> => {
        const record = pendingRecord(
            {
                partition,
                recordId: id,
                bindingId: "sns",
                address,
                createdAt,
                ...(options.orderingKey ? { orderingKey: options.orderingKey } : {}),
                envelope: { id, subject: "Stuck", payload: JSON.stringify(id) },
            },
            options.seq ?? 0n,
            createdAt,
        );
        const item = { ...marshalRecord(record), ...(options.held === true ? heldByAnother(relayNowMs) : {}) };
        await ddb.send(new PutItemCommand({ TableName: tableName, Item: item }));
        planted.push({
            partition,
            sk: item[ATTR.sk]!.S!,
            recordId: id,
            status: options.held === true ? STATUS.claimed : STATUS.pending,
            ...(options.held === true ? { claimedBy: "another-relay" } : {}),
        });
    };
    for (let i = 0; i < count; i += 1) {
        const partition = `${STUCK_PREFIX}${i}`;
        if (i % 3 === 0) {
            const sk = "OUTBOX#broken#sns";
            await ddb.send(
                new PutItemCommand({
                    TableName: tableName,
                    Item: {
                        [ATTR.pk]: { S: partition },
                        [ATTR.sk]: { S: sk },
                        [ATTR.recordId]: { S: `${partition}/broken` },
                        [ATTR.envelopeJson]: { S: "not json" },
                        [ATTR.status]: { S: STATUS.pending },
                        [ATTR.claimSort]: { S: claimSort(old, 0n) },
                    },
                }),
            );
            planted.push({ partition, sk, recordId: `${partition}/broken`, status: STATUS.pending });
        } else if (i % 3 === 1) {
            await put(partition, `${partition}/held`, old, { held: true });
        } else {
            await put(partition, `${partition}/head`, old - 1_000, { orderingKey: "held", seq: 1n, held: true });
            await put(partition, `${partition}/tail`, old, { orderingKey: "held", seq: 2n });
        }
    }
    return planted;
}

/** The stuck items that are not as planted (gone, delivered, released or taken), one line each. */
export function stuckChanges(
    planted: readonly StuckItem[],
    items: readonly Record<string, AttributeValue>[],
): string[] {
    const byKey = new Map(items.map((i) => [`${i[ATTR.pk]?.S}\u0000${i[ATTR.sk]?.S}`, i]));
    const changed: string[] = [];
    for (const p of planted) {
        const item = byKey.get(`${p.partition}\u0000${p.sk}`);
        const status = item?.[ATTR.status]?.S;
        const holder = item?.[ATTR.claimedBy]?.S;
        if (item === undefined) changed.push(`${p.recordId}: gone`);
        else if (status !== p.status || (p.claimedBy !== undefined && holder !== p.claimedBy))
            changed.push(`${p.recordId}: ${status ?? "no status"}${holder !== undefined ? ` by ${holder}` : ""}`);
    }
    return changed;
}

/**
 * Write `run` as an older writer leaves its records: raw PutItems, `status: ""`, no id guard and no FENCE
 * (keyed ones take the next `seq` of their partition, kept in `seqs`; keyless ones `created_at × 10^6 + n`).
 */
export async function putEmptyStatusRows(
    ddb: DynamoDBClient,
    tableName: string,
    address: string,
    run: readonly PlannedMessage[],
    nowMs: number,
    seqs: Map<string, bigint>,
): Promise<void> {
    for (const [n, p] of run.entries()) {
        const m = p.message;
        const keyed = m.orderingKey !== undefined;
        const next = (seqs.get(m.partition) ?? 0n) + 1n;
        if (keyed) seqs.set(m.partition, next);
        const record = pendingRecord(
            {
                partition: m.partition,
                recordId: m.id,
                bindingId: "sns",
                address,
                createdAt: nowMs,
                envelope: {
                    id: m.id,
                    subject: m.type,
                    payload: JSON.stringify(m.payload),
                    headers: { ...(m.headers ?? {}) },
                    createdAt: nowMs,
                },
                ...(keyed ? { orderingKey: m.orderingKey } : {}),
            },
            keyed ? next : BigInt(nowMs) * 1_000_000n + BigInt(n),
            nowMs,
        );
        await ddb.send(
            new PutItemCommand({ TableName: tableName, Item: { ...marshalRecord(record), [ATTR.status]: { S: "" } } }),
        );
    }
}

/** ClaimIndex at the recovery's first run: the partitions with a due record, and how late the latest record is due. */
export interface DueCensus {
    /** Partitions with a record the first run finds due (N of the bound). */
    readonly partitions: number;
    /** Records not yet due at the first run (stamped less than `sweepAfter` before the clock, or ahead within it). */
    readonly notDue: number;
    /** Runs after the first until the last record not yet due becomes due (0 when every record is due at once). */
    readonly dueDelayRuns: number;
    /** Records stamped more than `sweepAfter` ahead of the sweeper's clock (due at once, by that rule alone). */
    readonly stampedAhead: number;
}

/**
 * Read ClaimIndex as the first recovery run will: which partitions hold a due record at `nowMs`.
 *
 * @param ddb - DynamoDB Local.
 * @param tableName - The outbox table.
 * @param nowMs - The sweeper's clock at its first run.
 * @param sweepAfterMs - Its `sweepAfter`.
 * @param stepMs - How far its clock moves between runs.
 */
export async function dueCensus(
    ddb: DynamoDBClient,
    tableName: string,
    nowMs: number,
    sweepAfterMs: number,
    stepMs: number,
): Promise<DueCensus> {
    const due = new Set<string>();
    let notDue = 0;
    let stampedAhead = 0;
    let dueDelayRuns = 0;
    let start: Record<string, AttributeValue> | undefined;
    do {
        const page = await ddb.send(
            new ScanCommand({
                TableName: tableName,
                IndexName: CLAIM_INDEX.indexName,
                ...(start ? { ExclusiveStartKey: start } : {}),
            }),
        );
        for (const item of page.Items ?? []) {
            const createdAt = Number(item[ATTR.claimSort]!.S!.slice(0, 19));
            if (createdAt > nowMs + sweepAfterMs) stampedAhead += 1;
            if (createdAt < nowMs - sweepAfterMs || createdAt > nowMs + sweepAfterMs) {
                due.add(item[ATTR.pk]!.S!);
            } else {
                notDue += 1;
                dueDelayRuns = Math.max(dueDelayRuns, Math.ceil((createdAt + sweepAfterMs - nowMs) / stepMs));
            }
        }
        start = page.LastEvaluatedKey;
    } while (start);
    return { partitions: due.size, notDue, dueDelayRuns, stampedAhead };
}

/**
 * Which run of the recovery delivered each healthy partition: a partition is delivered once every message of it
 * that was committed and is neither expired nor poison is on the topic.
 */
export class DeliveryTracker {
    private readonly waiting: Map<string, Set<string>>;
    private readonly deliveredAt: Map<string, number>;

    /**
     * @param committed - The messages committed.
     * @param onTopic - The ids the topic holds when the recovery starts.
     */
    constructor(committed: readonly PlannedMessage[], onTopic: ReadonlySet<string>) {
        this.waiting = new Map();
        this.deliveredAt = new Map();
        for (const p of committed) {
            if (p.expired || p.poison || onTopic.has(p.message.id)) continue;
            const ids = this.waiting.get(p.message.partition) ?? new Set<string>();
            ids.add(p.message.id);
            this.waiting.set(p.message.partition, ids);
        }
    }

    /** Partitions the sweeper had to deliver. */
    get partitions(): number {
        return this.waiting.size + this.deliveredAt.size;
    }

    /** Note what the topic holds after recovery run `run` (1-based). */
    afterRun(run: number, onTopic: ReadonlySet<string>): void {
        for (const [partition, ids] of this.waiting) {
            for (const id of ids) if (onTopic.has(id)) ids.delete(id);
            if (ids.size === 0) {
                this.waiting.delete(partition);
                this.deliveredAt.set(partition, run);
            }
        }
    }

    /** The most runs any partition took (0 when there were none). */
    get runsToDeliver(): number {
        return Math.max(0, ...this.deliveredAt.values());
    }

    /** Partitions still waiting for a record. */
    get undelivered(): string[] {
        return [...this.waiting.keys()];
    }
}
