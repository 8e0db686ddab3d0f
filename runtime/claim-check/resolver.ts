/**
 * The consumer's side of the claim check: a received message back to its payload. A message that is not a claim
 * check is returned as it came; one that is (it carries `ExtendedPayloadSize` and its body is the pointer) is
 * fetched from S3 and checked against the pointer, byte length and SHA-256, before anyone reads it.
 *
 * It reads what each delivery path gives through the inbox's delivery formats (SNS → SQS with raw delivery, and
 * with SNS's envelope), or a message a path of your own already read ({@link PayloadResolver.resolveMessage}).
 * Importable without Pulumi, and without `@aws-sdk/client-s3`: the S3 client is passed in.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import {
    DELIVERY_FORMATS,
    parseDelivery,
    type DeliveredOutboxMessage,
    type DeliveryFormat,
} from "../inbox/delivery-formats";
import type { LambdaSqsRecord } from "../inbox/sqs-event";
import { redriveRecordId } from "../record/redrive-id";
import { awsErrorName, wrapAwsError } from "../store/aws-errors";
import { describeValue } from "../record/transact-items";
import type { PayloadObjectClient } from "./object-client";
import {
    CLAIM_CHECK_ATTRIBUTE,
    S3_BUCKET_NAME,
    isClaimCheckAttribute,
    parsePointer,
    sha256Of,
    type ClaimCheckPointer,
} from "./pointer";

/** Options of {@link createPayloadResolver}. */
export interface PayloadResolverOptions {
    /** The S3 client: `new S3({})` from `@aws-sdk/client-s3`, or anything with its `getObject`. */
    readonly objects: Pick<PayloadObjectClient, "getObject">;
    /**
     * The one bucket payloads may come from (the Outbox component's `payloadBucketName` output). A pointer to any
     * other bucket is refused: a message must not make its consumer read where the outbox never wrote.
     */
    readonly bucket: string;
    /** The delivery formats {@link PayloadResolver.resolve} reads a record with, in order. @default DELIVERY_FORMATS */
    readonly formats?: readonly DeliveryFormat[];
}

/** A message with its payload: the body as the writer was given it, whether it travelled inline or through S3. */
export interface ResolvedMessage extends DeliveredOutboxMessage {
    /** The pointer, when the payload came from S3. @default undefined (it travelled inline) */
    readonly claimCheck?: ClaimCheckPointer;
}

/** What {@link createPayloadResolver} returns. */
export interface PayloadResolver {
    /**
     * Read an SQS record (SNS raw delivery, or SNS's envelope) and resolve its payload.
     *
     * @throws OutboxError `INVALID_PAYLOAD` for a record no format reads, a broken pointer, a pointer to another
     *   bucket, or bytes that are not the ones written (length or SHA-256); `NOT_FOUND` when the object is gone;
     *   a classified S3 error otherwise (`NOT_AUTHORIZED`, `UNAVAILABLE`, …). Each names the outbox id.
     */
    resolve(record: LambdaSqsRecord): Promise<ResolvedMessage>;
    /**
     * Resolve a message a delivery format already read.
     *
     * @throws OutboxError as {@link PayloadResolver.resolve}.
     */
    resolveMessage(message: DeliveredOutboxMessage): Promise<ResolvedMessage>;
}

/**
 * Whether a delivered message is a claim check (it carries the `ExtendedPayloadSize` attribute, or the legacy
 * `SQSLargePayloadSize`).
 *
 * @param message - A delivered message.
 */
export function isClaimCheck(message: Pick<DeliveredOutboxMessage, "headers">): boolean {
    return Object.keys(message.headers).some(isClaimCheckAttribute);
}

/** The headers without the claim check's attributes: what the writer was given. */
function withoutClaimCheck(headers: Readonly<Record<string, string>>): Record<string, string> {
    return Object.fromEntries(Object.entries(headers).filter(([name]) => !isClaimCheckAttribute(name)));
}

