/**
 * Which destination an {@link OutboxArgs} names: the SNS topic (created, or `topicArn`), an SQS queue (`queueArn`)
 * or an EventBridge bus (`eventBusArn`). The kind is decided by which arg is present, never by its value, so an
 * Output (a `StackReference`'s, say) decides it as well as a plain ARN does.
 *
 * @packageDocumentation
 */
import { DESTINATION_KINDS, DESTINATION_SETTINGS, type DestinationKind } from "../runtime/destination/kind";
import type { OutboxArgs } from "./args";

/** The args that name a given destination, in the order the messages list them: `topicArn`, `queueArn`, `eventBusArn`. */
export const DESTINATION_ARGS = Object.values(DESTINATION_SETTINGS);

/** One of {@link DESTINATION_ARGS}. */
export type DestinationArg = (typeof DESTINATION_ARGS)[number];

/**
 * The destination args `args` gives (present, whatever their value), in {@link DESTINATION_ARGS}' order.
 *
 * @param args - The component args.
 */
export function givenDestinations(args: OutboxArgs): DestinationArg[] {
    return DESTINATION_ARGS.filter((key) => args[key] !== undefined);
}

/**
 * The kind of the outbox's destination: `sqs` with `queueArn`, `eventbridge` with `eventBusArn`, else `sns` (the
 * given topic, or the created one). Call after validation, which refuses more than one destination.
 *
 * @param args - The component args.
 */
export function destinationKindOfArgs(args: OutboxArgs): DestinationKind {
    if (args.queueArn !== undefined) return DESTINATION_KINDS.sqs;
    if (args.eventBusArn !== undefined) return DESTINATION_KINDS.eventBridge;
    return DESTINATION_KINDS.sns;
}
