/**
 * An EventBridge bus as the destination: `PutEvents`, 10 entries per call and under 1 MB in all, each entry's result
 * read by its position, and what an EventBridge error is a fault of. The entry is `Source` (the configured source),
 * `DetailType` (the message type) and `Detail` (`event-detail.ts`: the payload with the outbox's id and headers).
 *
 * A bus keeps no order: the publisher still publishes each ordering key's records one after the other, but
 * EventBridge may deliver them in any order. Consumers that need order read a FIFO queue or an SNS FIFO topic.
 *
 * Entry error codes are mapped from PutEventsResultEntry
 * (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsResultEntry.html: `InternalFailure` and
 * `ThrottlingException` retryable; `AccessDeniedException`, `InvalidAccountIdException`, `InvalidArgument`,
 * `MalformedDetail`, `RedactionFailure`, `NotAuthorizedForSourceException`, `NotAuthorizedForDetailTypeException`
 * not), call errors from PutEvents (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html)
 * and the common errors (https://docs.aws.amazon.com/eventbridge/latest/APIReference/CommonErrors.html).
 *
 * Reviewed by what a refusal is about, as SNS's and SQS's are: an entry's `InvalidArgument` ("A specified parameter is
 * not valid"), `MalformedDetail` and `NotAuthorizedForDetailTypeException` are about the entry's own fields (its
 * `Detail`, its `DetailType`: the message's type), so they are the message's; `NotAuthorizedForSourceException` is
 * about the `Source` every entry carries (the configured source) and a `ValidationException` naming the bus is about
 * the bus, so they hold the shard. The writer refuses a type over 128 characters, `DetailType`'s limit
 * (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsRequestEntry.html), whatever its address.
 *
 * @packageDocumentation
 */
import type { PutEventsCommandOutput } from "@aws-sdk/client-eventbridge";
import { eventBridgeSdk } from "../sdk-clients";
import type { OutboundMessage } from "../record/message";
import type { ClientLike } from "../ports";
import { refusedEntry, unanswered, type Destination, type PublishFailureKind, type PublishResult } from "./destination";
import { eventDetail, eventDetailType, eventEntrySize } from "./event-detail";
import { DESTINATION_KINDS, DESTINATION_LABELS } from "./kind";
import type { CloudEventsWriter } from "./cloud-events";

/**
 * The most bytes of entries one `PutEvents` call carries. EventBridge takes a total "under 1 MB" since January 2026
 * (https://aws.amazon.com/about-aws/whats-new/2026/01/amazon-eventbridge-increases-event-payload-size-256-kb-1-mb/);
 * the decimal reading is kept, the stricter of the two. A call refused as too long is sent again entry by entry.
 */
export const EVENTBRIDGE_MAX_CALL_BYTES = 1_000_000;

/** A validation error that names the bus: the deployment's, not a message's. */
const NAMES_THE_BUS = /EventBusName|event bus/i;

/**
 * Classify an EventBridge error (a whole call's exception, or one entry's `ErrorCode`; entries carry no sender flag):
 * - `message`: `InvalidArgument`, `MalformedDetail`, `RedactionFailure`, a `ValidationException` of the request, and
 *   `NotAuthorizedForDetailTypeException` (the bus's policy refuses this message's type: the other types go on);
 * - `deployment`: the bus does not exist, access denied, an account id or a `Source` the bus refuses, a KMS key the
 *   function cannot use, a validation error that names the bus;
 * - `transient`: `InternalFailure`, `InternalException`, `ThrottlingException`, and any code not named here.
 *
 * @param code - The SDK error name or an entry's `ErrorCode`.
 * @param _senderFault - Unused: EventBridge marks no sender fault. @default false
 * @param message - The error's message. @default ""
 */
export function classifyEventBridgeFailure(code: string, _senderFault = false, message = ""): PublishFailureKind {
    switch (code) {
        case "ValidationException":
            return NAMES_THE_BUS.test(message) ? "deployment" : "message";
        case "InvalidArgument":
        case "MalformedDetail":
        case "RedactionFailure":
        case "NotAuthorizedForDetailTypeException":
            return "message";
        case "ResourceNotFoundException":
        case "AccessDeniedException":
        case "InvalidAccountIdException":
        case "NotAuthorizedForSourceException":
        case "UnrecognizedClientException":
        case "InvalidClientTokenId":
        case "ExpiredTokenException":
        case "InvalidSignatureException":
            return "deployment";
        default:
            if (/^KMS|^Kms/.test(code) && !/throttl/i.test(code)) return "deployment";
            // InternalFailure, InternalException, ThrottlingException, and what AWS may add: the shard holds and
            // Lambda retries, rather than a record being dead-lettered for a fault nobody named.
            return "transient";
    }
}

/** The results of a PutEvents answer: `Entries` has one result per request entry, in the same order. */
function readPutEvents(out: PutEventsCommandOutput | undefined, count: number): PublishResult[] {
    const results = unanswered(DESTINATION_LABELS.eventbridge, count);
    const entries = out?.Entries ?? [];
    for (let i = 0; i < Math.min(count, entries.length); i += 1) {
        const entry = entries[i]!;
        if (entry.ErrorCode !== undefined)
            results[i] = refusedEntry(
                { classify: classifyEventBridgeFailure },
                entry.ErrorCode,
                false,
                entry.ErrorMessage,
            );
        else if (entry.EventId !== undefined) results[i] = { ok: true, messageId: entry.EventId };
    }
    return results;
}

/**
 * An EventBridge bus as a {@link Destination}; never FIFO.
 *
 * @param eventBridge - The EventBridge client (`EventBridgeClient`).
 * @param eventBusArn - The bus (its ARN is the entries' `EventBusName`).
 * @param source - Every entry's `Source`.
 * @param cloudEvents - With it, each entry's `Detail` is the message's CloudEvent (`cloud-events.ts`) in place of
 *   `{outbox, payload}`; `Source` and `DetailType` stay as they are. @default undefined
 */
export function eventBridgeDestination(
    eventBridge: ClientLike,
    eventBusArn: string,
    source: string,
    cloudEvents?: CloudEventsWriter,
): Destination {
    // A call's entries are measured (publishBatches) and then sent: build each Detail once, which checks the body's
    // JSON. Made per destination, at cold start: nothing module-level for Pulumi to serialize.
    const details = new WeakMap<OutboundMessage, string>();
    const detailOf = (message: OutboundMessage): string => {
        let detail = details.get(message);
        if (detail === undefined) {
            detail = cloudEvents === undefined ? eventDetail(message) : cloudEvents.body(message);
            details.set(message, detail);
        }
        return detail;
    };
    return {
        kind: DESTINATION_KINDS.eventBridge,
        arn: eventBusArn,
        fifo: false,
        bytesPerCall: EVENTBRIDGE_MAX_CALL_BYTES,
        entryBytes: (message: OutboundMessage) => eventEntrySize(source, eventDetailType(message), detailOf(message)),
        classify: classifyEventBridgeFailure,
        async sendCall(messages: readonly OutboundMessage[]) {
            const out = (await eventBridge.send(
                new (eventBridgeSdk().PutEventsCommand)({
                    Entries: messages.map((m) => ({
                        EventBusName: eventBusArn,
                        Source: source,
                        DetailType: eventDetailType(m),
                        Detail: detailOf(m),
                    })),
                }),
            )) as PutEventsCommandOutput | undefined;
            return readPutEvents(out, messages.length);
        },
    };
}
