/**
 * The DynamoDB client the CLI talks through, built from `--region`, `--endpoint` and the injected environment.
 *
 * @packageDocumentation
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../runtime/errors";
import type { CliArgs } from "./args";
import type { CliIo } from "./io";

/** Static credentials read from the environment, when both halves are set. */
export interface EnvCredentials {
    /** `AWS_ACCESS_KEY_ID`. */
    readonly accessKeyId: string;
    /** `AWS_SECRET_ACCESS_KEY`. */
    readonly secretAccessKey: string;
    /** `AWS_SESSION_TOKEN`. @default undefined */
    readonly sessionToken?: string;
}

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
        throw new OutboxError("INVALID_CONFIG", "no AWS region: pass --region (e.g. --region eu-west-1) or set AWS_REGION", { context: { flag: "region" } });
    }
    return region;
}

/**
 * A DynamoDB client for the command line's target. The caller destroys it.
 *
 * @param args - `--region` and `--endpoint`.
 * @param env - Region and credential variables.
 */
export function createDynamoDbClient(args: Pick<CliArgs, "region" | "endpoint">, env: CliIo["env"]): DynamoDBClient {
    return new DynamoDBClient({
        region: resolveRegion(args, env),
        endpoint: args.endpoint,
        credentials: credentialsFromEnv(env),
        maxAttempts: 5,
    });
}
