/**
 * The claim check's bucket in the policy pack: a bucket an Outbox declares for `largePayloads` holds whole
 * payloads, so it must not be public, must be encrypted at rest and must expire what it holds (a failed
 * transaction leaves an object behind, and nothing else deletes the payloads of delivered records). The checks
 * find the bucket's public access block, encryption and lifecycle configurations through their `bucket`.
 *
 * A bucket given by `payloadBucketArn` is the user's: the component declares nothing that ties it to the outbox,
 * so it is not judged here.
 *
 * @packageDocumentation
 */
import type { StackValidationPolicy, EnforcementLevel } from "@pulumi/policy";
import { insideOutbox, known, stackPolicy, type StackResourceView } from "./scope";

/** The S3 type tokens the check reads. */
export const PAYLOAD_BUCKET_TYPES = {
    bucket: "aws:s3/bucket:Bucket",
    publicAccessBlock: "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    encryption: "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    lifecycle: "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
} as const;

const PUBLIC_ACCESS_SETTINGS = [
    "blockPublicAcls",
    "blockPublicPolicy",
    "ignorePublicAcls",
    "restrictPublicBuckets",
] as const;

function list(value: unknown): Record<string, any>[] {
    return Array.isArray(value)
        ? (value as Record<string, any>[])
        : value === undefined || value === null
          ? []
          : [value as Record<string, any>];
}

/**
 * The violations of the payload buckets an Outbox declares: public access not blocked (each of the four settings
 * true in every public access block declared on the bucket, and at least one declared), no
 * server-side encryption configuration, no enabled lifecycle rule that expires objects.
 *
 * @param resources - The stack's resources.
 */
export function payloadBucketViolations(resources: readonly StackResourceView[]): { urn: string; message: string }[] {
    const out: { urn: string; message: string }[] = [];
    for (const bucket of resources.filter((r) => r.type === PAYLOAD_BUCKET_TYPES.bucket && insideOutbox(r))) {
        const name: unknown = known(() => bucket.props.bucket);
        const on = (type: string) =>
            resources.filter(
                (r) =>
                    r.type === type &&
                    ((r.propertyDependencies?.bucket ?? []).some((d) => d.urn === bucket.urn) ||
                        (name !== undefined && known(() => r.props.bucket) === name)),
            );
        const what = `outbox payload bucket "${bucket.name}"`;
        // A bucket holds one public access block: of two declared, whichever is applied last wins, so each must
        // block all four, not merely one of them each setting.
        const blocks = on(PAYLOAD_BUCKET_TYPES.publicAccessBlock);
        const open = PUBLIC_ACCESS_SETTINGS.filter(
            (s) => blocks.length === 0 || blocks.some((b) => known(() => b.props[s]) !== true),
        );
        if (open.length > 0)
            out.push({
                urn: bucket.urn,
                message: `${what} may be public: ${open.join(", ")} not true in a public access block; it holds whole payloads: block all four (the Outbox component does)`,
            });
        const encrypted = on(PAYLOAD_BUCKET_TYPES.encryption).some((e) =>
            list(known(() => e.props.rules)).some(
                (rule) => typeof rule?.applyServerSideEncryptionByDefault?.sseAlgorithm === "string",
            ),
        );
        if (!encrypted)
            out.push({
                urn: bucket.urn,
                message: `${what} has no server-side encryption configuration; set SSE-KMS with the outbox's key, or SSE-S3 (the Outbox component does)`,
            });
        const expires = on(PAYLOAD_BUCKET_TYPES.lifecycle).some((l) =>
            list(known(() => l.props.rules)).some(
                (rule) =>
                    rule?.status === "Enabled" &&
                    list(rule.expiration).some((e) => typeof e?.days === "number" && e.days > 0),
            ),
        );
        if (!expires)
            out.push({
                urn: bucket.urn,
                message: `${what} has no enabled lifecycle rule that expires its objects; the object of a failed write and the payloads of delivered records would stay forever: add one (the Outbox component's expires them after payloadExpirationDays)`,
            });
    }
    return out;
}

/**
 * The stack policy `outbox-payload-bucket`.
 *
 * @param enforcementLevel - Its level when the pack's config sets none.
 */
export function outboxPayloadBucketPolicy(enforcementLevel: EnforcementLevel): StackValidationPolicy {
    return stackPolicy(
        "outbox-payload-bucket",
        "An Outbox's payload bucket (largePayloads) blocks public access, is encrypted at rest and has an enabled lifecycle rule that expires its objects.",
        enforcementLevel,
        payloadBucketViolations,
    );
}
