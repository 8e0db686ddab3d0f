/**
 * `OutboxConsumer` in the multi-language schema (issue 39): Pulumi's component analyzer (what `pulumi package add`
 * and the provider host run; the host discovers every component the package exports) accepts it, with
 * `functionArn` as the path for YAML and Python: `consume`, a TypeScript function, is left out of the schema.
 */
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { OUTBOX_CONSUMER_TYPE, OutboxConsumer } from "../../../components/consumer";

describe("OutboxConsumer as a multi-language component", () => {
    it("has the type token component hosting validates: <package name>:index:<class name>", () => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- JSON by a computed path
        const pkg = require(path.join(__dirname, "..", "..", "..", "package.json"));
        assert.equal(OUTBOX_CONSUMER_TYPE, `${pkg.name}:index:${OutboxConsumer.name}`);
    });

    it("passes Pulumi's component schema analyzer, functionArn an input and consume left out", function () {
        this.timeout(120000);
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- experimental API of @pulumi/pulumi
        const { Analyzer } = require("@pulumi/pulumi/provider/experimental/analyzer");
        const root = path.join(__dirname, "..", "..", "..");
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- JSON by a computed path
        const pkg = require(path.join(root, "package.json"));
        const { components, typeDefinitions } = new Analyzer(
            root,
            "dynamodb-outbox",
            pkg,
            new Set(["OutboxConsumer"]),
        ).analyze();
        const consumer = components.OutboxConsumer;
        assert.ok(consumer, "the analyzer found the OutboxConsumer component");
        assert.deepEqual(Object.keys(consumer.outputs).sort(), [
            "consumerPolicy",
            "dlqUrl",
            "functionName",
            "inboxTableArn",
            "inboxTableName",
            "queueArn",
            "queueUrl",
        ]);
        assert.equal(consumer.inputs.consume, undefined, "a TypeScript function has no place in the schema");
        for (const input of ["destinationArn", "functionArn", "functionRoleName", "inboxTableName"]) {
            assert.equal(consumer.inputs[input]?.type, "string", input);
            assert.notEqual(consumer.inputs[input].plain, true, `${input} takes an expression`);
        }
        assert.notEqual(consumer.inputs.destinationArn.optional, true, "destinationArn is required");
        assert.equal(consumer.inputs.functionArn.optional, true);
        assert.equal(
            consumer.inputs.destinationKind.$ref,
            "#/types/dynamodb-outbox:index:OutboxConsumerDestinationKind",
        );
        assert.deepEqual(
            typeDefinitions.OutboxConsumerDestinationKind.enum.map((e: { value: string }) => e.value),
            ["sns", "sqs", "eventbridge"],
        );
        for (const input of ["batchSize", "maxReceiveCount", "timeout", "maximumBatchingWindowInSeconds"]) {
            assert.equal(consumer.inputs[input]?.type, "number", input);
        }
    });
});
