/**
 * Bounded concurrency without a library: a counter of slots, and a map over items that keeps at most `limit` of
 * them in flight. Both are created inside the functions that use them (Pulumi serializes runtime code by value,
 * and a module-level Set or Map would not survive it).
 *
 * @packageDocumentation
 */

/** At most `limit` holders at a time; the others wait in the order they asked. */
export function callSlots(limit: number): { acquire(): Promise<void>; release(): void } {
    let held = 0;
    const waiting: (() => void)[] = [];
    return {
        acquire() {
            if (held < limit) {
                held += 1;
                return Promise.resolve();
            }
            return new Promise<void>((resolve) => waiting.push(resolve));
        },
        release() {
            const next = waiting.shift();
            if (next !== undefined) next();
            else held -= 1;
        },
    };
}

/**
 * Run `fn` on every item, at most `limit` at once, and resolve with the results in the items' order once every
 * call has ended. A call that throws does not stop the others; the first error is thrown after all have ended.
 *
 * @param items - What to work on.
 * @param limit - The most calls in flight.
 * @param fn - The work for one item.
 */
export async function mapBounded<T, R>(
    items: readonly T[],
    limit: number,
    fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
    const slots = callSlots(Math.max(1, limit));
    const settled = await Promise.allSettled(
        items.map(async (item, i) => {
            await slots.acquire();
            try {
                return await fn(item, i);
            } finally {
                slots.release();
            }
        }),
    );
    const thrown = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (thrown !== undefined) throw thrown.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
}
