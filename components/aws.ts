/**
 * The `@pulumi/aws` services the component and the policies use, each imported from its own module instead of
 * through the package root, whose declarations reach every AWS service. TypeScript then parses 540 files for
 * the program instead of 3,758, and that is most of the time Pulumi's component schema analyzer takes to build
 * the plugin's schema (it builds its program from `tsconfig.json`); `tsc` and editors gain the same. The code
 * reads as before: `import * as aws from "./aws"`, then `aws.lambda.CallbackFunction`.
 *
 * @packageDocumentation
 */
export * as cloudwatch from "@pulumi/aws/cloudwatch";
export * as dynamodb from "@pulumi/aws/dynamodb";
export * as iam from "@pulumi/aws/iam";
export * as lambda from "@pulumi/aws/lambda";
export * as s3 from "@pulumi/aws/s3";
export * as sns from "@pulumi/aws/sns";
export * as sqs from "@pulumi/aws/sqs";
export { Provider } from "@pulumi/aws/provider";
export { getRegionOutput } from "@pulumi/aws/getRegion";
