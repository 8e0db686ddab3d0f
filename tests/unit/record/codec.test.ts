import * as assert from "node:assert/strict";
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import {
    marshalRecord,
    pendingRecord,
    unmarshalRecord,
    validateNewRecord,
    type NewOutboxRecord,
    type OutboxRecord,
} from "../../../runtime/record/codec";
import { fenceTtlSeconds, unmarshalFence } from "../../../runtime/record/fence";

const created = Date.UTC(2026, 0, 2, 3, 4, 5, 120);
const topic = "arn:aws:sns:us-east-1:000000000000:orders";

const input: NewOutboxRecord = {
    partition: "ORDER#1001",
    recordId: "rec-1",
    routeId: "route-a",
    bindingId: "orders#eu",
    address: topic,
    envelope: { id: "env-1", subject: "OrderPlaced", payload: '{"orderId":1001}', createdAt: created },
};

describe("record codec (§2.2 marshal vectors)", () => {
    it("marshals a fresh pending record to the exact GoBridge item: no ttl, no has_expiry, no first_attempted_at", () => {
        const item = marshalRecord(pendingRecord(input, 7n, 999));
        assert.deepEqual(item, {
            PK: { S: "ORDER#1001" },
            SK: { S: "OUTBOX#env-1#orders%23eu" },
            record_id: { S: "rec-1" },
            route_id: { S: "route-a" },
            envelope_id: { S: "env-1" },
            binding_id: { S: "orders#eu" },
            session_id: { S: "" },
            address: { S: topic },
            envelope_json: {
                S: '{"ID":"env-1","Subject":"OrderPlaced","Payload":"eyJvcmRlcklkIjoxMDAxfQ==","CreatedAt":"2026-01-02T03:04:05.12Z","ExpiresAt":"0001-01-01T00:00:00Z"}',
            },
            status: { S: "pending" },
            claim_version: { N: "0" },
            replay_count: { N: "0" },
            created_at: { N: "1767323045120" },
            expires_at: { N: "0" },
            completed_at: { N: "0" },
            seq: { N: "7" },
            claim_sort: { S: "0000001767323045120#00000000000000000007" },
        });
    });

    it('a pending record with an expiry carries has_expiry "1" but NO ttl (pending TTL reaping bug)', () => {
        const item = marshalRecord(
            pendingRecord({ ...input, envelope: { ...input.envelope, expiresAt: created + 5000 } }, 1n, 0),
        );
        assert.deepEqual(item.has_expiry, { S: "1" });
        assert.deepEqual(item.expires_at, { N: String(created + 5000) });
        assert.equal(item.ttl, undefined);
    });

    it("denormalises the ordering key into both the attribute and the envelope header", () => {
        const item = marshalRecord(pendingRecord({ ...input, orderingKey: "K1" }, 1n, 0));
        assert.deepEqual(item.ordering_key, { S: "K1" });
        assert.match(item.envelope_json.S ?? "", /"Headers":\{"x-bridge.ordering-key":"K1"\}/);
        const fromHeader = marshalRecord(
            pendingRecord(
                { ...input, envelope: { ...input.envelope, headers: { "x-bridge.ordering-key": "K2" } } },
                1n,
                0,
            ),
        );
        assert.deepEqual(fromHeader.ordering_key, { S: "K2" });
        const emptyHeader = marshalRecord(
            pendingRecord(
                { ...input, envelope: { ...input.envelope, headers: { "x-bridge.ordering-key": "" } } },
                1n,
                0,
            ),
        );
        assert.equal(emptyHeader.ordering_key, undefined);
    });

    it("reads the ordering-key header by its exact key, as GoBridge's OrderingKey() does: another spelling is an ordinary header", () => {
        // A Go drainer sharing the table reads this record as keyless, so it must be keyless here too.
        const mixedCase = marshalRecord(
            pendingRecord(
                { ...input, envelope: { ...input.envelope, headers: { "X-Bridge.Ordering-Key": "K2" } } },
                1n,
                0,
            ),
        );
        assert.equal(mixedCase.ordering_key, undefined);
        assert.match(mixedCase.envelope_json.S ?? "", /"Headers":\{"X-Bridge.Ordering-Key":"K2"\}/);
        // With the option, the exact header is added beside the other spelling, which is kept as it was.
        const withOption = marshalRecord(
            pendingRecord(
                {
                    ...input,
                    orderingKey: "K1",
                    envelope: { ...input.envelope, headers: { "X-Bridge.Ordering-Key": "K2" } },
                },
                1n,
                0,
            ),
        );
        assert.deepEqual(withOption.ordering_key, { S: "K1" });
        assert.match(
            withOption.envelope_json.S ?? "",
            /"Headers":\{"X-Bridge.Ordering-Key":"K2","x-bridge.ordering-key":"K1"\}/,
        );
    });

    it("refuses a stored time beyond 2^53 - 1 ms instead of rounding it (a conscious difference: Go holds int64)", () => {
        const item = marshalRecord(pendingRecord(input, 1n, 0));
        for (const [name, text] of [
            ["created_at", "9007199254740993"],
            ["expires_at", "-9007199254740993"],
            ["claimed_at", "99999999999999999999"],
        ] as const) {
            assert.throws(
                () => unmarshalRecord({ ...item, [name]: { N: text } }),
                (e: unknown) =>
                    isOutboxError(e, "INVALID_PAYLOAD") &&
                    e.message.includes(`attribute ${name} is ${text}, beyond ±(2^53 − 1)`),
            );
        }
        assert.equal(
            unmarshalRecord({ ...item, created_at: { N: "9007199254740991" } }).createdAt,
            Number.MAX_SAFE_INTEGER,
        );
    });

    it("refuses an item without a record_id (absent, NULL or empty), naming the attribute: consumers deduplicate on it", () => {
        const item = marshalRecord(pendingRecord(input, 1n, 0));
        const { record_id: _dropped, ...absent } = item;
        for (const bad of [absent, { ...item, record_id: { NULL: true } }, { ...item, record_id: { S: "" } }] as Record<
            string,
            AttributeValue
        >[]) {
            assert.throws(
                () => unmarshalRecord(bad),
                (e: unknown) =>
                    isOutboxError(e, "INVALID_PAYLOAD") &&
                    /has no record_id \(absent, NULL or empty\); it is never published without one/.test(e.message),
            );
        }
    });

    it("writes headers_json only when dispatch headers are given, sorted like Go", () => {
        assert.equal(marshalRecord(pendingRecord(input, 1n, 0)).headers_json, undefined);
        assert.deepEqual(
            marshalRecord(pendingRecord({ ...input, dispatchHeaders: { z: "1", a: "<" } }, 1n, 0)).headers_json,
            { S: '{"a":"\\u003c","z":"1"}' },
        );
        assert.deepEqual(marshalRecord(pendingRecord({ ...input, dispatchHeaders: {} }, 1n, 0)).headers_json, {
            S: "{}",
        });
    });

    it("stamps created_at from now when neither record nor envelope has one", () => {
        const rec = pendingRecord({ ...input, envelope: { id: "e" } }, 1n, 4242);
        assert.equal(rec.createdAt, 4242);
    });

    it("first_attempted_at is omitted when zero and round-trips when set", () => {
        const base = pendingRecord(input, 3n, 0);
        assert.equal(marshalRecord(base).first_attempted_at, undefined);
        assert.equal(unmarshalRecord(marshalRecord(base)).firstAttemptedAt, undefined);
        const claimed: OutboxRecord = {
            ...base,
            status: "claimed",
            claimVersion: 2n,
            replayCount: 1,
            firstAttemptedAt: 5000,
            claimedBy: "o",
            claimedAt: 5000,
        };
        assert.deepEqual(unmarshalRecord(marshalRecord(claimed)), claimed);
    });

    it("round-trips every field, including seq and claim_version beyond 2^53", () => {
        const big: OutboxRecord = {
            ...pendingRecord(
                { ...input, sessionId: "s1", dispatchHeaders: { h: "v" }, orderingKey: "K" },
                2n ** 63n + 5n,
                0,
            ),
            claimVersion: 2n ** 60n + 1n,
        };
        const item = marshalRecord(big);
        assert.deepEqual(item.seq, { N: "9223372036854775813" });
        assert.deepEqual(unmarshalRecord(item), big);
    });

    it("terminal records carry neither claim_sort nor has_expiry", () => {
        const done: OutboxRecord = {
            ...pendingRecord({ ...input, envelope: { ...input.envelope, expiresAt: created + 1 } }, 1n, 0),
            status: "completed",
            completedAt: 10,
        };
        const item = marshalRecord(done);
        assert.equal(item.claim_sort, undefined);
        assert.equal(item.has_expiry, undefined);
    });

    it("unmarshals with the §2.2 defaults: missing numbers 0, empty status pending, no first attempt", () => {
        const minimal = {
            PK: { S: "P" },
            SK: { S: "OUTBOX#e#b" },
            record_id: { S: "r" },
            envelope_json: { S: '{"ID":"e","CreatedAt":"0001-01-01T00:00:00Z","ExpiresAt":"0001-01-01T00:00:00Z"}' },
        };
        const rec = unmarshalRecord(minimal);
        assert.equal(rec.status, "pending");
        assert.equal(rec.seq, 0n);
        assert.equal(rec.claimVersion, 0n);
        assert.equal(rec.replayCount, 0);
        assert.equal(rec.expiresAt, 0);
        assert.equal(rec.firstAttemptedAt, undefined);
        assert.equal(rec.envelopeId, "e");
        assert.equal(rec.bindingId, "b");
    });

    it("takes identity from the attributes, not from a legacy raw SK", () => {
        const item = marshalRecord(pendingRecord({ ...input, bindingId: "a#b", envelope: { id: "env" } }, 1n, 1));
        item.SK = { S: "OUTBOX#env#a#b" };
        const rec = unmarshalRecord(item);
        assert.equal(rec.envelopeId, "env");
        assert.equal(rec.bindingId, "a#b");
    });

    it("accepts a Lambda stream image (plain JSON) exactly like an SDK item", () => {
        const item = marshalRecord(pendingRecord({ ...input, orderingKey: "K" }, 9n, 0));
        const image = JSON.parse(JSON.stringify(item)) as Record<string, { S?: string; N?: string }>;
        assert.deepEqual(unmarshalRecord(image), unmarshalRecord(item));
    });

    it("rejects malformed items with INVALID_PAYLOAD naming the attribute", () => {
        const good = marshalRecord(pendingRecord(input, 1n, 0));
        const bad = (patch: Record<string, unknown>, pattern: RegExp) =>
            assert.throws(
                () => unmarshalRecord({ ...good, ...patch } as never),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && pattern.test((e as Error).message),
            );
        bad({ status: { S: "lost" } }, /unknown status "lost"/);
        bad({ seq: { N: "1.5" } }, /seq must be an integer N, got "1.5"/);
        bad({ envelope_json: undefined }, /has no envelope_json/);
        bad({ PK: undefined }, /lacks its PK\/SK keys/);
        bad({ headers_json: { S: "[1]" } }, /headers_json must be a JSON object/);
    });

    it("validates new records before anything is written (every field named)", () => {
        const fails = (patch: Partial<NewOutboxRecord>, pattern: RegExp) =>
            assert.throws(
                () => validateNewRecord({ ...input, ...patch }),
                (e: unknown) => isOutboxError(e, "INVALID_PAYLOAD") && pattern.test((e as Error).message),
            );
        fails({ partition: "" }, /partition must be a non-empty string, got ""/);
        fails({ recordId: "" }, /recordId must be a non-empty string/);
        fails({ envelope: { id: "" } }, /envelope\.id must be a non-empty string/);
        fails({ orderingKey: "" }, /orderingKey must be a non-empty string when given/);
        fails(
            { orderingKey: "A", envelope: { id: "e", headers: { "x-bridge.ordering-key": "B" } } },
            /orderingKey "A" differs from the envelope header/,
        );
        fails({ createdAt: -1 }, /createdAt must be whole non-negative epoch milliseconds, got -1/);
        fails({ bindingId: 3 as never }, /bindingId must be a string, got number/);
    });

    it("reads the FENCE row: absent max_claim_version is cold, ttl floor 30 days", () => {
        assert.deepEqual(unmarshalFence(undefined), {
            maxClaimVersion: undefined,
            seqCounter: 0n,
            lastCreatedAt: 0,
            ttl: 0,
        });
        assert.deepEqual(
            unmarshalFence({ PK: { S: "P" }, SK: { S: "FENCE" }, seq_counter: { N: "4" }, ttl: { N: "9" } }),
            { maxClaimVersion: undefined, seqCounter: 4n, lastCreatedAt: 0, ttl: 9 },
        );
        assert.equal(
            unmarshalFence({ max_claim_version: { N: "18446744073709551615" } }).maxClaimVersion,
            18446744073709551615n,
        );
        assert.equal(fenceTtlSeconds(1_000_500, 3600), 1000 + 30 * 86400);
    });

    it("reads the FENCE row's last_created_at: absent (a GoBridge-only or fresh partition) is 0, present is its epoch ms, malformed or beyond 2^53 - 1 is refused", () => {
        const row = {
            PK: { S: "P" },
            SK: { S: "FENCE" },
            seq_counter: { N: "7" },
            max_claim_version: { N: "3" },
            ttl: { N: "9" },
        };
        assert.equal(unmarshalFence(row).lastCreatedAt, 0);
        assert.deepEqual(unmarshalFence({ ...row, last_created_at: { N: "1767225602000" } }), {
            maxClaimVersion: 3n,
            seqCounter: 7n,
            lastCreatedAt: 1767225602000,
            ttl: 9,
        });
        assert.equal(
            unmarshalFence({ last_created_at: { N: "1767225602000" } }).lastCreatedAt,
            1767225602000,
            "an UpdateItem's returned attributes, without keys, read too",
        );
        assert.throws(
            () => unmarshalFence({ ...row, last_created_at: { N: "9007199254740993" } }),
            /last_created_at is 9007199254740993, beyond/,
        );
        assert.throws(
            () => unmarshalFence({ ...row, last_created_at: { N: "1.5" } }),
            /last_created_at must be an integer N/,
        );
        assert.equal(fenceTtlSeconds(1_000_500, 40 * 86400), 1000 + 40 * 86400);
    });
});
