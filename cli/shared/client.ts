/**
 * The SDK clients the CLI talks through, built from `--region`, the endpoint flags and the injected environment, each
 * bound to the command's deadline (cli/shared/deadline.ts).
 *
 * @packageDocumentation
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { OutboxError } from "../../runtime/errors";
import type { CliArgs } from "./args";
import type { EnvCredentials } from "./credentials";
import { bindToDeadline, REQUEST_BOUNDS, requestBounds, type CommandDeadline, type SdkTarget } from "./deadline";
import type { CliIo } from "./io";

/**
 * The credentials the injected environment carries, or `undefined` to use the default provider chain.
 * Reading them from `io.env` first is what the default chain does with `process.env`; doing it here lets an
 * in-process caller pass credentials without touching the process environment.
 *
 * @param env - The environment.
 */
export function credentialsFromEnv(env: CliIo["env"]): EnvCredentials | undefined {
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) return undefined;
    return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

/**
 * The region: `--region`, then `AWS_REGION`, then `AWS_DEFAULT_REGION`.
 *
 * @throws OutboxError `INVALID_CONFIG` when none is set.
 */
export function resolveRegion(args: Pick<CliArgs, "region">, env: CliIo["env"]): string {
    const region = args.region ?? (env.AWS_REGION || undefined) ?? (env.AWS_DEFAULT_REGION || undefined);
    if (region === undefined) {
        throw new OutboxError(
            "INVALID_CONFIG",
            "no AWS region: pass --region (e.g. --region eu-west-1) or set AWS_REGION",
            { context: { flag: "region" } },
        );
    }
    return region;
}

/** The endpoint as the operator knows it: the URL given, or the region's. */
function endpointText(endpoint: string | undefined, region: string | undefined): string {
    return endpoint ?? (region === undefined ? "the region's endpoint" : `the ${region} endpoint`);
}

/**
 * A DynamoDB client for the command line's target, bound to the deadline. The caller destroys it.
 *
 * @param args - `--region` and `--endpoint`.
 * @param env - Region and credential variables.
 * @param deadline - The command's deadline.
 * @param signal - The signal its calls carry. @default deadline.signal
 * @throws OutboxError `INVALID_CONFIG` when no region is given or set.
 */
export function createDynamoDbClient(
    args: Pick<CliArgs, "region" | "endpoint">,
    env: CliIo["env"],
    deadline: CommandDeadline,
    signal?: AbortSignal,
): DynamoDBClient {
    return boundDynamoDbClient(
        { region: resolveRegion(args, env), endpoint: args.endpoint, credentials: credentialsFromEnv(env) },
        deadline,
        signal,
    );
}

/**
 * A DynamoDB client bound to the deadline, for a region that may be left to the SDK (redrive). The caller destroys it.
 *
 * @param target - Region (@default the SDK's resolution), endpoint and credentials.
 * @param deadline - The command's deadline.
 * @param signal - The signal its calls carry. @default deadline.signal
 */
export function boundDynamoDbClient(
    target: { readonly region?: string; readonly endpoint?: string; readonly credentials?: EnvCredentials },
    deadline: CommandDeadline,
    signal?: AbortSignal,
): DynamoDBClient {
    const client = new DynamoDBClient({
        ...(target.region !== undefined ? { region: target.region } : {}),
        ...(target.endpoint !== undefined ? { endpoint: target.endpoint } : {}),
        ...(target.credentials !== undefined ? { credentials: target.credentials } : {}),
        ...requestBounds(deadline.timeoutMs),
    });
    return bindToDeadline(
        client,
        deadline,
        {
            service: "DynamoDB",
            endpoint: endpointText(target.endpoint, target.region),
            settings: "--endpoint and --region",
        },
        signal,
    );
}

/** Where an SQS client goes and which settings choose it. */
export interface SqsTarget {
    /** The region. @default the SDK's resolution */
    readonly region?: string;
    /** `--sqs-endpoint`. @default the queue URL's host */
    readonly endpoint?: string;
    /** The queue the calls name: the SDK sends them to its host unless an endpoint is given. */
    readonly queueUrl?: string;
    /** Credentials from the environment. @default the default provider chain */
    readonly credentials?: EnvCredentials;
    /** The settings that choose the queue and endpoint, for messages, e.g. `--dlq-url and --sqs-endpoint`. */
    readonly settings: string;
}

/**
 * An SQS client for the DLQ, bound to the deadline. The caller destroys it.
 *
 * @param target - Region, endpoint, queue and credentials.
 * @param deadline - The command's deadline. @default unbounded (an in-process caller's own choice)
 */
export function createSqsClient(target: SqsTarget, deadline?: CommandDeadline): SQSClient {
    const client = new SQSClient({
        ...(target.region !== undefined ? { region: target.region } : {}),
        ...(target.endpoint !== undefined ? { endpoint: target.endpoint } : {}),
        ...(target.credentials !== undefined ? { credentials: target.credentials } : {}),
        maxAttempts: REQUEST_BOUNDS.maxAttempts,
        ...(deadline !== undefined ? requestBounds(deadline.timeoutMs) : {}),
    });
    if (deadline === undefined) return client;
    const endpoint = target.endpoint ?? (target.queueUrl !== undefined ? queueOrigin(target.queueUrl) : undefined);
    const where: SdkTarget = {
        service: "SQS",
        endpoint: endpointText(endpoint, target.region),
        settings: target.settings,
    };
    return bindToDeadline(client, deadline, where);
}

function queueOrigin(queueUrl: string): string | undefined {
    try {
        return new URL(queueUrl).origin;
    } catch {
        return undefined;
    }
}
