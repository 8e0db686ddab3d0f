/**
 * What the relay tests on a {@link Harness} share: one harness per test closed after it, the reads of stream
 * records and EMF lines, a DynamoDB client that throttles chosen completions, and records put in the table as
 * another writer left them.
 */
import assert from "node:assert/strict";
import { PutItemCommand, ScanCommand, UpdateItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { marshalRecord, pendingRecord } from "../../../runtime/record/codec";
import { ATTR, CLAIM_INDEX } from "../../../runtime/schema";
import type { LambdaStreamEvent, LambdaStreamRecord } from "../../../runtime/testing/stream-event";
import type { EntryFaultRule } from "../../../dev/emulators/aws-fault-server";
import { createHarness, type Harness, type HarnessOptions } from "./harness";

/** Close the harness `current()` returns after each test of the enclosing suite. */
export function closeAfterEach(current: () => Harness | undefined): void {
    afterEach(async function () {
        await current()?.close();
    });
}

/**
 * Give each test of the enclosing suite its own harness: the returned function opens one, and the suite closes
 * it after the test.
 *
 * @returns A function that opens a harness with `options` (the {@link createHarness} defaults where left out).
 */
export function harnessPerTest(): (options?: HarnessOptions) => Promise<Harness> {
    let current: Harness | undefined;
    afterEach(async function () {
        // Forget it first, so a test that opens none never closes the one before it again.
        const opened = current;
        current = undefined;
        await opened?.close();
    });
    return async (options) => {
        current = await createHarness(options);
        return current;
    };
}

/** The event Lambda would deliver after rewinding to `sequenceNumber`. */
export function from(event: LambdaStreamEvent, sequenceNumber: string): LambdaStreamEvent {
    const i = event.Records.findIndex((r) => r.dynamodb.SequenceNumber === sequenceNumber);
    assert.ok(i >= 0, `sequence number ${sequenceNumber} is in the batch`);
    return { Records: event.Records.slice(i) };
}

/** The record id of a stream record's new image. */
export function idOf(r: LambdaStreamRecord): string {
    const image = r.dynamodb.NewImage as Record<string, { S?: string }>;
    return image[ATTR.recordId]!.S!;
}

/** The sort key of a stream record. */
export function skOf(r: LambdaStreamRecord): string {
    return (r.dynamodb.Keys as Record<string, { S?: string }>)[ATTR.sk]!.S!;
}

/** The sum of metric `name` over the EMF lines the harness's handlers wrote. */
export function metric(h: Harness, name: string): number {
    return h.metricLines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .reduce((sum, l) => sum + (typeof l[name] === "number" ? (l[name] as number) : 0), 0);
}

/**
 * The harness's DynamoDB client, except that the UpdateItem moving the given sort keys to `status` (`completed`
 * by default) is throttled: a fake, because DynamoDB Local cannot throttle one write on demand.
 */
export function failingCompletions(
    h: Harness,
    sortKeys: readonly string[],
    status: "completed" | "expired" = "completed",
): Harness["ddb"] {
    const send = (command: object): Promise<unknown> => {
        if (command instanceof UpdateItemCommand) {
            const input = command.input;
            const values = JSON.stringify(input.ExpressionAttributeValues ?? {});
            if (sortKeys.includes(input.Key?.[ATTR.sk]?.S ?? "") && values.includes(`"${status}"`)) {
                return Promise.reject(
                    Object.assign(new Error("Rate of requests exceeds the allowed throughput."), {
                        name: "ThrottlingException",
                        $fault: "client",
                    }),
                );
            }
        }
        return h.ddb.send(command as never);
    };
    return { send } as unknown as Harness["ddb"];
}

/**
 * A record put in the table as another writer left it (an older one, a Go one, or one whose clock ran fast):
 * `change` is applied to the item, e.g. a claim by a live owner.
 */
export async function putRecord(
    h: Harness,
    partition: string,
    id: string,
    createdAt: number,
    options: { orderingKey?: string; seq?: bigint; change?: Record<string, AttributeValue> } = {},
): Promise<string> {
    const record = pendingRecord(
        {
            partition,
            recordId: id,
            bindingId: "sns",
            address: h.topicArn,
            createdAt,
            ...(options.orderingKey ? { orderingKey: options.orderingKey } : {}),
            envelope: { id, subject: "T", payload: JSON.stringify(id) },
        },
        options.seq ?? 0n,
        createdAt,
    );
    await h.ddb.send(
        new PutItemCommand({ TableName: h.tableName, Item: { ...marshalRecord(record), ...options.change } }),
    );
    return id;
}

/** Claimed by a relay that is alive (its claim never goes stale): no claim of this package can take it. */
export function heldByAnother(h: Harness): Record<string, AttributeValue> {
    return {
        [ATTR.status]: { S: "claimed" },
        [ATTR.claimedBy]: { S: "another-relay" },
        [ATTR.claimVersion]: { N: "1" },
        [ATTR.claimedAt]: { N: String(h.clock.now() + 30 * 86_400_000) },
    };
}

/** The partitions of ClaimIndex in its scan order (the hash of PK), read from DynamoDB Local. */
export async function claimIndexOrder(h: Harness): Promise<string[]> {
    const order: string[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
        const page = await h.ddb.send(
            new ScanCommand({
                TableName: h.tableName,
                IndexName: CLAIM_INDEX.indexName,
                ...(start ? { ExclusiveStartKey: start } : {}),
            }),
        );
        for (const item of page.Items ?? []) if (!order.includes(item[ATTR.pk]!.S!)) order.push(item[ATTR.pk]!.S!);
        start = page.LastEvaluatedKey;
    } while (start);
    return order;
}

/** An entry fault on the records `ids`, matched by their `outbox.id` attribute; `rule` gives the rest. */
export function entryFault(ids: string | readonly string[], rule: Omit<EntryFaultRule, "when">): EntryFaultRule {
    const matched: readonly string[] = typeof ids === "string" ? [ids] : ids;
    return { ...rule, when: (e) => matched.includes(e.attributes["outbox.id"]?.stringValue ?? "") };
}

/** The record ids of the messages the destination accepted, in order. */
export function publishedIds(h: Harness): string[] {
    return h.published().map((p) => p.id);
}

/** Write `count` records of one partition and ordering key, payloads 0, 1, …, in writes of 50; their ids in order. */
export async function writeKeyRun(h: Harness, partition: string, key: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 50) {
        const messages = Array.from({ length: Math.min(50, count - start) }, (_, i) => ({
            partition,
            type: "T",
            payload: start + i,
            orderingKey: key,
        }));
        ids.push(...(await h.writer.write({ messages })).messageIds);
    }
    return ids;
}

