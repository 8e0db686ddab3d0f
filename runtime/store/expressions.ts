/**
 * DynamoDB expressions built from named pieces. Every attribute name goes through a `#name` placeholder and every
 * value through a `:value` placeholder; pieces compose with {@link and} / {@link or} and merge their placeholders.
 *
 * @packageDocumentation
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { OutboxError } from "../errors";
import { ATTR, PENDING_STATUS_TEXTS, RECORD_SK_PREFIX, STATUS, type OriginScope, type RecordStatus } from "../schema";

/** An expression with its placeholders. */
export interface Expression {
    /** The expression text. */
    readonly text: string;
    /** `#placeholder` → attribute name. */
    readonly names: Readonly<Record<string, string>>;
    /** `:placeholder` → value. */
    readonly values: Readonly<Record<string, AttributeValue>>;
}

/** The placeholder of an attribute name. */
export function nameRef(attribute: string): string {
    return `#${attribute}`;
}

function names(...attributes: string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const a of attributes) out[nameRef(a)] = a;
    return out;
}

function mergeValues(parts: readonly Expression[]): Record<string, AttributeValue> {
    const out: Record<string, AttributeValue> = {};
    for (const part of parts) {
        for (const [k, v] of Object.entries(part.values)) {
            const prior = out[k];
            if (prior !== undefined && JSON.stringify(prior) !== JSON.stringify(v)) {
                throw new OutboxError(
                    "INVALID_CONFIG",
                    `expression placeholder ${k} is bound to two values, ${JSON.stringify(prior)} and ${JSON.stringify(v)}: a bug in the expression pieces`,
                );
            }
            out[k] = v;
        }
    }
    return out;
}

function join(op: "AND" | "OR", parts: readonly Expression[]): Expression {
    return {
        text: parts.length === 1 ? parts[0].text : parts.map((p) => `(${p.text})`).join(` ${op} `),
        names: Object.assign({}, ...parts.map((p) => p.names)),
        values: mergeValues(parts),
    };
}

/** All pieces must hold. */
export function and(...parts: Expression[]): Expression {
    return join("AND", parts);
}

/** One of the pieces must hold. */
export function or(...parts: Expression[]): Expression {
    return join("OR", parts);
}

/** `status = <status>`. */
export function statusIs(status: RecordStatus): Expression {
    return {
        text: `${nameRef(ATTR.status)} = :status_${status}`,
        names: names(ATTR.status),
        values: { [`:status_${status}`]: { S: status } },
    };
}

/**
 * `attribute_not_exists(status) OR status = "pending" OR status = ""`: a pending record, including a row written
 * without a `status` or with an empty one (an older GoBridge build), which the codec reads as pending too
 * (`PENDING_STATUS_TEXTS` and `statusOf` in schema.ts). Every store filter and condition on "pending" uses this, so
 * such a row is claimed, counted, completed and expired like any pending record instead of being republished on
 * every redelivery and never swept.
 */
export function isPending(): Expression {
    const texts = PENDING_STATUS_TEXTS.map((text): Expression => {
        const placeholder = text === "" ? ":status_empty" : `:status_${text}`;
        return {
            text: `${nameRef(ATTR.status)} = ${placeholder}`,
            names: names(ATTR.status),
            values: { [placeholder]: { S: text } },
        };
    });
    return or(...texts, {
        text: `attribute_not_exists(${nameRef(ATTR.status)})`,
        names: names(ATTR.status),
        values: {},
    });
}

/**
 * The records a relay with origin scope `scope` takes (`originTaken` in schema.ts, as a condition): `origin_region =
 * <region>`; in the home region also an absent stamp or one that is none of the other regions'. `undefined` when the
 * scope takes every record (no scope, or a home region with no other regions): then nothing is added to the
 * expression, so a single-region outbox sends byte for byte today's requests.
 */
export function originIs(scope: OriginScope | undefined): Expression | undefined {
    if (scope === undefined) return undefined;
    const others = scope.otherRegions.filter((r) => r !== scope.region);
    if (scope.home && others.length === 0) return undefined;
    const origin = nameRef(ATTR.originRegion);
    if (!scope.home)
        return {
            text: `${origin} = :origin_region`,
            names: names(ATTR.originRegion),
            values: { ":origin_region": { S: scope.region } },
        };
    const values: Record<string, AttributeValue> = {};
    others.forEach((r, i) => (values[`:origin_other_${i}`] = { S: r }));
    return {
        text: `attribute_not_exists(${origin}) OR NOT (${origin} IN (${Object.keys(values).join(", ")}))`,
        names: names(ATTR.originRegion),
        values,
    };
}

/** `claim_version < token version`: the record was claimed by an older lease. */
export function claimVersionBelow(version: bigint): Expression {
    return {
        text: `${nameRef(ATTR.claimVersion)} < :token_version`,
        names: names(ATTR.claimVersion),
        values: { ":token_version": { N: version.toString() } },
    };
}

