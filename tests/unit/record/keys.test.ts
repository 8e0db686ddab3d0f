import * as assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import {
    claimSort,
    escapeKeyPart,
    parseRecordSortKey,
    recordSortKey,
    unescapeKeyPart,
} from "../../../runtime/record/keys";

describe("record keys", () => {
    describe("escapeKeyPart / unescapeKeyPart", () => {
        it("leaves ids without % or # byte-identical (rolling-upgrade safe)", () => {
            assert.equal(escapeKeyPart("order-1001"), "order-1001");
            assert.equal(escapeKeyPart(""), "");
        });

        it("escapes % before # so the mapping is injective", () => {
            assert.equal(escapeKeyPart("eu#prod"), "eu%23prod");
            assert.equal(escapeKeyPart("%23"), "%2523");
            assert.equal(escapeKeyPart("%25"), "%2525");
            assert.equal(escapeKeyPart("#%"), "%23%25");
        });

        it("decodes in one left-to-right pass: %2523 becomes %23, unknown escapes stay literal", () => {
            assert.equal(unescapeKeyPart("%2523"), "%23");
            assert.equal(unescapeKeyPart("%23%25"), "#%");
            assert.equal(unescapeKeyPart("%41%2"), "%41%2");
        });
    });

    describe("recordSortKey / parseRecordSortKey (c13-sk-collision)", () => {
        const cases: [string, string][] = [
            ["order", "eu#prod"],
            ["order#eu", "prod"],
            ["%23", "%25"],
            ["#", "%23"],
            ["", ""],
            ["#", "#"],
            ["a%b#c", "%%##"],
        ];

        it("writes the exact GoBridge keys", () => {
            assert.equal(recordSortKey("order", "eu#prod"), "OUTBOX#order#eu%23prod");
            assert.equal(recordSortKey("order#eu", "prod"), "OUTBOX#order%23eu#prod");
            assert.equal(recordSortKey("%23", "%25"), "OUTBOX#%2523#%2525");
            assert.equal(recordSortKey("", ""), "OUTBOX##");
            assert.equal(recordSortKey("#", "#"), "OUTBOX#%23#%23");
            assert.equal(recordSortKey("env-1", "topic-orders"), "OUTBOX#env-1#topic-orders");
        });

        it("is injective: distinct id pairs never alias", () => {
            const keys = cases.map(([e, b]) => recordSortKey(e, b));
            assert.equal(new Set(keys).size, cases.length);
        });

        it("is reversible for every case", () => {
            for (const [envelopeId, bindingId] of cases) {
                assert.deepEqual(parseRecordSortKey(recordSortKey(envelopeId, bindingId)), { envelopeId, bindingId });
            }
        });

        it("never parses the FENCE row or foreign keys as a record key", () => {
            assert.equal(parseRecordSortKey("FENCE"), undefined);
            assert.equal(parseRecordSortKey("ORDER#1"), undefined);
            assert.equal(parseRecordSortKey("OUTBOX#no-separator"), undefined);
        });

        it("parses a legacy raw key by its first # (identity itself comes from attributes)", () => {
            assert.deepEqual(parseRecordSortKey("OUTBOX#env#a#b"), { envelopeId: "env", bindingId: "a#b" });
        });
    });

    describe("claimSort", () => {
        it("pads created_at to 19 digits and seq to 20", () => {
            assert.equal(claimSort(1767323045120, 7n), "0000001767323045120#00000000000000000007");
            assert.equal(claimSort(0, 0n), "0000000000000000000#00000000000000000000");
            assert.equal(claimSort(1, 18446744073709551615n), "0000000000000000001#18446744073709551615");
        });

        it("clamps a negative created_at to 0", () => {
            assert.equal(claimSort(-5, 1n), "0000000000000000000#00000000000000000001");
        });

        it("sorts lexicographically in (created_at, seq) order", () => {
            const tuples: [number, bigint][] = [
                [10, 2n],
                [9, 100n],
                [10, 1n],
                [1000, 0n],
                [10, 10n],
            ];
            const sorted = tuples.map(([c, q]) => claimSort(c, q)).sort();
            assert.deepEqual(
                sorted,
                [
                    [9, 100n],
                    [10, 1n],
                    [10, 2n],
                    [10, 10n],
                    [1000, 0n],
                ].map(([c, q]) => claimSort(c as number, q as bigint)),
            );
        });

        it("rejects a fractional time and an out-of-range seq, naming the value", () => {
            assert.throws(
                () => claimSort(1.5, 1n),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && /got 1\.5/.test((e as Error).message),
            );
            assert.throws(
                () => claimSort(1, -1n),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && /got -1/.test((e as Error).message),
            );
            assert.throws(
                () => claimSort(1, 18446744073709551616n),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD"),
            );
        });
    });
});
