/**
 * The `Outbox` Pulumi component: a DynamoDB outbox table, its stream mapped to a publisher Lambda that
 * publishes to its destination (an SNS topic, created or given; or a given SQS queue or EventBridge bus), a
 * scheduled sweeper as the safety net, and an SQS dead-letter queue.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { DESTINATION_KINDS } from "../runtime/destination/kind";
import type { OutboxArgs } from "./args";
import { queueArgs, tableArgs, topicArgs } from "./children";
import { enterSerializationRoot } from "./code-path";
import { writerPolicyDocument } from "./iam";
import { declareOutboxAlarms } from "./alarms";
import { declareOutboxDashboard } from "./dashboard";
import { grantName, grantRolePolicy, type GrantRole } from "./grants";
import { declarePublisher, declareSweeper, relayTargets, type HandlerTargets, type OutboxParent } from "./handlers";
import { declareReplicaRelays, homeOrigin } from "./replica-regions";
import { declarePayloadBucket, payloadOutputs, payloadWriteStatement } from "./payload-bucket";
import { OUTBOX_TYPE } from "./naming";
import { handlesOf, keepHandles, outboxNodes, type OutboxNodes } from "./nodes";
import { OutboxError } from "../runtime/errors";
import { resolveOutboxSettings } from "./settings";
import { transformed } from "./transform";
import { validateOutboxArgs } from "./validation";

export type { OutboxArgs, OutboxAlarmThresholds, OutboxTransforms } from "./args";
export { OutboxBillingMode, OutboxLogLevel } from "./args";
export type { OutboxNodes } from "./nodes";
export type { GrantRole } from "./grants";

export { OUTBOX_TYPE } from "./naming";

/**
 * A transactional outbox on DynamoDB, provisioned right the first time.
 *
 * Children (named `<name>-<suffix>`, see `components/naming.ts`): the table (or an existing one it adopts, see
 * `importTableName`), the SNS topic (unless a destination is given: `topicArn`, `queueArn` or `eventBusArn`), the
 * SQS DLQ, the publisher function with its role and log group, the stream mapping, and the
 * sweeper function with its role, log group, schedule, target and invoke permission; unless turned off, the
 * CloudWatch alarms (`components/alarms.ts`) and the dashboard (`components/dashboard.ts`). With `replicaRegions`,
 * the table's replicas and, in each of their regions, a provider and a relay of their own
 * (`components/replica-regions.ts`).
 *
 * @example
 * ```ts
 * const outbox = new Outbox("orders", { fifo: true });
 * export const tableName = outbox.tableName;
 * ```
 */
export class Outbox extends pulumi.ComponentResource {
    /** The table's name (for `OutboxWriter`). */
    public readonly tableName: pulumi.Output<string>;
    /** The table's ARN (for the application's IAM policy). */
    public readonly tableArn: pulumi.Output<string>;
    /** The table's stream ARN. */
    public readonly streamArn: pulumi.Output<string>;
    /**
     * The ARN of the destination events are published to: the SNS topic (created, or `topicArn`), the SQS queue
     * (`queueArn`) or the EventBridge bus (`eventBusArn`). Give it to the application's `OutboxWriter` as `address`.
     */
    public readonly destinationArn: pulumi.Output<string>;
    /**
     * The SNS topic events are published to (created, or the one given); undefined when the destination is a queue
     * or a bus (see `destinationArn`).
     */
    public readonly topicArn: pulumi.Output<string | undefined>;
    /** The DLQ's URL. */
    public readonly dlqUrl: pulumi.Output<string>;
    /** The DLQ's ARN. */
    public readonly dlqArn: pulumi.Output<string>;
    /** The publisher function's name. */
    public readonly publisherFunctionName: pulumi.Output<string>;
    /** The sweeper function's name. */
    public readonly sweeperFunctionName: pulumi.Output<string>;
    /**
     * The least-privilege IAM policy (JSON) an application role needs to call `OutboxWriter.write` on this table:
     * attach it to the writing function's role, in this stack or another one reading it through a StackReference.
     */
    public readonly writerPolicy: pulumi.Output<string>;
    /** The claim check's bucket (`largePayloads` or `payloadBucketArn`), for `largePayloads.bucket`; undefined without one. */
    public readonly payloadBucketName: pulumi.Output<string | undefined>;
    /**
     * The IAM policy (JSON) a consumer's role needs to resolve claim checks: `s3:GetObject` on the payloads, and
     * `kms:Decrypt` on `kmsKeyArn` when given; undefined without a payload bucket.
     */
    public readonly readerPolicy: pulumi.Output<string | undefined>;
    /** The ARNs of the outbox's CloudWatch alarms (empty with `alarms: false`). */
    public readonly alarmArns: pulumi.Output<string[]>;

