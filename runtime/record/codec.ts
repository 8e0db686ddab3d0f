/**
 * The outbox record codec: an {@link OutboxRecord} to and from a DynamoDB item, attribute for attribute as
 * GoBridge writes it (reference §2.2). Numbers that can exceed 2^53 (`seq`, `claim_version`) are `bigint`.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { MAX_PARTITION_KEY_BYTES, utf8Length } from "./item-size";
import { describeValue } from "./transact-items";
import { ATTR, STATUS, statusOf, type RecordStatus } from "../schema";
import { hasExpiryValue } from "./expiry-shard";
import {
    decodeEnvelope,
    encodeEnvelope,
    envelopeOrderingKey,
    goJsonStringify,
    ORDERING_KEY_HEADER,
    toEnvelope,
    type Envelope,
    type EnvelopeInput,
} from "./envelope";
import { claimSort, parseRecordSortKey, recordSortKey } from "./keys";

/** A DynamoDB item as the AWS SDK v3 reads and writes it. */
export type AttributeMap = Record<string, AttributeValue>;

/**
 * One attribute value of a Lambda DynamoDB stream image (`dynamodb.NewImage`). It has the same JSON shape as
 * the SDK's `AttributeValue`, only typed loosely.
 */
export interface StreamAttributeValue {
    /** A string value. */
    readonly S?: string;
    /** A number value, as its decimal text. */
    readonly N?: string;
    /** Any other member (`BOOL`, `NULL`, `M`, `L`, …); the codec ignores them. */
    readonly [member: string]: unknown;
}

/** A DynamoDB item as a Lambda stream event carries it. */
export type StreamImage = Readonly<Record<string, StreamAttributeValue>>;

/** An outbox record, as stored (reference §2.2). Times are epoch milliseconds. */
export interface OutboxRecord {
    /** The partition key (`PK`), e.g. `ORDER#1001`. */
    readonly partition: string;
    /** The application record id (RecordIDIndex hash key); never empty. */
    readonly recordId: string;
    /** The route id; `""` when unset. */
    readonly routeId: string;
    /** The envelope id: with `bindingId`, the record's identity inside its partition. */
    readonly envelopeId: string;
    /** The binding id, naming the destination. */
    readonly bindingId: string;
    /** The session id; `""` when unset. */
    readonly sessionId: string;
    /** The egress address, e.g. the topic ARN. */
    readonly address: string;
    /** The envelope (stored as GoBridge's `envelope_json`). */
    readonly envelope: Envelope;
    /** Per-message dispatch headers (`headers_json`); `undefined` when none were given. */
    readonly dispatchHeaders?: Readonly<Record<string, string>>;
    /** The record's state. */
    readonly status: RecordStatus;
    /** The fencing version of the last claim; `0n` until claimed. */
    readonly claimVersion: bigint;
    /** How many times the record was claimed. */
    readonly replayCount: number;
    /** Creation time, epoch ms. */
    readonly createdAt: number;
    /** Expiry time, epoch ms; `0` = never expires. */
    readonly expiresAt: number;
    /** Completion time, epoch ms; `0` until completed. */
    readonly completedAt: number;
    /** Per-partition sequence number (monotonic, gaps allowed); `0n` for legacy records. */
    readonly seq: bigint;
    /** The ordering key, when the record has one. */
    readonly orderingKey?: string;
    /** The origin stamp (`origin_region`): the region whose writer wrote the record; `undefined` when unstamped. */
    readonly originRegion?: string;
    /** Time of the first claim, epoch ms; `undefined` until first claimed. */
    readonly firstAttemptedAt?: number;
    /** Owner of the current claim; `undefined` when not claimed. */
    readonly claimedBy?: string;
    /** Time of the current claim, epoch ms; `undefined` when not claimed. */
    readonly claimedAt?: number;
}

