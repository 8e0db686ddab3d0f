/**
 * A two-region stand-in for a DynamoDB global table (MREC, version 2019.11.21), for tests, `npm start` and the
 * bench. There is no emulator for global tables; this is NOT one. It is:
 *
 * - two DynamoDB Local instances, one per region, each with its own table of the same name and its own stream;
 * - a replicator that reads each instance's stream and applies every change (INSERT and MODIFY as a PutItem of the
 *   whole new image, REMOVE as a DeleteItem) to the other instance, after an injectable delay, item by item;
 * - conflicts resolved last-writer-wins on a timestamp: the time the replicator read the change from its region's
 *   stream (DynamoDB Local cuts `ApproximateCreationDateTime` to the minute, so it cannot be used), ties broken by
 *   the region name. A change older than the target's latest write of the same item is dropped.
 *
 * Replicated writes are not replicated back. Real global tables version 2017.11.29 marked them with the item
 * attributes `aws:rep:updateregion`, `aws:rep:updatetime` and `aws:rep:deleting`; version 2019.11.21 (the current
 * one, which this stands in for) adds no such attributes: its replication metadata is hidden, and a replicated write
 * reaches the replica's stream as an ordinary record (one record per write). So here too the items carry nothing: the
 * replicator keeps its metadata (per region and item: the winning write's time and origin) in its own memory, and
 * recognises its own writes on the target's stream by their key and new image, which it skips once.
 *
 * What it does not model:
 * - MREC's real conflict resolution details: AWS's timestamps are the service's, taken when the write commits; here
 *   the check (a consistent GetItem against the image last seen on the target's stream) and the PutItem are two
 *   calls, so a local write landing between them can still be overwritten and the two regions diverge on that item.
 * - Replication of TTL deletes (DynamoDB Local never runs TTL), of table settings, indexes or streams settings: the
 *   caller creates the same table in both regions.
 * - Transactions' regional atomicity is modelled only as far as DynamoDB Local gives it; the items of one
 *   transaction replicate one by one, as on AWS, and may be seen half-applied in the other region.
 * - Replication latency other than the fixed delay; throttling; `ReplicationLatency` metrics; MRSC.
 *
 * @packageDocumentation
 */
import {
    DeleteItemCommand,
    DescribeTableCommand,
    DynamoDBClient,
    GetItemCommand,
    PutItemCommand,
    type AttributeValue,
} from "@aws-sdk/client-dynamodb";
import {
    DescribeStreamCommand,
    DynamoDBStreamsClient,
    GetRecordsCommand,
    GetShardIteratorCommand,
    type _Record as StreamRecord,
} from "@aws-sdk/client-dynamodb-streams";
import { LOCAL_CREDENTIALS, startDynamoDbLocal, type DynamoDbLocal } from "./dynamodb-local";

/** The default regions of the stand-in. */
export const STAND_IN_REGIONS = ["us-east-1", "us-west-2"] as const;

/** One region of the stand-in: its own DynamoDB Local and clients whose region is the region's name. */
export interface StandInRegion {
    /** The region's name, e.g. `us-east-1`. The clients use it, so DynamoDB Local keeps its data apart. */
    readonly region: string;
    /** The region's DynamoDB Local endpoint. */
    readonly endpoint: string;
    /** A tables client in this region. */
    readonly ddb: DynamoDBClient;
    /** A streams client in this region. */
    readonly streams: DynamoDBStreamsClient;
}

/** Counters of a running replicator. */
export interface ReplicatorStats {
    /** Changes written to the other region. */
    readonly applied: number;
    /** Changes dropped because the target had a later write of the item (last writer wins). */
    readonly lostConflicts: number;
    /** The replicator's own writes seen on a target's stream and not replicated back. */
    readonly echoesSkipped: number;
    /** Changes read from the streams, own writes included. */
    readonly read: number;
    /** Changes waiting for their delay. */
    readonly queued: number;
}

