/**
 * The consumer's queue in the policy pack (`outbox-consumer-queue`): the queue an `OutboxConsumer`'s event source
 * mapping reads must send a message that keeps failing to a DLQ (a redrive policy), and must hide a received
 * message for at least 6 times the function's timeout, as AWS advises for Lambda, so a batch still in flight (with
 * the poller's retries) is not handed out again.
 *
 * Scope: the mappings declared inside an `OutboxConsumer` (its type in their URN), and through each mapping the
 * queue it reads and the function it invokes. A consumer wired by hand carries no mark of the component, so it is
 * not judged, like every other queue of the stack.
 *
 * The queue's redrive policy is its `redrivePolicy` property or an `aws.sqs.RedrivePolicy` on its URL (the
 * component sets one on a destination queue it reads as it is). The visibility timeout is judged only when both the
 * queue and the function are declared in the stack (a destination queue from another stack, or a `functionArn`
 * function, is not); an absent `visibilityTimeoutSeconds` or `timeout` counts as AWS's default (30 s, 3 s). A value
 * still unknown during a preview is never a violation.
 *
 * @packageDocumentation
 */
import type { EnforcementLevel, StackValidationPolicy } from "@pulumi/policy";
import { VISIBILITY_TIMEOUT_FACTOR } from "../components/consumer-args";
import { OUTBOX_CONSUMER_TYPE } from "../components/consumer-naming";
import { queueUrlOfArn } from "../runtime/destination/aws-resource-names";
import { RESOURCE_TYPES, known, stackPolicy, urnTypes, type StackResourceView, type StackViolation } from "./scope";

/** The type token of a queue's redrive policy declared as a resource of its own. */
export const REDRIVE_POLICY_TYPE = "aws:sqs/redrivePolicy:RedrivePolicy";

/** AWS's defaults when the property is absent: an SQS queue's visibility timeout, a Lambda function's timeout. */
export const AWS_DEFAULT_SECONDS = { visibilityTimeout: 30, functionTimeout: 3 } as const;

/** What `known()` returns for an unknown value, apart from a real `undefined`. */
const UNKNOWN: unique symbol = Symbol("unknown");

/** `r.props[property]`, or {@link UNKNOWN} when the analyzer does not know it yet. */
function prop(r: StackResourceView, property: string): unknown {
    const box = known(() => ({ value: r.props[property] as unknown }));
    return box === undefined ? UNKNOWN : box.value;
}

/** Whether a resource was declared inside an OutboxConsumer: its type is in the URN before the resource's own. */
export function declaredInsideOutboxConsumer(urn: string): boolean {
    return urnTypes(urn).slice(0, -1).includes(OUTBOX_CONSUMER_TYPE);
}

/** The resource of `type` that `r.props[property]` refers to: a property dependency on it, or one of its identifiers. */
function referenced(
    resources: readonly StackResourceView[],
    type: string,
    r: StackResourceView,
    property: string,
    identifiers: readonly string[],
): StackResourceView | undefined {
    const dependency = (r.propertyDependencies?.[property] ?? []).find((d) => d.type === type);
    if (dependency !== undefined) return dependency;
    const value = prop(r, property);
    if (typeof value !== "string" || value === "") return undefined;
    return resources.find((c) => c.type === type && identifiers.some((i) => prop(c, i) === value));
}

/**
 * What is wrong with a redrive policy's value, or `undefined` when it names a DLQ and a receive count (or is not
 * known yet).
 */
function redriveProblem(value: unknown): string | undefined {
    if (value === UNKNOWN) return undefined;
    if (value === undefined || value === null || value === "") return "no redrive policy";
    let parsed: unknown = value;
    if (typeof value === "string") {
        try {
            parsed = JSON.parse(value);
        } catch {
            return `a redrive policy that is not JSON (${JSON.stringify(value)})`;
        }
    }
    const p = (parsed ?? {}) as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
    if (typeof p.deadLetterTargetArn !== "string" || p.deadLetterTargetArn === "")
        return `a redrive policy without a deadLetterTargetArn (${JSON.stringify(parsed)})`;
    const count = Number(p.maxReceiveCount);
    if (!Number.isInteger(count) || count < 1)
        return `a redrive policy without a maxReceiveCount of at least 1 (${JSON.stringify(parsed)})`;
    return undefined;
}

