/**
 * The `envelope_json` wire format: GoBridge's envelope marshaller, reproduced so a record written here decodes
 * in a GoBridge process and the reverse.
 *
 * The JSON object has the keys `ID`, `Subject`, `Payload`, `Headers`, `CreatedAt`, `ExpiresAt`, in that order,
 * exactly as Go's `encoding/json` writes the struct: `Payload` is standard base64 of the payload bytes, header
 * keys are sorted, `<`, `>`, `&`, U+2028 and U+2029 are `\u`-escaped, and times are RFC 3339 with up to nine
 * fractional digits, trailing zeros trimmed (`time.RFC3339Nano`). The zero time `0001-01-01T00:00:00Z` stands for
 * "not set"; in this package that is `0`.
 *
 * @packageDocumentation
 */
import { OutboxError } from "../errors";

/**
 * The envelope header that carries a message's ordering key. It is looked up by this exact key, as GoBridge's
 * `OrderingKey()` does: a record that a Go drainer sharing the table reads as keyless must be keyless here too.
 */
export const ORDERING_KEY_HEADER = "x-bridge.ordering-key";

/** Go's zero `time.Time`, written for an unset time. */
export const ZERO_TIME_TEXT = "0001-01-01T00:00:00Z";

/** An envelope as this package holds it. Times are epoch milliseconds; `0` means "not set". */
export interface Envelope {
    /** The envelope id; never empty. */
    readonly id: string;
    /** What the message is about (this package's message `type`); `""` when unset. */
    readonly subject: string;
    /** The payload text (JSON for this package's messages); `""` when empty. */
    readonly payload: string;
    /** The header map; values are JSON values (numbers come back as floats after a Go round trip). */
    readonly headers: Readonly<Record<string, unknown>>;
    /** Creation time, epoch ms; `0` = Go's zero time. */
    readonly createdAt: number;
    /** Expiry time, epoch ms; `0` = never expires. */
    readonly expiresAt: number;
}

/** What {@link encodeEnvelope} needs: an id, everything else optional. */
export interface EnvelopeInput {
    /** The envelope id; must not be empty. */
    readonly id: string;
    /** The subject. @default "" */
    readonly subject?: string;
    /** The payload text. @default "" */
    readonly payload?: string;
    /** The header map. @default {} */
    readonly headers?: Readonly<Record<string, unknown>>;
    /** Creation time, epoch ms. @default 0 (Go's zero time) */
    readonly createdAt?: number;
    /** Expiry time, epoch ms. @default 0 (never expires) */
    readonly expiresAt?: number;
}

/** Fill an {@link EnvelopeInput}'s defaults. */
export function toEnvelope(input: EnvelopeInput): Envelope {
    return {
        id: input.id,
        subject: input.subject ?? "",
        payload: input.payload ?? "",
        headers: input.headers ?? {},
        createdAt: input.createdAt ?? 0,
        expiresAt: input.expiresAt ?? 0,
    };
}

/**
 * The envelope's ordering key: the header keyed exactly `x-bridge.ordering-key` when it is a non-empty string,
 * else `undefined`. Another spelling of the name (`X-Bridge.Ordering-Key`) and any other type are ignored, as in
 * GoBridge.
 *
 * @param headers - The envelope header map.
 */
export function envelopeOrderingKey(headers: Readonly<Record<string, unknown>>): string | undefined {
    if (!Object.prototype.hasOwnProperty.call(headers, ORDERING_KEY_HEADER)) return undefined;
    const value = headers[ORDERING_KEY_HEADER];
    return typeof value === "string" && value !== "" ? value : undefined;
}

function pad(n: number, width: number): string {
    return String(n).padStart(width, "0");
}

/**
 * Format epoch ms like Go's `time.Time.MarshalJSON` in UTC: RFC 3339, fractional seconds trimmed of trailing
 * zeros, `0` as Go's zero time.
 *
 * @param ms - Epoch milliseconds (an integer); `0` means "not set".
 */
