/**
 * The price per million events: AWS on-demand list prices for us-east-1, and the pure function that turns billed
 * units per message into dollars per million messages. The units come from measurements (dev/bench/price.ts);
 * nothing here measures.
 *
 * Sources, read 2026-12-05 (each constant names its own):
 * - DynamoDB on-demand: https://aws.amazon.com/dynamodb/pricing/on-demand/ — halved from 2024-11-01, to $0.625 per
 *   million write and $0.125 per million read request units in us-east-1 (restated by
 *   https://airbyte.com/data-engineering-resources/dynamodb-pricing and
 *   https://www.jusdb.com/blog/dynamodb-cost-optimization-a-comprehensive-guide-by-jusdb).
 * - Lambda: https://aws.amazon.com/lambda/pricing/ (first pricing tier).
 * - SNS: https://aws.amazon.com/sns/pricing/ — each 64 KB chunk of a publish is one request.
 * - SQS: https://aws.amazon.com/sqs/pricing/ — standard queue, each 64 KB chunk of a request is one request.
 * - EventBridge: https://aws.amazon.com/eventbridge/pricing/ — custom events, each 64 KB chunk of an event is one
 *   event; Pipes, each 64 KB chunk of an event that passes the filter is one request.
 *
 * @packageDocumentation
 */
import type { DestinationKind } from "../../runtime/destination/kind";

const PER_MILLION = 1_000_000;

/** DynamoDB on-demand, one write request unit (1 KB; a transactional write takes 2), after the 2024-11-01 cut: $0.625 per million. */
export const DYNAMODB_WRITE_REQUEST_UNIT_USD = 0.625 / PER_MILLION;
/** DynamoDB on-demand, one read request unit (a strongly consistent read of up to 4 KB): $0.125 per million. */
export const DYNAMODB_READ_REQUEST_UNIT_USD = 0.125 / PER_MILLION;
/** Lambda, one request (invocation), either architecture: $0.20 per million. */
export const LAMBDA_REQUEST_USD = 0.2 / PER_MILLION;
/** Lambda duration on x86_64 (the component sets no `architectures`, so Lambda's default): $0.0000166667 per GB-second. */
export const LAMBDA_X86_GB_SECOND_USD = 0.0000166667;
/** Lambda duration on arm64, for comparison: $0.0000133334 per GB-second. */
export const LAMBDA_ARM64_GB_SECOND_USD = 0.0000133334;
/** SNS standard topic, one publish request per 64 KB chunk (`PublishBatch` is one request for up to 10 messages): $0.50 per million. */
export const SNS_REQUEST_USD = 0.5 / PER_MILLION;
/** SQS standard queue, one request per 64 KB chunk (`SendMessageBatch` is one request for up to 10 messages): $0.40 per million. */
export const SQS_REQUEST_USD = 0.4 / PER_MILLION;
/** EventBridge custom events, one event per 64 KB chunk of each entry (billed per entry, not per `PutEvents` call): $1.00 per million. */
export const EVENTBRIDGE_EVENT_USD = 1 / PER_MILLION;
/** EventBridge Pipes, one request per 64 KB chunk of each event that passes the filter: $0.40 per million. */
export const PIPES_REQUEST_USD = 0.4 / PER_MILLION;

/** The price of one billed request at each destination kind. */
export const DESTINATION_REQUEST_USD: Readonly<Record<DestinationKind, number>> = {
    sns: SNS_REQUEST_USD,
    sqs: SQS_REQUEST_USD,
    eventbridge: EVENTBRIDGE_EVENT_USD,
};

/** The billed units of one message, each a count per message (fractions: a batch's call shared by its entries). */
export interface BilledUnits {
    /** DynamoDB write request units, table and indexes, at AWS's billing rule. */
    readonly writeUnits: number;
    /** DynamoDB read request units. */
    readonly readUnits: number;
    /** Lambda invocations. */
    readonly lambdaRequests: number;
    /** Lambda GB-seconds (memory in GB × billed seconds). */
    readonly lambdaGbSeconds: number;
    /** Lambda's price per GB-second for the function's architecture. */
    readonly lambdaGbSecondUsd: number;
    /** Where the message goes. */
    readonly destination: DestinationKind;
    /** Billed destination requests (64 KB chunks; for EventBridge, events). */
    readonly destinationRequests: number;
    /** EventBridge Pipes requests (0 for a Lambda relay). */
    readonly pipeRequests: number;
}

/** Dollars per million messages, by service, and their sum. */
export interface PricePerMillion {
    readonly dynamodb: number;
    readonly lambda: number;
    readonly destination: number;
    readonly pipe: number;
    readonly total: number;
}

const COUNTS = [
    "writeUnits",
    "readUnits",
    "lambdaRequests",
    "lambdaGbSeconds",
    "lambdaGbSecondUsd",
    "destinationRequests",
    "pipeRequests",
] as const;

/**
 * Dollars per million messages for `units` per message, at the list prices above.
 *
 * @throws Error when a count is negative or not a finite number, or the destination is unknown.
 */
export function pricePerMillion(units: BilledUnits): PricePerMillion {
    for (const name of COUNTS) {
        const value = units[name];
        if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
            throw new Error(`price model: ${name} must be a finite number ≥ 0 per message, got ${String(value)}`);
    }
    const requestUsd = DESTINATION_REQUEST_USD[units.destination] as number | undefined;
    if (requestUsd === undefined)
        throw new Error(
            `price model: unknown destination ${JSON.stringify(units.destination)}; one of ${Object.keys(DESTINATION_REQUEST_USD).join(", ")}`,
        );
    const dynamodb =
        (units.writeUnits * DYNAMODB_WRITE_REQUEST_UNIT_USD + units.readUnits * DYNAMODB_READ_REQUEST_UNIT_USD) *
        PER_MILLION;
    const lambda =
        (units.lambdaRequests * LAMBDA_REQUEST_USD + units.lambdaGbSeconds * units.lambdaGbSecondUsd) * PER_MILLION;
    const destination = units.destinationRequests * requestUsd * PER_MILLION;
    const pipe = units.pipeRequests * PIPES_REQUEST_USD * PER_MILLION;
    return { dynamodb, lambda, destination, pipe, total: dynamodb + lambda + destination + pipe };
}

/**
 * Write units at AWS's transaction rule from what DynamoDB Local reported: every `TransactWriteItems` entry up to
 * 1 KB bills 2 units on the table, where DynamoDB Local reports fewer for some multi-item transactions.
 *
 * @param reported - All write units reported (table and indexes).
 * @param transactions - The transactions' entries and the table units reported for them.
 */
export function billedWriteUnits(reported: number, transactions: { items: number; tableUnits: number }): number {
    return reported + Math.max(0, 2 * transactions.items - transactions.tableUnits);
}
