/**
 * The package entry point (`dynamodb-outbox`): the Pulumi component and the whole runtime. Importing it creates
 * no resources. The CrossGuard policies are the separate entry `dynamodb-outbox/policy`: `@pulumi/policy` 1.21.0
 * ships declarations that fail a strict `tsc` without `skipLibCheck`, and every consumer of this entry would
 * type-check them.
 *
 * @packageDocumentation
 */
export * from "./runtime";
export * from "./components";
