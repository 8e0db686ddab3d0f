/**
 * OpenTelemetry, where the application runs it: `@opentelemetry/api` is an optional peer dependency, loaded
 * lazily with a guarded `require`, so an application without it installs and runs as before. The writer reads the
 * active span's context from it; a consumer builds a span link to the writer's span with {@link traceLink}.
 *
 * The types below are the few parts of the API this package touches, written out structurally, so that the
 * package's declarations do not name `@opentelemetry/api` either.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";
import { parseTraceparent, tracestateProblem, traceparentProblem, type TraceContext } from "./trace-context";

/** The W3C trace state, as OpenTelemetry's `TraceState` interface has it. */
export interface OpenTelemetryTraceState {
    /** Set a key (a new state). */
    set(key: string, value: string): OpenTelemetryTraceState;
    /** Remove a key (a new state). */
    unset(key: string): OpenTelemetryTraceState;
    /** A key's value. */
    get(key: string): string | undefined;
    /** The `tracestate` header value. */
    serialize(): string;
}

/** A span context, as OpenTelemetry's `SpanContext` has it. */
export interface OpenTelemetrySpanContext {
    /** 32 lowercase hex digits. */
    readonly traceId: string;
    /** 16 lowercase hex digits. */
    readonly spanId: string;
    /** The trace flags (bit 0: sampled). */
    readonly traceFlags: number;
    /** Whether the context came from another process. @default undefined */
    readonly isRemote?: boolean;
    /** The trace state. @default undefined */
    readonly traceState?: OpenTelemetryTraceState;
}

/** A span link, as OpenTelemetry's `Link` has it: pass it in `links` when you start the consumer's span. */
export interface OpenTelemetryLink {
    /** The linked span's context: the writer's span. */
    readonly context: OpenTelemetrySpanContext;
}

/** The parts of `@opentelemetry/api` this package uses. */
export interface OpenTelemetryApi {
    /** The context API. */
    readonly context: { active(): unknown };
    /** The trace API. */
    readonly trace: { getSpanContext(context: unknown): OpenTelemetrySpanContext | undefined };
    /** Whether a span context has valid, non-zero ids. */
    isSpanContextValid(spanContext: OpenTelemetrySpanContext): boolean;
    /** A trace state from its header value. */
    createTraceState(raw?: string): OpenTelemetryTraceState;
}

/** The optional peer's name. */
export const OPENTELEMETRY_API = "@opentelemetry/api";

/**
 * `@opentelemetry/api` when the application has it installed, else `undefined`. A copy that is installed but fails
 * to load is an error, not "absent": silently carrying no trace context would hide it.
 *
 * @param load - How to load it (tests pass a loader that fails as a missing package does). @default `require("@opentelemetry/api")`
 * @throws OutboxError `INVALID_CONFIG` when the package is there but cannot be loaded, or is not the 1.x API.
 */
export function loadOpenTelemetryApi(load?: () => unknown): OpenTelemetryApi | undefined {
    let api: unknown;
    try {
        // A literal name inside try: bundlers (esbuild, webpack) then treat the import as optional.
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded only if installed
        api = load !== undefined ? load() : require("@opentelemetry/api");
    } catch (err) {
        const e = err as { code?: unknown; message?: unknown };
        // Only the peer itself missing means "not installed"; a dependency of it missing is a broken install.
        if (
            e?.code === "MODULE_NOT_FOUND" &&
            typeof e.message === "string" &&
            e.message.includes(`'${OPENTELEMETRY_API}'`)
        )
            return undefined;
        throw new OutboxError(
            "INVALID_CONFIG",
            `${OPENTELEMETRY_API} is installed but could not be loaded (${err instanceof Error ? err.message.split("\n")[0] : String(err)}); reinstall it, or uninstall it to run without OpenTelemetry`,
            { cause: err },
        );
    }
    const a = api as Partial<OpenTelemetryApi> | null;
    if (
        a === null ||
        typeof a !== "object" ||
        typeof a.context?.active !== "function" ||
        typeof a.trace?.getSpanContext !== "function" ||
        typeof a.isSpanContextValid !== "function" ||
        typeof a.createTraceState !== "function"
    ) {
        throw new OutboxError(
            "INVALID_CONFIG",
            `${OPENTELEMETRY_API} is installed but is not the 1.x API (no context.active, trace.getSpanContext, isSpanContextValid or createTraceState); install @opentelemetry/api@^1.3.0`,
        );
    }
    return a as OpenTelemetryApi;
}

/**
 * The trace context of the active OpenTelemetry span, as a W3C `traceparent` (version 00) and, when the span has
 * one, its `tracestate`; `undefined` when no valid span is active. It is read from the span context itself, so it
 * is W3C whatever propagator the application configured. A `tracestate` this package would refuse is left out.
 *
 * @param api - The loaded API ({@link loadOpenTelemetryApi}).
 */
export function activeTraceContext(api: OpenTelemetryApi): TraceContext | undefined {
    const span = api.trace.getSpanContext(api.context.active());
    if (span === undefined || !api.isSpanContextValid(span)) return undefined;
    const traceparent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
    if (traceparentProblem(traceparent) !== undefined) return undefined;
    const tracestate = span.traceState?.serialize();
    return {
        traceparent,
        ...(tracestate !== undefined && tracestate !== "" && tracestateProblem(tracestate) === undefined
            ? { tracestate }
            : {}),
    };
}

/**
 * A span link to the writer's span, from the trace context a consumer was handed (an `InboxMessage`): pass it
 * in `links` when you start the span that processes the message, as OpenTelemetry's messaging conventions ask
 * (a consumer links to each message's creation context rather than taking it as parent). `undefined` when the
 * message carries no valid `traceparent`. The trace state is included when `@opentelemetry/api` is installed.
 *
 * @param message - What the consumer got: its `traceparent` and `tracestate`.
 * @param api - The API, for the trace state. @default the installed `@opentelemetry/api`, if any
 * @example
 * const link = traceLink(message);
 * tracer.startActiveSpan("process OrderCreated", { kind: SpanKind.CONSUMER, links: link ? [link] : [] }, (span) => { … });
 */
export function traceLink(
    message: { readonly traceparent?: string; readonly tracestate?: string },
    api: OpenTelemetryApi | undefined = loadOpenTelemetryApi(),
): OpenTelemetryLink | undefined {
    const fields = parseTraceparent(message?.traceparent);
    if (fields === undefined) return undefined;
    const tracestate = message.tracestate;
    const traceState =
        api !== undefined && tracestate !== undefined && tracestateProblem(tracestate) === undefined
            ? api.createTraceState(tracestate)
            : undefined;
    return {
        context: {
            traceId: fields.traceId,
            spanId: fields.parentId,
            traceFlags: Number.parseInt(fields.traceFlags, 16),
            isRemote: true,
            ...(traceState !== undefined ? { traceState } : {}),
        },
    };
}
