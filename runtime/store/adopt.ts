/**
 * Takeover after an evacuation, on a global table: another region adopts what a gone region left undelivered
 * (`adopt --from <region>`). Each of that region's non-terminal records (ClaimIndex holds exactly those) is re-stamped
 * with the adopting region and put back to pending, one conditional update each: the condition (still stamped with
 * the gone region, still non-terminal) is the fence. Once adopted, a record is no longer the gone region's: when that
 * region's relay comes back, its filter, claims and completions pass over it (`originTaken` in schema.ts).
 *
 * Order: a partition's records are adopted oldest first (ClaimIndex order), and a partition stops at its first
 * failure, so what was adopted of a key is always its oldest records.
 *
 * What can still be duplicated: records in flight at the moment of evacuation, published by the gone region and not
 * yet completed there (or completed there and not yet replicated). The adopted records are delivered by the adopting
 * region's sweeper (they are older than `sweepAfter`), not by its stream: an adoption is a MODIFY, which the mapping
 * filter passes over.
 *
 * @packageDocumentation
 */
import { ScanCommand, UpdateItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { checkRegionName } from "../record/origin";
import { ATTR, CLAIM_INDEX, STATUS } from "../schema";
import { isConditionalCheckFailed, wrapAwsError } from "./aws-errors";
import { and, nameRef, nonTerminal, placeholders, updateExpression, type Expression } from "./expressions";
import type { DynamoDbClientLike } from "./options";

/** Options of {@link adoptRegion}. */
export interface AdoptRegionOptions {
    /** A DynamoDB client of the adopting region's replica. */
    readonly client: DynamoDbClientLike;
    /** The outbox table. */
    readonly tableName: string;
    /** The gone region, whose records are adopted. */
    readonly from: string;
    /** The adopting region: the records are stamped with it. */
    readonly to: string;
}

/** What {@link adoptRegion} did. */
export interface AdoptRegionResult {
    /** Records re-stamped with the adopting region, pending. */
    readonly adopted: number;
    /** Of those, records the gone region held claimed: in flight at the evacuation, so possibly published twice. */
    readonly inFlight: number;
    /** Records that had moved (completed, or adopted) before their update: left alone. */
    readonly moved: number;
    /** Partitions whose adoption stopped at a failure (then {@link adoptRegion} throws, with these counts). */
    readonly failedPartitions: number;
}

function stampedWith(region: string): Expression {
    return {
        text: `${nameRef(ATTR.originRegion)} = :adopt_from`,
        names: { [nameRef(ATTR.originRegion)]: ATTR.originRegion },
        values: { ":adopt_from": { S: region } },
    };
}

/** Every non-terminal record stamped with `from`, by partition, oldest first (ClaimIndex order). */
async function recordsOf(options: AdoptRegionOptions): Promise<Map<string, Record<string, AttributeValue>[]>> {
    const filter = stampedWith(options.from);
    const byPartition = new Map<string, Record<string, AttributeValue>[]>();
    let start: Record<string, AttributeValue> | undefined;
    do {
        let page: { Items?: Record<string, AttributeValue>[]; LastEvaluatedKey?: Record<string, AttributeValue> };
        try {
            page = (await options.client.send(
                new ScanCommand({
                    TableName: options.tableName,
                    IndexName: CLAIM_INDEX.indexName,
                    FilterExpression: filter.text,
                    ...(start ? { ExclusiveStartKey: start } : {}),
                    ...placeholders(filter),
                }),
            )) as typeof page;
        } catch (err) {
            throw wrapAwsError(err, "adopt: scanning ClaimIndex failed", { table: options.tableName });
        }
        for (const item of page.Items ?? []) {
            const partition = item[ATTR.pk]?.S ?? "";
            byPartition.set(partition, [...(byPartition.get(partition) ?? []), item]);
        }
        start = page.LastEvaluatedKey;
    } while (start !== undefined);
    const bySort = (a: Record<string, AttributeValue>, b: Record<string, AttributeValue>): number =>
        (a[ATTR.claimSort]?.S ?? "") < (b[ATTR.claimSort]?.S ?? "") ? -1 : 1;
    for (const items of byPartition.values()) items.sort(bySort);
    return byPartition;
}

/**
 * Adopt the non-terminal records the region `from` wrote, as the region `to`'s, pending. Run it in `to` once `from`
 * is evacuated (its relay stopped or unreachable); it is safe to run again.
 *
 * @param options - The client of `to`'s replica, the table and the two regions.
 * @throws OutboxError `INVALID_CONFIG` for a malformed region or `from` equal to `to` (no I/O); a classified error when
 *   ClaimIndex cannot be read, or (after every other partition was tried, with the counts in its `context`) when a
 *   partition stopped at a failure.
 */
export async function adoptRegion(options: AdoptRegionOptions): Promise<AdoptRegionResult> {
    const from = checkRegionName("adopt", "from", options.from);
    const to = checkRegionName("adopt", "to", options.to);
    if (from === to)
        throw new OutboxError(
            "INVALID_CONFIG",
            `adopt: from and to are both ${from}; adopt takes another region's records: run it in the region that takes over, with --from the evacuated one`,
        );
    const change = updateExpression({
        set: [
            { attribute: ATTR.originRegion, value: ":adopt_to" },
            { attribute: ATTR.status, value: ":adopt_pending" },
        ],
        remove: [ATTR.claimedBy, ATTR.claimedAt],
        values: { ":adopt_to": { S: to }, ":adopt_pending": { S: STATUS.pending } },
    });
    const condition = and(stampedWith(from), nonTerminal());
    let adopted = 0;
    let inFlight = 0;
    let moved = 0;
    let failedPartitions = 0;
    let firstError: unknown;
    for (const [partition, items] of await recordsOf(options)) {
        for (const item of items) {
            try {
                await options.client.send(
                    new UpdateItemCommand({
                        TableName: options.tableName,
                        Key: { [ATTR.pk]: item[ATTR.pk]!, [ATTR.sk]: item[ATTR.sk]! },
                        UpdateExpression: change.text,
                        ConditionExpression: condition.text,
                        ...placeholders(change, condition),
                    }),
                );
                adopted += 1;
                if (item[ATTR.status]?.S === STATUS.claimed) inFlight += 1;
            } catch (err) {
                if (isConditionalCheckFailed(err)) {
                    moved += 1;
                    continue;
                }
                // The rest of this partition waits: what is adopted of a key stays its oldest records.
                firstError ??= wrapAwsError(err, "adopt: re-stamping a record failed", { partition });
                failedPartitions += 1;
                break;
            }
        }
    }
    const result = { adopted, inFlight, moved, failedPartitions };
    if (failedPartitions > 0) {
        const cause = firstError as Error;
        throw new OutboxError(
            firstError instanceof OutboxError ? firstError.code : "UNAVAILABLE",
            `adopt: ${failedPartitions} partition(s) stopped at a failure after ${adopted} record(s) were adopted (${cause.message}); run adopt again: it takes up what is left`,
            { cause, context: { ...result } },
        );
    }
    return result;
}
