/**
 * Shared helpers for the store tests: a fake clock (no sleeps, ever), a recording logger and metrics sink,
 * record builders, and a store on its own DynamoDB Local table.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { isOutboxError, type OutboxErrorCode } from "../../../runtime/errors";
import type { Clock, LogAttributes, Logger, MetricsSink } from "../../../runtime/ports";
import { claimSort } from "../../../runtime/record/keys";
import { marshalRecord, pendingRecord, type NewOutboxRecord, type OutboxRecord } from "../../../runtime/record/codec";
import { OutboxStore, type OutboxStoreOptions } from "../../../runtime/store";
import { dynamoClient, uniqueTableName } from "../dynamodb";

/** A clock that only moves when told to; `sleep` advances it at once and records the pause. */
export class FakeClock implements Clock {
    current: number;
    readonly sleeps: number[] = [];
    constructor(start = Date.UTC(2026, 0, 1)) {
        this.current = start;
    }
    now(): number {
        return this.current;
    }
    async sleep(ms: number): Promise<void> {
        this.sleeps.push(ms);
        this.current += ms;
    }
    advance(ms: number): void {
        this.current += ms;
    }
}

/** A logger that keeps every line. */
export class RecordingLogger implements Logger {
    readonly lines: { level: string; message: string; attributes?: LogAttributes }[] = [];
    debug(message: string, attributes?: LogAttributes): void {
        this.lines.push({ level: "debug", message, attributes });
    }
    info(message: string, attributes?: LogAttributes): void {
        this.lines.push({ level: "info", message, attributes });
    }
    warn(message: string, attributes?: LogAttributes): void {
        this.lines.push({ level: "warn", message, attributes });
    }
    error(message: string, attributes?: LogAttributes): void {
        this.lines.push({ level: "error", message, attributes });
    }
    warnings(prefix = ""): { message: string; attributes?: LogAttributes }[] {
        return this.lines.filter((l) => l.level === "warn" && l.message.startsWith(prefix));
    }
}

/** A metrics sink that keeps every count. */
export class RecordingMetrics implements MetricsSink {
    readonly counts: { name: string; value: number; tags?: Readonly<Record<string, string>> }[] = [];
    count(name: string, value: number, tags?: Readonly<Record<string, string>>): void {
        this.counts.push({ name, value, tags });
    }
    named(name: string): { value: number; tags?: Readonly<Record<string, string>> }[] {
        return this.counts.filter((c) => c.name === name);
    }
}

/** A token. */
export function tok(version: number | bigint, owner = "owner-a"): { owner: string; version: bigint } {
    return { owner, version: BigInt(version) };
}

/** A new record for `partition`; ids derive from `n`. */
export function rec(
    partition: string,
    n: number | string,
    overrides: Partial<NewOutboxRecord> = {},
    envelope: Partial<NewOutboxRecord["envelope"]> = {},
): NewOutboxRecord {
    return {
        partition,
        recordId: `${partition}/rec-${n}`,
        bindingId: "topic",
        address: "arn:aws:sns:us-east-1:000000000000:t",
        ...overrides,
        envelope: { id: `env-${n}`, subject: "Test", payload: JSON.stringify({ n }), ...envelope },
    };
}

/** The stored item of a pending record (for fakes). */
export function pendingItem(input: NewOutboxRecord, seq: number, createdAt: number): Record<string, AttributeValue> {
    return marshalRecord(pendingRecord({ ...input, createdAt }, BigInt(seq), createdAt));
}

/** The stored item of a record in another state (for fakes). */
export function itemOf(record: OutboxRecord): Record<string, AttributeValue> {
    return marshalRecord(record);
}

/** A store on a fresh DynamoDB Local table, with a fake clock and recording seams. */
export async function localStore(options: Partial<OutboxStoreOptions> = {}): Promise<{
    store: OutboxStore;
    clock: FakeClock;
    logger: RecordingLogger;
    metrics: RecordingMetrics;
    tableName: string;
}> {
    const clock = (options.clock as FakeClock | undefined) ?? new FakeClock();
    const logger = new RecordingLogger();
    const metrics = new RecordingMetrics();
    const tableName = options.tableName ?? uniqueTableName("store");
    const client = options.client ?? (await dynamoClient());
    const store = new OutboxStore({ client, tableName, clock, logger, metrics, staleClaimMs: 0, ...options });
    await store.createTable({ stream: false });
    return { store, clock, logger, metrics, tableName };
}

/** Assert that `promise` rejects with an OutboxError of `code` (and message matching `pattern`, when given). */
export async function rejectsWith(promise: Promise<unknown>, code: OutboxErrorCode, pattern?: RegExp): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
        assert.ok(isOutboxError(err, code), `expected OutboxError ${code}, got ${String(err)}`);
        if (pattern) assert.match((err as Error).message, pattern);
        return true;
    });
}

/** The ids of records, in order. */
export function ids(records: readonly OutboxRecord[]): string[] {
    return records.map((r) => r.envelopeId);
}

/** A pending OUTBOX# row created at `createdAt` whose envelope is not JSON (its text holds `secret-payload`), as a foreign writer or a hand edit leaves it. */
export function brokenRow(
    partition: string,
    createdAt: number,
    extra: Record<string, AttributeValue> = {},
): Record<string, AttributeValue> {
    return {
        PK: { S: partition },
        SK: { S: "OUTBOX#broken#topic" },
        record_id: { S: `${partition}/broken` },
        envelope_json: { S: "{not json: secret-payload" },
        status: { S: "pending" },
        created_at: { N: String(createdAt) },
        seq: { N: "1" },
        claim_sort: { S: claimSort(createdAt, 1n) },
        ...extra,
    };
}
