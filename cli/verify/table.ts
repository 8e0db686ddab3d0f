/**
 * The provisioning half of `verify`: the runbook's DescribeTable check (base table and the three indexes, keys,
 * projections, all ACTIVE), TTL on `ttl` and a stream with new images, each as a checklist line with the reason
 * and the fix.
 *
 * @packageDocumentation
 */
import { STREAM_VIEW_TYPE, TTL_ATTRIBUTE } from "../../runtime/schema";
import type { Checklist } from "../shared/checklist";
import { CLAIM_INDEX_RECREATE_CONSEQUENCE } from "../migrate/plan";
import type { IndexFinding, TableShape } from "../shared/table-shape";

function migrateHint(tableName: string, extra = ""): string {
    return `fix: dynamodb-outbox migrate --table ${tableName}${extra} (plan), then add --apply`;
}

function indexLine(checks: Checklist, tableName: string, index: IndexFinding): boolean {
    const { shape } = index;
    const title = `${shape.indexName} ${index.expectedKeys} ${shape.projectionType}, ACTIVE`;
    const id = `index:${shape.indexName}`;
    switch (index.state) {
        case "missing":
            checks.add(
                id,
                title,
                "fail",
                index.indexStatus === "DELETING"
                    ? `being deleted; ${shape.purpose} only once it exists again; ${migrateHint(tableName)}`
                    : `missing: ${shape.purpose}, and preflight rejects the table; ${migrateHint(tableName)}`,
            );
            return false;
        case "wrong-keys":
            checks.add(
                id,
                title,
                "fail",
                `key schema is ${index.actualKeys}; preflight rejects the table. migrate explains the manual fix`,
            );
            return false;
        case "under-projected":
            checks.add(
                id,
                title,
                "fail",
                `projected ${index.projectionType}: every claim fails with "does not project one or more filter attributes". ${migrateHint(tableName, " --recreate-claim-index")}. While it is rebuilt, ${CLAIM_INDEX_RECREATE_CONSEQUENCE}`,
            );
            return false;
        case "over-projected":
        case "ok": {
            if (index.indexStatus !== "ACTIVE") {
                checks.add(
                    id,
                    title,
                    "fail",
                    `${index.indexStatus}: wait until it is ACTIVE (a new index backfills first), then verify again`,
                );
                return false;
            }
            if (index.state === "over-projected") {
                checks.add(
                    id,
                    title,
                    "warn",
                    `projected ${index.projectionType}: works, and costs more per write than ${shape.projectionType}`,
                );
                return true;
            }
            checks.add(id, title, "pass", "");
            return true;
        }
    }
}

/**
 * Add the provisioning checks for a described table.
 *
 * @returns Whether the table can take the live checks (primary key and every index usable and ACTIVE, and no
 *   stream without the new image: preflight refuses one).
 */
export function checkProvisioning(checks: Checklist, tableName: string, shape: TableShape): boolean {
    const active = shape.table.status === "ACTIVE";
    checks.add(
        "table",
        `table "${tableName}" exists and is ACTIVE`,
        active ? "pass" : "fail",
        active ? "" : `status ${shape.table.status}: wait for ACTIVE, then verify again`,
    );
    const keyOk = shape.table.primaryKeyOk;
    checks.add(
        "primary-key",
        `primary key ${shape.table.expectedPrimaryKey}`,
        keyOk ? "pass" : "fail",
        keyOk
            ? ""
            : `actual ${shape.table.actualPrimaryKey}: not an outbox table (a primary key cannot be changed; create one with the Outbox component)`,
    );
    let usable = active && keyOk;
    for (const index of shape.indexes) usable = indexLine(checks, tableName, index) && usable;

    const ttl = shape.ttl;
    const ttlTitle = `TTL enabled on "${TTL_ATTRIBUTE}"`;
    if (ttl.onSchemaAttribute && ttl.status === "ENABLED") {
        checks.add("ttl", ttlTitle, "pass", "");
    } else if (ttl.onSchemaAttribute) {
        checks.add(
            "ttl",
            ttlTitle,
            "warn",
            `${ttl.status}: AWS takes up to an hour; completed records pile up until then`,
        );
    } else if (ttl.attributeName !== undefined && ttl.status !== "DISABLED") {
        checks.add(
            "ttl",
            ttlTitle,
            "fail",
            `${ttl.status} on "${ttl.attributeName}": completed and expired records are never deleted; migrate explains the fix`,
        );
    } else {
        checks.add(
            "ttl",
            ttlTitle,
            "fail",
            `${ttl.status}: completed and expired records are never deleted; ${migrateHint(tableName)}`,
        );
    }

    const stream = shape.stream;
    const streamTitle = `stream enabled with new images (${STREAM_VIEW_TYPE})`;
    if (!stream.enabled) {
        checks.add(
            "stream",
            streamTitle,
            "fail",
            `no stream: the publisher gets nothing and only the sweeper delivers; ${migrateHint(tableName)}`,
        );
    } else if (!stream.hasNewImage) {
        // The store's preflight refuses such a table too, so the live half could only repeat this line.
        usable = false;
        checks.add(
            "stream",
            streamTitle,
            "fail",
            `view type ${stream.viewType}: the publisher needs the new image; change it with the IaC that owns the event source mapping`,
        );
    } else {
        checks.add(
            "stream",
            streamTitle,
            "pass",
            stream.viewType === STREAM_VIEW_TYPE ? "" : `view type ${stream.viewType} (carries the new image)`,
        );
    }
    return usable;
}
