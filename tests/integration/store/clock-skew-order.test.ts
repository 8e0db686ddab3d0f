/**
 * Per-key order does not depend on the writers' clocks (issue 16 item 4), through the store's Persist on
 * DynamoDB Local: two stores whose clocks disagree, the FENCE row's `last_created_at`, and what each path costs.
 * The writer's side is in tests/integration/runtime/clock-skew-order.test.ts; both go through `allocateSeqRange`.
 */
import {
    DeleteItemCommand,
    GetItemCommand,
    PutItemCommand,
    UpdateItemCommand,
    type AttributeValue,
    type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { marshalRecord, pendingRecord, recordKey } from "../../../runtime/record/codec";
import { fenceKey, unmarshalFence } from "../../../runtime/record/fence";
import { claimSort } from "../../../runtime/record/keys";
import { isOutboxError } from "../../../runtime/errors";
import {
    CLOCK_BEHIND_ERROR_MS,
    MAX_WRITER_CLOCK_MS,
    OutboxStore,
    seqAllocationUpdates,
    STORE_WARNINGS,
} from "../../../runtime/store";
import { dynamoClient } from "../../support/dynamodb";
import { FakeDynamoDb, PASS } from "../../support/store/fake-client";
import { FakeClock, ids, localStore, rec, RecordingLogger, tok } from "../../support/store/helpers";

const T0 = Date.UTC(2026, 0, 1);

async function rawItem(client: DynamoDBClient, tableName: string, key: Record<string, AttributeValue>) {
    return (await client.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
}

/** A fresh table, and two stores beside each other on it: one at `fastMs`, one at `slowMs`. */
async function storesAt(fastMs: number, slowMs = T0) {
    const client = await dynamoClient();
    const { tableName } = await localStore({ client });
    return {
        client,
        tableName,
        fast: storeBeside(client, tableName, fastMs),
        slow: storeBeside(client, tableName, slowMs),
    };
}

/** A second store on the same table, with its own clock and logger, counting its calls on the way to DynamoDB Local. */
function storeBeside(client: DynamoDBClient, tableName: string, clockMs: number) {
    const counting = new FakeDynamoDb(client);
    const clock = new FakeClock(clockMs);
    const logger = new RecordingLogger();
    return {
        store: new OutboxStore({ client: counting, tableName, clock, logger, staleClaimMs: 0 }),
        counting,
        clock,
        logger,
    };
}

describe("seqAllocationUpdates: the two FENCE updates of a seq allocation", () => {
    it("atNow sets last_created_at = now only while the fence is not ahead of now; atFence keeps a later last_created_at however far ahead, with no condition, and returns the whole row", () => {
        const { atNow, atFence } = seqAllocationUpdates("t", "P", 3, T0, 99);
        assert.equal(
            atNow.UpdateExpression,
            "SET #ttl = :fence_ttl, #last_created_at = :now_ms ADD #seq_counter :count",
        );
        assert.equal(
            atNow.ConditionExpression,
            "attribute_not_exists(#last_created_at) OR #last_created_at <= :now_ms",
        );
        assert.equal(atNow.ReturnValues, "UPDATED_NEW");
        assert.equal(
            atFence.UpdateExpression,
            "SET #ttl = :fence_ttl, #last_created_at = if_not_exists(#last_created_at, :now_ms) ADD #seq_counter :count",
        );
        assert.equal(atFence.ConditionExpression, undefined, "no lead bound: a correct writer is never refused");
        assert.equal(atFence.ReturnValues, "ALL_NEW");
        for (const u of [atNow, atFence]) assert.deepEqual(u.Key, fenceKey("P"));
        const values = { ":fence_ttl": { N: "99" }, ":count": { N: "3" }, ":now_ms": { N: String(T0) } };
        assert.deepEqual(atNow.ExpressionAttributeValues, values);
        assert.deepEqual(atFence.ExpressionAttributeValues, values);
    });
});

describe("per-key order across store clocks (Persist on DynamoDB Local)", () => {
    it("a store whose clock is 2 s fast persists 'first', a correct one 'second' with the same key: claimed first, second; 'second' carries the fence's time in created_at and claim_sort", async () => {
        const { client, tableName, fast, slow } = await storesAt(T0 + 2000);
        await fast.store.persist([rec("ORDER#1", "first", { orderingKey: "K" })]);
        await slow.store.persist([rec("ORDER#1", "second", { orderingKey: "K" })]);

        const claimed = await slow.store.claim("ORDER#1", tok(1), 10);
        assert.deepEqual(ids(claimed), ["env-first", "env-second"]);
        const second = claimed[1]!;
        assert.equal(second.createdAt, T0 + 2000);
        assert.equal(
            second.envelope.createdAt,
            0,
            "an envelope persisted without a time keeps none: only the record's created_at is stamped",
        );
        const item = (await rawItem(client, tableName, recordKey("ORDER#1", "env-second", "topic")))!;
        assert.deepEqual(item.claim_sort, { S: claimSort(T0 + 2000, second.seq) });
        assert.ok(second.seq > claimed[0]!.seq);
        assert.deepEqual(slow.logger.warnings("dynamodb-outbox: this writer's clock is behind"), [
            {
                level: "warn",
                message: STORE_WARNINGS.clockBehind,
                attributes: { partition_key: "ORDER#1", carried_forward_ms: 2000, records: 1 },
            },
        ]);
        assert.deepEqual(fast.logger.warnings(), []);
    });

    it("a store whose clock is a day behind the fence (another's runs a day ahead) persists after it, stamped with the fence's time, with an error log; at 5 minutes behind it is a warning", async () => {
        const DAY = 24 * 3600_000;
        const { client, tableName, fast, slow } = await storesAt(T0 + DAY);
        await fast.store.persist([rec("P", "fast", { orderingKey: "K" })]);
        await slow.store.persist([rec("P", "slow", { orderingKey: "K" }), rec("Q", "other")]);
        assert.deepEqual(
            slow.counting.calls.map((c) => c.command),
            ["UpdateItem", "UpdateItem", "UpdateItem", "PutItem", "PutItem"],
            "P: the conditional allocation, then the one at the fence's time; Q: one",
        );
        assert.equal(
            (await rawItem(client, tableName, recordKey("P", "env-slow", "topic")))!.created_at!.N,
            String(T0 + DAY),
        );
        assert.equal(
            (await rawItem(client, tableName, recordKey("Q", "env-other", "topic")))!.created_at!.N,
            String(T0),
        );
        assert.deepEqual(ids(await slow.store.claim("P", tok(1), 10)), ["env-fast", "env-slow"]);
        assert.deepEqual(
            slow.logger.lines.filter((l) => l.level !== "debug").map((l) => [l.level, l.message, l.attributes]),
            [["error", STORE_WARNINGS.clockFarBehind, { partition_key: "P", carried_forward_ms: DAY, records: 1 }]],
        );

        // The bound of the log level: 5 minutes behind is a warning, one millisecond more an error.
        const bound = storeBeside(client, tableName, T0 + DAY - CLOCK_BEHIND_ERROR_MS);
        await bound.store.persist([rec("P", "at-bound", { orderingKey: "K" })]);
        bound.clock.advance(-1);
        await bound.store.persist([rec("P", "past-bound", { orderingKey: "K" })]);
        for (const id of ["env-at-bound", "env-past-bound"])
            assert.equal(
                (await rawItem(client, tableName, recordKey("P", id, "topic")))!.created_at!.N,
                String(T0 + DAY),
            );
        assert.deepEqual(
            bound.logger.lines
                .filter((l) => l.level !== "debug")
                .map((l) => [l.level, l.attributes?.carried_forward_ms]),
            [
                ["warn", CLOCK_BEHIND_ERROR_MS],
                ["error", CLOCK_BEHIND_ERROR_MS + 1],
            ],
        );
    });

    it("refuses a store clock no record can carry, naming the clock (it used to blame the FENCE seq_counter or the envelope time)", async () => {
        const client = await dynamoClient();
        const { tableName } = await localStore({ client });
        await storeBeside(client, tableName, MAX_WRITER_CLOCK_MS).store.persist([rec("P", "at-max")]);
        for (const bad of [MAX_WRITER_CLOCK_MS + 1, Date.UTC(9999, 11, 31), -1]) {
            await assert.rejects(storeBeside(client, tableName, bad).store.persist([rec("P", "bad")]), (e: unknown) => {
                assert.ok(isOutboxError(e, "INVALID_CONFIG"), String(e));
                assert.match(
                    e.message,
                    new RegExp(
                        `^OutboxStore\\.persist: the clock reads ${bad} .*which no record can carry: a writer's clock must read epoch milliseconds from 0 \\(1970\\) to 18446744073708 \\(2554-07-21T23:34:33\\.708Z`,
                    ),
                );
                assert.ok(!e.message.includes("seq_counter"));
                return true;
            });
        }
    });

    it("a record given its own createdAt keeps it, and does not move the fence: the caller chose its place (GoBridge's contract)", async () => {
        const { client, tableName, fast, slow } = await storesAt(T0 + 2000);
        await fast.store.persist([rec("P", "now", { orderingKey: "K" })]);
        await slow.store.persist([
            rec("P", "given", { orderingKey: "K", createdAt: T0 - 5000 }),
            rec("P", "stamped", { orderingKey: "K" }),
        ]);
        const claimed = await slow.store.claim("P", tok(1), 10);
        assert.deepEqual(ids(claimed), ["env-given", "env-now", "env-stamped"]);
        assert.deepEqual(
            claimed.map((r) => r.createdAt),
            [T0 - 5000, T0 + 2000, T0 + 2000],
        );
        assert.equal(unmarshalFence(await rawItem(client, tableName, fenceKey("P"))).lastCreatedAt, T0 + 2000);
    });

    it("costs one UpdateItem per partition per persist on the normal path, two when the store's clock is behind the fence, and one again once it has caught up", async () => {
        const { client, tableName, fast, slow } = await storesAt(T0 + 2000);

        await slow.store.persist([rec("P", 1, { orderingKey: "K" }), rec("Q", 1), rec("P", 2)]);
        assert.equal(slow.counting.count("UpdateItem"), 2, "fresh fences: one conditional UpdateItem per partition");
        await fast.store.persist([rec("P", 3, { orderingKey: "K" })]);
        assert.equal(fast.counting.count("UpdateItem"), 1, "a clock ahead of the fence: one UpdateItem");

        slow.counting.calls.length = 0;
        await slow.store.persist([rec("P", 4, { orderingKey: "K" }), rec("Q", 2)]);
        assert.deepEqual(
            slow.counting.of("UpdateItem").map((c) => `${c.input.Key.PK.S}:${c.input.ReturnValues}`),
            ["P:UPDATED_NEW", "P:ALL_NEW", "Q:UPDATED_NEW"],
            "P's fence is ahead: a second UpdateItem; Q's is not",
        );
        assert.equal(unmarshalFence(await rawItem(client, tableName, fenceKey("P"))).lastCreatedAt, T0 + 2000);
        assert.equal(unmarshalFence(await rawItem(client, tableName, fenceKey("Q"))).lastCreatedAt, T0);

        slow.counting.calls.length = 0;
        slow.clock.advance(3000);
        await slow.store.persist([rec("P", 5, { orderingKey: "K" })]);
        assert.equal(slow.counting.count("UpdateItem"), 1, "caught up: back to one");
        assert.equal(unmarshalFence(await rawItem(client, tableName, fenceKey("P"))).lastCreatedAt, T0 + 3000);
        assert.deepEqual(ids(await slow.store.claim("P", tok(1), 10)), ["env-1", "env-2", "env-3", "env-4", "env-5"]);
    });

    it("a clock behind by 1 s or less is carried forward without a warning", async () => {
        const { fast: ahead, slow } = await storesAt(T0 + 1000);
        await ahead.store.persist([rec("P", 1, { orderingKey: "K" })]);
        await slow.store.persist([rec("P", 2, { orderingKey: "K" })]);
        assert.deepEqual(
            (await slow.store.queryPending("P", 10)).map((r) => r.createdAt),
            [T0 + 1000, T0 + 1000],
        );
        assert.deepEqual(slow.logger.warnings(), []);
    });

    it("a GoBridge writer sharing the table neither reads nor sets last_created_at: its allocation keeps ours, and its record keeps its own clock's created_at", async () => {
        const client = await dynamoClient();
        const { tableName } = await localStore({ client });
        const fast = storeBeside(client, tableName, T0 + 2000);
        await fast.store.persist([rec("P", "ours", { orderingKey: "K" })]);
        // GoBridge's Persist (reference §4.2): ADD seq_counter n, SET ttl; created_at from its own clock (here 3 s behind).
        const goBridge = await client.send(
            new UpdateItemCommand({
                TableName: tableName,
                Key: fenceKey("P"),
                UpdateExpression: "SET #ttl = :ttl ADD #seq_counter :n",
                ExpressionAttributeNames: { "#ttl": "ttl", "#seq_counter": "seq_counter" },
                ExpressionAttributeValues: { ":ttl": { N: "99999999999" }, ":n": { N: "1" } },
                ReturnValues: "UPDATED_NEW",
            }),
        );
        const seq = BigInt(goBridge.Attributes!.seq_counter!.N!);
        await client.send(
            new PutItemCommand({
                TableName: tableName,
                Item: marshalRecord(pendingRecord(rec("P", "gobridge", { orderingKey: "K" }), seq, T0 - 1000)),
            }),
        );
        assert.equal(unmarshalFence(await rawItem(client, tableName, fenceKey("P"))).lastCreatedAt, T0 + 2000);
        assert.deepEqual(
            ids(await fast.store.claim("P", tok(1), 10)),
            ["env-gobridge", "env-ours"],
            "the GoBridge record sorts by its own, earlier, clock",
        );
    });

    it("a fence row that vanishes between the two UpdateItems (TTL) gets this store's now back, so the next allocation still cannot go below it", async () => {
        const { client, tableName, fast, slow } = await storesAt(T0 + 2000);
        await fast.store.persist([rec("P", 1, { orderingKey: "K" })]);
        slow.counting.on("UpdateItem", async (_input, call) => {
            if (call.nth === 2) await client.send(new DeleteItemCommand({ TableName: tableName, Key: fenceKey("P") }));
            return PASS;
        });
        await slow.store.persist([rec("P", 2, { orderingKey: "K" })]);
        assert.equal(slow.counting.count("UpdateItem"), 2);
        const fence = unmarshalFence(await rawItem(client, tableName, fenceKey("P")));
        assert.deepEqual([fence.seqCounter, fence.lastCreatedAt], [1n, T0]);
        assert.equal((await rawItem(client, tableName, recordKey("P", "env-2", "topic")))!.created_at!.N, String(T0));
    });
});
