/**
 * A {@link Logger} that writes one JSON line per entry: what the Lambda handlers log with. Attributes are the
 * caller's ids and counts (the runtime never passes payloads).
 *
 * @packageDocumentation
 */
import type { LogAttributes, Logger } from "../ports";

/** Log levels, lowest first. `fatal` is a threshold only: a logger at `fatal` writes nothing (no entry is fatal). */
export type LogLevel = "debug" | "info" | "warn" | "error" | "fatal";

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
    /** Entries below this level are dropped. @default "info" */
    readonly level?: LogLevel;
    /** Where a finished line goes. @default stdout */
    readonly write?: (line: string) => void;
    /** Fields added to every line, e.g. `{ function: "publisher" }`. @default {} */
    readonly fields?: LogAttributes;
    /** The timestamp source, epoch ms. @default Date.now */
    readonly now?: () => number;
}

function rank(level: LogLevel): number {
    return level === "debug" ? 0 : level === "info" ? 1 : level === "warn" ? 2 : level === "error" ? 3 : 4;
}

/**
 * Create a JSON-lines logger.
 *
 * @param options - Level, sink and fixed fields.
 */
export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
    const min = rank(options.level ?? "info");
    const write = options.write ?? ((line: string) => void process.stdout.write(line + "\n"));
    const now = options.now ?? (() => Date.now());
    const entry = (level: LogLevel) => (message: string, attributes?: LogAttributes) => {
        if (rank(level) < min) return;
        write(
            JSON.stringify(
                {
                    time: new Date(now()).toISOString(),
                    level,
                    message,
                    ...(options.fields ?? {}),
                    ...(attributes ?? {}),
                },
                (_k, v) => (typeof v === "bigint" ? v.toString() : v),
            ),
        );
    };
    return { debug: entry("debug"), info: entry("info"), warn: entry("warn"), error: entry("error") };
}

/**
 * Parse a log level from text (e.g. an environment variable), case-insensitively. Lambda's levels map onto the
 * logger's: `TRACE` is `debug` (the logger has nothing finer), `FATAL` is `fatal` (every entry is dropped).
 *
 * @param text - The text, e.g. `process.env.AWS_LAMBDA_LOG_LEVEL`.
 * @param fallback - The level for `undefined`, `""` or an unknown value. @default "info"
 */
export function parseLogLevel(text: string | undefined, fallback: LogLevel = "info"): LogLevel {
    const t = (text ?? "").trim().toLowerCase();
    if (t === "trace") return "debug";
    return t === "debug" || t === "info" || t === "warn" || t === "error" || t === "fatal" ? t : fallback;
}

/**
 * The handlers' logger: JSON lines at or above `AWS_LAMBDA_LOG_LEVEL`, the level Lambda sets from the function's
 * `loggingConfig.applicationLogLevel` (only with the JSON log format; unset, the level is `info`).
 *
 * @param functionName - The `function` field of every line.
 * @param env - The environment to read the level from. @default process.env
 * @param write - Where a finished line goes. @default stdout
 */
export function createLambdaLogger(
    functionName: string,
    env: Readonly<Record<string, string | undefined>> = process.env,
    write?: (line: string) => void,
): Logger {
    return createJsonLogger({
        level: parseLogLevel(env.AWS_LAMBDA_LOG_LEVEL),
        fields: { function: functionName },
        ...(write !== undefined ? { write } : {}),
    });
}
