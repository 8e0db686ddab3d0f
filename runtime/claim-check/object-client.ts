/**
 * The S3 calls the claim check makes, as a port: the writer puts a payload, the resolver gets it. The aggregated
 * client of `@aws-sdk/client-s3` (`new S3({})`, whose `putObject` and `getObject` methods send the commands) fits
 * it as it is. The runtime never imports `@aws-sdk/client-s3`: an application that never offloads does not need
 * it, and one that does installs it and passes the client.
 *
 * @packageDocumentation
 */

/** What the writer sends to store a payload (a subset of `PutObjectCommandInput`). */
export interface PayloadPutInput {
    /** The bucket. */
    readonly Bucket: string;
    /** The object key. */
    readonly Key: string;
    /** The payload's bytes: its JSON text, UTF-8. */
    readonly Body: Uint8Array;
    /** Its length, so S3 refuses a truncated upload. */
    readonly ContentLength: number;
    /** `application/json`. */
    readonly ContentType: string;
    /** The SHA-256, base64: S3 recomputes it and refuses the put on a mismatch (`BadDigest`). */
    readonly ChecksumSHA256: string;
    /** `*`: create only. A retry finds its own object there (the key holds the SHA-256) and takes the 412 as done. */
    readonly IfNoneMatch: string;
}

/** What the resolver sends to fetch a payload (a subset of `GetObjectCommandInput`). */
export interface PayloadGetInput {
    /** The bucket. */
    readonly Bucket: string;
    /** The object key. */
    readonly Key: string;
}

/** The body of a GetObject answer: the SDK's stream mixin. */
export interface PayloadObjectBody {
    /** The whole object. */
    transformToByteArray(): Promise<Uint8Array>;
}

/**
 * Anything with the aggregated S3 client's `putObject` and `getObject`: `new S3({})` from `@aws-sdk/client-s3`, or
 * a stand-in in tests.
 */
export interface PayloadObjectClient {
    /** Store an object (S3 `PutObject`). */
    putObject(input: PayloadPutInput): Promise<unknown>;
    /** Fetch an object (S3 `GetObject`). */
    getObject(input: PayloadGetInput): Promise<{ readonly Body?: PayloadObjectBody | undefined }>;
}
