/**
 * Validation of the claim check's args (`largePayloads`, `payloadBucketArn`, `payloadExpirationDays`), in the
 * terms of `validation.ts`: the arg path, the bad value, what is allowed and the fix.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import type { OutboxArgs } from "./args";
import { OUTBOX_RANGES } from "./defaults";
import { DEFAULT_PAYLOAD_EXPIRATION_DAYS } from "./payload-bucket";
import type { OutboxArgProblem } from "./arg-problem";

/** An S3 bucket ARN: `arn:<partition>:s3:::<bucket name>`, no object path. */
export const S3_BUCKET_ARN = /^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `payloadExpirationDays`' range. */
export const PAYLOAD_EXPIRATION_DAYS_RANGE = {
    min: 1,
    max: 3650,
    fallback: DEFAULT_PAYLOAD_EXPIRATION_DAYS,
    unit: "days",
} as const;

/**
 * How long a consumer may take to read a message after it was published, in the expiry check: SQS's default
 * retention (4 days). A payload must outlive the record's wait to be published and that.
 */
export const PAYLOAD_CONSUMER_HORIZON_SECONDS = 4 * 24 * 3600;

/** A component name a bucket's autoname can start with: lowercase letters, digits and `-`. */
const BUCKET_NAME_PREFIX = /^[a-z0-9][a-z0-9-]*$/;

function isUnknown(value: unknown): boolean {
    return pulumi.Output.isInstance(value) || value instanceof Promise || pulumi.isUnknown(value);
}

function show(value: unknown): string {
    return JSON.stringify(value) ?? String(value);
}

/** A plain number arg, or its default; `undefined` when it is not known yet. */
function plainOr(value: unknown, fallback: number): number | undefined {
    if (value === undefined) return fallback;
    return typeof value === "number" ? value : undefined;
}

/** The expiry against the longest a record waits to be published, plus the consumer horizon. */
function checkExpiry(args: OutboxArgs, days: number, problems: OutboxArgProblem[]): void {
    const sweepAfter = plainOr(args.sweepAfterSeconds, OUTBOX_RANGES.sweepAfterSeconds.fallback);
    const recordAge = plainOr(args.maximumRecordAgeInSeconds, OUTBOX_RANGES.maximumRecordAgeInSeconds.fallback);
    if (sweepAfter === undefined || recordAge === undefined) return;
    const needed = sweepAfter + recordAge + PAYLOAD_CONSUMER_HORIZON_SECONDS;
    if (days * 86400 > needed) return;
    problems.push({
        path: "args.payloadExpirationDays",
        value: show(days),
        allowed: `more than sweepAfterSeconds (${sweepAfter}) + maximumRecordAgeInSeconds (${recordAge}) + a consumer's horizon (${PAYLOAD_CONSUMER_HORIZON_SECONDS} s, SQS's default retention) = ${needed} s, i.e. at least ${Math.floor(needed / 86400) + 1} days`,
        fix: `raise it, or omit it for ${DEFAULT_PAYLOAD_EXPIRATION_DAYS} days: a payload that expires first leaves its message with a pointer to nothing`,
    });
}

/**
 * Every problem with the claim check's args.
 *
 * @param args - The component args.
 * @param name - The component's name (a created bucket's name starts with it).
 * @param problems - Where the problems go.
 */
export function checkPayloadArgs(args: OutboxArgs, name: string | undefined, problems: OutboxArgProblem[]): void {
    const on: unknown = args.largePayloads;
    if (on !== undefined && typeof on !== "boolean" && !isUnknown(on)) {
        problems.push({
            path: "args.largePayloads",
            value: show(on),
            allowed: "true or false",
            fix: "pass a boolean (not a string)",
        });
    }
    const arn: unknown = args.payloadBucketArn;
    if (arn !== undefined && !isUnknown(arn) && (typeof arn !== "string" || !S3_BUCKET_ARN.test(arn))) {
        problems.push({
            path: "args.payloadBucketArn",
            value: show(arn),
            allowed: "an S3 bucket ARN, arn:aws:s3:::<bucket name> (no object path)",
            fix: "pass the bucket's `arn` output (not its name, a URL or an object ARN), or omit it and set largePayloads: true to create one",
        });
    }
    if (on === false && arn !== undefined) {
        problems.push({
            path: "args.largePayloads",
            value: "false",
            allowed: "true or omitted when payloadBucketArn is given (the bucket turns the claim check on)",
            fix: "remove largePayloads: false, or payloadBucketArn",
        });
    }
    const creates = on === true && arn === undefined;
    if (creates && name !== undefined && !BUCKET_NAME_PREFIX.test(name)) {
        problems.push({
            path: "name",
            value: show(name),
            allowed:
                'with largePayloads, lowercase letters, digits and "-": the created bucket\'s name starts with it, and S3 takes nothing else',
            fix: `rename the component, e.g. ${show(name.toLowerCase().replace(/[^a-z0-9-]/g, "-"))}, or pass payloadBucketArn`,
        });
    }
    const days: unknown = args.payloadExpirationDays;
    if (days === undefined || isUnknown(days)) {
        if (creates) checkExpiry(args, DEFAULT_PAYLOAD_EXPIRATION_DAYS, problems);
        return;
    }
    const range = PAYLOAD_EXPIRATION_DAYS_RANGE;
    if (typeof days !== "number" || !Number.isInteger(days) || days < range.min || days > range.max) {
        problems.push({
            path: "args.payloadExpirationDays",
            value: show(days),
            allowed: `an integer from ${range.min} to ${range.max} (${range.unit})`,
            fix: `set it within that range, or omit it for the default ${range.fallback}`,
        });
    } else if (!creates) {
        problems.push({
            path: "args.payloadExpirationDays",
            value: show(days),
            allowed:
                "only with largePayloads: true and no payloadBucketArn (the component writes the lifecycle rule of the bucket it creates; a given bucket's rules are its own)",
            fix: "remove it, or set largePayloads: true",
        });
    } else {
        checkExpiry(args, days, problems);
    }
}