/** What a caller gives to persist a record. The store fills the rest (status, seq, counters). */
export interface NewOutboxRecord {
    /** The partition key (`PK`); not empty. Records that must stay in order share a partition. */
    readonly partition: string;
    /** The application record id; not empty and unique across the table. */
    readonly recordId: string;
    /** The route id. @default "" */
    readonly routeId?: string;
    /** The binding id (the destination's name). May be empty. */
    readonly bindingId: string;
    /** The session id. @default "" */
    readonly sessionId?: string;
    /** The egress address, e.g. the topic ARN. */
    readonly address: string;
    /** The envelope; its `id` is the record's envelope id. */
    readonly envelope: EnvelopeInput;
    /** Per-message dispatch headers. @default undefined (no `headers_json`) */
    readonly dispatchHeaders?: Readonly<Record<string, string>>;
    /**
     * Creation time, epoch ms. Given, it is kept as is: the caller chose the record's place in the order.
     * @default the envelope's `createdAt`, or when that is 0 the store clock's now, carried forward to the
     * partition's last `created_at` when the clock is behind it
     */
    readonly createdAt?: number;
    /**
     * The ordering key. When set, the envelope header `x-bridge.ordering-key` is set to it too; when unset, the
     * header (if any) is used. @default the envelope's ordering-key header
     */
    readonly orderingKey?: string;
    /** The origin stamp: the region whose writer wrote the record (`origin_region`). @default undefined (unstamped) */
    readonly originRegion?: string;
}

function invalid(message: string, recordId: string | undefined): OutboxError {
    return new OutboxError("INVALID_PAYLOAD", message, { context: { recordId } });
}

/**
 * Check a {@link NewOutboxRecord} before anything is written.
 *
 * @param input - The record to persist.
 * @throws OutboxError `INVALID_PAYLOAD` naming the field, the bad value and the fix.
 */
export function validateNewRecord(input: NewOutboxRecord): void {
    const id = typeof input.recordId === "string" ? input.recordId : undefined;
    if (typeof input.partition !== "string" || input.partition === "") {
        throw invalid(
            `outbox record ${JSON.stringify(id)}: partition must be a non-empty string, got ${JSON.stringify(input.partition)}; use the aggregate's key, e.g. "ORDER#1001"`,
            id,
        );
    }
    const partitionBytes = utf8Length(input.partition);
    if (partitionBytes > MAX_PARTITION_KEY_BYTES) {
        throw invalid(
            `outbox record ${JSON.stringify(id)}: partition ${describeValue(input.partition)} is ${partitionBytes} bytes (UTF-8); a DynamoDB partition key holds at most ${MAX_PARTITION_KEY_BYTES}; use a shorter key`,
            id,
        );
    }
    if (id === undefined || id === "") {
        throw invalid(
            `outbox record in partition ${describeValue(input.partition)}: recordId must be a non-empty string, got ${JSON.stringify(input.recordId)}`,
            id,
        );
    }
    if (typeof input.bindingId !== "string") {
        throw invalid(`outbox record "${id}": bindingId must be a string, got ${typeof input.bindingId}`, id);
    }
    if (typeof input.address !== "string") {
        throw invalid(`outbox record "${id}": address must be a string, got ${typeof input.address}`, id);
    }
    if (
        input.envelope === null ||
        typeof input.envelope !== "object" ||
        typeof input.envelope.id !== "string" ||
        input.envelope.id === ""
    ) {
        throw invalid(`outbox record "${id}": envelope.id must be a non-empty string; it is the record's identity`, id);
    }
    const headerKey = envelopeOrderingKey(input.envelope.headers ?? {});
    if (input.orderingKey !== undefined) {
        if (typeof input.orderingKey !== "string" || input.orderingKey === "") {
            throw invalid(
                `outbox record "${id}": orderingKey must be a non-empty string when given, got ${JSON.stringify(input.orderingKey)}; omit it for keyless records`,
                id,
            );
        }
        if (headerKey !== undefined && headerKey !== input.orderingKey) {
            throw invalid(
                `outbox record "${id}": orderingKey "${input.orderingKey}" differs from the envelope header ${ORDERING_KEY_HEADER} "${headerKey}"; set one of them, or both to the same value`,
                id,
            );
        }
    }
    for (const [name, ms] of [
        ["createdAt", input.createdAt],
        ["envelope.createdAt", input.envelope.createdAt],
        ["envelope.expiresAt", input.envelope.expiresAt],
    ] as const) {
        if (ms !== undefined && (!Number.isSafeInteger(ms) || ms < 0)) {
            throw invalid(
                `outbox record "${id}": ${name} must be whole non-negative epoch milliseconds, got ${ms}`,
                id,
            );
        }
    }
}