/**
 * A resolver of received messages to their payloads.
 *
 * @param options - The S3 client and the bucket.
 * @throws OutboxError `INVALID_CONFIG` when the client has no `getObject` or the bucket is not a bucket name.
 * @example
 * const payloads = createPayloadResolver({ objects: new S3({}), bucket: process.env.OUTBOX_PAYLOAD_BUCKET! });
 * export const handler = async (event: SQSEvent) => {
 *     for (const record of event.Records) {
 *         const message = await payloads.resolve(record); // inline or from S3, checked
 *         await apply(JSON.parse(message.body));
 *     }
 * };
 */
export function createPayloadResolver(options: PayloadResolverOptions): PayloadResolver {
    if (typeof options?.objects?.getObject !== "function") {
        throw new OutboxError(
            "INVALID_CONFIG",
            "createPayloadResolver: objects must be an S3 client with getObject: new S3({}) from @aws-sdk/client-s3 (the aggregated client, not S3Client)",
        );
    }
    if (typeof options.bucket !== "string" || !S3_BUCKET_NAME.test(options.bucket)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `createPayloadResolver: bucket is ${describeValue(options.bucket)}; it must be the payload bucket's name (the Outbox component's payloadBucketName output), not an ARN`,
        );
    }
    const { objects, bucket } = options;
    const formats = options.formats ?? DELIVERY_FORMATS;
    const resolveMessage = async (message: DeliveredOutboxMessage): Promise<ResolvedMessage> => {
        if (!isClaimCheck(message)) return message;
        const pointer = checkedPointer(message, bucket);
        const body = await fetchPayload(objects, pointer, message.outboxId);
        return { ...message, headers: withoutClaimCheck(message.headers), body, claimCheck: pointer };
    };
    return {
        resolveMessage,
        resolve: async (record) => resolveMessage(parseDelivery(record, formats).message),
    };
}

/** A claim check's error: names the outbox id, the pointer's place, and keeps the context small. */
function claimCheckError(
    code: "INVALID_PAYLOAD" | "NOT_FOUND",
    outboxId: string,
    text: string,
    context: Record<string, string | number> = {},
    cause?: unknown,
): OutboxError {
    return new OutboxError(code, `claim check of outbox id "${outboxId}": ${text}`, {
        ...(cause !== undefined ? { cause } : {}),
        context: { outboxId, ...context },
    });
}

/** How many redrives deep a message's id may be from the pointer's: `redrive.` once per redrive of a redriven record. */
const MAX_REDRIVE_DEPTH = 8;

/**
 * Whether `messageId` is the pointer's record id, or the id a redrive gave that record (`redriveRecordId`, once per
 * redrive): a redriven claim check keeps the pointer, and the original's id in it.
 */
function isOwnRecordId(messageId: string, pointerId: string): boolean {
    let id = pointerId;
    for (let depth = 0; depth <= MAX_REDRIVE_DEPTH; depth += 1) {
        if (id === messageId) return true;
        id = redriveRecordId(id);
    }
    return false;
}

/**
 * The message's pointer, once it is one, is the message's own (its `outboxId`), agrees with the attributes, and
 * points into the configured bucket.
 */
