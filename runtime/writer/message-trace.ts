/**
 * A message's trace context, as the writer checks it: the `traceparent` and `tracestate` the message gives (W3C
 * Trace Context, `runtime/observability/trace-context.ts`), else the active OpenTelemetry span's as far as the message's headers
 * leave room for it, and the attribute budget: SNS carries at most {@link SNS_MAX_ATTRIBUTES} message attributes,
 * the outbox's own among them.
 *
 * @packageDocumentation
 */
import {
    attributeBudgetOverrun,
    attributesLeft,
    MAX_HEADERS,
    SNS_MAX_ATTRIBUTES,
    type OutboundMessage,
} from "../record/message";
import { activeTraceContext, type OpenTelemetryApi } from "../observability/open-telemetry";
import { invalidPayload as invalid } from "../record/payload-error";
import type { Logger } from "../ports";
import { tracestateProblem, traceparentProblem, type TraceContext } from "../observability/trace-context";

/** The trace context a message gives (`traceparent`, `tracestate`), checked against W3C Trace Context; `undefined` when it gives none. */
export function givenTraceContext(
    message: { readonly traceparent?: unknown; readonly tracestate?: unknown },
    where: string,
    id: string,
    index: number,
): TraceContext | undefined {
    const { traceparent, tracestate } = message;
    if (traceparent === undefined) {
        if (tracestate === undefined) return undefined;
        throw invalid(
            `${where}.tracestate is given without a traceparent; W3C gives a tracestate meaning only next to its traceparent; pass both, or neither (the writer then takes the active OpenTelemetry span's)`,
            { messageId: id, messageIndex: index, field: "tracestate" },
        );
    }
    const parentProblem = traceparentProblem(traceparent);
    if (parentProblem !== undefined) {
        throw invalid(
            `${where}.traceparent (message id "${id}") ${parentProblem}; pass the incoming request's traceparent as it came, or omit it`,
            { messageId: id, messageIndex: index, field: "traceparent" },
        );
    }
    if (tracestate === undefined) return { traceparent: traceparent as string };
    const stateProblem = tracestateProblem(tracestate);
    if (stateProblem !== undefined) {
        throw invalid(
            `${where}.tracestate (message id "${id}") ${stateProblem}; pass the incoming request's tracestate as it came, or omit it`,
            { messageId: id, messageIndex: index, field: "tracestate" },
        );
    }
    return { traceparent: traceparent as string, tracestate: tracestate as string };
}

/**
 * The active span's trace context for a message that gives none, as far as its attributes leave room: with one
 * attribute left, the `traceparent` without the `tracestate`; with none, nothing. Either way with a warning on
 * `logger`, so that turning tracing on never makes a write fail.
 *
 * @param api - The loaded `@opentelemetry/api`.
 * @param logger - The writer's logger.
 * @param headerCount - How many user headers the message has.
 * @param where - `messages[i]`, for the warning.
 * @param id - The message id, for the warning.
 */
export function activeTraceWithin(
    api: OpenTelemetryApi,
    logger: Logger,
    headerCount: number,
    where: string,
    id: string,
): TraceContext | undefined {
    const active = activeTraceContext(api);
    if (active === undefined) return undefined;
    // The outbox's own (outbox.id, outbox.type, outbox.source) come first.
    const room = attributesLeft(headerCount);
    const needed = active.tracestate !== undefined ? 2 : 1;
    if (room >= needed) return active;
    const kept = room >= 1 ? { traceparent: active.traceparent } : undefined;
    logger.warn(
        `write: ${where} (id "${id}") has ${headerCount} headers, which leave ${room} of SNS's ${SNS_MAX_ATTRIBUTES} message attributes for the active trace context; it carries ${kept !== undefined ? "the traceparent without the tracestate" : "no trace context"}; use at most ${MAX_HEADERS - needed} headers to carry it`,
        { messageId: id, headers: headerCount },
    );
    return kept;
}

/**
 * Refuse a message whose attributes (the user headers and the outbox's own, the trace context among them) exceed
 * what SNS carries: SNS refuses it, and raw delivery to SQS drops it.
 *
 * @throws OutboxError `INVALID_PAYLOAD` naming the count, the outbox's attributes, how many headers fit and the fix.
 */
export function checkAttributeBudget(where: string, index: number, outbound: OutboundMessage): void {
    const overrun = attributeBudgetOverrun(outbound);
    if (overrun === undefined) return;
    const { id } = outbound;
    const traceFix =
        outbound.traceparent === undefined
            ? ""
            : outbound.tracestate !== undefined
              ? ", or drop the tracestate (or the trace context)"
              : ", or drop the trace context";
    throw invalid(
        `${where}.headers has ${overrun.headers} entries; at most ${overrun.headersThatFit} fit: the message (id "${id}") would carry ${overrun.count} message attributes, ${overrun.outbox.length} of them the outbox's (${overrun.outbox.join(", ")}), and SNS carries at most ${SNS_MAX_ATTRIBUTES} (raw delivery to SQS drops a message with more); move ${overrun.headers - overrun.headersThatFit} into the payload${traceFix}`,
        {
            messageId: id,
            messageIndex: index,
            attributes: overrun.count,
            headers: overrun.headers,
            maxHeaders: overrun.headersThatFit,
        },
    );
}
