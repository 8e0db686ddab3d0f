/**
 * A fault-injecting wrapper around a DynamoDB client, for what DynamoDB Local cannot do: it never throttles, never
 * cancels a transaction for a conflict and never loses an answer. This is a FAKE for those faults only; every
 * command that is not failed goes to the real DynamoDB Local underneath.
 *
 * Faults (each by rate from a seeded RNG, so a failing run replays, and each at least once: see `faultDice`):
 * - `throttle`: `ProvisionedThroughputExceededException` before sending (nothing applied);
 * - `conflict`: `TransactionCanceledException` with a `TransactionConflict` reason on TransactWriteItems,
 *   before sending (nothing applied);
 * - `unprocessed`: BatchGetItem reads only the first half of its keys and returns the rest as `UnprocessedKeys`, as
 *   DynamoDB does under throttling;
 * - `lostAnswer`: the command IS applied, then the caller gets a 500 `InternalServerError` (an ambiguous outcome,
 *   like a timeout after DynamoDB committed);
 * - `completionsThrottled`: every completion of the records it names is throttled (nothing applied), for as long as
 *   injection is on: the `redrive` scenario's records that are published and then left pending until they expire;
 * - kill: once armed with {@link FaultyDynamoClient.armKill}, the n-th terminal write (a status → completed or
 *   expired update, the step after publishing or dead-lettering) never answers and `onKill` fires: the invocation dies between publishing and completing, as a Lambda
 *   crash or timeout would. The scenario arms it for a share of the invocations.
 */
import {
    BatchGetItemCommand,
    type BatchGetItemCommandInput,
    type BatchGetItemCommandOutput,
} from "@aws-sdk/client-dynamodb";
import { parseRecordSortKey } from "../../../runtime/record/keys";
import { ATTR } from "../../../runtime/schema";
import { faultDice, seededRandom } from "./random";

/** Anything with an AWS SDK v3 client's `send`. */
export interface SendClient {
    /** Send an SDK command. */
    send(command: object): Promise<unknown>;
}

/** Rates of each fault, 0 to 1. */
export interface DynamoFaultRates {
    /** Throttling before the command is applied. @default 0 */
    readonly throttle?: number;
    /** TransactionConflict cancellations of TransactWriteItems, before anything is applied. @default 0 */
    readonly conflict?: number;
    /** Applied, then answered with a 500. @default 0 */
    readonly lostAnswer?: number;
    /** BatchGetItem answers half of its keys as UnprocessedKeys. @default 0 */
    readonly unprocessed?: number;
    /** Throttle every completion of a record this names (by record id), not a rate. @default none */
    readonly completionsThrottled?: (recordId: string) => boolean;
}

/** What a faulty client injected so far. */
export interface DynamoFaultCounts {
    throttle: number;
    conflict: number;
    lostAnswer: number;
    unprocessed: number;
    kill: number;
}

/** A wrapping client whose faults can be switched off for the recovery phase. */
export interface FaultyDynamoClient extends SendClient {
    /** Injected faults so far. */
    readonly counts: DynamoFaultCounts;
    /** Turn injection on or off. */
    setEnabled(on: boolean): void;
    /** Kill the invocation at its `n`-th terminal write from now (1 = the next one); `undefined` disarms. */
    armKill(n: number | undefined): void;
}

interface CommandShape {
    readonly constructor: { readonly name: string };
    readonly input: {
        readonly Key?: Record<string, { readonly S?: string }>;
        readonly ExpressionAttributeValues?: Record<string, unknown>;
        readonly TransactItems?: readonly {
            readonly Update?: {
                readonly Key?: Record<string, { readonly S?: string }>;
                readonly ExpressionAttributeValues?: Record<string, unknown>;
            };
        }[];
    };
}

/** Whether a command moves a record to completed or expired (UpdateItem, or a transaction holding such an update). */
export function isTerminalWrite(command: object): boolean {
    return writesStatus(command, [":status_completed", ":status_expired"]);
}

/** Whether a command moves a record to completed (the step after publishing): UpdateItem, or a transaction holding one. */
export function isCompletionWrite(command: object): boolean {
    return writesStatus(command, [":status_completed"]);
}

/** Whether a command's update sets one of these status placeholders. */
function writesStatus(command: object, placeholders: readonly string[]): boolean {
    const c = command as CommandShape;
    const completes = (values: Record<string, unknown> | undefined) =>
        values !== undefined && placeholders.some((p) => p in values);
    if (c.constructor.name === "UpdateItemCommand") return completes(c.input.ExpressionAttributeValues);
    if (c.constructor.name === "TransactWriteItemsCommand")
        return (c.input.TransactItems ?? []).some((i) => completes(i.Update?.ExpressionAttributeValues));
    return false;
}

