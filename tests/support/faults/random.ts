/**
 * Seeded randomness for the fault scenarios, so a failing run replays exactly.
 */

export { seededRandom } from "../../../dev/emulators/seeded-random";

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
