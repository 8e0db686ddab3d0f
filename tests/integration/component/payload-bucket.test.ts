/**
 * The claim check's bucket and grants under Pulumi's mocks (issue 26): off by default; with `largePayloads` a
 * private bucket (public access blocked, TLS-only policy, SSE-S3 or SSE-KMS with `kmsKeyArn`, a lifecycle rule
 * expiring the payloads' prefix), children of the Outbox named from it; with `payloadBucketArn` no bucket. The
 * writer gains `s3:PutObject` on the prefix only, consumers get `readerPolicy` (`s3:GetObject`), and neither the
 * publisher's role nor the sweeper's holds any S3 action.
 */
import * as assert from "node:assert/strict";
import { writerPolicyDocument } from "../../../components/iam";
import { DEFAULT_PAYLOAD_KEY_PREFIX } from "../../../runtime/claim-check/pointer";
import { PAYLOAD_EXPIRY_PREFIX } from "../../../components/payload-bucket";
import { unwrap } from "../../support/pulumi-mocks";
import { TYPE, buildOutbox, type BuiltOutbox } from "../../support/component-harness";

const S3 = {
    bucket: "aws:s3/bucket:Bucket",
    publicAccess: "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    policy: "aws:s3/bucketPolicy:BucketPolicy",
    encryption: "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    lifecycle: "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
} as const;
const KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/** Every action of every inline policy of the outbox's roles. */
function roleActions(built: BuiltOutbox): string[] {
    return built.resources
        .filter((r) => r.type === TYPE.role)
        .flatMap((r) =>
            (r.inputs.inlinePolicies as { policy: string }[]).flatMap((p) =>
                (JSON.parse(p.policy) as { Statement: { Action: string[] }[] }).Statement.flatMap((s) => s.Action),
            ),
        );
}

