/**
 * The destination a handler is given, checked once per cold start: exactly one of `topicArn`, `queueArn` and
 * `eventBusArn`, of its shape, with the client of its kind, `fifo` matching it, and (for a bus) a `Source`
 * EventBridge takes. Every refusal is `INVALID_CONFIG` naming the setting, the bad value, what is allowed and the
 * fix: a wrong destination fails every record the same way, so it is refused before the first one.
 *
 * @packageDocumentation
 */
import { destinationArnRegion } from "./aws-resource-names";
import { OutboxError } from "../errors";
import type { ClientLike } from "../ports";
import type { Destination } from "./destination";
import { eventBridgeDestination } from "./eventbridge";
import {
    DEFAULT_EVENT_SOURCE,
    DESTINATION_ARN_RULES,
    DESTINATION_KINDS,
    DESTINATION_LABELS,
    DESTINATION_SETTINGS,
    eventSourceProblem,
    type DestinationKind,
    type DestinationSetting,
} from "./kind";
import { cloudEventsWriter, type CloudEventsConfig } from "./cloud-events";
import { snsDestination } from "./sns";
import { sqsDestination } from "./sqs";

/** Where a handler publishes, as `PublisherConfig` gives it. */
export interface DestinationConfig {
    /** An SNS topic. Exactly one of `topicArn`, `queueArn` and `eventBusArn`. @default undefined */
    readonly topicArn?: string;
    /** An SQS queue, standard or FIFO. Exactly one of `topicArn`, `queueArn` and `eventBusArn`. @default undefined */
    readonly queueArn?: string;
    /** An EventBridge event bus. Exactly one of `topicArn`, `queueArn` and `eventBusArn`. @default undefined */
    readonly eventBusArn?: string;
    /** The SNS client, with `topicArn`. @default undefined */
    readonly sns?: ClientLike;
    /** The SQS client: the DLQ's, and the destination's with `queueArn`. */
    readonly sqs: ClientLike;
    /** The EventBridge client, with `eventBusArn`. @default undefined */
    readonly eventBridge?: ClientLike;
    /** Whether the topic or queue is FIFO; never with a bus. @default false */
    readonly fifo?: boolean;
    /** The EventBridge `Source` of every event, with `eventBusArn`. @default "dynamodb-outbox" */
    readonly eventSource?: string;
    /**
     * Send every event as a structured-mode CloudEvents 1.0 JSON object with this `source`
     * (`runtime/destination/cloud-events.ts`): the message body on a topic or a queue, the `Detail` on a bus.
     * @default undefined (the outbox's own format: the payload as the body, the outbox's fields as attributes)
     */
    readonly cloudEvents?: CloudEventsConfig;
}

/** What each kind's client setting is called: the client that must be given with its ARN. */
const CLIENT_SETTINGS = {
    sns: "sns",
    sqs: "sqs",
    eventbridge: "eventBridge",
} as const satisfies Record<DestinationKind, keyof DestinationConfig>;

function invalid(message: string, context: Record<string, string>): OutboxError {
    return new OutboxError("INVALID_CONFIG", message, { context });
}

/**
 * The one destination setting that is given, and its kind.
 *
 * @param config - The handler's destination settings.
 * @param who - The factory's name, for messages.
 * @throws OutboxError `INVALID_CONFIG` when none or several are given.
 */
export function givenDestination(
    config: Pick<DestinationConfig, DestinationSetting>,
    who: string,
): { kind: DestinationKind; setting: DestinationSetting; arn: unknown } {
    const kinds = (Object.keys(DESTINATION_SETTINGS) as DestinationKind[]).filter(
        (kind) => config[DESTINATION_SETTINGS[kind]] !== undefined,
    );
    const names = Object.values(DESTINATION_SETTINGS);
    if (kinds.length === 0)
        throw invalid(
            `${who}: no destination; set exactly one of topicArn (an SNS topic), queueArn (an SQS queue) or eventBusArn (an EventBridge bus)`,
            { allowed: names.join(", ") },
        );
    if (kinds.length > 1) {
        const given = kinds.map((k) => DESTINATION_SETTINGS[k]);
        throw invalid(
            `${who}: ${given.join(" and ")} are set; an outbox publishes to exactly one destination; keep only one of them`,
            { given: given.join(", ") },
        );
    }
    const kind = kinds[0]!;
    return { kind, setting: DESTINATION_SETTINGS[kind], arn: config[DESTINATION_SETTINGS[kind]] };
}

/** `fifo` is a boolean that matches the destination: a `.fifo` topic or queue name; never a bus. */
function checkedFifo(who: string, kind: DestinationKind, setting: string, arn: string, fifo: unknown): boolean {
    const value = fifo ?? false;
    if (typeof value !== "boolean")
        throw invalid(`${who}: fifo must be true or false, got ${JSON.stringify(value)}`, { fifo: String(value) });
    if (kind === DESTINATION_KINDS.eventBridge) {
        if (value)
            throw invalid(
                `${who}: fifo is true but the destination is the EventBridge bus ${arn}, which keeps no order; set fifo to false, or publish to an SQS FIFO queue or an SNS FIFO topic for ordered consumers`,
                { [setting]: arn },
            );
        return false;
    }
    const unit = DESTINATION_ARN_RULES[kind].unit;
    // A mismatch fails every message the same way (the service refuses the group id, or requires one), so it is a
    // fault of the deployment: refuse it at cold start instead of dead-lettering the whole stream.
    if (value !== arn.endsWith(".fifo"))
        throw invalid(
            `${who}: fifo is ${value} but ${setting} ${arn} ${value ? "is not" : "is"} a FIFO ${unit} (a name ending in .fifo); set fifo to ${!value}, or point ${setting} at the matching ${unit}`,
            { [setting]: arn },
        );
    return value;
}

