/**
 * The inbox marker's key, with and without shards (issue 35): the shard function pinned to FNV-1a's published
 * values (a marker must be found by every later version), `markerShards` 1 giving every older key byte for byte,
 * and, by property, that the key is injective: a decoder recovers (consumer, source, shard, outbox id) from every
 * key, so two distinct tuples never share a marker row, and no older (unsharded) key equals a sharded one.
 */
import * as assert from "node:assert/strict";
import fc from "fast-check";
import {
    inboxMarkerKey,
    inboxMarkerPartition,
    inboxMarkerShard,
    type InboxMarkerLayout,
} from "../../../runtime/inbox/marker";
import { INBOX_MARKER } from "../../../runtime/schema";
import { INBOX_LIMITS } from "../../../runtime/limits";

const WITH_SORT: InboxMarkerLayout = { partitionKey: "PK", sortKey: "SK", ttl: "ttl" };
const WITHOUT_SORT: InboxMarkerLayout = { partitionKey: "PK", sortKey: null, ttl: "ttl" };

/** The key as one string: the partition key, and the sort key after a separator no key value can hold. */
function keyText(layout: InboxMarkerLayout, key: ReturnType<typeof inboxMarkerKey>): string {
    return layout.sortKey === null ? key.PK!.S! : `${key.PK!.S!}\u0000${key.SK!.S!}`;
}

/** A marker's identity: who, from where, which shard (undefined: the unsharded key), which event. */
interface Identity {
    readonly consumer: string;
    readonly source: string | undefined;
    readonly shard: number | undefined;
    readonly outboxId: string;
}

const NAME_CLASS = "[A-Za-z0-9_.:-]+";
const PARTITION = new RegExp(
    `^${INBOX_MARKER.partitionPrefix}(${NAME_CLASS})(?:${INBOX_MARKER.sourceSeparator}(${NAME_CLASS}))?(?:${INBOX_MARKER.shardSeparator}(0|[1-9][0-9]*))?`,
);

/**
 * The identity a key was built from, read back from the key alone. Consumer names and sources hold no `@`, `~` or
 * `#`, so each part ends where the next separator starts: the parse has one answer.
 */
function decode(layout: InboxMarkerLayout, text: string): Identity {
    const [pk, sk] = layout.sortKey === null ? [text, undefined] : text.split("\u0000");
    const m = PARTITION.exec(pk!);
    assert.ok(m, `not a marker partition: ${pk}`);
    const rest = pk!.slice(m[0].length);
    let outboxId: string;
    if (layout.sortKey === null) {
        assert.ok(rest.startsWith(INBOX_MARKER.idSeparator), `no id separator after the partition: ${pk}`);
        outboxId = rest.slice(INBOX_MARKER.idSeparator.length);
    } else {
        assert.equal(rest, "", `trailing text after the partition: ${pk}`);
        outboxId = sk!;
    }
    return { consumer: m[1]!, source: m[2], shard: m[3] === undefined ? undefined : Number(m[3]), outboxId };
}