/**
 * Build the pending record Persist writes: status `pending`, counters at zero, `seq` and `createdAt` stamped.
 *
 * @param input - The record to persist (validated with {@link validateNewRecord}).
 * @param seq - The sequence number allocated from the partition's FENCE row.
 * @param nowMs - The creation time used when neither the input nor the envelope has one: the store clock's now,
 *   as the seq allocation carried it forward.
 */
export function pendingRecord(input: NewOutboxRecord, seq: bigint, nowMs: number): OutboxRecord {
    validateNewRecord(input);
    const orderingKey = input.orderingKey ?? envelopeOrderingKey(input.envelope.headers ?? {});
    const headers = { ...(input.envelope.headers ?? {}) };
    if (input.orderingKey !== undefined && envelopeOrderingKey(headers) === undefined)
        headers[ORDERING_KEY_HEADER] = input.orderingKey;
    const envelope = toEnvelope({ ...input.envelope, headers });
    const createdAt = input.createdAt || envelope.createdAt || nowMs;
    return {
        partition: input.partition,
        recordId: input.recordId,
        routeId: input.routeId ?? "",
        envelopeId: envelope.id,
        bindingId: input.bindingId,
        sessionId: input.sessionId ?? "",
        address: input.address,
        envelope,
        ...(input.dispatchHeaders !== undefined ? { dispatchHeaders: input.dispatchHeaders } : {}),
        status: STATUS.pending,
        claimVersion: 0n,
        replayCount: 0,
        createdAt,
        expiresAt: envelope.expiresAt,
        completedAt: 0,
        seq,
        ...(orderingKey !== undefined ? { orderingKey } : {}),
        ...(input.originRegion !== undefined ? { originRegion: input.originRegion } : {}),
    };
}

/** Whether a status is non-terminal (`pending` or `claimed`): such records sit in ClaimIndex (and ExpiryIndex). */
export function isNonTerminal(status: RecordStatus): boolean {
    return status === STATUS.pending || status === STATUS.claimed;
}

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number | bigint): AttributeValue => ({ N: value.toString() });

/**
 * Marshal a record into the item Persist writes (reference §2.2): every attribute, `claim_sort` on
 * non-terminal records, `has_expiry` only with an expiry (`"1"`, or its shard's value when `expiryShards` > 1),
 * `first_attempted_at`, `claimed_by` and `claimed_at` only when set, and never `ttl` (only terminal transitions
 * add it).
 *
 * @param record - The record; normally a fresh one from {@link pendingRecord}.
 * @param expiryShards - The writer's ExpiryIndex shard count (see `runtime/record/expiry-shard.ts`). @default 1
 */
export function marshalRecord(record: OutboxRecord, expiryShards = 1): AttributeMap {
    const item: AttributeMap = {
        [ATTR.pk]: s(record.partition),
        [ATTR.sk]: s(recordSortKey(record.envelopeId, record.bindingId)),
        [ATTR.recordId]: s(record.recordId),
        [ATTR.routeId]: s(record.routeId),
        [ATTR.envelopeId]: s(record.envelopeId),
        [ATTR.bindingId]: s(record.bindingId),
        [ATTR.sessionId]: s(record.sessionId),
        [ATTR.address]: s(record.address),
        [ATTR.envelopeJson]: s(encodeEnvelope(record.envelope)),
        [ATTR.status]: s(record.status),
        [ATTR.claimVersion]: n(record.claimVersion),
        [ATTR.replayCount]: n(record.replayCount),
        [ATTR.createdAt]: n(record.createdAt),
        [ATTR.expiresAt]: n(record.expiresAt),
        [ATTR.completedAt]: n(record.completedAt),
        [ATTR.seq]: n(record.seq),
    };
    if (record.dispatchHeaders !== undefined)
        item[ATTR.headersJson] = s(
            goJsonStringify(record.dispatchHeaders, `outbox record "${record.recordId}" dispatch headers`),
        );
    if (isNonTerminal(record.status)) {
        item[ATTR.claimSort] = s(claimSort(record.createdAt, record.seq));
        if (record.expiresAt !== 0) item[ATTR.hasExpiry] = s(hasExpiryValue(record.recordId, expiryShards));
    }
    if (record.orderingKey) item[ATTR.orderingKey] = s(record.orderingKey);
    if (record.originRegion !== undefined) item[ATTR.originRegion] = s(record.originRegion);
    if (record.firstAttemptedAt) item[ATTR.firstAttemptedAt] = n(record.firstAttemptedAt);
    if (record.claimedBy !== undefined) item[ATTR.claimedBy] = s(record.claimedBy);
    if (record.claimedAt !== undefined) item[ATTR.claimedAt] = n(record.claimedAt);
    return item;
}

