/**
 * A fixed network latency for a local client: a middleware on the AWS SDK v3 client's own stack waits before
 * every call, whoever sends it, so DynamoDB Local and the local SNS (which answer in about a millisecond on
 * loopback) cost what a same-region call costs.
 *
 * @packageDocumentation
 */

interface MiddlewareClient {
    readonly middlewareStack: {
        add(middleware: unknown, options: { step: "finalizeRequest"; name: string; override?: boolean }): void;
    };
}

/**
 * Make every call of `client` wait `latencyMs` before it is sent. Returns the client, for chaining.
 *
 * @param client - An AWS SDK v3 client.
 * @param latencyMs - The added latency per call, ms; 0 adds nothing.
 */
export function injectLatency<T extends object>(client: T, latencyMs: number): T {
    if (latencyMs <= 0) return client;
    (client as unknown as MiddlewareClient).middlewareStack.add(
        (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
            await new Promise((resolve) => setTimeout(resolve, latencyMs));
            return next(args);
        },
        // The last step before the wire: every counter (added at "initialize") sees the call start before the wait.
        { step: "finalizeRequest", name: "benchLatency", override: true },
    );
    return client;
}
