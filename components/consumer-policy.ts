/**
 * The least-privilege IAM policy of an inbox consumer (`createInboxHandler` behind an SQS event source mapping):
 * what the mapping needs on the queue, and what the inbox needs on the marker table, nothing else.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import { OutboxError } from "../runtime/errors";
import type { PolicyDocument } from "./iam";
import { readerPolicyDocument } from "./payload-bucket";

/**
 * What Lambda's SQS event source mapping calls with the function's role: it polls (`ReceiveMessage`), deletes what
 * the handler did not report failed (`DeleteMessage`, also for `DeleteMessageBatch`), and reads the queue's
 * attributes (`GetQueueAttributes`). It never changes a message's visibility: a failed message comes back when its
 * visibility timeout ends. The same three as AWS's managed `AWSLambdaSQSQueueExecutionRole`, on one queue.
 */
export const CONSUMER_QUEUE_ACTIONS = ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"] as const;

/**
 * What `Inbox.apply` needs on the marker table, inside the consumer's TransactWriteItems (which has no IAM action of
 * its own: AWS authorizes each of its actions as its own PutItem, UpdateItem, DeleteItem or ConditionCheckItem):
 * `dynamodb:PutItem` for the marker's conditional Put (and its copy under `previousMarkerShards`), and
 * `dynamodb:ConditionCheckItem` for the check of the older sourceless marker key, which `legacyMarkerCheck` (on by
 * default) adds for every message that names its source. The inbox reads nothing.
 */
export const CONSUMER_INBOX_TABLE_ACTIONS = ["dynamodb:ConditionCheckItem", "dynamodb:PutItem"] as const;

/** The resolved ARNs a consumer's policy is scoped to. */
export interface ConsumerGrantTargets {
    /** The SQS queue the consumer's function is subscribed to. */
    readonly queueArn: string;
    /** The table the inbox markers go in. */
    readonly inboxTableArn: string;
    /** The Outbox's payload bucket, when the consumer reads claim checks. @default undefined (no S3 grant) */
    readonly payloadBucketArn?: string | undefined;
    /** The payload bucket's KMS key, when it has one. @default undefined (no KMS grant) */
    readonly payloadKmsKeyArn?: string | undefined;
}

const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?$/;
const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]{3,255}$/;

/**
 * The policy document of an inbox consumer: {@link CONSUMER_QUEUE_ACTIONS} on the queue and
 * {@link CONSUMER_INBOX_TABLE_ACTIONS} on the inbox table, each on its ARN only; with a payload bucket, the
 * statements of the Outbox's reader grant (`readerPolicyDocument`: `s3:GetObject` on the payloads, `kms:Decrypt`
 * on the bucket's key when given), no more.
 *
 * @param t - The queue's and the inbox table's ARNs, and the payload bucket's and its key's when given.
 * @throws OutboxError `INVALID_CONFIG` when an ARN is not an SQS queue ARN or a DynamoDB table ARN.
 */
export function consumerPolicyDocument(t: ConsumerGrantTargets): PolicyDocument {
    if (typeof t.queueArn !== "string" || !QUEUE_ARN.test(t.queueArn)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `consumerPolicy: queueArn is ${JSON.stringify(t.queueArn)}; expected an SQS queue ARN, arn:aws:sqs:<region>:<account>:<queue name>; pass the queue's arn (not its url)`,
            { context: { queueArn: String(t.queueArn) } },
        );
    }
    if (typeof t.inboxTableArn !== "string" || !TABLE_ARN.test(t.inboxTableArn)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `consumerPolicy: inboxTableArn is ${JSON.stringify(t.inboxTableArn)}; expected a DynamoDB table ARN, arn:aws:dynamodb:<region>:<account>:table/<table name>; pass the table's arn (not its name, and not an index's or stream's ARN)`,
            { context: { inboxTableArn: String(t.inboxTableArn) } },
        );
    }
    const reader =
        t.payloadBucketArn === undefined ? [] : readerPolicyDocument(t.payloadBucketArn, t.payloadKmsKeyArn).Statement;
    return {
        Version: "2012-10-17",
        Statement: [
            { Sid: "ReceiveFromQueue", Effect: "Allow", Action: [...CONSUMER_QUEUE_ACTIONS], Resource: [t.queueArn] },
            {
                Sid: "WriteInboxMarkers",
                Effect: "Allow",
                Action: [...CONSUMER_INBOX_TABLE_ACTIONS],
                Resource: [t.inboxTableArn],
            },
            ...reader,
        ],
    };
}

/**
 * The least-privilege IAM policy an inbox consumer's function role needs, as JSON for `aws.iam.RolePolicy`: receive
 * and delete on the queue (what Lambda's event source mapping does with the role), and `dynamodb:PutItem` (the
 * marker) and `dynamodb:ConditionCheckItem` (the `legacyMarkerCheck` of the older marker key) on the inbox table.
 *
 * Not included, grant them yourself:
 * - the consumer's own writes, on its own tables (when the markers share the consumer's table, the actions its
 *   writes use on it: `dynamodb:PutItem`, `UpdateItem`, `DeleteItem`, `ConditionCheckItem`);
 * - KMS: `kms:Decrypt` on the queue's key when it is encrypted with a customer managed key, and `kms:Decrypt` and
 *   `kms:GenerateDataKey*` on the table's key when it has one;
 * - the function's logs (`AWSLambdaBasicExecutionRole`).
 *
 * @param queueArn - The queue the function consumes.
 * @param inboxTableArn - The table the inbox markers go in.
 * @param payloadBucketArn - The Outbox's payload bucket, when the consumer reads claim checks: adds the Outbox's
 *   reader grant. @default undefined
 * @param payloadKmsKeyArn - The payload bucket's KMS key, when it has one. @default undefined
 * @returns the policy document, as JSON.
 *
 * @example
 * const role = new aws.iam.Role("billing", { assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal({ Service: "lambda.amazonaws.com" }) });
 * new aws.iam.RolePolicy("billing-inbox", { role: role.id, policy: consumerPolicy(queue.arn, table.arn) });
 */
export function consumerPolicy(
    queueArn: pulumi.Input<string>,
    inboxTableArn: pulumi.Input<string>,
    payloadBucketArn?: pulumi.Input<string>,
    payloadKmsKeyArn?: pulumi.Input<string>,
): pulumi.Output<string> {
    return pulumi
        .all([queueArn, inboxTableArn, payloadBucketArn, payloadKmsKeyArn])
        .apply(([q, t, b, k]) =>
            JSON.stringify(
                consumerPolicyDocument({ queueArn: q, inboxTableArn: t, payloadBucketArn: b, payloadKmsKeyArn: k }),
            ),
        );
}
