/**
 * The writer's side of the claim check: which messages go to S3, what their records hold instead, and the puts.
 *
 * A message is offloaded when it would not fit inline: its SNS message (body and attributes) is past the
 * threshold (by default SNS's 256 KiB, the destination's limit), or its DLQ message would be past the DLQ's.
 * The item limit follows from those: a message within 256 KiB makes a record well under DynamoDB's 400 KB (the
 * payload is stored base64, 4/3 its size, ~342 KiB at most). The record then holds the pointer
 * (`./pointer.ts`) as its payload and the `ExtendedPayloadSize` and `SQSLargePayloadSize` headers; everything else (id, partition, type,
 * headers, ordering key, expiry) is as it would be inline, so the publisher, the sweeper, the DLQ and the redrive
 * carry it unchanged and never touch S3.
 *
 * @packageDocumentation
 */
import { mapBounded } from "../slots";
import { OutboxError } from "../errors";
import {
    attributeBudgetOverrun,
    DLQ_MAX_MESSAGE_BYTES,
    eventIdOf,
    SNS_MAX_ATTRIBUTES,
    SNS_MAX_MESSAGE_BYTES,
    snsMessageSize,
    worstCaseDeadLetterSize,
    type OutboundMessage,
} from "../record/message";
import type { TraceContext } from "../observability/trace-context";
import { integerIn } from "../integer-setting";
import type { IntegerLimit } from "../limits";
import { invalidPayload as invalid } from "../record/payload-error";
import { awsErrorName, wrapAwsError } from "../store/aws-errors";
import { describeValue } from "../record/transact-items";
import type { PayloadObjectClient, PayloadPutInput } from "./object-client";
import {
    CLAIM_CHECK_ATTRIBUTE,
    CLAIM_CHECK_ATTRIBUTES,
    DEFAULT_PAYLOAD_KEY_PREFIX,
    S3_BUCKET_NAME,
    claimCheckKey,
    isClaimCheckAttribute,
    parsePointer,
    pointerText,
    sha256Of,
} from "./pointer";

/**
 * The offload threshold's range, per destination: a message is at most the destination's limit inline. SNS takes
 * 256 KiB unless the topic's `MaximumMessageSize` is raised, and the publisher batches to that figure, so it is
 * both the ceiling and the default. 1 KiB is SNS's smallest `MaximumMessageSize`.
 */
export const LARGE_PAYLOAD_LIMITS = {
    /** The SNS message size (body and attributes) past which a payload is offloaded, in bytes. */
    thresholdBytes: { min: 1024, max: SNS_MAX_MESSAGE_BYTES, fallback: SNS_MAX_MESSAGE_BYTES, unit: "bytes" },
} as const satisfies Record<string, IntegerLimit>;

/** The longest key prefix: with a 128-character id (URI-encoded, up to 384) and the hash, a key stays under S3's 1024 bytes. */
export const MAX_PAYLOAD_KEY_PREFIX_LENGTH = 512;

/** `OutboxWriterOptions.largePayloads`: where payloads too large to travel inline are stored. */
export interface LargePayloadOptions {
    /** The S3 client: `new S3({})` from `@aws-sdk/client-s3` (the aggregated client), or anything with its `putObject`. */
    readonly objects: PayloadObjectClient;
    /** The bucket (the Outbox component's `payloadBucketName` output). */
    readonly bucket: string;
    /**
     * Where in the bucket the payloads go; the component's `writerPolicy` grants `s3:PutObject` under the default
     * only. At most 512 characters.
     * @default "outbox-payloads/"
     */
    readonly keyPrefix?: string;
    /**
     * Offload a message whose SNS message (body plus attributes) would be larger than this many bytes. From 1024
     * to 262144 (SNS's limit: a larger message could not be published at all).
     * @default 262144
     */
    readonly thresholdBytes?: number;
}

/** {@link LargePayloadOptions} checked, defaults applied. */
export interface ClaimCheckPlan {
    readonly objects: PayloadObjectClient;
    readonly bucket: string;
    readonly keyPrefix: string;
    readonly thresholdBytes: number;
}

/** A payload to store before the transaction. */
export interface PendingPut {
    /** The message's index in the write. */
    readonly index: number;
    /** The record id. */
    readonly id: string;
    /** The PutObject input. */
    readonly input: PayloadPutInput;
}

/**
 * Check the writer's `largePayloads` option.
 *
 * @param options - The option, or `undefined` (no offload).
 * @param who - The constructor, for the message.
 * @throws OutboxError `INVALID_CONFIG` naming the field, the bad value, what is allowed and the fix.
 */
