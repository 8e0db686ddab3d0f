/**
 * The migration planner: from a table's comparison with the schema (and the number of records the backfill
 * would touch) to an ordered list of safe steps, or refusals that explain what cannot be migrated and how to
 * fix it by hand. Pure: `migrate` prints the plan and, with `--apply`, hands it to the executor.
 *
 * Order: TTL and stream first (instant, no index work); then the backfill, so that an index created afterwards
 * is complete, in age order, the moment it turns ACTIVE (reference §12 item 18); then one index change per step,
 * each awaited, because DynamoDB takes one GSI create or delete per UpdateTable call and runs a create's
 * backfill asynchronously.
 *
 * @packageDocumentation
 */
import { CLAIM_INDEX, STREAM_VIEW_TYPE, TTL_ATTRIBUTE, type IndexShape } from "../../runtime/schema";
import type { TableShape } from "../shared/table-shape";

/** One planned change. */
export type MigrationStep =
    /** Wait for index changes already in progress (someone else's) before starting ours. */
    | { readonly kind: "wait-idle"; readonly description: string }
    /** UpdateTimeToLive on the schema's TTL attribute. */
    | { readonly kind: "enable-ttl"; readonly description: string }
    /** UpdateTable with a NEW_IMAGE stream. */
    | { readonly kind: "enable-stream"; readonly description: string }
    /** Give pending/claimed records the index attributes they lack. */
    | { readonly kind: "backfill"; readonly description: string; readonly records: number }
    /** UpdateTable Delete of an index, then wait until it is gone. */
    | { readonly kind: "delete-index"; readonly description: string; readonly indexName: string }
    /** UpdateTable Create of an index, then wait for ACTIVE. */
    | { readonly kind: "create-index"; readonly description: string; readonly shape: IndexShape };

/** Something the tool will not change, with the reason and the fix. */
export interface Refusal {
    /** What is wrong and why the tool will not change it. */
    readonly reason: string;
    /** How to fix it. */
    readonly fix: string;
}

/** The plan: steps to run in order, refusals (any refusal means nothing is applied) and notes. */
export interface MigrationPlan {
    /** The steps, in order. */
    readonly steps: readonly MigrationStep[];
    /** What cannot be migrated. When non-empty, `--apply` changes nothing. */
    readonly refusals: readonly Refusal[];
    /** Things worth knowing that need no change. */
    readonly notes: readonly string[];
}

/** Planner inputs beyond the table. */
export interface PlanOptions {
    /** `--recreate-claim-index`: allow deleting and recreating an under-projected ClaimIndex. */
    readonly recreateClaimIndex: boolean;
    /** Records the backfill would touch (from a counting Scan), or `undefined` when it was not counted. */
    readonly backfillRecords: number | undefined;
    /** Items per backfill Scan page, for the description. */
    readonly pageSize: number;
}

/** The consequence of recreating ClaimIndex, stated wherever the recreate is planned or refused. */
export const CLAIM_INDEX_RECREATE_CONSEQUENCE =
    `claims fail while ${CLAIM_INDEX.indexName} is absent, so delivery stops; nothing is lost: records stay pending, ` +
    `and Persist keeps writing claim_sort, so the rebuilt index is complete once it reports ACTIVE`;

function createDescription(shape: IndexShape, keys: string, provisioned: TableShape["provisionedThroughput"]): string {
    const capacity =
        provisioned === undefined
            ? ""
            : ` with ${provisioned.readCapacityUnits} RCU / ${provisioned.writeCapacityUnits} WCU (the table's)`;
    return `create ${shape.indexName} ${keys} projected ${shape.projectionType}${capacity}, then wait for ACTIVE (${shape.purpose})`;
}

/** What is wrong with the indexes and attribute types that the tool will not change. */
function indexRefusals(shape: TableShape, options: PlanOptions): Refusal[] {
    const refusals: Refusal[] = [];
    for (const index of shape.indexes) {
        if (index.state === "wrong-keys") {
            refusals.push({
                reason: `${index.shape.indexName} exists with key schema ${index.actualKeys}, expected ${index.expectedKeys}. The tool does not delete an index it did not expect: something else may read it`,
                fix: `if nothing else uses it, delete it (aws dynamodb update-table --table-name <table> --global-secondary-index-updates '[{"Delete":{"IndexName":"${index.shape.indexName}"}}]'), wait until it is gone, then run migrate again`,
            });
        }
    }
    for (const conflict of shape.typeConflicts) {
        refusals.push({
            reason: `attribute "${conflict.attributeName}" is declared type ${conflict.actualType} by another index, and ${conflict.indexName} needs it as ${conflict.expectedType}; DynamoDB allows one type per key attribute`,
            fix: `remove or rename the index that declares "${conflict.attributeName}" as ${conflict.actualType}, then run migrate again`,
        });
    }
    const claim = shape.indexes.find((i) => i.shape.indexName === CLAIM_INDEX.indexName);
    if (claim?.state === "under-projected" && !options.recreateClaimIndex) {
        refusals.push({
            reason: `${CLAIM_INDEX.indexName} is projected ${claim.projectionType}, and must be ALL (${CLAIM_INDEX.purpose}); a projection cannot be altered in place, so the index must be deleted and created again`,
            fix: `run again with --recreate-claim-index. Consequence: ${CLAIM_INDEX_RECREATE_CONSEQUENCE}`,
        });
    }
    return refusals;
}

