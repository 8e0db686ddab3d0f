/**
 * What one Claim costs as the backlog grows, from DynamoDB's own ReturnConsumedCapacity figures.
 *
 * For each backlog size it seeds one partition with that many pending records (BatchWriteItem with the record
 * codec, not one Persist per record), then claims 100 records at a time, completing each batch as a steady drain
 * does (completion is not counted), and reports, per claim, the read units and the Query pages the store spent:
 * - the fast path (keyless records, ClaimIndex): should be flat across sizes, O(limit);
 * - the scan path (records with ordering keys, ConsistentRead base-table query): grows with the backlog, because
 *   no eventually consistent index can prove per-key order (reference §5).
 *
 * `npx ts-node dev/bench/claim-cost.ts [--json] [--endpoint <url>] [--sizes 1000,50000] [--no-scan]`. Progress goes to
 * stderr. {@link measureClaimCost} is the function `dev/bench/run.ts` reuses.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import {
    BatchWriteItemCommand,
    PutItemCommand,
    type AttributeValue,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { localDynamoDbClient, startDynamoDbLocal } from "../emulators/dynamodb-local";
import { marshalRecord, pendingRecord } from "../../runtime/record/codec";
import { fenceKey } from "../../runtime/record/fence";
import { ATTR } from "../../runtime/schema";
import { OutboxStore, type ConsumedCapacityEvent } from "../../runtime/store";

/** The cost of one claim, averaged over the measured claims. */
export interface ClaimCost {
    /** Read capacity units per claim (fence read + queries). */
    readonly rcu: number;
    /** Query pages per claim. */
    readonly pages: number;
    /** Write capacity units per claim (fence raise + claim transactions, GSIs included). */
    readonly wcu: number;
    /** Records claimed per claim. */
    readonly claimed: number;
}

/** Per backlog size: the fast-path cost (`rcu`, `pages`, …) and, when measured, the scan-path cost. */
export type ClaimCostFigures = Record<string, ClaimCost & { readonly scan?: ClaimCost }>;

/** Options of {@link measureClaimCost}. */
export interface MeasureClaimCostOptions {
    /** Records per claim. @default 100 */
    readonly limit?: number;
    /** Claims measured per size (the figures are their average). @default 3 */
    readonly claims?: number;
    /** Also measure the scan path (seeds a second partition of the same size, with ordering keys). @default false */
    readonly scanPath?: boolean;
    /** Progress lines. @default none */
    readonly progress?: (line: string) => void;
}

const PAYLOAD = JSON.stringify({
    orderId: "ORD-0000000000",
    customer: "c-000000",
    items: [
        { sku: "SKU-0001", qty: 2, price: 12.5 },
        { sku: "SKU-0002", qty: 1, price: 99.99 },
    ],
    total: 124.99,
    currency: "EUR",
});
const BATCH = 25;
const CONCURRENCY = 8;

/** Seed `n` pending records into `partition` with BatchWriteItem, plus a warm FENCE row (no cold seed). */
async function seed(
    client: DynamoDBClient,
    tableName: string,
    partition: string,
    n: number,
    keyed: boolean,
): Promise<void> {
    const t0 = Date.UTC(2026, 0, 1);
    let next = 0;
    const worker = async (): Promise<void> => {
        for (;;) {
            const from = next;
            next += BATCH;
            if (from >= n) return;
            let requests = Array.from({ length: Math.min(BATCH, n - from) }, (_, j) => {
                const i = from + j;
                const record = pendingRecord(
                    {
                        partition,
                        recordId: `${partition}/${i}`,
                        bindingId: "orders-topic",
                        address: "arn:aws:sns:us-east-1:000000000000:orders",
                        envelope: {
                            id: `env-${String(i).padStart(6, "0")}`,
                            subject: "OrderPlaced",
                            payload: PAYLOAD,
                            createdAt: t0 + i,
                        },
                        ...(keyed ? { orderingKey: `ORDER-${i % 10}` } : {}),
                    },
                    BigInt(i + 1),
                    t0 + i,
                );
                return { PutRequest: { Item: marshalRecord(record) } };
            });
            while (requests.length > 0) {
                const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }));
                requests = (out.UnprocessedItems?.[tableName] ?? []) as typeof requests;
            }
        }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const fence: Record<string, AttributeValue> = {
        ...fenceKey(partition),
        [ATTR.maxClaimVersion]: { N: "1" },
        [ATTR.seqCounter]: { N: String(n) },
    };
    await client.send(new PutItemCommand({ TableName: tableName, Item: fence }));
}

interface Tally {
    /** Off while completing between claims: only the claims are measured. */
    on: boolean;
    rcu: number;
    wcu: number;
    pages: number;
}

function units(event: ConsumedCapacityEvent): number {
    return event.capacity.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}

