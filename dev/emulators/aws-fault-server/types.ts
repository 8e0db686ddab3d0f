/**
 * The public types of the test server (SNS, SQS and EventBridge): what it records (messages, calls), the fault
 * plan, its options and the running server's handle. Re-exported by `index.ts`.
 *
 * @packageDocumentation
 */

/** A message attribute as recorded. */
export interface RecordedAttribute {
    /** `String`, `Number`, `Binary` or `String.Array`. */
    readonly dataType: string;
    /** The value of a String or Number attribute. */
    readonly stringValue?: string;
    /** The base64 value of a Binary attribute. */
    readonly binaryValue?: string;
}

/**
 * A message the server accepted: a Publish/PublishBatch entry, a SendMessage/SendMessageBatch entry, a PutEvents
 * entry, or the copy of a PutEvents entry that a route (`routeBusToQueue`) put on a queue.
 */
export interface RecordedMessage {
    /**
     * `sns` for a Publish/PublishBatch entry; `sqs` for a SendMessage/SendMessageBatch entry or a routed copy of an
     * event (its `action` is then `PutEvents`); `events` for a PutEvents entry.
     */
    readonly service: "sns" | "sqs" | "events";
    /** The topic ARN (SNS), queue URL (SQS) or event bus ARN (EventBridge). */
    readonly destination: string;
    /** The topic, queue or event bus name. */
    readonly destinationName: string;
    /** The id the server returned (an event's `EventId`). */
    readonly messageId: string;
    /** The message body; an event's `Detail`, as sent; a routed copy's event envelope (JSON). */
    readonly body: string;
    /** The message attributes by name (none for an event or a routed copy). */
    readonly attributes: Readonly<Record<string, RecordedAttribute>>;
    /** An event's `Source`. */
    readonly source?: string;
    /** An event's `DetailType`. */
    readonly detailType?: string;
    /** The FIFO message group. */
    readonly messageGroupId?: string;
    /** The FIFO deduplication id. */
    readonly messageDeduplicationId?: string;
    /** The API action that carried it. */
    readonly action: string;
    /** The 1-based number of the call that carried it (see {@link RecordedCall.callNumber}). */
    readonly callNumber: number;
    /** Whether the caller got a success answer; false for "accept then time out" and "accept then reset". */
    readonly acknowledged: boolean;
}

/** A call the server received, whatever its outcome. */
export interface RecordedCall {
    /** 1-based, over every action. */
    readonly callNumber: number;
    /** The API action. */
    readonly action: string;
    /**
     * How many messages it carried: 1 for Publish/SendMessage, the entries of PublishBatch, SendMessageBatch and
     * PutEvents; 0 for any other action (a DeleteMessageBatch's receipt handles are not counted).
     */
    readonly entries: number;
    /**
     * `ok`; `partial` (some batch entries failed); the kind of an injected fault (`Throttled`, `Reset`…); the code
     * of an injected `Error` rule; or the code of the error the server answered
     * (`AWS.SimpleQueueService.BatchRequestTooLong`, `ValidationException`…).
     */
    readonly outcome: string;
}

/**
 * The named whole-call faults the server can inject. Their codes are SNS's; on an SQS action they are answered
 * in SQS's JSON error shape, on PutEvents in EventBridge's. For any other AWS error, see {@link ErrorCallFaultRule}.
 */
export type CallFaultKind =
    /** HTTP 500 `InternalError` (the SDK's `InternalErrorException`, retried by the SDK). */
    | "InternalError"
    /** HTTP 400 `Throttling`, the API rate limit (no modeled class; the SDK retries it as throttling). */
    | "Throttling"
    /** HTTP 400 `Throttled`, the SNS publish rate limit (`ThrottledException`, retried by the SDK). */
    | "Throttled"
    /** HTTP 404 `NotFound` (`NotFoundException`): a permanent error. */
    | "NotFound"
    /** HTTP 400 `InvalidParameter` (`InvalidParameterException`): a permanent error. */
    | "InvalidParameter"
    /** HTTP 403 `AuthorizationError` (`AuthorizationErrorException`): a permanent error. */
    | "AuthorizationError"
    /** Record the messages as accepted, then hold the answer for `holdMs` and drop the connection. */
    | "AcceptThenTimeout"
    /** Record the messages as accepted, then drop the connection without answering. */
    | "AcceptThenReset"
    /** Drop the connection without accepting anything. */
    | "Reset";

/** What a call fault predicate sees. */
export interface CallInfo {
    /** The API action, e.g. `Publish`, `SendMessageBatch`, `PutEvents`. */
    readonly action: string;
    /** 1-based number of this call over every action. */
    readonly callNumber: number;
    /** The topic ARN or queue URL, when the call names one (a PutEvents entry names its own bus). */
    readonly destination?: string;
    /** The entries the call carries. */
    readonly entries: readonly EntryInfo[];
}

