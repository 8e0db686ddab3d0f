/**
 * The least-privilege IAM policy documents of the publisher and the sweeper, as pure functions of resolved
 * ARNs, so tests can read every action and resource. Each statement names only this outbox's table, indexes,
 * stream, destination (on its one ARN: `sns:Publish` on the topic, `sqs:SendMessage` on the queue, or
 * `events:PutEvents` and `events:DescribeEventBus` on the bus), DLQ, log group and (when given) KMS keys. The one `*` resource is `dynamodb:ListStreams`,
 * which AWS only authorizes on `*` (the action lists streams account-wide and takes no resource ARN).
 *
 * @packageDocumentation
 */
import type { DestinationKind } from "../runtime/destination/kind";
import { OutboxError } from "../runtime/errors";
import { CLAIM_INDEX } from "../runtime/schema";

/** One IAM policy statement. */
export interface PolicyStatement {
    /** A readable statement id. */
    readonly Sid: string;
    /** Always `Allow`: these roles grant, they never deny. */
    readonly Effect: "Allow";
    /** The actions granted. */
    readonly Action: readonly string[];
    /** The resources they are granted on. */
    readonly Resource: readonly string[];
}

/** An IAM policy document. */
export interface PolicyDocument {
    /** The policy language version. */
    readonly Version: "2012-10-17";
    /** The statements. */
    readonly Statement: readonly PolicyStatement[];
}

/** The resolved ARNs a function's policy is scoped to. */
export interface GrantTargets {
    /** The outbox table ARN. */
    readonly tableArn: string;
    /** The table's stream ARN (publisher only). */
    readonly streamArn?: string;
    /** The destination's kind: which actions {@link DESTINATION_GRANTS} grants on it. */
    readonly destinationKind: DestinationKind;
    /** The destination's ARN: the SNS topic's, the SQS queue's or the EventBridge bus's. */
    readonly destinationArn: string;
    /** The DLQ ARN. */
    readonly dlqArn: string;
    /** The function's own log group ARN (without the `:*` suffix). */
    readonly logGroupArn: string;
    /** The customer managed KMS key, when one is given. */
    readonly kmsKeyArn?: string;
    /** The given destination's own customer managed KMS key, when it is not `kmsKeyArn`. */
    readonly destinationKmsKeyArn?: string;
}

/**
 * What each kind of destination is granted, on its ARN only, and the statement's id: `sns:Publish` on the topic
 * (`PublishBatch` is authorized as it), `sqs:SendMessage` on the queue (`SendMessageBatch` too), `events:PutEvents`
 * on the bus, and on the bus `events:DescribeEventBus` too: PutEvents accepts and drops events for a bus that does
 * not exist, so the handlers ask once per cold start that it does (`runtime/destination/bus-check.ts`).
 */
export const DESTINATION_GRANTS = {
    sns: { sid: "PublishToTopic", actions: ["sns:Publish"] },
    sqs: { sid: "SendToQueue", actions: ["sqs:SendMessage"] },
    eventbridge: { sid: "PutEventsOnBus", actions: ["events:PutEvents", "events:DescribeEventBus"] },
} as const satisfies Record<DestinationKind, { readonly sid: string; readonly actions: readonly string[] }>;

/**
 * DynamoDB data actions both handlers call on the table and its indexes: the claim (Query on ClaimIndex and the
 * base table, ConditionCheckItem + UpdateItem inside TransactWriteItems, GetItem on the FENCE row), complete,
 * release and expire (UpdateItem, Query on RecordIDIndex/ExpiryIndex, GetItem on the expiry shards row), and the
 * sweeper's cursor (GetItem, UpdateItem). TransactWriteItems has no IAM action of its own: AWS authorizes each
 * item's UpdateItem/ConditionCheckItem. Neither handler puts an item or describes the table (no preflight runs in
 * them): `tests/integration/component/relay-policy.test.ts` records every call of their runs.
 */
export const TABLE_DATA_ACTIONS = [
    "dynamodb:ConditionCheckItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
] as const;

/**
 * The publisher's one consistent status read of a stream batch's records, which keeps a redelivered batch from
 * publishing again (`runtime/relay/delivery.ts`). The sweeper claims what it delivers, and never calls it.
 */
export const STATUS_READ_ACTION = "dynamodb:BatchGetItem";

/** The sweeper finds stranded records across partitions by scanning the sparse ClaimIndex. */
export const CLAIM_INDEX_SCAN_ACTION = "dynamodb:Scan";

/** Stream read actions scoped to the table's own stream (what `AWSLambdaDynamoDBExecutionRole` grants, narrowed). */
export const STREAM_READ_ACTIONS = [
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
] as const;

/** The stream action AWS authorizes only on resource `*`. */
export const LIST_STREAMS_ACTION = "dynamodb:ListStreams";

/** CloudWatch Logs actions on the function's own log group (the group itself is a child resource). */
export const LOG_ACTIONS = ["logs:CreateLogStream", "logs:PutLogEvents"] as const;

/** KMS actions needed to read an encrypted table/stream and to send to an encrypted destination and queue. */
export const KMS_ACTIONS = ["kms:Decrypt", "kms:GenerateDataKey*"] as const;

/**
 * The grant on the destination: its kind's actions ({@link DESTINATION_GRANTS}) on its ARN only.
 *
 * @param kind - The destination's kind.
 * @param arn - The destination's ARN.
 */
