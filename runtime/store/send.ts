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
} from "@aws-sdk/client-dynamodb";
import type { StoreContext } from "./options";

function report(ctx: StoreContext, operation: string, command: string, capacity: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    if (ctx.onConsumedCapacity === undefined || capacity === undefined) return;
    ctx.onConsumedCapacity({ operation, command, capacity: Array.isArray(capacity) ? capacity : [capacity] });
}

function withCapacity<T extends object>(ctx: StoreContext, input: T): T {
    return ctx.onConsumedCapacity === undefined ? input : { ...input, ReturnConsumedCapacity: "INDEXES" };
}

/** GetItem. */
export async function getItem(ctx: StoreContext, operation: string, input: GetItemCommandInput): Promise<GetItemCommandOutput> {
    const out = (await ctx.client.send(new GetItemCommand(withCapacity(ctx, input)))) as GetItemCommandOutput;
    report(ctx, operation, "GetItem", out?.ConsumedCapacity);
    return out;
}

/** PutItem. */
export async function putItem(ctx: StoreContext, operation: string, input: PutItemCommandInput): Promise<PutItemCommandOutput> {
    const out = (await ctx.client.send(new PutItemCommand(withCapacity(ctx, input)))) as PutItemCommandOutput;
    report(ctx, operation, "PutItem", out?.ConsumedCapacity);
    return out;
}

/** UpdateItem. */
export async function updateItem(ctx: StoreContext, operation: string, input: UpdateItemCommandInput): Promise<UpdateItemCommandOutput> {
    const out = (await ctx.client.send(new UpdateItemCommand(withCapacity(ctx, input)))) as UpdateItemCommandOutput;
    report(ctx, operation, "UpdateItem", out?.ConsumedCapacity);
    return out;
}

/** Query (one page). */
export async function query(ctx: StoreContext, operation: string, input: QueryCommandInput): Promise<QueryCommandOutput> {
    const out = (await ctx.client.send(new QueryCommand(withCapacity(ctx, input)))) as QueryCommandOutput;
    report(ctx, operation, "Query", out?.ConsumedCapacity);
    return out;
}

/** TransactWriteItems. */
export async function transactWrite(ctx: StoreContext, operation: string, input: TransactWriteItemsCommandInput): Promise<TransactWriteItemsCommandOutput> {
    const out = (await ctx.client.send(new TransactWriteItemsCommand(withCapacity(ctx, input)))) as TransactWriteItemsCommandOutput;
    report(ctx, operation, "TransactWriteItems", out?.ConsumedCapacity);
    return out;
}