/** A running replicator between the two regions' tables. */
export interface Replicator {
    /** Counters so far. */
    stats(): ReplicatorStats;
    /** Change the delay applied to changes read from now on. */
    setDelay(ms: number): void;
    /** Stop sending the changes read from `region`'s stream from now on (a region cut off; they are dropped, not held); `true` sends later ones again. */
    setRegionReplicating(region: string, replicating: boolean): void;
    /**
     * Resolve once nothing is queued and a full read of both streams found nothing new (both regions converged on
     * what was written so far).
     */
    waitIdle(timeoutMs?: number): Promise<void>;
    /** Stop the loop and wait for it. */
    stop(): Promise<void>;
}

/** Options of {@link TwoRegionStandIn.startReplicator}. */
export interface ReplicatorOptions {
    /** Milliseconds between a change being read and its write in the other region. @default 0 */
    readonly delayMs?: number;
    /** Milliseconds between polls of the streams when nothing is queued. @default 10 */
    readonly pollMs?: number;
}

/** The two regions and what runs between them. */
export interface TwoRegionStandIn {
    /** Both regions, in the order given. */
    readonly regions: readonly [StandInRegion, StandInRegion];
    /** The region named `name`; throws for an unknown one. */
    region(name: string): StandInRegion;
    /** Start replicating `tableName` (which must exist, with a stream, in both regions) both ways. */
    startReplicator(tableName: string, options?: ReplicatorOptions): Promise<Replicator>;
    /** Stop every replicator, the clients and both DynamoDB Locals. */
    stop(): Promise<void>;
}

/** Start two DynamoDB Locals, one per region. */
export async function startTwoRegionStandIn(
    regions: readonly [string, string] = STAND_IN_REGIONS,
): Promise<TwoRegionStandIn> {
    if (regions[0] === regions[1]) throw new Error(`the stand-in needs two different regions, got ${regions[0]} twice`);
    const locals: DynamoDbLocal[] = [];
    try {
        for (let i = 0; i < 2; i += 1) locals.push(await startDynamoDbLocal());
    } catch (err) {
        await Promise.all(locals.map((l) => l.stop()));
        throw err;
    }
    const made = regions.map((region, i) => {
        const endpoint = locals[i]!.endpoint;
        return {
            region,
            endpoint,
            ddb: new DynamoDBClient({ endpoint, region, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 }),
            streams: new DynamoDBStreamsClient({ endpoint, region, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 }),
        };
    }) as [StandInRegion, StandInRegion];
    const replicators: Replicator[] = [];
    return {
        regions: made,
        region(name) {
            const found = made.find((r) => r.region === name);
            if (found === undefined)
                throw new Error(`no region ${name} in the stand-in; it has ${made.map((r) => r.region).join(", ")}`);
            return found;
        },
        async startReplicator(tableName, options = {}) {
            const replicator = await startReplicator(made, tableName, options);
            replicators.push(replicator);
            return replicator;
        },
        async stop() {
            await Promise.all(replicators.splice(0).map((r) => r.stop()));
            for (const r of made) {
                r.ddb.destroy();
                r.streams.destroy();
            }
            await Promise.all(locals.map((l) => l.stop()));
        },
    };
}

type Image = Record<string, AttributeValue>;

/** A change read from one region's stream, waiting to be written in the other. */
interface Change {
    readonly key: string;
    readonly keys: Image;
    /** The new image, or `undefined` for a REMOVE. */
    readonly image: Image | undefined;
    readonly time: number;
    readonly origin: string;
    readonly due: number;
}

/** Who wrote an item last in a region, as far as the replicator knows. */
interface LastWrite {
    readonly time: number;
    readonly origin: string;
    /** Canonical text of the image, or `""` when the item is absent. */
    readonly image: string;
}

