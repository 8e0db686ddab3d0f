/**
 * On a global table, a replica region's relay publishes to the one destination, in the home region (issue 37): the
 * handlers' environment accepts a topic or a bus of another region once `OUTBOX_ORIGIN_REGION` is set, and their
 * client for it takes the region its ARN names. A queue stays refused: its SQS client is the DLQ's.
 */
import * as assert from "node:assert/strict";
import { ENV, readHandlerEnvironment } from "../../../runtime/config";
import { isOutboxError } from "../../../runtime/errors";
import { destinationClientOptions } from "../../../runtime/relay/lambda";

const HOME_TOPIC = "arn:aws:sns:eu-west-1:111111111111:events";
const HOME_BUS = "arn:aws:events:eu-west-1:111111111111:event-bus/orders";
const HOME_QUEUE = "arn:aws:sqs:eu-west-1:111111111111:events";

/** A replica region's function environment in us-west-2, with `destination` set, and its origin scope or not. */
function replicaEnvironment(destination: Record<string, string>, origin: boolean): Record<string, string> {
    return {
        AWS_REGION: "us-west-2",
        [ENV.tableName]: "orders-outbox",
        [ENV.dlqUrl]: "https://sqs.us-west-2.amazonaws.com/111111111111/dlq",
        ...destination,
        ...(origin
            ? { [ENV.originRegion]: "us-west-2", [ENV.otherRegions]: "eu-west-1", [ENV.homeRegion]: "false" }
            : {}),
    };
}

describe("a replica region's destination in the home region", () => {
    it("a topic or a bus of another region is accepted with an origin scope, and its client takes the ARN's region", () => {
        for (const [destination, arn] of [
            [{ [ENV.topicArn]: HOME_TOPIC }, HOME_TOPIC],
            [{ [ENV.eventBusArn]: HOME_BUS }, HOME_BUS],
        ] as const) {
            const env = readHandlerEnvironment(replicaEnvironment(destination, true));
            assert.equal(env.destination.arn, arn);
            assert.deepEqual(destinationClientOptions(env), { region: "eu-west-1" });
        }
    });

    it("without an origin scope, a destination of another region is refused as before, and the client is the function's", () => {
        assert.throws(
            () => readHandlerEnvironment(replicaEnvironment({ [ENV.topicArn]: HOME_TOPIC }, false)),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /the topic is in eu-west-1, but the function runs in us-west-2/.test(err.message),
        );
        const local = readHandlerEnvironment({
            ...replicaEnvironment({ [ENV.topicArn]: HOME_TOPIC.replace("eu-west-1", "us-west-2") }, false),
        });
        assert.deepEqual(destinationClientOptions(local), {});
    });

    it("a queue of another region stays refused with an origin scope: one SQS client serves it and the DLQ", () => {
        assert.throws(
            () => readHandlerEnvironment(replicaEnvironment({ [ENV.queueArn]: HOME_QUEUE }, true)),
            (err: unknown) =>
                isOutboxError(err, "INVALID_CONFIG") &&
                /is in eu-west-1, but the function runs in us-west-2/.test(err.message),
        );
    });
});
