/**
 * The demo's orders: the business item and its `OrderCreated` event, written in ONE transaction through
 * `OutboxWriter`. `npm start` and the benchmark build the same orders from the same index, so every run
 * writes the same messages.
 *
 * @packageDocumentation
 */
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { ATTR } from "../../runtime/schema";
import type { WriteRequest } from "../../runtime/writer/writer";

/** How the orders of a run are shaped. */
export interface OrderPlan {
    /** The table the order items go to (the outbox table: the order and its event share an item collection). */
    readonly tableName: string;
    /** Ordering keys (customers); 0 makes every order keyless. @default 0 */
    readonly keys?: number;
    /** Share of orders written already expired (0–1), spread evenly over the run. @default 0 */
    readonly expireRatio?: number;
    /** A prefix that keeps ids of different runs apart. @default "" */
    readonly runId?: string;
    /** Pad each payload's JSON to this many bytes (a `filler` field); 0 or less leaves it as it is. @default 0 */
    readonly payloadBytes?: number;
}

/** One order as the producer writes it. */
export interface DemoOrder {
    /** The order id, also the event id (`OutboxMessage.id`), which consumers deduplicate on. */
    readonly id: string;
    /** The customer: the ordering key when the run has keys. */
    readonly customer: string;
    /** The order total, in cents. */
    readonly total: number;
    /** Whether the event is written already expired (it must reach the DLQ, never the topic). */
    readonly expired: boolean;
    /** Its position among its customer's orders (0-based), to check per-key order on arrival. */
    readonly sequence: number;
}

/**
 * Whether order `index` is one of the expired ones: exactly `round(count × ratio)` of the first `count` orders,
 * spread evenly, so any prefix of the run has its share.
 */
export function isExpiredOrder(index: number, ratio: number): boolean {
    return Math.floor((index + 1) * ratio + 1e-9) > Math.floor(index * ratio + 1e-9);
}

/** The `index`-th order of a run. */
export function demoOrder(index: number, plan: OrderPlan): DemoOrder {
    const keys = plan.keys ?? 0;
    const customerNumber = keys > 0 ? index % keys : index;
    return {
        id: `${plan.runId ?? ""}${String(index).padStart(7, "0")}`,
        customer: `customer-${customerNumber}`,
        total: 1000 + ((index * 7919) % 90_000),
        expired: isExpiredOrder(index, plan.expireRatio ?? 0),
        sequence: keys > 0 ? Math.floor(index / keys) : 0,
    };
}

/** The partition (PK) of an order and its event: the customer's collection with keys, else the order's own. */
export function orderPartition(order: DemoOrder, plan: OrderPlan): string {
    return (plan.keys ?? 0) > 0 ? `CUSTOMER#${order.customer}` : `ORDER#${order.id}`;
}

/**
 * An order's event payload; with `bytes` > 0, a `filler` field pads its JSON text to exactly that many bytes (or
 * leaves it as it is when it is already longer).
 */
export function orderPayload(order: DemoOrder, bytes: number): Record<string, unknown> {
    const payload = { orderId: order.id, customer: order.customer, total: order.total, sequence: order.sequence };
    if (bytes <= 0) return payload;
    const base = Buffer.byteLength(JSON.stringify({ ...payload, filler: "" }));
    return { ...payload, filler: "x".repeat(Math.max(0, bytes - base)) };
}

/**
 * The `OutboxWriter.write` request of an order: the order item and its event, in one transaction.
 *
 * @param order - The order.
 * @param plan - The run's plan.
 * @param nowMs - Now, to date an expired event in the past.
 */
export function orderWriteRequest(order: DemoOrder, plan: OrderPlan, nowMs: number): WriteRequest {
    const partition = orderPartition(order, plan);
    const item: TransactWriteItem = {
        Put: {
            TableName: plan.tableName,
            Item: {
                [ATTR.pk]: { S: partition },
                [ATTR.sk]: { S: `ORDER#${order.id}` },
                customer: { S: order.customer },
                total: { N: String(order.total) },
                status: { S: "CREATED" },
            },
        },
    };
    return {
        items: [item],
        messages: [
            {
                id: order.id,
                partition,
                type: "OrderCreated",
                payload: orderPayload(order, plan.payloadBytes ?? 0),
                ...((plan.keys ?? 0) > 0 ? { orderingKey: order.customer } : {}),
                ...(order.expired ? { expiresAt: new Date(nowMs - 1000) } : {}),
            },
        ],
    };
}