describe("largePayloads: the claim check's bucket and grants", () => {
    it("is off by default: no S3 resource, no S3 grant, and the outputs are undefined", async function () {
        const built = await buildOutbox("lpoff");
        assert.deepEqual(
            built.resources.filter((r) => r.type.startsWith("aws:s3/")),
            [],
        );
        assert.deepEqual(
            JSON.parse(await unwrap(built.outbox.writerPolicy)),
            writerPolicyDocument({ tableArn: await unwrap(built.outbox.tableArn) }),
        );
        assert.equal(await unwrap(built.outbox.readerPolicy), undefined);
        assert.equal(await unwrap(built.outbox.payloadBucketName), undefined);
    });

    it("creates a private bucket: public access blocked, TLS only, SSE-S3, payloads expired after 14 days; children of the Outbox named from it", async function () {
        const built = await buildOutbox("lpon", { largePayloads: true });
        const bucket = built.one(S3.bucket, "lpon-payloads");
        const name = bucket.computed!.bucket as string;
        const arn = `arn:aws:s3:::${name}`;
        assert.equal(await unwrap(built.outbox.payloadBucketName), name);
        const outbox = built.one(TYPE.outbox);
        for (const [type, child] of [
            [S3.bucket, "lpon-payloads"],
            [S3.publicAccess, "lpon-payloads-public-access"],
            [S3.policy, "lpon-payloads-policy"],
            [S3.encryption, "lpon-payloads-encryption"],
            [S3.lifecycle, "lpon-payloads-lifecycle"],
        ] as const) {
            assert.equal(built.one(type, child).parent, outbox.urn, `${child} is a child of the Outbox`);
            if (type !== S3.bucket)
                assert.equal(built.one(type, child).inputs.bucket, name, `${child} is on the bucket`);
        }
        const block = built.one(S3.publicAccess).inputs;
        assert.deepEqual(
            [block.blockPublicAcls, block.blockPublicPolicy, block.ignorePublicAcls, block.restrictPublicBuckets],
            [true, true, true, true],
        );
        assert.deepEqual(JSON.parse(built.one(S3.policy).inputs.policy as string), {
            Version: "2012-10-17",
            Statement: [
                {
                    Sid: "DenyInsecureTransport",
                    Effect: "Deny",
                    Principal: "*",
                    Action: "s3:*",
                    Resource: [arn, `${arn}/*`],
                    Condition: { Bool: { "aws:SecureTransport": "false" } },
                },
            ],
        });
        assert.deepEqual(built.one(S3.encryption).inputs.rules, [
            { applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } },
        ]);
        assert.deepEqual(built.one(S3.lifecycle).inputs.rules, [
            {
                id: "expire-outbox-payloads",
                status: "Enabled",
                filter: { prefix: "outbox-payloads/" },
                expiration: { days: 14 },
                abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
            },
        ]);
        assert.equal(PAYLOAD_EXPIRY_PREFIX, DEFAULT_PAYLOAD_KEY_PREFIX, "the rule expires where the writer puts");

        const writer = JSON.parse(await unwrap(built.outbox.writerPolicy)) as {
            Statement: { Sid: string; Action: string[]; Resource: string[] }[];
        };
        assert.deepEqual(
            writer.Statement.map((s) => [s.Action, s.Resource]),
            [
                [["dynamodb:PutItem", "dynamodb:UpdateItem"], [await unwrap(built.outbox.tableArn)]],
                [["s3:PutObject"], [`${arn}/outbox-payloads/*`]],
            ],
        );
        assert.deepEqual(JSON.parse((await unwrap(built.outbox.readerPolicy))!), {
            Version: "2012-10-17",
            Statement: [
                {
                    Sid: "GetOutboxPayloads",
                    Effect: "Allow",
                    Action: ["s3:GetObject"],
                    Resource: [`${arn}/outbox-payloads/*`],
                },
            ],
        });
        assert.deepEqual(
            roleActions(built).filter((a) => a.startsWith("s3:")),
            [],
            "the publisher and the sweeper get no S3 action",
        );
        assert.equal(built.resources.filter((r) => r.type === TYPE.role).length, 2, "both roles were read");
    });

    it("encrypts with kmsKeyArn (an S3 Bucket Key on), expires after payloadExpirationDays, and lets consumers decrypt", async function () {
        const built = await buildOutbox("lpkms", { largePayloads: true, kmsKeyArn: KEY, payloadExpirationDays: 30 });
        assert.deepEqual(built.one(S3.encryption).inputs.rules, [
            {
                applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: KEY },
                bucketKeyEnabled: true,
            },
        ]);
        assert.equal(
            (built.one(S3.lifecycle).inputs.rules as { expiration: { days: number } }[])[0]!.expiration.days,
            30,
        );
        const reader = JSON.parse((await unwrap(built.outbox.readerPolicy))!) as {
            Statement: { Action: string[]; Resource: string[] }[];
        };
        assert.deepEqual(reader.Statement.map((s) => [s.Action, s.Resource]).slice(1), [[["kms:Decrypt"], [KEY]]]);
        assert.deepEqual(
            roleActions(built).filter((a) => a.startsWith("s3:")),
            [],
        );
    });

    it("takes payloadBucketArn instead: no bucket created, the grants on that bucket's prefix", async function () {
        const given = "arn:aws:s3:::shared-payloads";
        const built = await buildOutbox("lpgiven", { payloadBucketArn: given });
        assert.deepEqual(
            built.resources.filter((r) => r.type.startsWith("aws:s3/")),
            [],
        );
        assert.equal(await unwrap(built.outbox.payloadBucketName), "shared-payloads");
        const writer = JSON.parse(await unwrap(built.outbox.writerPolicy)) as {
            Statement: { Action: string[]; Resource: string[] }[];
        };
        assert.deepEqual(writer.Statement[1], {
            Sid: "PutOutboxPayloads",
            Effect: "Allow",
            Action: ["s3:PutObject"],
            Resource: [`${given}/outbox-payloads/*`],
        });
        assert.match(
            (await unwrap(built.outbox.readerPolicy))!,
            /"Resource":\["arn:aws:s3:::shared-payloads\/outbox-payloads\/\*"\]/,
        );
        assert.deepEqual(
            roleActions(built).filter((a) => a.startsWith("s3:")),
            [],
        );
    });
});
