/**
 * The inbox past one hot key (issue 35), on DynamoDB Local: with `markerShards` N, one consumer's markers land on N
 * partition keys (read back from the table), a redelivered event is still applied once, markers written before the
 * change (the unsharded keys of earlier versions, sourced and sourceless) are honoured during the
 * `previousMarkerShards` window, an instance still on the previous layout and this one never apply an event twice
 * between them, a later change of N is covered the same way, and the window ends at its date. Refused options
 * are checked offline, on a client that counts what it is sent.
 */
import * as assert from "node:assert/strict";
import type { DynamoDBClient, TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { Inbox, type InboxOptions } from "../../../runtime/inbox/inbox";
import { inboxMarkerKey, inboxMarkerShard } from "../../../runtime/inbox/marker";
import { INBOX_MARKER } from "../../../runtime/schema";
import { OutboxError, isOutboxError } from "../../../runtime/errors";
import { manualClock } from "../../support/runtime/harness";
import { createConsumerTable, scanItems } from "../../support/runtime/table";
import { freshConsumerTable } from "../../support/inbox/world";
import { appendApplied, appliedList } from "../../support/inbox/rows";

const SORTED = { partitionKey: "PK", sortKey: "SK", ttl: "ttl" } as const;

/** The consumer's effect: the event's number appended to its own row, so a second apply shows as a second entry. */
function effect(table: string, id: string, n: number): TransactWriteItem[] {
    return [appendApplied(table, `EFFECT#${id}`, n)];
}

/** The distinct partition keys of the markers of `consumer` in `table`, with how many markers each holds. */
async function markerPartitions(ddb: DynamoDBClient, table: string, consumer: string): Promise<Map<string, number>> {
    const prefix = `${INBOX_MARKER.partitionPrefix}${consumer}`;
    const counts = new Map<string, number>();
    for (const item of await scanItems(ddb, table)) {
        const pk = item.PK?.S ?? "";
        if (pk === prefix || pk.startsWith(`${prefix}${INBOX_MARKER.sourceSeparator}`) || pk.startsWith(`${prefix}~`))
            counts.set(pk, (counts.get(pk) ?? 0) + 1);
    }
    return counts;
}

/**
 * An inbox of `consumer` on `markerShards` shards that still finds the markers of `previous` shards (the deploy
 * window of a change of N).
 */
function reshardedInbox(
    client: DynamoDBClient,
    tableName: string,
    consumer: string,
    markerShards: number,
    previous: number,
): Inbox {
    return new Inbox({ client, consumer, tableName, markerShards, previousMarkerShards: { shards: previous } });
}

describe("Inbox: markers spread over N partition keys (issue 35; DynamoDB Local)", function () {
    this.timeout(120_000);
    let ddb: DynamoDBClient, table: string;
    before(async () => ({ ddb, table } = await freshConsumerTable("inbox-shards")));

    it("markerShards 8: 200 events of one source land on 8 partition keys, each on its shard's key; all redelivered, none applied twice", async () => {
        const inbox = new Inbox({ client: ddb, consumer: "spread", tableName: table, markerShards: 8 });
        const ids = Array.from({ length: 200 }, (_, i) => `evt-${i}`);
        for (const [n, id] of ids.entries())
            assert.equal(
                (await inbox.apply({ outboxId: id, source: "orders" }, effect(table, id, n))).outcome,
                "applied",
            );

        const partitions = await markerPartitions(ddb, table, "spread");
        assert.deepEqual(
            [...partitions.keys()].sort(),
            Array.from({ length: 8 }, (_, k) => `INBOX#spread@orders~${k}`).sort(),
        );
        assert.equal(
            [...partitions.values()].reduce((a, b) => a + b, 0),
            200,
        );
        // FNV-1a spreads 200 ids evenly enough that no key holds more than twice its share.
        assert.ok(Math.max(...partitions.values()) <= 50, `the fullest key holds ${Math.max(...partitions.values())}`);
        for (const id of ids.slice(0, 20))
            assert.deepEqual(inbox.markerKey({ outboxId: id, source: "orders" }), {
                PK: { S: `INBOX#spread@orders~${inboxMarkerShard(id, 8)}` },
                SK: { S: id },
            });

        // Redelivered, by an instance of the same settings: every one a duplicate, every effect applied once.
        const again = new Inbox({ client: ddb, consumer: "spread", tableName: table, markerShards: 8 });
        for (const [n, id] of ids.entries())
            assert.equal(
                (await again.apply({ outboxId: id, source: "orders" }, effect(table, id, n))).outcome,
                "duplicate",
            );
        for (const [n, id] of ids.entries()) assert.deepEqual(await appliedList(ddb, table, `EFFECT#${id}`), [n]);
    });

    it("sourceless events and a table without a sort key are spread the same way", async () => {
        const flatTable = await createConsumerTable(ddb, "inbox-shards-flat", { sortKey: false });
        const flat = new Inbox({ client: ddb, consumer: "flat", tableName: flatTable, sortKey: null, markerShards: 4 });
        const sourceless = new Inbox({ client: ddb, consumer: "nosource", tableName: table, markerShards: 4 });
        const ids = Array.from({ length: 40 }, (_, i) => `e-${i}`);
        for (const id of ids) {
            assert.equal((await flat.apply({ outboxId: id, source: "orders" })).outcome, "applied");
            assert.equal((await sourceless.apply(id)).outcome, "applied");
        }
        const flatKeys = (await scanItems(ddb, flatTable)).map((i) => i.PK!.S!);
        assert.equal(flatKeys.length, 40);
        assert.deepEqual(
            [...new Set(flatKeys.map((k) => k.slice(0, k.indexOf(INBOX_MARKER.idSeparator, "INBOX#".length))))].sort(),
            ["INBOX#flat@orders~0", "INBOX#flat@orders~1", "INBOX#flat@orders~2", "INBOX#flat@orders~3"],
        );
        assert.deepEqual([...(await markerPartitions(ddb, table, "nosource")).keys()].sort(), [
            "INBOX#nosource~0",
            "INBOX#nosource~1",
            "INBOX#nosource~2",
            "INBOX#nosource~3",
        ]);
        for (const id of ids) {
            assert.equal((await flat.apply({ outboxId: id, source: "orders" })).outcome, "duplicate");
            assert.equal((await sourceless.apply(id)).outcome, "duplicate");
        }
    });

    it("markers written before the change (the unsharded keys: sourced, sourceless, and before sources) are honoured while previousMarkerShards { shards: 1 } is on; without it they would apply again", async () => {
        // What an inbox of an earlier version (no shards) wrote, before the upgrade.
        const earlier = new Inbox({ client: ddb, consumer: "upgrade", tableName: table });
        assert.equal(
            (await earlier.apply({ outboxId: "a", source: "orders" }, effect(table, "u-a", 1))).outcome,
            "applied",
        );
        assert.equal((await earlier.apply("b", effect(table, "u-b", 2))).outcome, "applied");
        assert.equal((await earlier.apply("c", effect(table, "u-c", 3))).outcome, "applied");
        assert.deepEqual(
            [...(await markerPartitions(ddb, table, "upgrade")).keys()].sort(),
            ["INBOX#upgrade", "INBOX#upgrade@orders"],
            "today's key forms",
        );

        const after = reshardedInbox(ddb, table, "upgrade", 8, 1);
        // "a" again with its source, "b" again without one, "c" (applied before sources) again with its source.
        assert.equal(
            (await after.apply({ outboxId: "a", source: "orders" }, effect(table, "u-a", 1))).outcome,
            "duplicate",
        );
        assert.equal((await after.apply("b", effect(table, "u-b", 2))).outcome, "duplicate");
        assert.equal(
            (await after.apply({ outboxId: "c", source: "orders" }, effect(table, "u-c", 3))).outcome,
            "duplicate",
        );
        assert.deepEqual(
            [
                await appliedList(ddb, table, "EFFECT#u-a"),
                await appliedList(ddb, table, "EFFECT#u-b"),
                await appliedList(ddb, table, "EFFECT#u-c"),
            ],
            [[1], [2], [3]],
        );

        // Without the window, the sharded key has no marker: the window is what stops the second apply.
        const noWindow = new Inbox({ client: ddb, consumer: "upgrade", tableName: table, markerShards: 8 });
        assert.equal((await noWindow.apply("b", effect(table, "u-b", 2))).outcome, "applied");
        assert.deepEqual(await appliedList(ddb, table, "EFFECT#u-b"), [2, 2]);
    });

    it("during the deploy, an instance still on the previous layout and one on the new never apply an event twice, in either order (and a rollback finds the new markers)", async () => {
        const previous = new Inbox({ client: ddb, consumer: "deploy", tableName: table });
        const current = reshardedInbox(ddb, table, "deploy", 8, 1);
        const ids = Array.from({ length: 20 }, (_, i) => `d-${i}`);
        for (const [n, id] of ids.entries()) {
            const [first, second] = n % 2 === 0 ? [previous, current] : [current, previous];
            const event = { outboxId: id, source: "orders" };
            assert.equal((await first.apply(event, effect(table, id, n))).outcome, "applied");
            assert.equal((await second.apply(event, effect(table, id, n))).outcome, "duplicate");
        }
        for (const [n, id] of ids.entries()) assert.deepEqual(await appliedList(ddb, table, `EFFECT#${id}`), [n]);
    });

    it("changing N later (8 → 3) with previousMarkerShards { shards: 8 }: every event applied under 8 is a duplicate under 3", async () => {
        const eight = new Inbox({ client: ddb, consumer: "resize", tableName: table, markerShards: 8 });
        const ids = Array.from({ length: 60 }, (_, i) => `r-${i}`);
        for (const [n, id] of ids.entries())
            await eight.apply({ outboxId: id, source: "orders" }, effect(table, id, n));
        const moved = ids.filter((id) => `~${inboxMarkerShard(id, 8)}` !== `~${inboxMarkerShard(id, 3)}`);
        assert.ok(moved.length > 30, `${moved.length} of 60 events change key from 8 shards to 3`);

        const three = reshardedInbox(ddb, table, "resize", 3, 8);
        for (const [n, id] of ids.entries())
            assert.equal(
                (await three.apply({ outboxId: id, source: "orders" }, effect(table, id, n))).outcome,
                "duplicate",
            );
        for (const [n, id] of ids.entries()) assert.deepEqual(await appliedList(ddb, table, `EFFECT#${id}`), [n]);

        // Without the window, a moved event's new key has no marker.
        const unwindowed = new Inbox({ client: ddb, consumer: "resize", tableName: table, markerShards: 3 });
        const id = moved[0]!;
        assert.equal(
            (await unwindowed.apply({ outboxId: id, source: "orders" }, effect(table, id, -1))).outcome,
            "applied",
        );
    });

    it("the window ends at previousMarkerShards.until, by the inbox's clock: then only the current layout's key is written", async () => {
        const clock = manualClock(Date.UTC(2026, 0, 1));
        const options: InboxOptions = {
            client: ddb,
            consumer: "window",
            tableName: table,
            clock,
            markerShards: 4,
            previousMarkerShards: { shards: 1, until: new Date(Date.UTC(2026, 0, 16)) },
        };
        const inbox = new Inbox(options);
        const event = { outboxId: "w-1", source: "orders" };
        const put = (a: TransactWriteItem) => a.Put?.Item?.PK?.S ?? a.ConditionCheck?.Key?.PK?.S;
        assert.deepEqual(inbox.prepare(event).TransactItems!.map(put), [
            `INBOX#window@orders~${inboxMarkerShard("w-1", 4)}`,
            "INBOX#window@orders",
            `INBOX#window~${inboxMarkerShard("w-1", 4)}`,
            "INBOX#window",
        ]);
        assert.deepEqual(
            inbox.prepare(event).TransactItems!.map((a) => Object.keys(a)[0]),
            ["Put", "Put", "ConditionCheck", "ConditionCheck"],
            "both layouts' markers, then the older sourceless key's check in both (legacyMarkerCheck)",
        );
        assert.deepEqual(inbox.prepare("w-1").TransactItems!.map(put), [
            `INBOX#window~${inboxMarkerShard("w-1", 4)}`,
            "INBOX#window",
        ]);
        const earlier = new Inbox({ client: ddb, consumer: "window", tableName: table });
        assert.equal((await earlier.apply("w-2", effect(table, "w-2", 1))).outcome, "applied");
        assert.equal((await inbox.apply("w-2", effect(table, "w-2", 1))).outcome, "duplicate");

        clock.advance(15 * 24 * 3600 * 1000);
        assert.deepEqual(inbox.prepare("w-1").TransactItems!.map(put), [`INBOX#window~${inboxMarkerShard("w-1", 4)}`]);
        assert.equal(
            (await inbox.apply("w-2", effect(table, "w-2", 1))).outcome,
            "applied",
            "past its window, a marker of the previous layout is not looked at (so the window must outlive markerTtlSeconds)",
        );
    });

    it("keys both layouts share are written once (DynamoDB refuses two actions on one item): 8 → 4 for an id whose shard is the same", () => {
        const inbox = new Inbox({
            client: { send: async () => ({}) } as unknown as DynamoDBClient,
            consumer: "same",
            tableName: "t",
            markerShards: 4,
            previousMarkerShards: { shards: 8 },
            legacyMarkerCheck: false,
        });
        const ids = Array.from({ length: 20 }, (_, i) => `s-${i}`);
        const same = ids.find((id) => inboxMarkerShard(id, 8) === inboxMarkerShard(id, 4))!;
        const other = ids.find((id) => inboxMarkerShard(id, 8) !== inboxMarkerShard(id, 4))!;
        assert.equal(inbox.prepare({ outboxId: same, source: "o" }).TransactItems!.length, 1);
        assert.equal(inbox.prepare({ outboxId: other, source: "o" }).TransactItems!.length, 2);
        assert.deepEqual(
            inbox.prepare({ outboxId: other, source: "o" }).TransactItems![1]!.Put!.Item!.PK,
            inboxMarkerKey(SORTED, "same", other, "o", 8).PK,
        );
    });

    it("a cancellation on the previous layout's marker names it, and a conflict there is transient", async () => {
        const conflict = Object.assign(new Error("Transaction cancelled [None, None, TransactionConflict]"), {
            name: "TransactionCanceledException",
            CancellationReasons: [{ Code: "None" }, { Code: "None" }, { Code: "TransactionConflict" }],
        });
        // A fake client: DynamoDB Local cannot be made to conflict on one chosen action.
        const refusing = {
            send: async () => {
                throw conflict;
            },
        } as unknown as DynamoDBClient;
        const inbox = reshardedInbox(refusing, "t", "c", 2, 1);
        const err = await inbox.apply("x", [appendApplied("t", "row", 1)]).then(
            () => undefined,
            (e: unknown) => e,
        );
        assert.ok(isOutboxError(err), String(err));
        assert.match(
            (err as OutboxError).message,
            /the inbox marker under the previous layout \(previousMarkerShards 1\) \(table "t"\): TransactionConflict/,
        );
        assert.equal((err as OutboxError).transient, true);
    });

    describe("refuses bad options (INVALID_CONFIG, naming the option, the value, what is allowed)", () => {
        let sent = 0;
        const client = { send: async () => void (sent += 1) } as unknown as DynamoDBClient;
        afterEach(() => assert.equal(sent, 0, "nothing was sent"));
        const cases: [string, Partial<InboxOptions>, RegExp][] = [
            [
                "markerShards 0",
                { markerShards: 0 },
                /Inbox: markerShards is 0; expected an integer from 1 to 64; omit it for the default 1/,
            ],
            ["markerShards 65", { markerShards: 65 }, /markerShards is 65; expected an integer from 1 to 64/],
            ["markerShards 2.5", { markerShards: 2.5 }, /markerShards is 2.5; expected an integer from 1 to 64/],
            ['markerShards "8"', { markerShards: "8" as never }, /markerShards is 8; expected an integer from 1 to 64/],
            [
                "previousMarkerShards as a number",
                { markerShards: 8, previousMarkerShards: 1 as never },
                /previousMarkerShards is 1; it must be \{ shards, until\? \}/,
            ],
            [
                "previousMarkerShards.shards 0",
                { markerShards: 8, previousMarkerShards: { shards: 0 } },
                /previousMarkerShards.shards is 0; expected an integer from 1 to 64/,
            ],
            [
                "previousMarkerShards.shards equal to markerShards",
                { markerShards: 8, previousMarkerShards: { shards: 8 } },
                /previousMarkerShards.shards is 8, the same as markerShards: there is no previous layout to honour; remove previousMarkerShards/,
            ],
            [
                "previousMarkerShards with markerShards left at 1 and shards 1",
                { previousMarkerShards: { shards: 1 } },
                /the same as markerShards/,
            ],
            [
                "previousMarkerShards.until not a Date",
                { markerShards: 8, previousMarkerShards: { shards: 1, until: "2026-02-01" as never } },
                /previousMarkerShards.until is "2026-02-01"; it must be a valid Date/,
            ],
            [
                "previousMarkerShards.until an invalid Date",
                { markerShards: 8, previousMarkerShards: { shards: 1, until: new Date("nope") } },
                /previousMarkerShards.until is .*; it must be a valid Date/,
            ],
        ];
        for (const [name, options, message] of cases) {
            it(name, () => {
                assert.throws(
                    () => new Inbox({ client, consumer: "c", tableName: "t", ...options }),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test((err as Error).message),
                );
            });
        }

        it("the action count counts every action the window adds: 96 items fit with four of the inbox's own, 97 do not", () => {
            const inbox = reshardedInbox(client, "t", "c", 2, 1);
            // An id on shard 1 of 2, so both layouts' keys differ: four actions of the inbox's own.
            const id = ["x0", "x1", "x2", "x3"].find((i) => inboxMarkerShard(i, 2) === 1)!;
            const items = (n: number) => Array.from({ length: n }, (_, i) => appendApplied("other", `r${i}`, i));
            assert.equal(inbox.prepare({ outboxId: id, source: "o" }, items(96)).TransactItems!.length, 100);
            assert.throws(
                () => inbox.prepare({ outboxId: id, source: "o" }, items(97)),
                (err: unknown) =>
                    isOutboxError(err, "INVALID_PAYLOAD") &&
                    /97 items \+ the inbox marker and its copy under the previous layout \(previousMarkerShards 1\), its check of the older key \(legacyMarkerCheck\) and its check of the older key under the previous layout \(previousMarkerShards 1\) = 101 actions; .*at most 96; .*, or remove previousMarkerShards once its window is over, or turn legacyMarkerCheck off once its window is over/.test(
                        (err as Error).message,
                    ),
            );
        });
    });
});
