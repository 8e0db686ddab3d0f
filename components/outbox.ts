/**
 * The `Outbox` Pulumi component: a DynamoDB outbox table, its stream mapped to a publisher Lambda that
 * publishes to SNS, a scheduled sweeper as the safety net, and an SQS dead-letter queue.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { publisherLambdaFactory, sweeperLambdaFactory } from "../runtime/lambda";
import type { OutboxArgs } from "./args";
import { LAMBDA_RUNTIME, eventSourceMappingArgs, handlerEnvironment, logGroupArgs, queueArgs, tableArgs, topicArgs, withTags } from "./children";
import { enterSerializationRoot, handlerCodePathOptions } from "./code-path";
import { GrantTargets, PolicyDocument, publisherPolicyDocument, sweeperPolicyDocument, writerPolicyDocument } from "./iam";
import { declareOutboxAlarms } from "./alarms";
import { dashboardBody } from "./dashboard";
import { OUTBOX_TYPE, childName, dashboardName } from "./naming";
import { OutboxSettings, resolveOutboxSettings } from "./settings";
import { mergeArgs } from "./transform";
import { validateOutboxArgs } from "./validation";
import { SYSTEM_LOG_LEVEL } from "./defaults";

export type { OutboxArgs, OutboxAlarmThresholds, OutboxTransforms } from "./args";
export { OutboxBillingMode, OutboxLogLevel } from "./args";

export { OUTBOX_TYPE } from "./naming";

/** The EventBridge service principal allowed to invoke the sweeper. */
const EVENTS_PRINCIPAL = "events.amazonaws.com";

