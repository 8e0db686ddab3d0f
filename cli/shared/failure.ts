/**
 * What the operator should do about a failed AWS call, read from the error and its causes: the deadline ran out,
 * no credentials were found, the endpoint cannot be reached (and why), a request timed out, something that is not
 * the service answered, or the DLQ does not exist. Each message names the service, the endpoint and the setting to
 * check; an error none of these explain keeps its own text ({@link errorText} in io.ts).
 *
 * @packageDocumentation
 */
import { isOutboxError } from "../../runtime/errors";
import { callSiteMessage } from "../../runtime/store/aws-errors";
import { callOfError, callText, isDeadlineReason, type CommandDeadline, type SdkCall } from "./deadline";
import { seconds } from "./format";

/** The fields of SDK and Node errors read here. */
interface ErrorShape {
    readonly name?: unknown;
    readonly message?: unknown;
    readonly code?: unknown;
    readonly cause?: unknown;
    readonly $metadata?: { readonly httpStatusCode?: number; readonly attempts?: number };
}

/** Node's network error codes, with what each means for the operator. */
const NETWORK_ERRORS: Readonly<Record<string, string>> = {
    ECONNREFUSED: "the connection was refused: nothing listens on that host and port",
    ENOTFOUND: "the host name does not resolve",
    EAI_AGAIN: "the host name could not be resolved: DNS did not answer",
    EHOSTUNREACH: "the host is unreachable from here",
    ENETUNREACH: "the network is unreachable from here",
    ETIMEDOUT: "the connection timed out",
    ECONNRESET: "the connection was reset",
    EPIPE: "the connection was closed while the request was sent",
};

/** What an error reads as: a name, a message, and the fields above. */
function shape(err: unknown): ErrorShape {
    return typeof err === "object" && err !== null ? (err as ErrorShape) : {};
}

function nameOf(err: unknown): string {
    const name = shape(err).name;
    return typeof name === "string" ? name : "";
}

function messageOf(err: unknown): string {
    const message = shape(err).message;
    return typeof message === "string" ? message : String(err);
}

/** `err` and its causes, outermost first (at most 10, in case of a cycle). */
function causeChain(err: unknown): unknown[] {
    const chain: unknown[] = [];
    for (let e: unknown = err; e !== undefined && e !== null && chain.length < 10; e = shape(e).cause) chain.push(e);
    return chain;
}

/** Where the call went, for a sentence: `DynamoDB at http://127.0.0.1:8000`, or `the AWS endpoint`. */
function where(call: SdkCall | undefined): string {
    return call === undefined ? "the AWS endpoint" : `${call.service} at ${call.endpoint}`;
}

/** The settings that choose the endpoint of the call, for "check …". */
function settingsOf(call: SdkCall | undefined): string {
    return call?.settings ?? "the endpoint and region";
}

function attemptsOf(chain: readonly unknown[]): string {
    const attempts = chain.map((e) => shape(e).$metadata?.attempts).find((n) => typeof n === "number");
    return attempts === undefined ? "" : `, ${attempts} attempt(s)`;
}

function timedOut(reason: string, call: SdkCall | undefined): string {
    const during =
        call === undefined
            ? ""
            : call.afterDeadline
              ? `, before ${callText(call)} could start`
              : ` while waiting for ${callText(call)}`;
    return `timed out: ${reason}${during}; check that the endpoint answers, or raise --timeout`;
}

/**
 * The message of a deadline that ran out, naming the oldest call still in flight.
 *
 * @param deadline - A deadline whose `--timeout` ran out.
 */
export function explainDeadline(deadline: CommandDeadline): string {
    const reason: unknown = deadline.signal.reason;
    return timedOut(
        isDeadlineReason(reason)
            ? messageOf(reason)
            : `--timeout ran out (it bounds the whole ${deadline.command} command)`,
        [...deadline.inFlight][0],
    );
}