/** What an entry fault predicate sees: one Publish/PublishBatch/SendMessage(Batch)/PutEvents entry. */
export interface EntryInfo {
    /** The batch entry id (`undefined` for Publish/SendMessage and PutEvents entries). */
    readonly id?: string;
    /** 0-based position in the call. */
    readonly index: number;
    /** The body; a PutEvents entry's `Detail` (`""` when it has none). */
    readonly body: string;
    /** The attributes by name (none for a PutEvents entry). */
    readonly attributes: Readonly<Record<string, RecordedAttribute>>;
    /** The FIFO message group. */
    readonly messageGroupId?: string;
    /** The FIFO deduplication id. */
    readonly messageDeduplicationId?: string;
    /** A PutEvents entry's `Source`. */
    readonly source?: string;
    /** A PutEvents entry's `DetailType`. */
    readonly detailType?: string;
    /** A PutEvents entry's `EventBusName`, as sent (a name or an ARN; `undefined` for the default bus). */
    readonly eventBusName?: string;
}

/** What every whole-call fault rule has: which calls it fires on, and how often. */
export interface CallFaultRuleBase {
    /** Which actions it applies to. @default ["Publish", "PublishBatch"] */
    readonly actions?: readonly string[];
    /** Only calls for which this returns true. @default every call */
    readonly when?: (call: CallInfo) => boolean;
    /** Probability of firing on a matching call, from the server's seeded RNG, 0 to 1. @default 1 */
    readonly rate?: number;
    /** Fire at most this many times. @default unlimited */
    readonly times?: number;
}

/** A rule that fails a whole call with one of the named faults. */
export interface NamedCallFaultRule extends CallFaultRuleBase {
    /** The fault to inject. */
    readonly kind: CallFaultKind;
    /** For `AcceptThenTimeout`: how long to hold the answer before dropping the connection, ms. @default 10000 */
    readonly holdMs?: number;
}

/**
 * A rule that answers a whole call with any AWS error code and HTTP status, in the protocol of the call's
 * service, so the SDK throws an error whose `name` is the SDK's name for that code:
 * - SQS (JSON 1.0): the body `{"__type":"com.amazonaws.sqs#<shape>","message":…}` and the header
 *   `x-amzn-query-error: <code>;Sender|Receiver`, which the SDK reads first (its awsQueryCompatible mode) and maps
 *   through the model's query codes. So inject SQS's wire code: `AWS.SimpleQueueService.NonExistentQueue` arrives as
 *   `QueueDoesNotExist`, `KMS.AccessDeniedException` as `KmsAccessDenied`; `RequestThrottled`, `AccessDenied`,
 *   `ThrottlingException`, `InternalError` keep their names;
 * - EventBridge (JSON 1.1): the body `{"__type":"<code>","message":…}`: `ThrottlingException`,
 *   `InternalException`, `ResourceNotFoundException`, `AccessDeniedException`… arrive under that name;
 * - SNS (awsQuery): `<Error><Type>…</Type><Code><code></Code>…`.
 *
 * For example `{ kind: "Error", code: "AWS.SimpleQueueService.NonExistentQueue", status: 400, actions:
 * ["SendMessageBatch"] }`. The call is logged with the code as its outcome.
 */
export interface ErrorCallFaultRule extends CallFaultRuleBase {
    /** Marks the rule as an error by code. */
    readonly kind: "Error";
    /** The AWS error code, as the service puts it on the wire. */
    readonly code: string;
    /** The HTTP status, e.g. 400, 403 or 500. */
    readonly status: number;
    /** Whether it is the sender's fault (SQS's `;Sender`, SNS's `<Type>Sender`). @default status < 500 */
    readonly senderFault?: boolean;
    /** The error message. @default "<code> (injected)" */
    readonly message?: string;
}

/** A rule that fails a whole call. The first rule that fires wins. */
export type CallFaultRule = NamedCallFaultRule | ErrorCallFaultRule;

/**
 * A rule that fails single batch entries, which come back in the answer while the other entries go on:
 * PublishBatch's and SendMessageBatch's `Failed[]` (`{ Id, Code, Message, SenderFault }`), PutEvents'
 * `{ ErrorCode, ErrorMessage }` at the entry's position. It meets only entries that passed the service's own
 * checks. The first rule that fires wins.
 */
