/**
 * How Lambda reads a stream handler's answer under `ReportBatchItemFailures`: where the batch failed.
 *
 * @packageDocumentation
 */
import type { LambdaStreamHandlerResult, LambdaStreamRecord } from "../stream-event";

/**
 * The lowest index in `batch` the handler reported as failed, `undefined` when the whole batch succeeded,
 * 0 when the response fails the whole batch (malformed, empty or unknown identifier), as Lambda decides.
 */
export function lowestFailedIndex(
    result: LambdaStreamHandlerResult,
    batch: readonly LambdaStreamRecord[],
): number | undefined {
    if (result === null || result === undefined || typeof result !== "object") return undefined;
    const failures = (result as { batchItemFailures?: unknown }).batchItemFailures;
    if (failures === null || failures === undefined) return undefined;
    if (!Array.isArray(failures)) return 0;
    let lowest: number | undefined;
    for (const failure of failures as unknown[]) {
        const id =
            typeof failure === "object" && failure !== null
                ? (failure as { itemIdentifier?: unknown }).itemIdentifier
                : undefined;
        if (typeof id !== "string" || id === "") return 0;
        const index = batch.findIndex((r) => r.dynamodb.SequenceNumber === id);
        if (index < 0) return 0;
        lowest = lowest === undefined ? index : Math.min(lowest, index);
    }
    return lowest;
}
