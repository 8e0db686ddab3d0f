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
    readonly $fault?: string;
    readonly $retryable?: unknown;
    readonly $metadata?: { readonly httpStatusCode?: number };
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
 * The error names and HTTP statuses the AWS SDK for JavaScript v3 retries, in one place. Source: its retry
 * classification, `@smithy/service-error-classification` (since Smithy 3.x a submodule of `@smithy/core`:
 * `node_modules/@smithy/core/dist-es/submodules/retry/service-error-classification/constants.js`, 3.41.1 as
 * installed): `THROTTLING_ERROR_CODES`, `TRANSIENT_ERROR_CODES`, `TRANSIENT_ERROR_STATUS_CODES`,
 * `NODEJS_TIMEOUT_ERROR_CODES` and `NODEJS_NETWORK_ERROR_CODES`, copied, not imported, because the runtime does
 * not depend on a Smithy internal.
 */
export const AWS_RETRYABLE_ERRORS = {
    /** `THROTTLING_ERROR_CODES`: the service asks the caller to slow down. */
    throttlingNames: [
        "BandwidthLimitExceeded",
        "EC2ThrottledException",
        "LimitExceededException",
        "PriorRequestNotComplete",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "SlowDown",
        "ThrottledException",
        "Throttling",
        "ThrottlingException",
        "TooManyRequestsException",
        "TransactionInProgressException",
    ],
    /** `TRANSIENT_ERROR_CODES`: timeouts. */
    transientNames: ["TimeoutError", "RequestTimeout", "RequestTimeoutException"],
    /** `NODEJS_TIMEOUT_ERROR_CODES` and `NODEJS_NETWORK_ERROR_CODES`: Node's `code` on a socket error. */
    nodeCodes: [
        "ECONNRESET",
        "ECONNREFUSED",
        "EPIPE",
        "ETIMEDOUT",
        "EHOSTUNREACH",
        "ENETUNREACH",
        "ENOTFOUND",
        "EAI_AGAIN",
    ],
    /** `TRANSIENT_ERROR_STATUS_CODES`, plus 429 (`isThrottlingError`). */
    httpStatuses: [429, 500, 502, 503, 504],
} as const;

// Arrays, not Sets: code serialized by value (Pulumi's CallbackFunction) gets a Set as a plain object, and
// `Set.prototype.has` then throws on it.
const RETRYABLE_NAMES: readonly string[] = [
    ...AWS_RETRYABLE_ERRORS.throttlingNames,
    ...AWS_RETRYABLE_ERRORS.transientNames,
];
const RETRYABLE_NODE_CODES: readonly string[] = AWS_RETRYABLE_ERRORS.nodeCodes;
const RETRYABLE_STATUSES: readonly number[] = AWS_RETRYABLE_ERRORS.httpStatuses;

/**
 * Whether AWS documents `err` as retryable, as the SDK's retry strategy decides it: a name or Node code of
 * {@link AWS_RETRYABLE_ERRORS}, the `$retryable` trait of the service model, `$fault: "server"` (the model says
 * the fault is AWS's, not the request's), or an HTTP status of 5xx or 429 in `$metadata`.
 *
 * @param err - The error the SDK threw.
 */
export function isRetryableAwsError(err: unknown): boolean {
    const e = shape(err);
    if (RETRYABLE_NAMES.includes(awsErrorName(err))) return true;
    if (typeof e.code === "string" && RETRYABLE_NODE_CODES.includes(e.code)) return true;
    if (e.$retryable !== undefined || e.$fault === "server") return true;
    const status = e.$metadata?.httpStatusCode;
    return typeof status === "number" && (RETRYABLE_STATUSES.includes(status) || (status >= 500 && status <= 599));
}

