/**
 * The single source of truth for the outbox table's shape.
 *
 * Every other file (the Pulumi component, `createTable`, `preflight`, the policy pack, the operator tools and
 * the tests) reads key attributes, index names, projections, the TTL attribute, the stream view and the
 * stream filter from here. The layout is GoBridge's DynamoDB outbox layout, byte for byte, so a GoBridge
 * process can drain what this package writes and the reverse.
 *
 * This module has no imports, on purpose: it is safe to load from Lambda code, Pulumi programs and policy
 * packs alike.
 *
 * @packageDocumentation
 */

/** A DynamoDB scalar attribute type as used in key schemas. */
export type ScalarAttributeType = "S" | "N" | "B";

/** A key role in a DynamoDB key schema. */
export type KeyType = "HASH" | "RANGE";

/** One element of a key schema: which attribute plays which role, and its scalar type. */
export interface KeyElement {
    /** The attribute name. */
    readonly attributeName: string;
    /** `HASH` (partition key) or `RANGE` (sort key). */
    readonly keyType: KeyType;
    /** The attribute's scalar type, as declared in the table's attribute definitions. */
    readonly attributeType: ScalarAttributeType;
}

/** The projection types DynamoDB supports for a secondary index. */
export type ProjectionType = "KEYS_ONLY" | "INCLUDE" | "ALL";

/** The shape of one global secondary index the outbox requires. */
export interface IndexShape {
    /** The index name, exactly as DynamoDB knows it. */
    readonly indexName: string;
    /** The key schema, HASH first, then RANGE when there is one. */
    readonly keySchema: readonly KeyElement[];
    /** The projection the index must have. */
    readonly projectionType: ProjectionType;
    /** Why the index exists, for error messages and docs. */
    readonly purpose: string;
}

/** Item attribute names of an outbox record, of the per-partition FENCE row and of the id guard row. */
export const ATTR = {
    /** Partition key: the aggregate's partition, e.g. `ORDER#1001`. */
    pk: "PK",
    /**
     * Sort key: `OUTBOX#<esc(envelopeId)>#<esc(bindingId)>` for records, `FENCE` for the fence row, `ID` for an
     * id guard row.
     */
    sk: "SK",
    /** Application record id (RecordIDIndex hash key; never empty). */
    recordId: "record_id",
    /** Route id (may be empty). */
    routeId: "route_id",
    /** Envelope id: the authoritative identity the SK is derived from. */
    envelopeId: "envelope_id",
    /** Binding id: the authoritative identity the SK is derived from; on an id guard row, the holder's binding id. */
    bindingId: "binding_id",
    /** Session id (may be empty). */
    sessionId: "session_id",
    /** Egress address, e.g. the topic ARN. */
    address: "address",
    /** The envelope as JSON (GoBridge's wire format). */
    envelopeJson: "envelope_json",
    /** Per-message dispatch headers as a JSON object; only written when headers were given. */
    headersJson: "headers_json",
    /** `pending`, `claimed`, `completed` or `expired`. */
    status: "status",
    /** The fencing version of the last claim (N). */
    claimVersion: "claim_version",
    /** How many times the record was claimed (N). */
    replayCount: "replay_count",
    /** Creation time, epoch ms (N); on an id guard row, the creation time of the record that holds the id. */
    createdAt: "created_at",
    /** Expiry time, epoch ms (N); `0` when the record never expires. */
    expiresAt: "expires_at",
    /** Completion time, epoch ms (N); `0` until completed. */
    completedAt: "completed_at",
    /** Per-partition sequence number (N). */
    seq: "seq",
    /** `pad19(created_at)#pad20(seq)`: ClaimIndex range key, only on non-terminal records. */
    claimSort: "claim_sort",
    /**
     * On non-terminal records with an expiry: ExpiryIndex hash key. `"1"` ({@link HAS_EXPIRY_FLAG}), or one of the
     * shard values {@link expiryShardValue} gives when the writer has `expiryShards` > 1.
     */
    hasExpiry: "has_expiry",
    /** The ordering key, denormalised from the envelope header; only present when non-empty. */
    orderingKey: "ordering_key",
    /** First claim time, epoch ms (N); absent until the first claim. */
    firstAttemptedAt: "first_attempted_at",
    /** Owner of the current claim; absent when not claimed. */
    claimedBy: "claimed_by",
    /** Time of the current claim, epoch ms (N); absent when not claimed. */
    claimedAt: "claimed_at",
    /** DynamoDB TTL, epoch seconds (N); only on terminal records, FENCE rows and id guard rows. */
    ttl: "ttl",
    /**
     * The region whose writer wrote the record (S), e.g. `us-east-1`: the origin stamp. Only on records written with a
     * region (the writer's `region`, by default `AWS_REGION`). On a global table each region's relay takes only its
     * own region's records ({@link streamFilterPatterns}). This package's own; GoBridge ignores it.
     */
    originRegion: "origin_region",
    /** Permanent publish failures counted on the record (N); this package's own, GoBridge ignores it. */
    publishAttempts: "publish_attempts",
    /** FENCE row: the highest fencing version accepted for the partition (N). */
    maxClaimVersion: "max_claim_version",
    /** FENCE row: the partition's atomic sequence counter (N). */
    seqCounter: "seq_counter",
    /**
     * FENCE row: the latest `created_at` a seq allocation of this package handed out for the partition, epoch ms
     * (N). No later allocation hands out an earlier one, so per-key order does not depend on the writers' clocks.
     * This package's own; GoBridge writers neither read nor set it.
     */
    lastCreatedAt: "last_created_at",
    /** Id guard row: the partition (`PK`) of the record that holds the id. */
    idOwnerPartition: "owner_partition",
    /**
     * Expiry shards row: the most ExpiryIndex shards any writer of this package has used on the table (N, raise-only).
     * This package's own; GoBridge neither reads nor writes the row.
     */
    maxExpiryShards: "max_expiry_shards",
    /**
     * Sweep cursor row: the ClaimIndex key (M of `PK`, `SK`, `claim_sort`) the sweeper's next scan starts after;
     * absent when the next scan starts at the beginning. This package's own; GoBridge neither reads nor writes it.
     */
    sweepCursor: "sweep_cursor",
} as const;

