/**
 * How long an invocation has left, from its Lambda context: what the publisher, the sweeper and the inbox handler
 * read to stop starting work before the function's timeout.
 *
 * @packageDocumentation
 */

/** The part of the Lambda context that tells the time left. */
export interface RemainingTimeContext {
    /** Milliseconds left before the function's timeout ends the invocation. */
    getRemainingTimeInMillis?(): number;
}

/**
 * The milliseconds an invocation has left, asked of its context each time. A context without
 * `getRemainingTimeInMillis` (a test, or a caller other than Lambda) sets no deadline: `Infinity`.
 *
 * @param context - The Lambda context the handler was invoked with.
 */
export function timeLeftIn(context: RemainingTimeContext | undefined): () => number {
    const ask = context?.getRemainingTimeInMillis;
    if (typeof ask !== "function") return () => Number.POSITIVE_INFINITY;
    return () => ask.call(context);
}