/** A classification, and whether a rule recognized the error (else the code is the default's). */
function classify(err: unknown): { readonly code: OutboxErrorCode; readonly recognized: boolean } {
    for (const code of cancellationCodes(err)) {
        const mapped = codeForCancellationReason(code);
        if (mapped !== undefined) return { code: mapped, recognized: true };
    }
    // Before the name rule, which makes every ValidationException permanent (§6.3): this one fixes itself.
    if (isBackfillingIndexRead(err)) return { code: "UNAVAILABLE", recognized: true };
    const byName = codeForErrorName(awsErrorName(err));
    if (byName !== undefined) return { code: byName, recognized: true };
    const text = `${awsErrorName(err)} ${shape(err).message ?? String(err)}`.toLowerCase();
    for (const [needles, code] of TEXT_RULES) {
        if (needles.some((needle) => text.includes(needle))) return { code, recognized: true };
    }
    return { code: "UNAVAILABLE", recognized: false };
}

/**
 * Classify an SDK error into an error code, in the reference's order: cancellation reason codes first, then the
 * error name, then a case-insensitive match on the error text, else `UNAVAILABLE`. One rule of this port comes
 * before the name: a read of a backfilling index is `UNAVAILABLE` (see `isBackfillingIndexRead`). The default
 * keeps GoBridge's code, but {@link wrapAwsError} marks it transient only when {@link isRetryableAwsError} says so.
 *
 * @param err - The error the SDK threw.
 */
export function classifyAwsError(err: unknown): OutboxErrorCode {
    return classify(err).code;
}

/**
 * Whether {@link classifyAwsError} recognized `err` by one of its rules (a cancellation reason, a name, a text),
 * rather than falling to its `UNAVAILABLE` default.
 *
 * @param err - The error the SDK threw.
 */
export function isRecognizedAwsError(err: unknown): boolean {
    return classify(err).recognized;
}

/** What {@link wrapAwsError} adds to the message of an error no rule recognizes. */
function unrecognizedNote(name: string, retryable: boolean): string {
    return ` (an AWS error this store does not recognize: ${name}; ${retryable ? "the AWS SDK retries it, so it is transient" : "not one AWS documents as retryable, so retrying the same call will not help"})`;
}

/**
 * The message of an error {@link wrapAwsError} made, as the call site gave it: without the note it adds to an error
 * no rule recognizes. For a caller that explains the cause itself (the CLI names a credentials failure, a server
 * that is not DynamoDB), where "does not recognize" would contradict the explanation.
 *
 * @param err - The wrapped error.
 */
export function callSiteMessage(err: OutboxError): string {
    const name = err.context.awsError;
    if (err.context.unrecognized !== true || typeof name !== "string") return err.message;
    const note = unrecognizedNote(name, err.transient);
    return err.message.endsWith(note) ? err.message.slice(0, -note.length) : err.message;
}

/**
 * Wrap an SDK error as an {@link OutboxError} with the call-site message, the classified code and the SDK error
 * as `cause`. An error no rule recognizes keeps the `UNAVAILABLE` code but names itself (`awsError` in the
 * context, and the message) and is transient only when {@link isRetryableAwsError}. An abort (the caller's AbortSignal) is returned unchanged, and so is an {@link OutboxError}.
 *
 * @param err - The error the SDK threw.
 * @param message - What the store was doing, e.g. `outbox claim query failed`.
 * @param context - Ids that locate the failure.
 */
export function wrapAwsError(err: unknown, message: string, context: OutboxErrorContext = {}): unknown {
    if (err instanceof OutboxError || isAbort(err)) return err;
    const { code, recognized } = classify(err);
    const reason = cancellationCodes(err).find((c) => !isBenignCancellationCode(c));
    const located = reason === undefined ? context : { ...context, cancellationReason: reason };
    if (recognized) return new OutboxError(code, message, { cause: err, context: located });
    // GoBridge's default calls every unknown error transient (§6.3), so a retry-on-transient loop spins forever
    // on bad input: here it is transient only when the SDK itself would retry it.
    const name = awsErrorName(err) || (err instanceof Error ? err.constructor.name : typeof err);
    const retryable = isRetryableAwsError(err);
    return new OutboxError(code, `${message}${unrecognizedNote(name, retryable)}`, {
        cause: err,
        transient: retryable,
        context: { ...located, awsError: name, unrecognized: true },
    });
}
