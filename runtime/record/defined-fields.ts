/**
 * The fields of an object that are set, for the objects built with only what is set (a published message's
 * metadata, a DLQ body, a redriven message, a handler's config).
 *
 * @packageDocumentation
 */

/**
 * The named fields of `source` whose value is not `undefined`, in the order named: spread into an object literal, it
 * sets each one that is set and leaves the others out (no key holding `undefined`).
 *
 * @param source - Where the values are read.
 * @param keys - The fields, in the order the result holds them.
 */
export function definedFields<T extends object, K extends keyof T>(
    source: T,
    ...keys: K[]
): { [P in K]?: Exclude<T[P], undefined> } {
    const out: { [P in K]?: Exclude<T[P], undefined> } = {};
    for (const key of keys) {
        const value = source[key];
        if (value !== undefined) out[key] = value as Exclude<T[K], undefined>;
    }
    return out;
}
