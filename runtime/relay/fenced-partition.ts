/**
 * A partition whose fence is above the relay's `claimVersion`. Claim refuses a token below the partition's fence
 * (`STALE_FENCING_TOKEN`), and the fence only goes up: once another claimer of the table (a GoBridge relay, or an
 * `OutboxStore` with a higher version) has claimed the partition, this relay can never deliver its records again.
 * That is a fault of the deployment, not a preemption to wait out, so it is loud: an error log naming the
 * partition, both versions and the fix, the `FencedPartitions` metric (which the component alarms on), and the
 * partition's drain ends as failed so its stream doorbells are reported and a sweep fails.
 *
 * @packageDocumentation
 */
import type { DeliveryContext } from "./delivery";
import { OutboxError } from "../errors";
import { DELIVERY_METRICS } from "../observability/metric-catalog";
import type { FencingToken } from "../store/transitions";

/** What the fence holds, as the refusal says it: `latestVersion` from the fence read, else only that it is higher. */
function fenceVersionOf(stale: unknown, token: FencingToken): string {
    const context = stale instanceof OutboxError ? stale.context : undefined;
    const latest = context?.latestVersion;
    return typeof latest === "string" && latest !== "" ? latest : `above ${token.version}`;
}

/**
 * The `INVALID_CONFIG` error of a claim refused by the partition's fence, logged at error and counted once as
 * `FencedPartitions`.
 *
 * @param ctx - Where to log and count.
 * @param partition - The partition whose claim was refused.
 * @param token - The handler's token (its version is `claimVersion`).
 * @param stale - The store's `STALE_FENCING_TOKEN` error.
 */
export function fencedPartitionError(
    ctx: Pick<DeliveryContext, "logger" | "metrics">,
    partition: string,
    token: FencingToken,
    stale: unknown,
): OutboxError {
    const claimVersion = token.version.toString();
    const fenceVersion = fenceVersionOf(stale, token);
    const fix = /^\d+$/.test(fenceVersion) ? `at least ${fenceVersion}` : "at least the fence's version";
    const error = new OutboxError(
        "INVALID_CONFIG",
        `the fence of partition ${partition} is at version ${fenceVersion}, above this relay's claimVersion ${claimVersion}: another claimer of the table (a GoBridge relay, or an OutboxStore with a higher version) claimed it, and this relay can never claim its records again; set claimVersion to ${fix} on every publisher and sweeper of the table (the component's claimVersion arg), or stop the other claimer`,
        { cause: stale, context: { partition, claimVersion, fenceVersion } },
    );
    ctx.metrics.count(DELIVERY_METRICS.fencedPartitions);
    ctx.logger.error("outbox relay: a partition's fence is above claimVersion; its records are not delivered", {
        code: error.code,
        partition,
        claimVersion,
        fenceVersion,
        reason: error.message,
    });
    return error;
}
