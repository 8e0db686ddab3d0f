/**
 * Depth and preview (reference §4.9, §4.10): QueryPending reads the base table consistently; CountPending and
 * CountClaimed count the sparse ClaimIndex, so terminal rows awaiting TTL cost nothing.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { unmarshalRecord, type OutboxRecord } from "../record/codec";
import { CLAIM_INDEX, STATUS, type RecordStatus } from "../schema";
import { agePosition, compareAge } from "./claim-scan";
import { requirePartition } from "./claim";
import { and, isPending, partitionIs, partitionRecordsQuery, placeholders, statusIs } from "./expressions";
import type { StoreContext } from "./options";
import { queryPages } from "./send";

/** Options of a depth call. */
export interface DepthCallOptions {
    /** Stops paging; the abort reason is thrown. @default undefined */
    readonly signal?: AbortSignal;
}

/**
 * Up to `limit` pending records of the partition, sorted oldest first. The selection is SK order, not oldest-N:
 * this is a preview for depth checks, never a way to pick work (that is `claim`).
 */
export async function queryPending(ctx: StoreContext, partition: string, limit: number): Promise<OutboxRecord[]> {
    requirePartition("queryPending", partition);
    ctx.logger.debug("dynamodboutbox: query_pending", { partition_key: partition, limit });
    if (!(limit > 0)) return [];
    const items: Record<string, AttributeValue>[] = [];
    await queryPages(
        ctx,
        "query-pending.query",
        partitionRecordsQuery(ctx.tableName, partition, isPending()),
        { message: "outbox query pending failed", context: { partition } },
        (page) => {
            items.push(...(page.Items ?? []));
            return items.length < limit;
        },
    );
    return items
        .sort((a, b) => compareAge(agePosition(a), agePosition(b)))
        .slice(0, limit)
        .map((item) => unmarshalRecord(item));
}

/** The error for a depth question with no partition: there is no bounded fleet-wide path. Benign. */
export function depthUnsupported(): OutboxError {
    return new OutboxError(
        "DEPTH_UNSUPPORTED",
        "cannot report depth: a partition is required (there is no bounded table-wide count)",
    );
}

/** Count the partition's records in `status` through ClaimIndex. */
export async function countByStatus(
    ctx: StoreContext,
    partition: string,
    status: RecordStatus,
    options: DepthCallOptions = {},
): Promise<number> {
    if (partition === "") throw depthUnsupported();
    requirePartition(`count ${status}`, partition);
    ctx.logger.debug(`dynamodboutbox: count_${status}`, { partition_key: partition });
    const key = partitionIs(partition);
    const filter = status === STATUS.pending ? isPending() : statusIs(status);
    let count = 0;
    await queryPages(
        ctx,
        `count-${status}.index-query`,
        {
            TableName: ctx.tableName,
            IndexName: CLAIM_INDEX.indexName,
            KeyConditionExpression: key.text,
            FilterExpression: filter.text,
            Select: "COUNT",
            ...placeholders(and(key, filter)),
        },
        { message: "outbox count by status query failed", context: { partition, status } },
        (page) => {
            count += page.Count ?? 0;
        },
        options.signal,
    );
    return count;
}