    /**
     * @param name - the component's name; every child's name starts with it.
     * @param args - the settings; every one is optional. Invalid plain values throw `INVALID_CONFIG` before
     *   any resource is declared.
     * @param opts - component resource options.
     */
    constructor(name: string, args: OutboxArgs = {}, opts?: pulumi.ComponentResourceOptions) {
        // Before super(): invalid args must not leave even the component registered.
        validateOutboxArgs(args, name);
        // Pulumi serializes the handlers from the working directory, which the provider host inherits from the
        // consumer's project (see components/code-path.ts).
        enterSerializationRoot();
        // `{}` rather than `args`: since @pulumi/pulumi 3.202 component inputs are sent to the engine, and
        // args holding Outputs (a topic ARN from a StackReference, a key ARN) can crash the program with
        // "promises were still active" (pulumi/pulumi#23953, open). The children carry every setting anyway.
        super(OUTBOX_TYPE, name, {}, opts);
        const s = resolveOutboxSettings(args);
        const o: OutboxParent = { parent: this, name, s, t: args.transform ?? {} };
        const { table, topic, destinationArn, dlq } = declareStorage(o);
        const payloads = declarePayloadBucket(o, args);
        const destination = { destinationKind: s.destinationKind, destinationArn };
        // Only on a table with replicas: a single-region outbox asks nothing and sets no origin variable.
        const origin = s.replicaRegions.length > 0 ? homeOrigin(o) : undefined;
        const targets = relayTargets(s, {
            tableName: table.name,
            tableArn: table.arn,
            streamArn: table.streamArn,
            ...destination,
            dlq,
            ...(origin !== undefined ? { origin } : {}),
        });
        const { publisher, mapping } = declarePublisher(o, targets);
        const sweeper = declareSweeper(o, targets);
        if (origin !== undefined) declareReplicaRelays(o, origin, { table, ...destination });
        const monitored = {
            tableName: table.name,
            publisherFunctionName: publisher.name,
            sweeperFunctionName: sweeper.name,
            dlqName: dlq.name,
            mappingUuid: mapping.uuid,
        };
        const alarms = declareOutboxAlarms(o, monitored);
        const dashboard = s.dashboard ? declareOutboxDashboard(o, { ...monitored, tableArn: table.arn }) : undefined;
        const returned = { table, topic, dlq, publisher, eventSourceMapping: mapping, sweeper, alarms, dashboard };
        const nodes = outboxNodes(this, name, { ...returned, payloadBucket: payloads?.bucket });
        keepHandles(this, { name, nodes, hasPayloadBucket: payloads !== undefined });

        this.tableName = table.name;
        this.tableArn = table.arn;
        this.streamArn = table.streamArn;
        this.destinationArn = destinationArn;
        this.topicArn = s.destinationKind === DESTINATION_KINDS.sns ? destinationArn : pulumi.output(undefined);
        this.dlqUrl = dlq.url;
        this.dlqArn = dlq.arn;
        this.publisherFunctionName = publisher.name;
        this.sweeperFunctionName = sweeper.name;
        this.alarmArns = pulumi.all(alarms.map((a) => a.arn));
        this.writerPolicy = pulumi
            .all([table.arn, s.kmsKeyArn, payloads?.bucketArn])
            .apply(([tableArn, kmsKeyArn, bucketArn]) =>
                JSON.stringify(
                    writerPolicyDocument({
                        tableArn,
                        ...(kmsKeyArn !== undefined ? { kmsKeyArn } : {}),
                        ...(bucketArn !== undefined ? { payloadStatement: payloadWriteStatement(bucketArn) } : {}),
                    }),
                ),
            );
        const payloadOut = payloadOutputs(payloads, s.kmsKeyArn);
        this.payloadBucketName = payloadOut.payloadBucketName;
        this.readerPolicy = payloadOut.readerPolicy;
        this.registerOutputs({
            tableName: this.tableName,
            tableArn: this.tableArn,
            streamArn: this.streamArn,
            destinationArn: this.destinationArn,
            topicArn: this.topicArn,
            dlqUrl: this.dlqUrl,
            dlqArn: this.dlqArn,
            publisherFunctionName: this.publisherFunctionName,
            sweeperFunctionName: this.sweeperFunctionName,
            writerPolicy: this.writerPolicy,
            payloadBucketName: this.payloadBucketName,
            readerPolicy: this.readerPolicy,
            alarmArns: this.alarmArns,
        });
    }

