/**
 * Key homing on a global table: each partition's keyed messages are written from one region only, its home, so the
 * partition's FENCE row has one writer region and its key's records one order across regions. The writer checks
 * every keyed message of a request against the rule before anything is allocated or written; keyless messages have
 * no order to keep and are never homed.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import type { Logger } from "../ports";
import { checkRegionName } from "../record/origin";
import { describeValue } from "../record/transact-items";
import { invalidPayload } from "../record/payload-error";
import type { PreparedMessage } from "./outbox-message";

/** The writer's key-homing rule (the `keyHoming` option of `OutboxWriter`): see docs/runtime.md, "Global tables". */
export interface KeyHoming {
    /**
     * The table's regions (its replicas'): every region `homeOf` may name. The writer's own `region` must be one
     * of them.
     */
    readonly regions: readonly string[];
    /**
     * The home region of a partition (a message's `partition`): a function, or a map from partition to region. It
     * is asked about the partitions of keyed messages only (those with an `orderingKey`); it must name one of
     * `regions`. A function that throws, or a map without the partition, fails the write with `INVALID_CONFIG`.
     */
    readonly homeOf: ((partition: string) => string) | Readonly<Record<string, string>>;
    /**
     * What a keyed message whose partition is homed in another region does: `"refuse"` refuses the whole write
     * (`INVALID_PAYLOAD`, with `homeRegion` in the error's context, before anything is allocated or written);
     * `"warn"` writes it and warns on the writer's `logger`, which must then be given.
     * @default "refuse"
     */
    readonly onForeignWrite?: "refuse" | "warn";
}

/**
 * A checked {@link KeyHoming}: checks each keyed message's partition against its home, and under `"warn"` logs each
 * foreign one when `warn` is true (a write; `OutboxWriter.check` writes nothing and logs nothing).
 * Throws `INVALID_PAYLOAD` for a foreign write under `"refuse"`; `INVALID_CONFIG` for a `homeOf` that throws or
 * names no region of `regions`.
 */
export type HomingCheck = (prepared: readonly PreparedMessage[], warn: boolean) => void;

/**
 * Check the writer's `keyHoming` option and build its check, or `undefined` without the option.
 *
 * @param homing - The option.
 * @param region - The writer's region (its origin stamp), `undefined` when it has none.
 * @param logger - The writer's logger, `undefined` when none was given.
 * @throws OutboxError `INVALID_CONFIG` for a malformed option, a writer without a region, a region outside
 *   `regions`, or `"warn"` without a logger.
 */
export function keyHomingCheck(
    homing: KeyHoming | undefined,
    region: string | undefined,
    logger: Logger | undefined,
): HomingCheck | undefined {
    if (homing === undefined) return undefined;
    if (typeof homing !== "object" || homing === null)
        throw config(
            `keyHoming must be { regions, homeOf, onForeignWrite? }, got ${describeValue(homing)}; omit it to write every key from any region`,
        );
    if (!Array.isArray(homing.regions) || homing.regions.length === 0)
        throw config(
            `keyHoming.regions must list the table's regions, e.g. ["us-east-1", "us-west-2"], got ${describeValue(homing.regions)}`,
        );
    const regions = homing.regions.map((r, i) => checkRegionName("OutboxWriter", `keyHoming.regions[${i}]`, r));
    const homeOf = homing.homeOf;
    if (typeof homeOf !== "function" && (typeof homeOf !== "object" || homeOf === null))
        throw config(
            `keyHoming.homeOf must be a function from partition to region, or a map { [partition]: region }, got ${describeValue(homeOf)}`,
        );
    const mode = homing.onForeignWrite ?? "refuse";
    if (mode !== "refuse" && mode !== "warn")
        throw config(
            `keyHoming.onForeignWrite must be "refuse" or "warn", got ${describeValue(mode)}; omit it for "refuse"`,
        );
    if (region === undefined)
        throw config(
            "keyHoming needs the writer's region, to tell a key's home from elsewhere, and none is known: neither the region setting nor AWS_REGION is set; pass region (this replica's region, e.g. \"us-east-1\")",
        );
    if (!regions.includes(region))
        throw config(
            `keyHoming.regions ${JSON.stringify(regions)} does not include the writer's region ${JSON.stringify(region)}; list every region of the table, this one included`,
        );
    if (mode === "warn" && logger === undefined)
        throw config(
            'keyHoming.onForeignWrite "warn" needs the writer\'s logger, or the warning would go nowhere; pass logger, or use "refuse"',
        );
    const home = homeLookup(homeOf, regions);
    return (prepared, warn) => {
        const checked = new Map<string, string>();
        for (const p of prepared) {
            if (p.message.orderingKey === undefined) continue;
            const partition = p.message.partition;
            const homeRegion = checked.get(partition) ?? home(partition);
            checked.set(partition, homeRegion);
            if (homeRegion === region) continue;
            const context = { messageIndex: p.index, partition, region, homeRegion };
            if (mode === "refuse")
                throw invalidPayload(
                    `write: messages[${p.index}] (partition ${describeValue(partition)}, orderingKey ${describeValue(p.message.orderingKey)}) is homed in ${homeRegion}, and this writer is in ${region}; nothing was written; write it from ${homeRegion}'s writer, or change keyHoming.homeOf`,
                    context,
                );
            if (warn)
                logger!.warn("outbox write of a partition homed in another region", {
                    ...context,
                    messageId: p.id,
                });
        }
    };
}

/** `homeOf` as a function that names one of `regions` or throws `INVALID_CONFIG`. */
function homeLookup(homeOf: KeyHoming["homeOf"], regions: readonly string[]): (partition: string) => string {
    return (partition: string): string => {
        let answer: unknown;
        if (typeof homeOf === "function") {
            try {
                answer = homeOf(partition);
            } catch (err) {
                throw config(
                    `keyHoming.homeOf threw for partition ${describeValue(partition)}; nothing was written; make it return one of ${JSON.stringify(regions)} for every partition`,
                    { partition },
                    err,
                );
            }
        } else {
            answer = Object.hasOwn(homeOf, partition) ? homeOf[partition] : undefined;
            if (answer === undefined)
                throw config(
                    `keyHoming.homeOf has no home for partition ${describeValue(partition)}; nothing was written; add it to the map (one of ${JSON.stringify(regions)}), or pass a function`,
                    { partition },
                );
        }
        if (typeof answer !== "string" || !regions.includes(answer))
            throw config(
                `keyHoming.homeOf gave ${describeValue(answer)} as the home of partition ${describeValue(partition)}, which is none of keyHoming.regions ${JSON.stringify(regions)}; nothing was written; make it return one of them`,
                { partition },
            );
        return answer;
    };
}

function config(message: string, context?: Record<string, string>, cause?: unknown): OutboxError {
    return new OutboxError("INVALID_CONFIG", `OutboxWriter: ${message}`, {
        ...(context !== undefined ? { context } : {}),
        ...(cause !== undefined ? { cause } : {}),
    });
}
