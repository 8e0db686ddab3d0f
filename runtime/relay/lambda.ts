/**
 * The Lambda entry points the Outbox component ships. Each is a zero-argument factory that
 * `aws.lambda.CallbackFunction` serializes by value and runs once per cold start: it reads the
 * {@link ENV} contract, builds the SDK clients once, and returns the handler.
 *
 * The clients take region, credentials and endpoints from the Lambda environment the usual SDK way
 * (`AWS_REGION`, the execution role, and `AWS_ENDPOINT_URL_DYNAMODB` / `_SNS` / `_SQS` / `_EVENTBRIDGE` when set,
 * which is how the end-to-end test points the exact serialized code at DynamoDB Local and a local SNS). Only the
 * destination's client is built beside DynamoDB's and the DLQ's SQS client.
 *
 * @packageDocumentation
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ENV, readHandlerEnvironment, type HandlerEnvironment } from "../config";
import { destinationArnRegion } from "../destination/aws-resource-names";
import { DESTINATION_SETTINGS } from "../destination/kind";
import { eventBridgeSdk, snsSdk, sqsSdk } from "../sdk-clients";
import { createLambdaLogger } from "../observability/json-logger";
import { definedFields } from "../record/defined-fields";
import { createPublisher, type PublisherConfig, type PublisherHandler, type StreamBatchResponse } from "./publisher";
import { createSweeper, type SweeperHandler } from "./sweeper";

/**
 * The options of the destination's SNS or EventBridge client. On a global table (an origin scope,
 * `OUTBOX_ORIGIN_REGION`) a replica region's relay publishes to the one destination, in the home region, and SNS and
 * EventBridge take a topic or bus only at its own region's endpoint: the client takes the region the ARN names.
 * Otherwise `{}`, the function's region, as before (the deployment check then refuses a destination of another
 * region). A queue destination is not given one: its SQS client is the DLQ's too, in the function's region.
 *
 * @param env - The handler's environment.
 */
export function destinationClientOptions(env: HandlerEnvironment): { region?: string } {
    if (env.origin === undefined) return {};
    const region = destinationArnRegion(env.destination.arn);
    return region === undefined ? {} : { region };
}

/**
 * What both handlers are built from: SDK clients configured by the Lambda environment, the {@link ENV} values,
 * and a JSON logger naming the function.
 */
function configFromEnvironment(env: HandlerEnvironment, functionName: string): PublisherConfig {
    const { setting, arn } = env.destination;
    return {
        dynamodb: new DynamoDBClient({}),
        // The queue destination's URL is derived from its ARN (`sqs.<region>.amazonaws.com`); the client sends to
        // its own resolved endpoint (the region's, a FIPS one, or AWS_ENDPOINT_URL_SQS) instead of that URL's host.
        sqs: new (sqsSdk().SQSClient)({ useQueueUrlAsEndpoint: false }),
        ...(setting === DESTINATION_SETTINGS.sns
            ? { sns: new (snsSdk().SNSClient)(destinationClientOptions(env)) }
            : {}),
        ...(setting === DESTINATION_SETTINGS.eventbridge
            ? { eventBridge: new (eventBridgeSdk().EventBridgeClient)(destinationClientOptions(env)) }
            : {}),
        [setting]: arn,
        ...(env.eventSource !== undefined ? { eventSource: env.eventSource } : {}),
        ...(env.cloudEventsSource !== undefined ? { cloudEvents: { source: env.cloudEventsSource } } : {}),
        tableName: env.tableName,
        ...(env.source !== undefined ? { source: env.source } : {}),
        dlqUrl: env.dlqUrl,
        fifo: env.fifo,
        completionGraceSeconds: env.completionGraceSeconds,
        maxPublishAttempts: env.maxPublishAttempts,
        claimVersion: env.claimVersion,
        ...definedFields(env, "checkEventBus", "origin"),
        logger: createLambdaLogger(functionName),
    };
}

/**
 * Builds the publisher handler from the environment. Used as the publisher function's `callbackFactory`.
 *
 * @throws OutboxError `INVALID_CONFIG` at cold start when a variable of {@link ENV} is missing or malformed.
 */
export function publisherLambdaFactory(): PublisherHandler {
    return createPublisher(configFromEnvironment(readHandlerEnvironment(process.env), "outbox-publisher"));
}

/**
 * Builds the sweeper handler from the environment. Used as the sweeper function's `callbackFactory`.
 *
 * @throws OutboxError `INVALID_CONFIG` at cold start when a variable of {@link ENV} is missing or malformed.
 */
export function sweeperLambdaFactory(): SweeperHandler {
    const env = readHandlerEnvironment(process.env);
    return createSweeper({
        ...configFromEnvironment(env, "outbox-sweeper"),
        sweepAfterSeconds: env.sweepAfterSeconds,
        expiryShards: env.expiryShards,
        maxPartitionsPerRun: env.maxPartitionsPerRun,
    });
}

/** The variable names, re-exported for the component. */
export { ENV };
export type { StreamBatchResponse };
