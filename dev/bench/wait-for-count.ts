/**
 * The bench's wait for a relay to get through its messages: poll a count until it reaches the target, and fail
 * once it has not moved for too long, so that a relay that stalls ends the run with the figures it reached instead
 * of hanging it. Used by the drain and the end-to-end runs.
 *
 * @packageDocumentation
 */

/** How long a bench run waits for a count that does not move before it fails. */
export const STALL_TIMEOUT_MS = 60_000;

/**
 * Resolve once `count()` reaches `target`, polling every 10 ms; reject when it stays the same for
 * {@link STALL_TIMEOUT_MS}.
 *
 * @param what - names the run and the count in the error, e.g. `bench ours: delivered`.
 */
export async function waitForCount(count: () => number, target: number, what: string): Promise<void> {
    let lastCount = -1;
    let lastMove = Date.now();
    while (count() < target) {
        if (count() !== lastCount) {
            lastCount = count();
            lastMove = Date.now();
        } else if (Date.now() - lastMove > STALL_TIMEOUT_MS) {
            throw new Error(`${what}: ${count()}/${target}, nothing moved for ${STALL_TIMEOUT_MS / 1000} s`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
    }
}
