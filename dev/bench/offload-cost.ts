/**
 * What an offloaded write costs (the claim check, `largePayloads`): write latency inline against offloaded, and
 * calls and bytes per message, on DynamoDB Local and fauxqs's S3 (both on loopback: the figures compare the two
 * paths on one machine, they are not AWS's latencies).
 *
 * Three runs of `writes` sequential writes, one message each, after an untimed warm-up of each:
 * - `inline`: a payload of `inlineBytes` (default 200 KB, under SNS's 256 KiB), written as it is;
 * - `offloaded`: the same payload with `thresholdBytes` 1024, so it goes to S3 first (the difference is the put);
 * - `offloaded-1mb`: a 1 MB payload, which only an offloading writer takes.
 * Per message: p50 and p99 write latency, DynamoDB and S3 calls, the record's bytes (as DynamoDB counts an item),
 * the bytes put to S3, the SNS message's bytes (body and attributes) and the write units of the transaction.
 *
 * `npx ts-node -T dev/bench/offload-cost.ts [--json] [--writes <n>]`; `npm run bench` reuses {@link measureOffloadCost}.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { localDynamoDbClient, startDynamoDbLocal } from "../emulators/dynamodb-local";
import { startFauxqs } from "../emulators/fauxqs";
import { createPayloadBucket, localPayloadObjects } from "../emulators/local-s3";
import { itemSize } from "../../runtime/record/item-size";
import { outboundMessage, snsMessageSize } from "../../runtime/record/message";
import { unmarshalRecord } from "../../runtime/record/codec";
import { OutboxStore } from "../../runtime/store";
import { OutboxWriter } from "../../runtime/writer/writer";
import { instrumentClient, newTally, resetTally, totalCalls } from "./instrument";
import { percentile, round } from "./stats";

/** One run's figures, per message. */
export interface OffloadRunCost {
    /** The payload's JSON size, bytes. */
    readonly payloadBytes: number;
    /** Write latency percentiles, ms (`write()` from call to commit, the put included). */
    readonly p50Ms: number;
    readonly p99Ms: number;
    /** DynamoDB calls per message (the transaction). */
    readonly dynamodbCalls: number;
    /** S3 calls per message (the put). */
    readonly s3Calls: number;
    /** The record's size as DynamoDB counts it, bytes. */
    readonly itemBytes: number;
    /** Bytes put to S3 per message. */
    readonly s3Bytes: number;
    /** The SNS message the publisher sends, bytes (body and attributes). */
    readonly snsMessageBytes: number;
    /** Write units of the transaction per message. */
    readonly wcu: number;
}

/** The three runs. */
export interface OffloadCost {
    readonly writes: number;
    readonly inline: OffloadRunCost;
    readonly offloaded: OffloadRunCost;
    readonly offloaded1mb: OffloadRunCost;
}

/** Options of {@link measureOffloadCost}. */
export interface MeasureOffloadCostOptions {
    /** Writes per run. @default 50 */
    readonly writes?: number;
    /** The payload of the inline and offloaded runs, bytes. @default 200000 */
    readonly inlineBytes?: number;
    /** Progress lines. @default none */
    readonly progress?: (line: string) => void;
}

function payloadOf(bytes: number, n: number): { n: number; blob: string } {
    const base = Buffer.byteLength(JSON.stringify({ n, blob: "" }));
    return { n, blob: "x".repeat(Math.max(0, bytes - base)) };
}

/**
 * Measure the three runs on a DynamoDB at `endpoint` and a fauxqs of its own.
 *
 * @param endpoint - A DynamoDB (Local) endpoint.
 * @param options - Sizes and progress.
 */
