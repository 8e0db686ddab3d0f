/**
 * A consumer's effect that shows how often and in which order each message was applied: the message's number
 * appended to a list on its row of the consumer table, and the read of that list.
 */
import { GetItemCommand, type DynamoDBClient, type TransactWriteItem } from "@aws-sdk/client-dynamodb";

/** The update that appends `n` to the `applied` list of row `PK = row, SK = sk`. */
export function appendApplied(table: string, row: string, n: number, sk = "APPLIED"): TransactWriteItem {
    return {
        Update: {
            TableName: table,
            Key: { PK: { S: row }, SK: { S: sk } },
            UpdateExpression: "SET applied = list_append(if_not_exists(applied, :empty), :n)",
            ExpressionAttributeValues: { ":empty": { L: [] }, ":n": { L: [{ N: String(n) }] } },
        },
    };
}

/** The `applied` list of row `PK = row, SK = sk`, read consistently (empty when the row is not there). */
export async function appliedList(ddb: DynamoDBClient, table: string, row: string, sk = "APPLIED"): Promise<number[]> {
    const out = await ddb.send(
        new GetItemCommand({ TableName: table, Key: { PK: { S: row }, SK: { S: sk } }, ConsistentRead: true }),
    );
    return (out.Item?.applied?.L ?? []).map((v) => Number(v.N));
}
