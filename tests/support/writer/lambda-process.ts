/**
 * The process-wide state the serialized-handler tests change, as a Lambda's process holds it: the AWS SDK's
 * environment names they set (restore them with `preserveEnvironment`), and stdout, where the handlers write their
 * JSON logs and EMF lines.
 */
import { ENV } from "../../../runtime/config";

/** The SDK and Lambda environment names a serialized handler test sets. */
export const SDK_ENVIRONMENT: readonly string[] = [
    "AWS_LAMBDA_LOG_LEVEL",
    "AWS_MAX_ATTEMPTS",
    "AWS_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL_SNS",
    "AWS_ENDPOINT_URL_SQS",
    "AWS_ENDPOINT_URL_EVENTBRIDGE",
];

/** Every name a serialized handler test sets: the component's settings and the SDK's. */
export const HANDLER_ENVIRONMENT: readonly string[] = [...Object.values(ENV), ...SDK_ENVIRONMENT];

/** Run `work`, keeping the JSON lines it writes to stdout (the serialized handlers' logs and EMF); its error is returned. */
export async function capturingStdout<T>(work: () => Promise<T>): Promise<{ result: T | Error; lines: string[] }> {
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
        const text = String(chunk);
        if (text.startsWith("{")) {
            lines.push(...text.split("\n").filter((l) => l.trim() !== ""));
            return true;
        }
        return (write as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
    }) as typeof process.stdout.write;
    try {
        return { result: await work(), lines };
    } catch (err) {
        return { result: err as Error, lines };
    } finally {
        process.stdout.write = write;
    }
}
