/**
 * `validateOutboxConsumerArgs`: one failing input per validator, each refused with INVALID_CONFIG naming the
 * component, the arg, the bad value, what is allowed and the fix; nothing registered. The deploy-time check of an
 * ARN that was an Output (`destinationArnProblem`), by examples and by a property over every kind's ARNs.
 */
import * as assert from "node:assert/strict";
import * as fc from "fast-check";
import * as pulumi from "@pulumi/pulumi";
import { OutboxConsumer, type OutboxConsumerArgs } from "../../../components/consumer";
import { CONSUMER_RANGES, type OutboxConsumerDestinationKind } from "../../../components/consumer-args";
import {
    destinationArnProblem,
    findConsumerArgProblems,
    payloadBucketArnProblem,
    validateOutboxConsumerArgs,
} from "../../../components/consumer-validation";
import { destinationKindOfArn } from "../../../runtime/destination/kind";
import { exampleArns } from "../../support/arns";
import { recordedNamed } from "../../support/pulumi-mocks";
import { waitForRPCs } from "../../support/component-harness";
import { assertRejected } from "../../support/component-args";

const {
    topic: TOPIC,
    fifoTopic: FIFO_TOPIC,
    queue: QUEUE,
    fifoQueue: FIFO_QUEUE,
    bus: BUS,
} = exampleArns("orders", { region: "eu-west-1" });
const FUNCTION = exampleArns("billing", { region: "eu-west-1" }).function;
const BUCKET = "arn:aws:s3:::orders-payloads";
const KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";
const consume = () => [];

/** The thrown error, asserted to be INVALID_CONFIG naming the component, the path, the value, what is allowed and a fix. */
function rejects(args: unknown, argPath: string, value: string, allowed: RegExp, name = "billing"): void {
    assertRejected(
        () => validateOutboxConsumerArgs(args as OutboxConsumerArgs, name),
        `OutboxConsumer "${name}"`,
        argPath,
        value,
        allowed,
    );
}

