/**
 * A Scan, page after page: the loop `migrate`'s backfill and its look for outbox items share.
 *
 * @packageDocumentation
 */
import {
    ScanCommand,
    type AttributeValue,
    type DynamoDBClient,
    type ScanCommandInput,
    type ScanCommandOutput,
} from "@aws-sdk/client-dynamodb";

/**
 * Scan from the start until the last page, or until `onPage` answers `false`.
 *
 * @param input - Each page's input, given the previous page's `LastEvaluatedKey` (`undefined` for the first).
 * @param fail - What a failed Scan call is thrown as.
 * @param onPage - Called with each page; `false` stops the paging.
 */
export async function scanPages(
    client: DynamoDBClient,
    input: (start: Record<string, AttributeValue> | undefined) => ScanCommandInput,
    fail: (err: unknown) => unknown,
    onPage: (page: ScanCommandOutput) => boolean | void | Promise<boolean | void>,
): Promise<void> {
    let start: Record<string, AttributeValue> | undefined;
    do {
        let page: ScanCommandOutput;
        try {
            page = await client.send(new ScanCommand(input(start)));
        } catch (err) {
            throw fail(err);
        }
        if ((await onPage(page)) === false) return;
        start = page.LastEvaluatedKey;
    } while (start !== undefined);
}