/** An SDK item or a stream image. */
export type AnyItem = Readonly<Record<string, AttributeValue | StreamAttributeValue>>;

/** Read a string attribute; `undefined` when absent or not a string. */
export function readString(item: AnyItem, name: string): string | undefined {
    const value = (item[name] as StreamAttributeValue | undefined)?.S;
    return typeof value === "string" ? value : undefined;
}

function readNumberText(item: AnyItem, name: string, recordId: string): string | undefined {
    const value = (item[name] as StreamAttributeValue | undefined)?.N;
    if (value === undefined) return undefined;
    if (typeof value !== "string" || !/^-?\d+$/.test(value)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `outbox item attribute ${name} must be an integer N, got ${JSON.stringify(value)}`,
            { context: { recordId } },
        );
    }
    return value;
}

/**
 * Read a numeric attribute as a JS number; missing → 0. A value beyond 2^53 − 1 is refused rather than rounded:
 * as epoch ms that is past the year 287 000, which no envelope time can carry (Go's RFC 3339 stops at 9999).
 */
export function readNumber(item: AnyItem, name: string, recordId = ""): number {
    const text = readNumberText(item, name, recordId);
    if (text === undefined) return 0;
    const value = Number(text);
    if (!Number.isSafeInteger(value)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `outbox item attribute ${name} is ${text}, beyond ±(2^53 − 1), which this package cannot hold without rounding; a time that large is past year 287000, so the item was written wrong`,
            { context: { recordId } },
        );
    }
    return value;
}

/** Read a numeric attribute as a bigint; missing → 0n. */
export function readBigInt(item: AnyItem, name: string, recordId = ""): bigint {
    const text = readNumberText(item, name, recordId);
    return text === undefined ? 0n : BigInt(text);
}

function readStatus(item: AnyItem, recordId: string): RecordStatus {
    const status = statusOf(readString(item, ATTR.status));
    switch (status) {
        case STATUS.pending:
        case STATUS.claimed:
        case STATUS.completed:
        case STATUS.expired:
            return status;
        default:
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `outbox item has unknown status "${status}"; expected pending, claimed, completed or expired`,
                { context: { recordId } },
            );
    }
}

function readDispatchHeaders(item: AnyItem, recordId: string): Record<string, string> | undefined {
    const json = readString(item, ATTR.headersJson);
    if (json === undefined) return undefined;
    let parsed: unknown;
    try {
        parsed = JSON.parse(json);
    } catch (cause) {
        throw new OutboxError("INVALID_PAYLOAD", "outbox item headers_json is not valid JSON", {
            cause,
            context: { recordId },
        });
    }
    if (parsed === null) return {};
    if (typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new OutboxError("INVALID_PAYLOAD", "outbox item headers_json must be a JSON object", {
            context: { recordId },
        });
    }
    return parsed as Record<string, string>;
}

/**
 * Unmarshal an outbox item (an SDK item or a Lambda stream image) with the §2.2 rules: a missing number is 0,
 * `expires_at` 0 is "no expiry", a missing `first_attempted_at` stays unset, an empty status is `pending`.
 * Identity comes from the `envelope_id`/`binding_id` attributes (so legacy raw-SK rows decode right), falling
 * back to the sort key only when they are absent.
 *
 * @param item - The item's attributes.
 * @throws OutboxError `INVALID_PAYLOAD` when the item is not an outbox record or an attribute is malformed.
 */
