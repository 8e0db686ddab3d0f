/**
 * Stops what a script started, whatever way the script ends: normal exit, Ctrl-C (SIGINT), SIGTERM, SIGHUP, an
 * uncaught exception or an unhandled rejection. Parts are stopped in reverse start order, each once, and the
 * process exits only after every stop has settled, so no DynamoDB Local (a Java child) is left behind.
 *
 * SIGKILL cannot be caught: a killed script leaves its Java child orphaned, as any program would.
 *
 * @packageDocumentation
 */

/** The exit codes a shell reports for a signal: 128 + its number. */
const SIGNAL_EXIT: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** Registers parts to stop, and stops them all on any way out. */
export interface Shutdown {
    /** Register a part to stop on the way out, after anything registered later. */
    add(name: string, stop: () => Promise<void> | void): void;
    /** Whether a signal or a crash started the shutdown (work in progress should stop quietly). */
    readonly stopping: boolean;
    /** Stop everything registered (in reverse order), then exit with `code`. Never resolves. */
    exit(code: number): Promise<never>;
}

/** Options of {@link installShutdown}. */
export interface ShutdownOptions {
    /** Where to say a signal was received, e.g. the progress line's writer. @default process.stdout */
    readonly say?: (line: string) => void;
    /** Give up on a part's stop after this many ms and exit anyway. @default 10000 */
    readonly stopTimeoutMs?: number;
}

/**
 * Install the signal and crash handlers of a script and return its {@link Shutdown}.
 * A second Ctrl-C while stopping exits at once.
 */
export function installShutdown(options: ShutdownOptions = {}): Shutdown {
    const say = options.say ?? ((line: string) => process.stdout.write(`${line}\n`));
    const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    const parts: { name: string; stop: () => Promise<void> | void }[] = [];
    let exiting: Promise<never> | undefined;
    let stopping = false;

    const stopAll = async (): Promise<void> => {
        for (const part of parts.splice(0).reverse()) {
            let timer: NodeJS.Timeout | undefined;
            const timeout = new Promise<void>((resolve) => {
                timer = setTimeout(() => {
                    process.stderr.write(`${part.name} did not stop within ${stopTimeoutMs} ms; exiting anyway\n`);
                    resolve();
                }, stopTimeoutMs);
            });
            try {
                await Promise.race([Promise.resolve().then(part.stop), timeout]);
            } catch (err) {
                process.stderr.write(
                    `stopping ${part.name} failed: ${err instanceof Error ? err.message : String(err)}\n`,
                );
            } finally {
                clearTimeout(timer);
            }
        }
    };

    const shutdown: Shutdown = {
        add(name, stop) {
            parts.push({ name, stop });
        },
        get stopping() {
            return stopping;
        },
        exit(code) {
            exiting ??= stopAll().then(() => process.exit(code));
            return exiting;
        },
    };

    for (const signal of Object.keys(SIGNAL_EXIT)) {
        process.on(signal, () => {
            if (stopping) {
                process.exit(SIGNAL_EXIT[signal]);
            }
            stopping = true;
            say(`\n${signal} received: stopping the local parts…`);
            void shutdown.exit(SIGNAL_EXIT[signal]!);
        });
    }
    const crash = (err: unknown): void => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`${describeError(err)}\n`);
        void shutdown.exit(1);
    };
    process.on("uncaughtException", crash);
    process.on("unhandledRejection", crash);
    return shutdown;
}

/**
 * For a script that stops its own parts: on SIGINT, SIGTERM or SIGHUP, run `stop`, then exit with the signal's code.
 *
 * @param stop - Stops what the script started; it must settle.
 */
export function stopOnSignals(stop: () => Promise<void>): void {
    for (const [signal, code] of Object.entries(SIGNAL_EXIT)) {
        process.on(signal, () => void stop().then(() => process.exit(code)));
    }
}

/** One line for an error: its message, and its code when it has one (OutboxError, AWS errors). */
export function describeError(err: unknown): string {
    if (!(err instanceof Error)) return String(err);
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !err.message.includes(code)
        ? `${err.name} [${code}]: ${err.message}`
        : `${err.name === "Error" || err.name === "UsageError" ? "" : `${err.name}: `}${err.message}`;
}

/**
 * Register a part whose start is still in flight, before awaiting it: a signal during the start then waits for the
 * part and stops it, and a failed start leaves nothing to stop.
 *
 * @param shutdown - Where to register it.
 * @param name - The part's name, for messages.
 * @param starting - The part's start.
 * @returns `starting`.
 */
export function stopOnceStarted<T extends { stop(): Promise<void> | void }>(
    shutdown: Shutdown,
    name: string,
    starting: Promise<T>,
): Promise<T> {
    shutdown.add(name, () =>
        starting.then(
            (part) => part.stop(),
            () => undefined,
        ),
    );
    return starting;
}