/** The record states. `pending → claimed → completed | expired`, and `claimed → pending` on release. */
export const STATUS = {
    /** Written, not yet delivered. */
    pending: "pending",
    /** Leased by a relay holding a fencing token. */
    claimed: "claimed",
    /** Delivered; carries `ttl` = completion time + grace. */
    completed: "completed",
    /** Past `expires_at` before delivery; carries `ttl` = sweep cutoff + grace. */
    expired: "expired",
} as const;

/** A record status value. */
export type RecordStatus = (typeof STATUS)[keyof typeof STATUS];

/**
 * The stored `status` texts that mean pending, besides an absent attribute: `pending` and the empty string. GoBridge's
 * codec reads an empty or missing status as pending (reference §2.2), so every reader here does too: the codec,
 * the publisher's status read, the claim scan, and every store filter and condition (`isPending` in
 * `store/expressions.ts`, which spells it `attribute_not_exists(status) OR status = "pending" OR status = ""`).
 */
export const PENDING_STATUS_TEXTS = [STATUS.pending, ""] as const;

/**
 * A stored `status` as a reader takes it: an absent or empty one is `pending` ({@link PENDING_STATUS_TEXTS}); any
 * other text is returned as it is (the caller decides what an unknown one means).
 *
 * @param text - The item's `status` string, or `undefined` when the attribute is absent.
 */
export function statusOf(text: string | undefined): string {
    return text === undefined || text === "" ? STATUS.pending : text;
}

/** The sort-key prefix of every outbox record. */
export const RECORD_SK_PREFIX = "OUTBOX#";

/** The sort key of the per-partition metadata row holding the fence and the sequence counter. */
export const FENCE_SK = "FENCE";

