/**
 * The DynamoDB stream event exactly as Lambda hands it to a function, and the conversion from what
 * `GetRecords` returns (through `@aws-sdk/client-dynamodb-streams`) to that shape.
 *
 * The SDK and Lambda disagree on three points, and a handler tested against the SDK shape would break in
 * Lambda:
 * - the SDK turns `ApproximateCreationDateTime` into a `Date`; Lambda sends epoch seconds (a number);
 * - the SDK turns binary attribute values (`B`, `BS`) into `Uint8Array`; Lambda sends base64 strings;
 * - GetRecords records carry no `eventSourceARN` and name the identity fields `PrincipalId`/`Type`; Lambda adds
 *   `eventSourceARN` and spells them `principalId`/`type`.
 *
 * @packageDocumentation
 */
import type { AttributeValue, _Record as SdkStreamRecord } from "@aws-sdk/client-dynamodb-streams";
import { OutboxError } from "../errors";

/** A DynamoDB attribute value in its JSON wire shape, as Lambda stream events carry it (`{ "S": "…" }`). */
export type LambdaAttributeValue =
    | { readonly S: string }
    | { readonly N: string }
    | { readonly B: string }
    | { readonly SS: readonly string[] }
    | { readonly NS: readonly string[] }
    | { readonly BS: readonly string[] }
    | { readonly M: { readonly [name: string]: LambdaAttributeValue } }
    | { readonly L: readonly LambdaAttributeValue[] }
    | { readonly NULL: true }
    | { readonly BOOL: boolean };

/** An item image or key map in wire shape. */
export type LambdaAttributeMap = { readonly [name: string]: LambdaAttributeValue };

/** The `dynamodb` part of a Lambda DynamoDB stream record. */
export interface LambdaStreamRecordData {
    /** When the change was made, epoch seconds (DynamoDB Local rounds it down to the minute). */
    readonly ApproximateCreationDateTime?: number;
    /** The item's primary key. */
    readonly Keys: LambdaAttributeMap;
    /** The item after the change (INSERT/MODIFY with a NEW_IMAGE or NEW_AND_OLD_IMAGES view). */
    readonly NewImage?: LambdaAttributeMap;
    /** The item before the change (MODIFY/REMOVE with an OLD_IMAGE or NEW_AND_OLD_IMAGES view). */
    readonly OldImage?: LambdaAttributeMap;
    /** The record's position in its shard; the `itemIdentifier` a handler reports in `batchItemFailures`. */
    readonly SequenceNumber: string;
    /** The record's size in bytes. */
    readonly SizeBytes: number;
    /** The stream view type, e.g. `NEW_IMAGE`. */
    readonly StreamViewType: string;
}

/** One record of a Lambda DynamoDB stream event. */
export interface LambdaStreamRecord {
    /** A unique id of the change. */
    readonly eventID: string;
    /** `INSERT`, `MODIFY` or `REMOVE`. */
    readonly eventName: "INSERT" | "MODIFY" | "REMOVE";
    /** The record format version, e.g. `1.1`. */
    readonly eventVersion: string;
    /** Always `aws:dynamodb`. */
    readonly eventSource: string;
    /** The table's region (`ddblocal` on DynamoDB Local). */
    readonly awsRegion: string;
    /** The change itself. */
    readonly dynamodb: LambdaStreamRecordData;
    /** The stream ARN; Lambda adds it, GetRecords does not carry it. */
    readonly eventSourceARN: string;
    /** Present on TTL deletions: `{ type: "Service", principalId: "dynamodb.amazonaws.com" }`. */
    readonly userIdentity?: { readonly type: string; readonly principalId: string };
}

/** The event Lambda passes to a function subscribed to a DynamoDB stream. */
export interface LambdaStreamEvent {
    /** The batch, in shard order. */
    readonly Records: readonly LambdaStreamRecord[];
}

