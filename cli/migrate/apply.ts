/**
 * Carries out a {@link MigrationPlan}, one step at a time, each awaited: a GSI create or delete waits for the
 * table to be idle first (DynamoDB refuses a second index change while one runs) and then for its own end state.
 *
 * @packageDocumentation
 */
import { UpdateTableCommand, UpdateTimeToLiveCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../../runtime/errors";
import type { IndexShape } from "../../runtime/schema";
import { enableTtlInput, outboxStreamSpecification } from "../../runtime/store/create-table";
import { backfillIndexAttributes, type BackfillTotals } from "./backfill";
import { seconds, type Output } from "../shared/io";
import type { MigrationStep } from "./plan";
import { indexStatus, tableActivity, tableIdle, waitForTable, type WaitOptions } from "../shared/table-state";
import type { TableShape } from "../shared/table-shape";

/** What the executor needs besides the plan. */
export interface ApplyContext {
    /** The client. */
    readonly client: DynamoDBClient;
    /** The table. */
    readonly tableName: string;
    /** The table as planned (billing mode and throughput for new indexes). */
    readonly shape: TableShape;
    /** Waits: bound and poll interval. */
    readonly wait: WaitOptions;
    /** Items per backfill Scan page. */
    readonly pageSize: number;
    /** The writers' `expiryShards`, for the `has_expiry` values the backfill writes. @default 1 */
    readonly expiryShards?: number;
    /** Where progress goes. */
    readonly out: Output;
}

/** The outcome of one executed step. */
export interface StepOutcome {
    /** The step. */
    readonly step: MigrationStep;
    /** How long it took, ms (clock time). */
    readonly durationMs: number;
    /** Backfill totals, for the backfill step. */
    readonly backfill?: BackfillTotals;
}

/** Make a change to the table (`send`); a failure stops the run, named by `what`, as one to run again. */
async function update(ctx: ApplyContext, what: string, send: () => Promise<unknown>): Promise<void> {
    try {
        await send();
    } catch (err) {
        throw new OutboxError(
            "UNAVAILABLE",
            `${what} on "${ctx.tableName}" failed; nothing after this step was attempted, run migrate --apply again to continue`,
            {
                cause: err,
                context: { table: ctx.tableName },
            },
        );
    }
}

async function waitIdle(ctx: ApplyContext): Promise<void> {
    await waitForTable(ctx.client, ctx.tableName, "the table to be idle", tableIdle, tableActivity, ctx.out, ctx.wait);
}

async function createIndex(ctx: ApplyContext, shape: IndexShape): Promise<void> {
    await waitIdle(ctx);
    const throughput = ctx.shape.provisionedThroughput;
    await update(ctx, `create ${shape.indexName}`, () =>
        ctx.client.send(
            new UpdateTableCommand({
                TableName: ctx.tableName,
                AttributeDefinitions: shape.keySchema.map((k) => ({
                    AttributeName: k.attributeName,
                    AttributeType: k.attributeType,
                })),
                GlobalSecondaryIndexUpdates: [
                    {
                        Create: {
                            IndexName: shape.indexName,
                            KeySchema: shape.keySchema.map((k) => ({
                                AttributeName: k.attributeName,
                                KeyType: k.keyType,
                            })),
                            Projection: { ProjectionType: shape.projectionType },
                            ProvisionedThroughput:
                                throughput === undefined
                                    ? undefined
                                    : {
                                          ReadCapacityUnits: throughput.readCapacityUnits,
                                          WriteCapacityUnits: throughput.writeCapacityUnits,
                                      },
                        },
                    },
                ],
            }),
        ),
    );
    await waitForTable(
        ctx.client,
        ctx.tableName,
        `${shape.indexName} ACTIVE`,
        (t) => indexStatus(t, shape.indexName) === "ACTIVE",
        (t) => indexStatus(t, shape.indexName),
        ctx.out,
        ctx.wait,
    );
}

async function deleteIndex(ctx: ApplyContext, indexName: string): Promise<void> {
    await waitIdle(ctx);
    await update(ctx, `delete ${indexName}`, () =>
        ctx.client.send(
            new UpdateTableCommand({
                TableName: ctx.tableName,
                GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: indexName } }],
            }),
        ),
    );
    await waitForTable(
        ctx.client,
        ctx.tableName,
        `${indexName} to be gone`,
        (t) => indexStatus(t, indexName) === "absent",
        (t) => indexStatus(t, indexName),
        ctx.out,
        ctx.wait,
    );
}

async function runStep(ctx: ApplyContext, step: MigrationStep): Promise<BackfillTotals | undefined> {
    switch (step.kind) {
        case "wait-idle":
            await waitIdle(ctx);
            return undefined;
        case "enable-ttl":
            await update(ctx, "enable TTL", () =>
                ctx.client.send(new UpdateTimeToLiveCommand(enableTtlInput(ctx.tableName))),
            );
            return undefined;
        case "enable-stream":
            await waitIdle(ctx);
            await update(ctx, "enable the stream", () =>
                ctx.client.send(
                    new UpdateTableCommand({
                        TableName: ctx.tableName,
                        StreamSpecification: outboxStreamSpecification(),
                    }),
                ),
            );
            await waitIdle(ctx);
            return undefined;
        case "backfill":
            return backfillIndexAttributes(ctx.client, ctx.tableName, {
                pageSize: ctx.pageSize,
                apply: true,
                expiryShards: ctx.expiryShards,
                onPage: (t) =>
                    ctx.out.progress(
                        `    … backfill page ${t.pages}: scanned ${t.scanned}, matched ${t.matched}, claim_sort set ${t.claimSortSet}, has_expiry set ${t.hasExpirySet}, skipped ${t.skipped}`,
                    ),
            });
        case "delete-index":
            await deleteIndex(ctx, step.indexName);
            return undefined;
        case "create-index":
            await createIndex(ctx, step.shape);
            return undefined;
    }
}

/**
 * Run the steps in order, reporting each as it starts and ends. Stops at the first failure (the error says
 * which step; everything before it is done and a rerun plans only what is left).
 *
 * @returns One outcome per completed step.
 */
export async function applyPlan(
    ctx: ApplyContext,
    steps: readonly MigrationStep[],
    onDone: (outcome: StepOutcome, index: number) => void,
): Promise<StepOutcome[]> {
    const outcomes: StepOutcome[] = [];
    for (const [i, step] of steps.entries()) {
        ctx.out.progress(`  ${i + 1}. ${step.description}`);
        const started = ctx.out.clock.now();
        const backfill = await runStep(ctx, step);
        const outcome: StepOutcome = { step, durationMs: ctx.out.clock.now() - started, backfill };
        outcomes.push(outcome);
        onDone(outcome, i);
        ctx.out.progress(`     done (${seconds(outcome.durationMs)})`);
    }
    return outcomes;
}
