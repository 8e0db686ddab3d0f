/**
 * One generated case, on real parts: a fresh outbox table on DynamoDB Local with its real stream, the fault server
 * holding the destination and the DLQ (`tests/support/runtime/harness.ts`), fauxqs's S3 for the claim check, the
 * case's `OutboxWriter`, and the real `createPublisher` and `createSweeper` handlers.
 *
 * 1. Write: each write the writer refuses must be an `OutboxError` (`INVALID_PAYLOAD`) that left nothing in the
 *    table (no record, no id guard, no business item: a keyed write may leave its partition's FENCE allocation,
 *    as documented); each it accepts leaves pending records.
 * 2. The stream: the table's real stream records (the component's filter) go to the publisher as Lambda sends them,
 *    a failed batch again from its lowest reported failure (`lowestFailedIndex`, the local mapping's reading). The
 *    batch must be acknowledged within one invocation per injected fault, plus one: no record holds the shard.
 * 3. The sweeps: the clock moves past `sweepAfter`, and the sweeper runs until no record is pending or claimed,
 *    within `maxPublishAttempts` + one per injected fault + 2 runs. One more sweep finds nothing.
 * 4. The checks ({@link checkOutcome}).
 *
 * The faults are the fault server's, a fake for what no emulator can show: a message refused as its own fault
 * (`poison`), and whole calls failed once (5xx, throttled, accepted and then the connection dropped).
 *
 * @packageDocumentation
 */
