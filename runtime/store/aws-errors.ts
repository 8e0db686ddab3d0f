/**
 * Mapping AWS SDK errors into the {@link OutboxError} family (reference §6.3). ConditionalCheckFailed, benign
 * transaction cancellations and ResourceInUse are handled at the call sites and never reach this mapping.
 *
 * @packageDocumentation
 */
import { OutboxError, type OutboxErrorCode, type OutboxErrorContext } from "../errors";

/** The fields of an SDK service error this module reads. */
interface SdkErrorShape {
    readonly name?: string;
    readonly message?: string;
    readonly code?: string;
    readonly CancellationReasons?: readonly { readonly Code?: string; readonly Message?: string }[];
}

function shape(err: unknown): SdkErrorShape {
    return typeof err === "object" && err !== null ? (err as SdkErrorShape) : {};
}

/** The SDK error name (`ConditionalCheckFailedException`, …), or `""`. */
export function awsErrorName(err: unknown): string {
    const e = shape(err);
    return typeof e.name === "string" ? e.name : typeof e.code === "string" ? e.code : "";
}

/** Whether `err` is a failed condition on a single-item write. */
export function isConditionalCheckFailed(err: unknown): boolean {
    return awsErrorName(err) === "ConditionalCheckFailedException";
}

/** Whether `err` is a cancelled TransactWriteItems. */
export function isTransactionCanceled(err: unknown): boolean {
    return awsErrorName(err) === "TransactionCanceledException";
}

/** Whether `err` says the table or index does not exist. */
export function isResourceNotFound(err: unknown): boolean {
    return awsErrorName(err) === "ResourceNotFoundException";
}

/** Whether `err` says the table already exists (CreateTable). */
export function isResourceInUse(err: unknown): boolean {
    return awsErrorName(err) === "ResourceInUseException";
}

/**
 * Whether `err` is DynamoDB refusing a read of an index that is still backfilling (`ValidationException: Cannot
 * read from backfilling global secondary index`). It fixes itself once the index is ACTIVE, so it is transient,
 * unlike every other ValidationException. A write's `Schema violation against backfilling index` is not this: it
 * is a bad key value and stays `INVALID_PAYLOAD`.
 */
export function isBackfillingIndexRead(err: unknown): boolean {
    const message = shape(err).message;
    return typeof message === "string" && message.toLowerCase().includes("cannot read from backfilling");
}

/** Whether `err` is an AbortSignal's reason: the caller cancelled, so it is returned unchanged (never reclassified). */
export function isAbort(err: unknown): boolean {
    const name = awsErrorName(err);
    return name === "AbortError" || name === "TimeoutError";
}

/**
 * The cancellation reason codes of a cancelled transaction, aligned with the transaction's items. Missing codes
 * read as `""`. Returns `[]` when the error carries no reasons at all.
 */
export function cancellationCodes(err: unknown): string[] {
    const reasons = shape(err).CancellationReasons;
    return Array.isArray(reasons) ? reasons.map((r) => (typeof r?.Code === "string" ? r.Code : "")) : [];
}

/**
 * DynamoDB's words for a write that would take an item over 400 KB: `Item size to update has exceeded the maximum
 * allowed size` (an update, alone or in a transaction, on AWS and DynamoDB Local) or `Item size has exceeded the
 * maximum allowed size` (a put).
 */
const ITEM_SIZE_REFUSAL = /item size (?:to update )?has exceeded the maximum allowed size/i;

/**
 * Whether `err` is DynamoDB refusing a single-item write because the item would exceed 400 KB (a
 * `ValidationException` with {@link ITEM_SIZE_REFUSAL}'s words).
 */
export function isItemSizeRefusal(err: unknown): boolean {
    const e = shape(err);
    return awsErrorName(err) === "ValidationException" && ITEM_SIZE_REFUSAL.test(e.message ?? "");
}

/**
 * The items of a cancelled transaction that DynamoDB refused because they would exceed 400 KB (a `ValidationError`
 * reason with the item size words), as indexes into the transaction's items.
 */
export function itemSizeCancellations(err: unknown): number[] {
    const reasons = shape(err).CancellationReasons;
    if (!Array.isArray(reasons)) return [];
    const out: number[] = [];
    reasons.forEach((r, i) => {
        if (r?.Code === "ValidationError" && ITEM_SIZE_REFUSAL.test(r.Message ?? "")) out.push(i);
    });
    return out;
}

