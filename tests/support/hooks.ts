/**
 * Mocha root hooks, loaded before any test file (`.mocharc.json` `require`).
 * Installs the Pulumi mocks once and stops the shared DynamoDB Local after the run.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import "./pulumi-mocks";
import { stopDynamo } from "./dynamodb";

export const mochaHooks = {
    async afterAll(): Promise<void> {
        await stopDynamo();
    },
};
