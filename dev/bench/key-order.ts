/**
 * The bench's per-key order check: after a keyed drain, the order SNS accepted each key's records in, against the
 * order the store allocated them (`seq`, read back from the table). An inversion is a record accepted after a
 * record of its key that was allocated later. The relay promises 0 at every `parallelizationFactor`.
 *
 * @packageDocumentation
 */
import { paginateQuery, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ATTR, RECORD_SK_PREFIX } from "../../runtime/schema";

/** Each record's key and allocation rank in its partition, read from the table. */
async function allocationOrder(
    client: DynamoDBClient,
    tableName: string,
    partitions: readonly string[],
): Promise<Map<string, { key: string; seq: bigint }>> {
    const order = new Map<string, { key: string; seq: bigint }>();
    for (const partition of partitions) {
        const pages = paginateQuery(
            { client },
            {
                TableName: tableName,
                ConsistentRead: true,
                KeyConditionExpression: "#pk = :pk AND begins_with(#sk, :prefix)",
                ProjectionExpression: "#id, #seq, #key",
                ExpressionAttributeNames: {
                    "#pk": ATTR.pk,
                    "#sk": ATTR.sk,
                    "#id": ATTR.recordId,
                    "#seq": ATTR.seq,
                    "#key": ATTR.orderingKey,
                },
                ExpressionAttributeValues: { ":pk": { S: partition }, ":prefix": { S: RECORD_SK_PREFIX } },
            },
        );
        for await (const page of pages) {
            for (const item of page.Items ?? []) {
                const id = item[ATTR.recordId]?.S;
                const seq = item[ATTR.seq]?.N;
                if (id !== undefined && seq !== undefined)
                    order.set(id, { key: `${partition}\u0000${item[ATTR.orderingKey]?.S ?? ""}`, seq: BigInt(seq) });
            }
        }
    }
    return order;
}

/**
 * Count the records SNS accepted out of their key's order.
 *
 * @param client - A client on the relay's table.
 * @param tableName - The table.
 * @param partitions - The partitions the records were written to.
 * @param accepted - Record ids in the order SNS first accepted them.
 * @returns inversions, and how many accepted ids the table did not know (0 unless the check is broken).
 */
export async function countInversions(
    client: DynamoDBClient,
    tableName: string,
    partitions: readonly string[],
    accepted: Iterable<string>,
): Promise<{ inversions: number; unknown: number }> {
    const order = await allocationOrder(client, tableName, partitions);
    const highest = new Map<string, bigint>();
    let inversions = 0;
    let unknown = 0;
    for (const id of accepted) {
        const record = order.get(id);
        if (record === undefined) {
            unknown += 1;
            continue;
        }
        const before = highest.get(record.key);
        if (before !== undefined && record.seq < before) inversions += 1;
        else highest.set(record.key, record.seq);
    }
    return { inversions, unknown };
}