describe("validateOutboxConsumerArgs", () => {
    it("accepts each kind with consume or functionArn, and every number at its bounds", () => {
        for (const destinationArn of [TOPIC, FIFO_TOPIC, QUEUE, FIFO_QUEUE, BUS]) {
            assert.deepEqual(findConsumerArgProblems({ destinationArn, consume }, "billing"), []);
            assert.deepEqual(findConsumerArgProblems({ destinationArn, functionArn: FUNCTION }, "billing"), []);
        }
        for (const bound of ["min", "max"] as const) {
            const args: OutboxConsumerArgs = { destinationArn: TOPIC, consume, maximumBatchingWindowInSeconds: 1 };
            for (const [key, range] of Object.entries(CONSUMER_RANGES)) (args as any)[key] = range[bound];
            if (bound === "min") args.maximumBatchingWindowInSeconds = 1;
            assert.deepEqual(findConsumerArgProblems(args, "billing"), [], bound);
        }
        for (const payloads of [
            { payloadBucketArn: BUCKET },
            { payloadBucketArn: BUCKET, payloadKmsKeyArn: KEY },
            { payloadBucketArn: pulumi.output(BUCKET), payloadKmsKeyArn: pulumi.output(KEY) },
        ]) {
            assert.deepEqual(findConsumerArgProblems({ destinationArn: TOPIC, consume, ...payloads }, "billing"), []);
            assert.deepEqual(
                findConsumerArgProblems({ destinationArn: TOPIC, functionArn: FUNCTION, ...payloads }, "billing"),
                [],
            );
        }
        const output = pulumi.output(BUS);
        assert.deepEqual(
            findConsumerArgProblems({ destinationArn: output, destinationKind: "eventbridge", consume }, "billing"),
            [],
        );
    });

    const cases: [string, unknown, string, string, RegExp][] = [
        ["the component's name", { destinationArn: TOPIC, consume }, "name", '"bad name!"', /letters, digits/],
        [
            "no destinationArn",
            { consume },
            "args.destinationArn",
            "undefined",
            /SNS topic, an SQS queue or an EventBridge bus/,
        ],
        [
            "an ARN of no destination",
            { destinationArn: "orders", consume },
            "args.destinationArn",
            '"orders"',
            /SNS topic ARN/,
        ],
        [
            "an unknown destinationKind",
            { destinationArn: TOPIC, destinationKind: "kafka", consume },
            "args.destinationKind",
            '"kafka"',
            /"sns", "sqs", "eventbridge"/,
        ],
        [
            "a destinationKind the ARN contradicts",
            { destinationArn: TOPIC, destinationKind: "sqs", consume },
            "args.destinationKind",
            '"sqs"',
            /"sns", the kind of/,
        ],
        [
            "a fifo the ARN contradicts",
            { destinationArn: TOPIC, fifo: true, consume },
            "args.fifo",
            "true",
            /false for the standard topic/,
        ],
        [
            "a fifo that is no boolean",
            { destinationArn: TOPIC, fifo: "yes", consume },
            "args.fifo",
            '"yes"',
            /plain boolean/,
        ],
        ["fifo with a bus", { destinationArn: BUS, fifo: true, consume }, "args.fifo", "true", /never FIFO/],
        [
            "fifo with a bus from an Output",
            { destinationArn: pulumi.output(BUS), destinationKind: "eventbridge", fifo: true, consume },
            "args.fifo",
            "true",
            /never FIFO/,
        ],
        [
            "neither consume nor functionArn",
            { destinationArn: TOPIC },
            "args.consume",
            "undefined",
            /functionArn instead/,
        ],
        [
            "both consume and functionArn",
            { destinationArn: TOPIC, consume, functionArn: FUNCTION },
            "args.functionArn",
            JSON.stringify(FUNCTION),
            /nothing when consume is given/,
        ],
        [
            "a consume that is no function",
            { destinationArn: TOPIC, consume: "billing" },
            "args.consume",
            '"billing"',
            /a function/,
        ],
        [
            "a functionArn that is a name",
            { destinationArn: TOPIC, functionArn: "billing" },
            "args.functionArn",
            '"billing"',
            /Lambda function ARN/,
        ],
        [
            "functionRoleName without functionArn",
            { destinationArn: TOPIC, consume, functionRoleName: "r" },
            "args.functionRoleName",
            '"r"',
            /only with functionArn/,
        ],
        [
            "consumerName without consume",
            { destinationArn: TOPIC, functionArn: FUNCTION, consumerName: "b" },
            "args.consumerName",
            '"b"',
            /only with consume/,
        ],
        [
            "memorySize without consume",
            { destinationArn: TOPIC, functionArn: FUNCTION, memorySize: 512 },
            "args.memorySize",
            "512",
            /only with consume/,
        ],
        [
            "a consumerName the inbox refuses",
            { destinationArn: TOPIC, consume, consumerName: "a#b" },
            "args.consumerName",
            '"a#b"',
            /marker's key/,
        ],
        [
            "an inboxTableName that is an ARN",
            { destinationArn: TOPIC, consume, inboxTableName: "arn:aws:dynamodb:eu-west-1:1:table/x" },
            "args.inboxTableName",
            '"arn:aws:dynamodb:eu-west-1:1:table/x"',
            /table's name/,
        ],
        [
            "a functionRoleName that is an ARN",
            { destinationArn: TOPIC, functionArn: FUNCTION, functionRoleName: "arn:aws:iam::1:role/r" },
            "args.functionRoleName",
            '"arn:aws:iam::1:role/r"',
            /role's name/,
        ],
        [
            "a filter that is no object",
            { destinationArn: TOPIC, consume, filter: "OrderPlaced" },
            "args.filter",
            '"OrderPlaced"',
            /plain object/,
        ],
        [
            "a filter with a queue",
            { destinationArn: QUEUE, consume, filter: { a: ["b"] } },
            "args.filter",
            '{"a":["b"]}',
            /nothing with a queue destination/,
        ],
        [
            "a batchSize out of range",
            { destinationArn: TOPIC, consume, batchSize: 0 },
            "args.batchSize",
            "0",
            /1 to 10000/,
        ],
        [
            "a batchSize above 10 on a FIFO queue",
            { destinationArn: FIFO_TOPIC, consume, batchSize: 11 },
            "args.batchSize",
            "11",
            /on a FIFO queue/,
        ],
        [
            "a batchSize above 10 without a window",
            { destinationArn: TOPIC, consume, batchSize: 11 },
            "args.batchSize",
            "11",
            /without a batching window/,
        ],
        [
            "a batching window on a FIFO queue",
            { destinationArn: FIFO_QUEUE, consume, maximumBatchingWindowInSeconds: 1 },
            "args.maximumBatchingWindowInSeconds",
            "1",
            /on a FIFO queue/,
        ],
        [
            "a maxReceiveCount out of range",
            { destinationArn: TOPIC, consume, maxReceiveCount: 1001 },
            "args.maxReceiveCount",
            "1001",
            /1 to 1000/,
        ],
        ["a timeout out of range", { destinationArn: TOPIC, consume, timeout: 901 }, "args.timeout", "901", /1 to 900/],
        [
            "a memorySize out of range",
            { destinationArn: TOPIC, consume, memorySize: 64 },
            "args.memorySize",
            "64",
            /128 to 10240/,
        ],
        [
            "a window out of range",
            { destinationArn: TOPIC, consume, maximumBatchingWindowInSeconds: 301 },
            "args.maximumBatchingWindowInSeconds",
            "301",
            /0 to 300/,
        ],
        [
            "a payloadBucketArn that is a bucket's name",
            { destinationArn: TOPIC, consume, payloadBucketArn: "orders-payloads" },
            "args.payloadBucketArn",
            '"orders-payloads"',
            /S3 bucket ARN, arn:aws:s3:::<bucket name>/,
        ],
        [
            "a payloadBucketArn that is an object's ARN",
            { destinationArn: TOPIC, consume, payloadBucketArn: "arn:aws:s3:::orders-payloads/outbox/*" },
            "args.payloadBucketArn",
            '"arn:aws:s3:::orders-payloads/outbox/*"',
            /S3 bucket ARN/,
        ],
        [
            "a payloadBucketArn that is no string",
            { destinationArn: TOPIC, consume, payloadBucketArn: 42 },
            "args.payloadBucketArn",
            "42",
            /S3 bucket ARN/,
        ],
        [
            "a payloadKmsKeyArn without payloadBucketArn",
            { destinationArn: TOPIC, consume, payloadKmsKeyArn: KEY },
            "args.payloadKmsKeyArn",
            `"${KEY}"`,
            /only with payloadBucketArn/,
        ],
        [
            "a payloadKmsKeyArn that is an alias",
            { destinationArn: TOPIC, consume, payloadBucketArn: BUCKET, payloadKmsKeyArn: "alias/outbox" },
            "args.payloadKmsKeyArn",
            '"alias/outbox"',
            /KMS key ARN/,
        ],
        [
            "alarms that is no boolean",
            { destinationArn: TOPIC, consume, alarms: "no" },
            "args.alarms",
            '"no"',
            /plain boolean/,
        ],
    ];
    for (const [what, args, argPath, value, allowed] of cases) {
        it(`refuses ${what}`, () =>
            rejects(args, argPath, value, allowed, argPath === "name" ? "bad name!" : "billing"));
    }

    it("registers nothing when it refuses", async () => {
        assert.throws(() => new OutboxConsumer("crefused", { destinationArn: "nope", consume }), /INVALID|invalid/);
        await waitForRPCs();
        assert.deepEqual(recordedNamed("crefused"), []);
    });
});

