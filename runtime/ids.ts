/**
 * Sortable unique message ids (ULID layout: 48-bit millisecond time, 80 random bits, Crockford base 32,
 * 26 characters). Ids from one generator are strictly increasing, also within one millisecond, so an
 * outbox record's id sorts in write order. The alphabet is valid everywhere a record id travels: the SK
 * (no `#` or `%`, so no escaping), an SNS FIFO `MessageDeduplicationId` and a message attribute.
 *
 * The generator keeps its state in its own closure, never at module level, so it survives Pulumi's
 * by-value serialization.
 *
 * @packageDocumentation
 */
import { randomBytes } from "node:crypto";
import type { Clock } from "./ports";
import { systemClock } from "./ports";

/** Produces one new id per call. */
export type IdGenerator = () => string;

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const MAX_TIME_MS = 2 ** 48 - 1;

function encodeTime(ms: number): string {
    let out = "";
    let rest = ms;
    for (let i = 0; i < TIME_CHARS; i += 1) {
        out = CROCKFORD.charAt(rest % 32) + out;
        rest = Math.floor(rest / 32);
    }
    return out;
}

function randomDigits(): number[] {
    const bytes = randomBytes(RANDOM_CHARS);
    const digits: number[] = [];
    for (let i = 0; i < RANDOM_CHARS; i += 1) digits.push(bytes[i]! % 32);
    return digits;
}

/**
 * Create a monotonic ULID generator.
 *
 * @param clock - the time source of the id's time part. @default systemClock
 * @returns a function that returns a new 26-character id on every call, strictly greater than the
 *   previous one from the same generator.
 * @example
 * const nextId = createIdGenerator();
 * nextId(); // "01JD3V5N0Q8J6X1W2Y3Z4A5B6C"
 */
export function createIdGenerator(clock: Clock = systemClock): IdGenerator {
    let lastMs = -1;
    let last: number[] = [];
    return () => {
        const now = Math.min(Math.max(0, Math.floor(clock.now())), MAX_TIME_MS);
        if (now > lastMs) {
            lastMs = now;
            last = randomDigits();
        } else {
            // Same millisecond (or the clock stepped back): increment the random part so ids stay ordered.
            let i = RANDOM_CHARS - 1;
            while (i >= 0 && last[i] === 31) {
                last[i] = 0;
                i -= 1;
            }
            if (i < 0) {
                lastMs += 1;
                last = randomDigits();
            } else {
                last[i] = last[i]! + 1;
            }
        }
        return encodeTime(lastMs) + last.map((d) => CROCKFORD.charAt(d)).join("");
    };
}

/**
 * The millisecond timestamp encoded in a ULID produced by {@link createIdGenerator}, or `undefined` for other strings.
 *
 * @param id - A message id.
 */
export function idTimestamp(id: string): number | undefined {
    if (id.length !== TIME_CHARS + RANDOM_CHARS) return undefined;
    let ms = 0;
    for (let i = 0; i < TIME_CHARS; i += 1) {
        const d = CROCKFORD.indexOf(id.charAt(i));
        if (d < 0) return undefined;
        ms = ms * 32 + d;
    }
    return ms;
}
