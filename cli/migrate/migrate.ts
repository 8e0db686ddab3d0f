/**
 * `dynamodb-outbox migrate`: make a table match `runtime/schema.ts` safely. By default it prints the plan and
 * changes nothing; `--apply` carries it out step by step, and a second `--apply` finds nothing to do.
 *
 * @packageDocumentation
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { backfillIndexAttributes } from "./backfill";
import { errorText, seconds, type Output } from "../shared/io";
import { applyPlan, type StepOutcome } from "./apply";
import { findOutboxEvidence, OUTBOX_SIGNS } from "./evidence";
import { planMigration, type MigrationPlan, type Refusal } from "./plan";
import { describeOutboxTable } from "../shared/table-state";
import type { TableShape } from "../shared/table-shape";

/** migrate's defaults. */
export const MIGRATE_DEFAULTS = {
    /** Bound on each wait (an index backfill on a large table takes a while). */
    timeoutMs: 3_600_000,
    /** Poll interval. */
    pollIntervalMs: 5_000,
    /** Items per backfill Scan page. */
    pageSize: 100,
} as const;

/** What migrate needs. */
export interface MigrateOptions {
    /** The client. */
    readonly client: DynamoDBClient;
    /** The table. */
    readonly tableName: string;
    /** The region, for the report. */
    readonly region: string;
    /** The endpoint, when not AWS's. */
    readonly endpoint?: string;
    /** `--apply`. */
    readonly apply: boolean;
    /** `--recreate-claim-index`. */
    readonly recreateClaimIndex: boolean;
    /**
     * `--confirm-table <the table's name>`: `--apply` may change a table that shows no sign of being an outbox
     * (`cli/migrate/evidence.ts`). @default false
     */
    readonly confirmedTable?: boolean;
    /** `--timeout`, ms. @default 3600000 */
    readonly timeoutMs?: number;
    /** `--poll-interval`, ms. @default 5000 */
    readonly pollIntervalMs?: number;
    /** `--page-size`. @default 100 */
    readonly pageSize?: number;
    /**
     * `--expiry-shards`: the writers' `expiryShards`. The backfill gives a record without `has_expiry` the value
     * those writers would have written (and first raises the table's expiry shards mark). @default 1
     */
    readonly expiryShards?: number;
    /** Output. */
    readonly out: Output;
}

type StepStatus = "planned" | "done" | "failed" | "not-run";

function stepJson(plan: MigrationPlan, outcomes: readonly StepOutcome[], failedAt: number | undefined) {
    return plan.steps.map((step, i) => {
        const outcome = outcomes[i];
        const status: StepStatus =
            outcome !== undefined ? "done" : failedAt === i ? "failed" : failedAt !== undefined ? "not-run" : "planned";
        return {
            kind: step.kind,
            description: step.description,
            status,
            ...(outcome === undefined ? {} : { durationMs: outcome.durationMs }),
            ...(outcome?.backfill === undefined ? {} : { backfill: outcome.backfill }),
        };
    });
}

/**
 * Run migrate.
 *
 * @returns The exit code: 0 when the plan is empty, printed, or applied; 1 when refused or a step failed.
 */
export async function runMigrate(options: MigrateOptions): Promise<number> {
    const { out, tableName, client } = options;
    const pageSize = options.pageSize ?? MIGRATE_DEFAULTS.pageSize;
    const wait = {
        timeoutMs: options.timeoutMs ?? MIGRATE_DEFAULTS.timeoutMs,
        pollIntervalMs: options.pollIntervalMs ?? MIGRATE_DEFAULTS.pollIntervalMs,
    };
    const mode = options.apply ? "apply" : "plan";
    const base = {
        command: "migrate",
        table: tableName,
        region: options.region,
        ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
        mode,
    };
    out.line(
        `dynamodb-outbox migrate: table "${tableName}" (${options.region}${options.endpoint === undefined ? "" : `, ${options.endpoint}`}) — ${options.apply ? "applying" : "plan only, nothing will change"}`,
    );

    const described = await describeOutboxTable(client, tableName);
    if (described === undefined) {
        const refusal = {
            reason: `table "${tableName}" does not exist in ${options.region}`,
            fix: "check --table and --region; migrate changes an existing table, the Outbox component (or OutboxStore.createTable) creates one",
        };
        out.line(`refused: ${refusal.reason}\n  fix: ${refusal.fix}`);
        out.result({ ...base, ok: false, refusals: [refusal], notes: [], steps: [] });
        return 1;
    }

    const { plan, scanned, unconfirmed } = await planWithBackfill(options, described.shape, pageSize);
    for (const note of plan.notes) out.line(`note: ${note}`);
    const refusals = plan.refusals.length > 0 ? plan.refusals : options.apply && unconfirmed ? [unconfirmed] : [];
    if (refusals.length > 0) {
        out.line("refused: nothing was changed.");
        for (const r of refusals) out.line(`  ✗ ${r.reason}\n    fix: ${r.fix}`);
        out.result({
            ...base,
            ok: false,
            refusals,
            notes: plan.notes,
            steps: plan.refusals.length > 0 ? [] : stepJson(plan, [], undefined),
        });
        return 1;
    }
    if (plan.steps.length === 0) {
        out.line(
            `nothing to do: the table matches the schema${scanned === undefined ? "" : ` and no record needs a backfill (${scanned} item(s) scanned)`}.`,
        );
        out.result({ ...base, ok: true, refusals: [], notes: plan.notes, steps: [] });
        return 0;
    }
    if (!options.apply) {
        out.line("plan:");
        plan.steps.forEach((step, i) => out.line(`  ${i + 1}. ${step.description}`));
        if (unconfirmed !== undefined) out.line(`note: ${unconfirmed.reason}\n  fix: ${unconfirmed.fix}`);
        out.line("nothing was changed. Run again with --apply to carry out the plan.");
        out.result({
            ...base,
            ok: true,
            refusals: [],
            notes: unconfirmed === undefined ? plan.notes : [...plan.notes, unconfirmed.reason],
            steps: stepJson(plan, [], undefined),
        });
        return 0;
    }

    return applyAndReport(options, { plan, shape: described.shape, wait, pageSize, base });
}

