/**
 * A seeded PRNG (mulberry32) for the fault scenarios, so a failing run replays exactly.
 */

/** A function returning numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/**
 * A fault decision at `rate` that always fires at its first opportunity: every fault a scenario names is injected
 * at least once even at CI scale, while a large run keeps the rate. A rate of 0 never fires.
 *
 * Called with `chances`, it fires with probability `1 − (1 − rate)^chances`: the rate applies per chance, e.g. per
 * 10 records an invocation carries.
 *
 * @param rate - Probability per opportunity, 0 to 1.
 * @param random - The seeded source.
 */
export function faultDice(rate: number, random: () => number): (chances?: number) => boolean {
    let first = true;
    return (chances = 1) => {
        if (rate <= 0) return false;
        const fire = first || random() < 1 - (1 - rate) ** Math.max(1, chances);
        first = false;
        return fire;
    };
}
