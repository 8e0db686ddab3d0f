/**
 * A model of DynamoDB's per-partition write limit, as a client wrapper: every write the outbox makes is
 * accounted in write units per partition key value, on the table and on each GSI, per second of the injected
 * clock, and a write that would take any key value above the ceiling (1,000 WCU/s, AWS's per-partition limit) in
 * the current second is throttled as AWS throttles it: the whole request fails, with the error AWS sends.
 *
 * It is a model of AWS's per-partition limits, not a measurement of AWS. Units follow this package's cost model
 * (README, "What it costs"): a write costs ceil(KB) units on the table (the larger of the item's old and new
 * image), doubled in a transaction; each GSI copy written costs ceil(KB of what the index projects), doubled in a
 * transaction too, as DynamoDB Local reports it; an index key change costs a removal and an insertion. What it
 * leaves out: burst and adaptive capacity, partition splits (which cannot help a single key value anyway), the
 * table-level limits, reads (3,000 RCU/s per partition; not accounted), and the unit AWS charges for a write whose
 * condition fails (charged nothing here).
 *
 * The wrapper applies each write to the backend (DynamoDB Local), reads the new image where the request does not
 * return it, and charges the difference; a throttled write is then undone from the old image before the error is
 * thrown, so the backend ends as if it had never been applied. The driver is sequential, so nothing observes the
 * moment in between.
 *
 * @packageDocumentation
 */
import {
    DeleteItemCommand,
    GetItemCommand,
    ProvisionedThroughputExceededException,
    PutItemCommand,
    TransactionCanceledException,
    UpdateItemCommand,
    type AttributeValue,
    type GetItemCommandOutput,
    type UpdateItemCommandOutput,
} from "@aws-sdk/client-dynamodb";
import { itemSize } from "../../runtime/record/item-size";
import type { Clock } from "../../runtime/ports";
import { ATTR, GLOBAL_SECONDARY_INDEXES, PRIMARY_KEY, RECORD_SK_PREFIX, type IndexShape } from "../../runtime/schema";

type Item = Record<string, AttributeValue>;

/** A client the model forwards to (DynamoDB Local). */
export interface BackendClient {
    /** Send an SDK v3 command. */
    send(command: object): Promise<unknown>;
}

/** Options of {@link createCapacityModel}. */
export interface CapacityModelOptions {
    /** The real client the writes go to. */
    readonly backend: BackendClient;
    /** The clock whose seconds the units are accounted in (the simulation's). */
    readonly clock: Clock;
    /** The outbox table. */
    readonly tableName: string;
    /** Write units per second one partition key value takes. @default 1000 */
    readonly ceilingPerKey?: number;
    /** Throttle above the ceiling; `false` only accounts. @default true */
    readonly throttle?: boolean;
    /** Called with each outbox record a successful write inserted (for the simulated stream). @default undefined */
    readonly onInsert?: (item: Item) => void;
    /** Who is sending now (`writer`, `publisher`, `sweeper`), for {@link CapacityModel.throttledByActor}. @default undefined */
    readonly actor?: () => string;
    /**
     * Charge a transaction's `ConditionCheck` as AWS bills it: a transactional write of the item it checks (2 units
     * per KB, at least 2, an absent item included), on the item's partition key value. Off by default so that the
     * outbox's published figures (docs/scale.md) keep their units; the inbox scenario turns it on.
     * @default false
     */
    readonly chargeConditionChecks?: boolean;
}

/** Where units went: `table` or a GSI name, and the partition key value there. */
export interface KeyUnits {
    /** `table` or the GSI's name. */
    readonly index: string;
    /** The partition key value. */
    readonly key: string;
    /** Write units. */
    readonly units: number;
}

/** A model instance. */
export interface CapacityModel {
    /** The wrapper to give the writer, the publisher and the sweeper. */
    readonly client: BackendClient;
    /** Write units by index and key value, since the start. */
    totals(): KeyUnits[];
    /** Throttled requests by SDK command name (`TransactWriteItemsCommand`, `UpdateItemCommand`, …). */
    readonly throttledRequests: Record<string, number>;
    /** Throttled requests by the index that hit the ceiling (`table` or a GSI name). */
    readonly throttledBy: Record<string, number>;
    /** Throttled requests by who sent them (the `actor` option's answer at the time). */
    readonly throttledByActor: Record<string, number>;
    /** The most units one key value took in one second, and which. */
    peak(): KeyUnits & { readonly second: number };
}

/** The capacity units of `bytes`: 1 per KB, at least 1. */
function unitsOf(bytes: number): number {
    return Math.max(1, Math.ceil(bytes / 1024));
}

function primaryKey(item: Item): Item {
    return Object.fromEntries(PRIMARY_KEY.map((k) => [k.attributeName, item[k.attributeName]!]));
}

function inIndex(index: IndexShape, item: Item | undefined): item is Item {
    return item !== undefined && index.keySchema.every((k) => item[k.attributeName] !== undefined);
}

