/**
 * SNS's wire format, awsQuery: the form-urlencoded request (entries and message attributes in `.entry.N` /
 * `.member.N` fields) and the XML answers and errors.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto";
import type { ApiError } from "./api-error";
import type { EntryInfo, RecordedAttribute } from "./types";

const SNS_XMLNS = "http://sns.amazonaws.com/doc/2010-03-31/";

/** Escape text for an XML element. */
export function xmlEscape(value: string): string {
    return value
        .replace(/&/g, "&amp;")
        .replace(/</g, "&lt;")
        .replace(/>/g, "&gt;")
        .replace(/"/g, "&quot;")
        .replace(/'/g, "&apos;");
}

/** Read `Prefix.entry.N.Name` / `Prefix.entry.N.Value.*` query attributes. */
function queryAttributes(params: URLSearchParams, prefix: string): Record<string, RecordedAttribute> {
    const out: Record<string, RecordedAttribute> = {};
    for (let n = 1; params.has(`${prefix}.entry.${n}.Name`); n += 1) {
        const base = `${prefix}.entry.${n}`;
        const name = params.get(`${base}.Name`) as string;
        const stringValue = params.get(`${base}.Value.StringValue`);
        const binaryValue = params.get(`${base}.Value.BinaryValue`);
        out[name] = {
            dataType: params.get(`${base}.Value.DataType`) ?? "String",
            ...(stringValue === null ? {} : { stringValue }),
            ...(binaryValue === null ? {} : { binaryValue }),
        };
    }
    return out;
}

/** One entry's fields under `prefix` (`""` for Publish, `PublishBatchRequestEntries.member.N.` for a batch). */
function queryEntry(params: URLSearchParams, prefix: string, index: number): EntryInfo {
    return {
        index,
        body: params.get(`${prefix}Message`) ?? "",
        attributes: queryAttributes(params, `${prefix}MessageAttributes`),
        ...(params.has(`${prefix}MessageGroupId`)
            ? { messageGroupId: params.get(`${prefix}MessageGroupId`) as string }
            : {}),
        ...(params.has(`${prefix}MessageDeduplicationId`)
            ? { messageDeduplicationId: params.get(`${prefix}MessageDeduplicationId`) as string }
            : {}),
    };
}

/** The entries a Publish (one) or PublishBatch (`PublishBatchRequestEntries.member.N`) carries; none otherwise. */
export function queryEntries(action: string, params: URLSearchParams): EntryInfo[] {
    if (action === "Publish") return [queryEntry(params, "", 0)];
    const entries: EntryInfo[] = [];
    if (action === "PublishBatch") {
        for (let n = 1; params.has(`PublishBatchRequestEntries.member.${n}.Id`); n += 1) {
            const prefix = `PublishBatchRequestEntries.member.${n}.`;
            entries.push({ id: params.get(`${prefix}Id`) as string, ...queryEntry(params, prefix, n - 1) });
        }
    }
    return entries;
}

/** The `Attributes.entry.N.key` / `.value` pairs of a CreateTopic. */
export function queryTopicAttributes(params: URLSearchParams): Record<string, string> {
    const attributes: Record<string, string> = {};
    for (let n = 1; params.has(`Attributes.entry.${n}.key`); n += 1) {
        attributes[params.get(`Attributes.entry.${n}.key`) as string] = params.get(`Attributes.entry.${n}.value`) ?? "";
    }
    return attributes;
}

/** An action's answer: `<{action}Response><{action}Result>…</{action}Result><ResponseMetadata>…`. */
export function xmlAnswer(action: string, result: string, requestId: string): string {
    const meta = `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata>`;
    return `<${action}Response xmlns="${SNS_XMLNS}"><${action}Result>${result}</${action}Result>${meta}</${action}Response>`;
}

/** A published message's `<MessageId>` and, on a FIFO topic, `<SequenceNumber>`. */
export function publishedXml(out: { messageId: string; sequenceNumber?: string }): string {
    const sequence = out.sequenceNumber === undefined ? "" : `<SequenceNumber>${out.sequenceNumber}</SequenceNumber>`;
    return `<MessageId>${out.messageId}</MessageId>${sequence}`;
}

/** A `Failed[]` member of a PublishBatch answer. */
export function failedEntryXml(id: string, code: string, message: string, senderFault: boolean): string {
    return `<member><Id>${xmlEscape(id)}</Id><Code>${xmlEscape(code)}</Code><Message>${xmlEscape(message)}</Message><SenderFault>${senderFault}</SenderFault></member>`;
}

/** An `<ErrorResponse>`. */
export function xmlError(error: ApiError): string {
    const type = error.sender ? "Sender" : "Receiver";
    return `<ErrorResponse xmlns="${SNS_XMLNS}"><Error><Type>${type}</Type><Code>${xmlEscape(error.code)}</Code><Message>${xmlEscape(error.message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
}
