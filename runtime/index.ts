/**
 * The runtime entry point (`dynamodb-outbox/runtime`): everything that runs in an application or a Lambda,
 * with no Pulumi dependency. The local event source mapping and the stream event types are the test kit,
 * `dynamodb-outbox/testing` (`testing/index.ts`).
 *
 * @packageDocumentation
 */
export * from "./schema";
export * from "./errors";
export * from "./ports";
export * from "./config";
export * from "./limits";
export * from "./record/keys";
export * from "./record/envelope";
export * from "./record/codec";
export * from "./record/fence";
export * from "./record/expiry-shard";
export * from "./store";
export * from "./ids";
export * from "./item-size";
export * from "./message";
export * from "./trace-context";
export * from "./open-telemetry";
export * from "./metric-catalog";
export * from "./emf";
export * from "./json-logger";
export * from "./writer";
export * from "./claim-check/pointer";
export * from "./claim-check/object-client";
export { LARGE_PAYLOAD_LIMITS, MAX_PAYLOAD_KEY_PREFIX_LENGTH, type LargePayloadOptions } from "./claim-check/offload";
export * from "./claim-check/resolver";
export * from "./delivery";
export * from "./destination/kind";
export * from "./destination/create";
export * from "./destination/event-detail";
export { classifySnsFailure, snsDestination } from "./destination/sns";
export { classifySqsFailure, sqsDestination, SQS_MAX_BATCH_BYTES } from "./destination/sqs";
export {
    classifyEventBridgeFailure,
    eventBridgeDestination,
    EVENTBRIDGE_MAX_CALL_BYTES,
} from "./destination/eventbridge";
export * from "./claimed-delivery";
export * from "./publisher";
export * from "./sweeper";
export { SWEEPER_CLOCK_TOLERANCE_MS } from "./server-clock";
export * from "./redrive";
export * from "./inbox/sqs-event";
export * from "./inbox/marker";
export * from "./inbox/inbox";
export * from "./inbox/delivery-formats";
export * from "./inbox/handler";
