/**
 * The writer's origin stamp: which region it writes `origin_region` as (`ATTR.originRegion` in schema.ts), and when
 * it must have one.
 *
 * The stamp is written whenever a region is known (the `region` setting, else `AWS_REGION`, which Lambda always
 * sets): on a single-region table nothing reads it (today's filter and claims ignore it), and records written before
 * replicas are added are then already stamped. It is required only when the writer is told the table is global
 * (`globalTable: true`): there an unstamped record is not delivered by its own region but by the home region (see
 * `OriginScope` in schema.ts), a silent cross-region detour a writer that knows better should refuse.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import { checkRegionName } from "../record/origin";

function describe(value: unknown): string {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * The region the writer stamps its records with, or `undefined` for no stamp.
 *
 * @param region - The writer's `region` setting.
 * @param globalTable - The writer's `globalTable` setting.
 * @param environment - The process environment (for `AWS_REGION`).
 * @throws OutboxError `INVALID_CONFIG` for a malformed region, or for `globalTable: true` with no region at all.
 */
export function writerOriginRegion(
    region: string | undefined,
    globalTable: boolean | undefined,
    environment: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
    if (globalTable !== undefined && typeof globalTable !== "boolean")
        throw new OutboxError(
            "INVALID_CONFIG",
            `OutboxWriter: globalTable must be true or false, got ${describe(globalTable)}; omit it for false`,
        );
    if (region !== undefined) return checkRegionName("OutboxWriter", "region", region);
    const fromEnvironment = environment.AWS_REGION;
    if (fromEnvironment !== undefined && fromEnvironment !== "")
        return checkRegionName("OutboxWriter", "region (from AWS_REGION)", fromEnvironment);
    if (globalTable === true)
        throw new OutboxError(
            "INVALID_CONFIG",
            'OutboxWriter: globalTable is true but no region is known: neither the region setting nor AWS_REGION is set, and on a global table every record must carry the region that wrote it so that region delivers it; pass region (the replica\'s region, e.g. "us-east-1") or set AWS_REGION',
        );
    return undefined;
}