/**
 * The partition-key prefix of an id guard row, `OUTBOX_ID#<record id>` (the id raw: it is the whole rest of the
 * key, so no escaping is needed). The writer puts one in the same transaction as a record whose id it did not
 * generate, conditioned on its absence, so a record id is held by one record table-wide (RecordIDIndex resolves
 * an id with `Limit 1`, and the id is the SNS FIFO deduplication id and the id consumers deduplicate on).
 */
export const ID_GUARD_PK_PREFIX = "OUTBOX_ID#";

/**
 * The sort key of an id guard row. It does not start with {@link RECORD_SK_PREFIX}, so the stream filter drops
 * the row's INSERT and no `begins_with(SK, "OUTBOX#")` record query sees it; like the FENCE row it has no GSI key
 * attribute (`record_id`, `claim_sort`, `has_expiry`), so no index holds it.
 */
export const ID_GUARD_SK = "ID";

/**
 * The value of `has_expiry` on records that have an expiry, as GoBridge writes it and as this package writes it
 * with `expiryShards` 1 (the default). The expiry readers always query it, whatever their own setting.
 */
export const HAS_EXPIRY_FLAG = "1";

/**
 * The `has_expiry` value of ExpiryIndex shard `shard` (0-based), in GoBridge's planned form `1#<n>`: written
 * instead of {@link HAS_EXPIRY_FLAG} when `expiryShards` is more than 1, so expiring writes spread over that many
 * ExpiryIndex partition key values instead of one.
 *
 * @param shard - The shard, from 0 to `expiryShards - 1`.
 */
export function expiryShardValue(shard: number): string {
    return `${HAS_EXPIRY_FLAG}#${shard}`;
}

/**
 * The partition key of the expiry shards row, which holds {@link ATTR}.maxExpiryShards: the high-water mark of the
 * shard counts writers have used, so an expiry reader whose own `expiryShards` is lower (an old deployment, or a
 * lowered setting) still queries every shard that may hold a record. Like the FENCE and id guard rows it has no
 * GSI key attribute and no `OUTBOX#` sort key: no index holds it and the stream filter drops it.
 */
export const EXPIRY_SHARDS_PK = "OUTBOX_META#expiry-shards";

/** The sort key of the expiry shards row. */
export const EXPIRY_SHARDS_SK = "META";

/**
 * The partition key of the sweep cursor row, which holds {@link ATTR}.sweepCursor: where in ClaimIndex's scan order
 * the sweeper's next run starts, so partitions that never drain cannot keep the ones after them from being reached
 * (`runtime/relay/sweep-cursor.ts`). Like the expiry shards row it has no GSI key attribute and no `OUTBOX#` sort key: no
 * index holds it and the stream filter drops it.
 */
export const SWEEP_CURSOR_PK = "OUTBOX_META#sweep-cursor";

/** The sort key of the sweep cursor row. */
export const SWEEP_CURSOR_SK = "META";

/**
 * The inbox marker (`Inbox`): the row a consumer writes in the same transaction as its own writes, conditioned on
 * its absence, so a redelivered message changes nothing. Its key is derived from the consumer's name, the
 * message's source (`outbox.source`) and its outbox id: `PK = INBOX#<consumer>@<source>`, `SK = <outbox id>` (on a
 * table without a sort key, `PK = INBOX#<consumer>@<source>#<outbox id>`). A message without a source (an older
 * publisher's, a GoBridge relay's) keeps the older key, `PK = INBOX#<consumer>`, `SK = <outbox id>` (`PK =
 * INBOX#<consumer>#<outbox id>`). Consumer names and sources hold neither `#` nor `@`, so the two forms never meet.
 * With `markerShards` N > 1 the partition ends in `~<shard>` (0 to N-1, from the outbox id): `PK =
 * INBOX#<consumer>@<source>~<shard>` (`INBOX#<consumer>~<shard>` without a source, and `…~<shard>#<outbox id>` on a
 * table without a sort key). Consumer names and sources hold no `~` either, and in every older form the consumer's
 * name (or the source) is followed by `@`, `#` or nothing, never `~`: so a sharded key never equals an older one. N = 1
 * writes the older keys byte for byte.
 * The key attribute names are the inbox's settings; these are their defaults.
 * Outbox tables never hold it unless a consumer puts its inbox there: the prefix matches no outbox row, and its
 * sort key does not start with {@link RECORD_SK_PREFIX}, so the stream filter drops it.
 */
