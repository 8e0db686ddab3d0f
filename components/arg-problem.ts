/**
 * One invalid arg value, as the checks of `validation.ts`, `arg-checks.ts`, `destination-validation.ts` and
 * `payload-validation.ts` report it. It sits below all four, so none of them needs another to be understood.
 *
 * @packageDocumentation
 */

/** One invalid arg value. */
export interface OutboxArgProblem {
    /** The arg path, e.g. `args.maximumRetryAttempts`. */
    readonly path: string;
    /** The value given, as JSON. */
    readonly value: string;
    /** What is allowed. */
    readonly allowed: string;
    /** How to fix it. */
    readonly fix: string;
}
