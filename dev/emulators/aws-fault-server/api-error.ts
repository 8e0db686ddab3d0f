/**
 * An error the server answers a call with, as SNS or SQS would: its code, HTTP status and whether it is the
 * sender's fault. Each protocol writes it in its own shape (`aws-query.ts`, `sqs-json.ts`).
 *
 * @packageDocumentation
 */

/** An error answer. */
export class ApiError extends Error {
    constructor(
        readonly code: string,
        readonly status: number,
        message: string,
        readonly sender = true,
    ) {
        super(message);
    }
}
