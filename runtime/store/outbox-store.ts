/**
 * The `OutboxStore` class: GoBridge's DynamoDB outbox store contract, one method per operation. Each method
 * delegates to the file that holds its operation; the class holds only the resolved options and per-instance state.
 *
 * @packageDocumentation
 */
import type { NewOutboxRecord, OutboxRecord } from "../record/codec";
import { STATUS } from "../schema";
import { claim } from "./claim";
import type { ClaimCallOptions } from "./claim-batch";
import { complete, release } from "./complete-release";
import { createTable, type CreateTableOptions } from "./create-table";
import { countByStatus, queryPending, type DepthCallOptions } from "./depth";
import { expire, type ExpireCallOptions } from "./expire";
import { resolveStoreContext, type OutboxStoreOptions, type StoreContext } from "./options";
import { persist, type PersistResult } from "./persist";
import { preflight, type PreflightOutcome } from "./preflight";
import type { FencingToken } from "./transitions";

/**
 * The transactional outbox store on DynamoDB, byte-compatible with GoBridge's `dynamodboutbox` (a GoBridge
 * process can drain what this writes, and the reverse).
 *
 * @example
 * ```ts
 * const store = new OutboxStore({ client: new DynamoDBClient({}), tableName: "orders-outbox" });
 * await store.preflight();
 * const token = { owner: "relay-1", version: 7n };
 * const records = await store.claim("ORDER#1001", token, 25);
 * // publish them, then:
 * await store.complete(records.map((r) => r.recordId), token);
 * ```
 */
export class OutboxStore {
    private readonly ctx: StoreContext;

    /**
     * @param options - The client, the table name and the optional seams and tunables.
     * @throws OutboxError `INVALID_CONFIG` when an option is invalid.
     */
    constructor(options: OutboxStoreOptions) {
        this.ctx = resolveStoreContext(options);
    }

    /** The table this store reads and writes. */
    get tableName(): string {
        return this.ctx.tableName;
    }

    /**
     * Create the outbox table from `runtime/schema.ts` (on-demand, the three GSIs, a NEW_IMAGE stream by default),
     * wait until it is ACTIVE and enable TTL on `ttl`. An existing table is success.
     *
     * @param options - Stream and wait settings.
     */
    createTable(options?: CreateTableOptions): Promise<void> {
        return createTable(this.ctx, options);
    }

    /**
     * Refuse a misprovisioned table: wrong primary key, a missing or mis-keyed GSI, ClaimIndex not projected ALL;
     * then a table or index that is not ready, and a stream without the new image (or none, under
     * `requireStream`), and a global table with multi-Region strong consistency (MRSC: no transactions, no TTL).
     * With `expiryShards` > 1, also a malformed expiry shards mark. TTL is not checked here: `dynamodb-outbox verify`
     * checks it.
     *
     * @returns `verified`, `table-missing` (not created yet), or `unverified` (DescribeTable failed under
     * `schemaPreflightAdvisory`).
     * @throws OutboxError `INVALID_CONFIG` with the exact GoBridge message on a schema mismatch, or on an unusable
     * status or stream, or an MRSC table; `UNAVAILABLE` (transient) while the table or an index is being created or backfilled; or
     * the classified DescribeTable error.
     */
    preflight(): Promise<PreflightOutcome> {
        return preflight(this.ctx);
    }

    /**
     * Persist records, idempotently per (partition, envelope id, binding id).
     *
     * Record ids must be unique across the table (RecordIDIndex resolves an id to one record, and the id is the
     * SNS FIFO deduplication id and the `outbox.id` consumers deduplicate on). As in GoBridge, persist writes no
     * id guard and cannot tell an id reused in another partition; `OutboxWriter` guards the ids it did not
     * generate.
     *
     * @param records - The records to write; each `recordId` unique across the table.
     * @throws OutboxError `INVALID_PAYLOAD` (nothing written) for a record that breaks a rule of
     * `validateNewRecord` or is over `MAX_RECORD_BYTES` as an item (409,269 bytes: DynamoDB's 400 KB less what a
     * claim, a count and a completion add to it); `DUPLICATE_RECORD` when every record already existed;
     * `UNAVAILABLE` (transient) when a different record holds the sort key.
     */
    persist(records: readonly NewOutboxRecord[]): Promise<PersistResult> {
        return persist(this.ctx, records);
    }

