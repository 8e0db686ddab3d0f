/**
 * Validation of the destination args (`topicArn`, `queueArn`, `eventBusArn`, `eventSource`, `checkEventBus`,
 * `cloudEvents`, `destinationKmsKeyArn`, and `fifo` against the destination), in the terms of `validation.ts`: the arg path, the
 * bad value, what is allowed and the fix. An outbox has exactly one destination; presence counts, so two
 * destinations are refused even when their values are Outputs.
 *
 * @packageDocumentation
 */
import {
    EVENT_BUS_ARN,
    EVENT_BUS_ARN_SHAPE,
    QUEUE_ARN_SHAPE,
    SNS_TOPIC_ARN,
    SQS_QUEUE_ARN,
    TOPIC_ARN_SHAPE,
} from "../runtime/destination/aws-resource-names";
import { DEFAULT_EVENT_SOURCE, eventSourceProblem } from "../runtime/destination/kind";
import { cloudEventsSourceProblem } from "../runtime/destination/cloud-events";
import type { OutboxArgs } from "./args";
import { KMS_KEY_ARN, checkPattern, isUnknown, show } from "./arg-checks";
import { DESTINATION_ARGS, givenDestinations } from "./destination";
import type { OutboxArgProblem } from "./arg-problem";

/** How a value is quoted: its JSON, or what an Output is. */
function shown(value: unknown): string {
    return isUnknown(value) ? "an Output (not known until deployment)" : show(value);
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
    return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** Exactly one destination: each given one after the first is refused, naming the others. */
function checkOneDestination(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const given = givenDestinations(args);
    for (const key of given.slice(1)) {
        const others = given.filter((k) => k !== key);
        problems.push({
            path: `args.${key}`,
            value: shown(args[key]),
            allowed: `one destination, and ${listed(others)} ${others.length === 1 ? "is" : "are"} given too: an outbox publishes to exactly one of ${listed(DESTINATION_ARGS)} (or, with none, to a topic it creates)`,
            fix: `keep the one the outbox should publish to and remove the other${given.length > 2 ? "s" : ""} of ${listed(given)}`,
        });
    }
}

/**
 * `fifo` against a given topic or queue whose ARN is known: a name ending in `.fifo` needs `fifo: true`, any
 * other `false`.
 */
function checkFifoMatches(args: OutboxArgs, arn: string, noun: "topic" | "queue", problems: OutboxArgProblem[]): void {
    const fifo: unknown = args.fifo;
    // A fifo that is not a plain boolean is refused on its own (checkBooleans, checkPlainOnly).
    if (fifo !== undefined && typeof fifo !== "boolean") return;
    const isFifo = arn.endsWith(".fifo");
    if (isFifo === (fifo === true)) return;
    problems.push({
        path: "args.fifo",
        value: show(fifo ?? false),
        allowed: `${isFifo} for the ${isFifo ? "FIFO" : "standard"} ${noun} ${arn}`,
        fix: `set fifo: ${isFifo}, so the publisher ${isFifo ? "sends" : "does not send"} MessageGroupId and MessageDeduplicationId`,
    });
}

function checkTopic(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const arn = checkPattern(
        args,
        "topicArn",
        SNS_TOPIC_ARN,
        {
            allowed: `an SNS topic ARN, ${TOPIC_ARN_SHAPE}`,
            fix: "pass the topic's `arn` output (not its name or URL), or omit topicArn to create a topic",
        },
        problems,
    );
    if (arn !== undefined) checkFifoMatches(args, arn, "topic", problems);
}

function checkQueue(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const arn = checkPattern(
        args,
        "queueArn",
        SQS_QUEUE_ARN,
        {
            allowed: `an SQS queue ARN, ${QUEUE_ARN_SHAPE} (a FIFO queue's name ends in .fifo)`,
            fix: "pass the queue's `arn` output (not its URL or name)",
        },
        problems,
    );
    if (arn !== undefined) checkFifoMatches(args, arn, "queue", problems);
}

function checkBus(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    checkPattern(
        args,
        "eventBusArn",
        EVENT_BUS_ARN,
        {
            allowed: `an EventBridge event bus ARN, ${EVENT_BUS_ARN_SHAPE}`,
            fix: "pass the bus's `arn` output (not its name); the default bus is arn:aws:events:<region>:<account>:event-bus/default",
        },
        problems,
    );
    if (args.eventBusArn === undefined || args.fifo !== true) return;
    problems.push({
        path: "args.fifo",
        value: "true",
        allowed:
            "false or omitted with eventBusArn: an EventBridge bus is never FIFO (it neither orders nor deduplicates events)",
        fix: "remove fifo; for consumers that need order, publish to a FIFO queue (queueArn of a .fifo queue, with fifo: true) or an SNS FIFO topic (topicArn of a .fifo topic, or fifo: true alone for a created one) instead",
    });
}

function checkEventSource(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const source: unknown = args.eventSource;
    if (source === undefined) return;
    if (args.eventBusArn === undefined) {
        problems.push({
            path: "args.eventSource",
            value: shown(source),
            allowed:
                "only with eventBusArn (it is the Source of the events put on the bus; a topic or a queue has none)",
            fix: "remove eventSource, or set eventBusArn",
        });
        return;
    }
    if (isUnknown(source)) return;
    const problem = typeof source === "string" ? eventSourceProblem(source) : "must be a string";
    if (problem === undefined) return;
    problems.push({
        path: "args.eventSource",
        value: show(source),
        allowed: `an EventBridge Source: 1 to 256 characters, starting with a letter, a digit, ".", "-", "_" or "/", and not with "aws.", but this one ${problem}`,
        fix: `name your application in reverse DNS, e.g. "com.acme.orders", or omit it for "${DEFAULT_EVENT_SOURCE}"`,
    });
}

function checkEventBusCheck(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    if (args.checkEventBus === undefined || args.eventBusArn !== undefined) return;
    problems.push({
        path: "args.checkEventBus",
        value: shown(args.checkEventBus),
        allowed:
            "only with eventBusArn (it turns the check that the bus exists on or off; a topic or a queue has none)",
        fix: "remove checkEventBus, or set eventBusArn",
    });
}

/** `cloudEvents`: a plain object whose `source` is a URI-reference CloudEvents takes (an Output is left alone). */
function checkCloudEvents(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    const cloudEvents: unknown = args.cloudEvents;
    if (cloudEvents === undefined || isUnknown(cloudEvents)) return;
    if (cloudEvents === null || typeof cloudEvents !== "object" || Array.isArray(cloudEvents)) {
        problems.push({
            path: "args.cloudEvents",
            value: show(cloudEvents),
            allowed: 'an object with a source, e.g. { source: "https://orders.example.com" }',
            fix: "pass { source: <a URI-reference> }, or omit cloudEvents for the outbox's own format",
        });
        return;
    }
    const source: unknown = (cloudEvents as { source?: unknown }).source;
    if (isUnknown(source)) return;
    const problem = cloudEventsSourceProblem(source);
    if (problem === undefined) return;
    problems.push({
        path: "args.cloudEvents.source",
        value: show(source),
        allowed: `a CloudEvents source: a non-empty URI-reference (RFC 3986) of at most 1024 characters, with no IP-literal host, but this one ${problem}`,
        fix: 'name where the events come from as a URI, e.g. "https://orders.example.com", "urn:example:orders" or "/orders" (percent-encode spaces and other characters outside RFC 3986)',
    });
}

function checkDestinationKey(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    checkPattern(
        args,
        "destinationKmsKeyArn",
        KMS_KEY_ARN,
        {
            allowed: "a KMS key ARN, arn:aws:kms:<region>:<account>:key/<key-id>",
            fix: "pass the key's `arn` output; the functions' grant names the key ARN, not a key id or an alias",
        },
        problems,
    );
    if (args.destinationKmsKeyArn === undefined || givenDestinations(args).length > 0) return;
    problems.push({
        path: "args.destinationKmsKeyArn",
        value: shown(args.destinationKmsKeyArn),
        allowed: `only with a destination you give (${listed(DESTINATION_ARGS)}); the topic the component creates is encrypted with kmsKeyArn`,
        fix: "remove destinationKmsKeyArn (set kmsKeyArn to encrypt the created topic), or give the destination it encrypts",
    });
}

/**
 * Every problem with the destination args: more than one destination, a topic, queue or bus ARN of the wrong
 * shape, `fifo` that does not match the given topic or queue, `fifo` with a bus, `eventSource` without a bus or
 * that EventBridge refuses, `checkEventBus` without a bus, a `cloudEvents.source` that is no URI-reference,
 * `destinationKmsKeyArn` that is no key ARN or comes without a given destination.
 *
 * @param args - The component args.
 * @param problems - Where the problems go.
 */
export function checkDestinationArgs(args: OutboxArgs, problems: OutboxArgProblem[]): void {
    checkOneDestination(args, problems);
    checkTopic(args, problems);
    checkQueue(args, problems);
    checkBus(args, problems);
    checkEventSource(args, problems);
    checkEventBusCheck(args, problems);
    checkCloudEvents(args, problems);
    checkDestinationKey(args, problems);
}
