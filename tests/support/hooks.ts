/**
 * Mocha root hooks, loaded before any test file (`.mocharc.json` `require`).
 * Checks and prints the Node that runs the tests, installs the Pulumi mocks once and stops the shared DynamoDB
 * Local after the run.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import "./pulumi-mocks";
import { stopDynamo } from "./dynamodb";
import { assertTestNode } from "./test-node";

assertTestNode(process.version, process.execPath);

export const mochaHooks = {
    beforeAll(): void {
        console.log(`  node ${process.version} (${process.execPath})`);
    },
    async afterAll(): Promise<void> {
        await stopDynamo();
    },
};
