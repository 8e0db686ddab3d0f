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

/** GetItem. */
export async function getItem(
    ctx: StoreContext,
    operation: string,
    input: GetItemCommandInput,
): Promise<GetItemCommandOutput> {
    const out = (await ctx.client.send(new GetItemCommand(withCapacity(ctx, input)))) as GetItemCommandOutput;
    report(ctx, operation, "GetItem", out?.ConsumedCapacity);
    return out;
}

/** PutItem. */
export async function putItem(
    ctx: StoreContext,
    operation: string,
    input: PutItemCommandInput,
): Promise<PutItemCommandOutput> {
    const out = (await ctx.client.send(new PutItemCommand(withCapacity(ctx, input)))) as PutItemCommandOutput;
    report(ctx, operation, "PutItem", out?.ConsumedCapacity);
    return out;
}

/** UpdateItem. */
export async function updateItem(
    ctx: StoreContext,
    operation: string,
    input: UpdateItemCommandInput,
): Promise<UpdateItemCommandOutput> {
    const out = (await ctx.client.send(new UpdateItemCommand(withCapacity(ctx, input)))) as UpdateItemCommandOutput;
    report(ctx, operation, "UpdateItem", out?.ConsumedCapacity);
    return out;
}

/** Query (one page). */
export async function query(
    ctx: StoreContext,
    operation: string,
    input: QueryCommandInput,
): Promise<QueryCommandOutput> {
    const out = (await ctx.client.send(new QueryCommand(withCapacity(ctx, input)))) as QueryCommandOutput;
    report(ctx, operation, "Query", out?.ConsumedCapacity);
    return out;
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
export async function transactWrite(
    ctx: StoreContext,
    operation: string,
    input: TransactWriteItemsCommandInput,
): Promise<TransactWriteItemsCommandOutput> {
    const out = (await ctx.client.send(
        new TransactWriteItemsCommand(withCapacity(ctx, input)),
    )) as TransactWriteItemsCommandOutput;
    report(ctx, operation, "TransactWriteItems", out?.ConsumedCapacity);
    return out;
}
