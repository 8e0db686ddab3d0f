/**
 * The claim check's S3 on a local endpoint (fauxqs serves S3 next to SNS and SQS): the aggregated `S3` client the
 * writer and the resolver take (`largePayloads.objects`, `createPayloadResolver({ objects })`), path-style, with the
 * local credentials; a bucket; and its keys, for the checks of what a write left behind.
 *
 * @packageDocumentation
 */
import { CreateBucketCommand, ListObjectsV2Command, S3 } from "@aws-sdk/client-s3";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "./dynamodb-local";

/**
 * An `S3` client on a local endpoint.
 *
 * @param endpoint - e.g. fauxqs's `http://127.0.0.1:<port>`.
 */
export function localPayloadObjects(endpoint: string): S3 {
    return new S3({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, forcePathStyle: true });
}

/**
 * Create a bucket (an existing one is fine).
 *
 * @param s3 - The client.
 * @param bucket - Its name.
 */
export async function createPayloadBucket(s3: S3, bucket: string): Promise<void> {
    try {
        await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    } catch (err) {
        if ((err as Error).name !== "BucketAlreadyOwnedByYou") throw err;
    }
}

/**
 * Every key in a bucket, sorted.
 *
 * @param s3 - The client.
 * @param bucket - The bucket.
 */
export async function payloadKeys(s3: S3, bucket: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
        const page = await s3.send(
            new ListObjectsV2Command({ Bucket: bucket, ...(token !== undefined ? { ContinuationToken: token } : {}) }),
        );
        keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ""));
        token = page.NextContinuationToken;
    } while (token !== undefined);
    return keys.sort();
}
