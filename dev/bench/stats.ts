/**
 * Small statistics for the demo and the benchmark: percentiles of latency samples and rounding for reports.
 *
 * @packageDocumentation
 */

/**
 * The `p`-th percentile (0–100) of `samples` by the nearest-rank method; `NaN` for no samples.
 *
 * @param samples - The values, in any order (not modified).
 * @param p - The percentile, e.g. 50 or 99.
 */
export function percentile(samples: readonly number[], p: number): number {
    if (samples.length === 0) return Number.NaN;
    const sorted = [...samples].sort((a, b) => a - b);
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return sorted[rank - 1]!;
}

/** The median of `samples`. */
export function median(samples: readonly number[]): number {
    return percentile(samples, 50);
}

/** Round to `digits` decimals (for figures in JSON and tables). */
export function round(value: number, digits = 2): number {
    const f = 10 ** digits;
    return Math.round(value * f) / f;
}
