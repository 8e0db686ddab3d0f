/**
 * The messages a fault scenario writes, decided by index alone so every run writes the same set: keyless
 * messages spread over order partitions, keyed messages in account partitions (two ordering keys each), some
 * already expired when written (they must reach the DLQ as `expired`), some poison (SNS refuses them every time:
 * they must reach the DLQ as `publish-rejected`), and, in the `redrive` scenario, some expiring soon after they are
 * written (published, or dead-lettered as expired, or both). Every 7th id and every 5th partition contain `#` and `%`, so
 * the escaping of keys is exercised end to end.
 */
import type { OutboxMessage } from "../../../runtime/writer/writer";

/** One planned message and what the scenario expects of it. */
export interface PlannedMessage {
    /** Write order, 0-based. */
    readonly index: number;
    /** The message as written. */
    readonly message: OutboxMessage & { readonly id: string };
    /** Expired when written: must go to the DLQ with reason `expired`, never to the topic. */
    readonly expired: boolean;
    /** SNS refuses it permanently: must go to the DLQ with reason `publish-rejected`. */
    readonly poison: boolean;
    /**
     * Expires {@link EXPIRING_AFTER_MS} after it is written (the writer sets `expiresAt` then): it may be published,
     * dead-lettered as `expired`, or both (published, its completion failed, then expired). @default false
     */
    readonly expiring?: boolean;
    /**
     * Written straight through the store, as an older or a Go writer would, with U+FFFF in its payload (a
     * character SQS refuses): only expired or poison messages are, so the DLQ must carry it. @default false
     */
    readonly foreign?: boolean;
    /**
     * Who writes it, when not the application's writer (the `skew` scenario): `fast`, a writer whose clock runs
     * hours ahead; `legacy`, a raw PutItem of the record as an older writer leaves it, with `status: ""`.
     * @default undefined
     */
    readonly source?: "fast" | "legacy";
    /**
     * A correct writer's keyed message to a partition whose FENCE a `fast` write set hours ahead: accepted, and
     * stamped with the fence's time, so it sorts after the fast records of its key. @default false
     */
    readonly carried?: boolean;
}

/** Options of {@link planMessages}. */
export interface PlanOptions {
    /**
     * The `poison` scenario's mix: some poison messages are the heads of ordering keys (keyed, with younger
     * records of the same key and other keys in their partition behind them), and some expired or poison
     * messages are foreign rows holding U+FFFF. @default false
     */
    readonly poisonMix?: boolean;
    /**
     * The `skew` scenario's mix: every 10th message (index ≡ 6) goes to a `SKEW#` partition, one ordering key
     * each, written in turn by the correct writer (its first, then every keyed one after the first fast write:
     * accepted, stamped hours ahead with the fence's time), and by the fast writer (keyed and keyless, stamped hours ahead); the correct writer's keyless
     * ones there pass. Every 10th message (index ≡ 8) is a `LEGACY#` row with `status: ""`, keyed or keyless.
     * None of them is expired or poison. @default false
     */
    readonly skewMix?: boolean;
    /** The `redrive` scenario's mix: every 10th message (index ≡ 9) that is neither poison nor expired is `expiring`. @default false */
    readonly expiring?: boolean;
}

/** How long after its write an `expiring` message expires: past the run's retries, before the recovery's first step. */
export const EXPIRING_AFTER_MS = 20_000;

/** `SKEW#` partitions: one per 200 messages, at least one. */
export function skewPartitionCount(count: number): number {
    return Math.max(1, Math.ceil(count / 200));
}

/** `LEGACY#` partitions: one per 200 messages, at least two (one whose stream is lost, one whose is not). */
export function legacyPartitionCount(count: number): number {
    return Math.max(2, Math.ceil(count / 200));
}

/**
 * A message of the `skew` or `legacy` mix at `index`, in the family's partition `<FAMILY>#<p>`: keyed by
 * `<family>-<p>` (a balance change), or keyless (an order update).
 */
function familyMessage(
    tag: string,
    index: number,
    family: "SKEW" | "LEGACY",
    p: number,
    keyed: boolean,
    payload: unknown,
): PlannedMessage["message"] {
    return {
        id: messageId(tag, index),
        partition: `${family}#${p}`,
        type: keyed ? "BalanceChanged" : "OrderUpdated",
        payload,
        headers: { scenario: tag },
        ...(keyed ? { orderingKey: `${family.toLowerCase()}-${p}` } : {}),
    };
}

