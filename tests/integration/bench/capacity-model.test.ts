/**
 * The bench's per-key capacity model (dev/bench/capacity-model.ts). It is a model of AWS's per-partition write limit,
 * which no emulator enforces: DynamoDB Local never throttles. These tests pin its accounting against docs/scale.md's
 * cost model and show that a throttled write leaves DynamoDB Local as it was.
 */
import * as assert from "node:assert/strict";
import { GetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createCapacityModel, writeCharges } from "../../../dev/bench/capacity-model";
import { isOutboxError } from "../../../runtime/errors";
import { marshalRecord, pendingRecord, recordKey } from "../../../runtime/record/codec";
import { OutboxStore } from "../../../runtime/store";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { Inbox } from "../../../runtime/inbox/inbox";
import { runInboxScaleScenario } from "../../../dev/bench/inbox-scale";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { createConsumerTable } from "../../support/runtime/table";

const T0 = Date.UTC(2026, 0, 1);

function item(expiresAt = 0) {
    return marshalRecord(
        pendingRecord(
            {
                partition: "ORDER#1",
                recordId: "rec-1",
                bindingId: "sns",
                address: "",
                envelope: { id: "rec-1", payload: "{}", expiresAt },
            },
            1n,
            T0,
        ),
    );
}

describe("bench capacity model", () => {
    it("charges a transactional insert 2 units on the table and on each index holding the record, and a completion 1 per copy it writes or removes", () => {
        const plain = Object.fromEntries(writeCharges(undefined, item(), true));
        assert.deepEqual(plain, {
            "table\u0000ORDER#1": 2,
            "RecordIDIndex\u0000rec-1": 2,
            "ClaimIndex\u0000ORDER#1": 2,
        });
        const expiring = item(T0 + 60_000);
        assert.equal(writeCharges(undefined, expiring, true).get("ExpiryIndex\u00001"), 2);
        const completed = { ...expiring, status: { S: "completed" }, ttl: { N: "1" } };
        delete (completed as Record<string, unknown>).has_expiry;
        delete (completed as Record<string, unknown>).claim_sort;
        assert.deepEqual(Object.fromEntries(writeCharges(expiring, completed, false)), {
            "table\u0000ORDER#1": 1,
            "ExpiryIndex\u00001": 1,
            "ClaimIndex\u0000ORDER#1": 1,
        });
    });

    it("throttles a write that would take one key value above the ceiling in the current second, as AWS does, and leaves DynamoDB Local as it was", async () => {
        const backend = await dynamoClient();
        const tableName = uniqueTableName("capacity");
        await new OutboxStore({ client: backend, tableName }).createTable({ stream: false });
        let now = T0;
        const clock = { now: () => now, sleep: async () => undefined };
        const model = createCapacityModel({ backend, clock, tableName, ceilingPerKey: 5 });
        const writer = new OutboxWriter({ client: model.client as unknown as DynamoDBClient, tableName, clock });
        const expiring = { partition: "P", type: "T", payload: 1, expiresAt: new Date(T0 + 60_000) };
        const [first] = (await writer.write({ messages: [{ ...expiring, partition: "A" }] })).messageIds;
        assert.ok(first);
        await writer.write({ messages: [{ ...expiring, partition: "B" }] });
        // ExpiryIndex "1" holds 4 units this second: a third expiring insert (2 more) is over 5.
        await assert.rejects(
            writer.write({ messages: [{ ...expiring, partition: "C", id: "third" }] }),
            (err: unknown) => isOutboxError(err, "THROTTLED"),
        );
        const got = await backend.send(
            new GetItemCommand({ TableName: tableName, Key: recordKey("C", "third", "sns"), ConsistentRead: true }),
        );
        assert.equal(got.Item, undefined, "the throttled write was not applied");
        assert.deepEqual(model.throttledBy, { ExpiryIndex: 1 });
        now += 1000;
        await writer.write({ messages: [{ ...expiring, partition: "C", id: "third" }] });
        assert.deepEqual(model.peak(), { index: "ExpiryIndex", key: "1", units: 4, second: Math.floor(T0 / 1000) });
    });

    it("charges an inbox transaction's ConditionCheck 2 units on the checked key when asked (AWS's billing), nothing by default; throttles on it", async () => {
        const backend = await dynamoClient();
        const tableName = await createConsumerTable(backend, "capacity-inbox");
        const clock = { now: () => T0, sleep: async () => undefined };
        const units = async (charge: boolean, outboxId: string) => {
            const model = createCapacityModel({
                backend,
                clock,
                tableName,
                chargeConditionChecks: charge,
                ceilingPerKey: 3,
            });
            // legacyMarkerCheck (on by default): a message with a source also checks INBOX#<consumer>.
            const inbox = new Inbox({ client: model.client as unknown as DynamoDBClient, consumer: "c", tableName });
            await inbox.apply({ outboxId, source: "orders" });
            return Object.fromEntries(model.totals().map((t) => [t.key, t.units]));
        };
        assert.deepEqual(await units(false, "e-1"), { "INBOX#c@orders": 2 });
        assert.deepEqual(await units(true, "e-2"), { "INBOX#c@orders": 2, "INBOX#c": 2 });

        const model = createCapacityModel({ backend, clock, tableName, chargeConditionChecks: true, ceilingPerKey: 3 });
        const a = new Inbox({ client: model.client as unknown as DynamoDBClient, consumer: "d", tableName });
        const b = new Inbox({ client: model.client as unknown as DynamoDBClient, consumer: "d", tableName });
        await a.apply({ outboxId: "x", source: "s1" });
        // Another source's marker key is fresh, but the check's key INBOX#d would take 4 units: over 3.
        await assert.rejects(b.apply({ outboxId: "y", source: "s2" }), (err: unknown) =>
            isOutboxError(err, "THROTTLED"),
        );
        assert.deepEqual(model.throttledBy, { table: 1 });
    });

    it("the inbox scenario: one key caps one consumer near 500 messages a second, 8 shards near 8 times that, every message applied once", async function () {
        this.timeout(120_000);
        const backend = await dynamoClient();
        const run = (markerShards: number) =>
            runInboxScaleScenario(
                backend,
                {
                    name: `t${markerShards}`,
                    markerShards,
                    legacyMarkerCheck: false,
                    ratePerSec: 100,
                    seconds: 1,
                    throttle: false,
                },
                () => undefined,
            );
        const one = await run(1);
        const eight = await run(8);
        assert.deepEqual(one.unitsPerMessage, { inbox: 2, business: 2, total: 4 });
        assert.equal(one.inboxKeys, 1);
        assert.equal(one.ceilingPerSec.hotKey, 500);
        assert.equal(eight.inboxKeys, 8);
        // 100 ids over 8 keys: the fullest holds more than 1/8 of them, so the measured ceiling is below 4,000.
        assert.ok(
            eight.ceilingPerSec.hotKey > 2000 && eight.ceilingPerSec.hotKey <= 4000,
            String(eight.ceilingPerSec.hotKey),
        );
        assert.equal(one.notAppliedOnce + eight.notAppliedOnce, 0);
    });
});