/** Write one transaction of messages on partition `P` of type `T` with payloads 1…`count`; their ids in order. */
export async function writeNumbered(h: Harness, count: number): Promise<string[]> {
    const { messageIds } = await h.writer.write({
        messages: Array.from({ length: count }, (_, i) => ({ partition: "P", type: "T", payload: i + 1 })),
    });
    return messageIds;
}

/**
 * SNS refuses record `id`'s entry with `code` as the caller's fault (SenderFault) on every call; `calls` adds
 * faults on whole calls (a DLQ that is down).
 *
 * @param code - The entry's error code.
 * @param calls - More faults, on whole calls.
 * @default code "InvalidParameter"
 * @default calls none
 */
export function refuseEntry(
    h: Harness,
    id: string,
    code = "InvalidParameter",
    calls?: Parameters<Harness["server"]["setFaults"]>[0]["calls"],
): void {
    h.server.setFaults({
        entries: [entryFault(id, { code, senderFault: true })],
        ...(calls ? { calls } : {}),
    });
}

/**
 * Have the destination fail the entry of record `id` once, as a server-side InternalError (a transient fault):
 * its call fails that entry, and the retry goes through.
 *
 * @param h - The harness whose fault server answers.
 * @param id - The record id of the entry to fail.
 */
export function failEntryOnce(h: Harness, id: string): void {
    h.server.setFaults({ entries: [entryFault(id, { code: "InternalError", senderFault: false, times: 1 })] });
}

/** Write one message with ordering key `orderingKey` and payload `payload` on partition `P`; its id. */
export async function writeKeyedOne(h: Harness, orderingKey: string, payload: unknown): Promise<string> {
    return (await h.writer.write({ messages: [{ partition: "P", type: "T", payload, orderingKey }] })).messageIds[0]!;
}

/** The dead letters' `[reason, recordId]` pairs, sorted (the order the DLQ got them in is not the point). */
export function deadLetterReasons(h: Harness): [string, string][] {
    return h
        .deadLetters()
        .map((d): [string, string] => [d.reason, d.recordId])
        .sort();
}

/** The statuses of records `ids`, in that order, read from the table. */
export async function statusesOf(h: Harness, ids: readonly string[]): Promise<(string | undefined)[]> {
    const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
    return ids.map((id) => byId.get(id));
}

/**
 * Write `count` records of `partition` and ordering key `key`, one transaction each, payloads `{ n }`, moving the
 * harness's clock `advanceMs(n)` after record `n`; their ids in order.
 */
export async function writeKeyedOneByOne(
    h: Harness,
    partition: string,
    key: string,
    count: number,
    advanceMs: (n: number) => number,
): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 0; n < count; n += 1) {
        const { messageIds } = await h.writer.write({
            messages: [{ partition, type: "T", payload: { n }, orderingKey: key }],
        });
        ids.push(...messageIds);
        h.clock.advance(advanceMs(n));
    }
    return ids;
}

/** Write `count` messages on partition `P` in one transaction, payloads `{ n: 0 }`…, and read their stream event. */
export async function streamOfKeyless(h: Harness, count: number): Promise<LambdaStreamEvent> {
    await h.writer.write({
        messages: Array.from({ length: count }, (_, i) => ({ partition: "P", type: "T", payload: { n: i } })),
    });
    return h.streamEvent();
}

/** The dead letters' `[recordId, reason]` pairs, in the order the DLQ got them. */
export function deadLettered(h: Harness): [string, string][] {
    return h.deadLetters().map((d): [string, string] => [d.recordId, d.reason]);
}

/** Put `item` in the harness's table as it is: a row no writer of this package would leave (broken, oversized). */
export async function putRawItem(h: Harness, item: Record<string, AttributeValue>): Promise<void> {
    await h.ddb.send(new PutItemCommand({ TableName: h.tableName, Item: item }));
}
