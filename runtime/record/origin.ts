/**
 * Region names and origin scopes (`OriginScope` in schema.ts), checked once for the writer, the store and the relay.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import type { OriginScope } from "../schema";

/** An AWS region name, e.g. `us-east-1`, `us-gov-west-1`, `ap-southeast-5`. */
export const REGION_NAME = /^[a-z]{2,}(-[a-z0-9]+)+-\d{1,2}$/;

function describe(value: unknown): string {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * Whether `value` has an AWS region name's shape.
 *
 * @param value - Anything.
 */
export function isRegionName(value: unknown): value is string {
    return typeof value === "string" && REGION_NAME.test(value);
}

/**
 * Check a region name, wherever it came from.
 *
 * @param who - The setting's owner, for the message, e.g. `OutboxWriter`.
 * @param setting - The setting's name, e.g. `region`.
 * @param value - The value.
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the value and the shape.
 */
export function checkRegionName(who: string, setting: string, value: unknown): string {
    if (isRegionName(value)) return value;
    throw new OutboxError(
        "INVALID_CONFIG",
        `${who}: ${setting} must be an AWS region name like "us-east-1", got ${describe(value)}; give the region of the table replica this code writes to`,
        { context: { setting } },
    );
}

/**
 * Check an origin scope and return a copy, or `undefined` when none is given.
 *
 * @param who - The setting's owner, for messages.
 * @param scope - The scope.
 * @throws OutboxError `INVALID_CONFIG` naming the bad part: a region that is not a region name, `otherRegions` not a
 *   list of them or holding the relay's own region, `home` not a boolean.
 */
export function checkOriginScope(who: string, scope: OriginScope | undefined): OriginScope | undefined {
    if (scope === undefined) return undefined;
    if (typeof scope !== "object" || scope === null)
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: origin must be { region, otherRegions, home }, got ${String(scope)}; omit it for a single-region outbox`,
        );
    const region = checkRegionName(who, "origin.region", scope.region);
    if (!Array.isArray(scope.otherRegions))
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: origin.otherRegions must be the table's other regions as a list, e.g. ["us-west-2"], got ${JSON.stringify(scope.otherRegions)}`,
        );
    const otherRegions = scope.otherRegions.map((r, i) => checkRegionName(who, `origin.otherRegions[${i}]`, r));
    if (otherRegions.includes(region))
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: origin.otherRegions lists the relay's own region ${region}; list only the table's other regions`,
        );
    if (typeof scope.home !== "boolean")
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: origin.home must be true (the one region that also delivers unstamped records) or false, got ${JSON.stringify(scope.home)}`,
        );
    return { region, otherRegions, home: scope.home };
}