export const INBOX_MARKER = {
    /** The partition-key prefix, followed by the consumer's name. */
    partitionPrefix: "INBOX#",
    /** Between the consumer's name and the message's source, in the partition key of a marker keyed on a source. */
    sourceSeparator: "@",
    /** Between the consumer's name (and source) and the marker's shard number, when `markerShards` is more than 1. */
    shardSeparator: "~",
    /** Before the outbox id, in the partition key of a marker on a table without a sort key. */
    idSeparator: "#",
    /** The default partition key attribute. */
    partitionKey: ATTR.pk,
    /** The default sort key attribute. */
    sortKey: ATTR.sk,
    /** The default TTL attribute (epoch seconds): the table's TTL attribute, so DynamoDB deletes old markers. */
    ttl: ATTR.ttl,
    /** When the consumer's writes were applied, epoch ms (N). */
    appliedAt: "applied_at",
} as const;

/** The table's primary key: PK (S, HASH), SK (S, RANGE). */
export const PRIMARY_KEY: readonly KeyElement[] = [
    { attributeName: ATTR.pk, keyType: "HASH", attributeType: "S" },
    { attributeName: ATTR.sk, keyType: "RANGE", attributeType: "S" },
];

/** Sparse index of non-terminal records with an expiry, ordered by expiry. Used by the expiry sweep. */
export const EXPIRY_INDEX: IndexShape = {
    indexName: "ExpiryIndex",
    keySchema: [
        { attributeName: ATTR.hasExpiry, keyType: "HASH", attributeType: "S" },
        { attributeName: ATTR.expiresAt, keyType: "RANGE", attributeType: "N" },
    ],
    projectionType: "KEYS_ONLY",
    purpose: "the expiry sweep finds pending records past expires_at",
};

/** Index of every record by its record id. Used by complete/release when the key cache misses. */
export const RECORD_ID_INDEX: IndexShape = {
    indexName: "RecordIDIndex",
    keySchema: [{ attributeName: ATTR.recordId, keyType: "HASH", attributeType: "S" }],
    projectionType: "KEYS_ONLY",
    purpose: "complete and release resolve a record id to its keys",
};

/**
 * Sparse, age-ordered index of the non-terminal records of each partition. Used by the claim fast path and
 * the depth counts. It must be projected ALL, because the claim query filters on non-key attributes.
 */
export const CLAIM_INDEX: IndexShape = {
    indexName: "ClaimIndex",
    keySchema: [
        { attributeName: ATTR.pk, keyType: "HASH", attributeType: "S" },
        { attributeName: ATTR.claimSort, keyType: "RANGE", attributeType: "S" },
    ],
    projectionType: "ALL",
    purpose: "the claim query filters on the non-key status attribute",
};

/** The three required global secondary indexes, in preflight order. */
export const GLOBAL_SECONDARY_INDEXES: readonly IndexShape[] = [EXPIRY_INDEX, RECORD_ID_INDEX, CLAIM_INDEX];

/** Every attribute that appears in a key schema, with its type, deduplicated: the table's attribute definitions. */
export const ATTRIBUTE_DEFINITIONS: readonly {
    readonly attributeName: string;
    readonly attributeType: ScalarAttributeType;
}[] = [PRIMARY_KEY, ...GLOBAL_SECONDARY_INDEXES.map((i) => i.keySchema)]
    .flat()
    .filter((e, i, all) => all.findIndex((o) => o.attributeName === e.attributeName) === i)
    .map((e) => ({ attributeName: e.attributeName, attributeType: e.attributeType }));

/** The attribute DynamoDB TTL deletes terminal records, FENCE rows and id guard rows by (epoch seconds). */
export const TTL_ATTRIBUTE = ATTR.ttl;

