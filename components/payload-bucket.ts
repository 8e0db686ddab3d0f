/**
 * The claim check's bucket (`largePayloads`): where the writer stores payloads too large to travel inline, and
 * where consumers fetch them. The component creates a private one, or takes the one given (`payloadBucketArn`).
 *
 * A created bucket is private and short-lived by construction:
 * - its public access is blocked (all four settings);
 * - its bucket policy denies every request not made over TLS;
 * - it is encrypted at rest: SSE-KMS with `kmsKeyArn` (with an S3 Bucket Key, so each object does not call KMS),
 *   else SSE-S3;
 * - a lifecycle rule expires the payloads `payloadExpirationDays` after they were written (default 14). That is
 *   what removes the object a failed transaction leaves (the writer puts before it commits), and the objects of
 *   delivered records: nothing else deletes them.
 *
 * The grants: `writerPolicy` gains `s3:PutObject` on the payloads' prefix, `readerPolicy` gives consumers
 * `s3:GetObject` there. The publisher and the sweeper get nothing: they publish the pointer, never the payload.
 *
 * @packageDocumentation
 */
import * as pulumi from "@pulumi/pulumi";
import * as aws from "./aws";
import { DEFAULT_PAYLOAD_KEY_PREFIX } from "../runtime/claim-check/pointer";
import type { OutboxArgs } from "./args";
import { withTags } from "./children";
import type { OutboxParent } from "./handlers";
import { transformed } from "./transform";
import type { PolicyDocument, PolicyStatement } from "./iam";

/** The prefix the writer puts payloads under, which the lifecycle rule expires and the grants are scoped to. */
export const PAYLOAD_EXPIRY_PREFIX = DEFAULT_PAYLOAD_KEY_PREFIX;

/** How long a payload stays by default, in days: AWS's own Extended Client example expires its payloads after 14. */
export const DEFAULT_PAYLOAD_EXPIRATION_DAYS = 14;

/** The id of the created bucket's lifecycle rule. */
export const PAYLOAD_EXPIRY_RULE_ID = "expire-outbox-payloads";

/** The claim check's bucket, as the grants and the outputs use it. */
export interface PayloadBucket {
    /** The bucket's name (for `largePayloads.bucket` and `createPayloadResolver({ bucket })`). */
    readonly bucketName: pulumi.Output<string>;
    /** The bucket's ARN. */
    readonly bucketArn: pulumi.Output<string>;
    /** The bucket resource, when the component created it (`undefined` for a given `payloadBucketArn`). */
    readonly bucket?: aws.s3.Bucket;
}

/** The statements that deny every request to the bucket not made over TLS. */
export function tlsOnlyPolicy(bucketArn: string): object {
    return {
        Version: "2012-10-17",
        Statement: [
            {
                Sid: "DenyInsecureTransport",
                Effect: "Deny",
                Principal: "*",
                Action: "s3:*",
                Resource: [bucketArn, `${bucketArn}/*`],
                Condition: { Bool: { "aws:SecureTransport": "false" } },
            },
        ],
    };
}

/** The bucket name in an S3 bucket ARN (`arn:aws:s3:::<name>`). */
export function bucketNameOfArn(arn: string): string {
    return arn.slice(arn.lastIndexOf(":") + 1);
}

/**
 * The claim check's bucket: `undefined` when `largePayloads` is off and no `payloadBucketArn` is given; the given
 * bucket; or a created one with its public access block, TLS-only policy, encryption and lifecycle rule.
 *
 * @param o - The component and its settings.
 * @param args - The component's args (`largePayloads`, `payloadBucketArn`, `payloadExpirationDays`).
 */
