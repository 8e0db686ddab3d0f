import * as assert from "node:assert/strict";
import { isOutboxError } from "../../runtime/errors";
import { decodeEnvelope, encodeEnvelope, formatGoTime, parseGoTime } from "../../runtime/record/envelope";

const created = Date.UTC(2026, 0, 2, 3, 4, 5, 120);

describe("envelope_json wire format (GoBridge §14)", () => {
    it("encodes the pinned vector: Go key order, std base64 payload, sorted headers, Go HTML escaping, RFC3339Nano", () => {
        const json = encodeEnvelope({
            id: "env-1",
            subject: "OrderPlaced",
            payload: '{"orderId":1001}',
            headers: { "x-bridge.ordering-key": "ORDER#1001", b: 1, a: "<&>" },
            createdAt: created,
        });
        assert.equal(
            json,
            '{"ID":"env-1","Subject":"OrderPlaced","Payload":"eyJvcmRlcklkIjoxMDAxfQ==",' +
                '"Headers":{"a":"\\u003c\\u0026\\u003e","b":1,"x-bridge.ordering-key":"ORDER#1001"},' +
                '"CreatedAt":"2026-01-02T03:04:05.12Z","ExpiresAt":"0001-01-01T00:00:00Z"}',
        );
    });

    it("omits empty Subject, Payload and Headers but always writes both times", () => {
        assert.equal(encodeEnvelope({ id: "x", headers: {} }), '{"ID":"x","CreatedAt":"0001-01-01T00:00:00Z","ExpiresAt":"0001-01-01T00:00:00Z"}');
    });

    it("base64-encodes the UTF-8 bytes of the payload", () => {
        assert.match(encodeEnvelope({ id: "x", payload: "héllo ✓" }), /"Payload":"aMOpbGxvIOKckw=="/);
    });

    it("decodes a Go-written envelope with nanoseconds and an offset (sub-ms digits truncated)", () => {
        const e = decodeEnvelope(
            '{"ID":"env-9","Subject":"S","Payload":"aMOpbGxvIOKckw==","Headers":{"n":2.5,"t":"v"},' +
                '"CreatedAt":"2026-01-02T03:04:05.123456789+02:00","ExpiresAt":"0001-01-01T00:00:00Z"}',
        );
        assert.deepEqual(e, {
            id: "env-9",
            subject: "S",
            payload: "héllo ✓",
            headers: { n: 2.5, t: "v" },
            createdAt: Date.UTC(2026, 0, 2, 1, 4, 5, 123),
            expiresAt: 0,
        });
    });

    it("round-trips every field", () => {
        const input = { id: "e", subject: "T", payload: '{"a":[1,2]}', headers: { k: "v" }, createdAt: created, expiresAt: created + 60_000 };
        assert.deepEqual(decodeEnvelope(encodeEnvelope(input)), input);
    });

    it("formats times like Go's RFC3339Nano (trailing zeros trimmed)", () => {
        assert.equal(formatGoTime(Date.UTC(2026, 0, 2, 3, 4, 5, 0)), "2026-01-02T03:04:05Z");
        assert.equal(formatGoTime(Date.UTC(2026, 0, 2, 3, 4, 5, 100)), "2026-01-02T03:04:05.1Z");
        assert.equal(formatGoTime(Date.UTC(2026, 0, 2, 3, 4, 5, 7)), "2026-01-02T03:04:05.007Z");
        assert.equal(formatGoTime(0), "0001-01-01T00:00:00Z");
        assert.equal(parseGoTime("0001-01-01T00:00:00Z"), 0);
    });

    it("rejects bad input with INVALID_PAYLOAD naming the problem", () => {
        const rejects = (json: string, pattern: RegExp) =>
            assert.throws(() => decodeEnvelope(json), (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && pattern.test((e as Error).message));
        rejects("not json", /not valid JSON/);
        rejects("[1]", /must be a JSON object, got an array/);
        rejects('{"Subject":"x"}', /empty ID/);
        rejects('{"ID":"x","Payload":"***"}', /not standard base64/);
        rejects('{"ID":"x","Headers":[1]}', /Headers must be a JSON object/);
        rejects('{"ID":"x","CreatedAt":"yesterday"}', /CreatedAt "yesterday" is not an RFC 3339 timestamp/);
        rejects('{"ID":7}', /"ID" must be a string, got number/);
        assert.throws(() => encodeEnvelope({ id: "" }), (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && /envelope id is empty/.test((e as Error).message));
        assert.throws(() => encodeEnvelope({ id: "x", createdAt: 1.5 }), (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD"));
    });
});
