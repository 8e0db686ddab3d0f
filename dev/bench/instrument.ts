/**
 * Counts what a client really sends, from outside the code under test: a middleware on the AWS SDK v3 client's
 * own stack sees every `send`, whoever calls it, so neither the outbox nor the naive relay reports its own
 * figures. For DynamoDB it also asks for `ReturnConsumedCapacity: "INDEXES"` on every command that takes it
 * (whatever the caller asked) and adds up the units the service returns, GSIs included.
 *
 * @packageDocumentation
 */
import type { ConsumedCapacity } from "@aws-sdk/client-dynamodb";

/** What one instrumented client (or several sharing a tally) sent. */
export interface CallTally {
    /** Calls by command name, e.g. `{ TransactWriteItemsCommand: 1000 }`. SDK-internal retries are not counted again. */
    readonly calls: Record<string, number>;
    /** Write capacity units reported by DynamoDB, tables and indexes. */
    writeUnits: number;
    /** Read capacity units reported by DynamoDB, tables and indexes. */
    readUnits: number;
    /** Milliseconds spent in calls, by command name (wall time from send to answer, SDK retries included). */
    readonly ms: Record<string, number>;
    /** Capacity units by where they were spent: `table` or a GSI's name for writes, `read:table` or `read:<GSI>` for reads. */
    readonly unitsBy: Record<string, number>;
    /**
     * `TransactWriteItems`: the entries sent and the table units reported for them. AWS bills 2 write units per
     * entry up to 1 KB; DynamoDB Local reports fewer for some multi-item transactions, so a price needs both.
     */
    readonly transactions: { items: number; tableUnits: number };
}

/** A fresh, empty tally. */
export function newTally(): CallTally {
    return { calls: {}, writeUnits: 0, readUnits: 0, ms: {}, unitsBy: {}, transactions: { items: 0, tableUnits: 0 } };
}

/** All calls in a tally, or only those whose command name passes `filter`. */
export function totalCalls(tally: CallTally, filter: (command: string) => boolean = () => true): number {
    return Object.entries(tally.calls).reduce((n, [command, count]) => (filter(command) ? n + count : n), 0);
}

/** Reset a tally in place (between a warm-up and the measured run). */
export function resetTally(tally: CallTally): void {
    for (const key of Object.keys(tally.calls)) delete tally.calls[key];
    for (const key of Object.keys(tally.unitsBy)) delete tally.unitsBy[key];
    for (const key of Object.keys(tally.ms)) delete tally.ms[key];
    tally.writeUnits = 0;
    tally.readUnits = 0;
    tally.transactions.items = 0;
    tally.transactions.tableUnits = 0;
}

/** The DynamoDB commands whose input takes `ReturnConsumedCapacity`, split by the units they consume. */
const WRITE_COMMANDS = [
    "PutItemCommand",
    "UpdateItemCommand",
    "DeleteItemCommand",
    "BatchWriteItemCommand",
    "TransactWriteItemsCommand",
];
const READ_COMMANDS = [
    "GetItemCommand",
    "QueryCommand",
    "ScanCommand",
    "BatchGetItemCommand",
    "TransactGetItemsCommand",
];

/** Options of {@link instrumentClient}. */
export interface InstrumentOptions {
    /** Ask DynamoDB for `INDEXES` capacity on every command that takes it, and add it to the tally. @default false */
    readonly capacity?: boolean;
    /** Called after each successful call with the command name, its input and output (e.g. to time deliveries). @default undefined */
    readonly onSuccess?: (command: string, input: Record<string, unknown>, output: Record<string, unknown>) => void;
}

interface MiddlewareClient {
    readonly middlewareStack: {
        add(middleware: unknown, options: { step: "initialize"; name: string; override?: boolean }): void;
    };
}

function addCapacity(
    tally: CallTally,
    command: string,
    consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
): void {
    for (const c of ([] as ConsumedCapacity[]).concat(consumed ?? [])) {
        // DynamoDB fills CapacityUnits always and the Read/Write split only sometimes, so fall back on the command kind.
        const read = c.ReadCapacityUnits ?? (READ_COMMANDS.includes(command) ? (c.CapacityUnits ?? 0) : 0);
        const write = c.WriteCapacityUnits ?? (WRITE_COMMANDS.includes(command) ? (c.CapacityUnits ?? 0) : 0);
        tally.readUnits += read;
        tally.writeUnits += write;
        const prefix = READ_COMMANDS.includes(command) ? "read:" : "";
        const add = (where: string, units: number | undefined): void => {
            if (units) tally.unitsBy[`${prefix}${where}`] = (tally.unitsBy[`${prefix}${where}`] ?? 0) + units;
        };
        add("table", c.Table?.CapacityUnits);
        if (command === "TransactWriteItemsCommand") tally.transactions.tableUnits += c.Table?.CapacityUnits ?? 0;
        for (const [index, units] of Object.entries(c.GlobalSecondaryIndexes ?? {})) add(index, units.CapacityUnits);
    }
}

/**
 * Count every call `client` sends into `tally` (and, for DynamoDB with `capacity`, the units it consumed).
 * Returns the client, for chaining.
 */
export function instrumentClient<T extends object>(client: T, tally: CallTally, options: InstrumentOptions = {}): T {
    const stack = (client as unknown as MiddlewareClient).middlewareStack;
    stack.add(
        (
            next: (args: { input: Record<string, unknown> }) => Promise<{ output: Record<string, unknown> }>,
            context: { commandName?: string },
        ) =>
            async (args: { input: Record<string, unknown> }) => {
                const command = context.commandName ?? "UnknownCommand";
                tally.calls[command] = (tally.calls[command] ?? 0) + 1;
                const measured =
                    options.capacity === true && (WRITE_COMMANDS.includes(command) || READ_COMMANDS.includes(command));
                // INDEXES only adds to the response, so overriding the caller's NONE/TOTAL changes nothing it relies on.
                if (measured) args.input = { ...args.input, ReturnConsumedCapacity: "INDEXES" };
                const started = Date.now();
                const result = await next(args).finally(() => {
                    tally.ms[command] = (tally.ms[command] ?? 0) + (Date.now() - started);
                });
                if (measured && command === "TransactWriteItemsCommand")
                    tally.transactions.items += ((args.input.TransactItems ?? []) as unknown[]).length;
                if (measured)
                    addCapacity(
                        tally,
                        command,
                        result.output.ConsumedCapacity as ConsumedCapacity | ConsumedCapacity[] | undefined,
                    );
                options.onSuccess?.(command, args.input, result.output);
                return result;
            },
        { step: "initialize", name: "benchCallCounter", override: true },
    );
    return client;
}
