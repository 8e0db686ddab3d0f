/**
 * The outbox store: GoBridge's DynamoDB outbox contract in TypeScript. runtime/store/ holds each of the store's
 * operations in a file of its own, and this file is its barrel: the relay imports the store through it.
 *
 * May import: the runtime's root files, record/ and observability/ (the store's metric names). Never writer/,
 * relay/, inbox/ nor claim-check/ (eslint.config.mjs).
 *
 * @packageDocumentation
 */
export { OutboxStore } from "./outbox-store";
export { adoptRegion, type AdoptRegionOptions, type AdoptRegionResult } from "./adopt";
export {
    STORE_DEFAULTS,
    type ConsumedCapacityEvent,
    type DynamoDbClientLike,
    type OutboxStoreOptions,
    type ResolveRetry,
} from "./options";
export type { PersistResult } from "./persist";
export type { ClaimCallOptions, ClaimSkip } from "./claim-batch";
export type { AgePosition } from "./claim-scan";
export { compareAge, agePosition, isClaimableItem } from "./claim-scan";
export type { ExpireCallOptions } from "./expire";
export { expiredCountOf } from "./expire";
export {
    expiryShardsRowKey,
    raiseExpiryShards,
    readExpiryShards,
    type SendGetItem,
    type SendUpdateItem,
} from "./expiry-shards-row";
export type { DepthCallOptions } from "./depth";
export { createTableInput, type CreateTableOptions } from "./create-table";
export { PREFLIGHT_REFUSAL, schemaMismatch, schemaMismatchError, type PreflightOutcome } from "./preflight";
export {
    claimUpdate,
    completeClaimedUpdate,
    completePendingUpdate,
    expirePendingUpdate,
    fenceConditionCheck,
    fenceRaiseUpdate,
    isValidToken,
    releaseUpdate,
    seqAllocationUpdates,
    type FencingToken,
    type ItemKey,
    type SeqAllocationUpdates,
} from "./transitions";
export {
    AWS_RETRYABLE_ERRORS,
    classifyAwsError,
    isRecognizedAwsError,
    isRetryableAwsError,
    wrapAwsError,
    cancellationCodes,
    isConditionalCheckFailed,
    isTransactionCanceled,
} from "./aws-errors";
export {
    CLOCK_BEHIND_ERROR_MS,
    CLOCK_BEHIND_WARN_MS,
    STORE_METRICS,
    STORE_WARNINGS,
    resetStoreWarnings,
} from "./observability";
export { KeyCache } from "./key-cache";
export { MAX_WRITER_CLOCK_MS } from "./writer-clock";
export {
    and,
    claimable,
    heldBy,
    nonTerminal,
    or,
    partitionIs,
    partitionRecords,
    placeholders,
    statusIs,
    type Expression,
    type ExpressionFields,
} from "./expressions";