    /**
     * The child resources, typed: the table, the topic (`undefined` when a destination is given), the DLQ, the two
     * functions with their roles and log groups, the stream mapping, the sweeper's schedule, target and permission,
     * the alarms, the dashboard (`undefined` with `dashboard: false`) and the payload bucket (`undefined` unless
     * `largePayloads` created one). A getter, not a field: Pulumi's component schema analyzer would take a field
     * for an output other languages must read.
     */
    get nodes(): OutboxNodes {
        return handlesOf(this).nodes;
    }

    /**
     * Grants `role` what `OutboxWriter.write` needs on this outbox: an `aws.iam.RolePolicy`, a child of the
     * outbox, whose policy is the {@link Outbox.writerPolicy} output itself.
     *
     * @param role - The role: the `aws.iam.Role`, or its name.
     * @param name - The RolePolicy's Pulumi name. @default `<outbox name>-grant-write-<role's Pulumi name or name>`;
     *   required when the role's name is an Output.
     * @throws OutboxError `INVALID_CONFIG` for a role that is neither, an empty name, or a role name that is an
     *   Output without `name`.
     */
    grantWrite(role: GrantRole, name?: string): aws.iam.RolePolicy {
        const policyName = grantName({
            componentName: this.outboxName(),
            grant: "write",
            method: "grantWrite",
            role,
            ...(name !== undefined ? { name } : {}),
        });
        return grantRolePolicy(this, policyName, role, this.writerPolicy);
    }

    /**
     * Grants `role` what resolving this outbox's claim checks needs: an `aws.iam.RolePolicy`, a child of the
     * outbox, whose policy is the {@link Outbox.readerPolicy} output itself.
     *
     * @param role - The role: the `aws.iam.Role`, or its name.
     * @param name - The RolePolicy's Pulumi name. @default `<outbox name>-grant-read-payloads-<role's Pulumi name
     *   or name>`; required when the role's name is an Output.
     * @throws OutboxError `INVALID_CONFIG` when the outbox has no payload bucket (neither `largePayloads` nor
     *   `payloadBucketArn`), and as {@link Outbox.grantWrite} for the role and the name.
     */
    grantReadPayloads(role: GrantRole, name?: string): aws.iam.RolePolicy {
        const outboxName = this.outboxName();
        if (!handlesOf(this).hasPayloadBucket)
            throw new OutboxError(
                "INVALID_CONFIG",
                `grantReadPayloads: Outbox "${outboxName}" has no payload bucket, so there are no payloads to read; set largePayloads: true (or payloadBucketArn) on it, or drop the grant`,
                { context: { outboxName } },
            );
        const policyName = grantName({
            componentName: outboxName,
            grant: "read-payloads",
            method: "grantReadPayloads",
            role,
            ...(name !== undefined ? { name } : {}),
        });
        return grantRolePolicy(
            this,
            policyName,
            role,
            this.readerPolicy.apply((p) => {
                if (p === undefined)
                    throw new OutboxError(
                        "INVALID_CONFIG",
                        `Outbox "${outboxName}" has a payload bucket but no readerPolicy`,
                    );
                return p;
            }),
        );
    }

    /** The component's name, as its children's names start with it. */
    private outboxName(): string {
        return handlesOf(this).name;
    }
}

/** The table (or the one it adopts), the destination (a topic is created unless one is given) and the DLQ. */
function declareStorage({ parent, name, s, t }: OutboxParent): Pick<HandlerTargets, "destinationArn" | "dlq"> & {
    table: aws.dynamodb.Table;
    topic: aws.sns.Topic | undefined;
} {
    // An adopted table keeps its name: autonamed, the import would plan a replacement of the table it takes over.
    const table = new aws.dynamodb.Table(
        ...transformed(
            { name, t },
            "table",
            s.importTableName === undefined ? tableArgs(s) : { ...tableArgs(s), name: s.importTableName },
            s.importTableName === undefined ? { parent } : { parent, import: s.importTableName },
        ),
    );
    // A given topic, queue or bus is published to as it is; transform.topic has no topic to merge into then.
    const topic =
        s.destinationArn !== undefined
            ? undefined
            : new aws.sns.Topic(...transformed({ name, t }, "topic", topicArgs(s), { parent }));
    const destinationArn = topic !== undefined ? topic.arn : pulumi.output(s.destinationArn as pulumi.Input<string>);
    const dlq = new aws.sqs.Queue(...transformed({ name, t }, "queue", queueArgs(s), { parent }));
    return { table, topic, destinationArn, dlq };
}
