/**
 * A fake DynamoDB client for what DynamoDB Local cannot show: GSI lag (its indexes update synchronously),
 * throttling, transaction cancellation codes, mid-batch faults and a lagging RecordIDIndex.
 *
 * Handlers are registered per command name. A handler returns the response, throws to inject a fault, or returns
 * {@link PASS} to let the call through to the backend (a real DynamoDB Local client) when one is given. Every call
 * is recorded with its command, input and index ("" = base table).
 */
import {
    ConditionalCheckFailedException,
    ProvisionedThroughputExceededException,
    TransactionCanceledException,
} from "@aws-sdk/client-dynamodb";
import type { DynamoDbClientLike } from "../../../runtime/store";

/** Returned by a handler to pass the call through to the backend. */
export const PASS = Symbol("pass");

/** One recorded call. */
export interface FakeCall {
    readonly command: string;
    readonly input: any;
    readonly index: string;
    /** 1-based count of calls of this command so far, including this one. */
    readonly nth: number;
}

/** A handler for one command. */
export type FakeHandler = (input: any, call: FakeCall) => unknown | Promise<unknown>;

export class FakeDynamoDb implements DynamoDbClientLike {
    readonly calls: FakeCall[] = [];
    private readonly handlers: Record<string, FakeHandler[]> = {};

    constructor(private readonly backend?: DynamoDbClientLike) {}

    /** Handle `command` (e.g. `"Query"`); handlers registered later run first. */
    on(command: string, handler: FakeHandler): this {
        (this.handlers[command] ??= []).unshift(handler);
        return this;
    }

    async send(command: object): Promise<unknown> {
        const name = command.constructor.name.replace(/Command$/, "");
        const input = (command as { input: any }).input;
        const call: FakeCall = { command: name, input, index: input?.IndexName ?? "", nth: this.count(name) + 1 };
        this.calls.push(call);
        for (const handler of this.handlers[name] ?? []) {
            const result = await handler(input, call);
            if (result !== PASS) return result;
        }
        if (this.backend) return this.backend.send(command);
        throw new Error(`FakeDynamoDb: no handler for ${name} and no backend`);
    }

    /** How many calls of `command` were made (optionally on one index; "" = base table). */
    count(command?: string, index?: string): number {
        return this.calls.filter(
            (c) => (command === undefined || c.command === command) && (index === undefined || c.index === index),
        ).length;
    }

    /** The recorded calls of `command`. */
    of(command: string): FakeCall[] {
        return this.calls.filter((c) => c.command === command);
    }
}

/** A cancelled transaction with the given reason codes, as the SDK throws it. */
export function cancelled(...codes: string[]): TransactionCanceledException {
    return new TransactionCanceledException({
        message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(", ")}]`,
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: codes.map((Code) => ({ Code })),
    });
}

/** A failed single-item condition, as the SDK throws it. */
export function conditionFailed(): ConditionalCheckFailedException {
    return new ConditionalCheckFailedException({
        message: "The conditional request failed",
        $metadata: { httpStatusCode: 400 },
    });
}

/** A throughput error, as the SDK throws it. */
export function throttled(): ProvisionedThroughputExceededException {
    return new ProvisionedThroughputExceededException({
        message: "The level of configured provisioned throughput for the table was exceeded",
        $metadata: { httpStatusCode: 400 },
    });
}

/** A FENCE GetItem response with `max_claim_version`. */
export function fenceAt(version: number): { Item: Record<string, { S?: string; N?: string }> } {
    return { Item: { PK: { S: "P" }, SK: { S: "FENCE" }, max_claim_version: { N: String(version) } } };
}