describe("payloadBucketArnProblem: an Output payload bucket ARN checked when it resolves", () => {
    it("passes exactly the S3 bucket ARNs the Outbox's payload bucket can have", () => {
        assert.equal(payloadBucketArnProblem(BUCKET), undefined);
        assert.equal(payloadBucketArnProblem("arn:aws-cn:s3:::orders.payloads-1"), undefined);
        for (const bad of ["orders-payloads", `${BUCKET}/outbox/*`, "arn:aws:s3:::O", "", undefined]) {
            const problem = payloadBucketArnProblem(bad);
            assert.equal(problem?.path, "args.payloadBucketArn", String(bad));
            assert.match(problem.fix, /payloadBucketName/);
        }
    });

    it("an OutboxConsumer given a bucket's name as an Output refuses it when it resolves, naming the arg", async () => {
        const consumer = new OutboxConsumer("cbadbucket", {
            destinationArn: TOPIC,
            consume,
            payloadBucketArn: pulumi.output("orders-payloads"),
        });
        // Output's internal promise(): the only way to see an Output's rejection (unwrap waits for a value).
        await assert.rejects(
            (consumer.consumerPolicy as unknown as { promise(): Promise<string> }).promise(),
            /args\.payloadBucketArn is "orders-payloads"/,
        );
    });

    it("property: a bucket name in an ARN passes, and the bare name never does", () => {
        const bucketName = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/);
        fc.assert(
            fc.property(bucketName, (n) => {
                assert.equal(payloadBucketArnProblem(`arn:aws:s3:::${n}`), undefined);
                assert.equal(payloadBucketArnProblem(n)?.path, "args.payloadBucketArn");
            }),
            { numRuns: 200 },
        );
    });
});

