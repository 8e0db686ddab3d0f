// runtime/testing/: the test kit. It may import the runtime's root files; nothing else in the runtime imports it
// (eslint.config.mjs).
/**
 * The test kit entry point (`dynamodb-outbox/testing`): a local stand-in for Lambda's DynamoDB event source
 * mapping, the filter pattern matcher it applies, and the stream event exactly as Lambda delivers it. For your
 * tests and local runs; no Pulumi dependency, and nothing the Lambda handlers load, so the installed package's
 * Lambda archives leave it out.
 *
 * @packageDocumentation
 */
export * from "./stream-event";
export * from "./filter-pattern";
export * from "./event-source-mapping";