/**
 * What a stream handler returns. With `ReportBatchItemFailures`, Lambda retries from the lowest reported
 * SequenceNumber; `undefined`, `null`, `{}` and an empty list all mean the whole batch succeeded.
 */
export type LambdaStreamHandlerResult =
    | { readonly batchItemFailures?: readonly { readonly itemIdentifier?: string | null }[] | null }
    | void
    | null
    | undefined;

function base64(bytes: Uint8Array): string {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** Convert one SDK attribute value to its wire shape (binary becomes base64, nested maps and lists recurse). */
export function toLambdaAttributeValue(value: AttributeValue): LambdaAttributeValue {
    if (value.S !== undefined) return { S: value.S };
    if (value.N !== undefined) return { N: value.N };
    if (value.B !== undefined) return { B: base64(value.B) };
    if (value.SS !== undefined) return { SS: [...value.SS] };
    if (value.NS !== undefined) return { NS: [...value.NS] };
    if (value.BS !== undefined) return { BS: value.BS.map(base64) };
    if (value.M !== undefined) return { M: toLambdaAttributeMap(value.M) };
    if (value.L !== undefined) return { L: value.L.map(toLambdaAttributeValue) };
    if (value.NULL !== undefined) return { NULL: true };
    if (value.BOOL !== undefined) return { BOOL: value.BOOL };
    throw new OutboxError(
        "INVALID_PAYLOAD",
        `stream attribute value has no known type (keys: ${Object.keys(value).join(", ")}); expected one of S, N, B, SS, NS, BS, M, L, NULL, BOOL`,
    );
}

/** Convert an SDK key map or image to its wire shape. */
export function toLambdaAttributeMap(map: Record<string, AttributeValue>): LambdaAttributeMap {
    const out: { [name: string]: LambdaAttributeValue } = {};
    for (const [name, value] of Object.entries(map)) out[name] = toLambdaAttributeValue(value);
    return out;
}

/**
 * Convert a GetRecords record to the record Lambda delivers: attribute values in wire shape,
 * `ApproximateCreationDateTime` in epoch seconds, `eventSourceARN` added.
 *
 * @param record - A record from `GetRecordsCommand`.
 * @param streamArn - The stream the record was read from.
 */
export function toLambdaStreamRecord(record: SdkStreamRecord, streamArn: string): LambdaStreamRecord {
    const data = record.dynamodb;
    if (data === undefined || data.SequenceNumber === undefined || record.eventName === undefined) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `stream record ${record.eventID ?? "(no eventID)"} has no dynamodb.SequenceNumber or eventName; GetRecords always sets them, so the stream client is not a DynamoDB Streams client`,
            {
                context: { eventID: record.eventID, streamArn },
            },
        );
    }
    const dynamodb: LambdaStreamRecordData = {
        ...(data.ApproximateCreationDateTime === undefined
            ? {}
            : { ApproximateCreationDateTime: data.ApproximateCreationDateTime.getTime() / 1000 }),
        Keys: toLambdaAttributeMap(data.Keys ?? {}),
        ...(data.NewImage === undefined ? {} : { NewImage: toLambdaAttributeMap(data.NewImage) }),
        ...(data.OldImage === undefined ? {} : { OldImage: toLambdaAttributeMap(data.OldImage) }),
        SequenceNumber: data.SequenceNumber,
        SizeBytes: data.SizeBytes ?? 0,
        StreamViewType: data.StreamViewType ?? "",
    };
    const identity = record.userIdentity;
    return {
        eventID: record.eventID ?? "",
        eventName: record.eventName,
        eventVersion: record.eventVersion ?? "1.1",
        eventSource: record.eventSource ?? "aws:dynamodb",
        awsRegion: record.awsRegion ?? "",
        dynamodb,
        eventSourceARN: streamArn,
        ...(identity === undefined
            ? {}
            : { userIdentity: { type: identity.Type ?? "", principalId: identity.PrincipalId ?? "" } }),
    };
}