export function claimCheckPlan(options: LargePayloadOptions | undefined, who: string): ClaimCheckPlan | undefined {
    if (options === undefined) return undefined;
    if (options === null || typeof options !== "object")
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: largePayloads must be { objects, bucket }, got ${describeValue(options)}; omit it to keep every payload inline`,
        );
    if (typeof options.objects?.putObject !== "function") {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: largePayloads.objects must be an S3 client with putObject: new S3({}) from @aws-sdk/client-s3 (the aggregated client, not S3Client)`,
        );
    }
    if (typeof options.bucket !== "string" || !S3_BUCKET_NAME.test(options.bucket)) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: largePayloads.bucket is ${describeValue(options.bucket)}; it must be an S3 bucket name (3-63 lowercase letters, digits, "." and "-"), e.g. the Outbox component's payloadBucketName output, not an ARN`,
            {
                context: { bucket: String(options.bucket) },
            },
        );
    }
    const keyPrefix = options.keyPrefix ?? DEFAULT_PAYLOAD_KEY_PREFIX;
    if (
        typeof keyPrefix !== "string" ||
        keyPrefix.length > MAX_PAYLOAD_KEY_PREFIX_LENGTH ||
        !/^[\x21-\x7e]*$/.test(keyPrefix)
    ) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${who}: largePayloads.keyPrefix is ${describeValue(keyPrefix)}; it must be at most ${MAX_PAYLOAD_KEY_PREFIX_LENGTH} printable ASCII characters without spaces; omit it for "${DEFAULT_PAYLOAD_KEY_PREFIX}"`,
        );
    }
    const thresholdBytes = integerIn(
        `${who}: largePayloads`,
        "thresholdBytes",
        options.thresholdBytes,
        LARGE_PAYLOAD_LIMITS.thresholdBytes,
    );
    return { objects: options.objects, bucket: options.bucket, keyPrefix, thresholdBytes };
}

/**
 * A message that already is a claim check (a redriven one) keeps its pointer: its `ExtendedPayloadSize` header,
 * and its `SQSLargePayloadSize` header when it has one (a claim check written before that name was added has not),
 * must state the pointer's byte length. Any other use of the claim check's attribute names is refused, so no
 * header can make a consumer fetch from S3.
 *
 * @returns whether the message carries a claim check.
 * @throws OutboxError `INVALID_PAYLOAD` naming the header and the fix.
 */
function carriesClaimCheck(outbound: OutboundMessage, where: string, index: number): boolean {
    const names = Object.keys(outbound.headers).filter(isClaimCheckAttribute);
    if (names.length === 0) return false;
    const context = { messageId: outbound.id, messageIndex: index };
    const foreign = names.find((n) => !(CLAIM_CHECK_ATTRIBUTES as readonly string[]).includes(n));
    if (foreign !== undefined || !names.includes(CLAIM_CHECK_ATTRIBUTE)) {
        throw invalid(
            `${where}.headers name ${describeValue(foreign ?? names[0])} is reserved: it marks an offloaded payload for the AWS Extended Clients; use another name`,
            context,
        );
    }
    const pointer = parsePointer(outbound.body);
    if ("problem" in pointer) {
        throw invalid(
            `${where}.headers["${CLAIM_CHECK_ATTRIBUTE}"] marks a claim check, but the payload is no claim check pointer (${pointer.problem}); the header is reserved: use another name`,
            context,
        );
    }
    for (const name of names) {
        if (outbound.headers[name] !== String(pointer.byteLength)) {
            throw invalid(
                `${where}.headers["${name}"] is ${describeValue(outbound.headers[name])}, but the pointer says the payload is ${pointer.byteLength} bytes; a claim check is redriven as the DLQ kept it`,
                context,
            );
        }
    }
    return true;
}

/**
 * The claim check of one message, when it would not fit inline: the message as its record holds it (the pointer as
 * its body, the `ExtendedPayloadSize` and `SQSLargePayloadSize` headers added) and the put to make first. `undefined` when it travels inline,
 * or already is a claim check.
 *
 * @param plan - The writer's plan, or `undefined` when it does not offload.
 * @param outbound - The message as it would travel inline.
 * @param where - `messages[i]`, for errors.
 * @param index - The message's index.
 * @throws OutboxError `INVALID_PAYLOAD` for a reserved header.
 */
export function claimCheckOf(
    plan: ClaimCheckPlan | undefined,
    outbound: OutboundMessage,
    where: string,
    index: number,
): { readonly outbound: OutboundMessage; readonly put: PendingPut } | undefined {
    if (carriesClaimCheck(outbound, where, index) || plan === undefined) return undefined;
    const fits =
        snsMessageSize(outbound) <= plan.thresholdBytes && worstCaseDeadLetterSize(outbound) <= DLQ_MAX_MESSAGE_BYTES;
    if (fits) return undefined;
    const bytes = Buffer.from(outbound.body, "utf8");
    const sha = sha256Of(bytes);
    const key = claimCheckKey(plan.keyPrefix, outbound.id, sha.hex);
    const body = pointerText({
        bucket: plan.bucket,
        key,
        byteLength: bytes.byteLength,
        sha256: sha.base64,
        // The identity the message is published under, which a consumer checks the pointer against.
        outboxId: eventIdOf(outbound),
    });
    return {
        outbound: {
            ...outbound,
            body,
            headers: {
                ...outbound.headers,
                ...Object.fromEntries(CLAIM_CHECK_ATTRIBUTES.map((name) => [name, String(bytes.byteLength)])),
            },
        },
        put: {
            index,
            id: outbound.id,
            input: {
                Bucket: plan.bucket,
                Key: key,
                Body: bytes,
                ContentLength: bytes.byteLength,
                ContentType: "application/json",
                ChecksumSHA256: sha.base64,
                IfNoneMatch: "*",
            },
        },
    };
}

/**
 * A message with its trace context replaced: an offloaded message's is chosen again, once the claim check's
 * attribute has taken its slot.
 *
 * @param outbound - The message.
 * @param trace - The trace context it carries, or none.
 */
export function withTrace(outbound: OutboundMessage, trace: TraceContext | undefined): OutboundMessage {
    const { traceparent: _traceparent, tracestate: _tracestate, ...rest } = outbound;
    return { ...rest, ...trace };
}

/**
 * Refuse an offloaded message whose attributes, the claim check's among them, exceed what SNS carries.
 *
 * @param where - `messages[i]`, for errors.
 * @param index - The message's index.
 * @param sent - The message as its record holds it (the claim check's attributes among its headers).
 * @throws OutboxError `INVALID_PAYLOAD` naming the count, how many headers fit and the fix.
 */
export function checkClaimCheckBudget(where: string, index: number, sent: OutboundMessage): void {
    const overrun = attributeBudgetOverrun(sent);
    if (overrun === undefined) return;
    const own = Object.keys(sent.headers).filter(isClaimCheckAttribute);
    const headers = overrun.headers - own.length;
    const fit = overrun.headersThatFit - own.length;
    throw invalid(
        `${where} (id "${sent.id}") is offloaded to S3, and its message carries the ${own.join(" and ")} attributes besides the outbox's (${overrun.outbox.join(", ")}), so at most ${fit} headers fit (SNS carries ${SNS_MAX_ATTRIBUTES} message attributes); it has ${headers}: move ${headers - fit} into the payload`,
        { messageId: sent.id, messageIndex: index, attributes: overrun.count, headers },
    );
}

