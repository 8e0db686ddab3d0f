/**
 * The store's counters (STORE_METRICS) reach CloudWatch from the Lambdas: the publisher and the sweeper build their
 * store once per cold start, and each invocation's EMF line carries what the store counted during it, without a
 * `partition` dimension (the partition is logged instead). On DynamoDB Local with the real handlers.
 */
import assert from "node:assert/strict";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { STORE_METRICS, STORE_WARNINGS } from "../../../runtime/store/observability";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { brokenRow, RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";

type EmfDoc = Record<string, unknown> & {
    _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
};

/** A pending OUTBOX# row of ordering key `a`, older than the records the test writes, whose envelope is not JSON. */
async function putBrokenKeyedRow(h: Harness, partition: string): Promise<void> {
    await h.ddb.send(
        new PutItemCommand({
            TableName: h.tableName,
            Item: brokenRow(partition, h.clock.now() - 1_000, { ordering_key: { S: "a" } }),
        }),
    );
}

/** The EMF documents among `lines` that define `name`, with the value each carries. */
function documentsWith(lines: readonly string[], name: string): { doc: EmfDoc; value: number }[] {
    return lines
        .map((l) => JSON.parse(l) as EmfDoc)
        .filter((d) => d._aws.CloudWatchMetrics.some((c) => c.Metrics.some((m) => m.Name === name)))
        .map((doc) => ({ doc, value: doc[name] as number }));
}

function assertNoPartitionDimension(doc: EmfDoc, fn: string, tableName: string): void {
    assert.deepEqual(doc._aws.CloudWatchMetrics[0]!.Dimensions, [["Function", "Table"]], "no partition dimension");
    assert.equal(doc.Function, fn);
    assert.equal(doc.Table, tableName);
    assert.ok(
        !("partition" in doc) && !JSON.stringify(doc).includes("ORDER#1"),
        "the partition is not in the metric line",
    );
}

describe("store metrics in the handlers' EMF lines (DynamoDB Local)", function () {
    let h: Harness;
    beforeEach(async function () {
        h = await createHarness();
    });
    afterEach(async function () {
        await h.close();
    });

    it("publisher: an undecodable item in a keyed partition counts DynamoDBOutboxUndecodableRecords in each invocation's line; the partition is logged", async function () {
        await putBrokenKeyedRow(h, "ORDER#1");
        await h.writer.write({ messages: [{ partition: "ORDER#1", type: "T", payload: 1, orderingKey: "b" }] });
        const logger = new RecordingLogger();
        const publish = h.publisher({ logger });
        const event = await h.streamEvent();
        await publish(event);
        const first = documentsWith(h.metricLines, STORE_METRICS.undecodable);
        assert.equal(first.length, 1, `one EMF line carries ${STORE_METRICS.undecodable}: ${h.metricLines.join("\n")}`);
        assert.ok(first[0]!.value >= 1);
        assertNoPartitionDimension(first[0]!.doc, "publisher", h.tableName);
        // The store is built once per cold start: a second invocation of the same handler counts into its own line.
        h.metricLines.length = 0;
        await h.writer.write({ messages: [{ partition: "ORDER#1", type: "T", payload: 2, orderingKey: "b" }] });
        const again = await h.streamEvent();
        await publish({ Records: again.Records.slice(event.Records.length) });
        assert.equal(
            documentsWith(h.metricLines, STORE_METRICS.undecodable).length,
            1,
            "the second invocation's line carries it too",
        );
        const logged = logger.lines.find((l) => l.message === STORE_WARNINGS.undecodable);
        assert.equal(logged?.attributes?.partition_key, "ORDER#1", "the partition is in the log line");
        assert.ok(!JSON.stringify(logger.lines).includes("secret-payload"), "never the payload");
    });

    it("sweeper: the same counter reaches the sweeper's line", async function () {
        await putBrokenKeyedRow(h, "ORDER#1");
        await h.writer.write({ messages: [{ partition: "ORDER#1", type: "T", payload: 1, orderingKey: "b" }] });
        h.clock.advance(3_600_000);
        await createSweeper(h.config())();
        const docs = documentsWith(h.metricLines, STORE_METRICS.undecodable);
        assert.equal(docs.length, 1, `one EMF line carries ${STORE_METRICS.undecodable}: ${h.metricLines.join("\n")}`);
        assert.ok(docs[0]!.value >= 1);
        assertNoPartitionDimension(docs[0]!.doc, "sweeper", h.tableName);
    });
});