export function formatGoTime(ms: number): string {
    if (ms === 0) return ZERO_TIME_TEXT;
    if (!Number.isSafeInteger(ms)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `envelope time must be whole epoch milliseconds, got ${ms}; pass Math.trunc(ms)`,
        );
    }
    const d = new Date(ms);
    const year = d.getUTCFullYear();
    if (year < 1 || year > 9999) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `envelope time ${ms} is outside years 1..9999, which RFC 3339 cannot express`,
        );
    }
    const fraction = d.getUTCMilliseconds() === 0 ? "" : `.${pad(d.getUTCMilliseconds(), 3).replace(/0+$/, "")}`;
    return (
        `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
        `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}${fraction}Z`
    );
}

/** Go's zero time as epoch ms. */
const ZERO_TIME_MS = -62135596800000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parse an RFC 3339 timestamp (any offset, up to nine fractional digits) to epoch ms. Digits below the
 * millisecond are truncated toward the past. Go's zero time parses to `0`.
 *
 * @param text - The timestamp text.
 * @param field - The JSON key it came from, for the error message.
 */
export function parseGoTime(text: string, field = "time"): number {
    const m = RFC3339.exec(text);
    if (m === null) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `envelope ${field} "${text}" is not an RFC 3339 timestamp; expected e.g. "2026-01-02T03:04:05.123Z"`,
        );
    }
    const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
    const date = new Date(0);
    // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999, and Go's zero time is year 1.
    date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
    date.setUTCHours(Number(h), Number(mi), Number(s), 0);
    const nanos = frac === undefined ? 0 : Number(frac.padEnd(9, "0"));
    let ms = date.getTime() + Math.floor(nanos / 1_000_000);
    if (sign !== undefined) ms -= (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
    if (ms === ZERO_TIME_MS) return 0;
    return ms;
}

/** Escape what Go's `encoding/json` escapes by default and `JSON.stringify` does not. */
function goJsonEscape(json: string): string {
    return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go sorts map keys by their UTF-8 bytes; `Array.prototype.sort` compares UTF-16 code units, which differs above U+FFFF. */
function compareUtf8(a: string, b: string): number {
    return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * One JSON value as Go's `json.Marshal` writes it (before {@link goJsonEscape}): map keys sorted at every level,
 * `-0` kept as `-0`, and NaN or ±Infinity refused as Go refuses them. Values JSON cannot hold (`undefined`, a
 * function) are left out of objects and written `null` in arrays, as `JSON.stringify` does.
 */
function goJsonValue(value: unknown, where: string): string | undefined {
    if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
        value = (value as { toJSON(): unknown }).toJSON();
    }
    switch (typeof value) {
        case "string":
            return JSON.stringify(value);
        case "boolean":
            return value ? "true" : "false";
        case "number":
            if (!Number.isFinite(value)) {
                throw new OutboxError(
                    "INVALID_PAYLOAD",
                    `${where} is ${value}; JSON has no NaN or Infinity (Go's encoding/json refuses it too); send null or a string instead`,
                );
            }
            return Object.is(value, -0) ? "-0" : JSON.stringify(value);
        case "bigint":
            throw new OutboxError(
                "INVALID_PAYLOAD",
                `${where} is a bigint (${value}n), which JSON cannot hold; send it as a string`,
            );
        case "object": {
            if (value === null) return "null";
            if (Array.isArray(value))
                return `[${value.map((v, i) => goJsonValue(v, `${where}[${i}]`) ?? "null").join(",")}]`;
            const parts: string[] = [];
            for (const key of Object.keys(value).sort(compareUtf8)) {
                const text = goJsonValue((value as Record<string, unknown>)[key], `${where}.${key}`);
                if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
            }
            return `{${parts.join(",")}}`;
        }
        default:
            return undefined;
    }
}

/**
 * `JSON.stringify` as Go's `json.Marshal` writes a map: keys sorted at every level (by UTF-8 bytes), `<`, `>`,
 * `&`, U+2028, U+2029 escaped, `-0` kept. Used for `Headers` inside `envelope_json` and for `headers_json`.
 *
 * @param value - A JSON value.
 * @param where - What the value is, for the error message. @default "value"
 * @throws OutboxError `INVALID_PAYLOAD` for NaN, ±Infinity or a bigint anywhere in the value.
 */