function canonical(value: unknown): string {
    if (value instanceof Uint8Array) return JSON.stringify({ $b: Buffer.from(value).toString("base64") });
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (typeof value === "object" && value !== null) {
        const entries = Object.entries(value as Record<string, unknown>)
            .filter(([, v]) => v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
    }
    return JSON.stringify(value);
}

/** Whether (time, origin) `a` wins over `b`. */
function wins(a: { time: number; origin: string }, b: { time: number; origin: string }): boolean {
    return a.time > b.time || (a.time === b.time && a.origin > b.origin);
}

/** Reads every record of a table's stream, shard by shard, remembering where it stopped. */
class StreamTail {
    private readonly iterators = new Map<string, string | undefined>();
    private readonly lastSequence = new Map<string, string>();
    private readonly closed = new Set<string>();
    private shardsCheckedAt = 0;

    constructor(
        private readonly streams: DynamoDBStreamsClient,
        private readonly streamArn: string,
    ) {}

    async read(): Promise<StreamRecord[]> {
        if (Date.now() - this.shardsCheckedAt > 500) await this.listShards();
        const out: StreamRecord[] = [];
        for (const [shardId, iterator] of this.iterators) {
            if (this.closed.has(shardId)) continue;
            let current = iterator ?? (await this.iteratorFor(shardId));
            for (let pages = 0; current !== undefined && pages < 20; pages += 1) {
                let page;
                try {
                    page = await this.streams.send(new GetRecordsCommand({ ShardIterator: current, Limit: 1000 }));
                } catch (err) {
                    const name = (err as { name?: string }).name;
                    if (name !== "ExpiredIteratorException" && name !== "TrimmedDataAccessException") throw err;
                    current = await this.iteratorFor(shardId);
                    continue;
                }
                const records = page.Records ?? [];
                for (const r of records) {
                    out.push(r);
                    this.lastSequence.set(shardId, r.dynamodb?.SequenceNumber ?? "");
                }
                current = page.NextShardIterator;
                if (current === undefined) this.closed.add(shardId);
                if (records.length === 0) break;
            }
            this.iterators.set(shardId, current);
        }
        return out;
    }

    private async listShards(): Promise<void> {
        const shards =
            (await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn }))).StreamDescription
                ?.Shards ?? [];
        for (const s of shards)
            if (s.ShardId !== undefined && !this.iterators.has(s.ShardId)) this.iterators.set(s.ShardId, undefined);
        this.shardsCheckedAt = Date.now();
    }

    private async iteratorFor(shardId: string): Promise<string | undefined> {
        const after = this.lastSequence.get(shardId);
        const answer = await this.streams.send(
            new GetShardIteratorCommand({
                StreamArn: this.streamArn,
                ShardId: shardId,
                ...(after
                    ? { ShardIteratorType: "AFTER_SEQUENCE_NUMBER", SequenceNumber: after }
                    : { ShardIteratorType: "TRIM_HORIZON" }),
            }),
        );
        return answer.ShardIterator;
    }
}