export function unmarshalRecord(item: AttributeMap | StreamImage): OutboxRecord {
    const any = item as AnyItem;
    const recordId = readString(any, ATTR.recordId) ?? "";
    const partition = readString(any, ATTR.pk);
    const sk = readString(any, ATTR.sk);
    if (partition === undefined || sk === undefined) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `outbox item lacks its ${ATTR.pk}/${ATTR.sk} keys; it is not an outbox record`,
            { context: { recordId } },
        );
    }
    if (recordId === "") {
        // The id is the outbox.id consumers deduplicate on (and the FIFO deduplication id): a record without one
        // would reach them as a message no one can recognise again.
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `outbox item "${sk}" has no ${ATTR.recordId} (absent, NULL or empty); it is never published without one; repair the item (set ${ATTR.recordId}) or delete it`,
            {
                context: { recordId, partition },
            },
        );
    }
    const envelopeJson = readString(any, ATTR.envelopeJson);
    if (envelopeJson === undefined) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `outbox item "${sk}" has no ${ATTR.envelopeJson}; it is not an outbox record`,
            { context: { recordId, partition } },
        );
    }
    const envelope = decodeEnvelope(envelopeJson);
    const fromKey = parseRecordSortKey(sk);
    const firstAttemptedAt = readNumber(any, ATTR.firstAttemptedAt, recordId);
    const claimedAt = any[ATTR.claimedAt] === undefined ? undefined : readNumber(any, ATTR.claimedAt, recordId);
    const claimedBy = readString(any, ATTR.claimedBy);
    const orderingKey = readString(any, ATTR.orderingKey);
    const originRegion = readString(any, ATTR.originRegion);
    const record: OutboxRecord = {
        partition,
        recordId,
        routeId: readString(any, ATTR.routeId) ?? "",
        envelopeId: readString(any, ATTR.envelopeId) ?? fromKey?.envelopeId ?? envelope.id,
        bindingId: readString(any, ATTR.bindingId) ?? fromKey?.bindingId ?? "",
        sessionId: readString(any, ATTR.sessionId) ?? "",
        address: readString(any, ATTR.address) ?? "",
        envelope,
        status: readStatus(any, recordId),
        claimVersion: readBigInt(any, ATTR.claimVersion, recordId),
        replayCount: readNumber(any, ATTR.replayCount, recordId),
        createdAt: readNumber(any, ATTR.createdAt, recordId),
        expiresAt: readNumber(any, ATTR.expiresAt, recordId),
        completedAt: readNumber(any, ATTR.completedAt, recordId),
        seq: readBigInt(any, ATTR.seq, recordId),
    };
    const dispatchHeaders = readDispatchHeaders(any, recordId);
    return {
        ...record,
        ...(dispatchHeaders !== undefined ? { dispatchHeaders } : {}),
        ...(orderingKey ? { orderingKey } : {}),
        ...(originRegion !== undefined ? { originRegion } : {}),
        ...(firstAttemptedAt !== 0 ? { firstAttemptedAt } : {}),
        ...(claimedBy !== undefined ? { claimedBy } : {}),
        ...(claimedAt !== undefined ? { claimedAt } : {}),
    };
}

/**
 * The record's primary key.
 *
 * @param partition - The partition key.
 * @param envelopeId - The envelope id.
 * @param bindingId - The binding id.
 */
export function recordKey(partition: string, envelopeId: string, bindingId: string): AttributeMap {
    return { [ATTR.pk]: s(partition), [ATTR.sk]: s(recordSortKey(envelopeId, bindingId)) };
}

/**
 * A DynamoDB TTL value (epoch seconds): `fromMs` plus `graceSeconds`, rounded down like Go's `Time.Unix()`.
 *
 * @param fromMs - The base time, epoch ms (now for completion, the sweep cutoff for expiry).
 * @param graceSeconds - The compaction grace.
 */
export function ttlSeconds(fromMs: number, graceSeconds: number): number {
    return Math.floor(fromMs / 1000) + Math.floor(graceSeconds);
}
