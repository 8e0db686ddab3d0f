/**
 * A generated case's messages made real: each {@link MessageSpec} becomes an `OutboxMessage`, its fill grown to the
 * edge the writer itself draws. The edge is found by asking the writer, not by a figure written here: the longest
 * fill `OutboxWriter.check` accepts (every limit it checks before any I/O: the item size after every transition, SNS's
 * 256 KiB with the longest source, the DLQ's, the attribute count, the key sizes, the FIFO group rules, the type's
 * 128), or, for `offload`, the longest the claim check keeps inline (`prepareMessage` with the writer's plan). Then
 * `delta` characters more or fewer. What the writer then makes of the message is the case.
 *
 * @packageDocumentation
 */
import { claimCheckPlan } from "../../../runtime/claim-check/offload";
import { isOutboxError } from "../../../runtime/errors";
import { prepareMessage, type MessageRules } from "../../../runtime/writer/outbox-message";
import type { OutboxMessage, OutboxWriter, OutboxWriterOptions } from "../../../runtime/writer/writer";
import type { EdgeCase, Fill, MessageSpec } from "./cases";
import { filler, textOf } from "./text";

/** The longest fill tried, in code points: past every inline limit, and a claim check's payload of up to ~1 MB. */
const MAX_FILL = 300_000;

/** A message made real, with what the checks after the write need to know of it. */
export interface RealMessage {
    readonly index: number;
    readonly spec: MessageSpec;
    readonly message: OutboxMessage;
    /** The fill's length in code points, when the message has a fill. */
    readonly fillLength?: number;
}

/** The case's clock time the expiries are set from. */
function expiryOf(spec: MessageSpec, t0: number): Date | undefined {
    switch (spec.expiry) {
        case "none":
            return undefined;
        case "far":
            return new Date(t0 + 86_400_000);
        case "lapsing":
            return new Date(t0 + 30_000);
        case "past":
            return new Date(t0 - 1_000);
    }
}

/** A valid W3C traceparent, one per message. */
function traceparentOf(index: number): string {
    return `00-${(index + 1).toString(16).padStart(32, "0")}-${"0".repeat(15)}${index + 1}-01`;
}

/** Where a fill goes once the message is known: an ordering key only on a keyed message, a payload that can hold text. */
function placeOf(fill: Fill, spec: MessageSpec): Fill["place"] {
    if (fill.place === "orderingKey" && spec.key === undefined) return "payload";
    return fill.place;
}

/** The message of `spec` with a fill of `count` code points (0: none). */
function build(c: EdgeCase, spec: MessageSpec, index: number, t0: number, count: number): OutboxMessage {
    const place = spec.fill !== undefined ? placeOf(spec.fill, spec) : undefined;
    const grow = (at: Fill["place"], base: string) =>
        place === at && spec.fill !== undefined ? base + filler(spec.fill.pattern, count) : base;
    const headers: Record<string, string> = {};
    spec.headers.forEach((h, i) => {
        headers[textOf(h.name, `h${i}`)] = textOf(h.value);
    });
    if (place === "header") {
        const first = Object.keys(headers)[0] ?? "h0";
        headers[first] = grow("header", headers[first] ?? "");
    }
    const body = grow("payload", textOf(spec.payload.text));
    const shape = place === "payload" && spec.payload.shape === "number" ? "object" : spec.payload.shape;
    const payload =
        shape === "object"
            ? { n: index, text: body }
            : shape === "string"
              ? body
              : shape === "array"
                ? [index, body]
                : index;
    const expiresAt = expiryOf(spec, t0);
    const key = spec.key !== undefined ? grow("orderingKey", textOf(c.keys[spec.key]!)) : undefined;
    return {
        partition: grow("partition", textOf(c.partitions[spec.partition]!)),
        type: grow("type", textOf(spec.type)),
        payload,
        headers,
        ...(spec.id !== undefined || place === "id"
            ? { id: grow("id", textOf(spec.id ?? { pattern: [], units: 0 }, String(index))) }
            : {}),
        ...(key !== undefined ? { orderingKey: key } : {}),
        ...(spec.traceparent ? { traceparent: traceparentOf(index) } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
    };
}

/** Whether `accepts` holds, an `OutboxError` counting as no; any other error is the writer's fault and is thrown. */
function holds(accepts: () => boolean): boolean {
    try {
        return accepts();
    } catch (err) {
        if (isOutboxError(err)) return false;
        throw err;
    }
}

/** The largest n in [1, MAX_FILL] with `ok(n)`, `ok` holding up to some n and not after; 0 when `ok(1)` does not hold. */
function longest(ok: (n: number) => boolean): number {
    if (!ok(1)) return 0;
    let good = 1;
    let bad = 2;
    while (bad <= MAX_FILL && ok(bad)) {
        good = bad;
        bad *= 2;
    }
    if (bad > MAX_FILL) return ok(MAX_FILL) ? MAX_FILL : longestBetween(ok, good, MAX_FILL);
    return longestBetween(ok, good, bad);
}

function longestBetween(ok: (n: number) => boolean, good: number, bad: number): number {
    while (bad - good > 1) {
        const mid = Math.floor((good + bad) / 2);
        if (ok(mid)) good = mid;
        else bad = mid;
    }
    return good;
}

/**
 * The case's messages, each at its edge.
 *
 * @param measure - A writer with the case's options on the case's clock, used only to `check` (no I/O).
 * @param options - Those options, for the claim check's plan.
 */
export function realizeMessages(
    c: EdgeCase,
    t0: number,
    measure: OutboxWriter,
    options: OutboxWriterOptions,
): RealMessage[] {
    const plan = claimCheckPlan(options.largePayloads, "edges");
    const rules: MessageRules = {
        newId: () => "01HZZZZZZZZZZZZZZZZZZZZZZZ",
        generatedIdsNeedGuard: false,
        fifo: false,
        claimCheck: plan,
    };
    return c.messages.map((spec, index) => {
        const fill = spec.fill;
        const at = (count: number) => build(c, spec, index, t0, count);
        if (fill === undefined) return { index, spec, message: at(0) };
        const ok =
            fill.target === "offload"
                ? (n: number) => holds(() => prepareMessage(at(n), 0, rules).put === undefined)
                : (n: number) => holds(() => (measure.check({ messages: [at(n)] }), true));
        const edge = longest(ok);
        const count = Math.max(1, (edge === 0 ? 1 : edge) + fill.delta);
        return { index, spec, message: at(count), fillLength: count };
    });
}
