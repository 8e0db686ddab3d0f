/**
 * Whether a table shows a sign of being an outbox, looked for before `migrate --apply` changes it: `migrate`
 * enables TTL and a stream and creates three indexes, which it must not do to a business table named by mistake.
 *
 * The signs, cheapest first:
 * - one of the schema's indexes (ExpiryIndex, RecordIDIndex, ClaimIndex) exists, whatever its shape;
 * - an item only this package or GoBridge writes: an outbox record (`SK` starting `OUTBOX#`), a `FENCE` row, an id
 *   guard (`PK` starting `OUTBOX_ID#`), or an `OUTBOX_META#` row (the expiry shards mark, the sweep cursor).
 *
 * The item search is a paged Scan that stops at the first such item: on an outbox table it reads a page or so; on a
 * table with none it reads the whole table once, and then the backfill count, which would read it again to find
 * records it now knows are not there, is skipped.
 *
 * @packageDocumentation
 */
import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { scanPages } from "../shared/scan-pages";
import { wrapAwsError } from "../../runtime/store/aws-errors";
import { nameRef } from "../../runtime/store/expressions";
import {
    ATTR,
    EXPIRY_SHARDS_PK,
    FENCE_SK,
    GLOBAL_SECONDARY_INDEXES,
    ID_GUARD_PK_PREFIX,
    RECORD_SK_PREFIX,
    SWEEP_CURSOR_PK,
} from "../../runtime/schema";
import type { TableShape } from "../shared/table-shape";

/** What was looked for, in the words of the messages. */
export const OUTBOX_SIGNS =
    `its indexes (${GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName).join(", ")}), ` +
    `an outbox record (${ATTR.sk} ${RECORD_SK_PREFIX}…), a ${FENCE_SK} row, an id guard (${ATTR.pk} ${ID_GUARD_PK_PREFIX}…) ` +
    `or an ${EXPIRY_SHARDS_PK} or ${SWEEP_CURSOR_PK} row`;

/** What the search found. */
export interface OutboxEvidence {
    /** The first sign found, in words; `undefined` when there is none. */
    readonly sign: string | undefined;
    /** Items the Scan read (0 when an index was the sign). */
    readonly scanned: number;
}

/** A key value for a message: quoted, at most 60 characters. */
function shown(value: AttributeValue | undefined): string {
    const text = value?.S ?? "";
    return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/**
 * Look for a sign that `tableName` is an outbox.
 *
 * @param client - The command's client.
 * @param tableName - The table.
 * @param shape - The table compared with the schema.
 * @param options - The Scan page size, and where each page's progress goes.
 * @throws OutboxError with the classified code when a Scan call fails.
 */
export async function findOutboxEvidence(
    client: DynamoDBClient,
    tableName: string,
    shape: TableShape,
    options: { readonly pageSize: number; readonly onPage: (pages: number, scanned: number) => void },
): Promise<OutboxEvidence> {
    const index = shape.indexes.find((i) => i.state !== "missing");
    if (index !== undefined) return { sign: `its index ${index.shape.indexName}`, scanned: 0 };
    const pk = nameRef(ATTR.pk);
    const sk = nameRef(ATTR.sk);
    let scanned = 0;
    let pages = 0;
    let found: OutboxEvidence | undefined;
    await scanPages(
        client,
        (start) => ({
            TableName: tableName,
            Limit: options.pageSize,
            ProjectionExpression: `${pk}, ${sk}`,
            FilterExpression: `begins_with(${sk}, :record) OR ${sk} = :fence OR begins_with(${pk}, :guard) OR ${pk} IN (:shards, :cursor)`,
            ExpressionAttributeNames: { [pk]: ATTR.pk, [sk]: ATTR.sk },
            ExpressionAttributeValues: {
                ":record": { S: RECORD_SK_PREFIX },
                ":fence": { S: FENCE_SK },
                ":guard": { S: ID_GUARD_PK_PREFIX },
                ":shards": { S: EXPIRY_SHARDS_PK },
                ":cursor": { S: SWEEP_CURSOR_PK },
            },
            ...(start ? { ExclusiveStartKey: start } : {}),
        }),
        (err) => wrapAwsError(err, `looking for outbox items in "${tableName}" failed`, { table: tableName }),
        (page) => {
            pages += 1;
            scanned += page.ScannedCount ?? 0;
            options.onPage(pages, scanned);
            const item = page.Items?.[0];
            if (item === undefined) return true;
            found = {
                sign: `an outbox item (${ATTR.pk} ${shown(item[ATTR.pk])}, ${ATTR.sk} ${shown(item[ATTR.sk])})`,
                scanned,
            };
            return false;
        },
    );
    return found ?? { sign: undefined, scanned };
}