export async function measureOffloadCost(
    endpoint: string,
    options: MeasureOffloadCostOptions = {},
): Promise<OffloadCost> {
    const writes = options.writes ?? 50;
    const inlineBytes = options.inlineBytes ?? 200_000;
    const fauxqs = await startFauxqs();
    const ddb = localDynamoDbClient(endpoint);
    const s3 = localPayloadObjects(fauxqs.endpoint);
    const ddbTally = newTally();
    const s3Tally = newTally();
    instrumentClient(ddb, ddbTally, { capacity: true });
    instrumentClient(s3, s3Tally);
    try {
        const bucket = `bench-payloads-${Date.now().toString(36)}`;
        await createPayloadBucket(s3, bucket);
        const run = async (
            name: string,
            bytes: number,
            offload: { readonly thresholdBytes?: number } | undefined,
        ): Promise<OffloadRunCost> => {
            const tableName = `bench-offload-${name}-${Date.now().toString(36)}`;
            await new OutboxStore({ client: ddb, tableName }).createTable();
            const writer = new OutboxWriter({
                client: ddb,
                tableName,
                ...(offload !== undefined ? { largePayloads: { objects: s3, bucket, ...offload } } : {}),
            });
            const write = (n: number) =>
                writer.write({
                    messages: [
                        {
                            id: `${name}-${n}`,
                            partition: `ORDER#${n}`,
                            type: "OrderPlaced",
                            payload: payloadOf(bytes, n),
                        },
                    ],
                });
            for (let n = 0; n < 5; n += 1) await write(-1 - n);
            resetTally(ddbTally);
            resetTally(s3Tally);
            const latencies: number[] = [];
            for (let n = 0; n < writes; n += 1) {
                const started = performance.now();
                await write(n);
                latencies.push(performance.now() - started);
            }
            const ddbCalls = totalCalls(ddbTally);
            const wcu = ddbTally.writeUnits;
            const s3Calls = totalCalls(s3Tally);
            const raw = (
                await ddb.send(
                    new GetItemCommand({
                        TableName: tableName,
                        Key: { PK: { S: "ORDER#0" }, SK: { S: `OUTBOX#${name}-0#sns` } },
                    }),
                )
            ).Item!;
            const offloaded = s3Calls > 0;
            const cost: OffloadRunCost = {
                payloadBytes: bytes,
                p50Ms: round(percentile(latencies, 50)),
                p99Ms: round(percentile(latencies, 99)),
                dynamodbCalls: round(ddbCalls / writes),
                s3Calls: round(s3Calls / writes),
                itemBytes: itemSize(raw),
                s3Bytes: offloaded ? bytes : 0,
                snsMessageBytes: snsMessageSize(outboundMessage(unmarshalRecord(raw))),
                wcu: round(wcu / writes),
            };
            options.progress?.(
                `${name}: ${writes} writes of ${bytes} bytes, p50 ${cost.p50Ms} ms, ${cost.s3Calls} S3 call(s) per message`,
            );
            return cost;
        };
        return {
            writes,
            inline: await run("inline", inlineBytes, undefined),
            offloaded: await run("offloaded", inlineBytes, { thresholdBytes: 1024 }),
            offloaded1mb: await run("offloaded-1mb", 1_000_000, {}),
        };
    } finally {
        ddb.destroy();
        s3.destroy();
        await fauxqs.stop();
    }
}

/** The table of {@link measureOffloadCost}'s figures. */
export function offloadTable(cost: OffloadCost): string {
    const rows: [string, OffloadRunCost][] = [
        [`inline, ${cost.inline.payloadBytes} B`, cost.inline],
        [`offloaded, ${cost.offloaded.payloadBytes} B`, cost.offloaded],
        [`offloaded, ${cost.offloaded1mb.payloadBytes} B`, cost.offloaded1mb],
    ];
    const head = [
        "write",
        "p50 ms",
        "p99 ms",
        "DynamoDB calls",
        "S3 calls",
        "record B",
        "S3 B",
        "SNS message B",
        "WCU",
    ];
    const cells = rows.map(([name, c]) =>
        [name, c.p50Ms, c.p99Ms, c.dynamodbCalls, c.s3Calls, c.itemBytes, c.s3Bytes, c.snsMessageBytes, c.wcu].map(
            String,
        ),
    );
    const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
    const line = (r: readonly string[]) =>
        r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
    return [
        `offloaded writes (${cost.writes} per run, one message each; DynamoDB Local and fauxqs's S3 on loopback):`,
        line(head),
        ...cells.map(line),
    ].join("\n");
}

async function main(): Promise<void> {
    const args = process.argv.slice(2);
    const i = args.indexOf("--writes");
    const writes = i >= 0 ? Number(args[i + 1]) : 50;
    if (!Number.isInteger(writes) || writes < 1 || writes > 10_000)
        throw new Error(`--writes must be an integer from 1 to 10000, got ${args[i + 1]}`);
    const local = await startDynamoDbLocal();
    try {
        const cost = await measureOffloadCost(local.endpoint, {
            writes,
            progress: (line) => process.stderr.write(`${line}\n`),
        });
        process.stdout.write(args.includes("--json") ? `${JSON.stringify(cost)}\n` : `${offloadTable(cost)}\n`);
    } finally {
        await local.stop();
    }
}

if (require.main === module) {
    main().catch((err: unknown) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
    });
}
