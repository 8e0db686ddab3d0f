/**
 * The transition builders other runtime code uses (the publisher completes keyless records straight from the
 * stream), proven on DynamoDB Local against records the store wrote.
 */
import { GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { recordKey, ttlSeconds } from "../../../runtime/record/codec";
import {
    completePendingUpdate,
    expirePendingUpdate,
    isConditionalCheckFailed,
    OutboxStore,
} from "../../../runtime/store";
import { dynamoClient } from "../../support/dynamodb";
import { localStore, rec, rejectsWith, tok } from "../../support/store/helpers";

describe("transition builders on DynamoDB Local", () => {
    it("completePendingUpdate completes a pending record (ttl, completed_at, index keys removed) and refuses a claimed one", async () => {
        const client = await dynamoClient();
        const { store, clock, tableName } = await localStore({ client });
        await store.persist([rec("P", 1, {}, { expiresAt: clock.now() + 60_000 }), rec("P", 2)]);
        const key = recordKey("P", "env-1", "topic");
        await client.send(
            new UpdateItemCommand(completePendingUpdate(tableName, key, clock.now(), ttlSeconds(clock.now(), 3600))),
        );
        const item = (await client.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true })))
            .Item!;
        assert.deepEqual(
            [item.status, item.completed_at, item.ttl],
            [{ S: "completed" }, { N: String(clock.now()) }, { N: String(Math.floor(clock.now() / 1000) + 3600) }],
        );
        assert.equal(item.claim_sort, undefined);
        assert.equal(item.has_expiry, undefined);
        assert.equal(await store.countPending("P"), 1);

        const [claimed] = await store.claim("P", tok(1), 1);
        await assert.rejects(
            client.send(
                new UpdateItemCommand(
                    completePendingUpdate(tableName, recordKey("P", claimed.envelopeId, "topic"), clock.now(), 1),
                ),
            ),
            (err: unknown) => isConditionalCheckFailed(err),
        );
        await store.complete([claimed.recordId], tok(1));
    });

    it("expirePendingUpdate expires only a pending record past the cutoff", async () => {
        const client = await dynamoClient();
        const { store, clock, tableName } = await localStore({ client });
        await store.persist([rec("P", 1, {}, { expiresAt: clock.now() + 1000 })]);
        const key = recordKey("P", "env-1", "topic");
        await assert.rejects(
            client.send(new UpdateItemCommand(expirePendingUpdate(tableName, key, clock.now() + 1000, 1))),
            (err: unknown) => isConditionalCheckFailed(err),
            "expires_at must be strictly before the cutoff",
        );
        await client.send(new UpdateItemCommand(expirePendingUpdate(tableName, key, clock.now() + 1001, 99)));
        const item = (await client.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true })))
            .Item!;
        assert.deepEqual([item.status, item.ttl], [{ S: "expired" }, { N: "99" }]);
        assert.equal(item.has_expiry, undefined);
    });
});

describe("OutboxStore options", () => {
    it("rejects bad options with INVALID_CONFIG naming the option and the fix", async () => {
        const client = await dynamoClient();
        const bad: [Record<string, unknown>, RegExp][] = [
            [{ client: {}, tableName: "outbox" }, /option client must be a DynamoDB client/],
            [{ client, tableName: "x" }, /option tableName must be a DynamoDB table name .* got "x"/],
            [
                { client, tableName: "outbox", compactionGraceSeconds: -1 },
                /compactionGraceSeconds must be whole seconds ≥ 0 .*, got -1/,
            ],
            [
                { client, tableName: "outbox", compactionGraceSeconds: 0.5 },
                /compactionGraceSeconds must be whole seconds ≥ 0 .*, got 0.5; e.g. 3600/,
            ],
            [
                { client, tableName: "outbox", clock: {} },
                /option clock must be an object with now\(\) \(epoch ms\) and sleep\(ms\)/,
            ],
            [{ client, tableName: "outbox", clock: null }, /option clock must be an object/],
            [{ client, tableName: "outbox", keyCacheSize: 0 }, /keyCacheSize must be a whole number ≥ 1, got 0/],
            [{ client, tableName: "outbox", staleClaimMs: Number.NaN }, /staleClaimMs must be a finite number/],
            [{ client, tableName: "outbox", onConsumedCapacity: 3 }, /onConsumedCapacity must be a function/],
        ];
        for (const [options, pattern] of bad) {
            await rejectsWith(
                Promise.resolve().then(() => new OutboxStore(options as never)),
                "INVALID_CONFIG",
                pattern,
            );
        }
    });

    it("reports consumed capacity per operation when asked", async () => {
        const events: { operation: string; command: string; units: number }[] = [];
        const { store } = await localStore({
            onConsumedCapacity: (e) =>
                events.push({
                    operation: e.operation,
                    command: e.command,
                    units: e.capacity.reduce((s, c) => s + (c.CapacityUnits ?? 0), 0),
                }),
        });
        await store.persist([rec("P", 1)]);
        await store.claim("P", tok(1), 1);
        const ops = new Set(events.map((e) => e.operation));
        for (const op of [
            "persist.seq",
            "persist.put",
            "fence.read",
            "fence.raise",
            "claim.index-query",
            "claim.transaction",
        ])
            assert.ok(ops.has(op), `no capacity for ${op}`);
        assert.ok(
            events.every((e) => e.units > 0),
            JSON.stringify(events),
        );
    });
});
