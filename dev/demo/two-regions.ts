/**
 * `npm start -- --regions 2`: the outbox on a global table, on the two-region stand-in (dev/emulators/global-table.ts:
 * two DynamoDB Locals and a replicator between their streams; a stand-in, not AWS).
 *
 * 1. The stand-in, the table in both regions, replicating both ways; one SNS topic and a DLQ on the AWS fault server,
 *    which both regions publish to, so every publication of every event is counted in one place.
 * 2. Each region's relay: the publisher behind the local event source mapping on its own stream, with its origin
 *    scope and the filters `streamFilterPatterns` gives it; us-east-1 is the home region.
 * 3. A writer per region, stamping its region (`globalTable: true`) and homing each customer in one region
 *    (`keyHoming`): every other event is keyed, written from its customer's home region; the rest are keyless,
 *    written from both regions in turn.
 * 4. The summary: how many events were published once, twice and never, and whether each customer's events came in
 *    write order.
 *
 * @packageDocumentation
 */
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { startAwsFaultServer } from "../emulators/aws-fault-server";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../emulators/dynamodb-local";
import { startTwoRegionStandIn, STAND_IN_REGIONS } from "../emulators/global-table";
import { silentLogger } from "../../runtime/ports";
import { createPublisher } from "../../runtime/relay/publisher";
import { streamFilterPatterns, type OriginScope } from "../../runtime/schema";
import { OutboxStore } from "../../runtime/store";
import { startLocalEventSourceMapping, type LocalEventSourceMapping } from "../../runtime/testing/event-source-mapping";
import type { FilterPattern } from "../../runtime/testing/filter-pattern";
import { OutboxWriter } from "../../runtime/writer/writer";
import type { DemoResult } from "./demo";
import type { ProgressLine } from "./progress";
import { stopOnceStarted, type Shutdown } from "./shutdown";
import type { StartOptions } from "./start-args";

/** Customers of the keyed events when `--keys` is 0. */
const DEFAULT_CUSTOMERS = 4;
/** The replicator's delay, ms: replication lags the writes, as it does on AWS. */
const REPLICATION_DELAY_MS = 25;

/** One written event. */
interface Written {
    readonly id: string;
    readonly region: string;
    /** The customer of a keyed event. */
    readonly customer?: number;
}

/** Event `i`: every other one keyed, written from its customer's home region; keyless ones from each region in turn. */
function eventOf(i: number, customers: number, regions: readonly string[]) {
    if (i % 2 === 0) {
        const customer = (i / 2) % customers;
        return {
            region: regions[customer % regions.length]!,
            customer,
            message: {
                partition: `CUSTOMER#${customer}`,
                orderingKey: `c${customer}`,
                type: "OrderPlaced",
                payload: { i },
            },
        };
    }
    return {
        region: regions[((i - 1) / 2) % regions.length]!,
        message: { partition: `ORDER#${i}`, type: "OrderPlaced", payload: { i } },
    };
}

/** The number of customers whose first deliveries are not in write order. */
function customersOutOfOrder(written: readonly Written[], published: readonly string[]): number {
    const firstAt = new Map<string, number>();
    published.forEach((id, at) => {
        if (!firstAt.has(id)) firstAt.set(id, at);
    });
    const byCustomer = new Map<number, string[]>();
    for (const w of written)
        if (w.customer !== undefined) byCustomer.set(w.customer, [...(byCustomer.get(w.customer) ?? []), w.id]);
    let out = 0;
    for (const ids of byCustomer.values()) {
        const delivered = ids.filter((id) => firstAt.has(id));
        const sorted = [...delivered].sort((a, b) => firstAt.get(a)! - firstAt.get(b)!);
        if (sorted.some((id, k) => id !== delivered[k])) out += 1;
    }
    return out;
}

/**
 * Run the two-region demo; every part it starts is registered with `shutdown`.
 *
 * @param options - The parsed flags (`--count`, `--keys`, `--rate`, `--keep` apply).
 * @param shutdown - Stops the parts on exit, Ctrl-C, SIGTERM or a crash.
 * @param progress - Where the live line and the summary go.
 */