/** The record ids a command moves to completed (read from each update's sort key). */
export function completedRecordIds(command: object): string[] {
    const c = command as CommandShape;
    const updates =
        c.constructor.name === "UpdateItemCommand"
            ? [c.input]
            : c.constructor.name === "TransactWriteItemsCommand"
              ? (c.input.TransactItems ?? []).map((i) => i.Update ?? {})
              : [];
    return updates
        .filter((u) => u.ExpressionAttributeValues !== undefined && ":status_completed" in u.ExpressionAttributeValues)
        .map((u) => parseRecordSortKey(u.Key?.[ATTR.sk]?.S ?? "")?.envelopeId)
        .filter((id): id is string => id !== undefined);
}

function sdkError(name: string, status: number, extra: Record<string, unknown> = {}): Error {
    return Object.assign(new Error(`${name} (injected by the fault test's fake DynamoDB client)`), {
        name,
        $fault: status >= 500 ? "server" : "client",
        $metadata: { httpStatusCode: status, attempts: 1 },
        ...extra,
    });
}

const WRITES = new Set([
    "PutItemCommand",
    "UpdateItemCommand",
    "DeleteItemCommand",
    "TransactWriteItemsCommand",
    "BatchWriteItemCommand",
]);

/**
 * Wrap `inner` with seeded faults.
 *
 * @param inner - The real client (DynamoDB Local).
 * @param rates - Fault rates.
 * @param seed - RNG seed.
 * @param onKill - Called when a `kill` fault fires; the handler wrapper turns it into a dead invocation.
 */
export function faultyDynamoClient(
    inner: SendClient,
    rates: DynamoFaultRates,
    seed: number,
    onKill: () => void = () => undefined,
): FaultyDynamoClient {
    const random = seededRandom(seed);
    const counts: DynamoFaultCounts = { throttle: 0, conflict: 0, lostAnswer: 0, unprocessed: 0, kill: 0 };
    let enabled = true;
    let killIn: number | undefined;
    const dice = {
        throttle: faultDice(rates.throttle ?? 0, random),
        conflict: faultDice(rates.conflict ?? 0, random),
        unprocessed: faultDice(rates.unprocessed ?? 0, random),
        lostAnswer: faultDice(rates.lostAnswer ?? 0, random),
    };
    const fires = (kind: keyof typeof dice) => enabled && dice[kind]();
    return {
        counts,
        setEnabled(on) {
            enabled = on;
        },
        armKill(n) {
            killIn = n;
        },
        async send(command) {
            const name = (command as CommandShape).constructor.name;
            if (enabled && killIn !== undefined && isTerminalWrite(command) && --killIn === 0) {
                killIn = undefined;
                counts.kill += 1;
                onKill();
                return new Promise<never>(() => undefined);
            }
            const throttledCompletion = rates.completionsThrottled;
            if (enabled && throttledCompletion !== undefined && completedRecordIds(command).some(throttledCompletion)) {
                counts.throttle += 1;
                throw sdkError("ProvisionedThroughputExceededException", 400);
            }
            if (fires("throttle")) {
                counts.throttle += 1;
                throw sdkError("ProvisionedThroughputExceededException", 400);
            }
            if (name === "TransactWriteItemsCommand" && fires("conflict")) {
                counts.conflict += 1;
                const items = (command as CommandShape).input.TransactItems ?? [];
                throw sdkError("TransactionCanceledException", 400, {
                    CancellationReasons: items.map((_, i) => ({
                        Code: i === items.length - 1 ? "TransactionConflict" : "None",
                    })),
                });
            }
            if (name === "BatchGetItemCommand" && fires("unprocessed")) {
                const input = (command as unknown as { input: BatchGetItemCommandInput }).input;
                const [table, request] = Object.entries(input.RequestItems ?? {})[0] ?? [];
                const keys = request?.Keys ?? [];
                if (table !== undefined && request !== undefined && keys.length > 1) {
                    counts.unprocessed += 1;
                    const half = Math.ceil(keys.length / 2);
                    const out = (await inner.send(
                        new BatchGetItemCommand({
                            ...input,
                            RequestItems: { [table]: { ...request, Keys: keys.slice(0, half) } },
                        }),
                    )) as BatchGetItemCommandOutput;
                    return { ...out, UnprocessedKeys: { [table]: { ...request, Keys: keys.slice(half) } } };
                }
            }
            const out = await inner.send(command);
            if (WRITES.has(name) && fires("lostAnswer")) {
                counts.lostAnswer += 1;
                throw sdkError("InternalServerError", 500);
            }
            return out;
        },
    };
}