function checkedPointer(message: DeliveredOutboxMessage, bucket: string): ClaimCheckPointer {
    const pointer = parsePointer(message.body);
    if ("problem" in pointer)
        throw claimCheckError(
            "INVALID_PAYLOAD",
            message.outboxId,
            `the message carries ${CLAIM_CHECK_ATTRIBUTE}, but its body is no pointer: ${pointer.problem}`,
        );
    const place = { bucket: pointer.bucket, key: pointer.key };
    if (!isOwnRecordId(message.outboxId, pointer.outboxId)) {
        throw claimCheckError(
            "INVALID_PAYLOAD",
            message.outboxId,
            `the pointer is the claim check of outbox id "${pointer.outboxId}", not of this message; refused: a message must not make its consumer read another record's payload (the writer puts each record's own pointer, and a redrive keeps it)`,
            { ...place, pointerOutboxId: pointer.outboxId },
        );
    }
    if (pointer.bucket !== bucket) {
        throw claimCheckError(
            "INVALID_PAYLOAD",
            message.outboxId,
            `the pointer names bucket "${pointer.bucket}", not the payload bucket "${bucket}" this consumer reads; refused: the outbox writes only there`,
            { ...place, expectedBucket: bucket },
        );
    }
    for (const [name, stated] of Object.entries(message.headers)) {
        if (isClaimCheckAttribute(name) && stated !== String(pointer.byteLength)) {
            throw claimCheckError(
                "INVALID_PAYLOAD",
                message.outboxId,
                `its ${name} attribute is ${describeValue(stated)}, but the pointer says ${pointer.byteLength} bytes`,
                place,
            );
        }
    }
    return pointer;
}

/**
 * Whether S3 refused a read for the deployment's sake, not the message's: access denied (the role lacks the
 * reader grant, a bucket policy denies it), credentials S3 does not take, or the payload's KMS key refused or
 * unusable (`KMS.*`, throttling aside). Every claim check fails the same way until the deployment is fixed.
 */
function isDeploymentRefusal(err: unknown): boolean {
    const name = awsErrorName(err);
    if (/^KMS\./i.test(name)) return !/throttl/i.test(name);
    if (["AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch"].includes(name))
        return true;
    return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode === 403;
}

/** The object's bytes, as the pointer describes them, as text. */
async function fetchPayload(
    objects: Pick<PayloadObjectClient, "getObject">,
    pointer: ClaimCheckPointer,
    outboxId: string,
): Promise<string> {
    const place = { bucket: pointer.bucket, key: pointer.key };
    const where = `s3://${pointer.bucket}/${pointer.key}`;
    let bytes: Uint8Array;
    try {
        const out = await objects.getObject({ Bucket: pointer.bucket, Key: pointer.key });
        if (out.Body === undefined)
            throw claimCheckError("NOT_FOUND", outboxId, `${where} answered with no body`, place);
        bytes = await out.Body.transformToByteArray();
    } catch (err) {
        const name = awsErrorName(err);
        if (name === "NoSuchKey" || name === "NotFound") {
            throw claimCheckError(
                "NOT_FOUND",
                outboxId,
                `the payload ${where} is gone (${name}): deleted, or expired by the bucket's lifecycle rule before this message was consumed; the record id is the pointer's "${pointer.outboxId}"`,
                place,
                err,
            );
        }
        if (isDeploymentRefusal(err)) {
            // The deployment's fault, like a publisher's missing grant: retried (SQS redelivers), never poison.
            throw new OutboxError(
                "NOT_AUTHORIZED",
                `claim check of outbox id "${outboxId}": S3 refused to read ${where} (${name || "403"}): a fault of the deployment, not of the message, and every claim check fails the same way until it is fixed; grant the consumer's role the Outbox component's readerPolicy (s3:GetObject on the payloads, and kms:Decrypt on the bucket's key with kmsKeyArn); the message is retried`,
                { transient: true, cause: err, context: { outboxId, ...place } },
            );
        }
        throw wrapAwsError(
            err,
            `claim check of outbox id "${outboxId}": fetching ${where} failed (${name || "error"})`,
            { outboxId, ...place },
        );
    }
    const sha = sha256Of(bytes).base64;
    if (bytes.byteLength !== pointer.byteLength || sha !== pointer.sha256) {
        throw claimCheckError(
            "INVALID_PAYLOAD",
            outboxId,
            `the payload ${where} is ${bytes.byteLength} bytes with SHA-256 ${sha}, but the pointer says ${pointer.byteLength} bytes with SHA-256 ${pointer.sha256}: the object is not the one written (changed or replaced); refused`,
            { ...place, byteLength: bytes.byteLength, expectedByteLength: pointer.byteLength },
        );
    }
    return Buffer.from(bytes).toString("utf8");
}