/** What is wrong with TTL and the stream that the tool will not change. */
function tableRefusals(shape: TableShape): Refusal[] {
    const refusals: Refusal[] = [];
    if (
        shape.ttl.attributeName !== undefined &&
        shape.ttl.attributeName !== TTL_ATTRIBUTE &&
        shape.ttl.status !== "DISABLED"
    ) {
        refusals.push({
            reason: `TTL is ${shape.ttl.status} on attribute "${shape.ttl.attributeName}", not "${TTL_ATTRIBUTE}"; a table has one TTL attribute, and switching it would stop whatever relies on "${shape.ttl.attributeName}" from expiring`,
            fix: `if nothing relies on "${shape.ttl.attributeName}", disable TTL (aws dynamodb update-time-to-live --table-name <table> --time-to-live-specification Enabled=false,AttributeName=${shape.ttl.attributeName}), then run migrate again (AWS may refuse a TTL change for up to an hour after the last one)`,
        });
    }
    if (shape.stream.enabled && !shape.stream.hasNewImage) {
        refusals.push({
            reason: `the stream's view type is ${shape.stream.viewType}; the publisher needs new images (${STREAM_VIEW_TYPE}). Changing it means disabling and re-enabling the stream, which gives it a new ARN and strands the event source mapping reading the old one`,
            fix: `change the stream to ${STREAM_VIEW_TYPE} in the IaC that owns the table and its event source mapping, together`,
        });
    }
    return refusals;
}

/** The steps on the table itself: wait for changes in progress, TTL, the stream, and the backfill. */
function tableSteps(shape: TableShape, options: PlanOptions): MigrationStep[] {
    const steps: MigrationStep[] = [];
    const busy =
        shape.table.status !== "ACTIVE" ||
        shape.indexes.some((i) => i.indexStatus !== undefined && i.indexStatus !== "ACTIVE");
    if (busy) {
        const activity = [
            `table ${shape.table.status}`,
            ...shape.indexes
                .filter((i) => i.indexStatus !== undefined && i.indexStatus !== "ACTIVE")
                .map((i) => `${i.shape.indexName} ${i.indexStatus}`),
        ];
        steps.push({
            kind: "wait-idle",
            description: `wait for the changes in progress to finish (${activity.join(", ")})`,
        });
    }
    if (!shape.ttl.onSchemaAttribute) {
        steps.push({
            kind: "enable-ttl",
            description: `enable TTL on "${TTL_ATTRIBUTE}" (only terminal records and fence rows carry it, so TTL never reaps undelivered work)`,
        });
    }
    if (!shape.stream.enabled) {
        steps.push({
            kind: "enable-stream",
            description: `enable the stream with view type ${STREAM_VIEW_TYPE} (the publisher reads new images; wire its event source mapping to the new stream ARN)`,
        });
    }
    if (options.backfillRecords === undefined || options.backfillRecords > 0) {
        const count = options.backfillRecords === undefined ? "the" : `${options.backfillRecords}`;
        steps.push({
            kind: "backfill",
            records: options.backfillRecords ?? 0,
            description: `backfill ${count} pending/claimed record(s) missing claim_sort or has_expiry, so ClaimIndex and ExpiryIndex see them (paged Scan, ${options.pageSize} items a page; idempotent, resumable)`,
        });
    }
    return steps;
}

/** One step per index change, in schema order: create a missing index; delete, then create, an under-projected one. */
function indexSteps(shape: TableShape): MigrationStep[] {
    const steps: MigrationStep[] = [];
    for (const index of shape.indexes) {
        if (index.state === "missing") {
            steps.push({
                kind: "create-index",
                shape: index.shape,
                description: createDescription(index.shape, index.expectedKeys, shape.provisionedThroughput),
            });
        } else if (index.state === "under-projected") {
            steps.push({
                kind: "delete-index",
                indexName: index.shape.indexName,
                description: `delete ${index.shape.indexName} (projected ${index.projectionType}), then wait until it is gone. Consequence: ${CLAIM_INDEX_RECREATE_CONSEQUENCE}`,
            });
            steps.push({
                kind: "create-index",
                shape: index.shape,
                description: createDescription(index.shape, index.expectedKeys, shape.provisionedThroughput),
            });
        }
    }
    return steps;
}

/**
 * Plan the migration of a table to the schema.
 *
 * @param shape - The table compared with the schema.
 * @param options - Flags and the backfill count.
 */
export function planMigration(shape: TableShape, options: PlanOptions): MigrationPlan {
    if (!shape.table.primaryKeyOk) {
        const refusal: Refusal = {
            reason: `the primary key is ${shape.table.actualPrimaryKey}, expected ${shape.table.expectedPrimaryKey}. A table's primary key cannot be changed, and an outbox on another key is unsafe (a PK-only table keeps one record per partition and drops the rest as duplicates)`,
            fix: "create a new table with the Outbox component (or OutboxStore.createTable), point the writers at it, and drain or retire the old one",
        };
        return { steps: [], refusals: [refusal], notes: [] };
    }
    const refusals = [...indexRefusals(shape, options), ...tableRefusals(shape)];
    const notes = shape.indexes
        .filter((index) => index.state === "over-projected")
        .map(
            (index) =>
                `${index.shape.indexName} is projected ${index.projectionType}; ${index.shape.projectionType} is enough. It works, and every write it indexes costs more; recreate it by hand if that matters`,
        );
    if (refusals.length > 0) return { steps: [], refusals, notes };
    return { steps: [...tableSteps(shape, options), ...indexSteps(shape)], refusals, notes };
}
