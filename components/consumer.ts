/**
 * The `OutboxConsumer` Pulumi component: the consuming half of an outbox in one declaration. A queue fed by the
 * outbox's destination (subscribed to its topic with raw delivery, or the target of a rule on its bus; or its queue
 * itself), a DLQ behind a redrive policy, a queue policy that lets only that source send, the inbox table, and a
 * function mapped to the queue with `ReportBatchItemFailures` that applies each event once: the user's `consume`
 * bundled inside `createInboxHandler`, or an existing function (`functionArn`).
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { queueUrlOfArn, SQS_QUEUE_ARN } from "../runtime/destination/aws-resource-names";
import { DESTINATION_KINDS, destinationKindOfArn } from "../runtime/destination/kind";
import { OutboxError } from "../runtime/errors";
import type { InboxConsumer } from "../runtime/inbox/handler";
import { INBOX_ENV, inboxLambda } from "../runtime/inbox/lambda";
import { INBOX_MARKER } from "../runtime/schema";
import { LAMBDA_RUNTIME, REPORT_BATCH_ITEM_FAILURES, withTags } from "./children";
import { enterSerializationRoot, handlerCodePathOptions, type HandlerCodePathOptions } from "./code-path";
import {
    CONSUMER_DLQ_RETENTION_SECONDS,
    CONSUMER_LOG_RETENTION_DAYS,
    CONSUMER_RANGES,
    OLDEST_MESSAGE_ALARM_SECONDS,
    VISIBILITY_TIMEOUT_FACTOR,
    type OutboxConsumerArgs,
    type OutboxConsumerDestinationKind,
} from "./consumer-args";
import { CONSUMER_CHILD_SUFFIX, OUTBOX_CONSUMER_TYPE, consumerChildName } from "./consumer-naming";
import { consumerPolicy, consumerPolicyDocument, type ConsumerGrantTargets } from "./consumer-policy";
import type { OutboxConsumerNodes } from "./consumer-nodes";
import {
    consumerArgsError,
    destinationArnProblem,
    payloadBucketArnProblem,
    validateOutboxConsumerArgs,
} from "./consumer-validation";
import { LOG_ACTIONS, type PolicyDocument } from "./iam";
import { bucketNameOfArn } from "./payload-bucket";
import { declareRolePolicy, type RoleOrName } from "./role-policy";

export type { OutboxConsumerArgs } from "./consumer-args";
export type { OutboxConsumerNodes } from "./consumer-nodes";
export { OutboxConsumerDestinationKind } from "./consumer-args";
export { OUTBOX_CONSUMER_TYPE } from "./consumer-naming";
export type { RoleOrName } from "./role-policy";

/** The service principals a queue policy lets send: SNS for a topic's subscription, EventBridge for a rule's target. */
const SENDERS = { sns: "sns.amazonaws.com", eventbridge: "events.amazonaws.com" } as const;

/** The rule's pattern on a bus when no `filter` is given: every event the outbox put (it carries `detail.outbox.id`). */
export const DEFAULT_BUS_PATTERN = { detail: { outbox: { id: [{ exists: true }] } } } as const;

/** A Lambda function ARN: groups 1 partition, 2 region, 3 account, 4 the function's name. */
const FUNCTION_ARN_PARTS = /^arn:(aws[a-z-]*):lambda:([a-z0-9-]+):(\d{12}):function:([A-Za-z0-9_-]{1,64})(?::[^:]+)?$/;

/**
 * What {@link OutboxConsumer.grantConsume} and {@link OutboxConsumer.nodes} need of their consumer; kept beside it so
 * the class holds only outputs.
 */
const GRANTS = new WeakMap<
    OutboxConsumer,
    { name: string; count: number; targets: GrantInputs; nodes: OutboxConsumerNodes }
>();

/** The consumer's grant targets, as Inputs. */
type GrantInputs = { [K in keyof ConsumerGrantTargets]: pulumi.Input<ConsumerGrantTargets[K]> };

/**
 * The function's name in its ARN.
 *
 * @param arn - A Lambda function ARN.
 * @throws OutboxError `INVALID_CONFIG` when it is none.
 */
function functionArnParts(arn: string): { partition: string; region: string; account: string; name: string } {
    const m = FUNCTION_ARN_PARTS.exec(arn);
    if (m === null) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `OutboxConsumer: functionArn is ${JSON.stringify(arn)}; expected arn:aws:lambda:<region>:<account>:function:<name>; pass the function's arn output`,
            { context: { functionArn: arn } },
        );
    }
    return { partition: m[1]!, region: m[2]!, account: m[3]!, name: m[4]! };
}

