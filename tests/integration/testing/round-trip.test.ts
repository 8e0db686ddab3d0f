/**
 * The local pieces together, as the README's "Testing stream handlers locally" section shows them: real stream records from DynamoDB Local,
 * through the local mapping, into a user's own stream handler that publishes to SNS and reports the first
 * failure; SNS is fauxqs (delivery to SQS) or the AWS fault server.
 * The handler here is a user's, not the package's publisher (that one has its own end-to-end test).
 */
import assert from "node:assert/strict";
import { PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import { SNSClient as Sns } from "@aws-sdk/client-sns";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startFauxqs } from "../../../dev/emulators/fauxqs";
import { startAwsFaultServer } from "../../../dev/emulators/aws-fault-server";
// Through the test kit's entry point, as users import it (`dynamodb-outbox/testing`).
import {
    startLocalEventSourceMapping,
    type LambdaStreamEvent,
    type LambdaStreamHandlerResult,
} from "../../../runtime/testing";
import { createStreamTable, destroyStreamsClients, putOutboxRecords, recordIdOf } from "../../support/stream-table";

/** A user's relay: PublishBatch per 10 records, stop at the first failure and report it (Lambda rewinds there). */
function relay(sns: SNSClient, topicArn: string) {
    return async (event: LambdaStreamEvent): Promise<LambdaStreamHandlerResult> => {
        const records = event.Records;
        for (let i = 0; i < records.length; i += 10) {
            const chunk = records.slice(i, i + 10);
            const out = await sns.send(
                new PublishBatchCommand({
                    TopicArn: topicArn,
                    PublishBatchRequestEntries: chunk.map((r, j) => ({
                        Id: String(j),
                        Message: JSON.stringify({ recordId: recordIdOf(r) }),
                        MessageAttributes: { recordId: { DataType: "String", StringValue: recordIdOf(r) } },
                    })),
                }),
            );
            const failed = (out.Failed ?? []).map((f) => Number(f.Id)).sort((a, b) => a - b)[0];
            if (failed !== undefined)
                return {
                    batchItemFailures: [
                        { itemIdentifier: (chunk[failed] as (typeof chunk)[number]).dynamodb.SequenceNumber },
                    ],
                };
        }
        return { batchItemFailures: [] };
    };
}

describe("round trip: DynamoDB Local stream → local mapping → user handler → SNS", function () {
    this.timeout(60_000);
    after(() => destroyStreamsClients());

    it("fauxqs: every outbox record reaches the SQS subscriber once, in order", async () => {
        const fauxqs = await startFauxqs();
        const table = await createStreamTable();
        try {
            const topicArn = await fauxqs.createTopic("round-trip");
            const { queueUrl, queueArn } = await fauxqs.createQueue("round-trip-consumer");
            await fauxqs.subscribe(topicArn, queueArn);
            const mapping = await startLocalEventSourceMapping({
                streamsClient: table.streams,
                dynamodbClient: table.ddb,
                tableName: table.tableName,
                handler: relay(fauxqs.sns, topicArn),
                batchSize: 25,
                pollIntervalMs: 10,
            });
            try {
                await putOutboxRecords(table, "ORDER#1", 40);
                await mapping.drain();
            } finally {
                await mapping.stop();
            }
            const received = await fauxqs.receiveAll(queueUrl, { expected: 40 });
            assert.deepEqual(
                received.map((m) => m.attributes.recordId),
                Array.from({ length: 40 }, (_, n) => `rec-ORDER#1-${n}`),
            );
        } finally {
            await fauxqs.stop();
        }
    });

    it("test server with failing entries: the rewind redelivers from the failed record, nothing is lost, duplicates are visible", async () => {
        const server = await startAwsFaultServer({ seed: 3, faults: { entries: [{ rate: 0.2 }] } });
        const sns = new Sns({
            endpoint: server.endpoint,
            region: LOCAL_REGION,
            credentials: LOCAL_CREDENTIALS,
            maxAttempts: 1,
        });
        const table = await createStreamTable();
        try {
            const topicArn = server.createTopic("round-trip");
            // Written before the mapping starts (it reads from TRIM_HORIZON), so its batches are full whatever the
            // machine's load: a batch of one record cannot show a duplicate.
            await putOutboxRecords(table, "ORDER#2", 30);
            const mapping = await startLocalEventSourceMapping({
                streamsClient: table.streams,
                streamArn: table.streamArn,
                handler: relay(sns, topicArn),
                pollIntervalMs: 10,
                retryBackoffMs: 0,
                maximumRetryAttempts: -1,
            });
            try {
                await mapping.drain();
                assert.ok(mapping.stats().retries > 0, "some batches were retried");
                assert.equal(mapping.stats().recordsDiscarded, 0);
            } finally {
                await mapping.stop();
            }
            const published = server.topicMessages(topicArn).map((m) => m.attributes.recordId?.stringValue);
            const unique = [...new Set(published)];
            assert.deepEqual(
                unique.sort(),
                Array.from({ length: 30 }, (_, n) => `rec-ORDER#2-${n}`).sort(),
                "lost = 0",
            );
            // Entries after a failed one in the same PublishBatch are accepted too, then redelivered: duplicates.
            assert.ok(
                published.length > unique.length,
                `duplicates are expected (${published.length - unique.length})`,
            );
            // (Publish order is not record order here: SNS accepts the entries after a failed one in the same call.
            // Keeping per-key order is the package publisher's job, proven in its own end-to-end test.)
        } finally {
            sns.destroy();
            await server.stop();
        }
    });
});
