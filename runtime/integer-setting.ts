/**
 * The range check of an integer option, shared by the runtime's factories (publisher, sweeper, redrive).
 *
 * @packageDocumentation
 */
import { OutboxError } from "./errors";
import type { IntegerLimit } from "./limits";

/**
 * An integer setting after its default, checked against its range.
 *
 * @param who - The factory's name, for the error message (`createPublisher`, `createSweeper`, `redriveDeadLetters`).
 * @param name - The setting's name.
 * @param value - The configured value; `undefined` takes the limit's `fallback`.
 * @param limit - The range and default, from `limits.ts`.
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the bad value, the range and the default.
 */
export function integerIn(who: string, name: string, value: number | undefined, limit: IntegerLimit): number {
    const { min, max, fallback } = limit;
    const v = value ?? fallback;
    if (!Number.isInteger(v) || v < min || v > max) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: ${name} is ${String(v)}; expected an integer from ${min} to ${max}; omit it for the default ${fallback}`,
            { context: { [name]: String(v) } },
        );
    }
    return v;
}