async function measure(
    client: DynamoDBClient,
    tableName: string,
    partition: string,
    options: Required<Omit<MeasureClaimCostOptions, "progress" | "scanPath">>,
): Promise<ClaimCost> {
    const tally: Tally = { on: true, rcu: 0, wcu: 0, pages: 0 };
    const store = new OutboxStore({
        client,
        tableName,
        staleClaimMs: 0,
        onConsumedCapacity: (event) => {
            if (!tally.on) return;
            if (event.command === "Query") tally.pages++;
            if (event.command === "Query" || event.command === "GetItem") tally.rcu += units(event);
            else tally.wcu += units(event);
        },
    });
    const token = { owner: "bench", version: 1n };
    let claimed = 0;
    for (let i = 0; i < options.claims; i++) {
        tally.on = true;
        const batch = await store.claim(partition, token, options.limit);
        claimed += batch.length;
        // A steady drain completes what it claimed; completion is not part of the claim's cost.
        tally.on = false;
        await store.complete(
            batch.map((r) => r.recordId),
            token,
        );
    }
    const per = (x: number) => Math.round((x / options.claims) * 100) / 100;
    return { rcu: per(tally.rcu), pages: per(tally.pages), wcu: per(tally.wcu), claimed: per(claimed) };
}

/**
 * Seed each backlog size and measure the claim cost on DynamoDB at `endpoint` (DynamoDB Local's shared
 * credentials). Creates one table per size.
 *
 * @param endpoint - The DynamoDB endpoint, e.g. `http://127.0.0.1:8000`.
 * @param sizes - Backlog sizes, e.g. `[1000, 50000]`.
 * @param options - Claim size, repetitions, scan path, progress.
 * @returns per size (as a string key), the per-claim cost.
 */
export async function measureClaimCost(
    endpoint: string,
    sizes: readonly number[],
    options: MeasureClaimCostOptions = {},
): Promise<ClaimCostFigures> {
    const settings = { limit: options.limit ?? 100, claims: options.claims ?? 3 };
    const say = options.progress ?? (() => undefined);
    const client = localDynamoDbClient(endpoint);
    const figures: ClaimCostFigures = {};
    try {
        for (const size of sizes) {
            const tableName = `claim-cost-${size}-${Date.now().toString(36)}`;
            await new OutboxStore({ client, tableName }).createTable({ stream: false });
            const started = Date.now();
            await seed(client, tableName, "KEYLESS", size, false);
            say(`seeded ${size} keyless records in ${((Date.now() - started) / 1000).toFixed(1)} s`);
            const fast = await measure(client, tableName, "KEYLESS", settings);
            let scan: ClaimCost | undefined;
            if (options.scanPath) {
                const t = Date.now();
                await seed(client, tableName, "KEYED", size, true);
                say(`seeded ${size} keyed records in ${((Date.now() - t) / 1000).toFixed(1)} s`);
                scan = await measure(client, tableName, "KEYED", settings);
            }
            figures[String(size)] = { ...fast, ...(scan ? { scan } : {}) };
        }
    } finally {
        client.destroy();
    }
    return figures;
}

function table(figures: ClaimCostFigures, limit: number): string {
    const row = (cells: string[]) =>
        `| ${cells.map((c, i) => (i === 0 ? c.padEnd(24) : c.padStart(10))).join(" | ")} |`;
    const lines = [
        `per claim of ${limit} records (average), from ReturnConsumedCapacity`,
        "",
        row(["path / backlog", "RCU", "Query pages", "WCU", "claimed"]),
        `|${"-".repeat(26)}|${Array.from({ length: 4 }, () => `${"-".repeat(11)}:`).join("|")}|`,
    ];
    for (const [size, f] of Object.entries(figures))
        lines.push(row([`fast path, ${size}`, String(f.rcu), String(f.pages), String(f.wcu), String(f.claimed)]));
    for (const [size, f] of Object.entries(figures)) {
        if (f.scan)
            lines.push(
                row([
                    `scan path (keyed), ${size}`,
                    String(f.scan.rcu),
                    String(f.scan.pages),
                    String(f.scan.wcu),
                    String(f.scan.claimed),
                ]),
            );
    }
    const sizes = Object.keys(figures);
    if (sizes.length >= 2) {
        const [a, b] = [figures[sizes[0]], figures[sizes[sizes.length - 1]]];
        lines.push(
            "",
            `fast-path RCU ratio ${sizes[sizes.length - 1]}/${sizes[0]}: ${(b.rcu / a.rcu).toFixed(2)}x (flat means O(limit))`,
        );
        if (a.scan && b.scan)
            lines.push(
                `scan-path RCU ratio ${sizes[sizes.length - 1]}/${sizes[0]}: ${(b.scan.rcu / a.scan.rcu).toFixed(2)}x (O(backlog))`,
            );
    }
    return lines.join("\n");
}

async function main(): Promise<void> {
    const args = process.argv.slice(2);
    const flag = (name: string) => args.includes(name);
    const value = (name: string) => {
        const i = args.indexOf(name);
        return i >= 0 ? args[i + 1] : undefined;
    };
    const sizes = (value("--sizes") ?? "1000,50000").split(",").map((s) => Number(s));
    if (sizes.some((s) => !Number.isInteger(s) || s < 1))
        throw new Error(`--sizes must be whole numbers ≥ 1 separated by commas, got ${value("--sizes")}`);
    const say = (line: string) => process.stderr.write(`${line}\n`);
    let endpoint = value("--endpoint");
    const local = endpoint === undefined ? await startDynamoDbLocal() : undefined;
    endpoint ??= local!.endpoint;
    try {
        const figures = await measureClaimCost(endpoint, sizes, { scanPath: !flag("--no-scan"), progress: say });
        process.stdout.write(flag("--json") ? `${JSON.stringify(figures)}\n` : `${table(figures, 100)}\n`);
    } finally {
        await local?.stop();
    }
}

if (require.main === module) {
    main().catch((err) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
    });
}