/**
 * A transactional outbox on DynamoDB, provisioned right the first time.
 *
 * Children (named `<name>-<suffix>`, see `components/naming.ts`): the table (or an existing one it adopts, see
 * `importTableName`), the SNS topic (unless `topicArn`
 * is given), the SQS DLQ, the publisher function with its role and log group, the stream mapping, and the
 * sweeper function with its role, log group, schedule, target and invoke permission; unless turned off, the
 * CloudWatch alarms (`components/alarms.ts`) and the dashboard (`components/dashboard.ts`).
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
    /** The SNS topic events are published to (created, or the one given). */
    public readonly topicArn: pulumi.Output<string>;
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
        const t = args.transform ?? {};
        const parent = { parent: this };

        // An adopted table keeps its name: autonamed, the import would plan a replacement of the table it takes over.
        const table = new aws.dynamodb.Table(
            childName(name, "table"),
            mergeArgs(s.importTableName === undefined ? tableArgs(s) : { ...tableArgs(s), name: s.importTableName }, t.table),
            s.importTableName === undefined ? parent : { parent: this, import: s.importTableName },
        );
        const topicArn = s.topicArn !== undefined
            ? pulumi.output(s.topicArn)
            : new aws.sns.Topic(childName(name, "topic"), mergeArgs(topicArgs(s), t.topic), parent).arn;
        const dlq = new aws.sqs.Queue(childName(name, "queue"), mergeArgs(queueArgs(s), t.queue), parent);

        const environment = { variables: handlerEnvironment(s, { tableName: table.name, topicArn, dlqUrl: dlq.url }) };
        const grants = { tableArn: table.arn, topicArn, dlqArn: dlq.arn, kmsKeyArn: s.kmsKeyArn };

        const publisherLogs = new aws.cloudwatch.LogGroup(childName(name, "publisherLogs"), mergeArgs(logGroupArgs(s), t.publisherLogs), parent);
        const publisher = this.handler(name, "publisher", s, {
            callbackFactory: publisherLambdaFactory,
            description: `Publishes the ${name} outbox's records from the table stream to SNS`,
            role: this.role(name, "publisherRole", s, { ...grants, streamArn: table.streamArn, logGroupArn: publisherLogs.arn }, publisherPolicyDocument),
            logs: publisherLogs,
            environment,
            override: t.publisher,
        });
        new aws.lambda.EventSourceMapping(
            childName(name, "eventSourceMapping"),
            mergeArgs(eventSourceMappingArgs(s, { streamArn: table.streamArn, functionArn: publisher.arn, dlqArn: dlq.arn }), t.eventSourceMapping),
            // A changed starting position or stream replaces the mapping; created first, the new one would
            // collide with the old ("provided mapping already exists").
            { parent: this, deleteBeforeReplace: true },
        );

        const sweeperLogs = new aws.cloudwatch.LogGroup(childName(name, "sweeperLogs"), mergeArgs(logGroupArgs(s), t.sweeperLogs), parent);
        const sweeper = this.handler(name, "sweeper", s, {
            callbackFactory: sweeperLambdaFactory,
            description: `Publishes the ${name} outbox's records the stream path missed, and expires old ones`,
            role: this.role(name, "sweeperRole", s, { ...grants, logGroupArn: sweeperLogs.arn }, sweeperPolicyDocument),
            logs: sweeperLogs,
            environment,
            override: t.sweeper,
        });
        const schedule = new aws.cloudwatch.EventRule(
            childName(name, "schedule"),
            mergeArgs<aws.cloudwatch.EventRuleArgs>(
                { scheduleExpression: s.sweepSchedule, description: `Runs the ${name} outbox sweeper`, tags: withTags(s.tags) },
                t.schedule,
            ),
            parent,
        );
        new aws.lambda.Permission(
            childName(name, "schedulePermission"),
            { action: "lambda:InvokeFunction", function: sweeper.name, principal: EVENTS_PRINCIPAL, sourceArn: schedule.arn },
            parent,
        );
        new aws.cloudwatch.EventTarget(childName(name, "scheduleTarget"), { rule: schedule.name, arn: sweeper.arn }, parent);

        const monitored = { tableName: table.name, publisherFunctionName: publisher.name, sweeperFunctionName: sweeper.name, dlqName: dlq.name };
        const alarms = declareOutboxAlarms(this, name, s, monitored);
        if (s.dashboard) {
            // The table's region, from its ARN: the metrics are there, and no data source call is needed.
            const region = table.arn.apply((arn) => arn.split(":")[3] ?? "");
            new aws.cloudwatch.Dashboard(
                childName(name, "dashboard"),
                mergeArgs<aws.cloudwatch.DashboardArgs>(
                    {
                        dashboardName: dashboardName(name, pulumi.getProject(), pulumi.getStack()),
                        dashboardBody: pulumi
                            .all([region, table.name, publisher.name, sweeper.name, dlq.name])
                            .apply(([r, tableName, publisherFunctionName, sweeperFunctionName, dlqName]) =>
                                JSON.stringify(dashboardBody({ region: r, tableName, publisherFunctionName, sweeperFunctionName, dlqName })),
                            ),
                    },
                    t.dashboard,
                ),
                parent,
            );
        }

        this.tableName = table.name;
        this.tableArn = table.arn;
        this.streamArn = table.streamArn;
        this.topicArn = topicArn;
        this.dlqUrl = dlq.url;
        this.dlqArn = dlq.arn;
        this.publisherFunctionName = publisher.name;
        this.sweeperFunctionName = sweeper.name;
        this.alarmArns = pulumi.all(alarms.map((a) => a.arn));
        this.writerPolicy = pulumi
            .all([table.arn, s.kmsKeyArn])
            .apply(([tableArn, kmsKeyArn]) => JSON.stringify(writerPolicyDocument({ tableArn, ...(kmsKeyArn !== undefined ? { kmsKeyArn } : {}) })));
        this.registerOutputs({
            tableName: this.tableName,
            tableArn: this.tableArn,
            streamArn: this.streamArn,
            topicArn: this.topicArn,
            dlqUrl: this.dlqUrl,
            dlqArn: this.dlqArn,
            publisherFunctionName: this.publisherFunctionName,
            sweeperFunctionName: this.sweeperFunctionName,
            writerPolicy: this.writerPolicy,
            alarmArns: this.alarmArns,
        });
    }

    /** One of the two functions: the runtime's factory on nodejs22.x, its own role and log group, the handler environment. */
    private handler(
        name: string,
        child: "publisher" | "sweeper",
        s: OutboxSettings,
        f: {
            callbackFactory: aws.lambda.CallbackFunctionArgs<any, any>["callbackFactory"];
            description: string;
            role: aws.iam.Role;
            logs: aws.cloudwatch.LogGroup;
            environment: aws.lambda.CallbackFunctionArgs<any, any>["environment"];
            override: Partial<aws.lambda.FunctionArgs> | undefined;
        },
    ): aws.lambda.CallbackFunction<any, any> {
        const computed: aws.lambda.CallbackFunctionArgs<any, any> = {
            callbackFactory: f.callbackFactory,
            runtime: LAMBDA_RUNTIME,
            role: f.role,
            description: f.description,
            memorySize: s.memorySize,
            timeout: s.timeout,
            environment: f.environment,
            // JSON, so that Lambda sets AWS_LAMBDA_LOG_LEVEL from applicationLogLevel and the handlers honour it.
            loggingConfig: { logFormat: "JSON", applicationLogLevel: s.logLevel, systemLogLevel: SYSTEM_LOG_LEVEL, logGroup: f.logs.name },
            // A fresh list per function: CallbackFunction appends to the one it is given.
            codePathOptions: handlerCodePathOptions(),
            tags: withTags(s.tags),
        };
        return new aws.lambda.CallbackFunction(childName(name, child), mergeArgs(computed, f.override as Partial<aws.lambda.CallbackFunctionArgs<any, any>>), { parent: this });
    }

    /** A function role whose only permissions are the inline policy `document` builds from the resolved targets. */
    private role(
        name: string,
        child: "publisherRole" | "sweeperRole",
        s: OutboxSettings,
        targets: { [K in keyof GrantTargets]: pulumi.Input<GrantTargets[K]> },
        document: (targets: GrantTargets) => PolicyDocument,
    ): aws.iam.Role {
        const policy = pulumi
            .all([targets.tableArn, targets.streamArn, targets.topicArn, targets.dlqArn, targets.logGroupArn, targets.kmsKeyArn])
            .apply(([tableArn, streamArn, topicArn, dlqArn, logGroupArn, kmsKeyArn]) =>
                JSON.stringify(document({ tableArn, streamArn, topicArn, dlqArn, logGroupArn, kmsKeyArn })),
            );
        return new aws.iam.Role(
            childName(name, child),
            {
                assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal(aws.iam.Principals.LambdaPrincipal),
                inlinePolicies: [{ name: "outbox", policy }],
                tags: withTags(s.tags),
            },
            { parent: this },
        );
    }
}
