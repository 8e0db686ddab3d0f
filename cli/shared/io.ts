/**
 * What the CLI touches outside itself, injected so tests run it in-process: the output streams, the
 * environment, the clock, and the output mode (human text with progress, or one JSON object).
 *
 * @packageDocumentation
 */
import { isOutboxError } from "../../runtime/errors";
import type { Clock } from "../../runtime/ports";
import { systemClock } from "../../runtime/ports";
// eslint-disable-next-line import-x/no-restricted-paths -- type-only; CliIo carries doctor's port factory: to move into cli/shared/
import type { DoctorAws, DoctorAwsConfig } from "../doctor/aws";
import { explainFailure } from "./failure";

/** The process surface `main` runs against. */
export interface CliIo {
    /** Writes text to standard output, as given (lines end with `\n`). */
    readonly stdout: (text: string) => void;
    /** Writes text to standard error, as given. */
    readonly stderr: (text: string) => void;
    /** The environment: region and credentials variables are read from here. */
    readonly env: Readonly<Record<string, string | undefined>>;
    /** The clock every wait and timestamp uses. @default systemClock */
    readonly clock?: Clock;
    /**
     * When the command started, epoch ms of real time: `--timeout` counts from it. The bin passes the process's
     * start, so the tool's own start-up is inside the bound. @default when `main` is called
     */
    readonly startedAt?: number;
    /** How doctor gets its Lambda, EventBridge and CloudWatch ports (tests pass fakes). @default loadDoctorAws */
    readonly doctorAws?: (config: DoctorAwsConfig) => DoctorAws;
}

/** Where a command writes: result lines, progress lines, and whether the result is JSON. */
export interface Output {
    /** Whether `--json` was given: results are gathered into one object printed at the end. */
    readonly json: boolean;
    /** A result line (stdout in text mode; suppressed in JSON mode, where the object carries it). */
    line(text: string): void;
    /** A progress line: stdout in text mode, stderr in JSON mode so stdout stays one parseable object. */
    progress(text: string): void;
    /** Print the final JSON object (JSON mode only). */
    result(value: unknown): void;
    /** The clock. */
    readonly clock: Clock;
}

/**
 * Build the {@link Output} of one command run.
 *
 * @param io - The injected process surface.
 * @param json - Whether `--json` was given.
 */
export function createOutput(io: CliIo, json: boolean): Output {
    return {
        json,
        clock: io.clock ?? systemClock,
        line: (text) => {
            if (!json) io.stdout(`${text}\n`);
        },
        progress: (text) => (json ? io.stderr(`${text}\n`) : io.stdout(`${text}\n`)),
        result: (value) => {
            if (json) io.stdout(`${JSON.stringify(value, null, 2)}\n`);
        },
    };
}

/**
 * An io whose stdout and stderr can be closed: a command given up on at its deadline may still be running, and
 * must not write after the result.
 */
export function closableIo(io: CliIo): { readonly io: CliIo; close(): void } {
    let open = true;
    return {
        io: {
            ...io,
            stdout: (text) => {
                if (open) io.stdout(text);
            },
            stderr: (text) => {
                if (open) io.stderr(text);
            },
        },
        close: () => {
            open = false;
        },
    };
}

export { seconds } from "./format";

/**
 * An error as one line. A failure cli/shared/failure.ts explains (a timeout, missing credentials, an unreachable endpoint,
 * a DLQ that does not exist…) reads as what failed and what to do; otherwise `OutboxError [CODE]: message: cause`
 * for the package's errors, `Name: message` for others.
 */
export function errorText(err: unknown): string {
    const explained = explainFailure(err);
    if (explained !== undefined) return explained;
    if (isOutboxError(err)) return err.toString();
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