/** The bus's `Source`: only with a bus, and one EventBridge takes. */
function checkedEventSource(who: string, kind: DestinationKind, source: unknown): string {
    if (kind !== DESTINATION_KINDS.eventBridge) {
        if (source !== undefined)
            throw invalid(
                `${who}: eventSource is set, but the destination is not an EventBridge bus; it names the Source of EventBridge events only; remove it`,
                { eventSource: String(source) },
            );
        return DEFAULT_EVENT_SOURCE;
    }
    if (source === undefined) return DEFAULT_EVENT_SOURCE;
    const problem = typeof source === "string" ? eventSourceProblem(source) : "must be a string";
    if (problem !== undefined)
        throw invalid(
            `${who}: eventSource is ${JSON.stringify(source)}; an EventBridge Source ${problem}; use a reverse-DNS name such as "com.example.orders", or omit it for "${DEFAULT_EVENT_SOURCE}"`,
            { eventSource: String(source) },
        );
    return source as string;
}

/**
 * Check a handler's destination settings and build its {@link Destination}.
 *
 * @param config - The handler's destination settings and clients.
 * @param who - The factory's name, for messages (`createPublisher`, `createSweeper`).
 * @param outboxSource - The relay's source, which a CloudEvent carries as `outboxsource` when its message has none.
 *   @default undefined
 * @throws OutboxError `INVALID_CONFIG` naming the setting, the bad value, what is allowed and the fix.
 */
export function createDestination(config: DestinationConfig, who: string, outboxSource?: string): Destination {
    const { kind, setting, arn } = givenDestination(config, who);
    const rules = DESTINATION_ARN_RULES[kind];
    if (typeof arn !== "string" || !rules.valid(arn))
        throw invalid(
            `${who}: ${setting} is ${JSON.stringify(arn)}; expected ${rules.what}, ${rules.shape}; pass the ${rules.unit}'s arn (${rules.notThe})`,
            { [setting]: String(arn) },
        );
    const client = config[CLIENT_SETTINGS[kind]];
    if (typeof (client as ClientLike | undefined)?.send !== "function")
        throw invalid(
            `${who}: ${CLIENT_SETTINGS[kind]} must be an AWS SDK v3 client (an object with send) when ${setting} is set, got ${client === undefined ? "undefined" : typeof client}`,
            { [setting]: arn },
        );
    const fifo = checkedFifo(who, kind, setting, arn, config.fifo);
    const source = checkedEventSource(who, kind, config.eventSource);
    const cloudEvents =
        config.cloudEvents === undefined ? undefined : cloudEventsWriter(config.cloudEvents, who, outboxSource);
    if (kind === DESTINATION_KINDS.sns) return snsDestination(client as ClientLike, arn, fifo, cloudEvents);
    if (kind === DESTINATION_KINDS.sqs) return sqsDestination(client as ClientLike, arn, fifo, cloudEvents);
    return eventBridgeDestination(client as ClientLike, arn, source, cloudEvents);
}

/**
 * Why a destination cannot be reached with a client of `clientRegion`, or `undefined`: its ARN names another region
 * (and every record would fail the same way).
 *
 * @param who - The factory's name, for the message.
 * @param destination - The destination.
 * @param clientRegion - The region of the destination's client, when known.
 */
export function destinationRegionProblem(
    who: string,
    destination: Pick<Destination, "kind" | "arn">,
    clientRegion: string | undefined,
): OutboxError | undefined {
    const arnRegion = destinationArnRegion(destination.arn);
    if (arnRegion === undefined || clientRegion === undefined || arnRegion === clientRegion) return undefined;
    const rules = DESTINATION_ARN_RULES[destination.kind];
    const setting = DESTINATION_SETTINGS[destination.kind];
    const label = DESTINATION_LABELS[destination.kind];
    return invalid(
        `${who}: ${setting} ${destination.arn} is in region ${arnRegion}, but the ${label} client's region is ${clientRegion}; ${rules.elsewhere}; point ${setting} at the ${rules.unit} in ${clientRegion}, or give the handler an ${label} client of ${arnRegion}`,
        { [setting]: destination.arn, region: clientRegion },
    );
}

/**
 * The client setting of each kind (`sns`, `sqs`, `eventBridge`): whose region must be the destination's.
 *
 * @param kind - The destination's kind.
 */
export function destinationClientSetting(kind: DestinationKind): "sns" | "sqs" | "eventBridge" {
    return CLIENT_SETTINGS[kind];
}
