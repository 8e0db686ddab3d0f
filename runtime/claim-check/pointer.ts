/**
 * The claim check's pointer: what an outbox record holds, and what its message carries, instead of a payload too
 * large to travel inline. It is the AWS payload offloading library's shape (the SQS and SNS Extended Clients for
 * Java, and the Python SQS Extended Client, read it), with three fields of this package's own that those readers
 * ignore (Jackson is configured with `FAIL_ON_UNKNOWN_PROPERTIES` off; Python reads the two keys it needs):
 *
 * ```json
 * ["software.amazon.payloadoffloading.PayloadS3Pointer",
 *  {"s3BucketName":"orders-payloads","s3Key":"outbox-payloads/01J…/3f…","byteLength":1048576,"sha256":"…base64…","outboxId":"01J…"}]
 * ```
 *
 * The message also carries the String attributes `ExtendedPayloadSize` and `SQSLargePayloadSize` (both the payload's
 * byte length): the Extended Clients take either as the mark of an offloaded message, and `sns-sqs-big-payload`
 * (npm, with `extendedLibraryCompatibility`) only the older `SQSLargePayloadSize`. A user header may not use
 * either name unless the payload is a pointer that agrees with it (a redriven claim check keeps them).
 *
 * Plain data and pure functions only: the publisher's code reaches this module (through the header check), and
 * Pulumi serializes what it reaches by value.
 *
 * @packageDocumentation
 */
import { createHash } from "node:crypto";

/** The message attribute that marks a claim check: the payload's size in bytes (the Extended Clients' reserved name). */
export const CLAIM_CHECK_ATTRIBUTE = "ExtendedPayloadSize";

/**
 * The Extended Clients' older name for {@link CLAIM_CHECK_ATTRIBUTE}, carried beside it: the only one
 * `sns-sqs-big-payload` (npm) recognizes an offloaded message by.
 */
export const LEGACY_CLAIM_CHECK_ATTRIBUTE = "SQSLargePayloadSize";

/**
 * The attributes every claim check carries, each the payload's byte length: two of the 10 message attributes. A
 * claim check written before the legacy name was added carries {@link CLAIM_CHECK_ATTRIBUTE} alone.
 */
export const CLAIM_CHECK_ATTRIBUTES = [CLAIM_CHECK_ATTRIBUTE, LEGACY_CLAIM_CHECK_ATTRIBUTE] as const;

/** The first element of the pointer array: the Java class the payload offloading library deserializes it to. */
export const POINTER_CLASS = "software.amazon.payloadoffloading.PayloadS3Pointer";

/** Where offloaded payloads go in the bucket, unless the writer is told otherwise. */
export const DEFAULT_PAYLOAD_KEY_PREFIX = "outbox-payloads/";

/** An S3 bucket name: 3 to 63 lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit. */
export const S3_BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Where an offloaded payload is, and how to tell it is the one the writer stored. */
export interface ClaimCheckPointer {
    /** The bucket (`s3BucketName`). */
    readonly bucket: string;
    /** The object key (`s3Key`). */
    readonly key: string;
    /** The payload's length in bytes (its UTF-8 JSON text). */
    readonly byteLength: number;
    /** The payload's SHA-256, base64 (as S3's `x-amz-checksum-sha256`). */
    readonly sha256: string;
    /** The id of the record the payload was written with (a redriven record keeps the original's). */
    readonly outboxId: string;
}

/**
 * The SHA-256 of some bytes, base64 and hex.
 *
 * @param bytes - The payload's bytes.
 */
export function sha256Of(bytes: Uint8Array): { readonly base64: string; readonly hex: string } {
    const digest = createHash("sha256").update(bytes).digest();
    return { base64: digest.toString("base64"), hex: digest.toString("hex") };
}

/**
 * The object key of a payload: `<prefix><record id, URI-encoded>/<SHA-256, hex>`. It comes from the record id, so a
 * retried write (the same id, the same payload) puts to the same key; and from the content, so a write that reuses
 * an id with other bytes can never overwrite the object a committed record points to.
 *
 * @param prefix - The key prefix, e.g. {@link DEFAULT_PAYLOAD_KEY_PREFIX}.
 * @param recordId - The record id.
 * @param sha256Hex - The payload's SHA-256, hex.
 */
export function claimCheckKey(prefix: string, recordId: string, sha256Hex: string): string {
    return `${prefix}${encodeURIComponent(recordId)}/${sha256Hex}`;
}

/**
 * The pointer's JSON text: the record's payload, and the message body.
 *
 * @param pointer - Where the payload is.
 */
export function pointerText(pointer: ClaimCheckPointer): string {
    return JSON.stringify([
        POINTER_CLASS,
        {
            s3BucketName: pointer.bucket,
            s3Key: pointer.key,
            byteLength: pointer.byteLength,
            sha256: pointer.sha256,
            outboxId: pointer.outboxId,
        },
    ]);
}

const SHA256_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

/**
 * Read a message body as a pointer.
 *
 * @param body - The body (or a record's payload text).
 * @returns the pointer, or `{ problem }` saying what is wrong with it.
 */
export function parsePointer(body: string): ClaimCheckPointer | { readonly problem: string } {
    let parsed: unknown;
    try {
        parsed = JSON.parse(body);
    } catch {
        return { problem: "it is not JSON" };
    }
    if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== POINTER_CLASS)
        return { problem: `it is not a ["${POINTER_CLASS}", {…}] array` };
    const p = parsed[1] as Record<string, unknown> | null;
    if (p === null || typeof p !== "object" || Array.isArray(p))
        return { problem: "its second element is not an object" };
    const { s3BucketName: bucket, s3Key: key, byteLength, sha256, outboxId } = p;
    if (typeof bucket !== "string" || !S3_BUCKET_NAME.test(bucket))
        return { problem: `its s3BucketName ${JSON.stringify(bucket)} is not a bucket name` };
    if (typeof key !== "string" || key === "") return { problem: `its s3Key ${JSON.stringify(key)} is not a key` };
    if (typeof byteLength !== "number" || !Number.isSafeInteger(byteLength) || byteLength < 0)
        return { problem: `its byteLength ${JSON.stringify(byteLength)} is not a byte count` };
    if (typeof sha256 !== "string" || !SHA256_BASE64.test(sha256))
        return { problem: `its sha256 ${JSON.stringify(sha256)} is not a base64 SHA-256` };
    if (typeof outboxId !== "string" || outboxId === "")
        return { problem: `its outboxId ${JSON.stringify(outboxId)} is not a record id` };
    return { bucket, key, byteLength, sha256, outboxId };
}

/**
 * Whether a header name is one of the claim check's attributes, in any case (SNS attribute names are
 * case-sensitive, but a reader may not be).
 *
 * @param name - A header or attribute name.
 */
export function isClaimCheckAttribute(name: string): boolean {
    const lower = name.toLowerCase();
    return lower === CLAIM_CHECK_ATTRIBUTE.toLowerCase() || lower === LEGACY_CLAIM_CHECK_ATTRIBUTE.toLowerCase();
}