/**
 * The plan, its backfill counted only when nothing refuses it and the table shows a sign of being an outbox (a
 * table with no outbox item has no record to backfill). `unconfirmed` is the refusal `--apply` gets when the table
 * shows no such sign and `--confirm-table` was not given.
 */
async function planWithBackfill(
    options: MigrateOptions,
    shape: TableShape,
    pageSize: number,
): Promise<{ plan: MigrationPlan; scanned: number | undefined; unconfirmed: Refusal | undefined }> {
    // Refusals do not depend on the backlog: decide them before reading the whole table to count it.
    const planOptions = { recreateClaimIndex: options.recreateClaimIndex, pageSize };
    const unCounted = planMigration(shape, { ...planOptions, backfillRecords: undefined });
    if (unCounted.refusals.length > 0) return { plan: unCounted, scanned: undefined, unconfirmed: undefined };
    const evidence = await findOutboxEvidence(options.client, options.tableName, shape, {
        pageSize,
        onPage: (pages, scanned) =>
            options.out.progress(`  … looking for outbox items: page ${pages}, scanned ${scanned}`),
    });
    if (evidence.sign === undefined) {
        const plan = planMigration(shape, { ...planOptions, backfillRecords: 0 });
        return {
            plan,
            scanned: evidence.scanned,
            unconfirmed:
                options.confirmedTable === true
                    ? undefined
                    : unconfirmedRefusal(options.tableName, plan, evidence.scanned),
        };
    }
    const counted = await backfillIndexAttributes(options.client, options.tableName, {
        pageSize,
        apply: false,
        onPage: (t) =>
            options.out.progress(
                `  … counting records to backfill: page ${t.pages}, scanned ${t.scanned}, found ${t.matched}`,
            ),
    });
    return {
        plan: planMigration(shape, { ...planOptions, backfillRecords: counted.matched }),
        scanned: counted.scanned,
        unconfirmed: undefined,
    };
}

/** The refusal of `--apply` on a table with no sign of being an outbox, listing what it would change. */
function unconfirmedRefusal(tableName: string, plan: MigrationPlan, scanned: number): Refusal {
    const changes = plan.steps.map((step, i) => `${i + 1}. ${step.description}`).join("; ");
    return {
        reason: `table "${tableName}" shows no sign of being an outbox: none of ${OUTBOX_SIGNS} among its ${scanned} item(s). If it is a business table named by mistake, --apply would change it: ${changes}`,
        fix: `check --table; if this is the table the outbox is to use (a new one, or one adopted before any outbox record was written), run again with --apply --confirm-table ${tableName}`,
    };
}

/** Carry out the plan's steps and report them; a failed step stops the run, and a rerun continues it. */
async function applyAndReport(
    options: MigrateOptions,
    run: {
        plan: MigrationPlan;
        shape: TableShape;
        wait: { timeoutMs: number; pollIntervalMs: number };
        pageSize: number;
        base: Record<string, unknown>;
    },
): Promise<number> {
    const { out, tableName, client } = options;
    const { plan, base } = run;
    const started = out.clock.now();
    const outcomes: StepOutcome[] = [];
    try {
        await applyPlan(
            {
                client,
                tableName,
                shape: run.shape,
                wait: run.wait,
                pageSize: run.pageSize,
                expiryShards: options.expiryShards,
                out,
            },
            plan.steps,
            (outcome) => outcomes.push(outcome),
        );
    } catch (err) {
        const failedAt = outcomes.length;
        out.line(`failed at step ${failedAt + 1}: ${errorText(err)}`);
        out.line("steps before it are done; run migrate --apply again to continue (every step is safe to repeat).");
        out.result({
            ...base,
            ok: false,
            refusals: [],
            notes: plan.notes,
            steps: stepJson(plan, outcomes, failedAt),
            error: errorText(err),
        });
        return 1;
    }
    out.line(
        `applied ${plan.steps.length} step(s) in ${seconds(out.clock.now() - started)}. Prove it: dynamodb-outbox verify --table ${tableName}`,
    );
    out.result({ ...base, ok: true, refusals: [], notes: plan.notes, steps: stepJson(plan, outcomes, undefined) });
    return 0;
}