async function startReplicator(
    regions: readonly [StandInRegion, StandInRegion],
    tableName: string,
    options: ReplicatorOptions,
): Promise<Replicator> {
    let delayMs = options.delayMs ?? 0;
    const pollMs = options.pollMs ?? 10;
    const tails = new Map<string, StreamTail>();
    for (const r of regions) {
        const arn = (await r.ddb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.LatestStreamArn;
        if (arn === undefined)
            throw new Error(`table ${tableName} in ${r.region} has no stream; the replicator reads it`);
        tails.set(r.region, new StreamTail(r.streams, arn));
    }
    const last = new Map<string, Map<string, LastWrite>>(regions.map((r) => [r.region, new Map()]));
    const echoes = new Map<string, Map<string, number>>(regions.map((r) => [r.region, new Map()]));
    const queues = new Map<string, Change[]>(regions.map((r) => [r.region, []]));
    const paused = new Set<string>();
    const counts = { applied: 0, lostConflicts: 0, echoesSkipped: 0, read: 0 };
    let stopping = false;
    let quietRounds = 0;
    let failure: unknown;

    const other = (region: string): StandInRegion => regions.find((r) => r.region !== region)!;

    function readChange(region: string, record: StreamRecord): void {
        counts.read += 1;
        const keys = (record.dynamodb?.Keys ?? {}) as Image;
        const key = canonical(keys);
        const image = record.eventName === "REMOVE" ? undefined : (record.dynamodb?.NewImage as Image | undefined);
        const text = image === undefined ? "" : canonical(image);
        const mine = echoes.get(region)!;
        const echo = `${key}|${text}`;
        const pending = mine.get(echo) ?? 0;
        if (pending > 0) {
            if (pending === 1) mine.delete(echo);
            else mine.set(echo, pending - 1);
            counts.echoesSkipped += 1;
            return;
        }
        const time = Date.now();
        last.get(region)!.set(key, { time, origin: region, image: text });
        if (paused.has(region)) return;
        queues.get(other(region).region)!.push({ key, keys, image, time, origin: region, due: time + delayMs });
    }

    async function apply(target: StandInRegion, change: Change): Promise<"applied" | "lost" | "retry"> {
        const known = last.get(target.region)!.get(change.key);
        if (known !== undefined && wins(known, change)) return "lost";
        const current = (
            await target.ddb.send(new GetItemCommand({ TableName: tableName, Key: change.keys, ConsistentRead: true }))
        ).Item;
        const currentText = current === undefined ? "" : canonical(current);
        // A local write the replicator has not read yet: read the stream first, then decide.
        if (currentText !== (known?.image ?? "")) return "retry";
        const text = change.image === undefined ? "" : canonical(change.image);
        if (currentText !== text) {
            const echo = `${change.key}|${text}`;
            const mine = echoes.get(target.region)!;
            mine.set(echo, (mine.get(echo) ?? 0) + 1);
            if (change.image === undefined)
                await target.ddb.send(new DeleteItemCommand({ TableName: tableName, Key: change.keys }));
            else await target.ddb.send(new PutItemCommand({ TableName: tableName, Item: change.image }));
        }
        last.get(target.region)!.set(change.key, { time: change.time, origin: change.origin, image: text });
        return "applied";
    }

    async function round(): Promise<boolean> {
        let busy = false;
        for (const r of regions) {
            const records = await tails.get(r.region)!.read();
            for (const record of records) readChange(r.region, record);
            if (records.length > 0) busy = true;
        }
        const now = Date.now();
        for (const target of regions) {
            const queue = queues.get(target.region)!;
            while (queue.length > 0 && queue[0]!.due <= now) {
                const outcome = await apply(target, queue[0]!);
                if (outcome === "retry") break;
                queue.shift();
                if (outcome === "applied") counts.applied += 1;
                else counts.lostConflicts += 1;
                busy = true;
            }
        }
        return busy;
    }

    const loop = (async () => {
        while (!stopping) {
            try {
                const busy = await round();
                const queued = [...queues.values()].reduce((n, q) => n + q.length, 0);
                quietRounds = busy || queued > 0 ? 0 : quietRounds + 1;
                if (!busy) await new Promise((r) => setTimeout(r, pollMs));
            } catch (err) {
                if (stopping) return;
                failure = err;
                return;
            }
        }
    })();

    return {
        stats: () => ({ ...counts, queued: [...queues.values()].reduce((n, q) => n + q.length, 0) }),
        setDelay(ms) {
            delayMs = ms;
        },
        setRegionReplicating(region, replicating) {
            if (!last.has(region)) throw new Error(`no region ${region} in the stand-in`);
            if (replicating) paused.delete(region);
            else paused.add(region);
        },
        async waitIdle(timeoutMs = 30_000) {
            const deadline = Date.now() + timeoutMs;
            quietRounds = 0;
            while (quietRounds < 3) {
                if (failure !== undefined) throw new Error("the replicator stopped on an error", { cause: failure });
                if (Date.now() > deadline)
                    throw new Error(`the replicator was not idle after ${timeoutMs} ms: ${JSON.stringify(counts)}`);
                await new Promise((r) => setTimeout(r, pollMs));
            }
        },
        async stop() {
            stopping = true;
            await loop;
        },
    };
}
