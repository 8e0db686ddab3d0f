/**
 * SQS's wire format, JSON 1.0 (`x-amz-target: AmazonSQS.<Action>`): the entries and message attributes of a
 * request, the attributes of a received message, and the error answer (SQS's shape name in `__type`, its
 * awsQuery code in the `x-amzn-query-error` header).
 *
 * @packageDocumentation
 */
import type { ApiError } from "./api-error";
import type { EntryInfo, RecordedAttribute } from "./types";

/** The `x-amz-target` prefix of an SQS call. */
export const SQS_TARGET_PREFIX = "AmazonSQS.";

/** The content type of every SQS answer. */
export const SQS_CONTENT_TYPE = "application/x-amz-json-1.0";

type JsonAttribute = { DataType?: string; StringValue?: string; BinaryValue?: string };

/** Read SQS JSON `MessageAttributes`. */
function jsonAttributes(raw: unknown): Record<string, RecordedAttribute> {
    const out: Record<string, RecordedAttribute> = {};
    if (typeof raw !== "object" || raw === null) return out;
    for (const [name, value] of Object.entries(raw as Record<string, JsonAttribute>)) {
        out[name] = {
            dataType: value.DataType ?? "String",
            ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
            ...(value.BinaryValue === undefined ? {} : { binaryValue: value.BinaryValue }),
        };
    }
    return out;
}

/** Recorded attributes in SQS JSON shape, as ReceiveMessage returns them. */
export function toJsonAttributes(
    attributes: Readonly<Record<string, RecordedAttribute>>,
): Record<string, JsonAttribute> {
    return Object.fromEntries(
        Object.entries(attributes).map(([name, a]) => [
            name,
            {
                DataType: a.dataType,
                ...(a.stringValue === undefined ? {} : { StringValue: a.stringValue }),
                ...(a.binaryValue === undefined ? {} : { BinaryValue: a.binaryValue }),
            },
        ]),
    );
}

function jsonEntry(raw: Record<string, unknown>, index: number): EntryInfo {
    return {
        ...(typeof raw.Id === "string" ? { id: raw.Id } : {}),
        index,
        body: typeof raw.MessageBody === "string" ? raw.MessageBody : "",
        attributes: jsonAttributes(raw.MessageAttributes),
        ...(typeof raw.MessageGroupId === "string" ? { messageGroupId: raw.MessageGroupId } : {}),
        ...(typeof raw.MessageDeduplicationId === "string"
            ? { messageDeduplicationId: raw.MessageDeduplicationId }
            : {}),
    };
}

/** The entries a SendMessage (one) or SendMessageBatch (`Entries`) carries; none otherwise. */
export function jsonEntries(action: string, json: Record<string, unknown>): EntryInfo[] {
    if (action === "SendMessage") return [jsonEntry(json, 0)];
    if (action === "SendMessageBatch" && Array.isArray(json.Entries)) {
        return (json.Entries as Record<string, unknown>[]).map((e, i) => jsonEntry(e, i));
    }
    return [];
}

/**
 * The SQS codes whose JSON shape has another name, from the SDK's model (`awsQueryError` traits of
 * `@aws-sdk/client-sqs`). Other `AWS.SimpleQueueService.X` codes are shape `X`; any other code is its own shape.
 */
const SHAPE_OF_QUERY_CODE: Readonly<Record<string, string>> = {
    "AWS.SimpleQueueService.NonExistentQueue": "QueueDoesNotExist",
    QueueAlreadyExists: "QueueNameExists",
    "KMS.AccessDeniedException": "KmsAccessDenied",
    "KMS.DisabledException": "KmsDisabled",
    "KMS.InvalidKeyUsageException": "KmsInvalidKeyUsage",
    "KMS.InvalidStateException": "KmsInvalidState",
    "KMS.NotFoundException": "KmsNotFound",
    "KMS.OptInRequired": "KmsOptInRequired",
    "KMS.ThrottlingException": "KmsThrottled",
};

/** The JSON shape name of an SQS error code, e.g. `QueueDoesNotExist` for `AWS.SimpleQueueService.NonExistentQueue`. */
export function sqsShapeOf(code: string): string {
    return SHAPE_OF_QUERY_CODE[code] ?? code.replace(/^AWS\.SimpleQueueService\./, "");
}

/**
 * The headers and body of an SQS error answer, as SQS documents it ("Interpreting Amazon SQS JSON API responses"):
 * `x-amzn-query-error: AWS.SimpleQueueService.NonExistentQueue;Sender` and
 * `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":…}`.
 */
export function jsonError(error: ApiError): { headers: Record<string, string>; body: string } {
    return {
        headers: {
            "content-type": SQS_CONTENT_TYPE,
            "x-amzn-query-error": `${error.code};${error.sender ? "Sender" : "Receiver"}`,
        },
        body: JSON.stringify({ __type: `com.amazonaws.sqs#${sqsShapeOf(error.code)}`, message: error.message }),
    };
}
