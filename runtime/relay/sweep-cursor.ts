/**
 * The sweep cursor row: where in ClaimIndex's scan order the sweeper's next run starts. A run drains at most
 * `maxPartitionsPerRun` partitions, in scan order from the cursor, and moves the cursor past the last one it
 * drained, so partitions that never drain (an undecodable item, a row no claim can take, a key tail behind a held
 * head) cannot keep the partitions after them from being reached. The row is in the table, so the cursor survives
 * cold starts and is shared by every sweeper of the table; the last run to write it wins, which costs at most a
 * partition drained twice or reached one run later.
 *
 * One GetItem per run (eventually consistent, 0.5 RCU) and one UpdateItem when the cursor moves (1 WCU); a run
 * whose scan covered the whole index with time to spare writes nothing.
 *
 * @packageDocumentation
 */
import {
    GetItemCommand,
    UpdateItemCommand,
    type AttributeValue,
    type GetItemCommandOutput,
} from "@aws-sdk/client-dynamodb";
import type { ClientLike } from "./delivery";
import { ATTR, SWEEP_CURSOR_PK, SWEEP_CURSOR_SK } from "../schema";
import { captureServerDate, type ServerDate } from "./server-clock";
import { wrapAwsError } from "../store/aws-errors";

/** A ClaimIndex key (`PK`, `SK`, `claim_sort`): a Scan's `ExclusiveStartKey`. */
export type ClaimIndexKey = Record<string, AttributeValue>;

/** The key of the sweep cursor row. */
export function sweepCursorRowKey(): Record<string, AttributeValue> {
    return { [ATTR.pk]: { S: SWEEP_CURSOR_PK }, [ATTR.sk]: { S: SWEEP_CURSOR_SK } };
}

/** The ClaimIndex key in `value`, or `undefined` when it is not one (absent, or written by something else). */
function indexKeyOf(value: AttributeValue | undefined): ClaimIndexKey | undefined {
    const map = value?.M;
    if (map === undefined) return undefined;
    const key: ClaimIndexKey = {};
    for (const name of [ATTR.pk, ATTR.sk, ATTR.claimSort]) {
        const text = map[name]?.S;
        if (typeof text !== "string" || text === "") return undefined;
        key[name] = { S: text };
    }
    return key;
}

/**
 * Read the cursor: the ClaimIndex key the next scan starts after, or `undefined` to start at the beginning (no
 * row yet, or a row that does not hold a ClaimIndex key).
 *
 * @param ctx - The DynamoDB client and table.
 * @param serverDate - Where the answer's `Date` header goes (DynamoDB's clock, for the sweep's cutoff). @default not kept
 * @throws the classified SDK error when the row cannot be read.
 */
export async function readSweepCursor(
    ctx: { readonly dynamodb: ClientLike; readonly tableName: string },
    serverDate: ServerDate = { dateMs: undefined },
): Promise<ClaimIndexKey | undefined> {
    let out: GetItemCommandOutput;
    try {
        out = (await ctx.dynamodb.send(
            captureServerDate(
                new GetItemCommand({
                    TableName: ctx.tableName,
                    Key: sweepCursorRowKey(),
                    ProjectionExpression: "#cursor",
                    ExpressionAttributeNames: { "#cursor": ATTR.sweepCursor },
                }),
                serverDate,
            ),
        )) as GetItemCommandOutput;
    } catch (err) {
        throw wrapAwsError(err, "sweeper: reading the sweep cursor failed", { table: ctx.tableName });
    }
    return indexKeyOf(out?.Item?.[ATTR.sweepCursor]);
}

/**
 * Move the cursor: the next scan starts after `key`, or at the beginning when `key` is `undefined`.
 *
 * @param ctx - The DynamoDB client and table.
 * @param key - A ClaimIndex key (`PK`, `SK`, `claim_sort`), or `undefined`.
 * @throws the classified SDK error when the row cannot be written.
 */
export async function writeSweepCursor(
    ctx: { readonly dynamodb: ClientLike; readonly tableName: string },
    key: ClaimIndexKey | undefined,
): Promise<void> {
    const cursor = indexKeyOf(key === undefined ? undefined : { M: key });
    try {
        await ctx.dynamodb.send(
            new UpdateItemCommand({
                TableName: ctx.tableName,
                Key: sweepCursorRowKey(),
                ...(cursor === undefined
                    ? { UpdateExpression: "REMOVE #cursor", ExpressionAttributeNames: { "#cursor": ATTR.sweepCursor } }
                    : {
                          UpdateExpression: "SET #cursor = :cursor",
                          ExpressionAttributeNames: { "#cursor": ATTR.sweepCursor },
                          ExpressionAttributeValues: { ":cursor": { M: cursor } },
                      }),
            }),
        );
    } catch (err) {
        throw wrapAwsError(err, "sweeper: moving the sweep cursor failed", { table: ctx.tableName });
    }
}

/** Whether two cursors are the same position (`undefined` is the beginning). */
export function sameCursor(a: ClaimIndexKey | undefined, b: ClaimIndexKey | undefined): boolean {
    if (a === undefined || b === undefined) return a === b;
    return [ATTR.pk, ATTR.sk, ATTR.claimSort].every((name) => a[name]?.S === b[name]?.S);
}