export async function runTwoRegionDemo(
    options: StartOptions,
    shutdown: Shutdown,
    progress: ProgressLine,
): Promise<DemoResult> {
    const startedAt = Date.now();
    const standIn = await stopOnceStarted(shutdown, "two-region stand-in", startTwoRegionStandIn());
    const server = await stopOnceStarted(shutdown, "AWS fault server", startAwsFaultServer({ seed: 37 }));
    const topicArn = server.createTopic("orders-events");
    const dlqUrl = server.createQueue("orders-dlq");
    const clientOptions = { endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const sns = new SNSClient(clientOptions);
    const sqs = new SQSClient(clientOptions);
    shutdown.add("SNS and SQS clients", () => {
        sns.destroy();
        sqs.destroy();
    });
    const regions = [...STAND_IN_REGIONS];
    const [home] = regions;
    const tableName = `outbox-demo-${Date.now().toString(36)}`;
    for (const r of standIn.regions) await new OutboxStore({ client: r.ddb, tableName }).createTable();
    const replicator = await standIn.startReplicator(tableName, { delayMs: REPLICATION_DELAY_MS });
    for (const r of standIn.regions) progress.print(`region ${r.region}: DynamoDB Local ${r.endpoint}`);
    progress.print(
        `table ${tableName} in both regions, replicated both ways (the stand-in: dev/emulators/global-table.ts); home region ${home}; one topic for both on the AWS fault server ${server.endpoint}`,
    );

    // Both regions publish to the one topic and dead-letter to the one queue.
    const destination = { sns, sqs, topicArn, dlqUrl };
    const mappings: LocalEventSourceMapping[] = [];
    for (const r of standIn.regions) {
        const origin: OriginScope = {
            region: r.region,
            otherRegions: regions.filter((o) => o !== r.region),
            home: r.region === home,
        };
        const publisher = createPublisher({
            ...destination,
            dynamodb: r.ddb,
            tableName,
            origin,
            logger: silentLogger,
            writeMetrics: () => undefined,
        });
        const mapping = await startLocalEventSourceMapping({
            streamsClient: r.streams,
            dynamodbClient: r.ddb,
            tableName,
            handler: (event, context) => publisher(event, context),
            filterPattern: streamFilterPatterns(origin) as FilterPattern[],
            batchSize: 100,
            functionName: `outbox-demo-publisher-${r.region}`,
        });
        shutdown.add(`event source mapping ${r.region}`, () => mapping.stop());
        mappings.push(mapping);
    }

    const customers = options.keys > 0 ? options.keys : DEFAULT_CUSTOMERS;
    const keyHoming = { regions, homeOf: (partition: string) => regions[Number(partition.split("#")[1]) % 2]! };
    const writers = new Map(
        standIn.regions.map((r) => [
            r.region,
            new OutboxWriter({
                client: r.ddb,
                tableName,
                address: topicArn,
                region: r.region,
                globalTable: true,
                keyHoming,
            }),
        ]),
    );
    const written: Written[] = [];
    const producerStart = Date.now();
    for (let i = 0; i < options.count && !shutdown.stopping; i += 1) {
        if (options.rate > 0) {
            const wait = producerStart + (i * 1000) / options.rate - Date.now();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        }
        const event = eventOf(i, customers, regions);
        const { messageIds } = await writers.get(event.region)!.write({ messages: [event.message] });
        written.push({
            id: messageIds[0]!,
            region: event.region,
            ...(event.customer !== undefined ? { customer: event.customer } : {}),
        });
        if (i % 50 === 0)
            progress.update(`written ${i + 1}/${options.count}  published ${server.topicMessages(topicArn).length}`);
    }
    for (let round = 0; round < 3 && !shutdown.stopping; round += 1) {
        await Promise.all(mappings.map((m) => m.drain({ timeoutMs: 60_000 })));
        await replicator.waitIdle(60_000);
    }
    progress.done();

    const published = server.topicMessages(topicArn).map((m) => m.attributes["outbox.id"]?.stringValue ?? "");
    const counts = new Map<string, number>();
    for (const id of published) counts.set(id, (counts.get(id) ?? 0) + 1);
    const times = (n: (c: number) => boolean): number => written.filter((w) => n(counts.get(w.id) ?? 0)).length;
    const [once, twice, never] = [times((c) => c === 1), times((c) => c === 2), times((c) => c === 0)];
    const delivered = written.length - never;
    const duplicates = published.length - delivered;
    const outOfOrder = customersOutOfOrder(written, published);
    const dlq = server.queueMessages(dlqUrl).length;
    const keyed = written.filter((w) => w.customer !== undefined).length;
    const from = (region: string): number => written.filter((w) => w.region === region).length;
    const lines = [
        "",
        "summary",
        `  written    ${written.length} events: ${regions.map((r) => `${from(r)} from ${r}`).join(", ")}; ${keyed} keyed over ${customers} customers, each written from its home region (keyHoming), the rest keyless`,
        `  relay      ${mappings.map((m, i) => `${regions[i]}: ${m.stats().invocations} publisher invocations`).join(", ")}; replicator applied ${replicator.stats().applied} changes`,
        `  published  once ${once}, twice ${twice}, never ${never}`,
        `  order      ${customers} customers, ${outOfOrder} out of order within a region`,
        `  total      ${((Date.now() - startedAt) / 1000).toFixed(1)} s including startup`,
        `delivered ${delivered}/${written.length} lost ${never} duplicates ${duplicates} dlq ${dlq}`,
    ];
    for (const line of lines) progress.print(line);
    if (options.keep) {
        progress.print("\n--keep: staying up; Ctrl-C to stop.");
        await new Promise<never>(() => setInterval(() => undefined, 60_000));
    }
    return {
        count: written.length,
        delivered,
        lost: never,
        duplicates,
        dlq,
        ok: once === options.count && outOfOrder === 0 && dlq === 0,
    };
}
