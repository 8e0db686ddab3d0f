/**
 * The scale of the fault scenarios, from the environment, so CI runs small and a release check runs large.
 */
import { OutboxError } from "../../../runtime/errors";

/** `OUTBOX_FAULT_MESSAGES`: messages over all scenarios together. */
export const FAULT_MESSAGES_ENV = "OUTBOX_FAULT_MESSAGES";
/** `OUTBOX_FAULT_RATE`: the fault injection rate, 0 to 1. */
export const FAULT_RATE_ENV = "OUTBOX_FAULT_RATE";
/** `OUTBOX_FAULT_SEED`: the RNG seed. */
export const FAULT_SEED_ENV = "OUTBOX_FAULT_SEED";

/** The scale of a run. */
export interface FaultScale {
    /** Messages over all scenarios. @default 320 */
    readonly totalMessages: number;
    /** Injection rate. @default 0.1 */
    readonly rate: number;
    /** Seed. @default 7 */
    readonly seed: number;
}

function read(
    env: NodeJS.ProcessEnv,
    name: string,
    fallback: number,
    valid: (n: number) => boolean,
    allowed: string,
): number {
    const text = env[name];
    if (text === undefined || text.trim() === "") return fallback;
    const n = Number(text);
    if (!valid(n))
        throw new OutboxError(
            "INVALID_CONFIG",
            `${name} is ${JSON.stringify(text)}; expected ${allowed}; unset it for the default ${fallback}`,
            { context: { variable: name, value: text } },
        );
    return n;
}

/** Read the scale from `env`. */
export function faultScale(env: NodeJS.ProcessEnv = process.env): FaultScale {
    return {
        totalMessages: read(
            env,
            FAULT_MESSAGES_ENV,
            320,
            (n) => Number.isInteger(n) && n >= 8 && n <= 1_000_000,
            "an integer from 8 to 1000000",
        ),
        rate: read(env, FAULT_RATE_ENV, 0.1, (n) => Number.isFinite(n) && n >= 0 && n <= 0.5, "a number from 0 to 0.5"),
        seed: read(env, FAULT_SEED_ENV, 7, (n) => Number.isInteger(n) && n >= 0, "a non-negative integer"),
    };
}

/** Messages for scenario `i` of `count`, so they add up to the total. */
export function messagesFor(scale: FaultScale, i: number, count: number): number {
    const base = Math.floor(scale.totalMessages / count);
    return base + (i < scale.totalMessages % count ? 1 : 0);
}

/**
 * Messages for each scenario, so they add up to the total: an even split ({@link messagesFor}), except that a
 * scenario whose plan needs more (`minimums[i]`) gets that many, taken evenly from the others. A scenario that the
 * split would still leave below its minimum gets its minimum, and the total is exceeded.
 *
 * @param scale - The run's scale.
 * @param minimums - Each scenario's minimum, 0 for none.
 */
export function scenarioMessages(scale: FaultScale, minimums: readonly number[]): number[] {
    const count = minimums.length;
    const raised = minimums.map((min, i) => Math.max(min, messagesFor(scale, i, count)) > messagesFor(scale, i, count));
    const fixed = minimums.reduce((sum, min, i) => sum + (raised[i] ? min : 0), 0);
    const rest = minimums.flatMap((_, i) => (raised[i] ? [] : [i]));
    const remaining = { ...scale, totalMessages: Math.max(0, scale.totalMessages - fixed) };
    const out = minimums.map((min) => min);
    rest.forEach((i, j) => {
        out[i] = Math.max(minimums[i]!, messagesFor(remaining, j, rest.length));
    });
    return out;
}