/**
 * The violations of the queues `OutboxConsumer`s read: no redrive policy to a DLQ, or a visibility timeout below
 * 6 times the function's timeout (the component's `VISIBILITY_TIMEOUT_FACTOR`).
 *
 * @param resources - The stack's resources, as a stack policy gets them.
 */
export function consumerQueueViolations(resources: readonly StackResourceView[]): StackViolation[] {
    const out: StackViolation[] = [];
    const mappings = resources.filter((r) => r.type === RESOURCE_TYPES.mapping && declaredInsideOutboxConsumer(r.urn));
    for (const mapping of mappings) {
        const source = prop(mapping, "eventSourceArn");
        const queue = referenced(resources, RESOURCE_TYPES.queue, mapping, "eventSourceArn", ["arn"]);
        const url =
            queue !== undefined ? prop(queue, "url") : typeof source === "string" ? queueUrlOfArn(source) : undefined;
        const what =
            queue !== undefined
                ? `consumer queue "${queue.name}" (read by mapping "${mapping.name}")`
                : `the queue consumer mapping "${mapping.name}" reads (${typeof source === "string" ? source : "unknown"})`;
        const urn = queue?.urn ?? mapping.urn;

        const redrives = [
            ...(queue === undefined ? [] : [prop(queue, "redrivePolicy")]),
            ...resources
                .filter(
                    (r) =>
                        r.type === REDRIVE_POLICY_TYPE &&
                        ((queue !== undefined &&
                            (r.propertyDependencies?.queueUrl ?? []).some((d) => d.urn === queue.urn)) ||
                            (typeof url === "string" && prop(r, "queueUrl") === url)),
                )
                .map((r) => prop(r, "redrivePolicy")),
        ];
        // The queue is not known yet (a preview): nothing to judge.
        if (queue === undefined && typeof source !== "string") continue;
        if (!redrives.some((r) => redriveProblem(r) === undefined)) {
            const problem = redrives.map(redriveProblem).find((p) => p !== undefined) ?? "no redrive policy";
            out.push({
                urn,
                message: `${what} has ${problem}; a message that fails every receive is retried until its retention ends, then lost: give it a redrivePolicy with a deadLetterTargetArn and a maxReceiveCount (the OutboxConsumer component does)`,
            });
        }

        const fn = referenced(resources, RESOURCE_TYPES.fn, mapping, "functionName", ["arn", "name"]);
        if (queue === undefined || fn === undefined) continue;
        const visibility = prop(queue, "visibilityTimeoutSeconds");
        const timeout = prop(fn, "timeout");
        if (visibility === UNKNOWN || timeout === UNKNOWN) continue;
        const v = visibility === undefined ? AWS_DEFAULT_SECONDS.visibilityTimeout : Number(visibility);
        const t = timeout === undefined ? AWS_DEFAULT_SECONDS.functionTimeout : Number(timeout);
        const least = VISIBILITY_TIMEOUT_FACTOR * t;
        if (!(v >= least)) {
            out.push({
                urn,
                message: `${what} has a visibility timeout of ${v} s, below ${VISIBILITY_TIMEOUT_FACTOR} × the timeout of function "${fn.name}" (${t} s) = ${least} s; a message of a batch still in flight is handed out again: set visibilityTimeoutSeconds to at least ${least} (the OutboxConsumer component sets ${VISIBILITY_TIMEOUT_FACTOR} × timeout)`,
            });
        }
    }
    return out;
}

/**
 * The stack policy `outbox-consumer-queue`.
 *
 * @param enforcementLevel - Its level when the pack's config sets none.
 */
export function outboxConsumerQueuePolicy(enforcementLevel: EnforcementLevel): StackValidationPolicy {
    return stackPolicy(
        "outbox-consumer-queue",
        `The queue an OutboxConsumer's mapping reads has a redrive policy to a DLQ, and a visibility timeout of at least ${VISIBILITY_TIMEOUT_FACTOR} times the function's timeout.`,
        enforcementLevel,
        consumerQueueViolations,
    );
}
