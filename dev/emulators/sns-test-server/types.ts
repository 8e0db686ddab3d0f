/**
 * The public types of the SNS test server: what it records (messages, calls), the fault plan, its options and
 * the running server's handle. Re-exported by `index.ts`.
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

/** A message the server accepted. */
export interface RecordedMessage {
    /** `sns` for a Publish/PublishBatch entry, `sqs` for a SendMessage/SendMessageBatch entry. */
    readonly service: "sns" | "sqs";
    /** The topic ARN (SNS) or queue URL (SQS). */
    readonly destination: string;
    /** The topic or queue name. */
    readonly destinationName: string;
    /** The id the server returned. */
    readonly messageId: string;
    /** The message body. */
    readonly body: string;
    /** The message attributes by name. */
    readonly attributes: Readonly<Record<string, RecordedAttribute>>;
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
    /** How many entries it carried (1 for Publish/SendMessage). */
    readonly entries: number;
    /** `ok`, `partial` (some batch entries failed), or the injected or real fault kind. */
    readonly outcome: string;
}

/** The whole-call faults the server can inject. */
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
    /** The API action, e.g. `Publish`. */
    readonly action: string;
    /** 1-based number of this call over every action. */
    readonly callNumber: number;
    /** The topic ARN or queue URL, when the call names one. */
    readonly destination?: string;
    /** The entries the call carries. */
    readonly entries: readonly EntryInfo[];
}

/** What an entry fault predicate sees: one Publish/PublishBatch/SendMessage entry. */
export interface EntryInfo {
    /** The batch entry id (`undefined` for Publish/SendMessage). */
    readonly id?: string;
    /** 0-based position in the call. */
    readonly index: number;
    /** The body. */
    readonly body: string;
    /** The attributes by name. */
    readonly attributes: Readonly<Record<string, RecordedAttribute>>;
    /** The FIFO message group. */
    readonly messageGroupId?: string;
    /** The FIFO deduplication id. */
    readonly messageDeduplicationId?: string;
}

/** A rule that fails a whole call. The first rule that fires wins. */
export interface CallFaultRule {
    /** The fault to inject. */
    readonly kind: CallFaultKind;
    /** Which actions it applies to. @default ["Publish", "PublishBatch"] */
    readonly actions?: readonly string[];
    /** Only calls for which this returns true. @default every call */
    readonly when?: (call: CallInfo) => boolean;
    /** Probability of firing on a matching call, from the server's seeded RNG, 0 to 1. @default 1 */
    readonly rate?: number;
    /** Fire at most this many times. @default unlimited */
    readonly times?: number;
    /** For `AcceptThenTimeout`: how long to hold the answer before dropping the connection, ms. @default 10000 */
    readonly holdMs?: number;
}

/** A rule that fails single PublishBatch entries (they come back in `Failed[]`). The first rule that fires wins. */
export interface EntryFaultRule {
    /** The error code in the `Failed[]` entry. @default "InternalError" */
    readonly code?: string;
    /** The `SenderFault` flag. @default false */
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
    /** PublishBatch entry faults. @default [] */
    readonly entries?: readonly EntryFaultRule[];
    /** Delay before answering every call, ms (e.g. 5 to model a real network in benchmarks). @default 0 */
    readonly latencyMs?: number;
}

/** Options of {@link startSnsTestServer}. */
export interface SnsTestServerOptions {
    /** The port to listen on (loopback only). @default a free port */
    readonly port?: number;
    /** The seed of the RNG that decides rate-based faults. @default 1 */
    readonly seed?: number;
    /** The region in ARNs and queue URLs. @default "us-east-1" */
    readonly region?: string;
    /** The account id in ARNs and queue URLs. @default "000000000000" */
    readonly accountId?: string;
    /** The initial fault plan. @default no faults */
    readonly faults?: FaultPlan;
}

/** A running test server. */
export interface SnsTestServer {
    /** `http://127.0.0.1:<port>`: the endpoint of both the SNS and the SQS client. */
    readonly endpoint: string;
    /** Create a topic without a client call; `.fifo` names become FIFO topics. Returns its ARN. */
    createTopic(name: string): string;
    /** Create a queue without a client call. Returns its URL. */
    createQueue(name: string): string;
    /** Every accepted message, in acceptance order (SNS and SQS). */
    messages(): readonly RecordedMessage[];
    /** Accepted SNS messages of one topic (by ARN or name). */
    topicMessages(topic: string): readonly RecordedMessage[];
    /** Messages sent to one queue (by URL or name), deleted or not. */
    queueMessages(queue: string): readonly RecordedMessage[];
    /** Every call received, in order. */
    calls(): readonly RecordedCall[];
    /** Replace the fault plan (rule counters restart). */
    setFaults(plan: FaultPlan): void;
    /** Remove every fault and the latency. */
    clearFaults(): void;
    /** Forget recorded messages and calls; keep topics, queues and faults. */
    reset(): void;
    /** Stop listening and drop held connections. Idempotent. */
    stop(): Promise<void>;
}
