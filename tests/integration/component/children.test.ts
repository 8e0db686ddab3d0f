import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { LOG_LEVELS } from "../../../components/defaults";
import { OutboxBillingMode, OutboxLogLevel } from "../../../components/outbox";
import { ENV } from "../../../runtime/config";
import { STACK_REFERENCE_OUTPUTS, unwrap } from "../../support/pulumi-mocks";
import {
    BuiltOutbox,
    TYPE,
    buildOutbox,
    commonEnvironment,
    mockedOutboxOutputs,
    resolvedOutboxOutputs,
} from "../../support/component-harness";

const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
const EXISTING_TOPIC = "arn:aws:sns:eu-west-1:111111111111:shared-events";

describe("Outbox children and outputs", () => {
    let std: BuiltOutbox;

    before(async () => {
        std = await buildOutbox("kids", { tags: { team: "payments" } });
    });

    it("declares exactly these children, each named from the component", () => {
        assert.deepEqual(std.resources.map((r) => `${r.type} ${r.name}`).sort(), [
            "aws:cloudwatch/dashboard:Dashboard kids-dashboard",
            "aws:cloudwatch/eventRule:EventRule kids-sweep-schedule",
            "aws:cloudwatch/eventTarget:EventTarget kids-sweep-target",
            "aws:cloudwatch/logGroup:LogGroup kids-publisher-logs",
            "aws:cloudwatch/logGroup:LogGroup kids-sweeper-logs",
            ...[
                "age-at-publish",
                "dlq-depth",
                "dropped-events",
                "fenced-partitions",
                "iterator-age",
                "oldest-pending",
                "publisher-errors",
                "publisher-throttles",
                "sweeper-errors",
                "sweeper-published",
            ].map((a) => `aws:cloudwatch/metricAlarm:MetricAlarm kids-${a}-alarm`),
            "aws:dynamodb/table:Table kids-table",
            "aws:iam/role:Role kids-publisher-role",
            "aws:iam/role:Role kids-sweeper-role",
            "aws:lambda/eventSourceMapping:EventSourceMapping kids-stream-mapping",
            "aws:lambda/function:Function kids-publisher",
            "aws:lambda/function:Function kids-sweeper",
            "aws:lambda/permission:Permission kids-sweep-permission",
            "aws:sns/topic:Topic kids-topic",
            "aws:sqs/queue:Queue kids-dlq",
            "dynamodb-outbox:index:Outbox kids",
        ]);
    });

    it("parents every child on the component", () => {
        const children = [...std.options.entries()].filter(([name]) => name !== "kids");
        assert.equal(children.length, std.resources.length - 1);
        for (const [name, opts] of children) assert.equal(opts.parent, std.outbox, `${name}'s parent`);
    });

    it("resolves every output to its child's value", async () => {
        assert.deepEqual(await resolvedOutboxOutputs(std.outbox), mockedOutboxOutputs("kids"));
    });

    it("creates a standard topic by default", () => {
        assert.deepEqual(std.one(TYPE.topic).inputs, { tags: { team: "payments" } });
    });

    it("creates a FIFO topic with content-based deduplication off when fifo is set", async () => {
        const fifo = await buildOutbox("kidsfifo", { fifo: true });
        const topic = fifo.one(TYPE.topic).inputs;
        assert.equal(topic.fifoTopic, true);
        assert.equal(topic.contentBasedDeduplication, false);
        assert.equal(fifo.one(TYPE.fn, "kidsfifo-publisher").inputs.environment.variables[ENV.fifo], "true");
    });

    it("creates no topic when given an existing topic ARN, and publishes to that one", async () => {
        const ext = await buildOutbox("kidsext", { topicArn: EXISTING_TOPIC });
        assert.equal(ext.resources.filter((r) => r.type === TYPE.topic).length, 0);
        assert.equal(await unwrap(ext.outbox.topicArn), EXISTING_TOPIC);
        assert.equal(ext.one(TYPE.fn, "kidsext-publisher").inputs.environment.variables[ENV.topicArn], EXISTING_TOPIC);
    });

    it("keeps DLQ messages 14 days with SQS-managed SSE, or the customer key when given", async () => {
        assert.deepEqual(std.one(TYPE.queue).inputs, {
            messageRetentionSeconds: 1209600,
            sqsManagedSseEnabled: true,
            tags: { team: "payments" },
        });
        const kms = await buildOutbox("kidskms", { kmsKeyArn: KMS_KEY });
        const queue = kms.one(TYPE.queue).inputs;
        assert.equal(queue.kmsMasterKeyId, KMS_KEY);
        assert.equal(queue.sqsManagedSseEnabled, undefined);
        assert.equal(kms.one(TYPE.topic).inputs.kmsMasterKeyId, KMS_KEY);
    });

    it("runs both functions on nodejs22.x from the runtime's factories, logging to their own bounded log groups", () => {
        for (const fn of ["publisher", "sweeper"]) {
            const inputs = std.one(TYPE.fn, `kids-${fn}`).inputs;
            assert.equal(inputs.runtime, "nodejs22.x");
            assert.equal(inputs.handler, "__index.handler");
            assert.equal(inputs.memorySize, 256);
            assert.equal(inputs.timeout, 60);
            // Autonamed (no name given, so the mocks name it `<Pulumi name>-abc`), and the function logs there.
            const logs = std.one(TYPE.logGroup, `kids-${fn}-logs`);
            assert.deepEqual(logs.inputs, { retentionInDays: 30, tags: { team: "payments" } });
            // JSON, so that Lambda sets AWS_LAMBDA_LOG_LEVEL for the handlers; INFO by default.
            assert.deepEqual(inputs.loggingConfig, {
                logFormat: "JSON",
                applicationLogLevel: "INFO",
                systemLogLevel: "INFO",
                logGroup: `kids-${fn}-logs-abc`,
            });
            assert.equal(logs.computed?.name, `kids-${fn}-logs-abc`);
        }
    });

    it("sets every variable of the handler environment contract an SNS destination takes on both functions", async () => {
        const expected = {
            ...(await commonEnvironment(std, false)),
            [ENV.topicArn]: await unwrap(std.outbox.topicArn),
        };
        // The other destinations' variables, and the bus's event source and check, are destinations.test.ts'.
        // OUTBOX_SOURCE is not set: the functions stamp the table's name as the messages' source, the handlers'
        // default (issue 33).
        assert.deepEqual(
            [
                ...Object.keys(expected),
                ENV.queueArn,
                ENV.eventBusArn,
                ENV.eventSource,
                ENV.checkEventBus,
                ENV.source,
                // CloudEvents: not set unless `cloudEvents` is given (cloud-events.test.ts).
                ENV.cloudEventsSource,
                // Global tables' origin scope: not set on a single-region outbox (issue 37).
                ENV.originRegion,
                ENV.otherRegions,
                ENV.homeRegion,
            ].sort(),
            Object.values(ENV).sort(),
            "the tests cover every ENV name",
        );
        for (const fn of ["kids-publisher", "kids-sweeper"])
            assert.deepEqual(std.one(TYPE.fn, fn).inputs.environment.variables, expected);
    });

    it("schedules the sweeper every minute, invoked by EventBridge from that rule only", async () => {
        const rule = std.one(TYPE.rule).inputs;
        assert.equal(rule.scheduleExpression, "rate(1 minute)");
        const sweeperArn = "arn:aws:lambda:eu-west-1:111111111111:function:kids-sweeper-abc";
        assert.deepEqual(std.one(TYPE.target).inputs, { rule: "kids-sweep-schedule-abc", arn: sweeperArn });
        assert.deepEqual(std.one(TYPE.permission).inputs, {
            action: "lambda:InvokeFunction",
            function: "kids-sweeper-abc",
            principal: "events.amazonaws.com",
            sourceArn: "arn:aws:events:eu-west-1:111111111111:rule/kids-sweep-schedule-abc",
        });
    });

    it("sets both functions' application log level from logLevel, for each level Lambda accepts", async function () {
        // Six outboxes, each serializing two functions: seconds apiece on a loaded machine.
        this.timeout(240_000);
        for (const level of LOG_LEVELS) {
            const built = await buildOutbox(`kidslog${level.toLowerCase()}`, { logLevel: level });
            for (const fn of ["publisher", "sweeper"]) {
                const inputs = built.one(TYPE.fn, `kidslog${level.toLowerCase()}-${fn}`).inputs;
                assert.deepEqual(inputs.loggingConfig, {
                    logFormat: "JSON",
                    applicationLogLevel: level,
                    systemLogLevel: "INFO",
                    logGroup: `kidslog${level.toLowerCase()}-${fn}-logs-abc`,
                });
            }
        }
    });

    it("passes the handler settings and schedule args through to the functions and the rule", async () => {
        const custom = await buildOutbox("kidsargs", {
            completionGraceSeconds: 60,
            sweepAfterSeconds: 300,
            maxPublishAttempts: 5,
            expiryShards: 8,
            maxPartitionsPerRun: 50,
            claimVersion: 7,
            memorySize: 512,
            timeout: 30,
            logRetentionInDays: 7,
            sweepSchedule: "rate(5 minutes)",
        });
        const env = custom.one(TYPE.fn, "kidsargs-sweeper").inputs.environment.variables;
        assert.deepEqual(
            [
                env[ENV.completionGraceSeconds],
                env[ENV.sweepAfterSeconds],
                env[ENV.maxPublishAttempts],
                env[ENV.expiryShards],
                env[ENV.maxPartitionsPerRun],
                env[ENV.claimVersion],
            ],
            ["60", "300", "5", "8", "50", "7"],
        );
        assert.equal(
            custom.one(TYPE.fn, "kidsargs-publisher").inputs.environment.variables[ENV.claimVersion],
            "7",
            "both functions claim with the same version",
        );
        const fn = custom.one(TYPE.fn, "kidsargs-publisher").inputs;
        assert.deepEqual([fn.memorySize, fn.timeout], [512, 30]);
        assert.equal(custom.one(TYPE.logGroup, "kidsargs-sweeper-logs").inputs.retentionInDays, 7);
        assert.equal(custom.one(TYPE.rule).inputs.scheduleExpression, "rate(5 minutes)");
    });

    it("takes fixed log group names through transform.publisherLogs and sweeperLogs, and logs and grants there", async () => {
        // The names 0.1.0 gave, which an upgraded stack can keep.
        const fixed = await buildOutbox("kidsfixed", {
            transform: {
                publisherLogs: { name: "/aws/lambda/shop-prod-kidsfixed-publisher" },
                sweeperLogs: { name: "/aws/lambda/shop-prod-kidsfixed-sweeper" },
            },
        });
        for (const fn of ["publisher", "sweeper"]) {
            const group = `/aws/lambda/shop-prod-kidsfixed-${fn}`;
            assert.deepEqual(fixed.one(TYPE.logGroup, `kidsfixed-${fn}-logs`).inputs, {
                name: group,
                retentionInDays: 30,
                tags: {},
            });
            assert.equal(fixed.one(TYPE.fn, `kidsfixed-${fn}`).inputs.loggingConfig.logGroup, group);
            const policy = JSON.parse(fixed.one(TYPE.role, `kidsfixed-${fn}-role`).inputs.inlinePolicies[0].policy) as {
                Statement: { Sid: string; Resource: string[] }[];
            };
            assert.deepEqual(policy.Statement.find((st) => st.Sid === "WriteOwnLogs")?.Resource, [
                `arn:aws:logs:eu-west-1:111111111111:log-group:${group}:*`,
            ]);
        }
    });

    it("takes an Output for every Input arg (a StackReference's list for alarmActions) and hands it to the children", async () => {
        const ref = new pulumi.StackReference("acme/outbox/prod");
        // Typed as a program would hold it: one Output of a list, which `Input<string>[]` did not accept.
        const oncall: pulumi.Output<string[]> = ref.requireOutput("topicArn").apply((arn) => [String(arn)]);
        const out = await buildOutbox("kidsout", {
            billingMode: OutboxBillingMode.Provisioned,
            provisionedCapacity: pulumi.output(8),
            pointInTimeRecovery: pulumi.output(false),
            deletionProtection: pulumi.output(true),
            memorySize: pulumi.output(512),
            timeout: pulumi.output(30),
            logRetentionInDays: pulumi.output(14),
            logLevel: pulumi.output(OutboxLogLevel.Warn),
            batchSize: pulumi.output(50),
            completionGraceSeconds: pulumi.output(60),
            sweepSchedule: pulumi.output("rate(1 hour)"),
            alarmActions: oncall,
            alarmThresholds: { errors: pulumi.output(4) },
        });
        const table = out.one(TYPE.table).inputs;
        assert.deepEqual(
            [table.readCapacity, table.pointInTimeRecovery, table.deletionProtectionEnabled],
            [8, { enabled: false }, true],
        );
        const fn = out.one(TYPE.fn, "kidsout-publisher").inputs;
        assert.deepEqual(
            [
                fn.memorySize,
                fn.timeout,
                fn.loggingConfig.applicationLogLevel,
                fn.environment.variables[ENV.completionGraceSeconds],
            ],
            [512, 30, "WARN", "60"],
        );
        assert.equal(out.one(TYPE.logGroup, "kidsout-publisher-logs").inputs.retentionInDays, 14);
        assert.equal(out.one(TYPE.mapping).inputs.batchSize, 50);
        assert.equal(out.one(TYPE.rule).inputs.scheduleExpression, "rate(1 hour)");
        const errors = out.one(TYPE.alarm, "kidsout-publisher-errors-alarm").inputs;
        assert.deepEqual(
            [errors.alarmActions, errors.okActions, errors.threshold],
            [[STACK_REFERENCE_OUTPUTS.topicArn], [STACK_REFERENCE_OUTPUTS.topicArn], 4],
        );
        assert.match(errors.alarmDescription, /the publisher failed more than 4 invocations/);
        // An hourly sweeper is silent for whole five-minute periods: not a breach, also when the schedule is an Output.
        assert.equal(out.one(TYPE.alarm, "kidsout-oldest-pending-alarm").inputs.treatMissingData, "notBreaching");
    });

    it("merges transform.topic, queue, publisher, sweeper and schedule over the computed args", async () => {
        const tr = await buildOutbox("kidstr", {
            transform: {
                topic: { displayName: "Orders" },
                queue: { messageRetentionSeconds: 345600 },
                publisher: { memorySize: 1024, reservedConcurrentExecutions: 5 },
                sweeper: { timeout: 300 },
                schedule: { state: "DISABLED" },
            },
        });
        assert.equal(tr.one(TYPE.topic).inputs.displayName, "Orders");
        assert.equal(tr.one(TYPE.queue).inputs.messageRetentionSeconds, 345600);
        const publisher = tr.one(TYPE.fn, "kidstr-publisher").inputs;
        assert.deepEqual(
            [publisher.memorySize, publisher.reservedConcurrentExecutions, publisher.runtime],
            [1024, 5, "nodejs22.x"],
        );
        assert.equal(tr.one(TYPE.fn, "kidstr-sweeper").inputs.timeout, 300);
        const rule = tr.one(TYPE.rule).inputs;
        assert.deepEqual([rule.state, rule.scheduleExpression], ["DISABLED", "rate(1 minute)"]);
    });

    it("sends no args to the engine as component inputs (pulumi/pulumi#23953), so Output args cannot leak promises", () => {
        assert.deepEqual(std.one(TYPE.outbox).inputs, {});
    });
});
