/**
 * The claim check's args refused before any resource is declared (issue 26): each with a failing input, the
 * message naming the arg, the value, what is allowed and the fix. Outputs are left for deployment.
 */
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import type { OutboxArgs } from "../../../components/args";
import { findOutboxArgProblems, validateOutboxArgs } from "../../../components/validation";
import { PAYLOAD_CONSUMER_HORIZON_SECONDS } from "../../../components/payload-validation";

function problem(args: OutboxArgs, path: string, allowed: RegExp, name = "orders"): void {
    assert.throws(
        () => validateOutboxArgs(args, name),
        (e: { code: string; message: string }) => {
            assert.equal(e.code, "INVALID_CONFIG");
            const line = e.message.split("\n").find((l) => l.includes(`${path} is `));
            assert.ok(line, `a line for ${path} in:\n${e.message}`);
            assert.match(line, allowed);
            assert.match(line, /; fix: \S/);
            return true;
        },
    );
}

describe("validateOutboxArgs: the claim check's args", () => {
    it("accepts largePayloads, a bucket ARN, and an expiry at its bounds", () => {
        assert.deepEqual(findOutboxArgProblems({ largePayloads: true }, "orders"), []);
        assert.deepEqual(findOutboxArgProblems({ largePayloads: true, payloadExpirationDays: 3650 }, "orders"), []);
        assert.deepEqual(
            findOutboxArgProblems({ largePayloads: true, payloadExpirationDays: 5 }, "orders"),
            [],
            "5 days > 120 s + 3600 s + 4 days",
        );
        assert.deepEqual(
            findOutboxArgProblems({ payloadBucketArn: "arn:aws:s3:::shared-payloads" }, "Orders_1"),
            [],
            "a given bucket: the name is free",
        );
        assert.deepEqual(
            findOutboxArgProblems(
                { largePayloads: true, payloadBucketArn: "arn:aws-cn:s3:::shared.payloads" },
                "orders",
            ),
            [],
        );
        assert.deepEqual(
            findOutboxArgProblems(
                {
                    largePayloads: true,
                    payloadExpirationDays: pulumi.output(1) as never,
                    sweepAfterSeconds: pulumi.output(1),
                },
                "orders",
            ),
            [],
            "Outputs are checked by AWS",
        );
    });

    it("refuses a payloadBucketArn that is not a bucket ARN", () => {
        for (const bad of [
            "shared-payloads",
            "arn:aws:s3:::shared-payloads/outbox-payloads/*",
            "arn:aws:sqs:eu-west-1:111111111111:q",
            "arn:aws:s3:::UPPER",
        ]) {
            problem(
                { payloadBucketArn: bad },
                "args.payloadBucketArn",
                /allowed: an S3 bucket ARN, arn:aws:s3:::<bucket name>/,
            );
        }
    });

    it("refuses an expiry no longer than sweepAfterSeconds + maximumRecordAgeInSeconds + the consumer horizon", () => {
        problem(
            { largePayloads: true, payloadExpirationDays: 4 },
            "args.payloadExpirationDays",
            /more than sweepAfterSeconds \(120\) \+ maximumRecordAgeInSeconds \(3600\) \+ a consumer's horizon \(345600 s, SQS's default retention\) = 349320 s, i.e. at least 5 days/,
        );
        // With the record's wait raised, the default 14 days itself is too short.
        const sweepAfterSeconds = 86400;
        const days = Math.floor((sweepAfterSeconds + 86400 + PAYLOAD_CONSUMER_HORIZON_SECONDS) / 86400);
        problem(
            { largePayloads: true, payloadExpirationDays: days, sweepAfterSeconds, maximumRecordAgeInSeconds: 86400 },
            "args.payloadExpirationDays",
            /at least 7 days/,
        );
    });

    it("refuses an expiry out of range, or with a bucket the component does not create", () => {
        for (const bad of [0, 3651, 1.5, "14"])
            problem(
                { largePayloads: true, payloadExpirationDays: bad as never },
                "args.payloadExpirationDays",
                /an integer from 1 to 3650 \(days\)/,
            );
        problem(
            { payloadExpirationDays: 14 },
            "args.payloadExpirationDays",
            /only with largePayloads: true and no payloadBucketArn/,
        );
        problem(
            { payloadBucketArn: "arn:aws:s3:::shared-payloads", payloadExpirationDays: 14 },
            "args.payloadExpirationDays",
            /a given bucket's rules are its own/,
        );
    });

    it("refuses a largePayloads that is not a boolean, is an Output, or is false beside a bucket", () => {
        problem({ largePayloads: "true" as never }, "args.largePayloads", /allowed: true or false/);
        problem(
            { largePayloads: pulumi.output(true) as never },
            "args.largePayloads",
            /it decides whether the component declares a payload bucket/,
        );
        problem(
            { largePayloads: false, payloadBucketArn: "arn:aws:s3:::shared-payloads" },
            "args.largePayloads",
            /the bucket turns the claim check on/,
        );
    });

    it("refuses a component name a bucket name cannot start with, when it creates the bucket", () => {
        problem(
            { largePayloads: true },
            "name",
            /lowercase letters, digits and "-": the created bucket's name starts with it/,
            "Orders_1",
        );
        assert.deepEqual(findOutboxArgProblems({}, "Orders_1"), [], "without largePayloads the name is as before");
    });
});
