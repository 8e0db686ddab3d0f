/**
 * The bounds on a command's AWS calls. `--timeout` is one deadline for the whole command: every SDK call the
 * command makes gets its AbortSignal, so a call in flight is cut when it runs out and a call started after it fails
 * at once, and the retry strategy's backoff is cut with it. Each request also has its own bounds
 * ({@link REQUEST_BOUNDS}): a connection that is not established, or an answer that does not come, fails that
 * attempt with a TimeoutError well before the deadline, and the SDK retries it within the deadline.
 *
 * The deadline runs on real time (a timer), not on the injected clock: it bounds what the network does, and the
 * injected clock of the tests advances faster than real time.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../../runtime/errors";
import { seconds } from "./format";

/**
 * What bounds each request, whatever `--timeout` allows: `requestTimeout` alone only logs a warning in
 * `@smithy/node-http-handler`; `throwOnRequestTimeout` makes it fail the attempt with a TimeoutError.
 */
export const REQUEST_BOUNDS = {
    /** A TCP (and TLS) connection must be established within this, ms. */
    connectionTimeoutMs: 5_000,
    /** The whole answer must arrive within this, ms. */
    requestTimeoutMs: 30_000,
    /** Attempts per call, the first included (transient errors and timeouts are retried, within the deadline). */
    maxAttempts: 5,
} as const;

/**
 * How long after `--timeout` the calls that undo what the command wrote may still run (verify removes its
 * verification record), ms. The command then ends, whatever is still running.
 */
export const CLEANUP_GRACE_MS = 2_000;

/** One SDK call of the command: the service, where it was sent, and the operation. */
export interface SdkCall {
    /** E.g. `DynamoDB`, `SQS`, `Lambda`. */
    readonly service: string;
    /** The endpoint, as the operator knows it: the `--endpoint` URL, or the region's endpoint. */
    readonly endpoint: string;
    /** The settings that choose the endpoint, for "check …": e.g. `--endpoint and --region`. */
    readonly settings: string;
    /** The operation, e.g. `DescribeTable`. */
    readonly operation: string;
    /** Whether the deadline had already run out when the call was made. */
    readonly afterDeadline: boolean;
}

/** Where a client sends its calls. */
export type SdkTarget = Pick<SdkCall, "service" | "endpoint" | "settings">;

/** The deadline of one command run. */
export interface CommandDeadline {
    /** The command, for messages. */
    readonly command: string;
    /** `--timeout` (or the command's default), ms. */
    readonly timeoutMs: number;
    /** Aborts when `--timeout` runs out. Every SDK call of the command gets it. */
    readonly signal: AbortSignal;
    /** Aborts {@link CLEANUP_GRACE_MS} later: the calls that undo the command's own writes get it. */
    readonly cleanupSignal: AbortSignal;
    /** The calls in flight, oldest first. */
    readonly inFlight: ReadonlySet<SdkCall>;
    /** Whether `--timeout` has run out. */
    expired(): boolean;
    /**
     * Wait for the command's work until {@link CLEANUP_GRACE_MS} after `--timeout`: its value and whether `--timeout`
     * had run out when it ended, or `undefined` when it was still running then. A rejection of the work is passed on.
     */
    settle<T>(work: Promise<T>): Promise<{ readonly value: T; readonly late: boolean } | undefined>;
    /** Stop the timers. */
    dispose(): void;
}

/** The abort reasons of deadlines, so an AbortError anywhere in a cause chain is recognised as one. */
const DEADLINE_REASONS = new WeakSet<object>();

/** The call each failed SDK error came from (set by {@link bindToDeadline}). */
const CALL_OF_ERROR = new WeakMap<object, SdkCall>();

/** Whether `err` is the abort reason of a {@link CommandDeadline}. */
export function isDeadlineReason(err: unknown): boolean {
    return typeof err === "object" && err !== null && DEADLINE_REASONS.has(err);
}

/** The SDK call an error came from, when a bound client threw it. */
export function callOfError(err: unknown): SdkCall | undefined {
    return typeof err === "object" && err !== null ? CALL_OF_ERROR.get(err) : undefined;
}

/** `DynamoDB DescribeTable at http://127.0.0.1:8000`. */
export function callText(call: SdkCall): string {
    return `${call.service} ${call.operation} at ${call.endpoint}`;
}