import assert from "node:assert/strict";
import { DeleteTableCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import type { S3 } from "@aws-sdk/client-s3";
import type { CallFaultRule, EntryFaultRule } from "../../../dev/emulators/aws-fault-server";
import type { DestinationKind } from "../../../runtime/destination/kind";
import { isOutboxError } from "../../../runtime/errors";
import type { OutboxRecord } from "../../../runtime/record/codec";
import { itemSize } from "../../../runtime/record/item-size";
import { ATTR, FENCE_SK, RECORD_SK_PREFIX } from "../../../runtime/schema";
import { createSweeper, type SweepResult } from "../../../runtime/relay/sweeper";
import { lowestFailedIndex } from "../../../runtime/testing/mapping/batch-item-failures";
import { OutboxWriter, type OutboxWriterOptions } from "../../../runtime/writer/writer";
import { createHarness, entryRecordId, type Harness } from "../runtime/harness";
import type { EdgeCase } from "./cases";
import { checkOutcome, type Outcome, type Written } from "./outcome";
import { realizeMessages, type RealMessage } from "./realize";

/** The claim check's store: fauxqs's S3 and a bucket on it. */
export interface PayloadStore {
    readonly objects: S3;
    readonly bucket: string;
}

/** What one case did, for the run's tally: its outcome's figures and these. */
export interface CaseReport extends Outcome {
    readonly destination: string;
    readonly messages: number;
    readonly accepted: number;
    /** The refusals' messages, their variable parts blanked. */
    readonly refusals: readonly string[];
    /** The accepted messages grown exactly to an edge (a fill with delta 0), by place and target. */
    readonly atEdge: readonly string[];
    readonly largestRecordBytes: number;
    readonly invocations: number;
    readonly sweeps: number;
}

/** The entry fault that refuses a poison message, in its destination's words, as the message's own fault. */
const POISON: Readonly<Record<DestinationKind, Omit<EntryFaultRule, "when" | "actions">>> = {
    sns: { code: "InvalidParameter", senderFault: true, message: "Invalid parameter: Message" },
    sqs: { code: "InvalidMessageContents", senderFault: true, message: "Invalid characters found" },
    eventbridge: { code: "InvalidArgument", message: "Parameter Detail is not valid." },
};

/** The sweeper's default wait, and a second more. */
const PAST_SWEEP_AFTER_MS = 121_000;

/** A refusal's message with its variable parts (quoted values, numbers) blanked, to count refusals by kind. */
export function refusalKind(message: string): string {
    return message
        .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
        .replace(/\d+/g, "N")
        .slice(0, 110);
}

/** The items a refused write must leave as they were: all but the FENCE rows. */
async function settledItems(h: Harness): Promise<Record<string, AttributeValue>[]> {
    return (await h.items()).filter((item) => item[ATTR.sk]?.S !== FENCE_SK);
}

function writerOptions(c: EdgeCase, h: Harness, store: PayloadStore): OutboxWriterOptions {
    return {
        client: h.ddb,
        tableName: h.tableName,
        clock: h.clock,
        ...(c.writer !== "bare" ? { address: h.destinationArn } : {}),
        ...(c.writer === "address+fifo" ? { fifo: true } : {}),
        ...(c.claimCheckThreshold !== undefined
            ? {
                  largePayloads: {
                      objects: store.objects,
                      bucket: store.bucket,
                      thresholdBytes: c.claimCheckThreshold,
                  },
              }
            : {}),
    };
}

/** Write the case's messages, one write each or all in one with a business item; the accepted ones, in write order. */
async function writeAll(
    c: EdgeCase,
    h: Harness,
    writer: OutboxWriter,
    real: readonly RealMessage[],
    refusals: string[],
): Promise<Written[]> {
    const groups = c.writes === "each" ? real.map((m) => [m]) : [real];
    const written: Written[] = [];
    for (const [g, group] of groups.entries()) {
        const before = await settledItems(h);
        const business = { PK: { S: `BUSINESS#${g}` }, SK: { S: "META" }, n: { N: String(g) } };
        try {
            const { messageIds } = await writer.write({
                messages: group.map((m) => m.message),
                ...(c.writes === "together" ? { items: [{ Put: { TableName: h.tableName, Item: business } }] } : {}),
            });
            group.forEach((m, i) => written.push({ ...m, id: messageIds[i]! }));
        } catch (err) {
            if (!isOutboxError(err))
                throw new Error(`the writer threw what is no OutboxError: ${String(err)}`, { cause: err });
            assert.equal(err.code, "INVALID_PAYLOAD", `a refusal is INVALID_PAYLOAD: ${err.message}`);
            assert.ok(err.message.length > 20, "a refusal says what and why");
            assert.deepEqual(await settledItems(h), before, `a refused write leaves nothing: ${err.message}`);
            refusals.push(refusalKind(err.message));
        }
    }
    return written;
}

/** The faults of the case: its poison messages refused at every attempt, and each call fault once. */
function setFaults(c: EdgeCase, h: Harness, poison: ReadonlySet<string>): void {
    const entries: EntryFaultRule[] = [
        {
            ...POISON[c.destination],
            actions: [h.batchAction],
            when: (entry) => poison.has(entryRecordId(entry) ?? ""),
        },
    ];
    const calls: CallFaultRule[] = c.faults.map((kind) => ({
        kind,
        times: 1,
        actions: [h.batchAction, "SendMessageBatch", "SendMessage"],
    }));
    h.server.setFaults({ entries, calls });
}

/** The stream path: the batch until acknowledged; the number of invocations it took. */
async function drainStream(c: EdgeCase, h: Harness): Promise<number> {
    const publisher = h.publisher({
        maxPublishAttempts: c.maxPublishAttempts,
        ...(c.claimLimit !== undefined ? { claimLimit: c.claimLimit } : {}),
    });
    let batch = (await h.streamEvent()).Records;
    const bound = c.faults.length + 1;
    let invocations = 0;
    while (batch.length > 0) {
        assert.ok(
            invocations < bound,
            `the stream batch is still failed after ${bound} invocations (${c.faults.length} injected faults): a record holds the shard`,
        );
        invocations += 1;
        const failed = lowestFailedIndex(await publisher({ Records: batch }), batch);
        if (failed === undefined) break;
        batch = batch.slice(failed);
    }
    return invocations;
}

const open = (records: readonly OutboxRecord[]) =>
    records.filter((r) => r.status !== "completed" && r.status !== "expired");

/** The sweeps: until nothing is pending or claimed, within the bound; then one more, which finds nothing. */
async function sweepUntilDone(c: EdgeCase, h: Harness): Promise<number> {
    const sweeper = createSweeper(
        h.config({
            maxPublishAttempts: c.maxPublishAttempts,
            ...(c.claimLimit !== undefined ? { claimLimit: c.claimLimit } : {}),
        }),
    );
    const bound = c.maxPublishAttempts + c.faults.length + 2;
    let sweeps = 0;
    let last: SweepResult | undefined;
    for (let left = open(await h.records()); left.length > 0; left = open(await h.records())) {
        assert.ok(
            sweeps < bound,
            `${left.length} record(s) still ${left.map((r) => `${r.recordId} ${r.status}`).join(", ")} after ${bound} sweeps (last: ${JSON.stringify(last)})`,
        );
        h.clock.advance(PAST_SWEEP_AFTER_MS);
        last = await sweeper();
        sweeps += 1;
    }
    h.server.clearFaults();
    h.clock.advance(PAST_SWEEP_AFTER_MS);
    const again = await sweeper();
    assert.deepEqual(
        [again.published, again.deadLettered, again.expired, again.failedPartitions],
        [0, 0, 0, 0],
        "a sweep after the end finds nothing to do",
    );
    return sweeps;
}

/**
 * Run one case and check it; throws an `AssertionError` naming what broke.
 *
 * @param store - fauxqs's S3, for a case with a claim check.
 */
export async function runCase(c: EdgeCase, store: PayloadStore): Promise<CaseReport> {
    const h = await createHarness({ destination: c.destination, fifo: c.fifo });
    try {
        const options = writerOptions(c, h, store);
        const real = realizeMessages(c, h.clock.now(), new OutboxWriter(options), options);
        const refusals: string[] = [];
        const written = await writeAll(c, h, new OutboxWriter(options), real, refusals);
        const largestRecordBytes = Math.max(
            0,
            ...(await h.items()).filter((i) => i[ATTR.sk]?.S?.startsWith(RECORD_SK_PREFIX)).map((i) => itemSize(i)),
        );
        const poison = new Set(written.filter((w) => w.spec.poison).map((w) => w.id));
        setFaults(c, h, poison);
        const invocations = c.stream === "delivered" && written.length > 0 ? await drainStream(c, h) : 0;
        const sweeps = await sweepUntilDone(c, h);
        const outcome = await checkOutcome(c, h, written);
        return {
            destination: `${c.destination}${c.fifo ? " fifo" : ""}`,
            messages: real.length,
            accepted: written.length,
            refusals,
            invocations,
            sweeps,
            largestRecordBytes,
            atEdge: written.flatMap((w) =>
                w.spec.fill !== undefined && w.spec.fill.delta === 0
                    ? [`${w.spec.fill.place}/${w.spec.fill.target}`]
                    : [],
            ),
            ...outcome,
        };
    } finally {
        await h.close();
        // Each case's table goes: DynamoDB Local keeps every table, and its stream, in memory.
        await h.ddb.send(new DeleteTableCommand({ TableName: h.tableName }));
        h.ddb.destroy();
        h.streams.destroy();
    }
}
