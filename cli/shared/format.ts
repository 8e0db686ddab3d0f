/**
 * Formatting shared by the command's messages.
 *
 * @packageDocumentation
 */

/** Seconds with one decimal, for progress and durations. */
export function seconds(ms: number): string {
    return `${(ms / 1000).toFixed(1)} s`;
}
