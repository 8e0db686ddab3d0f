/**
 * Reads a table's provisioning (DescribeTable + DescribeTimeToLive) and waits, by polling on the injected
 * clock, for the control-plane states `migrate` sequences on: the table ACTIVE, an index ACTIVE, an index gone.
 *
 * @packageDocumentation
 */
import {
    DescribeTableCommand,
    DescribeTimeToLiveCommand,
    type DynamoDBClient,
    type TableDescription,
    type TimeToLiveDescription,
} from "@aws-sdk/client-dynamodb";
import { isOutboxError, OutboxError } from "../../runtime/errors";
import { isResourceNotFound, wrapAwsError } from "../../runtime/store/aws-errors";
import { seconds, type Output } from "./io";
import { inspectTable, type TableShape } from "./table-shape";

/** A described table: the raw descriptions and their comparison with the schema. */
export interface DescribedTable {
    /** DescribeTable's `Table`. */
    readonly table: TableDescription;
    /** DescribeTimeToLive's description. */
    readonly ttl: TimeToLiveDescription | undefined;
    /** The comparison with the schema. */
    readonly shape: TableShape;
}

/** The classified error of a failed describe call, naming the permission when access was denied. */
function describeFailure(err: unknown, message: string, permission: string, tableName: string): unknown {
    const wrapped = wrapAwsError(err, message, { table: tableName });
    if (isOutboxError(wrapped, "NOT_AUTHORIZED")) {
        return new OutboxError("NOT_AUTHORIZED", `${message}: the tool needs ${permission}`, {
            cause: err,
            context: { table: tableName },
        });
    }
    return wrapped;
}

/**
 * Describe the table, or return `undefined` when it does not exist.
 *
 * @throws OutboxError with the classified code (the SDK error as cause) when DescribeTable or DescribeTimeToLive
 *   fails for another reason; `NOT_AUTHORIZED` names the missing permission.
 */
export async function describeOutboxTable(
    client: DynamoDBClient,
    tableName: string,
): Promise<DescribedTable | undefined> {
    let table: TableDescription | undefined;
    try {
        table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    } catch (err) {
        if (isResourceNotFound(err)) return undefined;
        throw describeFailure(err, `describe table "${tableName}" failed`, "dynamodb:DescribeTable", tableName);
    }
    if (table === undefined)
        throw new OutboxError("UNAVAILABLE", `DescribeTable returned an empty table description for "${tableName}"`, {
            context: { table: tableName },
        });
    let ttl: TimeToLiveDescription | undefined;
    try {
        ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
    } catch (err) {
        throw describeFailure(
            err,
            `describe time to live of "${tableName}" failed`,
            "dynamodb:DescribeTimeToLive",
            tableName,
        );
    }
    return { table, ttl, shape: inspectTable(table, ttl) };
}

/** How long and how often to poll. */
export interface WaitOptions {
    /** Give up after this long, ms. */
    readonly timeoutMs: number;
    /** Poll this often, ms. */
    readonly pollIntervalMs: number;
}

/**
 * Poll DescribeTable until `done(table)` is true, printing progress each poll.
 *
 * @param what - What is awaited, for progress and the timeout message, e.g. `ClaimIndex ACTIVE`.
 * @param state - The current state for progress, e.g. the index status.
 * @throws OutboxError `TIMEOUT` after `timeoutMs`; `NOT_FOUND` if the table disappears.
 */
export async function waitForTable(
    client: DynamoDBClient,
    tableName: string,
    what: string,
    done: (table: TableDescription) => boolean,
    state: (table: TableDescription) => string,
    out: Output,
    options: WaitOptions,
): Promise<void> {
    const started = out.clock.now();
    for (;;) {
        const described = await describeOutboxTable(client, tableName);
        if (described === undefined)
            throw new OutboxError("NOT_FOUND", `table "${tableName}" disappeared while waiting for ${what}`, {
                context: { table: tableName },
            });
        if (done(described.table)) return;
        const waited = out.clock.now() - started;
        if (waited >= options.timeoutMs) {
            throw new OutboxError(
                "TIMEOUT",
                `gave up waiting for ${what} after ${seconds(waited)} (still ${state(described.table)}); it continues in DynamoDB: run the command again to resume, or raise --timeout`,
                {
                    context: { table: tableName },
                },
            );
        }
        out.progress(
            `    … waiting for ${what}: ${state(described.table)} (${seconds(waited)} of ${seconds(options.timeoutMs)})`,
        );
        await out.clock.sleep(options.pollIntervalMs);
    }
}

/** The status of the named index in a table description: its `IndexStatus`, or `absent`. */
export function indexStatus(table: TableDescription, indexName: string): string {
    return table.GlobalSecondaryIndexes?.find((g) => g.IndexName === indexName)?.IndexStatus ?? "absent";
}

/** Whether the table is ACTIVE and no index is being created, updated or deleted: a new index change may start. */
export function tableIdle(table: TableDescription): boolean {
    return (
        table.TableStatus === "ACTIVE" && (table.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === "ACTIVE")
    );
}

/** The table status and any busy index, for progress lines. */
export function tableActivity(table: TableDescription): string {
    const busy = (table.GlobalSecondaryIndexes ?? [])
        .filter((g) => g.IndexStatus !== "ACTIVE")
        .map((g) => `${g.IndexName} ${g.IndexStatus}`);
    return [`table ${table.TableStatus}`, ...busy].join(", ");
}