/** `claim_version = token version`. */
export function claimVersionIs(version: bigint): Expression {
    return {
        text: `${nameRef(ATTR.claimVersion)} = :token_version`,
        names: names(ATTR.claimVersion),
        values: { ":token_version": { N: version.toString() } },
    };
}

/** `claimed_by = token owner`. */
export function claimedByIs(owner: string): Expression {
    return {
        text: `${nameRef(ATTR.claimedBy)} = :token_owner`,
        names: names(ATTR.claimedBy),
        values: { ":token_owner": { S: owner } },
    };
}

/** `claimed_at < staleMs`: the claim is older than the stale-claim window (`0` disables: no claim is older). */
export function claimedBefore(staleMs: number): Expression {
    return {
        text: `${nameRef(ATTR.claimedAt)} < :stale_ms`,
        names: names(ATTR.claimedAt),
        values: { ":stale_ms": { N: String(staleMs) } },
    };
}

/**
 * The claimability predicate (reference §4.4 step 6):
 * `status = pending OR (status = claimed AND (claim_version < version OR claimed_at < staleMs))`, where a row
 * without `status` counts as pending (`isPending`).
 */
export function claimable(version: bigint, staleMs: number): Expression {
    return or(isPending(), and(statusIs(STATUS.claimed), or(claimVersionBelow(version), claimedBefore(staleMs))));
}

/** `status = pending (or absent) OR status = claimed`: every non-terminal record. */
export function nonTerminal(): Expression {
    return or(isPending(), statusIs(STATUS.claimed));
}

/** The Complete/Release fence: `status = claimed AND claimed_by = owner AND claim_version = version`. */
export function heldBy(owner: string, version: bigint): Expression {
    return and(statusIs(STATUS.claimed), claimedByIs(owner), claimVersionIs(version));
}

/** The claim-time FENCE check: `attribute_not_exists(max_claim_version) OR max_claim_version <= version`. */
export function fenceAllows(version: bigint): Expression {
    const attr = nameRef(ATTR.maxClaimVersion);
    return {
        text: `attribute_not_exists(${attr}) OR ${attr} <= :token_version`,
        names: names(ATTR.maxClaimVersion),
        values: { ":token_version": { N: version.toString() } },
    };
}

/** The fence-raise condition: `attribute_not_exists(max_claim_version) OR max_claim_version < version`. */
export function fenceBelow(version: bigint): Expression {
    const attr = nameRef(ATTR.maxClaimVersion);
    return {
        text: `attribute_not_exists(${attr}) OR ${attr} < :token_version`,
        names: names(ATTR.maxClaimVersion),
        values: { ":token_version": { N: version.toString() } },
    };
}

/**
 * The seq-allocation clock check: `attribute_not_exists(last_created_at) OR last_created_at <= ms`. With the writer's
 * now it holds when no allocation of the partition handed out a `created_at` later than that.
 *
 * @param ms - The latest `last_created_at` that passes, epoch ms.
 */
export function lastCreatedAtNotAfter(ms: number): Expression {
    const attr = nameRef(ATTR.lastCreatedAt);
    return {
        text: `attribute_not_exists(${attr}) OR ${attr} <= :now_ms`,
        names: names(ATTR.lastCreatedAt),
        values: { ":now_ms": { N: String(ms) } },
    };
}

/** `attribute_not_exists(SK)`: the Persist put never overwrites. */
export function skAbsent(): Expression {
    return { text: `attribute_not_exists(${nameRef(ATTR.sk)})`, names: names(ATTR.sk), values: {} };
}

/** `ttl < nowSeconds`: the row's DynamoDB TTL has passed (TTL deletes such a row, but only within days). */
export function ttlPassed(nowSeconds: number): Expression {
    return {
        text: `${nameRef(ATTR.ttl)} < :now_seconds`,
        names: names(ATTR.ttl),
        values: { ":now_seconds": { N: String(Math.floor(nowSeconds)) } },
    };
}

/**
 * The id guard Put's condition: `attribute_not_exists(SK) OR ttl < nowSeconds`. The id is free when no guard
 * holds it, or when the guard's ttl has passed and only DynamoDB's lazy TTL deletion keeps it around, so the
 * guard's window ends exactly at its ttl rather than up to days later.
 */
export function idGuardFree(nowSeconds: number): Expression {
    return or(skAbsent(), ttlPassed(nowSeconds));
}

/** `expires_at > 0 AND expires_at < beforeMs`. */
export function expiresBefore(beforeMs: number): Expression {
    const attr = nameRef(ATTR.expiresAt);
    return {
        text: `${attr} > :zero AND ${attr} < :before_ms`,
        names: names(ATTR.expiresAt),
        values: { ":zero": { N: "0" }, ":before_ms": { N: String(beforeMs) } },
    };
}

