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

/** The local resources a handler's names point at: the table, the DLQ, and one destination. */
export interface LocalNames {
    readonly tableName: string;
    /** An SNS topic; or give `queueArn` or `eventBusArn`. */
    readonly topicArn?: string;
    /** An SQS queue as the destination. */
    readonly queueArn?: string;
    /** An EventBridge bus as the destination. */
    readonly eventBusArn?: string;
    readonly dlqUrl: string;
}

/**
 * The handler's environment: `componentEnvironment` with `names` in place of the component's (the destination
 * variable of the kind `names` gives, the other two emptied, which the handlers read as unset, and the event source
 * only where the component set one), the error log level,
 * the local region and credentials, DynamoDB Local's endpoint, and `endpoint` for SNS, SQS and EventBridge.
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
        [ENV.topicArn]: names.topicArn ?? "",
        [ENV.queueArn]: names.queueArn ?? "",
        [ENV.eventBusArn]: names.eventBusArn ?? "",
        [ENV.eventSource]: componentEnvironment[ENV.eventSource] ?? "",
        [ENV.dlqUrl]: names.dlqUrl,
        AWS_LAMBDA_LOG_LEVEL: "ERROR",
        AWS_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        AWS_ENDPOINT_URL_DYNAMODB: await dynamoEndpoint(),
        AWS_ENDPOINT_URL_SNS: endpoint,
        AWS_ENDPOINT_URL_SQS: endpoint,
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint,
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
