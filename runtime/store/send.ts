/**
 * The single place the store talks to DynamoDB: builds the command, asks for consumed capacity when someone
 * listens, and reports it.
 *
 * @packageDocumentation
 */
import {
    GetItemCommand,
    PutItemCommand,
    QueryCommand,
    TransactWriteItemsCommand,
    UpdateItemCommand,
    type ConsumedCapacity,
    type GetItemCommandInput,
    type GetItemCommandOutput,
    type PutItemCommandInput,
    type PutItemCommandOutput,
    type QueryCommandInput,
    type QueryCommandOutput,
    type TransactWriteItemsCommandInput,
    type TransactWriteItemsCommandOutput,
    type UpdateItemCommandInput,
    type UpdateItemCommandOutput,
    type AttributeValue,
} from "@aws-sdk/client-dynamodb";
import type { OutboxErrorContext } from "../errors";
import { wrapAwsError } from "./aws-errors";
import type { StoreContext } from "./options";

function report(
    ctx: StoreContext,
    operation: string,
    command: string,
    capacity: ConsumedCapacity | ConsumedCapacity[] | undefined,
): void {
    if (ctx.onConsumedCapacity === undefined || capacity === undefined) return;
    ctx.onConsumedCapacity({ operation, command, capacity: Array.isArray(capacity) ? capacity : [capacity] });
}

function withCapacity<T extends object>(ctx: StoreContext, input: T): T {
    return ctx.onConsumedCapacity === undefined ? input : { ...input, ReturnConsumedCapacity: "INDEXES" };
}

/**
 * Send a `Command` of `input` (asking for consumed capacity when someone listens) and report the capacity its
 * answer says it consumed, as `operation`'s `name` call.
 */
async function sendReported<I extends object, O extends { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }>(
    ctx: StoreContext,
    operation: string,
    name: string,
    Command: new (input: I) => object,
    input: I,
): Promise<O> {
    const out = (await ctx.client.send(new Command(withCapacity(ctx, input)))) as O;
    report(ctx, operation, name, out?.ConsumedCapacity);
    return out;
}

/** GetItem. */
export function getItem(
    ctx: StoreContext,
    operation: string,
    input: GetItemCommandInput,
): Promise<GetItemCommandOutput> {
    return sendReported<typeof input, GetItemCommandOutput>(ctx, operation, "GetItem", GetItemCommand, input);
}

/** PutItem. */
export function putItem(
    ctx: StoreContext,
    operation: string,
    input: PutItemCommandInput,
): Promise<PutItemCommandOutput> {
    return sendReported<typeof input, PutItemCommandOutput>(ctx, operation, "PutItem", PutItemCommand, input);
}

/** UpdateItem. */
export function updateItem(
    ctx: StoreContext,
    operation: string,
    input: UpdateItemCommandInput,
): Promise<UpdateItemCommandOutput> {
    return sendReported<typeof input, UpdateItemCommandOutput>(ctx, operation, "UpdateItem", UpdateItemCommand, input);
}

/** Query (one page). */
export function query(ctx: StoreContext, operation: string, input: QueryCommandInput): Promise<QueryCommandOutput> {
    return sendReported<typeof input, QueryCommandOutput>(ctx, operation, "Query", QueryCommand, input);
}

/** Where {@link queryPages} reports a failed page: the message and context it is wrapped with. */
export interface QueryFailure {
    /** The error message, e.g. `outbox query pending failed`. */
    readonly message: string;
    /** Ids for the error's context. */
    readonly context: OutboxErrorContext;
}

/**
 * Query page after page from the start until the last page, or until `onPage` answers `false`. A failed page is
 * thrown wrapped as `failure`; `signal` is checked before each page.
 *
 * @param onPage - Called with each page; `false` stops the paging.
 */
export async function queryPages(
    ctx: StoreContext,
    operation: string,
    input: Omit<QueryCommandInput, "ExclusiveStartKey">,
    failure: QueryFailure,
    onPage: (page: QueryCommandOutput) => boolean | void,
    signal?: AbortSignal,
): Promise<void> {
    let start: Record<string, AttributeValue> | undefined;
    do {
        signal?.throwIfAborted();
        let page;
        try {
            page = await query(ctx, operation, { ...input, ExclusiveStartKey: start });
        } catch (err) {
            throw wrapAwsError(err, failure.message, failure.context);
        }
        if (onPage(page) === false) return;
        start = page.LastEvaluatedKey;
    } while (start !== undefined);
}

/** TransactWriteItems. */
export function transactWrite(
    ctx: StoreContext,
    operation: string,
    input: TransactWriteItemsCommandInput,
): Promise<TransactWriteItemsCommandOutput> {
    return sendReported<typeof input, TransactWriteItemsCommandOutput>(
        ctx,
        operation,
        "TransactWriteItems",
        TransactWriteItemsCommand,
        input,
    );
}