/**
 * Start the deadline of a command.
 *
 * @param command - The command, for messages.
 * @param timeoutMs - `--timeout`, ms (at most a day, so the timers cannot overflow).
 * @param startedAt - When the command started, epoch ms: the process's start, so its own start-up counts.
 *   @default now
 */
export function startDeadline(command: string, timeoutMs: number, startedAt: number = Date.now()): CommandDeadline {
    const main = new AbortController();
    const cleanup = new AbortController();
    const inFlight = new Set<SdkCall>();
    let settleTimer: NodeJS.Timeout | undefined;
    const reason = (): OutboxError => {
        const err = new OutboxError(
            "TIMEOUT",
            `--timeout ${seconds(timeoutMs)} ran out (it bounds the whole ${command} command)`,
            { context: { flag: "timeout", timeoutMs } },
        );
        DEADLINE_REASONS.add(err);
        return err;
    };
    const endsAt = startedAt + timeoutMs;
    const leftMs = Math.max(0, endsAt - Date.now());
    const mainTimer = setTimeout(() => main.abort(reason()), leftMs);
    const cleanupTimer = setTimeout(() => cleanup.abort(reason()), leftMs + CLEANUP_GRACE_MS);
    return {
        command,
        timeoutMs,
        signal: main.signal,
        cleanupSignal: cleanup.signal,
        inFlight,
        expired: () => main.signal.aborted,
        settle: async <T>(work: Promise<T>) => {
            // A rejection after the command gave up has no one to report to: keep it from crashing the process.
            work.catch(() => undefined);
            const gaveUp = new Promise<undefined>((resolve) => {
                // A moment after the cleanup signal, so a cleanup call it cut can still report.
                settleTimer = setTimeout(
                    () => resolve(undefined),
                    Math.max(0, endsAt + CLEANUP_GRACE_MS + 100 - Date.now()),
                );
            });
            try {
                return await Promise.race([work.then((value) => ({ value, late: main.signal.aborted })), gaveUp]);
            } finally {
                clearTimeout(settleTimer);
            }
        },
        dispose: () => {
            clearTimeout(mainTimer);
            clearTimeout(cleanupTimer);
            clearTimeout(settleTimer);
        },
    };
}

/**
 * The client options that bound each request of a client made for a command.
 *
 * @param timeoutMs - The command's `--timeout`: no request waits longer than the whole command may.
 */
export function requestBounds(timeoutMs: number): {
    readonly maxAttempts: number;
    readonly requestHandler: {
        readonly connectionTimeout: number;
        readonly requestTimeout: number;
        readonly throwOnRequestTimeout: true;
    };
} {
    return {
        maxAttempts: REQUEST_BOUNDS.maxAttempts,
        requestHandler: {
            connectionTimeout: Math.min(REQUEST_BOUNDS.connectionTimeoutMs, timeoutMs),
            requestTimeout: Math.min(REQUEST_BOUNDS.requestTimeoutMs, timeoutMs),
            throwOnRequestTimeout: true,
        },
    };
}

/** The part of an SDK v3 client this module wraps. */
interface SendingClient {
    send(command: object, options?: object): Promise<unknown>;
}

/**
 * Make every `send` of `client` carry the deadline's signal, record the call while it is in flight, and remember
 * which call an error came from (for the messages of {@link callOfError}). Returns the same client.
 *
 * @param client - An SDK v3 client made with {@link requestBounds}.
 * @param deadline - The command's deadline.
 * @param target - The service, its endpoint and the settings that choose it, as the operator knows them.
 * @param signal - The signal to pass. @default deadline.signal
 */
export function bindToDeadline<C extends SendingClient>(
    client: C,
    deadline: CommandDeadline,
    target: SdkTarget,
    signal: AbortSignal = deadline.signal,
): C {
    const send = client.send.bind(client);
    const inFlight = deadline.inFlight as Set<SdkCall>;
    const bound = async (command: object, options?: object): Promise<unknown> => {
        const call: SdkCall = {
            ...target,
            operation: command.constructor.name.replace(/Command$/, ""),
            afterDeadline: signal.aborted,
        };
        inFlight.add(call);
        try {
            return await send(command, { ...options, abortSignal: signal });
        } catch (err) {
            if (typeof err === "object" && err !== null && !CALL_OF_ERROR.has(err)) CALL_OF_ERROR.set(err, call);
            throw err;
        } finally {
            inFlight.delete(call);
        }
    };
    (client as SendingClient).send = bound;
    return client;
}
