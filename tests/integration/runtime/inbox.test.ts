/**
 * The inbox on DynamoDB Local: the consumer's writes and the marker in one transaction, a repeat reported as a
 * duplicate that changes nothing, the consumer's own failed condition surfaced as its error with no marker left,
 * two consumers each applying once, the marker's key, TTL and layouts, and every refused option and input. Two
 * faults DynamoDB Local cannot produce go through a wrapping client, which says so: throttling before the write,
 * and an answer lost after the commit.
 */
import * as assert from "node:assert/strict";
import {
    GetItemCommand,
    TransactWriteItemsCommand,
    type AttributeValue,
    type DynamoDBClient,
    type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { Inbox, type InboxOptions } from "../../../runtime/inbox/inbox";
import { INBOX_LIMITS } from "../../../runtime/limits";
import { OutboxError, isOutboxError } from "../../../runtime/errors";
import { manualClock } from "../../support/runtime/harness";
import { createConsumerTable, scanItems } from "../../support/runtime/table";
import { freshConsumerTable } from "../../support/inbox/world";

/** The consumer's effect in these tests: one invoice row per order, its total counted up (so a second apply shows). */
function invoice(table: string, orderId: string, total: number): TransactWriteItem {
    return {
        Update: {
            TableName: table,
            Key: { PK: { S: `INVOICE#${orderId}` }, SK: { S: "META" } },
            UpdateExpression: "ADD #total :t, applied :one",
            ExpressionAttributeNames: { "#total": "total" },
            ExpressionAttributeValues: { ":t": { N: String(total) }, ":one": { N: "1" } },
        },
    };
}

async function getItem(
    ddb: DynamoDBClient,
    table: string,
    key: Record<string, AttributeValue>,
): Promise<Record<string, AttributeValue> | undefined> {
    return (await ddb.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
}

/** A client that fails a TransactWriteItems the way DynamoDB can and DynamoDB Local cannot (a fake, for that fault only). */
function faultyClient(
    inner: DynamoDBClient,
    fault: "throttle-before" | "lost-answer-after",
    times = 1,
): DynamoDBClient & { faults: number } {
    const wrapped = {
        faults: 0,
        send: async (command: object) => {
            if (command instanceof TransactWriteItemsCommand && wrapped.faults < times) {
                wrapped.faults += 1;
                if (fault === "throttle-before")
                    throw Object.assign(new Error("Rate exceeded (injected)"), {
                        name: "ProvisionedThroughputExceededException",
                    });
                await inner.send(command);
                throw Object.assign(new Error("We encountered an internal error (injected, after the commit)"), {
                    name: "InternalServerError",
                    $fault: "server",
                });
            }
            return inner.send(command as never);
        },
    };
    return wrapped as unknown as DynamoDBClient & { faults: number };
}

/** An inbox (consumer "billing", table "t") on a client that counts what it is sent; after each test, nothing was. */
function offlineInbox(): () => Inbox {
    let sent = 0;
    afterEach(() => assert.equal(sent, 0, "nothing was sent"));
    return () =>
        new Inbox({
            client: { send: async () => void (sent += 1) } as unknown as DynamoDBClient,
            consumer: "billing",
            tableName: "t",
        });
}

/** One test per case: `run` on a fresh `inbox()` is refused with INVALID_PAYLOAD, its message matching. */
function itRefusesEach(
    cases: readonly [string, (inbox: Inbox) => Promise<unknown>, RegExp][],
    inbox: () => Inbox,
): void {
    for (const [name, run, message] of cases) {
        it(name, async () => {
            await assert.rejects(
                run(inbox()),
                (err: unknown) => isOutboxError(err, "INVALID_PAYLOAD") && message.test(err.message),
            );
        });
    }
}

/** How many times invoice `orderId`'s row was applied (its `applied` counter), or undefined with no row. */
async function invoiceApplied(ddb: DynamoDBClient, table: string, orderId: string): Promise<string | undefined> {
    return (await getItem(ddb, table, { PK: { S: `INVOICE#${orderId}` }, SK: { S: "META" } }))?.applied?.N;
}

describe("Inbox: the consumer's writes and the marker, once (DynamoDB Local)", function () {
    this.timeout(60_000);
    let ddb: DynamoDBClient, table: string;
    before(async () => ({ ddb, table } = await freshConsumerTable("inbox")));

    it("applies the writes and the marker together; a repeat is a duplicate and changes nothing", async () => {
        const clock = manualClock(Date.UTC(2026, 0, 1));
        const inbox = new Inbox({ client: ddb, consumer: "billing", tableName: table, clock });
        assert.deepEqual(await inbox.apply("01JOUTBOXID0000000000000001", [invoice(table, "1", 42)]), {
            outcome: "applied",
        });
        assert.deepEqual(await inbox.apply("01JOUTBOXID0000000000000001", [invoice(table, "1", 42)]), {
            outcome: "duplicate",
        });
        assert.deepEqual(await inbox.apply("01JOUTBOXID0000000000000001", [invoice(table, "1", 99)]), {
            outcome: "duplicate",
        });
        const row = await getItem(ddb, table, { PK: { S: "INVOICE#1" }, SK: { S: "META" } });
        assert.equal(row?.total?.N, "42");
        assert.equal(row?.applied?.N, "1");

        const marker = await getItem(ddb, table, {
            PK: { S: "INBOX#billing" },
            SK: { S: "01JOUTBOXID0000000000000001" },
        });
        assert.ok(marker, "the marker is PK=INBOX#<consumer>, SK=<outbox id>");
        assert.equal(marker.applied_at?.N, String(Date.UTC(2026, 0, 1)));
        assert.equal(
            marker.ttl?.N,
            String(Date.UTC(2026, 0, 1) / 1000 + 15 * 24 * 3600),
            "TTL 15 days after the apply by default",
        );
    });

    it("with no writes, records the message as seen: the marker alone", async () => {
        const inbox = new Inbox({ client: ddb, consumer: "audit", tableName: table });
        assert.equal((await inbox.apply("seen-only-1")).outcome, "applied");
        assert.equal((await inbox.apply("seen-only-1", [])).outcome, "duplicate");
        assert.ok(await getItem(ddb, table, inbox.markerKey("seen-only-1")));
    });

    it("two consumers with different names each apply the same outbox id once", async () => {
        const billing = new Inbox({ client: ddb, consumer: "billing-2", tableName: table });
        const shipping = new Inbox({ client: ddb, consumer: "shipping-2", tableName: table });
        const id = "shared-outbox-id-7";
        assert.equal((await billing.apply(id, [invoice(table, "b7", 1)])).outcome, "applied");
        assert.equal((await shipping.apply(id, [invoice(table, "s7", 1)])).outcome, "applied");
        assert.equal((await billing.apply(id, [invoice(table, "b7", 1)])).outcome, "duplicate");
        assert.equal((await shipping.apply(id, [invoice(table, "s7", 1)])).outcome, "duplicate");
        assert.equal(await invoiceApplied(ddb, table, "b7"), "1");
        assert.equal(await invoiceApplied(ddb, table, "s7"), "1");
        assert.deepEqual(billing.markerKey(id), { PK: { S: "INBOX#billing-2" }, SK: { S: id } });
        assert.deepEqual(shipping.markerKey(id), { PK: { S: "INBOX#shipping-2" }, SK: { S: id } });
    });

    it("the consumer's own failed condition is its error (CONDITION_FAILED, naming the item), leaves no marker, and the retry applies", async () => {
        const inbox = new Inbox({ client: ddb, consumer: "billing-3", tableName: table });
        const customer = { PK: { S: "CUSTOMER#77" }, SK: { S: "META" } };
        const writes: TransactWriteItem[] = [
            { ConditionCheck: { TableName: table, Key: customer, ConditionExpression: "attribute_exists(PK)" } },
            invoice(table, "3", 10),
        ];
        await assert.rejects(inbox.apply("needs-customer-77", writes), (err: unknown) => {
            assert.ok(isOutboxError(err, "CONDITION_FAILED"), String(err));
            assert.equal(err.transient, false);
            assert.match(
                err.message,
                /items\[0\] \(ConditionCheck on table "[^"]+" PK=CUSTOMER#77, SK=META\): ConditionalCheckFailed.*the consumer's own condition failed/,
            );
            assert.match(err.message, /nothing was applied and no marker written/);
            assert.equal(err.context.failedKind, "item");
            assert.equal(err.context.failedAction, 0);
            return true;
        });
        assert.equal(
            await getItem(ddb, table, inbox.markerKey("needs-customer-77")),
            undefined,
            "no marker after a failed write",
        );
        assert.equal(
            await getItem(ddb, table, { PK: { S: "INVOICE#3" }, SK: { S: "META" } }),
            undefined,
            "nothing of the consumer's either",
        );

        await ddb.send(
            new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: table, Item: customer } }] }),
        );
        assert.equal((await inbox.apply("needs-customer-77", writes)).outcome, "applied");
        assert.equal(await invoiceApplied(ddb, table, "3"), "1");
    });

    it("a throttled write (injected before it reaches DynamoDB) is THROTTLED and transient, leaves no marker, and the retry applies", async () => {
        const client = faultyClient(ddb, "throttle-before");
        const inbox = new Inbox({ client, consumer: "billing-4", tableName: table });
        await assert.rejects(
            inbox.apply("throttled-1", [invoice(table, "4", 5)]),
            (err: unknown) =>
                isOutboxError(err, "THROTTLED") &&
                err.transient &&
                /inbox "billing-4" \(outbox id "throttled-1"\): the transaction failed; nothing was applied/.test(
                    err.message,
                ),
        );
        assert.equal(await getItem(ddb, table, inbox.markerKey("throttled-1")), undefined);
        assert.equal((await inbox.apply("throttled-1", [invoice(table, "4", 5)])).outcome, "applied");
        assert.equal(await invoiceApplied(ddb, table, "4"), "1");
    });

    it("an answer lost after the commit (injected) fails transiently; the retry finds the marker and reports a duplicate: applied once", async () => {
        const client = faultyClient(ddb, "lost-answer-after");
        const inbox = new Inbox({ client, consumer: "billing-5", tableName: table });
        await assert.rejects(
            inbox.apply("lost-answer-1", [invoice(table, "5", 5)]),
            (err: unknown) => isOutboxError(err, "UNAVAILABLE") && err.transient,
        );
        assert.equal((await inbox.apply("lost-answer-1", [invoice(table, "5", 5)])).outcome, "duplicate");
        assert.equal(await invoiceApplied(ddb, table, "5"), "1");
    });

    it("the same message applied twice at once: one applies, the other is a duplicate or a transient conflict, never applied twice", async () => {
        const inbox = new Inbox({ client: ddb, consumer: "billing-6", tableName: table });
        const settled = await Promise.allSettled(
            Array.from({ length: 6 }, () => inbox.apply("racing-1", [invoice(table, "6", 1)])),
        );
        const applied = settled.filter((s) => s.status === "fulfilled" && s.value.outcome === "applied").length;
        assert.equal(
            applied,
            1,
            JSON.stringify(settled.map((s) => (s.status === "fulfilled" ? s.value.outcome : String(s.reason)))),
        );
        for (const s of settled) {
            if (s.status === "rejected") assert.ok(isOutboxError(s.reason) && s.reason.transient, String(s.reason));
        }
        assert.equal(await invoiceApplied(ddb, table, "6"), "1");
    });

    it("a table of its own, with other key names, a sort key or none, and another TTL attribute and duration", async () => {
        const own = await createConsumerTable(ddb, "inbox-own", { partitionKey: "pk", sortKeyName: "sk" });
        const inbox = new Inbox({
            client: ddb,
            consumer: "billing",
            tableName: own,
            partitionKey: "pk",
            sortKey: "sk",
            ttlAttribute: "expires",
            markerTtlSeconds: 3600,
            clock: manualClock(1_000_000_000_000),
        });
        assert.equal((await inbox.apply("own-1", [invoice(table, "own", 1)])).outcome, "applied");
        assert.equal((await inbox.apply("own-1", [invoice(table, "own", 1)])).outcome, "duplicate");
        const marker = await getItem(ddb, own, { pk: { S: "INBOX#billing" }, sk: { S: "own-1" } });
        assert.equal(marker?.expires?.N, String(1_000_000_000 + 3600));
        assert.equal(marker?.ttl, undefined);

        const hashOnly = await createConsumerTable(ddb, "inbox-hash", { sortKey: false, partitionKey: "id" });
        const flat = new Inbox({
            client: ddb,
            consumer: "billing",
            tableName: hashOnly,
            partitionKey: "id",
            sortKey: null,
        });
        assert.deepEqual(flat.markerKey("flat-1"), { id: { S: "INBOX#billing#flat-1" } });
        assert.equal((await flat.apply("flat-1")).outcome, "applied");
        assert.equal((await flat.apply("flat-1")).outcome, "duplicate");
        assert.deepEqual(
            (await scanItems(ddb, hashOnly)).map((i) => i.id?.S),
            ["INBOX#billing#flat-1"],
        );
    });

    it("prepare puts the consumer's writes first and the marker's conditional Put last, and sends nothing", () => {
        const inbox = new Inbox({ client: ddb, consumer: "billing", tableName: table, clock: manualClock(5_000) });
        const input = inbox.prepare("prep-1", [invoice(table, "p", 1)]);
        assert.equal(input.TransactItems?.length, 2);
        assert.ok(input.TransactItems?.[0]?.Update);
        assert.deepEqual(input.TransactItems?.[1], {
            Put: {
                TableName: table,
                Item: {
                    PK: { S: "INBOX#billing" },
                    SK: { S: "prep-1" },
                    applied_at: { N: "5000" },
                    ttl: { N: String(5 + INBOX_LIMITS.markerTtlSeconds.fallback) },
                },
                ConditionExpression: "attribute_not_exists(#pk)",
                ExpressionAttributeNames: { "#pk": "PK" },
            },
        });
    });

    describe("refuses bad options (INVALID_CONFIG, naming the option, the value, what is allowed)", () => {
        const cases: [string, (client: DynamoDBClient) => Partial<InboxOptions> | undefined, RegExp][] = [
            ["no options", () => undefined, /Inbox: options must be an object/],
            [
                "no client",
                () => ({ client: undefined as unknown as DynamoDBClient }),
                /client must be a DynamoDBClient/,
            ],
            [
                "an empty consumer",
                () => ({ consumer: "" }),
                /consumer is ""; a consumer name is 1 to 128 letters, digits/,
            ],
            [
                "a consumer with #",
                () => ({ consumer: "billing#eu" }),
                /consumer is "billing#eu"; .*no '#', '@' or space.*e\.g\. "billing"/,
            ],
            [
                "a consumer with @ (the marker key's separator before the source)",
                () => ({ consumer: "billing@eu" }),
                /consumer is "billing@eu"; .*no '#', '@' or space: it is part of the marker key INBOX#<consumer>@<source>/,
            ],
            ["a consumer with a space", () => ({ consumer: "the billing" }), /consumer is "the billing"/],
            ["a consumer of 129 characters", () => ({ consumer: "c".repeat(129) }), /a consumer name is 1 to 128/],
            [
                "no table",
                () => ({ tableName: "" }),
                /tableName is ""; it must be the name of the table the markers go in/,
            ],
            ["an empty partition key name", () => ({ partitionKey: "" }), /partitionKey is ""; .*omit it for "PK"/],
            [
                "a sort key name that is not a string",
                () => ({ sortKey: 7 as unknown as string }),
                /sortKey is 7; .*omit it for "SK"/,
            ],
            ["an empty TTL attribute", () => ({ ttlAttribute: "" }), /ttlAttribute is ""; .*omit it for "ttl"/],
            [
                "the TTL on the sort key",
                () => ({ ttlAttribute: "SK" }),
                /the attribute "SK" is given two roles .*give each its own attribute/,
            ],
            [
                "the same key twice",
                () => ({ partitionKey: "id", sortKey: "id" }),
                /the attribute "id" is given two roles/,
            ],
            [
                "the TTL on applied_at",
                () => ({ ttlAttribute: "applied_at" }),
                /the attribute "applied_at" is given two roles/,
            ],
            [
                "a TTL under 60 s",
                () => ({ markerTtlSeconds: 59 }),
                /Inbox: markerTtlSeconds is 59; expected an integer from 60 to 31536000; omit it for the default 1296000/,
            ],
            ["a TTL over a year", () => ({ markerTtlSeconds: 365 * 24 * 3600 + 1 }), /markerTtlSeconds is 31536001/],
            ["a fractional TTL", () => ({ markerTtlSeconds: 3600.5 }), /markerTtlSeconds is 3600\.5/],
        ];
        for (const [name, options, message] of cases) {
            it(name, () => {
                const given = options(ddb);
                const full =
                    given === undefined ? undefined : { client: ddb, consumer: "billing", tableName: "t", ...given };
                assert.throws(
                    () => new Inbox(full as InboxOptions),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && message.test(err.message),
                );
            });
        }
    });

    describe("refuses bad input before sending anything (INVALID_PAYLOAD, naming the id or the item)", () => {
        const big = (bytes: number): TransactWriteItem => ({
            Put: {
                TableName: "t",
                Item: { PK: { S: `BIG#${bytes}` }, SK: { S: "x" }, blob: { S: "x".repeat(bytes) } },
            },
        });
        const counting = offlineInbox();
        const cases: [string, (inbox: Inbox) => Promise<unknown>, RegExp][] = [
            [
                "an empty outbox id",
                (i) => i.apply(""),
                /inbox "billing": the outbox id is ""; it must be the message's non-empty outbox\.id/,
            ],
            ["an outbox id that is not a string", (i) => i.apply(7 as unknown as string), /the outbox id is 7/],
            [
                "an outbox id over 1024 bytes",
                (i) => i.apply("é".repeat(513)),
                /the outbox id is 1026 bytes; the marker's sort key holds at most 1024/,
            ],
            [
                "items that are not an array",
                (i) => i.apply("id-1", {} as unknown as TransactWriteItem[]),
                /items must be an array of TransactWriteItem/,
            ],
            [
                "100 items (the marker takes the 100th slot)",
                (i) =>
                    i.apply(
                        "id-1",
                        Array.from({ length: 100 }, (_, n) => big(n)),
                    ),
                /100 items \+ the inbox marker = 101 actions; a DynamoDB transaction holds at most 100, so a message's writes are at most 99/,
            ],
            [
                "a hole in the items",
                (i) => i.apply("id-1", [big(1), , big(2)] as TransactWriteItem[]),
                /items\[1\] is a hole in a sparse array/,
            ],
            [
                "an item that is not an action",
                (i) => i.apply("id-1", [null as unknown as TransactWriteItem]),
                /items\[0\] must be a TransactWriteItem/,
            ],
            [
                "an item with no action",
                (i) => i.apply("id-1", [{} as TransactWriteItem]),
                /items\[0\] has none of Put, Update, Delete, ConditionCheck/,
            ],
            [
                "an item over 400 KB",
                (i) => i.apply("id-1", [big(400 * 1024)]),
                /items\[0\] \(Put on table "t" PK=BIG#409600, SK=x\) is 4096\d\d bytes; DynamoDB items hold at most 409600/,
            ],
            [
                "items over 4 MB together",
                (i) =>
                    i.apply(
                        "id-1",
                        Array.from({ length: 11 }, (_, n) => big(390 * 1024 + n)),
                    ),
                /the items and the marker add up to \d+ bytes; a DynamoDB transaction holds at most 4194304/,
            ],
            [
                "items over 4 MB as DynamoDB counts them (a value each update uses twice counts twice)",
                (i) =>
                    i.apply(
                        "id-1",
                        Array.from({ length: 6 }, (_, n) => ({
                            Update: {
                                TableName: "t",
                                Key: { PK: { S: `U#${n}` }, SK: { S: "x" } },
                                UpdateExpression: "SET #a = :v, #b = :v",
                                ExpressionAttributeNames: { "#a": "a", "#b": "b" },
                                ExpressionAttributeValues: { ":v": { S: "v".repeat(380 * 1024) } },
                            },
                        })),
                    ),
                /the items and the marker add up to \d+ bytes; a DynamoDB transaction holds at most 4194304/,
            ],
            [
                "an item on the marker's own key",
                (i) =>
                    i.apply("id-1", [
                        { Put: { TableName: "t", Item: { PK: { S: "INBOX#billing" }, SK: { S: "id-1" } } } },
                    ]),
                /items\[0\] \(Put on table "t" PK=INBOX#billing, SK=id-1\) is on the inbox marker's own key/,
            ],
        ];
        itRefusesEach(cases, counting);
        it("99 items and the marker fit", async () => {
            const input = counting().prepare(
                "id-1",
                Array.from({ length: 99 }, (_, n) => big(n)),
            );
            assert.equal(input.TransactItems?.length, 100);
        });
    });

    it("a cancellation whose every reason is TransactionConflict is transient; one with no reasons is UNAVAILABLE", async () => {
        const cancelled = (reasons: { Code: string }[]) => ({
            send: async () => {
                throw Object.assign(new Error("Transaction cancelled"), {
                    name: "TransactionCanceledException",
                    CancellationReasons: reasons,
                });
            },
        });
        const conflict = new Inbox({
            client: cancelled([{ Code: "None" }, { Code: "TransactionConflict" }]) as unknown as DynamoDBClient,
            consumer: "c",
            tableName: "t",
        });
        await assert.rejects(conflict.apply("x", [invoice("t", "1", 1)]), (err: unknown) => {
            assert.ok(err instanceof OutboxError && err.transient, String(err));
            assert.match(
                err.message,
                /the inbox marker \(table "t"\): TransactionConflict; another transaction touched the same items/,
            );
            assert.equal(err.context.failedKind, "marker");
            return true;
        });
        const none = new Inbox({ client: cancelled([]) as unknown as DynamoDBClient, consumer: "c", tableName: "t" });
        await assert.rejects(
            none.apply("x"),
            (err: unknown) => isOutboxError(err, "UNAVAILABLE") && /cancelled with no reasons/.test(err.message),
        );
        const validation = new Inbox({
            client: cancelled([{ Code: "ValidationError" }, { Code: "None" }]) as unknown as DynamoDBClient,
            consumer: "c",
            tableName: "t",
        });
        await assert.rejects(
            validation.apply("x", [invoice("t", "1", 1)]),
            (err: unknown) =>
                isOutboxError(err, "INVALID_PAYLOAD") &&
                !err.transient &&
                /items\[0\] \(Update on table "t" PK=INVOICE#1, SK=META\): ValidationError/.test(err.message),
        );
    });
});

describe("Inbox: sources, and the older key after the upgrade (issue 33; DynamoDB Local)", function () {
    this.timeout(60_000);
    let ddb: DynamoDBClient, table: string;
    before(async () => ({ ddb, table } = await freshConsumerTable("inbox-sources")));
    const applied = (orderId: string) => invoiceApplied(ddb, table, orderId);

    it("keys the marker on (consumer, source, outbox id): the same id from two sources applies twice, once each; the same source again is a duplicate", async () => {
        const inbox = new Inbox({ client: ddb, consumer: "ledger", tableName: table });
        const orders = { outboxId: "evt-1001", source: "orders-outbox" };
        const payments = { outboxId: "evt-1001", source: "payments-outbox" };
        assert.equal((await inbox.apply(orders, [invoice(table, "orders-1001", 1)])).outcome, "applied");
        assert.equal((await inbox.apply(payments, [invoice(table, "payments-1001", 1)])).outcome, "applied");
        assert.equal((await inbox.apply(payments, [invoice(table, "payments-1001", 1)])).outcome, "duplicate");
        assert.deepEqual([await applied("orders-1001"), await applied("payments-1001")], ["1", "1"]);
        assert.deepEqual(inbox.markerKey(orders), { PK: { S: "INBOX#ledger@orders-outbox" }, SK: { S: "evt-1001" } });
        assert.ok(await getItem(ddb, table, inbox.markerKey(payments)));
        assert.deepEqual(
            inbox.markerKey("evt-1001"),
            { PK: { S: "INBOX#ledger" }, SK: { S: "evt-1001" } },
            "an outbox id alone (a message without a source) keeps the older key",
        );
        const flat = new Inbox({ client: ddb, consumer: "ledger", tableName: "t", partitionKey: "id", sortKey: null });
        assert.deepEqual(flat.markerKey(orders), { id: { S: "INBOX#ledger@orders-outbox#evt-1001" } });
    });

    it("after the upgrade: an event applied under the older key, delivered again with its source, is a duplicate (legacyMarkerCheck, on by default); off, or past its date, it would apply again", async () => {
        // The marker an inbox before sources wrote (PK = INBOX#<consumer>, SK = <outbox id>): the same key a message
        // without a source still gets.
        const before = new Inbox({ client: ddb, consumer: "billing", tableName: table });
        assert.equal((await before.apply("evt-7", [invoice(table, "o-7", 1)])).outcome, "applied");
        assert.ok(await getItem(ddb, table, { PK: { S: "INBOX#billing" }, SK: { S: "evt-7" } }));

        const redelivered = { outboxId: "evt-7", source: "orders-outbox" };
        const after = new Inbox({ client: ddb, consumer: "billing", tableName: table });
        assert.equal((await after.apply(redelivered, [invoice(table, "o-7", 1)])).outcome, "duplicate");
        const until = new Inbox({
            client: ddb,
            consumer: "billing",
            tableName: table,
            clock: manualClock(Date.UTC(2026, 0, 1)),
            legacyMarkerCheck: new Date(Date.UTC(2026, 0, 16)),
        });
        assert.equal((await until.apply(redelivered, [invoice(table, "o-7", 1)])).outcome, "duplicate");
        assert.equal(await applied("o-7"), "1", "not applied again");
        assert.equal(
            await getItem(ddb, table, after.markerKey(redelivered)),
            undefined,
            "a duplicate writes no marker",
        );

        // Without the check, the same delivery applies again: the check is what stops it.
        const unchecked = new Inbox({ client: ddb, consumer: "billing", tableName: table, legacyMarkerCheck: false });
        const past = new Inbox({
            client: ddb,
            consumer: "billing",
            tableName: table,
            clock: manualClock(Date.UTC(2026, 0, 16)),
            legacyMarkerCheck: new Date(Date.UTC(2026, 0, 16)),
        });
        assert.equal(unchecked.prepare(redelivered).TransactItems?.length, 1, "the marker alone");
        assert.equal(past.prepare(redelivered).TransactItems?.length, 1, "the window is over at its date");
        assert.equal((await unchecked.apply(redelivered, [invoice(table, "o-7", 1)])).outcome, "applied");
        assert.equal(await applied("o-7"), "2");
    });

    it("prepare adds a ConditionCheck of the older key after the marker, for a message with a source only", () => {
        const inbox = new Inbox({ client: ddb, consumer: "billing", tableName: table, clock: manualClock(5_000) });
        const input = inbox.prepare({ outboxId: "prep-2", source: "orders-outbox" }, [invoice(table, "p", 1)]);
        assert.equal(input.TransactItems?.length, 3);
        assert.deepEqual(input.TransactItems?.[1]?.Put?.Item?.PK, { S: "INBOX#billing@orders-outbox" });
        assert.deepEqual(input.TransactItems?.[2], {
            ConditionCheck: {
                TableName: table,
                Key: { PK: { S: "INBOX#billing" }, SK: { S: "prep-2" } },
                ConditionExpression: "attribute_not_exists(#pk)",
                ExpressionAttributeNames: { "#pk": "PK" },
            },
        });
        assert.equal(inbox.prepare("prep-2", [invoice(table, "p", 1)]).TransactItems?.length, 2, "no source: none");
    });

    it("a cancellation on the older key's check names it", async () => {
        const inbox = new Inbox({
            client: {
                send: async () => {
                    throw Object.assign(new Error("Transaction cancelled"), {
                        name: "TransactionCanceledException",
                        CancellationReasons: [{ Code: "None" }, { Code: "None" }, { Code: "TransactionConflict" }],
                    });
                },
            } as unknown as DynamoDBClient,
            consumer: "c",
            tableName: "t",
        });
        await assert.rejects(
            inbox.apply({ outboxId: "x", source: "orders" }, [invoice("t", "1", 1)]),
            (err: unknown) =>
                isOutboxError(err) &&
                err.transient &&
                /inbox "c" \(source "orders", outbox id "x"\): .*the inbox's check of the older marker key \(table "t"\): TransactionConflict/.test(
                    err.message,
                ),
        );
    });

    describe("refuses (INVALID_PAYLOAD before sending anything; INVALID_CONFIG for the option)", () => {
        const counting = offlineInbox();
        const put = (n: number): TransactWriteItem => ({
            Put: { TableName: "t", Item: { PK: { S: `P#${n}` }, SK: { S: "x" } } },
        });
        const cases: [string, (inbox: Inbox) => Promise<unknown>, RegExp][] = [
            [
                "a source with '@'",
                (i) => i.apply({ outboxId: "id-1", source: "orders@eu" }),
                /the message's source \(outbox\.source\) is "orders@eu"; it may hold only letters, digits.*it was not published by one/,
            ],
            [
                "an empty source",
                (i) => i.apply({ outboxId: "id-1", source: "" }),
                /source \(outbox\.source\) is ""; it must be 1 to 255 characters/,
            ],
            [
                "a source of 256 characters",
                (i) => i.apply({ outboxId: "id-1", source: "s".repeat(256) }),
                /must be 1 to 255 characters \(it is 256\)/,
            ],
            [
                "99 items with the older key's check (the marker and the check take 2 of the 100 actions)",
                (i) =>
                    i.apply(
                        { outboxId: "id-1", source: "orders" },
                        Array.from({ length: 99 }, (_, n) => put(n)),
                    ),
                /99 items \+ the inbox marker and its check of the older key \(legacyMarkerCheck\) = 101 actions; .*at most 98; .*or turn legacyMarkerCheck off once its window is over/,
            ],
            [
                "an item on the older key the transaction checks",
                (i) =>
                    i.apply({ outboxId: "id-1", source: "orders" }, [
                        { Delete: { TableName: "t", Key: { PK: { S: "INBOX#billing" }, SK: { S: "id-1" } } } },
                    ]),
                /items\[0\] \(Delete on table "t" PK=INBOX#billing, SK=id-1\) is on the inbox marker's own key/,
            ],
        ];
        itRefusesEach(cases, counting);
        it("98 items with the check fit, and 99 without a source", () => {
            const inbox = counting();
            const items = Array.from({ length: 99 }, (_, n) => put(n));
            assert.equal(
                inbox.prepare({ outboxId: "id-1", source: "orders" }, items.slice(0, 98)).TransactItems?.length,
                100,
            );
            assert.equal(inbox.prepare("id-1", items).TransactItems?.length, 100);
        });
        for (const [name, value] of [
            ["a string", "yes"],
            ["an invalid Date", new Date(Number.NaN)],
            ["a number", 1],
        ] as const) {
            it(`legacyMarkerCheck as ${name} (INVALID_CONFIG)`, () => {
                assert.throws(
                    () =>
                        new Inbox({
                            client: ddb,
                            consumer: "billing",
                            tableName: "t",
                            legacyMarkerCheck: value as unknown as boolean,
                        }),
                    (err: unknown) =>
                        isOutboxError(err, "INVALID_CONFIG") &&
                        /legacyMarkerCheck is .*; it must be true \(check the older marker key\), false \(do not\), or a valid Date \(check it until then\); omit it for true/.test(
                            err.message,
                        ),
                );
            });
        }
    });
});
