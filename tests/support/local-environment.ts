/**
 * The environment a serialized handler runs with in the end-to-end tests: the component's, with its names pointed
 * at the local resources, and the SDK's own variables aiming the handler's clients at DynamoDB Local and a local
 * SNS/SQS endpoint.
 *
 * @packageDocumentation
 */
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";
import { ENV } from "../../runtime/config";
import { dynamoEndpoint } from "./dynamodb";

/** The local resources a handler's names point at. */
export interface LocalNames {
    readonly tableName: string;
    readonly topicArn: string;
    readonly dlqUrl: string;
}

/**
 * The handler's environment: `componentEnvironment` with `names` in place of the component's, the error log level,
 * the local region and credentials, DynamoDB Local's endpoint, and `endpoint` for SNS and SQS.
 *
 * @param extra - further variables, applied last. @default {}
 */
export async function localLambdaEnvironment(
    componentEnvironment: Record<string, string>,
    names: LocalNames,
    endpoint: string,
    extra: Record<string, string> = {},
): Promise<Record<string, string>> {
    return {
        ...componentEnvironment,
        [ENV.tableName]: names.tableName,
        [ENV.topicArn]: names.topicArn,
        [ENV.dlqUrl]: names.dlqUrl,
        AWS_LAMBDA_LOG_LEVEL: "ERROR",
        AWS_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        AWS_ENDPOINT_URL_DYNAMODB: await dynamoEndpoint(),
        AWS_ENDPOINT_URL_SNS: endpoint,
        AWS_ENDPOINT_URL_SQS: endpoint,
        ...extra,
    };
}

/**
 * Keep the current values of `names`, for a test that sets them; returns what puts them back (a name that was unset
 * is deleted again).
 *
 * @param names - Environment variable names.
 */
export function preserveEnvironment(names: readonly string[]): () => void {
    const saved = new Map(names.map((name) => [name, process.env[name]] as const));
    return () => {
        for (const [name, value] of saved) {
            if (value === undefined) delete process.env[name];
            else process.env[name] = value;
        }
    };
}
