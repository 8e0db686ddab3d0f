/**
 * The Lambda entry points the Outbox component ships. Each is a zero-argument factory that
 * `aws.lambda.CallbackFunction` serializes by value and runs once per cold start: it reads the
 * {@link ENV} contract and returns the handler.
 *
 * PLACEHOLDER: the real publisher and sweeper are being built (issue 4); these factories keep the
 * component's wiring and signatures stable meanwhile.
 *
 * @packageDocumentation
 */
import { ENV, readHandlerEnvironment } from "./config";

/** The result a stream handler returns so Lambda rewinds to the first failed record. */
export interface StreamBatchResponse {
    /** The SequenceNumbers of failed records; Lambda retries from the lowest one. */
    batchItemFailures: { itemIdentifier: string }[];
}

/** Builds the publisher handler from the environment. Used as the publisher function's `callbackFactory`. */
export function publisherLambdaFactory(): (event: { Records?: unknown[] }) => Promise<StreamBatchResponse> {
    readHandlerEnvironment(process.env);
    return async () => ({ batchItemFailures: [] });
}

/** Builds the sweeper handler from the environment. Used as the sweeper function's `callbackFactory`. */
export function sweeperLambdaFactory(): (event: unknown) => Promise<{ published: number; expired: number }> {
    readHandlerEnvironment(process.env);
    return async () => ({ published: 0, expired: 0 });
}

/** The variable names, re-exported for the component. */
export { ENV };