/** The stream view the publisher needs: the new image carries the whole record. */
export const STREAM_VIEW_TYPE = "NEW_IMAGE";

/**
 * The stream view types that carry the new image, so the publisher can read a record from its INSERT: the
 * schema's {@link STREAM_VIEW_TYPE}, and `NEW_AND_OLD_IMAGES`, which carries it too at a higher cost.
 */
export const STREAM_VIEW_TYPES_WITH_NEW_IMAGE: readonly string[] = [STREAM_VIEW_TYPE, "NEW_AND_OLD_IMAGES"];

/**
 * The Lambda event source mapping filter, as data: only INSERTs of outbox records. Filtering on `Keys` works
 * for every stream view type; MODIFY (claims, completions) and TTL REMOVEs stay out.
 * Serialize it with {@link streamFilterPatternJson}.
 */
export const STREAM_FILTER_PATTERN = {
    eventName: ["INSERT"],
    dynamodb: { Keys: { [ATTR.sk]: { S: [{ prefix: RECORD_SK_PREFIX }] } } },
} as const;

/** The filter pattern as the JSON string an event source mapping's `filterCriteria` takes. */
export function streamFilterPatternJson(): string {
    return JSON.stringify(STREAM_FILTER_PATTERN);
}

/**
 * Which records one region's relay takes on a global table, by their origin stamp ({@link ATTR}.originRegion).
 * Exactly one region of the table is the home region; together the regions take every record once:
 * - every region takes the records stamped with its own `region`;
 * - the home region also takes the records no region of the table would take: unstamped ones (written before
 *   stamping, by GoBridge, or by a writer without a region) and ones stamped with a region that is not one of
 *   `otherRegions` (a writer with a wrong `region` setting). So no record is left to no one.
 */
export interface OriginScope {
    /** This relay's region. */
    readonly region: string;
    /** The table's other regions (its replicas, seen from here). */
    readonly otherRegions: readonly string[];
    /** Whether this is the home region, which also takes what no region would. */
    readonly home: boolean;
}

/**
 * The event source mapping filters (OR-ed, one `FilterCriteria.Filters` entry each) of a relay with `scope`: without
 * one (a single-region outbox), exactly `[STREAM_FILTER_PATTERN]`, byte for byte today's filter. With one, the same
 * pattern narrowed on the new image's origin stamp: the region's own records; in the home region, every stamp but
 * the other regions' (`anything-but`), and, as a second filter, the unstamped records (`exists: false`).
 *
 * @param scope - The relay's origin scope; `undefined` for a single-region outbox.
 */
export function streamFilterPatterns(scope?: OriginScope): readonly object[] {
    if (scope === undefined) return [STREAM_FILTER_PATTERN];
    const narrowed = (stamp: readonly unknown[]): object => ({
        ...STREAM_FILTER_PATTERN,
        dynamodb: { ...STREAM_FILTER_PATTERN.dynamodb, NewImage: { [ATTR.originRegion]: { S: stamp } } },
    });
    if (!scope.home) return [narrowed([scope.region])];
    const others = scope.otherRegions.filter((r) => r !== scope.region);
    return [
        narrowed(others.length === 0 ? [{ prefix: "" }] : [{ "anything-but": [...others] }]),
        narrowed([{ exists: false }]),
    ];
}

/**
 * Whether a relay with `scope` takes a record with origin stamp `origin` (`undefined` when unstamped): the rule
 * {@link streamFilterPatterns} filters by, for the claims, the sweep and the completions.
 *
 * @param scope - The relay's origin scope; `undefined` takes every record.
 * @param origin - The record's stamp.
 */
export function originTaken(scope: OriginScope | undefined, origin: string | undefined): boolean {
    if (scope === undefined) return true;
    if (origin === scope.region) return true;
    return scope.home && (origin === undefined || !scope.otherRegions.includes(origin));
}

/** The tag the component puts on the table so policies can recognise an outbox table. */
export const OUTBOX_TABLE_TAG = { key: "dynamodb-outbox:table", value: "true" } as const;
