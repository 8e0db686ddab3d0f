/**
 * The Pulumi side of the package: the `Outbox` component, its args, defaults and validation, the IAM policy
 * builders and the CrossGuard policies. Importing it declares no resource and starts no policy server.
 *
 * @packageDocumentation
 */
export * from "./outbox";
export * from "./defaults";
export * from "./validation";
export * from "./iam";
export * from "./policies";
