/**
 * The server on `node:http`: each request is read into a call, delayed by the plan's latency, failed by the first
 * call fault rule that fires (an error answer, a dropped connection, or the messages accepted and the answer
 * dropped or held), or executed and answered in its protocol (SNS's XML, SQS's JSON 1.0, EventBridge's JSON 1.1).
 * Every call is logged with its outcome.
 *
 * @packageDocumentation
 */
import * as http from "node:http";
import type { Socket } from "node:net";
import { execute } from "./actions";
import { ApiError } from "./api-error";
import { xmlError } from "./aws-query";
import { EVENTS_CONTENT_TYPE, eventsJsonError } from "./events-json";
import { faultOutcome, injectedError } from "./fault-plan";
import { protocolOf, readCall, type ActionResult, type ParsedCall, type Protocol } from "./request";
import { jsonError, SQS_CONTENT_TYPE } from "./sqs-json";
import type { ServerState } from "./state";
import type { CallFaultRule } from "./types";

/** The open sockets, and the timers of answers held by `AcceptThenTimeout`. */
interface Connections {
    readonly sockets: Set<Socket>;
    readonly holds: Set<NodeJS.Timeout>;
}

function sendError(res: http.ServerResponse, protocol: Protocol, error: ApiError): void {
    if (protocol === "query") {
        res.writeHead(error.status, { "content-type": "text/xml" });
        res.end(xmlError(error));
        return;
    }
    const { headers, body } = protocol === "json" ? jsonError(error) : eventsJsonError(error);
    res.writeHead(error.status, headers);
    res.end(body);
}

const CONTENT_TYPES: Readonly<Record<Protocol, string>> = {
    query: "text/xml",
    json: SQS_CONTENT_TYPE,
    events: EVENTS_CONTENT_TYPE,
};

function send(res: http.ServerResponse, protocol: Protocol, body: string | object): void {
    res.writeHead(200, { "content-type": CONTENT_TYPES[protocol] });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
}

/** Drop the connection after `holdMs`, unless the server stops first. */
function holdThenDrop(connections: Connections, socket: Socket, holdMs: number): void {
    const hold = setTimeout(() => {
        connections.holds.delete(hold);
        socket.destroy();
    }, holdMs);
    connections.holds.add(hold);
}

/** A call whose rule accepts it (`AcceptThenReset`, `AcceptThenTimeout`) or no rule at all: execute it. */
function executeCall(
    state: ServerState,
    call: ParsedCall,
    rule: CallFaultRule | undefined,
    res: http.ServerResponse,
): ActionResult | undefined {
    try {
        return execute(state, call, rule === undefined);
    } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        log(state, call, err.code);
        sendError(res, call.protocol, err);
        return undefined;
    }
}

function log(state: ServerState, call: ParsedCall, outcome: string): void {
    state.callLog.push({
        callNumber: call.info.callNumber,
        action: call.info.action,
        entries: call.info.entries.length,
        outcome,
    });
}

async function handle(
    state: ServerState,
    connections: Connections,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    raw: string,
): Promise<void> {
    let call: ParsedCall;
    try {
        call = readCall(state, req.headers, raw);
    } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        sendError(res, protocolOf(req.headers), err);
        return;
    }
    const latency = state.faults.plan().latencyMs ?? 0;
    if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
    const rule = state.faults.callRule(call.info);
    if (rule !== undefined && rule.kind !== "AcceptThenTimeout" && rule.kind !== "AcceptThenReset") {
        log(state, call, faultOutcome(rule));
        if (rule.kind === "Reset") req.socket.destroy();
        else sendError(res, call.protocol, injectedError(rule));
        return;
    }
    const result = executeCall(state, call, rule, res);
    if (result === undefined) return;
    if (rule === undefined) {
        log(state, call, result.outcome);
        send(res, call.protocol, result.body);
        return;
    }
    log(state, call, faultOutcome(rule));
    if (rule.kind === "AcceptThenReset") req.socket.destroy();
    else holdThenDrop(connections, req.socket, rule.holdMs ?? 10_000);
}

/** A listening server, and how to stop it. */
export interface ListeningServer {
    /** The port it listens on, on 127.0.0.1. */
    readonly port: number;
    /** Stop listening, clear held answers and drop every connection. Idempotent. */
    stop(): Promise<void>;
}

/** Listen on loopback (`port`, or a free one) and answer every request from `state`. */
export async function listen(state: ServerState, port: number | undefined): Promise<ListeningServer> {
    const connections: Connections = { sockets: new Set(), holds: new Set() };
    const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            handle(state, connections, req, res, Buffer.concat(chunks).toString("utf8")).catch((err: unknown) => {
                res.writeHead(500, { "content-type": "text/plain" });
                res.end(`AWS fault server bug: ${err instanceof Error ? err.stack : String(err)}`);
            });
        });
    });
    server.on("connection", (socket: Socket) => {
        connections.sockets.add(socket);
        socket.on("close", () => connections.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port ?? 0, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    let stopping: Promise<void> | undefined;
    return {
        port: typeof address === "object" && address !== null ? address.port : 0,
        stop(): Promise<void> {
            stopping ??= new Promise<void>((resolve) => {
                for (const hold of connections.holds) clearTimeout(hold);
                connections.holds.clear();
                server.close(() => resolve());
                for (const socket of connections.sockets) socket.destroy();
            });
            return stopping;
        },
    };
}
