import * as assert from "node:assert/strict";
import {
    ATTRIBUTE_DEFINITIONS,
    CLAIM_INDEX,
    EXPIRY_INDEX,
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    RECORD_ID_INDEX,
    streamFilterPatternJson,
} from "../../../runtime/schema";

describe("schema", () => {
    it("declares the GoBridge primary key", () => {
        assert.deepEqual(PRIMARY_KEY, [
            { attributeName: "PK", keyType: "HASH", attributeType: "S" },
            { attributeName: "SK", keyType: "RANGE", attributeType: "S" },
        ]);
    });

    it("declares the three GSIs with their exact keys and projections", () => {
        assert.deepEqual(
            GLOBAL_SECONDARY_INDEXES.map((i) => [
                i.indexName,
                i.keySchema.map((k) => `${k.attributeName}:${k.attributeType}:${k.keyType}`),
                i.projectionType,
            ]),
            [
                ["ExpiryIndex", ["has_expiry:S:HASH", "expires_at:N:RANGE"], "KEYS_ONLY"],
                ["RecordIDIndex", ["record_id:S:HASH"], "KEYS_ONLY"],
                ["ClaimIndex", ["PK:S:HASH", "claim_sort:S:RANGE"], "ALL"],
            ],
        );
        assert.equal(EXPIRY_INDEX.indexName, "ExpiryIndex");
        assert.equal(RECORD_ID_INDEX.indexName, "RecordIDIndex");
        assert.equal(CLAIM_INDEX.projectionType, "ALL");
    });

    it("derives exactly the six attribute definitions GoBridge declares", () => {
        assert.deepEqual(
            ATTRIBUTE_DEFINITIONS.map((a) => `${a.attributeName}:${a.attributeType}`),
            ["PK:S", "SK:S", "has_expiry:S", "expires_at:N", "record_id:S", "claim_sort:S"],
        );
    });

    it("serializes the stream filter to the exact pattern string", () => {
        assert.equal(
            streamFilterPatternJson(),
            '{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}',
        );
    });
});
