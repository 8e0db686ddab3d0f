/**
 * The one check a bus needs before the first event: that it exists. EventBridge's PutEvents accepts an event for a
 * bus that does not exist, answers an EventId and `FailedEntryCount: 0`, and drops it (aws/aws-cli#9186,
 * aws/aws-sdk#186, still so in 2025). A wrong or deleted bus would then complete every record and deliver none, so
 * the handler asks `DescribeEventBus` once per cold start and holds every invocation while the bus is missing.
 *
 * @packageDocumentation
 */
import { DescribeEventBusCommand } from "@aws-sdk/client-eventbridge";
import { OutboxError } from "../errors";
import type { ClientLike, Logger } from "../ports";
import { awsErrorName } from "../store/aws-errors";

/** What the check concluded: the bus exists, it does not (the error to throw), or the answer is not known yet. */
export type BusCheckResult = { readonly known: true; readonly problem?: OutboxError } | { readonly known: false };

/**
 * Ask EventBridge whether the bus exists.
 * - It does: known, no problem.
 * - `ResourceNotFoundException`: known, an `INVALID_CONFIG` problem naming the bus and the fix.
 * - `AccessDeniedException`: the role may not describe the bus (a role not made by the component, or a bus of
 *   another account whose policy grants only `events:PutEvents`): logged once as a warning, and known, no problem.
 * - Anything else (throttled, unreachable): not known; the next invocation asks again.
 *
 * @param who - The factory's name, for messages.
 * @param eventBridge - The EventBridge client.
 * @param eventBusArn - The bus.
 * @param logger - Where the warning goes.
 */
export async function checkBusExists(
    who: string,
    eventBridge: ClientLike,
    eventBusArn: string,
    logger: Logger,
): Promise<BusCheckResult> {
    try {
        await eventBridge.send(new DescribeEventBusCommand({ Name: eventBusArn }));
        return { known: true };
    } catch (err) {
        const code = awsErrorName(err);
        if (code === "ResourceNotFoundException")
            return {
                known: true,
                problem: new OutboxError(
                    "INVALID_CONFIG",
                    `${who}: the event bus ${eventBusArn} does not exist; EventBridge would accept every event put on it and drop it, so nothing is published until it does; create the bus, or point eventBusArn at one that exists`,
                    { cause: err, context: { eventBusArn } },
                ),
            };
        if (code === "AccessDeniedException") {
            logger.warn(
                "outbox handler: cannot check that the event bus exists (events:DescribeEventBus denied); EventBridge drops events put on a bus that does not exist",
                { eventBusArn },
            );
            return { known: true };
        }
        logger.warn("outbox handler: the event bus check failed; it is asked again on the next invocation", {
            eventBusArn,
            code,
        });
        return { known: false };
    }
}

/**
 * The check of a bus, asked once and kept once known: each call returns the problem to throw, if any. A check that
 * failed for another reason is asked again on the next call.
 *
 * @param ask - One check ({@link checkBusExists} bound to its bus).
 */
export function busCheckOnce(ask: () => Promise<BusCheckResult>): () => Promise<OutboxError | undefined> {
    let known: Promise<BusCheckResult> | undefined;
    return async () => {
        known ??= ask();
        const result = await known;
        if (!result.known) {
            known = undefined;
            return undefined;
        }
        return result.problem;
    };
}
