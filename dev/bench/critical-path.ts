/**
 * Counts the sequential round trips on a handler's critical path from outside it, by watching its clients.
 *
 * Each call is given a depth: one more than the depth of the call that completed last before it started, or 1
 * when none did since {@link CriticalPathCounter.begin}. An invocation's critical path is the deepest call.
 * This attributes a call to the completion that triggered it, which is exact for async code on one thread: the
 * code that runs when a call's answer arrives (and starts the calls that depend on it) runs in the same turn of
 * the event loop, before any other answer can complete. So calls sent one after the other count one each,
 * calls sent together count once, and a call started by one of them counts one more.
 *
 * @packageDocumentation
 */

/** The counter, shared by every client of one handler. */
export interface CriticalPathCounter {
    /** Start a new invocation: forget the calls of the last one. */
    begin(): void;
    /** The longest chain of calls since {@link CriticalPathCounter.begin}, each started by the one before. */
    depth(): number;
    /** Count every call sent through an AWS SDK v3 client's middleware stack. Returns the client. */
    instrument<T extends object>(client: T): T;
    /** A client whose `send` is counted, then forwarded to `client` (for fakes and shared clients). */
    wrap<T extends { send(command: object): Promise<unknown> }>(client: T): { send(command: object): Promise<unknown> };
}

interface MiddlewareClient {
    readonly middlewareStack: {
        add(middleware: unknown, options: { step: "initialize"; name: string; override?: boolean }): void;
    };
}

/** A new counter, at depth 0. */
export function createCriticalPathCounter(): CriticalPathCounter {
    let lastCompleted = 0;
    let deepest = 0;
    let generation = 0;
    const around = async <R>(call: () => Promise<R>): Promise<R> => {
        const depth = lastCompleted + 1;
        const started = generation;
        deepest = Math.max(deepest, depth);
        try {
            return await call();
        } finally {
            // A call that outlived its invocation must not seed the next one.
            if (started === generation) lastCompleted = depth;
        }
    };
    return {
        begin() {
            generation += 1;
            lastCompleted = 0;
            deepest = 0;
        },
        depth: () => deepest,
        instrument(client) {
            (client as unknown as MiddlewareClient).middlewareStack.add(
                (next: (args: unknown) => Promise<unknown>) => (args: unknown) => around(() => next(args)),
                { step: "initialize", name: "benchCriticalPath", override: true },
            );
            return client;
        },
        wrap(client) {
            return { send: (command: object) => around(() => client.send(command)) };
        },
    };
}
