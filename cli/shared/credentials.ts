/**
 * The static credentials a command passes to its SDK clients. A module of its own, importing nothing, so that
 * `client.ts` (which reads them from the environment) and `doctor/aws.ts` (which hands them to the Lambda,
 * EventBridge and CloudWatch clients) share the type without an import circle through `io.ts`.
 *
 * @packageDocumentation
 */

/** Static credentials read from the environment, when both halves are set. */
export interface EnvCredentials {
    /** `AWS_ACCESS_KEY_ID`. */
    readonly accessKeyId: string;
    /** `AWS_SECRET_ACCESS_KEY`. */
    readonly secretAccessKey: string;
    /** `AWS_SESSION_TOKEN`. @default undefined */
    readonly sessionToken?: string;
}