/** Whether a cancellation code means "lost a race", not "a fault" (`""`, `None`, `ConditionalCheckFailed`, `TransactionConflict`). */
export function isBenignCancellationCode(code: string): boolean {
    return code === "" || code === "None" || code === "ConditionalCheckFailed" || code === "TransactionConflict";
}

function codeForCancellationReason(code: string): OutboxErrorCode | undefined {
    switch (code) {
        case "ProvisionedThroughputExceeded":
        case "ThrottlingError":
        case "ThrottlingException":
        case "RequestLimitExceeded":
            return "THROTTLED";
        case "ValidationError":
        case "ValidationException":
        case "ItemCollectionSizeLimitExceeded":
            return "INVALID_PAYLOAD";
        case "InternalServerError":
            return "UNAVAILABLE";
        case "AccessDenied":
        case "AccessDeniedException":
            return "NOT_AUTHORIZED";
        default:
            return undefined;
    }
}

function codeForErrorName(name: string): OutboxErrorCode | undefined {
    switch (name) {
        case "ResourceNotFoundException":
            return "NOT_FOUND";
        case "ProvisionedThroughputExceededException":
        case "RequestLimitExceeded":
            return "THROTTLED";
        case "InternalServerError":
            return "UNAVAILABLE";
        case "ValidationException":
            return "INVALID_PAYLOAD";
        default:
            return undefined;
    }
}

const TEXT_RULES: readonly (readonly [readonly string[], OutboxErrorCode])[] = [
    [["validationexception"], "INVALID_PAYLOAD"],
    [["throttlingexception", "throttl", "rate exceeded", "requestlimitexceeded"], "THROTTLED"],
    [["expiredtoken", "expired credentials"], "TEMPORARY_AUTH_FAILURE"],
    [["accessdenied", "unauthorizedoperation", "invalidclienttokenid", "notauthorized"], "NOT_AUTHORIZED"],
    [
        [
            "connection refused",
            "connection reset",
            "no such host",
            "network is unreachable",
            "econnrefused",
            "econnreset",
            "enotfound",
            "enetunreach",
        ],
        "CONNECTION_LOST",
    ],
    [["serviceunavailable", "internalerror", "service unavailable"], "UNAVAILABLE"],
];

/**
 * Classify an SDK error into an error code, in the reference's order: cancellation reason codes first, then the
 * error name, then a case-insensitive match on the error text, else `UNAVAILABLE`. One rule of this port comes
 * before the name: a read of a backfilling index is `UNAVAILABLE` (see `isBackfillingIndexRead`).
 *
 * @param err - The error the SDK threw.
 */
export function classifyAwsError(err: unknown): OutboxErrorCode {
    for (const code of cancellationCodes(err)) {
        const mapped = codeForCancellationReason(code);
        if (mapped !== undefined) return mapped;
    }
    // Before the name rule, which makes every ValidationException permanent (§6.3): this one fixes itself.
    if (isBackfillingIndexRead(err)) return "UNAVAILABLE";
    const byName = codeForErrorName(awsErrorName(err));
    if (byName !== undefined) return byName;
    const text = `${awsErrorName(err)} ${shape(err).message ?? String(err)}`.toLowerCase();
    for (const [needles, code] of TEXT_RULES) {
        if (needles.some((needle) => text.includes(needle))) return code;
    }
    return "UNAVAILABLE";
}

/**
 * Wrap an SDK error as an {@link OutboxError} with the call-site message, the classified code and the SDK error
 * as `cause`. An abort (the caller's AbortSignal) is returned unchanged, and so is an {@link OutboxError}.
 *
 * @param err - The error the SDK threw.
 * @param message - What the store was doing, e.g. `outbox claim query failed`.
 * @param context - Ids that locate the failure.
 */
export function wrapAwsError(err: unknown, message: string, context: OutboxErrorContext = {}): unknown {
    if (err instanceof OutboxError || isAbort(err)) return err;
    const code = classifyAwsError(err);
    const reason = cancellationCodes(err).find((c) => !isBenignCancellationCode(c));
    return new OutboxError(code, message, {
        cause: err,
        context: reason === undefined ? context : { ...context, cancellationReason: reason },
    });
}
