/**
 * A request read into a call, whatever its protocol: SQS's JSON 1.0 when `x-amz-target` says `AmazonSQS.*`,
 * EventBridge's JSON 1.1 when it says `AWSEvents.*`, SNS's awsQuery form otherwise. Each call read gets the next
 * call number. And the shape of an action's answer.
 *
 * @packageDocumentation
 */
import type { IncomingHttpHeaders } from "node:http";
import { ApiError } from "./api-error";
import { queryEntries } from "./aws-query";
import { EVENTS_TARGET_PREFIX, eventsJsonEntries } from "./events-json";
import { jsonEntries, SQS_TARGET_PREFIX } from "./sqs-json";
import type { ServerState } from "./state";
import type { CallInfo } from "./types";

/** `query` for SNS (awsQuery), `json` for SQS (JSON 1.0), `events` for EventBridge (JSON 1.1). */
export type Protocol = "query" | "json" | "events";

/** A parsed request, protocol aside. */
export interface ParsedCall {
    readonly info: CallInfo;
    readonly protocol: Protocol;
    /** The form of an SNS call (empty otherwise). */
    readonly params: URLSearchParams;
    /** The body of an SQS or EventBridge call (empty for SNS). */
    readonly json: Record<string, unknown>;
}

/** An action's answer (XML for SNS, an object for SQS and EventBridge) and the call's outcome (`ok` or `partial`). */
export interface ActionResult {
    readonly body: string | object;
    readonly outcome: string;
}

/** The protocol a request speaks. */
export function protocolOf(headers: IncomingHttpHeaders): Protocol {
    const target = headers["x-amz-target"];
    if (typeof target !== "string") return "query";
    if (target.startsWith(SQS_TARGET_PREFIX)) return "json";
    return target.startsWith(EVENTS_TARGET_PREFIX) ? "events" : "query";
}

function readJson(protocol: Protocol, raw: string): Record<string, unknown> {
    if (protocol === "query" || raw === "") return {};
    try {
        return JSON.parse(raw) as Record<string, unknown>;
    } catch {
        throw protocol === "json"
            ? new ApiError("InvalidParameterValue", 400, "the request body is not JSON")
            : new ApiError("SerializationException", 400, "the request body is not JSON");
    }
}

function actionOf(protocol: Protocol, headers: IncomingHttpHeaders, params: URLSearchParams): string {
    if (protocol === "query") return params.get("Action") ?? "";
    const prefix = protocol === "json" ? SQS_TARGET_PREFIX : EVENTS_TARGET_PREFIX;
    return (headers["x-amz-target"] as string).slice(prefix.length);
}

/**
 * Read the request body into a numbered call.
 *
 * @throws ApiError `InvalidParameterValue` (SQS) or `SerializationException` (EventBridge) for a body that is not
 * JSON (the call gets no number).
 */
export function readCall(state: ServerState, headers: IncomingHttpHeaders, raw: string): ParsedCall {
    const protocol = protocolOf(headers);
    const params = protocol === "query" ? new URLSearchParams(raw) : new URLSearchParams();
    const json = readJson(protocol, raw);
    const action = actionOf(protocol, headers, params);
    const entries =
        protocol === "query"
            ? queryEntries(action, params)
            : protocol === "json"
              ? jsonEntries(action, json)
              : eventsJsonEntries(action, json);
    const destination =
        protocol === "query"
            ? (params.get("TopicArn") ?? undefined)
            : typeof json.QueueUrl === "string"
              ? json.QueueUrl
              : undefined;
    state.callCounter += 1;
    const info: CallInfo = {
        action,
        callNumber: state.callCounter,
        ...(destination === undefined ? {} : { destination }),
        entries,
    };
    return { info, protocol, params, json };
}