function projected(index: IndexShape, item: Item): Item {
    if (index.projectionType === "ALL") return item;
    const names = new Set([...PRIMARY_KEY, ...index.keySchema].map((k) => k.attributeName));
    return Object.fromEntries(Object.entries(item).filter(([name]) => names.has(name)));
}

function hashValue(index: IndexShape, item: Item): string {
    const v = item[index.keySchema[0]!.attributeName]!;
    return v.S ?? v.N ?? "";
}

/**
 * The units one item write charges, by `index\0key`: the table, then each GSI whose copy the write inserts,
 * removes or changes.
 */
export function writeCharges(
    before: Item | undefined,
    after: Item | undefined,
    transactional: boolean,
): Map<string, number> {
    const factor = transactional ? 2 : 1;
    const charges = new Map<string, number>();
    const add = (index: string, key: string, units: number) =>
        charges.set(`${index}\u0000${key}`, (charges.get(`${index}\u0000${key}`) ?? 0) + units * factor);
    const image = (after ?? before) as Item;
    add(
        "table",
        image[ATTR.pk]?.S ?? "",
        unitsOf(Math.max(before ? itemSize(before) : 0, after ? itemSize(after) : 0)),
    );
    for (const index of GLOBAL_SECONDARY_INDEXES) {
        const was = inIndex(index, before);
        const is = inIndex(index, after);
        if (!was && !is) continue;
        const oldCopy = was ? projected(index, before as Item) : undefined;
        const newCopy = is ? projected(index, after as Item) : undefined;
        const keyChanged =
            was &&
            is &&
            index.keySchema.some(
                (k) =>
                    JSON.stringify((before as Item)[k.attributeName]) !==
                    JSON.stringify((after as Item)[k.attributeName]),
            );
        if (oldCopy !== undefined && (newCopy === undefined || keyChanged))
            add(index.indexName, hashValue(index, before as Item), unitsOf(itemSize(oldCopy)));
        if (newCopy !== undefined && (oldCopy === undefined || keyChanged))
            add(index.indexName, hashValue(index, after as Item), unitsOf(itemSize(newCopy)));
        if (
            oldCopy !== undefined &&
            newCopy !== undefined &&
            !keyChanged &&
            JSON.stringify(oldCopy) !== JSON.stringify(newCopy)
        ) {
            add(
                index.indexName,
                hashValue(index, after as Item),
                unitsOf(Math.max(itemSize(oldCopy), itemSize(newCopy))),
            );
        }
    }
    return charges;
}

/** One item a request writes: its key, and how to learn its new image. */
interface Touched {
    readonly key: Item;
    readonly put?: Item;
    readonly deleted?: boolean;
}

/**
 * Wrap `backend` in the per-key write model.
 *
 * @param options - The backend, the clock, the table and the ceiling.
 */
