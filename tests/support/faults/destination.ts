/**
 * Where a fault scenario publishes, on the fault server: the SNS topic of every scenario but the destination ones, an
 * SQS queue (standard or FIFO), or an EventBridge bus (the server's stand-in, since no maintained EventBridge emulator
 * exists), routed to a queue as a rule with an SQS target is. For each kind: the publisher's settings, the record
 * ids in the order the destination accepted them (what the invariants check), what the inbox consumer's queue
 * receives, the record id of a batch entry (for fault predicates), and the refusal a poison message gets in the
 * kind's own error code.
 */
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { localClientConfig } from "../local-aws-client";
import type {
    EntryFaultRule,
    EntryInfo,
    RecordedMessage,
    AwsFaultServer,
} from "../../../dev/emulators/aws-fault-server";
import type { DestinationKind } from "../../../runtime/destination/kind";

/** A scenario's destination, when it is not the SNS topic. */
export interface ScenarioDestination {
    /** The kind. */
    readonly kind: DestinationKind;
    /** A FIFO queue or topic (never a bus). @default false */
    readonly fifo?: boolean;
}

/** A scenario's destination, made on the fault server. */
export interface FaultDestination {
    /** Its kind. */
    readonly kind: DestinationKind;
    /** Whether it is FIFO. */
    readonly fifo: boolean;
    /** Its ARN: the publisher's setting and the writers' address. */
    readonly arn: string;
    /** The batch action of its kind: `PublishBatch`, `SendMessageBatch` or `PutEvents`. */
    readonly batchAction: string;
    /** How a scenario line names it: `sns`, `sqs`, `sqs-fifo`, `eventbridge`. */
    readonly label: string;
    /** Whether it keeps each key's order for its consumers (a bus does not: its inversions are the put order's). */
    readonly ordered: boolean;
    /** The publisher's and the sweeper's destination settings (the SNS and SQS clients are the scenario's own). */
    readonly config: {
        readonly topicArn?: string;
        readonly queueArn?: string;
        readonly eventBusArn?: string;
        readonly eventBridge?: EventBridgeClient;
        readonly fifo: boolean;
    };
    /** Record ids, in the order the destination accepted them (an accepted-then-timed-out entry included). */
    acceptedIds(): string[];
    /** What the consumer's queue receives (SNS raw delivery, the queue's own messages, a rule target's envelopes). */
    consumerMessages(): readonly RecordedMessage[];
    /** The record id a message of {@link FaultDestination.consumerMessages} carries. */
    consumerId(message: RecordedMessage): string;
    /** The payload a message of {@link FaultDestination.consumerMessages} carries (the body, or a bus event's `detail.payload`), parsed. */
    consumerPayload(message: RecordedMessage): unknown;
    /** The record id a batch entry of this kind carries. */
    entryId(entry: EntryInfo): string;
    /** How this kind refuses a poison message, every time: a fault of the message's own. */
    readonly poisonRefusal: Pick<EntryFaultRule, "code" | "senderFault" | "message">;
    /** Destroy its client. */
    close(): void;
}

/** A body's JSON, or `undefined` when it is not JSON. */
function parsed(body: string): unknown {
    try {
        return JSON.parse(body) as unknown;
    } catch {
        return undefined;
    }
}

function attributeId(attributes: RecordedMessage["attributes"]): string {
    return attributes["outbox.id"]?.stringValue ?? "";
}

/** The record id of a PutEvents `Detail` (`detail.outbox.id`), read by hand: the checker does not lean on the runtime's parser. */
function detailId(detail: string): string {
    try {
        return String((JSON.parse(detail) as { outbox?: { id?: unknown } }).outbox?.id ?? "");
    } catch {
        return "";
    }
}

/** The SNS topic every scenario had before the destination kinds: standard, named `events`. */
function topic(server: AwsFaultServer, fifo: boolean): FaultDestination {
    const topicArn = server.createTopic(fifo ? "events.fifo" : "events");
    // As SNS raw delivery to a queue hands them over: the payload as the body, the attributes as attributes.
    return idInAttributes(
        { kind: "sns", fifo, arn: topicArn, batchAction: "PublishBatch", config: { topicArn, fifo } },
        () => server.topicMessages(topicArn),
        "InvalidParameter",
    );
}

function queue(server: AwsFaultServer, fifo: boolean): FaultDestination {
    const url = server.createQueue(fifo ? "events.fifo" : "events");
    const queueArn = server.queueArn(url);
    return idInAttributes(
        { kind: "sqs", fifo, arn: queueArn, batchAction: "SendMessageBatch", config: { queueArn, fifo } },
        () => server.queueMessages(url),
        "InvalidMessageContents",
    );
}

/**
 * A destination that keeps each message's order and hands it to the consumer with the payload as the body and the
 * outbox id as an attribute (an SNS topic, read as raw delivery; an SQS queue).
 *
 * @param messages - What the destination accepted, in order.
 * @param poisonCode - The error code it refuses a poison message with (a sender fault).
 */
function idInAttributes(
    destination: Pick<FaultDestination, "kind" | "fifo" | "arn" | "batchAction" | "config">,
    messages: FaultDestination["consumerMessages"],
    poisonCode: string,
): FaultDestination {
    return {
        ...destination,
        label: destination.fifo ? `${destination.kind}-fifo` : destination.kind,
        ordered: true,
        acceptedIds: () => messages().map((m) => attributeId(m.attributes)),
        consumerMessages: messages,
        consumerId: (m) => attributeId(m.attributes),
        consumerPayload: (m) => parsed(m.body),
        entryId: (e) => attributeId(e.attributes),
        poisonRefusal: { code: poisonCode, senderFault: true, message: "poison message (injected)" },
        close: () => undefined,
    };
}

function bus(server: AwsFaultServer): FaultDestination {
    const eventBusArn = server.createEventBus("events");
    const routed = server.createQueue("events-rule-target");
    server.routeBusToQueue(eventBusArn, routed);
    const eventBridge = new EventBridgeClient(localClientConfig(server.endpoint));
    return {
        kind: "eventbridge",
        fifo: false,
        arn: eventBusArn,
        batchAction: "PutEvents",
        label: "eventbridge",
        ordered: false,
        config: { eventBusArn, eventBridge, fifo: false },
        acceptedIds: () => server.busEvents(eventBusArn).map((m) => detailId(m.body)),
        // The event envelope a rule's SQS target delivers: the consumer reads detail.outbox and detail.payload.
        consumerMessages: () => server.queueMessages(routed),
        consumerId: (m) => {
            try {
                return String((JSON.parse(m.body) as { detail?: { outbox?: { id?: unknown } } }).detail?.outbox?.id);
            } catch {
                return "";
            }
        },
        consumerPayload: (m) => (parsed(m.body) as { detail?: { payload?: unknown } } | undefined)?.detail?.payload,
        entryId: (e) => detailId(e.body),
        // EventBridge entries carry no sender fault; MalformedDetail is the message's own (PutEventsResultEntry).
        poisonRefusal: { code: "MalformedDetail", message: "poison message (injected)" },
        close: () => eventBridge.destroy(),
    };
}

/**
 * Make a scenario's destination on the fault server.
 *
 * @param server - The fault server.
 * @param spec - The scenario's destination; `undefined` for the standard SNS topic.
 */
export function faultDestination(server: AwsFaultServer, spec: ScenarioDestination | undefined): FaultDestination {
    const kind = spec?.kind ?? "sns";
    if (kind === "sqs") return queue(server, spec?.fifo ?? false);
    if (kind === "eventbridge") return bus(server);
    return topic(server, spec?.fifo ?? false);
}