export interface EntryFaultRule {
    /** Which batch actions it applies to (`PublishBatch`, `SendMessageBatch`, `PutEvents`). @default ["PublishBatch"] */
    readonly actions?: readonly string[];
    /** The error code of the failed entry. @default "InternalFailure" for PutEvents, "InternalError" otherwise */
    readonly code?: string;
    /** The `SenderFault` flag (PutEvents entries have none). @default false */
    readonly senderFault?: boolean;
    /** The error message. @default "injected failure" */
    readonly message?: string;
    /** Only entries for which this returns true. @default every entry */
    readonly when?: (entry: EntryInfo, call: CallInfo) => boolean;
    /** Probability of firing on a matching entry, from the server's seeded RNG, 0 to 1. @default 1 */
    readonly rate?: number;
    /** Fire at most this many times. @default unlimited */
    readonly times?: number;
}

/** The fault plan: call rules, batch-entry rules and a fixed latency. */
export interface FaultPlan {
    /** Whole-call faults. @default [] */
    readonly calls?: readonly CallFaultRule[];
    /** Batch entry faults (PublishBatch, SendMessageBatch, PutEvents). @default [] */
    readonly entries?: readonly EntryFaultRule[];
    /** Delay before answering every call, ms (e.g. 5 to model a real network in benchmarks). @default 0 */
    readonly latencyMs?: number;
}

/** Options of {@link startAwsFaultServer}. */
export interface AwsFaultServerOptions {
    /** The port to listen on (loopback only). @default a free port */
    readonly port?: number;
    /** The seed of the RNG that decides rate-based faults. @default 1 */
    readonly seed?: number;
    /** The region in ARNs, queue URLs and event envelopes. @default "us-east-1" */
    readonly region?: string;
    /** The account id in ARNs, queue URLs and event envelopes. @default "000000000000" */
    readonly accountId?: string;
    /** The initial fault plan. @default no faults */
    readonly faults?: FaultPlan;
}

/** A running test server. */
export interface AwsFaultServer {
    /** `http://127.0.0.1:<port>`: the endpoint of the SNS, SQS and EventBridge clients. */
    readonly endpoint: string;
    /** Create a topic without a client call; `.fifo` names become FIFO topics. Returns its ARN. */
    createTopic(name: string): string;
    /** Create a queue without a client call; `.fifo` names become FIFO queues. Returns its URL. */
    createQueue(name: string): string;
    /**
     * The ARN of a queue (by URL or name), `arn:aws:sqs:<region>:<account>:<name>`: what a publisher is given as its
     * `queueArn`. Its AWS-form URL finds the queue here too.
     *
     * @throws Error when the queue does not exist.
     */
    queueArn(queue: string): string;
    /**
     * Create an event bus without a client call (the `default` bus always exists). Returns its ARN,
     * `arn:aws:events:<region>:<account>:event-bus/<name>`.
     */
    createEventBus(name: string): string;
    /**
     * Delete an event bus (by name or ARN), as `DeleteEventBus` does: `DescribeEventBus` then answers
     * `ResourceNotFoundException` for it, and PutEvents accepts its events with an EventId and drops them, as AWS
     * does. Events it accepted before stay readable with `busEvents(<its ARN>)`.
     *
     * @throws Error when there is no such bus.
     */
    deleteEventBus(bus: string): void;
    /**
     * Deliver every event accepted on `bus` (name or ARN) from now on to `queue` (URL or name) too, as an
     * EventBridge rule with an SQS target does by default: the body is the event envelope JSON
     * (`version`, `id` = the EventId, `detail-type`, `source`, `account`, `time`, `region`, `resources`, `detail`),
     * with no message attributes. A stand-in: AWS has no maintained EventBridge emulator to check it against.
     *
     * @throws Error when the bus or the queue does not exist, or the queue is FIFO.
     */
    routeBusToQueue(bus: string, queue: string): void;
    /** Every accepted message, in acceptance order (SNS, SQS, EventBridge and routed copies). */
    messages(): readonly RecordedMessage[];
    /** Accepted SNS messages of one topic (by ARN or name). */
    topicMessages(topic: string): readonly RecordedMessage[];
    /** Messages sent or routed to one queue (by URL or name), deleted or not. */
    queueMessages(queue: string): readonly RecordedMessage[];
    /** Events accepted on one bus (by ARN or name). */
    busEvents(bus: string): readonly RecordedMessage[];
    /** Every call received, in order. */
    calls(): readonly RecordedCall[];
    /** Replace the fault plan (rule counters restart). */
    setFaults(plan: FaultPlan): void;
    /** Remove every fault and the latency. */
    clearFaults(): void;
    /**
     * Forget recorded messages (events included), calls, queue contents and FIFO deduplication; keep topics,
     * queues, buses, routes and faults.
     */
    reset(): void;
    /** Stop listening and drop held connections. Idempotent. */
    stop(): Promise<void>;
}