export function goJsonStringify(value: unknown, where = "value"): string {
    return goJsonEscape(goJsonValue(value, where) ?? "null");
}

/**
 * Encode an envelope as GoBridge's `envelope_json`. Empty `Subject`, `Payload` and `Headers` are omitted;
 * `CreatedAt` and `ExpiresAt` are always written.
 *
 * @param envelope - The envelope; `id` must not be empty.
 * @throws OutboxError `INVALID_PAYLOAD` when the id is empty, a time is out of range, or a header value is not JSON.
 */
export function encodeEnvelope(envelope: EnvelopeInput): string {
    if (envelope.id === "") {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            "envelope id is empty; every envelope needs a non-empty id (it is the record's identity)",
        );
    }
    // Go writes the struct's fields in declaration order, so the keys are laid out by hand, not sorted.
    const fields = [`"ID":${JSON.stringify(envelope.id)}`];
    if (envelope.subject) fields.push(`"Subject":${JSON.stringify(envelope.subject)}`);
    if (envelope.payload) fields.push(`"Payload":"${Buffer.from(envelope.payload, "utf8").toString("base64")}"`);
    if (envelope.headers !== undefined && Object.keys(envelope.headers).length > 0) {
        fields.push(`"Headers":${goJsonValue(envelope.headers, `envelope "${envelope.id}" header`)}`);
    }
    fields.push(
        `"CreatedAt":"${formatGoTime(envelope.createdAt ?? 0)}"`,
        `"ExpiresAt":"${formatGoTime(envelope.expiresAt ?? 0)}"`,
    );
    return goJsonEscape(`{${fields.join(",")}}`);
}

function optionalString(wire: Record<string, unknown>, key: string): string {
    const value = wire[key];
    if (value === undefined || value === null) return "";
    if (typeof value !== "string") {
        throw new OutboxError("INVALID_PAYLOAD", `envelope_json "${key}" must be a string, got ${typeof value}`);
    }
    return value;
}

/**
 * Decode GoBridge's `envelope_json`.
 *
 * @param json - The JSON text of the envelope.
 * @throws OutboxError `INVALID_PAYLOAD` when the text is not an envelope object, the id is empty, the payload is
 * not base64 or a time is not RFC 3339.
 */
export function decodeEnvelope(json: string): Envelope {
    let parsed: unknown;
    try {
        parsed = JSON.parse(json);
    } catch (cause) {
        throw new OutboxError("INVALID_PAYLOAD", "envelope_json is not valid JSON", { cause });
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new OutboxError(
            "INVALID_PAYLOAD",
            `envelope_json must be a JSON object, got ${Array.isArray(parsed) ? "an array" : typeof parsed}`,
        );
    }
    const wire = parsed as Record<string, unknown>;
    const id = optionalString(wire, "ID");
    if (id === "")
        throw new OutboxError("INVALID_PAYLOAD", "envelope_json has an empty ID; an envelope needs a non-empty id");
    const payloadBase64 = optionalString(wire, "Payload");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payloadBase64) || payloadBase64.length % 4 !== 0) {
        throw new OutboxError("INVALID_PAYLOAD", "envelope_json Payload is not standard base64", {
            context: { envelopeId: id },
        });
    }
    const headers = wire.Headers;
    if (headers !== undefined && headers !== null && (typeof headers !== "object" || Array.isArray(headers))) {
        throw new OutboxError("INVALID_PAYLOAD", "envelope_json Headers must be a JSON object", {
            context: { envelopeId: id },
        });
    }
    const createdAt = optionalString(wire, "CreatedAt");
    const expiresAt = optionalString(wire, "ExpiresAt");
    return {
        id,
        subject: optionalString(wire, "Subject"),
        payload: Buffer.from(payloadBase64, "base64").toString("utf8"),
        headers: (headers ?? {}) as Record<string, unknown>,
        createdAt: createdAt === "" ? 0 : parseGoTime(createdAt, "CreatedAt"),
        expiresAt: expiresAt === "" ? 0 : parseGoTime(expiresAt, "ExpiresAt"),
    };
}
