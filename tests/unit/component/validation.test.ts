import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { OutboxArgs } from "../../../components/args";
import {
    ALARM_THRESHOLD_RANGES,
    AlarmThreshold,
    LOG_RETENTION_DAYS,
    OUTBOX_DEFAULTS,
    OUTBOX_RANGES,
    RangedArg,
} from "../../../components/defaults";
import { Outbox, OutboxBillingMode, OutboxLogLevel } from "../../../components/outbox";
import { OUTBOX_NAME_MAX_LENGTH, findOutboxArgProblems, validateOutboxArgs } from "../../../components/validation";
import { CHILD_SUFFIX } from "../../../components/naming";
import { DEFAULT_EVENT_SOURCE } from "../../../runtime/destination/kind";
import { recordedNamed } from "../../support/pulumi-mocks";
import { waitForRPCs } from "../../support/component-harness";
import { assertRejected, LITERAL_DEFAULT_ARGS } from "../../support/component-args";

const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/** The thrown error, asserted to be INVALID_CONFIG naming the component, the path, the value, what is allowed and a fix. */
function rejects(args: OutboxArgs, argPath: string, value: string, allowed: RegExp): void {
    assertRejected(() => validateOutboxArgs(args, "orders"), 'Outbox "orders"', argPath, value, allowed);
}