export function declarePayloadBucket(o: OutboxParent, args: OutboxArgs): PayloadBucket | undefined {
    const { parent, s } = o;
    if (args.payloadBucketArn !== undefined) {
        const bucketArn = pulumi.output(args.payloadBucketArn);
        return { bucketArn, bucketName: bucketArn.apply(bucketNameOfArn) };
    }
    if (args.largePayloads !== true) return undefined;
    const opts = { parent };
    const bucket = new aws.s3.Bucket(...transformed(o, "payloadBucket", { tags: withTags(s.tags) }, opts));
    new aws.s3.BucketPublicAccessBlock(
        ...transformed(
            o,
            "payloadBucketPublicAccess",
            {
                bucket: bucket.bucket,
                blockPublicAcls: true,
                blockPublicPolicy: true,
                ignorePublicAcls: true,
                restrictPublicBuckets: true,
            },
            opts,
        ),
    );
    new aws.s3.BucketPolicy(
        ...transformed(
            o,
            "payloadBucketPolicy",
            { bucket: bucket.bucket, policy: bucket.arn.apply((arn) => JSON.stringify(tlsOnlyPolicy(arn))) },
            opts,
        ),
    );
    new aws.s3.BucketServerSideEncryptionConfiguration(
        ...transformed(
            o,
            "payloadBucketEncryption",
            {
                bucket: bucket.bucket,
                rules: [
                    s.kmsKeyArn !== undefined
                        ? {
                              applyServerSideEncryptionByDefault: {
                                  sseAlgorithm: "aws:kms",
                                  kmsMasterKeyId: s.kmsKeyArn,
                              },
                              bucketKeyEnabled: true,
                          }
                        : { applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } },
                ],
            },
            opts,
        ),
    );
    new aws.s3.BucketLifecycleConfiguration(
        ...transformed(
            o,
            "payloadBucketLifecycle",
            {
                bucket: bucket.bucket,
                rules: [
                    {
                        id: PAYLOAD_EXPIRY_RULE_ID,
                        status: "Enabled",
                        filter: { prefix: PAYLOAD_EXPIRY_PREFIX },
                        expiration: { days: args.payloadExpirationDays ?? DEFAULT_PAYLOAD_EXPIRATION_DAYS },
                        abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
                    },
                ],
            },
            opts,
        ),
    );
    return { bucketName: bucket.bucket, bucketArn: bucket.arn, bucket };
}

/** The ARN of the objects under the payloads' prefix: what the grants name. */
export function payloadObjectsArn(bucketArn: string): string {
    return `${bucketArn}/${PAYLOAD_EXPIRY_PREFIX}*`;
}

/** The writer's grant on the bucket: `s3:PutObject` under the payloads' prefix, nothing else. */
export function payloadWriteStatement(bucketArn: string): PolicyStatement {
    return {
        Sid: "PutOutboxPayloads",
        Effect: "Allow",
        Action: ["s3:PutObject"],
        Resource: [payloadObjectsArn(bucketArn)],
    };
}

/**
 * The policy a consumer's role needs to resolve claim checks: `s3:GetObject` under the payloads' prefix, and
 * `kms:Decrypt` on the key when the outbox has one (the created bucket is encrypted with it).
 *
 * @param bucketArn - The payload bucket's ARN.
 * @param kmsKeyArn - The outbox's key, when one is given.
 */
export function readerPolicyDocument(bucketArn: string, kmsKeyArn?: string): PolicyDocument {
    const statements: PolicyStatement[] = [
        {
            Sid: "GetOutboxPayloads",
            Effect: "Allow",
            Action: ["s3:GetObject"],
            Resource: [payloadObjectsArn(bucketArn)],
        },
    ];
    if (kmsKeyArn !== undefined)
        statements.push({
            Sid: "DecryptOutboxPayloads",
            Effect: "Allow",
            Action: ["kms:Decrypt"],
            Resource: [kmsKeyArn],
        });
    return { Version: "2012-10-17", Statement: statements };
}

/** The component's claim check outputs: the bucket's name and the consumers' policy, `undefined` without a bucket. */
export function payloadOutputs(
    payloads: PayloadBucket | undefined,
    kmsKeyArn: pulumi.Input<string> | undefined,
): {
    readonly payloadBucketName: pulumi.Output<string | undefined>;
    readonly readerPolicy: pulumi.Output<string | undefined>;
} {
    if (payloads === undefined)
        return { payloadBucketName: pulumi.output(undefined), readerPolicy: pulumi.output(undefined) };
    return {
        payloadBucketName: payloads.bucketName,
        readerPolicy: pulumi
            .all([payloads.bucketArn, kmsKeyArn])
            .apply(([bucketArn, key]) => JSON.stringify(readerPolicyDocument(bucketArn, key))),
    };
}
