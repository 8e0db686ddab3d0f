/**
 * The end-of-scenario invariants, computed from what was written, what the topic and the DLQ received, and what
 * is left in the table. Pure functions, so they are tested on their own (a checker that cannot fail is a defect).
 */
import type { PlannedMessage } from "./workload";

/** A delivery seen on the topic or in the DLQ: the record id, in arrival order. */
export interface Delivery {
    /** The `outbox.id` attribute. */
    readonly id: string;
}

/** A DLQ message: its record id and reason. */
export interface DeadLetter {
    /** The record id. */
    readonly id: string;
    /** `expired`, `publish-rejected`… */
    readonly reason: string;
}

/** What the invariants found. */
export interface InvariantReport {
    /** Messages written. */
    readonly messages: number;
    /** Written messages found neither on the topic nor in the DLQ. */
    readonly lost: number;
    /** Keyed messages that arrived (first occurrence) after a younger message of their key. */
    readonly inversions: number;
    /** Deliveries beyond the first of each id, topic and DLQ together. */
    readonly duplicates: number;
    /** DLQ ids that were not expected there, and expected ids missing from it. */
    readonly dlqUnexpected: readonly string[];
    /** Expected in the DLQ but absent. */
    readonly dlqMissing: readonly string[];
    /** Expired or poison messages that were published to the topic anyway. */
    readonly publishedButDeadLettered: readonly string[];
    /** DLQ entries whose reason does not match (expired vs publish-rejected). */
    readonly wrongReason: readonly string[];
    /** Ids of the lost messages (at most 20). */
    readonly lostIds: readonly string[];
    /**
     * `expiring` messages that were published AND dead-lettered as expired (their completion failed, then they
     * expired): the events a redrive must not apply twice.
     */
    readonly publishedThenExpired: readonly string[];
}

/** Count, per ordering key, the messages whose first arrival comes after a younger message of the same key. */
export function countInversions(planned: readonly PlannedMessage[], topic: readonly Delivery[]): number {
    const byId = new Map(planned.map((p) => [p.message.id, p]));
    const seen = new Set<string>();
    const newestPerKey = new Map<string, number>();
    let inversions = 0;
    for (const d of topic) {
        if (seen.has(d.id)) continue;
        seen.add(d.id);
        const p = byId.get(d.id);
        const key = p?.message.orderingKey;
        if (p === undefined || key === undefined) continue;
        const group = `${p.message.partition}\u0000${key}`;
        const newest = newestPerKey.get(group);
        if (newest !== undefined && newest > p.index) inversions += 1;
        else newestPerKey.set(group, p.index);
    }
    return inversions;
}

/** Check every invariant. */
export function checkInvariants(
    planned: readonly PlannedMessage[],
    topic: readonly Delivery[],
    dlq: readonly DeadLetter[],
): InvariantReport {
    const topicIds = new Set(topic.map((d) => d.id));
    const dlqIds = new Set(dlq.map((d) => d.id));
    const lostIds = planned
        .filter((p) => !topicIds.has(p.message.id) && !dlqIds.has(p.message.id))
        .map((p) => p.message.id);
    const expected = new Map(
        planned
            .filter((p) => p.expired || p.poison)
            .map((p) => [p.message.id, p.expired ? "expired" : "publish-rejected"]),
    );
    // An expiring message may be published, dead-lettered as expired, or both; never anything else.
    const expiring = new Set(planned.filter((p) => p.expiring === true).map((p) => p.message.id));
    return {
        messages: planned.length,
        lost: lostIds.length,
        lostIds: lostIds.slice(0, 20),
        inversions: countInversions(planned, topic),
        duplicates: topic.length - topicIds.size + (dlq.length - dlqIds.size),
        dlqUnexpected: [...dlqIds].filter((id) => !expected.has(id) && !expiring.has(id)),
        dlqMissing: [...expected.keys()].filter((id) => !dlqIds.has(id)),
        publishedButDeadLettered: [...expected.keys()].filter((id) => topicIds.has(id)),
        wrongReason: dlq
            .filter(
                (d) =>
                    (expected.has(d.id) && expected.get(d.id) !== d.reason) ||
                    (expiring.has(d.id) && d.reason !== "expired"),
            )
            .map((d) => `${d.id}: ${d.reason}`),
        publishedThenExpired: [...expiring].filter((id) => topicIds.has(id) && dlqIds.has(id)),
    };
}