/** How many puts one write has in flight at most. */
const PUT_CONCURRENCY = 8;

/** Whether a put was refused because the key exists: with a content-addressed key, the object is already the same bytes. */
function isAlreadyStored(err: unknown): boolean {
    const status = (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
    return awsErrorName(err) === "PreconditionFailed" || status === 412;
}

/**
 * Store the payloads of a write, before its transaction. A retry finds its objects there and takes S3's 412 as
 * done. When a put fails, nothing of the write is written to DynamoDB; the payloads already put stay until the
 * bucket's lifecycle rule expires them.
 *
 * @param plan - The writer's plan.
 * @param puts - The write's pending puts.
 * @throws OutboxError classified from the S3 error (e.g. `NOT_AUTHORIZED`, `UNAVAILABLE`), naming the message, the
 *   bucket and the key.
 */
export async function putPayloads(plan: ClaimCheckPlan | undefined, puts: readonly PendingPut[]): Promise<void> {
    if (plan === undefined || puts.length === 0) return;
    await mapBounded(puts, PUT_CONCURRENCY, async (put) => {
        try {
            await plan.objects.putObject(put.input);
        } catch (err) {
            if (isAlreadyStored(err)) return;
            throw wrapAwsError(
                err,
                `write: storing the payload of messages[${put.index}] (id "${put.id}", ${put.input.ContentLength} bytes) at s3://${put.input.Bucket}/${put.input.Key} failed (${awsErrorName(err) || "error"}); nothing was written to the table`,
                {
                    messageId: put.id,
                    messageIndex: put.index,
                    bucket: put.input.Bucket,
                    key: put.input.Key,
                },
            );
        }
    });
}
