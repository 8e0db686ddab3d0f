import * as assert from "node:assert/strict";
import { OUTBOX_RANGES } from "../../../components/defaults";
import { unwrap } from "../../support/pulumi-mocks";
import { BuiltOutbox, TYPE, buildOutbox } from "../../support/component-harness";

describe("Outbox stream mapping", () => {
    let std: BuiltOutbox;
    let mapping: Record<string, any>;

    before(async () => {
        std = await buildOutbox("esm");
        mapping = std.one(TYPE.mapping, "esm-stream-mapping").inputs;
    });

    it("filters on exactly: INSERT events whose SK starts with OUTBOX#", () => {
        assert.equal(mapping.filterCriteria.filters.length, 1);
        const pattern = mapping.filterCriteria.filters[0].pattern;
        assert.equal(typeof pattern, "string", "the pattern is a JSON string");
        assert.equal(pattern, '{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}');
    });

    it("reads this table's stream into this publisher, from TRIM_HORIZON", async () => {
        assert.equal(mapping.eventSourceArn, await unwrap(std.outbox.streamArn));
        const publisher = std.one(TYPE.fn, "esm-publisher");
        assert.equal(mapping.functionName, `arn:aws:lambda:eu-west-1:111111111111:function:${publisher.name}-abc`);
        assert.equal(mapping.startingPosition, "TRIM_HORIZON");
    });

    it("reports batch item failures and bisects failing batches", () => {
        assert.deepEqual(mapping.functionResponseTypes, ["ReportBatchItemFailures"]);
        assert.equal(mapping.bisectBatchOnFunctionError, true);
    });

    it("bounds retries and record age with the documented defaults", () => {
        assert.equal(mapping.maximumRetryAttempts, OUTBOX_RANGES.maximumRetryAttempts.fallback);
        assert.equal(mapping.maximumRetryAttempts, 10);
        assert.equal(mapping.maximumRecordAgeInSeconds, OUTBOX_RANGES.maximumRecordAgeInSeconds.fallback);
        assert.equal(mapping.maximumRecordAgeInSeconds, 3600);
        assert.equal(mapping.batchSize, 100);
        assert.equal(mapping.maximumBatchingWindowInSeconds, 0);
        assert.equal(mapping.parallelizationFactor, 1);
    });

    it("sends failed batches' metadata to the DLQ", async () => {
        assert.deepEqual(mapping.destinationConfig, { onFailure: { destinationArn: await unwrap(std.outbox.dlqArn) } });
    });

    it("turns on the mapping's EventCount metrics (DroppedEventCount, FilteredOutEventCount…), the platform's only count of what the filter or the retries dropped", () => {
        assert.deepEqual(mapping.metricsConfig, { metrics: ["EventCount"] });
    });

    it("is deleted before it is replaced, so the replacement does not collide with the old mapping", () => {
        assert.equal(std.options.get("esm-stream-mapping")?.deleteBeforeReplace, true);
    });

    it("takes the mapping args given, and transform.eventSourceMapping last", async () => {
        const custom = await buildOutbox("esmargs", {
            maximumRetryAttempts: 2,
            maximumRecordAgeInSeconds: 600,
            batchSize: 25,
            maximumBatchingWindowInSeconds: 5,
            parallelizationFactor: 2,
            transform: { eventSourceMapping: { tumblingWindowInSeconds: 30, batchSize: 50 } },
        });
        const m = custom.one(TYPE.mapping).inputs;
        assert.deepEqual(
            [
                m.maximumRetryAttempts,
                m.maximumRecordAgeInSeconds,
                m.batchSize,
                m.maximumBatchingWindowInSeconds,
                m.parallelizationFactor,
                m.tumblingWindowInSeconds,
            ],
            [2, 600, 50, 5, 2, 30],
        );
        assert.equal(m.startingPosition, "TRIM_HORIZON");
    });
});