/** The `skew` mix's message at `index`, or `undefined` when the index is not one of its own. */
function skewMessage(tag: string, index: number, count: number): PlannedMessage | undefined {
    const j = Math.floor(index / 10);
    const base = { index, expired: false, poison: false } as const;
    const payload = { index, note: `${PAYLOAD_MARKER} ${index} é <&>` };
    if (index % 10 === 6) {
        const partitions = skewPartitionCount(count);
        const p = j % partitions;
        // k: this message's turn in its partition. 0: the correct writer, before any fast write (accepted);
        // odd: the fast writer, keyed at k ≡ 1 (mod 4) and keyless at k ≡ 3; even: the correct writer again,
        // keyed at k ≡ 2 (carried: the fence is hours ahead of its clock) and keyless at k ≡ 0 (its own clock).
        const k = Math.floor(j / partitions);
        const fast = k % 2 === 1;
        const keyed = k === 0 || k % 4 === 1 || k % 4 === 2;
        return {
            ...base,
            ...(fast ? { source: "fast" as const } : {}),
            ...(keyed && !fast && k > 0 ? { carried: true } : {}),
            message: familyMessage(tag, index, "SKEW", p, keyed, payload),
        };
    }
    if (index % 10 === 8) {
        const partitions = legacyPartitionCount(count);
        const p = j % partitions;
        const keyed = Math.floor(j / partitions) % 2 === 0;
        return {
            ...base,
            source: "legacy",
            message: familyMessage(tag, index, "LEGACY", p, keyed, payload),
        };
    }
    return undefined;
}

/** A text every payload carries, so a test can prove it never reaches a log line or a metric. */
export const PAYLOAD_MARKER = "payload-marker-7f3a";

/** The id of message `index` of scenario `tag`. */
export function messageId(tag: string, index: number): string {
    return index % 7 === 3 ? `${tag}-${index}#x%23` : `${tag}-${index}`;
}

/**
 * Plan `count` messages. `nowMs` is the write time, used for the expired ones.
 *
 * @param tag - Makes ids unique per scenario.
 * @param count - How many messages.
 * @param nowMs - The writer's clock at write time.
 * @param options - The scenario's mix. @default {}
 */
export function planMessages(tag: string, count: number, nowMs: number, options: PlanOptions = {}): PlannedMessage[] {
    const keylessPartitions = Math.max(4, Math.ceil(count / 20));
    const keyedPartitions = Math.max(2, Math.ceil(count / 50));
    const out: PlannedMessage[] = [];
    for (let index = 0; index < count; index += 1) {
        const own = options.skewMix === true ? skewMessage(tag, index, count) : undefined;
        if (own !== undefined) {
            out.push(own);
            continue;
        }
        const keyed = index % 5 === 1 || index % 5 === 4;
        // 21 is keyed (21 % 5 === 1): a poisoned head, with its key's younger records behind it.
        const poison = index % 50 === 17 || (options.poisonMix === true && index % 50 === 21);
        const expired = !poison && index % 33 === 5;
        const expiring = options.expiring === true && !poison && !expired && index % 10 === 9;
        const foreign = options.poisonMix === true && (poison || expired) && index % 2 === 1;
        const p = keyed ? index % keyedPartitions : index % keylessPartitions;
        const partition = keyed ? `ACCOUNT#${p}` : p % 5 === 2 ? `T%25#ORDER#${p}` : `ORDER#${p}`;
        out.push({
            index,
            expired,
            poison,
            ...(foreign ? { foreign } : {}),
            ...(expiring ? { expiring } : {}),
            message: {
                id: messageId(tag, index),
                partition,
                type: keyed ? "BalanceChanged" : "OrderUpdated",
                payload: { index, note: `${PAYLOAD_MARKER} ${index} é <&>${foreign ? " \uFFFF" : ""}` },
                headers: { scenario: tag },
                ...(keyed ? { orderingKey: `acct-${p}-${index % 2 === 0 ? "a" : "b"}` } : {}),
                ...(expired ? { expiresAt: new Date(nowMs) } : {}),
            },
        });
    }
    return out;
}

/** Split messages into transactions of 1 to 10 messages, deterministically. */
export function transactions(messages: readonly PlannedMessage[], random: () => number): PlannedMessage[][] {
    const out: PlannedMessage[][] = [];
    for (let i = 0; i < messages.length;) {
        const size = 1 + Math.floor(random() * 10);
        out.push(messages.slice(i, i + size));
        i += size;
    }
    return out;
}
