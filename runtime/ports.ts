/**
 * The small seams every runtime part takes by injection: the AWS clients, a clock, a logger and a counter sink.
 * Defaults are the wall clock, a silent logger and a no-op sink, so nothing is printed or emitted unless the
 * caller asks for it.
 *
 * @packageDocumentation
 */

/** Anything with an AWS SDK v3 client's `send` (a real client, or a fault-injecting fake in tests). */
export interface ClientLike {
    /** Send an SDK command. */
    send(command: object): Promise<unknown>;
}

/** A source of the current time. Injected so tests never sleep. */
export interface Clock {
    /** The current time, epoch milliseconds. */
    now(): number;
    /** Resolve after `ms` milliseconds of this clock's time. */
    sleep(ms: number): Promise<void>;
}

/** The wall clock. */
export const systemClock: Clock = {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Structured attributes on a log line: ids and counts, never payloads. */
export type LogAttributes = Readonly<Record<string, unknown>>;

/** A structured logger. */
export interface Logger {
    /** Detailed tracing, off by default. */
    debug(message: string, attributes?: LogAttributes): void;
    /** Notable events. */
    info(message: string, attributes?: LogAttributes): void;
    /** Something an operator should look at. */
    warn(message: string, attributes?: LogAttributes): void;
    /** A failure. */
    error(message: string, attributes?: LogAttributes): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
};

/** A counter sink, tagged. The store emits through it. */
export interface MetricsSink {
    /** Add `value` to the counter `name`, tagged with `tags` (e.g. `{ partition }`). */
    count(name: string, value: number, tags?: Readonly<Record<string, string>>): void;
}

/** A sink that drops everything. */
export const noopMetrics: MetricsSink = {
    count: () => undefined,
};