    /**
     * Claim up to `limit` of the partition's oldest claimable records. `limit <= 0` only advances the fence.
     *
     * @param partition - The partition key.
     * @param token - The caller's lease token; its owner at most `MAX_CLAIM_OWNER_BYTES` (128) bytes.
     * @param limit - The most records to claim.
     * @param options - An optional AbortSignal, and what to call for a claim cut short (`onTruncated`) or a record no
     *   claim can take (`onUnclaimable`).
     * @throws OutboxError `STALE_FENCING_TOKEN` when the token is invalid, below the fence, or loses the fence
     * mid-batch; `INVALID_PAYLOAD` for an owner over 128 bytes, or (without `onUnclaimable`) a record the claim
     * would take over DynamoDB's item limit.
     */
    claim(partition: string, token: FencingToken, limit: number, options?: ClaimCallOptions): Promise<OutboxRecord[]> {
        return claim(this.ctx, partition, token, limit, options);
    }

    /**
     * Complete records claimed by `token`, in order, stopping at the first failure.
     *
     * @param recordIds - The records' ids.
     * @param token - The token that claimed them.
     * @throws OutboxError `STALE_FENCING_TOKEN` when the claim is not held by the token; `TIMEOUT` (transient) on index lag.
     */
    complete(recordIds: readonly string[], token: FencingToken): Promise<void> {
        return complete(this.ctx, recordIds, token);
    }

    /**
     * Release records claimed by `token` back to pending, in order, stopping at the first failure.
     *
     * @param recordIds - The records' ids.
     * @param token - The token that claimed them.
     * @throws OutboxError `STALE_FENCING_TOKEN` when the claim is not held by the token; `TIMEOUT` (transient) on index lag.
     */
    release(recordIds: readonly string[], token: FencingToken): Promise<void> {
        return release(this.ctx, recordIds, token);
    }

    /**
     * Expire the partition's pending records whose expiry is before `beforeMs`. Queries ExpiryIndex for `"1"` and
     * for each shard value below the larger of `expiryShards` and the table's expiry shards mark, each value from
     * its own resume cursor.
     *
     * @param beforeMs - The cutoff, epoch ms (`ttl` of expired records = cutoff + compaction grace).
     * @param partition - The partition key (required).
     * @param token - The caller's lease token.
     * @param options - An optional AbortSignal.
     * @returns how many records were expired.
     * @throws OutboxError with `context.expired` = records expired before the failure (see `expiredCountOf`).
     */
    expire(beforeMs: number, partition: string, token: FencingToken, options?: ExpireCallOptions): Promise<number> {
        return expire(this.ctx, beforeMs, partition, token, options);
    }

    /**
     * Up to `limit` pending records of the partition (a preview for depth checks, selected in SK order).
     *
     * @param partition - The partition key.
     * @param limit - The most records returned; `<= 0` returns none.
     */
    queryPending(partition: string, limit: number): Promise<OutboxRecord[]> {
        return queryPending(this.ctx, partition, limit);
    }

    /**
     * How many records of the partition are pending.
     *
     * @param partition - The partition key; `""` throws `DEPTH_UNSUPPORTED` with no I/O.
     * @param options - An optional AbortSignal.
     */
    countPending(partition: string, options?: DepthCallOptions): Promise<number> {
        return countByStatus(this.ctx, partition, STATUS.pending, options);
    }

    /**
     * How many records of the partition are claimed.
     *
     * @param partition - The partition key; `""` throws `DEPTH_UNSUPPORTED` with no I/O.
     * @param options - An optional AbortSignal.
     */
    countClaimed(partition: string, options?: DepthCallOptions): Promise<number> {
        return countByStatus(this.ctx, partition, STATUS.claimed, options);
    }
}