/** Names as consumers and sources may be, short so that collisions of parts are likely. */
const name = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,6}$/);
/** Outbox ids full of the separators and digits a collision would need, and any other text. */
const outboxId = fc.oneof(
    fc.string({ unit: fc.constantFrom("~", "#", "@", "0", "1", "7", "a", "-"), minLength: 1, maxLength: 8 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
);
const { min, max } = INBOX_LIMITS.markerShards;
const marker = fc.record({
    consumer: name,
    source: fc.option(name, { nil: undefined }),
    shards: fc.integer({ min, max }),
    outboxId,
});

describe("inbox marker key: shards (issue 35)", function () {
    it("the shard is FNV-1a (32 bit) over the id's UTF-8 bytes, modulo the shard count: pinned to the published values", () => {
        // FNV-1a's reference values (Fowler, Noll, Vo): "" 0x811c9dc5, "a" 0xe40c292c, "foobar" 0xbf9cf968.
        assert.equal(inboxMarkerShard("", 2 ** 32), 0x811c9dc5);
        assert.equal(inboxMarkerShard("a", 2 ** 32), 0xe40c292c);
        assert.equal(inboxMarkerShard("foobar", 2 ** 32), 0xbf9cf968);
        // UTF-8 bytes, not UTF-16 code units: "é" is C3 A9.
        assert.equal(inboxMarkerShard("é", 2 ** 32), 0x1e9de8c1);
        assert.deepEqual(
            ["evt-1001", "01JEXAMPLE0000000000000000"].map((id) => [8, 64].map((n) => inboxMarkerShard(id, n))),
            [
                [7, 47],
                [6, 14],
            ],
        );
        assert.equal(inboxMarkerShard("anything", 1), 0);
    });

    it("markerShards 1 gives every older key byte for byte, sourced and sourceless, with a sort key and without", () => {
        assert.deepEqual(inboxMarkerKey(WITH_SORT, "billing", "evt-1", "orders"), {
            PK: { S: "INBOX#billing@orders" },
            SK: { S: "evt-1" },
        });
        assert.deepEqual(inboxMarkerKey(WITH_SORT, "billing", "evt-1", undefined, 1), {
            PK: { S: "INBOX#billing" },
            SK: { S: "evt-1" },
        });
        assert.deepEqual(inboxMarkerKey(WITHOUT_SORT, "billing", "evt-1", "orders", 1), {
            PK: { S: "INBOX#billing@orders#evt-1" },
        });
        assert.deepEqual(inboxMarkerKey(WITHOUT_SORT, "billing", "evt-1"), { PK: { S: "INBOX#billing#evt-1" } });
    });

    it("markerShards N > 1 appends ~<shard> to the partition, the shard from the outbox id", () => {
        assert.deepEqual(inboxMarkerKey(WITH_SORT, "billing", "evt-1001", "orders", 8), {
            PK: { S: "INBOX#billing@orders~7" },
            SK: { S: "evt-1001" },
        });
        assert.deepEqual(inboxMarkerKey(WITH_SORT, "billing", "evt-1001", undefined, 64), {
            PK: { S: "INBOX#billing~47" },
            SK: { S: "evt-1001" },
        });
        assert.deepEqual(inboxMarkerKey(WITHOUT_SORT, "billing", "evt-1001", "orders", 8), {
            PK: { S: "INBOX#billing@orders~7#evt-1001" },
        });
        assert.equal(inboxMarkerPartition("billing", "orders", 3), "INBOX#billing@orders~3");
    });

    it("the shard separator is none of the older separators and no consumer name or source can hold it", () => {
        const { shardSeparator, sourceSeparator, idSeparator, partitionPrefix } = INBOX_MARKER;
        assert.notEqual(shardSeparator, sourceSeparator);
        assert.notEqual(shardSeparator, idSeparator);
        assert.ok(!partitionPrefix.includes(shardSeparator));
        assert.ok(!new RegExp(`^${NAME_CLASS}$`).test(shardSeparator));
    });

    for (const [label, layout] of [
        ["with a sort key", WITH_SORT],
        ["without a sort key", WITHOUT_SORT],
    ] as const) {
        it(`property (${label}): the key gives back (consumer, source, shard, outbox id), so distinct ones never share a row`, () => {
            fc.assert(
                fc.property(marker, (m) => {
                    const key = keyText(layout, inboxMarkerKey(layout, m.consumer, m.outboxId, m.source, m.shards));
                    assert.deepEqual(decode(layout, key), {
                        consumer: m.consumer,
                        source: m.source,
                        shard: m.shards > 1 ? inboxMarkerShard(m.outboxId, m.shards) : undefined,
                        outboxId: m.outboxId,
                    });
                }),
                { seed: 35, numRuns: 2000 },
            );
        });

        it(`property (${label}): an older key (markerShards 1) never equals a sharded one, and two distinct identities never meet`, () => {
            fc.assert(
                fc.property(marker, marker, (a, b) => {
                    const older = keyText(layout, inboxMarkerKey(layout, a.consumer, a.outboxId, a.source, 1));
                    const sharded = keyText(
                        layout,
                        inboxMarkerKey(layout, b.consumer, b.outboxId, b.source, Math.max(2, b.shards)),
                    );
                    assert.notEqual(older, sharded);
                    const ka = keyText(layout, inboxMarkerKey(layout, a.consumer, a.outboxId, a.source, a.shards));
                    const kb = keyText(layout, inboxMarkerKey(layout, b.consumer, b.outboxId, b.source, b.shards));
                    const shardA = a.shards > 1 ? inboxMarkerShard(a.outboxId, a.shards) : undefined;
                    const shardB = b.shards > 1 ? inboxMarkerShard(b.outboxId, b.shards) : undefined;
                    const same =
                        a.consumer === b.consumer &&
                        a.source === b.source &&
                        a.outboxId === b.outboxId &&
                        shardA === shardB;
                    assert.equal(ka === kb, same);
                }),
                { seed: 35, numRuns: 2000 },
            );
        });
    }

    it("the decoder is not vacuous: it tells apart keys that differ only by where a separator falls", () => {
        assert.deepEqual(decode(WITHOUT_SORT, "INBOX#c~1#2"), {
            consumer: "c",
            source: undefined,
            shard: 1,
            outboxId: "2",
        });
        assert.deepEqual(decode(WITHOUT_SORT, "INBOX#c#~1#2"), {
            consumer: "c",
            source: undefined,
            shard: undefined,
            outboxId: "~1#2",
        });
    });
});