describe("destinationArnProblem: an Output ARN checked when it resolves", () => {
    it("names the arg and the fix when the ARN is no destination, of another kind, or of another FIFO-ness", () => {
        assert.equal(destinationArnProblem("nope", "sns", false)?.path, "args.destinationArn");
        assert.match(destinationArnProblem(QUEUE, "sns", false)?.fix ?? "", /destinationKind: "sqs"/);
        assert.match(destinationArnProblem(FIFO_TOPIC, "sns", false)?.fix ?? "", /fifo: true/);
        assert.equal(destinationArnProblem(FIFO_QUEUE, "sqs", true), undefined);
    });

    const name = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/);
    const arns = fc.oneof(
        fc.tuple(name, fc.boolean()).map(([n, f]) => `arn:aws:sns:eu-west-1:111111111111:${n}${f ? ".fifo" : ""}`),
        fc.tuple(name, fc.boolean()).map(([n, f]) => `arn:aws:sqs:us-east-2:222222222222:${n}${f ? ".fifo" : ""}`),
        name.map((n) => `arn:aws:events:eu-west-1:111111111111:event-bus/${n}`),
    );
    const kinds = fc.constantFrom<OutboxConsumerDestinationKind>("sns", "sqs", "eventbridge");

    it("property: an ARN passes exactly with its own kind and FIFO-ness (a bus's never FIFO)", () => {
        fc.assert(
            fc.property(arns, kinds, fc.boolean(), (arn, kind, fifo) => {
                const actual = destinationKindOfArn(arn)!;
                const matches = kind === actual && (actual === "eventbridge" || fifo === arn.endsWith(".fifo"));
                const problem = destinationArnProblem(arn, kind, fifo);
                assert.equal(problem === undefined, matches, `${arn} as ${kind}, fifo ${fifo}: ${problem?.fix}`);
                // A plain ARN, with neither kind nor fifo given, is always accepted: both are read from it.
                assert.deepEqual(findConsumerArgProblems({ destinationArn: arn, consume }, "billing"), []);
            }),
            { numRuns: 300 },
        );
    });
});
