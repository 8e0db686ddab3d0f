/**
 * The record key space: sort-key escaping, the record sort key and the ClaimIndex sort value.
 *
 * These strings are part of the on-disk format shared with GoBridge: a key written here must be
 * byte-identical to the one a Go writer produces for the same ids, or idempotency across implementations breaks.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import { FENCE_SK, RECORD_SK_PREFIX } from "../schema";

/** The separator between the escaped envelope id and the escaped binding id inside a record sort key. */
const SK_SEPARATOR = "#";

/** Width of the zero-padded `created_at` part of `claim_sort`: any non-negative int64 fits. */
const CLAIM_SORT_TIME_WIDTH = 19;

/** Width of the zero-padded `seq` part of `claim_sort`: any uint64 fits. */
const CLAIM_SORT_SEQ_WIDTH = 20;

/** The largest value the 20-digit `seq` part can hold (uint64 max). */
const MAX_SEQ = 18446744073709551615n;

/**
 * Escape one sort-key component so that `#` can only ever be the separator.
 *
 * A component containing neither `%` nor `#` is returned unchanged (keys stay byte-identical to the historical
 * raw format). Otherwise `%` becomes `%25` first, then `#` becomes `%23`; the order makes the mapping injective.
 *
 * @param s - An envelope id or a binding id.
 */
export function escapeKeyPart(s: string): string {
    if (!s.includes("%") && !s.includes("#")) return s;
    return s.replace(/%/g, "%25").replace(/#/g, "%23");
}

/**
 * Reverse {@link escapeKeyPart} in a single left-to-right pass: `%23` → `#`, `%25` → `%`, anything else literal.
 * So `%2523` decodes to `%23`.
 *
 * @param s - An escaped sort-key component.
 */
export function unescapeKeyPart(s: string): string {
    if (!s.includes("%")) return s;
    let out = "";
    for (let i = 0; i < s.length; i++) {
        const three = s.slice(i, i + 3);
        if (three === "%23") {
            out += "#";
            i += 2;
        } else if (three === "%25") {
            out += "%";
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/**
 * The sort key of an outbox record: `OUTBOX#<esc(envelopeId)>#<esc(bindingId)>`.
 *
 * @param envelopeId - The envelope id (authoritative identity, stored as `envelope_id` too).
 * @param bindingId - The binding id (authoritative identity, stored as `binding_id` too).
 */
export function recordSortKey(envelopeId: string, bindingId: string): string {
    return `${RECORD_SK_PREFIX}${escapeKeyPart(envelopeId)}${SK_SEPARATOR}${escapeKeyPart(bindingId)}`;
}

/** The two identity parts a record sort key encodes. */
export interface RecordSortKeyParts {
    /** The unescaped envelope id. */
    readonly envelopeId: string;
    /** The unescaped binding id. */
    readonly bindingId: string;
}

/**
 * Parse a record sort key back into its ids. Returns `undefined` for anything that is not a record key,
 * including the partition's `FENCE` row.
 *
 * The first raw `#` after the prefix is always the separator, because escaped components cannot contain one.
 *
 * @param sk - A sort key read from the table.
 */
export function parseRecordSortKey(sk: string): RecordSortKeyParts | undefined {
    if (sk === FENCE_SK || !sk.startsWith(RECORD_SK_PREFIX)) return undefined;
    const rest = sk.slice(RECORD_SK_PREFIX.length);
    const separator = rest.indexOf(SK_SEPARATOR);
    if (separator < 0) return undefined;
    return {
        envelopeId: unescapeKeyPart(rest.slice(0, separator)),
        bindingId: unescapeKeyPart(rest.slice(separator + 1)),
    };
}

/**
 * The ClaimIndex sort value: `created_at` ms zero-padded to 19 digits, `#`, `seq` zero-padded to 20 digits.
 * Lexicographic order equals (created_at, seq) order. A negative `created_at` is clamped to 0.
 *
 * @param createdAtMs - The record's creation time, epoch milliseconds (an integer).
 * @param seq - The record's per-partition sequence number (0 ≤ seq ≤ 2^64 − 1).
 * @throws OutboxError `INVALID_PAYLOAD` when either value is out of range.
 */
export function claimSort(createdAtMs: number, seq: bigint): string {
    if (!Number.isSafeInteger(createdAtMs)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `claim_sort: createdAt must be a whole number of epoch milliseconds, got ${createdAtMs}; pass Math.trunc(ms)`,
            { context: { createdAt: createdAtMs } },
        );
    }
    if (seq < 0n || seq > MAX_SEQ) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `claim_sort: seq must be between 0 and 2^64-1, got ${seq}; seq comes from the partition's FENCE seq_counter`,
            { context: { seq: seq.toString() } },
        );
    }
    const time = String(Math.max(0, createdAtMs)).padStart(CLAIM_SORT_TIME_WIDTH, "0");
    return `${time}#${seq.toString().padStart(CLAIM_SORT_SEQ_WIDTH, "0")}`;
}
