/**
 * S3 refusals on demand, in front of a real S3 API (fauxqs's): a loopback HTTP proxy that answers the requests a
 * rule picks with S3's own error document (the status, `Code` and `Message` S3 sends), and passes every other request
 * through unchanged. fauxqs's S3 enforces no IAM and no KMS, so it cannot refuse a read for a missing grant or a
 * disabled key; this is how a test makes S3 say `AccessDenied` or `KMS.DisabledException` to the real SDK, which
 * parses the answer as it parses S3's (an error named by the `Code`, with the status in `$metadata`).
 *
 * @packageDocumentation
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

/** An error S3 answers with. */
export interface S3Refusal {
    /** The HTTP status, e.g. 403. */
    readonly status: number;
    /** The error document's `Code`, e.g. `AccessDenied`: the SDK error's name. */
    readonly code: string;
    /** The error document's `Message`. */
    readonly message: string;
}

/** A request, as a rule sees it. */
export interface S3Request {
    /** `GET`, `PUT`, … */
    readonly method: string;
    /** The path and query, e.g. `/bucket/key?x-id=GetObject`. */
    readonly path: string;
}

/** Which requests to refuse, and how; `undefined` passes the request on. */
export type S3RefusalRule = (request: S3Request) => S3Refusal | undefined;

/** A running proxy. */
export interface S3RefusingProxy {
    /** `http://127.0.0.1:<port>`: the endpoint of an S3 client (path-style) that should meet the refusals. */
    readonly endpoint: string;
    /** Requests answered with a refusal so far. */
    readonly refused: readonly S3Request[];
    /** Set the rule (`undefined`: refuse nothing, as at the start). */
    refuse(rule: S3RefusalRule | undefined): void;
    /** Stop listening. */
    stop(): Promise<void>;
}

function errorDocument(refusal: S3Refusal): string {
    const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${escape(refusal.code)}</Code><Message>${escape(refusal.message)}</Message><RequestId>S3REFUSAL0000001</RequestId><HostId>s3-refusals</HostId></Error>`;
}

/**
 * Start a proxy to `target` on a free loopback port.
 *
 * @param target - The S3 endpoint requests go on to, e.g. fauxqs's `http://127.0.0.1:<port>`.
 */
export async function startS3RefusingProxy(target: string): Promise<S3RefusingProxy> {
    const upstream = new URL(target);
    const refused: S3Request[] = [];
    let rule: S3RefusalRule | undefined;
    const server = http.createServer((req, res) => {
        const request = { method: req.method ?? "GET", path: req.url ?? "/" };
        const refusal = rule?.(request);
        if (refusal !== undefined) {
            refused.push(request);
            req.resume();
            const body = errorDocument(refusal);
            res.writeHead(refusal.status, {
                "content-type": "application/xml",
                "content-length": Buffer.byteLength(body),
                "x-amz-request-id": "S3REFUSAL0000001",
            });
            res.end(body);
            return;
        }
        const forward = http.request(
            {
                host: upstream.hostname,
                port: upstream.port,
                method: request.method,
                path: request.path,
                headers: req.headers,
            },
            (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(res);
            },
        );
        forward.on("error", (err) => res.destroy(err));
        req.pipe(forward);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
        endpoint: `http://127.0.0.1:${port}`,
        refused,
        refuse(next) {
            rule = next;
        },
        stop: () =>
            new Promise<void>((resolve, reject) => {
                server.closeAllConnections();
                server.close((err) => (err ? reject(err) : resolve()));
            }),
    };
}
