/**
 * The package entry point (`dynamodb-outbox`): the Pulumi component, the policies and the whole runtime.
 * Importing it creates no resources.
 *
 * @packageDocumentation
 */
export * from "./runtime";
export * from "./components";