/**
 * The ARN of the inbox table named `tableName` in the function's account and region (where `Inbox`'s client,
 * built in the function, finds it).
 *
 * @param functionArn - The consumer's function's ARN.
 * @param tableName - The table's name.
 */
function inboxTableArnOf(functionArn: string, tableName: string): string {
    const { partition, region, account } = functionArnParts(functionArn);
    return `arn:${partition}:dynamodb:${region}:${account}:table/${tableName}`;
}

/**
 * The consumer function's `codePathOptions`: the publisher's ({@link handlerCodePathOptions}), except where the
 * package is installed at `node_modules/<name>` and the publisher's archive lists the relay's files one by one:
 * those are not the inbox's, so the consumer's archive takes the package whole instead (without its dependencies).
 */
function consumerCodePathOptions(base: HandlerCodePathOptions = handlerCodePathOptions()): HandlerCodePathOptions {
    const manifest = base.extraIncludePaths.find((p) => p.endsWith("/package.json"));
    if (manifest === undefined) return base;
    const self = manifest.slice(0, -"/package.json".length).replace(/^node_modules\//, "");
    return {
        extraExcludePackages: base.extraExcludePackages.filter((p) => p !== self),
        extraIncludePackages: [...base.extraIncludePackages, self],
        extraIncludePaths: [],
    };
}

/** `payloadBucketArn`, an Output checked when it resolves (a plain value was checked at construction). */
function checkedPayloadBucketArn(name: string, args: OutboxConsumerArgs): pulumi.Output<string> | undefined {
    if (args.payloadBucketArn === undefined) return undefined;
    return pulumi.output(args.payloadBucketArn).apply((arn) => {
        const problem = payloadBucketArnProblem(arn);
        if (problem !== undefined) throw consumerArgsError(name, [problem]);
        return arn;
    });
}

/** The kind and FIFO-ness the children are declared for: read from a plain ARN, else from the args (checked later). */
function declaredDestination(args: OutboxConsumerArgs): { kind: OutboxConsumerDestinationKind; fifo: boolean } {
    const arn = args.destinationArn;
    if (typeof arn === "string") {
        const kind = destinationKindOfArn(arn) ?? DESTINATION_KINDS.sns;
        return { kind, fifo: kind !== DESTINATION_KINDS.eventBridge && arn.endsWith(".fifo") };
    }
    return { kind: args.destinationKind ?? DESTINATION_KINDS.sns, fifo: args.fifo ?? false };
}

/** The queue policy that lets only `sourceArn` (the topic, or the rule) send to the queue, through its service. */
function queuePolicyDocument(sender: string, queueArn: string, sourceArn: string): object {
    return {
        Version: "2012-10-17",
        Statement: [
            {
                Sid: "OnlyTheOutboxDestination",
                Effect: "Allow",
                Principal: { Service: sender },
                Action: "sqs:SendMessage",
                Resource: queueArn,
                Condition: { ArnEquals: { "aws:SourceArn": sourceArn } },
            },
        ],
    };
}

/** The created function's log statement: its own log group only. */
function logsPolicyDocument(t: { logGroupArn: string }): PolicyDocument {
    return {
        Version: "2012-10-17",
        Statement: [
            { Sid: "WriteOwnLogs", Effect: "Allow", Action: [...LOG_ACTIONS], Resource: [`${t.logGroupArn}:*`] },
        ],
    };
}

/**
 * The consuming half of an outbox, provisioned in one declaration: for each kind of destination, the wiring
 * docs/consumers.md writes by hand.
 *
 * Children (named `<name>-<suffix>`, see `components/consumer-naming.ts`):
 * - from a topic: the queue (FIFO when the topic is) subscribed with raw delivery, and a queue policy letting only
 *   that topic send; from a bus: the queue, a rule on the bus (`filter`, else every outbox event) with the queue as
 *   its target, and a queue policy letting only that rule send; from a queue: none, the outbox's queue is read as it
 *   is, and its redrive policy is set (an `aws.sqs.RedrivePolicy`: do not set one on that queue yourself);
 * - the DLQ, FIFO like the queue, behind a redrive policy of `maxReceiveCount` receives;
 * - the inbox table, unless `inboxTableName` is given;
 * - with `consume`: the function (`createInboxHandler` around it, serialized like the publisher), its log group,
 *   its role and the role's two inline policies (the consumer's grant, its logs);
 * - the event source mapping, with `ReportBatchItemFailures`;
 * - unless `alarms: false`: the DLQ's depth, the age of the oldest message, the function's errors.
 *
 * The queue's visibility timeout is 6 times the function's `timeout`, as AWS advises. A queue given as the
 * destination keeps its own: give it at least that.
 *
 * @example
 * ```ts
 * const outbox = new Outbox("orders");
 * const billing = new OutboxConsumer("billing", {
 *     destinationArn: outbox.destinationArn,
 *     consume: (message) => [{ Put: { TableName: "billing", Item: { PK: { S: `INVOICE#${message.outboxId}` }, SK: { S: "META" } } } }],
 * });
 * export const queueUrl = billing.queueUrl;
 * ```
 */
export class OutboxConsumer extends pulumi.ComponentResource {
    /** The ARN of the queue the function reads (the created one, or the destination queue itself). */
    public readonly queueArn: pulumi.Output<string>;
    /** The URL of that queue. */
    public readonly queueUrl: pulumi.Output<string>;
    /** The DLQ's URL: messages that failed `maxReceiveCount` times. */
    public readonly dlqUrl: pulumi.Output<string>;
    /** The consumer function's name (the created one, or the one `functionArn` names). */
    public readonly functionName: pulumi.Output<string>;
    /** The inbox table's name (the created one, or `inboxTableName`). */
    public readonly inboxTableName: pulumi.Output<string>;
    /** The inbox table's ARN. */
    public readonly inboxTableArn: pulumi.Output<string>;
    /**
     * The consumer's least-privilege IAM policy (JSON; `consumerPolicy(queueArn, inboxTableArn, payloadBucketArn,
     * payloadKmsKeyArn)`): what a role reading this queue into this inbox needs, and the Outbox's reader grant with
     * `payloadBucketArn`. The created function's role has it; with `functionArn`, attach it
     * to that function's role (or give `functionRoleName`).
     */
    public readonly consumerPolicy: pulumi.Output<string>;

    /**
     * @param name - the component's name; every child's name starts with it.
     * @param args - the destination and the code (`consume` or `functionArn`); the rest is optional. Invalid values
     *   throw `INVALID_CONFIG` before any resource is declared.
     * @param opts - component resource options.
     */
    constructor(name: string, args: OutboxConsumerArgs, opts?: pulumi.ComponentResourceOptions) {
        validateOutboxConsumerArgs(args, name);
        if (args.consume !== undefined) enterSerializationRoot();
        // `{}` rather than `args`: the same reason as Outbox's (pulumi/pulumi#23953), and `consume` is no input.
        super(OUTBOX_CONSUMER_TYPE, name, {}, opts);
        const { kind, fifo } = declaredDestination(args);
        // An Output ARN was not checked at construction: it is here, before any child that uses it is created.
        const destinationArn = pulumi.output(args.destinationArn).apply((arn) => {
            const problem = destinationArnProblem(arn, kind, fifo);
            if (problem !== undefined) throw consumerArgsError(name, [problem]);
            return arn;
        });
        const c: ConsumerContext = {
            parent: this,
            name,
            args,
            kind,
            fifo,
            destinationArn,
            tags: withTags(args.tags ?? {}),
            timeout: args.timeout ?? CONSUMER_RANGES.timeout.fallback,
        };
        const dlq = new aws.sqs.Queue(
            consumerChildName(name, "dlq"),
            {
                ...(fifo ? { fifoQueue: true } : {}),
                messageRetentionSeconds: CONSUMER_DLQ_RETENTION_SECONDS,
                sqsManagedSseEnabled: true,
                tags: c.tags,
            },
            { parent: this },
        );
        const queue = declareQueue(c, dlq);
        const inbox = declareInboxTable(c);
        const payloadBucketArn = checkedPayloadBucketArn(name, args);
        const code = declareCode(c, inbox.name, payloadBucketArn);
        const inboxTableArn =
            inbox.arn ?? pulumi.all([code.functionArn, inbox.name]).apply(([f, t]) => inboxTableArnOf(f, t));
        const targets: GrantInputs = {
            queueArn: queue.arn,
            inboxTableArn,
            ...(payloadBucketArn !== undefined ? { payloadBucketArn } : {}),
            ...(args.payloadKmsKeyArn !== undefined ? { payloadKmsKeyArn: args.payloadKmsKeyArn } : {}),
        };
        const before = [...queue.before, ...code.before];
        const consumePolicy =
            code.role === undefined
                ? undefined
                : declareRolePolicy(
                      consumerChildName(name, "consumePolicy"),
                      code.role,
                      targets,
                      consumerPolicyDocument,
                      { parent: this },
                  );
        if (consumePolicy !== undefined) before.push(consumePolicy);
        const mapping = declareMapping(c, queue.arn, code.functionArn, before);
        const alarms =
            (args.alarms ?? true)
                ? declareAlarms(c, { queueName: queue.name, dlqName: dlq.name, functionName: code.functionName })
                : [];

        const nodes: OutboxConsumerNodes = {
            ...queue.nodes,
            dlq,
            inboxTable: inbox.table,
            ...code.nodes,
            consumePolicy,
            mapping,
            alarms,
        };
        GRANTS.set(this, { name, count: 0, targets, nodes });
        this.queueArn = queue.arn;
        this.queueUrl = queue.url;
        this.dlqUrl = dlq.url;
        this.functionName = code.functionName;
        this.inboxTableName = inbox.name;
        this.inboxTableArn = pulumi.output(inboxTableArn);
        this.consumerPolicy = consumerPolicy(queue.arn, inboxTableArn, payloadBucketArn, args.payloadKmsKeyArn);
        this.registerOutputs({
            queueArn: this.queueArn,
            queueUrl: this.queueUrl,
            dlqUrl: this.dlqUrl,
            functionName: this.functionName,
            inboxTableName: this.inboxTableName,
            inboxTableArn: this.inboxTableArn,
            consumerPolicy: this.consumerPolicy,
        });
    }

    /**
     * The child resources, typed: the queue (`undefined` when the destination is a queue, read as it is), the DLQ,
     * the redrive policy, subscription, rule, target and queue policy of its kind of destination, the inbox table
     * (`undefined` with `inboxTableName`), the function with its role, log group and logs grant (`undefined` with
     * `functionArn`), the consumer's grant, the mapping and the alarms (empty with `alarms: false`). A getter, not a
     * field: Pulumi's component schema analyzer would take a field for an output other languages must read.
     */
    get nodes(): OutboxConsumerNodes {
        return GRANTS.get(this)!.nodes;
    }

    /**
     * Grants `role` what a consumer of this queue into this inbox needs: an `aws.iam.RolePolicy` with exactly the
     * statements of `consumerPolicy` (receive and delete on the queue, `dynamodb:PutItem` and
     * `dynamodb:ConditionCheckItem` on the inbox table; `s3:GetObject` on the payloads, and `kms:Decrypt` on their
     * key, with `payloadBucketArn` and `payloadKmsKeyArn`).
     * The created function's role has it already; use this for the role of a `functionArn` function, or any other.
     *
     * @param role - The role, or its name.
     * @param name - The policy's Pulumi name. @default `<component name>-consume-grant`, then `-2`, `-3`, … on later calls
     * @returns the role policy, a child of this component.
     */
    public grantConsume(role: RoleOrName, name?: string): aws.iam.RolePolicy {
        const grants = GRANTS.get(this)!;
        grants.count += 1;
        const base = consumerChildName(grants.name, "grant");
        return declareRolePolicy(
            name ?? (grants.count === 1 ? base : `${base}-${grants.count}`),
            role,
            grants.targets,
            consumerPolicyDocument,
            { parent: this },
        );
    }
}

/** What every child is declared from: the component, its name and args, the destination, the tags and the timeout. */
interface ConsumerContext {
    readonly parent: OutboxConsumer;
    readonly name: string;
    readonly args: OutboxConsumerArgs;
    readonly kind: OutboxConsumerDestinationKind;
    readonly fifo: boolean;
    /** The destination's ARN, checked against `kind` and `fifo` when it resolves. */
    readonly destinationArn: pulumi.Output<string>;
    readonly tags: pulumi.Output<Record<string, string>>;
    readonly timeout: pulumi.Input<number>;
}

/** The queue the function reads, and what the mapping must wait for (the source's permission, the redrive policy). */
interface ConsumerQueue {
    readonly arn: pulumi.Output<string>;
    readonly url: pulumi.Output<string>;
    readonly name: pulumi.Output<string>;
    readonly before: pulumi.Resource[];
    readonly nodes: Pick<
        OutboxConsumerNodes,
        "queue" | "redrivePolicy" | "subscription" | "rule" | "target" | "queuePolicy"
    >;
}

/** The destination queue, read as it is: its redrive policy set to the DLQ (an `aws.sqs.RedrivePolicy`). */
function readDestinationQueue(c: ConsumerContext, redrivePolicy: pulumi.Output<string>): ConsumerQueue {
    const { parent, destinationArn } = c;
    const url = destinationArn.apply((arn) => queueUrlOfArn(arn)!);
    const redrive = new aws.sqs.RedrivePolicy(
        consumerChildName(c.name, "redrivePolicy"),
        { queueUrl: url, redrivePolicy },
        { parent },
    );
    return {
        arn: destinationArn,
        url,
        name: destinationArn.apply((arn) => SQS_QUEUE_ARN.exec(arn)![4]!),
        before: [redrive],
        nodes: {
            queue: undefined,
            redrivePolicy: redrive,
            subscription: undefined,
            rule: undefined,
            target: undefined,
            queuePolicy: undefined,
        },
    };
}

/**
 * The queue: the destination queue itself (its redrive policy set), or a queue created behind the topic's
 * subscription or the bus rule's target, with a queue policy that lets only that source send.
 */
function declareQueue(c: ConsumerContext, dlq: aws.sqs.Queue): ConsumerQueue {
    const { parent, name, args, kind, fifo, destinationArn, tags } = c;
    const child = (k: keyof typeof CONSUMER_CHILD_SUFFIX): string => consumerChildName(name, k);
    const redrivePolicy = pulumi.jsonStringify({
        deadLetterTargetArn: dlq.arn,
        maxReceiveCount: args.maxReceiveCount ?? CONSUMER_RANGES.maxReceiveCount.fallback,
    });
    if (kind === DESTINATION_KINDS.sqs) return readDestinationQueue(c, redrivePolicy);
    const queue = new aws.sqs.Queue(
        child("queue"),
        {
            // Deduplication is by the id the outbox sends with each message (SNS passes it on).
            ...(fifo ? { fifoQueue: true, contentBasedDeduplication: false } : {}),
            visibilityTimeoutSeconds: pulumi.output(c.timeout).apply((t) => t * VISIBILITY_TIMEOUT_FACTOR),
            sqsManagedSseEnabled: true,
            redrivePolicy,
            tags,
        },
        { parent },
    );
    let sourceArn: pulumi.Output<string> = destinationArn;
    let rule: aws.cloudwatch.EventRule | undefined;
    let target: aws.cloudwatch.EventTarget | undefined;
    let subscription: aws.sns.TopicSubscription | undefined;
    if (kind === DESTINATION_KINDS.eventBridge) {
        rule = new aws.cloudwatch.EventRule(
            child("rule"),
            {
                eventBusName: destinationArn,
                eventPattern: JSON.stringify(args.filter ?? DEFAULT_BUS_PATTERN),
                description: `Routes the outbox's events to the ${name} consumer's queue`,
                tags,
            },
            { parent },
        );
        sourceArn = rule.arn;
        target = new aws.cloudwatch.EventTarget(
            child("target"),
            { rule: rule.name, eventBusName: destinationArn, arn: queue.arn },
            { parent },
        );
    }
    const sender = kind === DESTINATION_KINDS.sns ? SENDERS.sns : SENDERS.eventbridge;
    const queuePolicy = new aws.sqs.QueuePolicy(
        child("queuePolicy"),
        {
            queueUrl: queue.url,
            policy: pulumi
                .all([queue.arn, sourceArn])
                .apply(([q, s]) => JSON.stringify(queuePolicyDocument(sender, q, s))),
        },
        { parent },
    );
    if (kind === DESTINATION_KINDS.sns) {
        // After the policy: SNS sends as soon as the subscription exists.
        subscription = new aws.sns.TopicSubscription(
            child("subscription"),
            {
                topic: destinationArn,
                protocol: "sqs",
                endpoint: queue.arn,
                rawMessageDelivery: true,
                ...(args.filter !== undefined ? { filterPolicy: JSON.stringify(args.filter) } : {}),
            },
            { parent, dependsOn: [queuePolicy] },
        );
    }
    return {
        arn: queue.arn,
        url: queue.url,
        name: queue.name,
        before: [queuePolicy],
        nodes: { queue, redrivePolicy: undefined, subscription, rule, target, queuePolicy },
    };
}

/** The inbox table: created (its ARN known), or the one `inboxTableName` names (its ARN derived later). */
function declareInboxTable(c: ConsumerContext): {
    name: pulumi.Output<string>;
    arn?: pulumi.Output<string>;
    table: aws.dynamodb.Table | undefined;
} {
    if (c.args.inboxTableName !== undefined) return { name: pulumi.output(c.args.inboxTableName), table: undefined };
    const table = new aws.dynamodb.Table(
        consumerChildName(c.name, "inboxTable"),
        {
            billingMode: "PAY_PER_REQUEST",
            hashKey: INBOX_MARKER.partitionKey,
            rangeKey: INBOX_MARKER.sortKey,
            attributes: [
                { name: INBOX_MARKER.partitionKey, type: "S" },
                { name: INBOX_MARKER.sortKey, type: "S" },
            ],
            ttl: { attributeName: INBOX_MARKER.ttl, enabled: true },
            pointInTimeRecovery: { enabled: true },
            tags: c.tags,
        },
        { parent: c.parent },
    );
    return { name: table.name, arn: table.arn, table };
}

/** The function: created around `consume` (with its role), or the one `functionArn` names (and `functionRoleName`). */
function declareCode(
    c: ConsumerContext,
    inboxTableName: pulumi.Output<string>,
    payloadBucketArn: pulumi.Output<string> | undefined,
): {
    functionArn: pulumi.Output<string>;
    functionName: pulumi.Output<string>;
    role?: RoleOrName;
    before: pulumi.Resource[];
    nodes: Pick<OutboxConsumerNodes, "function" | "role" | "logs" | "logsPolicy">;
} {
    if (c.args.consume === undefined) {
        const functionArn = pulumi.output(c.args.functionArn!);
        return {
            functionArn,
            functionName: functionArn.apply((arn) => functionArnParts(arn).name),
            ...(c.args.functionRoleName !== undefined ? { role: c.args.functionRoleName } : {}),
            before: [],
            nodes: { function: undefined, role: undefined, logs: undefined, logsPolicy: undefined },
        };
    }
    const fn = declareFunction(c, inboxTableName, payloadBucketArn);
    return {
        functionArn: fn.function.arn,
        functionName: fn.function.name,
        role: fn.role,
        before: [fn.logsPolicy],
        nodes: { function: fn.function, role: fn.role, logs: fn.logs, logsPolicy: fn.logsPolicy },
    };
}

/** The mapping from the queue to the function, with partial batch responses. */
function declareMapping(
    c: ConsumerContext,
    queueArn: pulumi.Input<string>,
    functionArn: pulumi.Input<string>,
    before: pulumi.Resource[],
): aws.lambda.EventSourceMapping {
    const { args } = c;
    return new aws.lambda.EventSourceMapping(
        consumerChildName(c.name, "mapping"),
        {
            eventSourceArn: queueArn,
            functionName: functionArn,
            batchSize: args.batchSize ?? CONSUMER_RANGES.batchSize.fallback,
            // A FIFO queue takes no batching window.
            ...(c.fifo
                ? {}
                : {
                      maximumBatchingWindowInSeconds:
                          args.maximumBatchingWindowInSeconds ??
                          CONSUMER_RANGES.maximumBatchingWindowInSeconds.fallback,
                  }),
            functionResponseTypes: [REPORT_BATCH_ITEM_FAILURES],
            tags: c.tags,
        },
        // Lambda checks the role's permissions on the queue when the mapping is created; a second mapping of the
        // same queue and function is refused, so a replacement deletes the old one first.
        { parent: c.parent, dependsOn: before, deleteBeforeReplace: true },
    );
}

/** The function around `consume`: its log group, role, logs grant and the CallbackFunction. */
function declareFunction(
    c: ConsumerContext,
    inboxTableName: pulumi.Output<string>,
    payloadBucketArn: pulumi.Output<string> | undefined,
): {
    function: aws.lambda.CallbackFunction<any, any>;
    role: aws.iam.Role;
    logs: aws.cloudwatch.LogGroup;
    logsPolicy: aws.iam.RolePolicy;
} {
    const { parent, name, args } = c;
    const t = { timeout: c.timeout, inboxTableName, tags: c.tags };
    const child = (c: keyof typeof CONSUMER_CHILD_SUFFIX): string => consumerChildName(name, c);
    const logs = new aws.cloudwatch.LogGroup(
        child("logs"),
        { retentionInDays: CONSUMER_LOG_RETENTION_DAYS, tags: t.tags },
        { parent },
    );
    const role = new aws.iam.Role(
        child("role"),
        {
            assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
            tags: t.tags,
        },
        { parent },
    );
    const logsPolicy = declareRolePolicy(child("logsPolicy"), role, { logGroupArn: logs.arn }, logsPolicyDocument, {
        parent,
    });
    // Only the user's function and the runtime's factory are captured: the closure must not reach `args`.
    const consume: InboxConsumer = args.consume!;
    const fn = new aws.lambda.CallbackFunction(
        child("function"),
        {
            callbackFactory: () => inboxLambda(consume),
            runtime: LAMBDA_RUNTIME,
            role,
            description: `Applies the outbox's events once into the ${name} consumer's inbox`,
            memorySize: args.memorySize ?? CONSUMER_RANGES.memorySize.fallback,
            timeout: t.timeout,
            environment: {
                variables: {
                    [INBOX_ENV.tableName]: t.inboxTableName,
                    [INBOX_ENV.consumer]: args.consumerName ?? name,
                    ...(payloadBucketArn !== undefined
                        ? { [INBOX_ENV.payloadBucket]: payloadBucketArn.apply(bucketNameOfArn) }
                        : {}),
                },
            },
            loggingConfig: { logFormat: "JSON", logGroup: logs.name },
            codePathOptions: consumerCodePathOptions(),
            tags: t.tags,
        },
        { parent },
    );
    return { function: fn, role, logs, logsPolicy };
}

/** The DLQ's depth, the age of the queue's oldest message, the function's errors. */
function declareAlarms(
    c: ConsumerContext,
    t: { queueName: pulumi.Input<string>; dlqName: pulumi.Input<string>; functionName: pulumi.Input<string> },
): aws.cloudwatch.MetricAlarm[] {
    const { parent, name, args } = c;
    const actions = args.alarmActions ?? [];
    const common = {
        comparisonOperator: "GreaterThanThreshold",
        alarmActions: actions,
        okActions: actions,
        period: 300,
        evaluationPeriods: 1,
        // SQS and Lambda report nothing for an idle queue or function: nothing to be behind on.
        treatMissingData: "notBreaching",
        tags: c.tags,
    };
    const about = (says: string, action: string) => `dynamodb-outbox consumer "${name}": ${says}. ${action}`;
    const dlqDepth = new aws.cloudwatch.MetricAlarm(
        consumerChildName(name, "dlqDepthAlarm"),
        {
            ...common,
            alarmDescription: about(
                "messages failed maxReceiveCount times and are in the DLQ",
                "Read the function's errors, fix the cause, then redrive the DLQ into the queue",
            ),
            namespace: "AWS/SQS",
            metricName: "ApproximateNumberOfMessagesVisible",
            dimensions: { QueueName: t.dlqName },
            statistic: "Maximum",
            threshold: 0,
        },
        { parent },
    );
    const oldestMessage = new aws.cloudwatch.MetricAlarm(
        consumerChildName(name, "oldestMessageAlarm"),
        {
            ...common,
            alarmDescription: about(
                `a message has waited more than ${OLDEST_MESSAGE_ALARM_SECONDS} s in the queue`,
                "Check the mapping is enabled and the function's errors and throttles",
            ),
            namespace: "AWS/SQS",
            metricName: "ApproximateAgeOfOldestMessage",
            dimensions: { QueueName: t.queueName },
            statistic: "Maximum",
            evaluationPeriods: 2,
            datapointsToAlarm: 2,
            threshold: OLDEST_MESSAGE_ALARM_SECONDS,
        },
        { parent },
    );
    const errors = new aws.cloudwatch.MetricAlarm(
        consumerChildName(name, "errorsAlarm"),
        {
            ...common,
            alarmDescription: about(
                "the consumer function failed invocations",
                "Read its logs: a failed invocation fails its whole batch, which SQS redelivers",
            ),
            namespace: "AWS/Lambda",
            metricName: "Errors",
            dimensions: { FunctionName: t.functionName },
            statistic: "Sum",
            threshold: 0,
        },
        { parent },
    );
    return [dlqDepth, oldestMessage, errors];
}