/**
 * Explain a failure for the operator, or `undefined` when the error is none of the cases this module knows.
 *
 * @param err - What a command caught.
 * @returns One line: what failed (the package error's message, when there is one), then what it means and the fix.
 */
export function explainFailure(err: unknown): string | undefined {
    const chain = causeChain(err);
    const call = chain.map(callOfError).find((c) => c !== undefined);
    const context = isOutboxError(err) && !isDeadlineReason(err) ? `${callSiteMessage(err)}: ` : "";

    const deadline = chain.find(isDeadlineReason);
    if (deadline !== undefined) return `${context}${timedOut(messageOf(deadline), call)}`;

    const credentials = chain.find(
        (e) => nameOf(e) === "CredentialsProviderError" || nameOf(e) === "TokenProviderError",
    );
    if (credentials !== undefined) {
        return (
            `${context}no usable AWS credentials${call === undefined ? "" : ` for ${call.service}`} (${nameOf(credentials)}: ${messageOf(credentials)}): ` +
            "set AWS_PROFILE to a profile of ~/.aws/config (run aws sso login first for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run where an instance or task role is available"
        );
    }

    const timeout = chain.find((e) => nameOf(e) === "TimeoutError");
    if (timeout !== undefined && /requestTimeout/.test(messageOf(timeout))) {
        const bound = /(\d+) ms requestTimeout/.exec(messageOf(timeout))?.[1];
        return `${context}${where(call)} did not answer ${call?.operation ?? "the request"} within the request timeout${bound === undefined ? "" : ` of ${seconds(Number(bound))}`}${attemptsOf(chain)} (each request's own bound; --timeout bounds the whole command): check ${settingsOf(call)}, and that the endpoint answers`;
    }
    if (timeout !== undefined && /did not establish a connection/.test(messageOf(timeout))) {
        const bound = /timeout of (\d+) ms/.exec(messageOf(timeout))?.[1];
        return `${context}could not connect to ${where(call)} within the connection timeout${bound === undefined ? "" : ` of ${seconds(Number(bound))}`}${attemptsOf(chain)}: check ${settingsOf(call)}, and the network, proxy or firewall in between`;
    }

    const network = chain.find(
        (e) => typeof shape(e).code === "string" && NETWORK_ERRORS[shape(e).code as string] !== undefined,
    );
    if (network !== undefined) {
        const code = shape(network).code as string;
        return `${context}cannot reach ${where(call)}: ${code}, ${NETWORK_ERRORS[code]} (${messageOf(network)}): check ${settingsOf(call)}, and that the host and port are reachable from here`;
    }

    const queue = chain.find(
        (e) => nameOf(e) === "QueueDoesNotExist" || nameOf(e) === "AWS.SimpleQueueService.NonExistentQueue",
    );
    if (queue !== undefined) {
        return `${context}the queue does not exist at ${where(call)} (${nameOf(queue)}: ${messageOf(queue)}): check the DLQ URL (the Outbox component's dlqUrl output) and that it is in the region used`;
    }

    // The SDK's two ways of saying "this is not my service's answer": an empty error body (`UnknownError`) and a body
    // it cannot parse (a `SyntaxError`, "Deserialization error"), both with the HTTP status.
    const notTheService = (e: unknown) =>
        nameOf(e) === "Unknown" ||
        nameOf(e) === "UnknownError" ||
        messageOf(e) === "UnknownError" ||
        nameOf(e) === "SyntaxError" ||
        /Deserialization error/.test(messageOf(e));
    const unknown = chain.find((e) => notTheService(e) && shape(e).$metadata?.httpStatusCode !== undefined);
    if (unknown !== undefined) {
        const service = call?.service ?? "an AWS";
        return `${context}${where(call)} answered HTTP ${shape(unknown).$metadata?.httpStatusCode} with something that is not ${call === undefined ? "an AWS" : `a ${service}`} response: check that ${settingsOf(call)} point at ${call?.service ?? "the service"} (another server, or a proxy, answered)`;
    }
    return undefined;
}