export function destinationStatement(kind: DestinationKind, arn: string): PolicyStatement {
    const grant = DESTINATION_GRANTS[kind];
    return { Sid: grant.sid, Effect: "Allow", Action: [...grant.actions], Resource: [arn] };
}

function commonStatements(t: GrantTargets, tableActions: readonly string[]): PolicyStatement[] {
    const statements: PolicyStatement[] = [
        {
            Sid: "OutboxTable",
            Effect: "Allow",
            Action: [...tableActions],
            Resource: [t.tableArn, `${t.tableArn}/index/*`],
        },
        destinationStatement(t.destinationKind, t.destinationArn),
        // Its own statement even when the destination is a queue too: the DLQ is not the destination.
        { Sid: "SendToDeadLetterQueue", Effect: "Allow", Action: ["sqs:SendMessage"], Resource: [t.dlqArn] },
        { Sid: "WriteOwnLogs", Effect: "Allow", Action: [...LOG_ACTIONS], Resource: [`${t.logGroupArn}:*`] },
    ];
    if (t.kmsKeyArn !== undefined) {
        statements.push({ Sid: "UseOutboxKey", Effect: "Allow", Action: [...KMS_ACTIONS], Resource: [t.kmsKeyArn] });
    }
    if (t.destinationKmsKeyArn !== undefined && t.destinationKmsKeyArn !== t.kmsKeyArn) {
        statements.push({
            Sid: "UseDestinationKey",
            Effect: "Allow",
            Action: [...KMS_ACTIONS],
            Resource: [t.destinationKmsKeyArn],
        });
    }
    return statements;
}

/**
 * The publisher's policy: what {@link sweeperPolicyDocument} grants but the ClaimIndex scan, plus the batch's status
 * read ({@link STATUS_READ_ACTION}) and reading this table's stream. The event source mapping polls the stream and
 * writes failed-batch metadata to the DLQ with this role.
 */
export function publisherPolicyDocument(t: GrantTargets): PolicyDocument {
    if (t.streamArn === undefined || t.streamArn === "") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `the outbox table ${t.tableArn} has no stream, so the publisher cannot read it; do not set streamEnabled: false in transform.table`,
            {
                context: { tableArn: t.tableArn },
            },
        );
    }
    return {
        Version: "2012-10-17",
        Statement: [
            { Sid: "ReadOwnStream", Effect: "Allow", Action: [...STREAM_READ_ACTIONS], Resource: [t.streamArn] },
            { Sid: "ListStreamsRequiresWildcard", Effect: "Allow", Action: [LIST_STREAMS_ACTION], Resource: ["*"] },
            ...commonStatements(t, [STATUS_READ_ACTION, ...TABLE_DATA_ACTIONS]),
        ],
    };
}

/**
 * The sweeper's policy: {@link TABLE_DATA_ACTIONS} on the table and its indexes, the destination, the DLQ, its log
 * group and the keys, plus `Scan` on the sparse ClaimIndex only (the working set of non-terminal records across all partitions). No stream.
 */
export function sweeperPolicyDocument(t: GrantTargets): PolicyDocument {
    return {
        Version: "2012-10-17",
        Statement: [
            ...commonStatements(t, TABLE_DATA_ACTIONS),
            {
                Sid: "ScanClaimIndex",
                Effect: "Allow",
                Action: [CLAIM_INDEX_SCAN_ACTION],
                Resource: [`${t.tableArn}/index/${CLAIM_INDEX.indexName}`],
            },
        ],
    };
}

/**
 * The DynamoDB actions `OutboxWriter.write` needs on the outbox table: `PutItem` for each record (and each id
 * guard) inside its TransactWriteItems, `UpdateItem` for the FENCE row's `seq_counter` when a message has an
 * ordering key, and for the expiry shards mark when `expiryShards` > 1. TransactWriteItems has no IAM action of its own. The writer reads no index, so none is granted.
 */
export const WRITER_TABLE_ACTIONS = ["dynamodb:PutItem", "dynamodb:UpdateItem"] as const;

/** What the writer's policy is scoped to. */
export interface WriterGrantTargets {
    /** The outbox table ARN. */
    readonly tableArn: string;
    /** The customer managed KMS key of the table, when one is given. */
    readonly kmsKeyArn?: string;
    /** The claim check's `s3:PutObject` grant, when `largePayloads` is on (`components/payload-bucket.ts`). */
    readonly payloadStatement?: PolicyStatement;
}

/**
 * The policy an application role needs to call `OutboxWriter.write` on this outbox: {@link WRITER_TABLE_ACTIONS}
 * on the table's ARN only, `s3:PutObject` under the payload bucket's prefix with `largePayloads`, plus {@link KMS_ACTIONS}
 * on the key when the table uses a customer managed key (the created payload bucket uses it too). The
 * application's own items in the same transaction are on its own tables: grant those yourself. It grants no
 * destination action, whatever the destination: the writer never publishes.
 */
export function writerPolicyDocument(t: WriterGrantTargets): PolicyDocument {
    const statements: PolicyStatement[] = [
        { Sid: "WriteOutboxRecords", Effect: "Allow", Action: [...WRITER_TABLE_ACTIONS], Resource: [t.tableArn] },
    ];
    if (t.payloadStatement !== undefined) statements.push(t.payloadStatement);
    if (t.kmsKeyArn !== undefined) {
        statements.push({ Sid: "UseOutboxKey", Effect: "Allow", Action: [...KMS_ACTIONS], Resource: [t.kmsKeyArn] });
    }
    return { Version: "2012-10-17", Statement: statements };
}
