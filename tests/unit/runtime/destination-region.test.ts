/**
 * On a global table, a replica region's relay publishes to the one destination, in the home region (issue 37): the
 * handlers' environment accepts a topic or a bus of another region once `OUTBOX_ORIGIN_REGION` is set, and their
 * client for it takes the region its ARN names. A queue stays refused: its SQS client is the DLQ's.
 */
import * as assert from "node:assert/strict";
import fc from "fast-check";
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

    it("a topic or a bus in a region outside the table is refused with an origin scope, naming the table's regions", () => {
        for (const destination of [
            { [ENV.topicArn]: HOME_TOPIC.replace("eu-west-1", "ap-south-1") },
            { [ENV.eventBusArn]: HOME_BUS.replace("eu-west-1", "ap-south-1") },
        ] as Record<string, string>[]) {
            assert.throws(
                () => readHandlerEnvironment(replicaEnvironment(destination, true)),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    err.message.includes(
                        "is in ap-south-1, but the function runs in us-west-2 (AWS_REGION), and the table's other regions (OUTBOX_OTHER_REGIONS) are eu-west-1;",
                    ) &&
                    err.message.includes("in one of us-west-2, eu-west-1"),
            );
        }
    });

    it("with an origin scope, a topic is accepted exactly when its region is the function's or one of the table's others", () => {
        const region = fc.constantFrom("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1");
        fc.assert(
            fc.property(region, fc.uniqueArray(region, { maxLength: 3 }), region, (self, others, topicRegion) => {
                const env = {
                    ...replicaEnvironment({ [ENV.topicArn]: HOME_TOPIC.replace("eu-west-1", topicRegion) }, true),
                    AWS_REGION: self,
                    [ENV.dlqUrl]: `https://sqs.${self}.amazonaws.com/111111111111/dlq`,
                    [ENV.originRegion]: self,
                    [ENV.otherRegions]: others.filter((r) => r !== self).join(","),
                };
                fc.pre(others.some((r) => r !== self)); // an origin scope names at least one other region
                const allowed = topicRegion === self || others.includes(topicRegion);
                let refused: unknown;
                try {
                    readHandlerEnvironment(env);
                } catch (err) {
                    refused = err;
                }
                if (allowed) assert.equal(refused, undefined);
                else assert.ok(isOutboxError(refused, "INVALID_CONFIG"), String(refused));
            }),
            { numRuns: 200 },
        );
    });
});
