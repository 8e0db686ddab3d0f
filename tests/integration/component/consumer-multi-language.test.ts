/**
 * `OutboxConsumer` in the multi-language schema (issue 39): Pulumi's component analyzer (what `pulumi package add`
 * and the provider host run; the host discovers every component the package exports) accepts it, with
 * `functionArn` as the path for YAML and Python: `consume`, a TypeScript function, is left out of the schema.
 */
import * as assert from "node:assert/strict";
import { OUTBOX_CONSUMER_TYPE, OutboxConsumer } from "../../../components/consumer";
import { analyzeComponents, assertExpressionInputs, enumValues, typeToken } from "../../support/component-schema";

describe("OutboxConsumer as a multi-language component", () => {
    it("has the type token component hosting validates: <package name>:index:<class name>", () => {
        assert.equal(OUTBOX_CONSUMER_TYPE, typeToken(OutboxConsumer.name));
    });

    it("passes Pulumi's component schema analyzer, functionArn an input and consume left out", function () {
        this.timeout(120000);
        const schema = analyzeComponents("OutboxConsumer");
        const consumer = schema.components.OutboxConsumer;
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
        assertExpressionInputs(
            consumer,
            ["destinationArn", "functionArn", "functionRoleName", "inboxTableName"],
            "string",
        );
        assert.notEqual(consumer.inputs.destinationArn.optional, true, "destinationArn is required");
        assert.equal(consumer.inputs.functionArn.optional, true);
        assert.equal(
            consumer.inputs.destinationKind.$ref,
            "#/types/dynamodb-outbox:index:OutboxConsumerDestinationKind",
        );
        assert.deepEqual(enumValues(schema, "OutboxConsumerDestinationKind"), ["sns", "sqs", "eventbridge"]);
        for (const input of ["batchSize", "maxReceiveCount", "timeout", "maximumBatchingWindowInSeconds"]) {
            assert.equal(consumer.inputs[input]?.type, "number", input);
        }
    });
});
