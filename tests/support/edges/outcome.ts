/**
 * What must hold once a generated case's relay is done, read from the table, the destination and the DLQ as the fault
 * server recorded them:
 * - every accepted record is terminal (`completed` or `expired`), and ClaimIndex and ExpiryIndex are empty;
 * - nothing completed that was not published: a `completed` record is on the destination (a message it took) or
 *   in the DLQ; an `expired` one is in the DLQ as `expired`; nothing is on the destination or in the DLQ that the
 *   writer did not accept, and no DLQ message says `item-too-large` (no record this writer accepts is too large);
 * - what the case asked for: a poison message only in the DLQ (`publish-rejected`, or `expired`); one whose expiry had
 *   passed at write only in the DLQ (`expired`); with `address` (the writer knows its destination), every other
 *   message published, none dead-lettered: the destination refuses nothing the writer accepted;
 * - what was published is the message: the body (or, offloaded, the claim check's attribute), the type, every header,
 *   and on a FIFO destination the group id (the ordering key, else the partition) and the deduplication id (the id);
 * - per-key order: the first arrivals of each ordering key's records come in write order.
 *
 * @packageDocumentation
 */
import assert from "node:assert/strict";
import { CLAIM_CHECK_ATTRIBUTE } from "../../../runtime/claim-check/pointer";
import type { Harness } from "../runtime/harness";
import type { EdgeCase } from "./cases";
import type { RealMessage } from "./realize";

/** A message the writer accepted, with its id. */
export interface Written extends RealMessage {
    readonly id: string;
}

/** The figures of a case's outcome. */
export interface Outcome {
    readonly published: number;
    readonly deadLettered: Readonly<Record<string, number>>;
    readonly offloaded: number;
    /** The bytes of the distinct messages on the destination together (bodies, attribute names and values). */
    readonly publishedBytes: number;
}

type Published = ReturnType<Harness["published"]>[number];

/** The published copy of `w` says what `w` said. */
function checkContent(c: EdgeCase, w: Written, p: Published, offloaded: boolean): void {
    const what = `the published message of ${w.id}`;
    if (offloaded) assert.ok(p.attributes[CLAIM_CHECK_ATTRIBUTE] !== undefined, `${what} carries the claim check`);
    else assert.equal(p.body, JSON.stringify(w.message.payload), `${what} has its payload`);
    assert.equal(p.attributes["outbox.type"], w.message.type, `${what} has its type`);
    for (const [name, value] of Object.entries(w.message.headers ?? {}))
        assert.equal(p.attributes[name], value, `${what} has its header ${name}`);
    if (c.fifo) {
        assert.equal(p.groupId, w.message.orderingKey ?? w.message.partition, `${what} has its group id`);
        assert.equal(p.dedupId, w.id, `${what} has its deduplication id`);
    }
}

/** Each ordering key's first arrivals come in write order. */
function checkKeyOrder(written: readonly Written[], published: readonly Published[]): void {
    const firstArrival = new Map<string, number>();
    published.forEach((p, i) => {
        if (!firstArrival.has(p.id)) firstArrival.set(p.id, i);
    });
    const lanes = new Map<string, Written[]>();
    for (const w of written) {
        if (w.message.orderingKey === undefined) continue;
        const lane = JSON.stringify([w.message.partition, w.message.orderingKey]);
        lanes.set(lane, [...(lanes.get(lane) ?? []), w]);
    }
    for (const [lane, records] of lanes) {
        const arrivals = records.flatMap((w) =>
            firstArrival.has(w.id) ? [[w.id, firstArrival.get(w.id)!] as const] : [],
        );
        for (let i = 1; i < arrivals.length; i += 1)
            assert.ok(
                arrivals[i - 1]![1] < arrivals[i]![1],
                `key ${lane}: ${arrivals[i]![0]} arrived before ${arrivals[i - 1]![0]}, written before it`,
            );
    }
}

/** Check the case's end state; its figures. */
export async function checkOutcome(c: EdgeCase, h: Harness, written: readonly Written[]): Promise<Outcome> {
    const records = new Map((await h.records()).map((r) => [r.recordId, r]));
    const published = h.published();
    // A copy the destination took counts even when its answer was lost: the message is there, as on AWS (a FIFO
    // destination answers the retry as a duplicate and keeps only the first copy).
    const onDestination = new Map<string, Published>();
    for (const p of published) if (!onDestination.has(p.id)) onDestination.set(p.id, p);
    const deadLetters = h.deadLetters();
    const accepted = new Set(written.map((w) => w.id));
    const deadReasons = new Map<string, Set<string>>();
    for (const d of deadLetters) {
        assert.ok(accepted.has(d.recordId), `the DLQ holds ${d.recordId}, which the writer did not accept`);
        assert.notEqual(d.reason, "item-too-large", `${d.recordId} was dead-lettered as too large to claim`);
        deadReasons.set(d.recordId, new Set([...(deadReasons.get(d.recordId) ?? []), d.reason]));
    }
    for (const p of published)
        assert.ok(accepted.has(p.id), `the destination holds ${p.id}, which the writer did not accept`);
    assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 }, "ClaimIndex and ExpiryIndex are empty");

    let offloaded = 0;
    for (const w of written) {
        const record = records.get(w.id);
        assert.ok(record, `the accepted record ${w.id} is in the table`);
        const dead = deadReasons.get(w.id) ?? new Set<string>();
        const sent = onDestination.get(w.id);
        if (record.status === "expired") assert.ok(dead.has("expired"), `${w.id} expired and is in the DLQ as expired`);
        else {
            assert.equal(record.status, "completed", `${w.id} ends completed or expired`);
            assert.ok(sent !== undefined || dead.size > 0, `${w.id} is completed: it is published or in the DLQ`);
        }
        if (w.spec.poison || w.spec.expiry === "past") {
            assert.equal(
                sent,
                undefined,
                `${w.id} (${w.spec.poison ? "refused by the destination" : "expired at write"}) is not published`,
            );
            assert.ok(dead.size > 0, `${w.id} is in the DLQ`);
        }
        if (w.spec.expiry === "past")
            assert.ok(dead.has("expired"), `${w.id} expired at write: dead-lettered as expired`);
        if (!w.spec.poison && w.spec.expiry !== "past" && c.writer !== "bare")
            assert.ok(
                sent !== undefined || dead.has("expired"),
                `${w.id}: the writer knew its destination and accepted it, yet it was not published (DLQ: ${[...dead].join(", ") || "none"})`,
            );
        const isOffloaded = record.envelope.headers[CLAIM_CHECK_ATTRIBUTE] !== undefined;
        if (isOffloaded) offloaded += 1;
        if (sent !== undefined) checkContent(c, w, sent, isOffloaded);
    }
    checkKeyOrder(written, published);
    const deadLettered: Record<string, number> = {};
    for (const d of deadLetters) deadLettered[d.reason] = (deadLettered[d.reason] ?? 0) + 1;
    return {
        published: onDestination.size,
        deadLettered,
        offloaded,
        publishedBytes: [...onDestination.values()].reduce(
            (sum, p) =>
                sum +
                Buffer.byteLength(p.body) +
                Object.entries(p.attributes).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0),
            0,
        ),
    };
}