export function createCapacityModel(options: CapacityModelOptions): CapacityModel {
    const ceiling = options.ceilingPerKey ?? 1000;
    const throttle = options.throttle ?? true;
    const { backend, tableName } = options;
    // Keyed by `index\0key`: units in the current second, and since the start.
    let second = Number.NaN;
    let thisSecond = new Map<string, number>();
    const total = new Map<string, number>();
    let peak = { index: "", key: "", units: 0, second: 0 };
    const throttledRequests: Record<string, number> = {};
    const throttledBy: Record<string, number> = {};
    const throttledByActor: Record<string, number> = {};

    const read = async (key: Item): Promise<Item | undefined> =>
        (
            (await backend.send(
                new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
            )) as GetItemCommandOutput
        ).Item;

    const restore = async (key: Item, before: Item | undefined): Promise<void> => {
        if (before === undefined) await backend.send(new DeleteItemCommand({ TableName: tableName, Key: key }));
        else await backend.send(new PutItemCommand({ TableName: tableName, Item: before }));
    };

    const chargesOf = (
        befores: readonly (Item | undefined)[],
        afters: readonly (Item | undefined)[],
        transactional: boolean,
    ): Map<string, number> => {
        const charges = new Map<string, number>();
        for (let i = 0; i < befores.length; i++)
            for (const [k, u] of writeCharges(befores[i], afters[i], transactional))
                charges.set(k, (charges.get(k) ?? 0) + u);
        return charges;
    };

    /** The index whose key value the charges would take above the ceiling this second, if any. */
    const overCeiling = (charges: ReadonlyMap<string, number>): string | undefined => {
        const now = Math.floor(options.clock.now() / 1000);
        if (now !== second) {
            second = now;
            thisSecond = new Map();
        }
        if (!throttle) return undefined;
        for (const [k, u] of charges) if ((thisSecond.get(k) ?? 0) + u > ceiling) return k.split("\u0000")[0];
        return undefined;
    };

    const commit = (charges: ReadonlyMap<string, number>): void => {
        for (const [k, u] of charges) {
            const used = (thisSecond.get(k) ?? 0) + u;
            thisSecond.set(k, used);
            total.set(k, (total.get(k) ?? 0) + u);
            if (used > peak.units) {
                const [index, key] = k.split("\u0000") as [string, string];
                peak = { index, key, units: used, second };
            }
        }
    };

    const throttled = (command: string, index: string, transactional: boolean, items: number): Error => {
        throttledRequests[command] = (throttledRequests[command] ?? 0) + 1;
        throttledBy[index] = (throttledBy[index] ?? 0) + 1;
        const actor = options.actor?.() ?? "";
        throttledByActor[actor] = (throttledByActor[actor] ?? 0) + 1;
        const message = `model: the per-partition write limit (${ceiling} WCU/s per key value) of ${index} was exceeded`;
        return transactional
            ? new TransactionCanceledException({
                  message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${Array.from({ length: items }, () => "ThrottlingError").join(", ")}]`,
                  $metadata: { httpStatusCode: 400 },
                  CancellationReasons: Array.from({ length: items }, () => ({
                      Code: "ThrottlingError",
                      Message: message,
                  })),
              })
            : new ProvisionedThroughputExceededException({ message, $metadata: { httpStatusCode: 400 } });
    };

    const client: BackendClient = {
        async send(command: object): Promise<unknown> {
            const name = command.constructor.name;
            const input = (command as { input: any }).input;
            let touched: Touched[];
            if (name === "PutItemCommand") touched = [{ key: primaryKey(input.Item), put: input.Item }];
            else if (name === "UpdateItemCommand") touched = [{ key: input.Key }];
            else if (name === "DeleteItemCommand") touched = [{ key: input.Key, deleted: true }];
            else if (name === "TransactWriteItemsCommand") {
                touched = (input.TransactItems as any[]).flatMap((t): Touched[] => {
                    if (t.Put) return [{ key: primaryKey(t.Put.Item), put: t.Put.Item }];
                    if (t.Update) return [{ key: t.Update.Key }];
                    if (t.Delete) return [{ key: t.Delete.Key, deleted: true }];
                    return [];
                });
            } else if (name === "BatchWriteItemCommand") {
                throw new Error("capacity model: BatchWriteItem is not modelled (the outbox does not use it)");
            } else {
                return backend.send(command);
            }
            const transactional = name === "TransactWriteItemsCommand";
            const checked: Item[] =
                transactional && options.chargeConditionChecks === true
                    ? (input.TransactItems as any[]).flatMap((t) => (t.ConditionCheck ? [t.ConditionCheck.Key] : []))
                    : [];
            const befores = await Promise.all(touched.map((t) => read(t.key)));
            const checkedImages = await Promise.all(checked.map((key) => read(key)));
            const withChecks = (charges: Map<string, number>): Map<string, number> => {
                checked.forEach((key, i) => {
                    const k = `table\u0000${key[ATTR.pk]?.S ?? ""}`;
                    const image = checkedImages[i];
                    charges.set(k, (charges.get(k) ?? 0) + 2 * unitsOf(image === undefined ? 0 : itemSize(image)));
                });
                return charges;
            };
            const refuse = async (over: string, undo: boolean): Promise<never> => {
                if (undo) for (let i = 0; i < touched.length; i++) await restore(touched[i]!.key, befores[i]);
                throw throttled(
                    name,
                    over,
                    transactional,
                    transactional ? (input.TransactItems as unknown[]).length : 1,
                );
            };
            // Puts and deletes: the new image is known, so a throttled one never reaches the backend.
            const known = touched.every((t) => t.put !== undefined || t.deleted === true);
            let afters: (Item | undefined)[] = touched.map((t) => (t.deleted ? undefined : t.put));
            let charges = known ? withChecks(chargesOf(befores, afters, transactional)) : undefined;
            if (charges !== undefined) {
                const over = overCeiling(charges);
                if (over !== undefined) await refuse(over, false);
            }
            // Ask an UpdateItem for its new image when the caller did not ask for something else.
            const wantsNew = name === "UpdateItemCommand" && input.ReturnValues === undefined;
            const out = await backend.send(
                wantsNew ? new UpdateItemCommand({ ...input, ReturnValues: "ALL_NEW" }) : command,
            );
            if (charges === undefined) {
                afters = [];
                for (const t of touched) {
                    if (t.deleted) afters.push(undefined);
                    else if (t.put) afters.push(t.put);
                    else if (wantsNew) afters.push((out as UpdateItemCommandOutput).Attributes);
                    else afters.push(await read(t.key));
                }
                charges = withChecks(chargesOf(befores, afters, transactional));
                const over = overCeiling(charges);
                if (over !== undefined) await refuse(over, true);
            }
            commit(charges);
            for (let i = 0; i < touched.length; i++) {
                const after = afters[i];
                if (befores[i] === undefined && after !== undefined && after[ATTR.sk]?.S?.startsWith(RECORD_SK_PREFIX))
                    options.onInsert?.(after);
            }
            if (wantsNew) {
                const { Attributes: _dropped, ...rest } = out as UpdateItemCommandOutput;
                return rest;
            }
            return out;
        },
    };

    return {
        client,
        throttledRequests,
        throttledBy,
        throttledByActor,
        totals: () =>
            [...total].map(([k, units]) => {
                const [index, key] = k.split("\u0000") as [string, string];
                return { index, key, units };
            }),
        peak: () => peak,
    };
}
