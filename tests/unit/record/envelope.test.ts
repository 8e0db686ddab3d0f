import * as assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import {
    decodeEnvelope,
    encodeEnvelope,
    formatGoTime,
    goJsonStringify,
    parseGoTime,
} from "../../../runtime/record/envelope";

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
        assert.equal(
            encodeEnvelope({ id: "x", headers: {} }),
            '{"ID":"x","CreatedAt":"0001-01-01T00:00:00Z","ExpiresAt":"0001-01-01T00:00:00Z"}',
        );
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
        const input = {
            id: "e",
            subject: "T",
            payload: '{"a":[1,2]}',
            headers: { k: "v" },
            createdAt: created,
            expiresAt: created + 60_000,
        };
        assert.deepEqual(decodeEnvelope(encodeEnvelope(input)), input);
    });

    it("formats times like Go's RFC3339Nano (trailing zeros trimmed)", () => {
        assert.equal(formatGoTime(Date.UTC(2026, 0, 2, 3, 4, 5, 0)), "2026-01-02T03:04:05Z");
        assert.equal(formatGoTime(Date.UTC(2026, 0, 2, 3, 4, 5, 100)), "2026-01-02T03:04:05.1Z");
        assert.equal(formatGoTime(Date.UTC(2026, 0, 2, 3, 4, 5, 7)), "2026-01-02T03:04:05.007Z");
        assert.equal(formatGoTime(0), "0001-01-01T00:00:00Z");
        assert.equal(parseGoTime("0001-01-01T00:00:00Z"), 0);
    });

    it("writes header values as Go's json.Marshal does: -0 stays -0, map keys in UTF-8 byte order at every level", () => {
        // Go: json.Marshal(map[string]any{"z": math.Copysign(0, -1)}) is {"z":-0}; JSON.stringify(-0) is "0".
        assert.match(
            encodeEnvelope({ id: "x", headers: { z: -0, n: [-0, 1.5] } }),
            /"Headers":\{"n":\[-0,1.5\],"z":-0\}/,
        );
        // U+FFFD is EF BF BD in UTF-8 and sorts before U+1F600 (F0 9F 98 80); in UTF-16 units \uD83D sorts first.
        assert.match(
            encodeEnvelope({
                id: "x",
                headers: { "\u{1F600}": "a", "\uFFFD": "b", m: { "\u{1F600}": 1, "\uFFFD": 2 } },
            }),
            /"Headers":\{"m":\{"\uFFFD":2,"\u{1F600}":1\},"\uFFFD":"b","\u{1F600}":"a"\}/u,
        );
        assert.equal(
            goJsonStringify({ b: undefined, a: [undefined, null], c: new Date(0) }),
            '{"a":[null,null],"c":"1970-01-01T00:00:00.000Z"}',
        );
    });

    it("refuses a header value JSON cannot hold (NaN, Infinity, a bigint), naming where it is, as Go's encoder refuses NaN", () => {
        const refuses = (value: unknown, pattern: RegExp) =>
            assert.throws(
                () => encodeEnvelope({ id: "e1", headers: { h: value } }),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && pattern.test((e as Error).message),
            );
        refuses(Number.NaN, /envelope "e1" header\.h is NaN; JSON has no NaN or Infinity/);
        refuses({ deep: [1, Number.POSITIVE_INFINITY] }, /envelope "e1" header\.h\.deep\[1\] is Infinity/);
        refuses(3n, /header\.h is a bigint \(3n\), which JSON cannot hold; send it as a string/);
    });

    it("rejects bad input with INVALID_PAYLOAD naming the problem", () => {
        const rejects = (json: string, pattern: RegExp) =>
            assert.throws(
                () => decodeEnvelope(json),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && pattern.test((e as Error).message),
            );
        rejects("not json", /not valid JSON/);
        rejects("[1]", /must be a JSON object, got an array/);
        rejects('{"Subject":"x"}', /empty ID/);
        rejects('{"ID":"x","Payload":"***"}', /not standard base64/);
        rejects('{"ID":"x","Headers":[1]}', /Headers must be a JSON object/);
        rejects('{"ID":"x","CreatedAt":"yesterday"}', /CreatedAt "yesterday" is not an RFC 3339 timestamp/);
        rejects('{"ID":7}', /"ID" must be a string, got number/);
        assert.throws(
            () => encodeEnvelope({ id: "" }),
            (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && /envelope id is empty/.test((e as Error).message),
        );
        assert.throws(
            () => encodeEnvelope({ id: "x", createdAt: 1.5 }),
            (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD"),
        );
    });
});
