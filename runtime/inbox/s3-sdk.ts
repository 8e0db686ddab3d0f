/**
 * `@aws-sdk/client-s3`, required on first use by the `OutboxConsumer`'s function when it reads claim checks. It
 * lives here, not in `runtime/sdk-clients.ts`, so that the relay's bundle (which reads no claim check) requires
 * no S3 client. The package is an optional peer: Lambda's Node.js runtime ships it, an application installs it.
 *
 * @packageDocumentation
 */
import type * as S3 from "@aws-sdk/client-s3";

/** `@aws-sdk/client-s3`, required on first use: only a consumer that reads claim checks loads it. */
export function s3Sdk(): typeof S3 {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require on first use is the point
    return require("@aws-sdk/client-s3") as typeof S3;
}