describe("validateOutboxArgs", () => {
    it("accepts no args, and every arg at its bounds", () => {
        assert.deepEqual(findOutboxArgProblems({}), []);
        for (const bound of ["min", "max"] as const) {
            const args: Record<string, unknown> = { billingMode: "PROVISIONED" };
            for (const key of Object.keys(OUTBOX_RANGES) as RangedArg[]) args[key] = OUTBOX_RANGES[key][bound];
            assert.ok(
                (LOG_RETENTION_DAYS as readonly number[]).includes(args.logRetentionInDays as number),
                "the range's bounds are CloudWatch periods",
            );
            assert.deepEqual(findOutboxArgProblems(args as OutboxArgs), [], bound);
        }
    });

    for (const key of Object.keys(OUTBOX_RANGES) as RangedArg[]) {
        const range = OUTBOX_RANGES[key];
        const allowed = new RegExp(`allowed: an integer from ${range.min} to ${range.max} `);
        const base: OutboxArgs = key === "provisionedCapacity" ? { billingMode: "PROVISIONED" } : {};
        it(`rejects ${key} below ${range.min}, above ${range.max}, fractional or not a number`, () => {
            rejects({ ...base, [key]: range.min - 1 }, `args.${key}`, String(range.min - 1), allowed);
            rejects({ ...base, [key]: range.max + 1 }, `args.${key}`, String(range.max + 1), allowed);
            rejects({ ...base, [key]: range.min + 0.5 }, `args.${key}`, String(range.min + 0.5), allowed);
            rejects({ ...base, [key]: "10" as unknown as number }, `args.${key}`, '"10"', allowed);
        });
    }

    it("rejects expiryShards 0, 1.5 and 1000, naming the range 1 to 64 and the default", () => {
        for (const bad of [0, 1.5, 1000])
            rejects(
                { expiryShards: bad },
                "args.expiryShards",
                String(bad),
                /allowed: an integer from 1 to 64 \(shards\).*fix: .*default 1/,
            );
    });

    it("rejects maximumRetryAttempts -1 (retry forever), which AWS would accept", () => {
        rejects({ maximumRetryAttempts: -1 }, "args.maximumRetryAttempts", "-1", /from 0 to 10000/);
    });

    it("rejects a log retention CloudWatch does not offer, suggesting the next longer one", () => {
        rejects(
            { logRetentionInDays: 10 },
            "args.logRetentionInDays",
            "10",
            /allowed: one of CloudWatch's retention periods: 1, 3, 5, 7, 14,/,
        );
        assert.match(findOutboxArgProblems({ logRetentionInDays: 10 })[0].fix, /use 14/);
    });

    it("rejects an unknown billing mode or log level (a plain string from JavaScript or YAML), and provisionedCapacity without PROVISIONED", () => {
        // The types refuse these; a JavaScript or YAML caller's string reaches the validator unchecked.
        rejects(
            { billingMode: "on-demand" as never },
            "args.billingMode",
            '"on-demand"',
            /allowed: "PAY_PER_REQUEST" or "PROVISIONED"/,
        );
        rejects(
            { logLevel: "info" as never },
            "args.logLevel",
            '"info"',
            /allowed: "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL".*fix: use one of those \(upper case/s,
        );
        rejects(
            { logLevel: "VERBOSE" as never },
            "args.logLevel",
            '"VERBOSE"',
            /allowed: "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"/,
        );
        rejects(
            { provisionedCapacity: 5 },
            "args.provisionedCapacity",
            "5",
            /only with billingMode "PROVISIONED" \(billingMode is "PAY_PER_REQUEST"\)/,
        );
    });

    it("rejects an importTableName that is no DynamoDB table name, and a transform.table.name that contradicts it", () => {
        const allowed =
            /allowed: an existing DynamoDB table's name: 3 to 255 letters, digits, "_", "-" or "\."; fix: pass the table's name \(not its ARN\)/;
        for (const bad of [
            "ab",
            "legacy outbox",
            "arn:aws:dynamodb:eu-west-1:111111111111:table/legacy",
            "t".repeat(256),
        ])
            rejects({ importTableName: bad }, "args.importTableName", JSON.stringify(bad), allowed);
        rejects({ importTableName: 42 as never }, "args.importTableName", "42", allowed);
        rejects(
            { importTableName: "legacy-outbox", transform: { table: { name: "other" } } },
            "args.transform.table.name",
            '"other"',
            /allowed: nothing, or the imported table's name "legacy-outbox"/,
        );
        for (const good of ["legacy-outbox", "Orders.Outbox_v2", "abc", "t".repeat(255)])
            assert.deepEqual(findOutboxArgProblems({ importTableName: good }), [], good);
        assert.deepEqual(
            findOutboxArgProblems({
                importTableName: "legacy-outbox",
                transform: { table: { name: "legacy-outbox" } },
            }),
            [],
        );
    });

    it("rejects non-boolean flags", () => {
        for (const key of ["pointInTimeRecovery", "deletionProtection", "fifo"] as const) {
            rejects({ [key]: "true" as unknown as boolean }, `args.${key}`, '"true"', /allowed: true or false/);
        }
        rejects(
            { eventBusArn: "arn:aws:events:eu-west-1:111111111111:event-bus/orders", checkEventBus: "false" as never },
            "args.checkEventBus",
            '"false"',
            /allowed: true or false/,
        );
    });

    it("rejects a topic ARN that is not one, and a fifo flag that does not match the topic", () => {
        rejects({ topicArn: "orders-events" }, "args.topicArn", '"orders-events"', /allowed: an SNS topic ARN/);
        rejects(
            { topicArn: "arn:aws:sns:eu-west-1:111111111111:events.fifo" },
            "args.fifo",
            "false",
            /allowed: true for the FIFO topic/,
        );
        rejects(
            { topicArn: "arn:aws:sns:eu-west-1:111111111111:events", fifo: true },
            "args.fifo",
            "true",
            /allowed: false for the standard topic/,
        );
        assert.deepEqual(
            findOutboxArgProblems({ topicArn: "arn:aws:sns:eu-west-1:111111111111:events.fifo", fifo: true }),
            [],
        );
    });

    describe("destinations", () => {
        const TOPIC = "arn:aws:sns:eu-west-1:111111111111:events";
        const QUEUE = "arn:aws:sqs:eu-west-1:111111111111:events";
        const FIFO_QUEUE = "arn:aws:sqs:eu-west-1:111111111111:events.fifo";
        const BUS = "arn:aws:events:eu-west-1:111111111111:event-bus/orders";
        const OUTPUT = "an Output (not known until deployment)";

        it("accepts each destination alone, and none (a topic is created)", () => {
            for (const args of [
                {},
                { topicArn: TOPIC },
                { queueArn: QUEUE },
                { queueArn: FIFO_QUEUE, fifo: true },
                { eventBusArn: BUS },
                { eventBusArn: "arn:aws:events:eu-west-1:111111111111:event-bus/default" },
                { eventBusArn: BUS, eventSource: "com.acme.orders" },
                { queueArn: QUEUE, destinationKmsKeyArn: KMS_KEY },
                { eventBusArn: pulumi.output(BUS), eventSource: pulumi.output("x"), fifo: false },
            ] as OutboxArgs[])
                assert.deepEqual(findOutboxArgProblems(args), [], JSON.stringify(Object.keys(args)));
        });

        it("rejects two destinations, naming both, also when a value is an Output", () => {
            rejects(
                { topicArn: TOPIC, queueArn: QUEUE },
                "args.queueArn",
                JSON.stringify(QUEUE),
                /allowed: one destination, and topicArn is given too: an outbox publishes to exactly one of topicArn, queueArn and eventBusArn .*; fix: keep the one the outbox should publish to and remove the other of topicArn and queueArn/,
            );
            rejects(
                { queueArn: pulumi.output(QUEUE), eventBusArn: pulumi.output(BUS) },
                "args.eventBusArn",
                OUTPUT,
                /allowed: one destination, and queueArn is given too;?.*fix: .*remove the other of queueArn and eventBusArn/,
            );
        });

        it("rejects three destinations on two lines, each naming the others", () => {
            const problems = findOutboxArgProblems({ topicArn: TOPIC, queueArn: QUEUE, eventBusArn: BUS });
            assert.deepEqual(
                problems.map((p) => p.path),
                ["args.queueArn", "args.eventBusArn"],
            );
            assert.match(problems[0]!.allowed, /topicArn and eventBusArn are given too/);
            assert.match(problems[1]!.allowed, /topicArn and queueArn are given too/);
            assert.match(problems[1]!.fix, /remove the others of topicArn, queueArn and eventBusArn/);
        });

        it("rejects two destinations before any resource is registered, the component included", async () => {
            assert.throws(
                () => new Outbox("twodest", { topicArn: TOPIC, eventBusArn: pulumi.output(BUS) }),
                (e: any) =>
                    e.code === "INVALID_CONFIG" &&
                    e.message.includes('Outbox "twodest"') &&
                    e.message.includes("args.eventBusArn is an Output") &&
                    e.message.includes("topicArn is given too"),
            );
            await waitForRPCs();
            assert.deepEqual(
                recordedNamed("twodest").map((r) => r.name),
                [],
            );
        });

        it("rejects a queue ARN that is not one", () => {
            for (const bad of [
                "https://sqs.eu-west-1.amazonaws.com/111111111111/events",
                "events",
                "arn:aws:sns:eu-west-1:111111111111:events",
            ])
                rejects(
                    { queueArn: bad },
                    "args.queueArn",
                    JSON.stringify(bad),
                    /allowed: an SQS queue ARN, arn:aws:sqs:<region>:<account>:<queue name> \(a FIFO queue's name ends in \.fifo\); fix: pass the queue's `arn` output \(not its URL or name\)/,
                );
        });

        it("rejects a fifo flag that does not match a given queue", () => {
            rejects(
                { queueArn: FIFO_QUEUE },
                "args.fifo",
                "false",
                /allowed: true for the FIFO queue arn:aws:sqs:eu-west-1:111111111111:events\.fifo; fix: set fifo: true, so the publisher sends MessageGroupId and MessageDeduplicationId/,
            );
            rejects(
                { queueArn: QUEUE, fifo: true },
                "args.fifo",
                "true",
                /allowed: false for the standard queue .*; fix: set fifo: false, so the publisher does not send MessageGroupId/,
            );
        });

        it("rejects an event bus ARN that is not one", () => {
            for (const bad of ["orders", "arn:aws:events:eu-west-1:111111111111:rule/orders", QUEUE])
                rejects(
                    { eventBusArn: bad },
                    "args.eventBusArn",
                    JSON.stringify(bad),
                    /allowed: an EventBridge event bus ARN, arn:aws:events:<region>:<account>:event-bus\/<bus name>; fix: pass the bus's `arn` output \(not its name\)/,
                );
        });

        it("rejects fifo: true with a bus, plain or an Output, pointing at a FIFO queue or topic", () => {
            for (const eventBusArn of [BUS, pulumi.output(BUS)])
                rejects(
                    { eventBusArn, fifo: true },
                    "args.fifo",
                    "true",
                    /allowed: false or omitted with eventBusArn: an EventBridge bus is never FIFO .*; fix: remove fifo; for consumers that need order, publish to a FIFO queue .* or an SNS FIFO topic/,
                );
        });

        it("rejects an eventSource EventBridge refuses, and one without a bus", () => {
            const allowed = (why: string) =>
                new RegExp(
                    `allowed: an EventBridge Source: 1 to 256 characters, .*not with "aws\\.", but this one ${why}.*; fix: name your application in reverse DNS, e\\.g\\. "com\\.acme\\.orders", or omit it for "dynamodb-outbox"`,
                );
            rejects({ eventBusArn: BUS, eventSource: "" }, "args.eventSource", '""', allowed("must be 1 to 256"));
            rejects(
                { eventBusArn: BUS, eventSource: "s".repeat(257) },
                "args.eventSource",
                JSON.stringify("s".repeat(257)),
                allowed("must be 1 to 256"),
            );
            rejects(
                { eventBusArn: BUS, eventSource: "aws.orders" },
                "args.eventSource",
                '"aws.orders"',
                allowed("may not start with 'aws\\.'"),
            );
            rejects(
                { eventBusArn: BUS, eventSource: " orders" },
                "args.eventSource",
                '" orders"',
                allowed("must start with a letter"),
            );
            rejects(
                { eventBusArn: BUS, eventSource: 7 as never },
                "args.eventSource",
                "7",
                allowed("must be a string"),
            );
            rejects(
                { queueArn: QUEUE, eventSource: "com.acme.orders" },
                "args.eventSource",
                '"com.acme.orders"',
                /allowed: only with eventBusArn .*; fix: remove eventSource, or set eventBusArn/,
            );
            rejects(
                { eventSource: pulumi.output("com.acme.orders") },
                "args.eventSource",
                OUTPUT,
                /allowed: only with eventBusArn/,
            );
        });

        it("rejects checkEventBus without a bus, plain or an Output, and takes it with one", () => {
            for (const [args, value] of [
                [{ queueArn: QUEUE, checkEventBus: false }, "false"],
                [{ checkEventBus: true }, "true"],
                [{ checkEventBus: pulumi.output(false) }, OUTPUT],
            ] as const)
                rejects(
                    args,
                    "args.checkEventBus",
                    value,
                    /allowed: only with eventBusArn .*; fix: remove checkEventBus, or set eventBusArn/,
                );
            assert.deepEqual(findOutboxArgProblems({ eventBusArn: BUS, checkEventBus: false }), []);
            assert.deepEqual(findOutboxArgProblems({ eventBusArn: BUS, checkEventBus: pulumi.output(false) }), []);
        });

        it("rejects a destinationKmsKeyArn that is no key ARN, and one without a given destination", () => {
            rejects(
                { queueArn: QUEUE, destinationKmsKeyArn: "alias/events" },
                "args.destinationKmsKeyArn",
                '"alias/events"',
                /allowed: a KMS key ARN, arn:aws:kms:<region>:<account>:key\/<key-id>; fix: pass the key's `arn` output/,
            );
            rejects(
                { destinationKmsKeyArn: KMS_KEY },
                "args.destinationKmsKeyArn",
                JSON.stringify(KMS_KEY),
                /allowed: only with a destination you give \(topicArn, queueArn and eventBusArn\); the topic the component creates is encrypted with kmsKeyArn; fix: remove destinationKmsKeyArn/,
            );
            for (const destination of [{ topicArn: TOPIC }, { eventBusArn: pulumi.output(BUS) }])
                assert.deepEqual(findOutboxArgProblems({ ...destination, destinationKmsKeyArn: KMS_KEY }), []);
        });
    });

    it("rejects a KMS key id or alias where the key ARN is needed", () => {
        rejects({ kmsKeyArn: "1234abcd-12ab" }, "args.kmsKeyArn", '"1234abcd-12ab"', /allowed: a KMS key ARN/);
        rejects(
            { kmsKeyArn: "arn:aws:kms:eu-west-1:111111111111:alias/outbox" },
            "args.kmsKeyArn",
            '"arn:aws:kms:eu-west-1:111111111111:alias/outbox"',
            /key\/<key-id>/,
        );
        assert.deepEqual(findOutboxArgProblems({ kmsKeyArn: KMS_KEY }), []);
    });

    it("rejects schedules EventBridge would refuse", () => {
        for (const bad of ["every minute", "rate(1 minutes)", "rate(5 minute)", "rate(0 minutes)", "cron(0 * * *)"]) {
            rejects(
                { sweepSchedule: bad },
                "args.sweepSchedule",
                JSON.stringify(bad),
                /allowed: an EventBridge schedule/,
            );
        }
        for (const good of [
            "rate(1 minute)",
            "rate(5 minutes)",
            "rate(1 hour)",
            "rate(2 days)",
            "cron(0/5 * * * ? *)",
        ]) {
            assert.deepEqual(findOutboxArgProblems({ sweepSchedule: good }), [], good);
        }
    });

    it("rejects a transform that turns the table's stream off, which the publisher cannot work without", () => {
        rejects(
            { transform: { table: { streamEnabled: false } } },
            "args.transform.table.streamEnabled",
            "false",
            /allowed: true \(the publisher/,
        );
        assert.deepEqual(findOutboxArgProblems({ transform: { table: { streamEnabled: true } } }), []);
    });

    it("rejects an unknown transform key, naming the keys it accepts", () => {
        rejects(
            { transform: { mapping: {} } as never },
            "args.transform.mapping",
            "{}",
            new RegExp(`one of the keys ${Object.keys(CHILD_SUFFIX).join(", ")};`),
        );
        rejects({ transform: "x" as never }, "args.transform", '"x"', /allowed: an object/);
    });

    it("rejects tags that are not an object of strings", () => {
        rejects(
            { tags: { team: "payments", tier: 1 } as never },
            "args.tags",
            '{"team":"payments","tier":1}',
            /allowed: an object of string values/,
        );
        rejects({ tags: ["team"] as never }, "args.tags", '["team"]', /allowed: an object of string values/);
        assert.deepEqual(findOutboxArgProblems({ tags: { team: pulumi.output("x") } }), []);
    });

    for (const key of Object.keys(ALARM_THRESHOLD_RANGES) as AlarmThreshold[]) {
        const range = ALARM_THRESHOLD_RANGES[key];
        const allowed = new RegExp(`allowed: an integer from ${range.min} to ${range.max} `);
        it(`rejects alarmThresholds.${key} below ${range.min}, above ${range.max}, fractional or not a number`, () => {
            for (const bad of [range.min - 1, range.max + 1, range.min + 0.5])
                rejects({ alarmThresholds: { [key]: bad } }, `args.alarmThresholds.${key}`, String(bad), allowed);
            rejects(
                { alarmThresholds: { [key]: "10" as unknown as number } },
                `args.alarmThresholds.${key}`,
                '"10"',
                allowed,
            );
            assert.deepEqual(findOutboxArgProblems({ alarmThresholds: { [key]: range.min } }), []);
            assert.deepEqual(findOutboxArgProblems({ alarmThresholds: { [key]: range.max } }), []);
        });
    }

    it("rejects alarmThresholds that is not an object, or has a key that is no threshold", () => {
        rejects({ alarmThresholds: 5 as never }, "args.alarmThresholds", "5", /allowed: an object/);
        rejects(
            { alarmThresholds: { iteratorAge: 5000 } as never },
            "args.alarmThresholds.iteratorAge",
            "5000",
            /allowed: one of the keys iteratorAgeMs, oldestPendingAgeMs, ageAtPublishP99Ms, dlqDepth, sweeperPublished, errors, throttles/,
        );
    });

    it("rejects alarmActions that are not SNS topic ARNs, naming the bad entry", () => {
        rejects(
            { alarmActions: "arn:aws:sns:eu-west-1:111111111111:oncall" as never },
            "args.alarmActions",
            '"arn:aws:sns:eu-west-1:111111111111:oncall"',
            /allowed: a list of SNS topic ARNs/,
        );
        rejects(
            { alarmActions: ["arn:aws:sns:eu-west-1:111111111111:oncall", "oncall"] },
            "args.alarmActions[1]",
            '"oncall"',
            /allowed: an SNS topic ARN/,
        );
        assert.deepEqual(
            findOutboxArgProblems({ alarmActions: ["arn:aws:sns:eu-west-1:111111111111:oncall", pulumi.output("x")] }),
            [],
        );
    });

    it("rejects alarms and dashboard that are not plain booleans", () => {
        for (const key of ["alarms", "dashboard"] as const) {
            rejects({ [key]: "false" as unknown as boolean }, `args.${key}`, '"false"', /allowed: true or false/);
            rejects(
                { [key]: pulumi.output(false) as never },
                `args.${key}`,
                "an Output (not known until deployment)",
                /allowed: a plain value/,
            );
        }
    });

    it("rejects a component name that children and AWS names cannot carry", () => {
        for (const bad of ["my outbox", "-orders", "orders/eu", "o".repeat(OUTBOX_NAME_MAX_LENGTH + 1)]) {
            assert.throws(
                () => validateOutboxArgs({}, bad),
                (e: any) =>
                    e.code === "INVALID_CONFIG" &&
                    e.message.includes(`name is ${JSON.stringify(bad)};`) &&
                    /allowed: 1 to 40 letters, digits/.test(e.message),
                bad,
            );
        }
        for (const good of ["orders", "Orders_2", "o".repeat(OUTBOX_NAME_MAX_LENGTH)])
            assert.doesNotThrow(() => validateOutboxArgs({}, good), good);
    });

    it("lists every problem at once", () => {
        assert.throws(
            () => validateOutboxArgs({ batchSize: 0, sweepSchedule: "often", billingMode: "x" as never }, "orders"),
            (e: any) =>
                /has 3 invalid args/.test(e.message) &&
                e.context.paths === "args.billingMode,args.batchSize,args.sweepSchedule",
        );
    });

    it("never fails on values that are still unknown (Outputs, promises)", () => {
        const unknown = pulumi.output("not-an-arn-yet");
        assert.deepEqual(
            findOutboxArgProblems({
                topicArn: unknown,
                kmsKeyArn: Promise.resolve("x") as never,
                maximumRetryAttempts: pulumi.output(-1) as never,
                sweepSchedule: pulumi.output("often") as never,
                deletionProtection: pulumi.output(true) as never,
            }),
            [],
        );
    });

    it("never fails on the engine's unknown, as a preview hands it to the component in the provider plugin", () => {
        // What the provider host's deserializer makes of the unknown sentinel at the top of an input.
        const unknown = pulumi.unknown as never;
        assert.deepEqual(
            findOutboxArgProblems({
                kmsKeyArn: unknown,
                topicArn: unknown,
                maximumRetryAttempts: unknown,
                sweepSchedule: unknown,
                tags: unknown,
            }),
            [],
        );
        assert.deepEqual(findOutboxArgProblems({ tags: { team: unknown } }), []);
    });

    it("asks for a plain value where the arg decides which resources exist or how they are shaped", () => {
        const output = "an Output (not known until deployment)";
        rejects(
            { fifo: pulumi.output(true) as never },
            "args.fifo",
            output,
            /allowed: a plain value: it shapes the topic/,
        );
        rejects(
            { billingMode: pulumi.output("PROVISIONED") as never },
            "args.billingMode",
            output,
            /allowed: a plain value: it decides whether the table/,
        );
        rejects(
            { importTableName: pulumi.output("legacy-outbox") as never },
            "args.importTableName",
            output,
            /allowed: a plain table name: it is the table's import resource option/,
        );
        // Forced into a plain object, an Output would otherwise be read as "no thresholds" and "no overrides".
        rejects(
            { alarmThresholds: pulumi.output({ errors: 5 }) as never },
            "args.alarmThresholds",
            output,
            /allowed: a plain object \(each threshold in it may be an Output\)/,
        );
        rejects(
            { transform: pulumi.output({ table: {} }) as never },
            "args.transform",
            output,
            /allowed: a plain object \(the values in each override may be Outputs\)/,
        );
        rejects({ transform: Promise.resolve({}) as never }, "args.transform", output, /allowed: a plain object/);
    });

    it("takes an Output wherever the child takes an Input, and checks only the plain values", () => {
        const fromStack = pulumi.output(["arn:aws:sns:eu-west-1:111111111111:oncall"]);
        assert.deepEqual(
            findOutboxArgProblems({
                memorySize: pulumi.output(512),
                timeout: pulumi.output(30),
                batchSize: pulumi.output(10),
                logRetentionInDays: pulumi.output(14),
                provisionedCapacity: pulumi.output(8),
                billingMode: OutboxBillingMode.Provisioned,
                pointInTimeRecovery: pulumi.output(false),
                logLevel: pulumi.output(OutboxLogLevel.Warn),
                sweepSchedule: pulumi.output("rate(5 minutes)"),
                alarmActions: fromStack,
                alarmThresholds: { errors: pulumi.output(3) },
            }),
            [],
        );
        // Beside an Output, a plain value of the same kind is still checked.
        rejects(
            { memorySize: pulumi.output(512), timeout: 0 },
            "args.timeout",
            "0",
            /allowed: an integer from 1 to 900/,
        );
        rejects(
            { alarmThresholds: { errors: pulumi.output(3), throttles: -1 } },
            "args.alarmThresholds.throttles",
            "-1",
            /allowed: an integer from 0 to 1000000/,
        );
    });

    it("accepts the choices' values, typed or as plain strings", () => {
        for (const mode of Object.values(OutboxBillingMode))
            assert.deepEqual(findOutboxArgProblems({ billingMode: mode }), [], mode);
        for (const level of Object.values(OutboxLogLevel))
            assert.deepEqual(findOutboxArgProblems({ logLevel: level }), [], level);
        const fromYaml: Record<string, unknown> = {
            billingMode: "PROVISIONED",
            provisionedCapacity: 8,
            logLevel: "DEBUG",
        };
        assert.deepEqual(findOutboxArgProblems(fromYaml as OutboxArgs), []);
    });

    it("throws from the constructor before anything is declared, the component included", async () => {
        assert.throws(
            () => new Outbox("badargs", { batchSize: 0 }),
            (e: any) => e.code === "INVALID_CONFIG" && e.message.includes('Outbox "badargs"'),
        );
        await waitForRPCs();
        assert.deepEqual(
            recordedNamed("badargs").map((r) => r.name),
            [],
        );
    });

    it("quotes in each arg's TSDoc @default exactly the default the component applies", () => {
        const source = fs.readFileSync(path.join(__dirname, "..", "..", "..", "components", "args.ts"), "utf8");
        const documented = new Map<string, string>();
        for (const m of source.matchAll(/@default ([^\n]+)\n\s*\*\/\n\s*(\w+)\?:/g)) documented.set(m[2], m[1].trim());
        for (const key of Object.keys(OUTBOX_RANGES) as RangedArg[]) {
            assert.equal(documented.get(key), String(OUTBOX_RANGES[key].fallback), `${key} @default`);
            assert.ok(
                source.includes(`From ${OUTBOX_RANGES[key].min} to ${OUTBOX_RANGES[key].max}`),
                `${key} range in TSDoc`,
            );
        }
        for (const key of [...LITERAL_DEFAULT_ARGS, "checkEventBus"] as const) {
            assert.equal(documented.get(key), JSON.stringify(OUTBOX_DEFAULTS[key]), `${key} @default`);
        }
        assert.equal(documented.get("eventSource"), JSON.stringify(DEFAULT_EVENT_SOURCE), "eventSource @default");
        for (const key of Object.keys(ALARM_THRESHOLD_RANGES) as AlarmThreshold[]) {
            assert.equal(
                documented.get(key),
                String(ALARM_THRESHOLD_RANGES[key].fallback),
                `alarmThresholds.${key} @default`,
            );
            assert.ok(
                source.includes(`From ${ALARM_THRESHOLD_RANGES[key].min} to ${ALARM_THRESHOLD_RANGES[key].max}.`),
                `alarmThresholds.${key} range in TSDoc`,
            );
        }
    });
});
