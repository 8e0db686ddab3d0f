/**
 * The one error family of this package. Every failure the runtime raises on purpose is an {@link OutboxError}
 * with a stable {@link OutboxErrorCode}, a `transient` flag that tells callers whether a retry can help, the
 * underlying `cause` and a small context bag of ids (never payloads).
 *
 * @packageDocumentation
 */

/** Stable error codes. Callers branch on these, never on messages. */
export const OUTBOX_ERROR_CODES = {
    /** The table, an arg or the environment is misconfigured (e.g. preflight schema mismatch). Permanent. */
    INVALID_CONFIG: "INVALID_CONFIG",
    /** A fencing token is invalid, stale, or lost its claim. Permanent for the caller holding it. */
    STALE_FENCING_TOKEN: "STALE_FENCING_TOKEN",
    /** Every record of a persist batch already existed. Permanent. */
    DUPLICATE_RECORD: "DUPLICATE_RECORD",
    /** A bounded wait ran out (e.g. RecordIDIndex lag). Transient. */
    TIMEOUT: "TIMEOUT",
    /**
     * The service or a dependency is unavailable, or the error is unknown. Transient, except an AWS error the store
     * does not recognize and AWS does not document as retryable: that one says `transient: false` and names itself.
     */
    UNAVAILABLE: "UNAVAILABLE",
    /** Throttled by the service. Transient. */
    THROTTLED: "THROTTLED",
    /** The input is invalid (too large, not JSON, too many actions…). Rejected: retrying cannot help. */
    INVALID_PAYLOAD: "INVALID_PAYLOAD",
    /** The caller is not allowed to do this. Permanent. */
    NOT_AUTHORIZED: "NOT_AUTHORIZED",
    /** Credentials expired. Transient. */
    TEMPORARY_AUTH_FAILURE: "TEMPORARY_AUTH_FAILURE",
    /** The network connection was lost or refused. Transient. */
    CONNECTION_LOST: "CONNECTION_LOST",
    /** A resource (table, topic…) does not exist. Permanent. */
    NOT_FOUND: "NOT_FOUND",
    /** A transaction was cancelled by a failed condition on one of its items. Permanent for that write. */
    CONDITION_FAILED: "CONDITION_FAILED",
    /** The store cannot report depth for this scope (e.g. no partition given). Benign. */
    DEPTH_UNSUPPORTED: "DEPTH_UNSUPPORTED",
} as const;

/** An error code of the {@link OutboxError} family. */
export type OutboxErrorCode = (typeof OUTBOX_ERROR_CODES)[keyof typeof OUTBOX_ERROR_CODES];

/** Context attached to an error: ids, names, counts. Never payloads. */
export type OutboxErrorContext = Readonly<Record<string, string | number | boolean | undefined>>;

/** Options for constructing an {@link OutboxError}. */
export interface OutboxErrorOptions {
    /** Whether retrying the same call later can succeed. @default the code's usual class (see {@link isTransientCode}) */
    readonly transient?: boolean;
    /** The underlying error. @default undefined */
    readonly cause?: unknown;
    /** Ids and names that locate the failure. @default {} */
    readonly context?: OutboxErrorContext;
}

/** Whether errors with this code are transient by default. */
export function isTransientCode(code: OutboxErrorCode): boolean {
    switch (code) {
        case "TIMEOUT":
        case "UNAVAILABLE":
        case "THROTTLED":
        case "TEMPORARY_AUTH_FAILURE":
        case "CONNECTION_LOST":
            return true;
        default:
            return false;
    }
}

/**
 * The error every part of the runtime throws on purpose.
 *
 * The message is the call-site message; `String(err)` appends the cause as `message: cause`, like GoBridge's
 * `BridgeError`. Compare errors by `code`.
 */
export class OutboxError extends Error {
    /** The stable error code. */
    readonly code: OutboxErrorCode;
    /** Whether a retry can succeed. */
    readonly transient: boolean;
    /** Ids and names that locate the failure. */
    readonly context: OutboxErrorContext;

    constructor(code: OutboxErrorCode, message: string, options: OutboxErrorOptions = {}) {
        super(message, options.cause === undefined ? undefined : { cause: options.cause });
        // Pulumi serializes this class by value and turns `super(...)` into `Error.call(this, ...)`, which sets
        // nothing on `this`: assign message and cause explicitly so they survive in the shipped Lambda code.
        this.message = message;
        if (options.cause !== undefined) this.cause = options.cause;
        this.name = "OutboxError";
        this.code = code;
        this.transient = options.transient ?? isTransientCode(code);
        this.context = options.context ?? {};
    }

    /** `message`, or `message: cause` when a cause is set. */
    override toString(): string {
        const cause = this.cause;
        if (cause === undefined) return `${this.name} [${this.code}]: ${this.message}`;
        const causeText = cause instanceof Error ? cause.message : String(cause);
        return `${this.name} [${this.code}]: ${this.message}: ${causeText}`;
    }
}

/** Whether `err` is an {@link OutboxError}, optionally with the given code. */
export function isOutboxError(err: unknown, code?: OutboxErrorCode): err is OutboxError {
    return err instanceof OutboxError && (code === undefined || err.code === code);
}

/**
 * The code to log for any error: an {@link OutboxError}'s `code`, else the error's `name`, else `"UNKNOWN"`.
 *
 * @param err - Whatever was thrown.
 */
export function errorCodeOf(err: unknown): string {
    return isOutboxError(err) ? err.code : err instanceof Error ? err.name : "UNKNOWN";
}
