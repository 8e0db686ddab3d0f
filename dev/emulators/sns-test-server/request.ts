/**
 * A request read into a call, whatever its protocol: SQS's JSON when `x-amz-target` says `AmazonSQS.*`, SNS's
 * awsQuery form otherwise. Each call read gets the next call number. And the shape of an action's answer.
 *
 * @packageDocumentation
 */
import type { IncomingHttpHeaders } from "node:http";
import { ApiError } from "./api-error";
import { queryEntries } from "./aws-query";
import { jsonEntries, SQS_TARGET_PREFIX } from "./sqs-json";
import type { ServerState } from "./state";
import type { CallInfo } from "./types";

/** `query` for SNS (awsQuery), `json` for SQS (JSON 1.0). */
export type Protocol = "query" | "json";

/** A parsed request, protocol aside. */
export interface ParsedCall {
    readonly info: CallInfo;
    readonly protocol: Protocol;
    /** The form of an SNS call (empty for SQS). */
    readonly params: URLSearchParams;
    /** The body of an SQS call (empty for SNS). */
    readonly json: Record<string, unknown>;
}

/** An action's answer (XML for SNS, an object for SQS) and the call's outcome (`ok` or `partial`). */
export interface ActionResult {
    readonly body: string | object;
    readonly outcome: string;
}

/** The protocol a request speaks. */
export function protocolOf(headers: IncomingHttpHeaders): Protocol {
    const target = headers["x-amz-target"];
    return typeof target === "string" && target.startsWith(SQS_TARGET_PREFIX) ? "json" : "query";
}

/**
 * Read the request body into a numbered call.
 *
 * @throws ApiError `InvalidParameterValue` for an SQS body that is not JSON (the call gets no number).
 */
export function readCall(state: ServerState, headers: IncomingHttpHeaders, raw: string): ParsedCall {
    const protocol = protocolOf(headers);
    const params = protocol === "query" ? new URLSearchParams(raw) : new URLSearchParams();
    let json: Record<string, unknown> = {};
    if (protocol === "json") {
        try {
            json = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
        } catch {
            throw new ApiError("InvalidParameterValue", 400, "the request body is not JSON");
        }
    }
    const action =
        protocol === "json"
            ? (headers["x-amz-target"] as string).slice(SQS_TARGET_PREFIX.length)
            : (params.get("Action") ?? "");
    const entries = protocol === "query" ? queryEntries(action, params) : jsonEntries(action, json);
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
