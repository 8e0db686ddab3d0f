/**
 * The global table half of `verify`: on a table with replicas (DescribeTable's `Replicas`, or `--regions`), the
 * non-terminal records (ClaimIndex holds exactly those) that carry no origin stamp, or one naming none of the
 * table's regions. Neither is lost: the home region's relay takes them (see docs/runtime.md, "Global tables"), but
 * not the region that wrote them, so a writer without its `region` shows here.
 *
 * @packageDocumentation
 */
import type { AttributeValue, DynamoDBClient, TableDescription } from "@aws-sdk/client-dynamodb";
import { checkRegionName } from "../../runtime/record/origin";
import { wrapAwsError } from "../../runtime/store/aws-errors";
import { ATTR, CLAIM_INDEX } from "../../runtime/schema";
import type { Checklist } from "../shared/checklist";
import { scanPages } from "../shared/scan-pages";
import { VERIFY_PARTITION_PREFIX } from "./expiry";

/** How many record ids each finding shows. */
export const ORIGIN_SAMPLE_SIZE = 5;

/** What the origin check found, for `--json`. */
export interface OriginReport {
    /** The table's regions the check judged stamps against. */
    readonly regions: readonly string[];
    /** Non-terminal records without `origin_region`. */
    readonly unstamped: number;
    /** Up to {@link ORIGIN_SAMPLE_SIZE} of their record ids. */
    readonly unstampedSample: readonly string[];
    /** Non-terminal records stamped with a region that is none of `regions`. */
    readonly strayStamped: number;
    /** Up to {@link ORIGIN_SAMPLE_SIZE} of their record ids, each with its stamp. */
    readonly straySample: readonly { readonly recordId: string; readonly originRegion: string }[];
}

/**
 * The table's regions: `--regions` when given, else this region and DescribeTable's replica regions, or `undefined`
 * for a table with no replicas (a single-region table, which has no origin to check).
 *
 * @param region - The region verify runs in.
 * @param table - DescribeTable's `Table`.
 * @param regions - `--regions`, when given.
 * @throws OutboxError `INVALID_CONFIG` for a `--regions` entry that is not a region name.
 */
export function tableRegions(
    region: string,
    table: TableDescription,
    regions: readonly string[] | undefined,
): readonly string[] | undefined {
    if (regions !== undefined) return regions.map((r, i) => checkRegionName("verify", `--regions[${i}]`, r));
    const replicas = (table.Replicas ?? []).flatMap((r) => (r.RegionName === undefined ? [] : [r.RegionName]));
    return replicas.length === 0 ? undefined : [...new Set([region, ...replicas])];
}

/**
 * Scan ClaimIndex for unstamped and stray-stamped non-terminal records, and add the finding to `checks`.
 *
 * @returns What was found.
 * @throws OutboxError with the classified code when the Scan fails.
 */
export async function checkOrigins(
    checks: Checklist,
    client: DynamoDBClient,
    tableName: string,
    regions: readonly string[],
): Promise<OriginReport> {
    let unstamped = 0;
    let strayStamped = 0;
    const unstampedSample: string[] = [];
    const straySample: { recordId: string; originRegion: string }[] = [];
    const known = new Set(regions);
    await scanPages(
        client,
        (start) => ({
            TableName: tableName,
            IndexName: CLAIM_INDEX.indexName,
            ProjectionExpression: "#pk, #id, #origin",
            ExpressionAttributeNames: { "#pk": ATTR.pk, "#id": ATTR.recordId, "#origin": ATTR.originRegion },
            ...(start ? { ExclusiveStartKey: start } : {}),
        }),
        (err) => wrapAwsError(err, `verify: scanning ${CLAIM_INDEX.indexName} failed`, { table: tableName }),
        (page) => {
            for (const item of page.Items ?? []) {
                // A verification record a failed cleanup left behind is verify's own, not a writer's.
                if ((item[ATTR.pk]?.S ?? "").startsWith(VERIFY_PARTITION_PREFIX)) continue;
                const recordId = text(item[ATTR.recordId]);
                const stamp = item[ATTR.originRegion]?.S;
                if (stamp === undefined) {
                    unstamped += 1;
                    if (unstampedSample.length < ORIGIN_SAMPLE_SIZE) unstampedSample.push(recordId);
                } else if (!known.has(stamp)) {
                    strayStamped += 1;
                    if (straySample.length < ORIGIN_SAMPLE_SIZE) straySample.push({ recordId, originRegion: stamp });
                }
            }
        },
    );
    const report = { regions, unstamped, unstampedSample, strayStamped, straySample };
    checks.add("origin", `pending records carry the origin stamp of one of ${regions.join(", ")}`, ...verdict(report));
    return report;
}

function text(value: AttributeValue | undefined): string {
    return value?.S ?? "?";
}

/** The line's status and detail: a warning, because each such record is still delivered once, by the home region. */
function verdict(report: OriginReport): ["pass" | "warn", string] {
    const parts: string[] = [];
    if (report.unstamped > 0)
        parts.push(`${report.unstamped} without ${ATTR.originRegion} (e.g. ${report.unstampedSample.join(", ")})`);
    if (report.strayStamped > 0)
        parts.push(
            `${report.strayStamped} stamped with a region that is none of the table's (e.g. ${report.straySample.map((s) => `${s.recordId} in ${s.originRegion}`).join(", ")})`,
        );
    if (parts.length === 0) return ["pass", ""];
    return [
        "warn",
        `${parts.join("; ")}: the home region's relay delivers these, not the region that wrote them; fix: set each writer's region (OutboxWriter region, or AWS_REGION) to its replica's region, and globalTable: true so a writer without one refuses to start`,
    ];
}
