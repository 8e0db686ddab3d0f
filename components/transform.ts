/**
 * The `transform` escape hatch: a caller's partial args merged over the args the component computed.
 *
 * @packageDocumentation
 */

/**
 * `computed` with every top-level key of `override` replacing the component's value (a shallow merge, as in
 * SST's `transform`). Nested objects are replaced whole, so an override of `ttl` must give the whole `ttl`.
 * Keys explicitly set to `undefined` in `override` remove the component's value.
 */
export function mergeArgs<T extends object>(computed: T, override: Partial<T> | undefined): T {
    return override === undefined ? computed : { ...computed, ...override };
}