/** Key condition `PK = partition`. */
export function partitionIs(partition: string): Expression {
    return { text: `${nameRef(ATTR.pk)} = :pk`, names: names(ATTR.pk), values: { ":pk": { S: partition } } };
}

/** Key condition `PK = partition AND begins_with(SK, "OUTBOX#")`: the partition's records, never its FENCE row. */
export function partitionRecords(partition: string): Expression {
    return {
        text: `${nameRef(ATTR.pk)} = :pk AND begins_with(${nameRef(ATTR.sk)}, :record_prefix)`,
        names: names(ATTR.pk, ATTR.sk),
        values: { ":pk": { S: partition }, ":record_prefix": { S: RECORD_SK_PREFIX } },
    };
}

/**
 * The Query of a partition's records (never its FENCE row) that `filter` keeps, read consistently.
 *
 * @param tableName - The outbox table.
 * @param partition - The partition key value.
 * @param filter - Which records the query keeps.
 */
export function partitionRecordsQuery(
    tableName: string,
    partition: string,
    filter: Expression,
): ExpressionFields & {
    TableName: string;
    KeyConditionExpression: string;
    FilterExpression: string;
    ConsistentRead: true;
} {
    const key = partitionRecords(partition);
    return {
        TableName: tableName,
        KeyConditionExpression: key.text,
        FilterExpression: filter.text,
        ConsistentRead: true,
        ...placeholders(and(key, filter)),
    };
}

/** Key condition `record_id = id` (RecordIDIndex). */
export function recordIdIs(recordId: string): Expression {
    return {
        text: `${nameRef(ATTR.recordId)} = :record_id`,
        names: names(ATTR.recordId),
        values: { ":record_id": { S: recordId } },
    };
}

/** Key condition `has_expiry = "1" AND expires_at < beforeMs` (ExpiryIndex). */
export function expiringBefore(flag: string, beforeMs: number): Expression {
    return {
        text: `${nameRef(ATTR.hasExpiry)} = :has_expiry AND ${nameRef(ATTR.expiresAt)} < :before_ms`,
        names: names(ATTR.hasExpiry, ATTR.expiresAt),
        values: { ":has_expiry": { S: flag }, ":before_ms": { N: String(beforeMs) } },
    };
}

/** One `SET` clause: an attribute and the value expression assigned to it. */
export interface SetClause {
    /** The attribute to set. */
    readonly attribute: string;
    /** The value placeholder (e.g. `:now_ms`) or a function of placeholders. */
    readonly value: string;
}

/** The parts of an update expression. */
export interface UpdateParts {
    /** `SET` clauses with the values they reference. @default [] */
    readonly set?: readonly SetClause[];
    /** `ADD` clauses. @default [] */
    readonly add?: readonly SetClause[];
    /** Attributes to `REMOVE`. @default [] */
    readonly remove?: readonly string[];
    /** The values the clauses reference. @default {} */
    readonly values?: Readonly<Record<string, AttributeValue>>;
    /** Extra attribute names referenced inside values (e.g. by `if_not_exists`). @default [] */
    readonly alsoNames?: readonly string[];
}

/** Build an update expression from SET / ADD / REMOVE parts. */
export function updateExpression(parts: UpdateParts): Expression {
    const clauses: string[] = [];
    const set = parts.set ?? [];
    const add = parts.add ?? [];
    const remove = parts.remove ?? [];
    if (set.length > 0) clauses.push(`SET ${set.map((c) => `${nameRef(c.attribute)} = ${c.value}`).join(", ")}`);
    if (add.length > 0) clauses.push(`ADD ${add.map((c) => `${nameRef(c.attribute)} ${c.value}`).join(", ")}`);
    if (remove.length > 0) clauses.push(`REMOVE ${remove.map(nameRef).join(", ")}`);
    return {
        text: clauses.join(" "),
        names: names(
            ...set.map((c) => c.attribute),
            ...add.map((c) => c.attribute),
            ...remove,
            ...(parts.alsoNames ?? []),
        ),
        values: parts.values ?? {},
    };
}

/** The expression fields of a request. */
export interface ExpressionFields {
    /** Attribute-name placeholders. */
    ExpressionAttributeNames?: Record<string, string>;
    /** Attribute-value placeholders (omitted when there are none: DynamoDB rejects an empty map). */
    ExpressionAttributeValues?: Record<string, AttributeValue>;
}

/** Merge the placeholders of several expressions into request fields. */
export function placeholders(...parts: Expression[]): ExpressionFields {
    const values = mergeValues(parts);
    const out: ExpressionFields = { ExpressionAttributeNames: Object.assign({}, ...parts.map((p) => p.names)) };
    if (Object.keys(values).length > 0) out.ExpressionAttributeValues = values;
    return out;
}

/** A projection of the given attributes (`#a, #b`). */
export function projection(...attributes: string[]): Expression {
    return { text: attributes.map(nameRef).join(", "), names: names(...attributes), values: {} };
}
