/**
 * The components' args as the tests check them: the refusal every validator gives a bad input, and the args whose
 * default is one literal value (quoted as JSON wherever a default is documented).
 */
import * as assert from "node:assert/strict";
import { OUTBOX_DEFAULTS } from "../../components/defaults";

/**
 * Asserts that `validate` throws INVALID_CONFIG for exactly one bad arg, naming the component, the arg's path, the
 * bad value, what is allowed (`allowed` matches the arg's line) and a fix.
 *
 * @param validate - What validates the args (throws on a bad one).
 * @param component - How the message names the component: `Outbox "orders"`.
 * @param argPath - The arg's path, `args.batchSize`.
 * @param value - The bad value as the message quotes it.
 * @param allowed - What the arg's line says is allowed.
 */
export function assertRejected(
    validate: () => void,
    component: string,
    argPath: string,
    value: string,
    allowed: RegExp,
): void {
    assert.throws(validate, (e: any) => {
        assert.equal(e.code, "INVALID_CONFIG");
        assert.ok(e.message.startsWith(`${component} has 1 invalid arg:`), e.message);
        const line = e.message.split("\n").find((l: string) => l.includes(`${argPath} is `));
        assert.ok(line, `a line for ${argPath} in:\n${e.message}`);
        assert.ok(line.includes(`${argPath} is ${value};`), `value ${value} in: ${line}`);
        assert.match(line, allowed);
        assert.match(line, /; fix: \S/);
        return true;
    });
}

/** The `Outbox` args whose default is one literal value of {@link OUTBOX_DEFAULTS} (not a range's fallback). */
export const LITERAL_DEFAULT_ARGS = [
    "billingMode",
    "pointInTimeRecovery",
    "deletionProtection",
    "fifo",
    "sweepSchedule",
    "logLevel",
    "alarms",
    "dashboard",
] as const satisfies readonly (keyof typeof OUTBOX_DEFAULTS)[];
