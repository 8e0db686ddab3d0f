/**
 * The small pieces every arg check shares (`validation.ts`, `destination-validation.ts`, `consumer-validation.ts`):
 * whether a value is known yet, how a value is quoted, the check of a plain string against a pattern, and that of an
 * integer against its range.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import type { IntegerLimit } from "../runtime/limits";
import type { OutboxArgs } from "./args";
import type { OutboxArgProblem } from "./arg-problem";

/** A KMS key ARN (not a key id, an alias or an alias ARN). */
export const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

/**
 * Whether a value is not known yet (an Output, a promise, or the engine's unknown) and so cannot be checked now.
 * The engine's unknown reaches the component as `pulumi.unknown` when the package runs as a provider plugin and
 * a preview passes an input that another resource has not produced yet.
 *
 * @param value - An arg's value.
 */
export function isUnknown(value: unknown): boolean {
    return pulumi.Output.isInstance(value) || value instanceof Promise || pulumi.isUnknown(value);
}

/**
 * A value as the messages quote it: its JSON.
 *
 * @param value - An arg's value.
 */
export function show(value: unknown): string {
    return JSON.stringify(value) ?? String(value);
}

/** The string args {@link checkPattern} checks. */
export type PatternArg =
    "importTableName" | "kmsKeyArn" | "topicArn" | "queueArn" | "eventBusArn" | "destinationKmsKeyArn";

/**
 * Checks a plain string arg against `pattern`, adding the problem when it does not match.
 *
 * @param args - The component args.
 * @param key - The arg.
 * @param pattern - What a valid value matches.
 * @param problem - What is allowed, and the fix.
 * @param problems - Where the problem goes.
 * @returns the string when it is plain and matches; `undefined` when it is absent, unknown or invalid.
 */
export function checkPattern(
    args: OutboxArgs,
    key: PatternArg,
    pattern: RegExp,
    problem: Pick<OutboxArgProblem, "allowed" | "fix">,
    problems: OutboxArgProblem[],
): string | undefined {
    const value: unknown = args[key];
    if (value === undefined || isUnknown(value)) return undefined;
    if (typeof value === "string" && pattern.test(value)) return value;
    problems.push({ path: `args.${key}`, value: show(value), ...problem });
    return undefined;
}

/**
 * The plain list an arg holds: `undefined` when it is absent or unknown, or when it is no list (the problem, with
 * what is allowed and the fix, is then added).
 *
 * @param args - The component args.
 * @param key - The arg.
 * @param problem - What is allowed, and the fix.
 * @param problems - Where the problem goes.
 */
export function listArg(
    args: OutboxArgs,
    key: "alarmActions" | "replicaRegions",
    problem: Pick<OutboxArgProblem, "allowed" | "fix">,
    problems: OutboxArgProblem[],
): unknown[] | undefined {
    const value: unknown = args[key];
    if (value === undefined || isUnknown(value)) return undefined;
    if (Array.isArray(value)) return value;
    problems.push({ path: `args.${key}`, value: show(value), ...problem });
    return undefined;
}

/**
 * Checks a known value against an integer range, adding the problem when it is not an integer within it. An absent
 * or unknown value is no problem: the default applies, or AWS checks it at deployment.
 *
 * @param path - The arg's path in the messages, e.g. `args.batchSize`.
 * @param value - The arg's value.
 * @param range - The allowed integers, their unit and the default.
 * @param problems - Where the problem goes.
 */
export function checkIntegerIn(path: string, value: unknown, range: IntegerLimit, problems: OutboxArgProblem[]): void {
    if (value === undefined || isUnknown(value)) return;
    if (typeof value === "number" && Number.isInteger(value) && value >= range.min && value <= range.max) return;
    problems.push({
        path,
        value: show(value),
        allowed: `an integer from ${range.min} to ${range.max} (${range.unit})`,
        fix: `set it within that range, or omit it for the default ${range.fallback}`,
    });
}

/**
 * The problem of an arg that must be an object of known keys and is not an object.
 *
 * @param path - The arg's path in the messages, e.g. `args.transform`.
 * @param value - The arg's value.
 * @param keys - The keys the object takes.
 * @param which - Which of the keys to pass, as the fix says it, e.g. `the keys you need`.
 */
export function notAnObjectProblem(
    path: string,
    value: unknown,
    keys: readonly string[],
    which: string,
): OutboxArgProblem {
    return { path, value: show(value), allowed: "an object", fix: `pass { ${keys.join(", ")} } with ${which}` };
}
