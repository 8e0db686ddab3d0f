/**
 * The AWS SDK clients the runtime uses besides DynamoDB's, loaded on first use rather than when the runtime is
 * required. `require("dynamodb-outbox/runtime")` loads every module of the runtime, so a top-level import of the SNS,
 * SQS and EventBridge clients made a writer-only application load all three (`npm run bench:require` measures it).
 * Each function here requires its package the first time code that sends through it runs (a destination's send, the
 * DLQ's, a redrive, a relay's cold start), and Node's module cache keeps it. Types are imported as types only.
 *
 * @packageDocumentation
 */
/* eslint-disable @typescript-eslint/no-require-imports -- a require on first use is what this module is for */
import type * as Sns from "@aws-sdk/client-sns";
import type * as Sqs from "@aws-sdk/client-sqs";
import type * as EventBridge from "@aws-sdk/client-eventbridge";

/** `@aws-sdk/client-sns`, required on first use. */
export function snsSdk(): typeof Sns {
    return require("@aws-sdk/client-sns") as typeof Sns;
}

/** `@aws-sdk/client-sqs`, required on first use. */
export function sqsSdk(): typeof Sqs {
    return require("@aws-sdk/client-sqs") as typeof Sqs;
}

/** `@aws-sdk/client-eventbridge`, required on first use. */
export function eventBridgeSdk(): typeof EventBridge {
    return require("@aws-sdk/client-eventbridge") as typeof EventBridge;
}
