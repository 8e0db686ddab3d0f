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
export * from "./record/item-size";
export * from "./record/message";
export * from "./record/redrive-id";
export * from "./observability/trace-context";
export * from "./observability/open-telemetry";
export * from "./observability/metric-catalog";
export * from "./observability/emf";
export * from "./observability/json-logger";
export * from "./writer/writer";
// Typed events (issue 34): the event map, Standard Schema validators and schema versions, writer and inbox alike.
export {
    issuePath,
    MAX_SCHEMA_VERSION_LENGTH,
    schemaVersionProblem,
    type EventMap,
    type EventSchemaVersions,
    type EventType,
    type EventValidators,
    type IsUntyped,
    type StandardSchemaV1,
    type StandardSchemaV1Issue,
    type StandardSchemaV1PathSegment,
    type StandardSchemaV1Props,
    type StandardSchemaV1Result,
    type TypedEvent,
    type UntypedEvents,
    type UnvalidatedTypes,
} from "./record/typed-events";
export * from "./claim-check/pointer";
export * from "./claim-check/object-client";
export { LARGE_PAYLOAD_LIMITS, MAX_PAYLOAD_KEY_PREFIX_LENGTH, type LargePayloadOptions } from "./claim-check/offload";
export * from "./claim-check/resolver";
export * from "./relay/delivery";
export * from "./destination/kind";
export * from "./destination/create";
export * from "./destination/event-detail";
export * from "./destination/cloud-events";
export { classifySnsFailure, snsDestination } from "./destination/sns";
export { classifySqsFailure, sqsDestination, SQS_MAX_BATCH_BYTES } from "./destination/sqs";
export {
    classifyEventBridgeFailure,
    eventBridgeDestination,
    EVENTBRIDGE_MAX_CALL_BYTES,
} from "./destination/eventbridge";
export type * from "./relay/claiming-store";
export * from "./relay/claimed-delivery";
export * from "./relay/publisher";
export * from "./relay/sweeper";
export { SWEEPER_CLOCK_TOLERANCE_MS } from "./relay/server-clock";
export * from "./writer/redrive";
// Native items, both ways (issue 34): the DocumentClient's shape beside the SDK's AttributeValue maps.
export {
    documentTransactItems,
    type DocumentAction,
    type DocumentAttributes,
    type DocumentCommandAction,
    type DocumentTransactWriteCommandItem,
    type DocumentTransactWriteItem,
} from "./record/document-items";
export * from "./inbox/sqs-event";
export * from "./inbox/marker";
export * from "./inbox/inbox";
export * from "./inbox/delivery-formats";
export * from "./inbox/cloud-event-delivery";
export * from "./inbox/handler";
