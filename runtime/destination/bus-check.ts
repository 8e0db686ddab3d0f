/**
 * The one check a bus needs before events go on it: that it exists. EventBridge's PutEvents accepts an event for a
 * bus that does not exist, answers an EventId and `FailedEntryCount: 0`, and drops it (aws/aws-cli#9186,
 * aws/aws-sdk#186, still so in 2025). A wrong or deleted bus would then complete every record and deliver none.
 *
 * So a handler asks `DescribeEventBus` before its first PutEvents, and again once its answer is
 * {@link BUS_CHECK_INTERVAL_MS} old, and puts nothing on a bus whose existence is not confirmed:
 * - the bus exists: the invocation goes on;
 * - it does not, or the role may not describe it: `INVALID_CONFIG`, a fault of the deployment, thrown from every
 *   invocation (the shard holds, a sweep fails) until a later check finds it fixed;
 * - no answer (throttled, unreachable, an error not named here): a transient error, thrown from this invocation
 *   only. The answer is never kept: the next invocation asks again.
 *
 * @packageDocumentation
 */
import { eventBridgeSdk } from "../sdk-clients";
import { OutboxError } from "../errors";
import type { Clock, ClientLike } from "../ports";
import { awsErrorName } from "../store/aws-errors";

/**
 * How long a handler keeps a bus check's answer, in ms: a warm handler asks again before its first invocation past
 * it. A bus deleted while a handler is warm is found within this long (EventBridge drops what is put on it until
 * then), and each warm handler asks at most once per interval: one `DescribeEventBus` call per minute per warm
 * container, whatever the message rate (docs/runtime.md, "A bus that does not exist").
 */
export const BUS_CHECK_INTERVAL_MS = 60_000;

/** The IAM action the check needs on the bus. */
export const BUS_CHECK_PERMISSION = "events:DescribeEventBus";

/**
 * What one check concluded: known (the bus exists, or the `INVALID_CONFIG` problem to throw), or not known (the
 * transient error to throw from this invocation only).
 */
export type BusCheckResult =
    { readonly known: true; readonly problem?: OutboxError } | { readonly known: false; readonly error: OutboxError };

/**
 * Ask EventBridge once whether the bus exists.
 * - It does: known, no problem.
 * - `ResourceNotFoundException`: known, `INVALID_CONFIG` naming the bus and the fix.
 * - `AccessDeniedException`: known, `INVALID_CONFIG` naming the permission, the bus and the fix: a bus whose
 *   existence cannot be confirmed gets no events.
 * - Anything else (throttled, unreachable): not known, a transient `UNAVAILABLE` naming the bus and the code.
 *
 * @param who - The factory's name, for messages.
 * @param eventBridge - The EventBridge client.
 * @param eventBusArn - The bus.
 */
export async function checkBusExists(
    who: string,
    eventBridge: ClientLike,
    eventBusArn: string,
): Promise<BusCheckResult> {
    try {
        await eventBridge.send(new (eventBridgeSdk().DescribeEventBusCommand)({ Name: eventBusArn }));
        return { known: true };
    } catch (err) {
        const code = awsErrorName(err);
        if (code === "ResourceNotFoundException")
            return {
                known: true,
                problem: new OutboxError(
                    "INVALID_CONFIG",
                    `${who}: the event bus ${eventBusArn} does not exist; EventBridge would accept every event put on it and drop it, so nothing is published until it does; create the bus, or point eventBusArn at one that exists`,
                    { cause: err, context: { eventBusArn, awsCode: code } },
                ),
            };
        if (code === "AccessDeniedException")
            return {
                known: true,
                problem: new OutboxError(
                    "INVALID_CONFIG",
                    `${who}: the function's role may not call ${BUS_CHECK_PERMISSION} on the event bus ${eventBusArn}, so it cannot confirm that the bus exists (EventBridge accepts and drops events put on a bus that does not); nothing is published until it can: grant ${BUS_CHECK_PERMISSION} on the bus to the role (for a bus in another account, the bus's resource policy must grant it to the role too), or, only if that cannot be done, turn the check off with checkEventBus: false and accept that events put on a missing bus are lost`,
                    { cause: err, context: { eventBusArn, awsCode: code, permission: BUS_CHECK_PERMISSION } },
                ),
            };
        return {
            known: false,
            error: new OutboxError(
                "UNAVAILABLE",
                `${who}: the check that the event bus ${eventBusArn} exists got no answer (${code || "no error code"}); nothing is put on a bus whose existence is not confirmed, so this invocation fails and the next one asks again`,
                { transient: true, cause: err, context: { eventBusArn, awsCode: code } },
            ),
        };
    }
}

/**
 * The bus check of a warm handler: each call returns the error to throw, if any. A known answer is kept for
 * `intervalMs` from when it was asked (while the clock does not go back); an unknown one is returned once and
 * never kept, so the next call asks again. Calls made while a check is in flight share it.
 *
 * @param ask - One check ({@link checkBusExists} bound to its bus).
 * @param clock - When the answer was asked, and how old it is.
 * @param intervalMs - How long a known answer is kept. @default BUS_CHECK_INTERVAL_MS
 */
export function busCheckEvery(
    ask: () => Promise<BusCheckResult>,
    clock: Pick<Clock, "now">,
    intervalMs: number = BUS_CHECK_INTERVAL_MS,
): () => Promise<OutboxError | undefined> {
    let known: { readonly askedAt: number; readonly problem: OutboxError | undefined } | undefined;
    let inFlight: Promise<BusCheckResult> | undefined;
    return async () => {
        const now = clock.now();
        if (known !== undefined && now >= known.askedAt && now - known.askedAt < intervalMs) return known.problem;
        known = undefined;
        inFlight ??= ask()
            .then((answer) => {
                if (answer.known) known = { askedAt: now, problem: answer.problem };
                return answer;
            })
            .finally(() => {
                inFlight = undefined;
            });
        const answer = await inFlight;
        return answer.known ? answer.problem : answer.error;
    };
}
