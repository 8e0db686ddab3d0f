/**
 * The Lambda entry point the `OutboxConsumer` component ships around a user's `consume` callback: the component's
 * `CallbackFunction` serializes `() => inboxLambda(consume)` by value, and Lambda runs it once per cold start. It
 * reads the variables of {@link INBOX_ENV}, builds the DynamoDB client once (region, credentials and
 * `AWS_ENDPOINT_URL_DYNAMODB` from the Lambda environment, the usual SDK way), and returns
 * {@link createInboxHandler}'s handler. With a payload bucket in the environment it also builds an S3 client (the
 * package required only then) and passes the claim check's resolver. It uses the inbox only through its public
 * options.
 *
 * @packageDocumentation
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { createPayloadResolver } from "../claim-check/resolver";
import { s3Sdk } from "./s3-sdk";
import { createInboxHandler, type InboxConsumer, type InboxHandler } from "./handler";
import { Inbox } from "./inbox";

/** The environment contract between the `OutboxConsumer` component (writer) and {@link inboxLambda} (reader). */
export const INBOX_ENV = {
    /** The table the inbox markers go in. Required. */
    tableName: "OUTBOX_INBOX_TABLE_NAME",
    /** The consumer's name (`Inbox`'s `consumer`: part of every marker's key). Required. */
    consumer: "OUTBOX_INBOX_CONSUMER",
    /** The payload bucket's name, when the consumer reads claim checks (`payloadBucketArn`). Optional. */
    payloadBucket: "OUTBOX_INBOX_PAYLOAD_BUCKET",
} as const;

/** One required variable of {@link INBOX_ENV}, or the cold start's error naming it. */
function required(env: Readonly<Record<string, string | undefined>>, name: string): string {
    const value = env[name];
    if (value === undefined || value === "") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `the consumer function's environment has no ${name}; it is set by the OutboxConsumer component: deploy the function through it, or set ${name} yourself`,
            { context: { variable: name } },
        );
    }
    return value;
}

/**
 * The inbox handler of an `OutboxConsumer`'s function: `consume` behind {@link createInboxHandler}, on the inbox
 * the environment names ({@link INBOX_ENV}).
 *
 * @param consume - The user's consumer: it returns the writes that apply a message's effect.
 * @param env - The variables to read. @default process.env
 * @throws OutboxError `INVALID_CONFIG` at cold start when a required variable of {@link INBOX_ENV} is missing, the
 *   consumer's name is refused by `Inbox`, or the payload bucket's is not a bucket name.
 */
export function inboxLambda(
    consume: InboxConsumer,
    env: Readonly<Record<string, string | undefined>> = process.env,
): InboxHandler {
    const inbox = new Inbox({
        client: new DynamoDBClient({}),
        consumer: required(env, INBOX_ENV.consumer),
        tableName: required(env, INBOX_ENV.tableName),
    });
    const bucket = env[INBOX_ENV.payloadBucket];
    if (bucket === undefined || bucket === "") return createInboxHandler({ inbox, consume });
    const payloads = createPayloadResolver({ objects: new (s3Sdk().S3)({}), bucket });
    return createInboxHandler({ inbox, consume, payloads });
}
