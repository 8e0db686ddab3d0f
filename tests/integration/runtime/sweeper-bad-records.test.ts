/**
 * The sweeper's safety net goes on past one bad record: a payload SQS refuses, a DLQ outage, a refused keyed head,
 * an undecodable item, a failed expiry query.
 */
import assert from "node:assert/strict";
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import { EXPIRY_INDEX } from "../../../runtime/schema";
import { isOutboxError } from "../../../runtime/errors";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import * as relay from "../../support/runtime/relay-fixtures";
import type { Harness } from "../../support/runtime/harness";

describe("createSweeper past bad records (DynamoDB Local + AWS fault server)", function () {
    const openHarness = relay.harnessPerTest();

    describe("one bad record never stops the safety net", function () {
        /** A pending record with an expiry written past the writer's checks (an older writer, or a Go drainer sharing the table). */
        async function persistRaw(h: Harness, partition: string, payload: string, expiresAt: number): Promise<string> {
            const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
            const recordId = `${partition}/raw`;
            await store.persist([
                {
                    partition,
                    recordId,
                    bindingId: "topic",
                    address: h.topicArn,
                    envelope: { id: `env-${partition}`, subject: "T", payload, expiresAt },
                },
            ]);
            return recordId;
        }

        it("an expired record holding U+FFFF (which SQS refuses) reaches the DLQ escaped, byte-identical once parsed, and the sweep goes on", async function () {
            const h = await openHarness();
            const poison = await persistRaw(h, "POISON", JSON.stringify({ text: "a\uFFFFb" }), h.clock.now() + 1_000);
            const [healthy] = (await h.writer.write({ messages: [{ partition: "OK", type: "T", payload: { n: 1 } }] }))
                .messageIds;
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.published, result.failedRecords], [1, 1, 0]);
            const [dead] = h.deadLetters();
            assert.equal(dead!.recordId, poison);
            assert.deepEqual(dead!.body.payload, { text: "a\uFFFFb" });
            assert.ok(
                h.server.queueMessages(h.dlqUrl)[0]!.body.includes("\\uffff"),
                "the DLQ body carries the character as a JSON escape",
            );
            assert.deepEqual(relay.publishedIds(h), [healthy]);
            assert.equal((await h.records()).find((r) => r.recordId === poison)!.status, "expired");
        });

        it("a DLQ outage fails only the expired records (counted as SweepFailures, left pending); missed records of other partitions are still published", async function () {
            const h = await openHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const now = h.clock.now();
            const expiring = (
                await h.writer.write({
                    messages: ["E1", "E2"].map((p) => ({
                        partition: p,
                        type: "T",
                        payload: p,
                        expiresAt: new Date(now + 1_000),
                    })),
                })
            ).messageIds;
            const [missed] = (await h.writer.write({ messages: [{ partition: "M", type: "T", payload: "m" }] }))
                .messageIds;
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.failedRecords, result.published], [0, 2, 1]);
            assert.deepEqual(relay.publishedIds(h), [missed]);
            assert.deepEqual(await relay.statusesOf(h, expiring), ["pending", "pending"]);
            const line = h.metricLines
                .map((l) => JSON.parse(l) as Record<string, unknown>)
                .find((l) => "SweepFailures" in l);
            assert.equal(line?.SweepFailures, 2);

            h.server.setFaults({});
            assert.equal((await createSweeper(h.config())()).expired, 2, "the next run dead-letters them");
        });

        it("a keyed head the DLQ cannot take (an outage) holds only its own key: the partition's other keys are published in the same sweep", async function () {
            const h = await openHarness({
                faults: { calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }] },
            });
            const write = async (orderingKey: string, expiresAt?: Date) =>
                (
                    await h.writer.write({
                        messages: [
                            {
                                partition: "P",
                                type: "T",
                                payload: orderingKey,
                                orderingKey,
                                ...(expiresAt ? { expiresAt } : {}),
                            },
                        ],
                    })
                ).messageIds[0]!;
            const a1 = await write("a", new Date(h.clock.now() + 1_000));
            const b1 = await write("b");
            const a2 = await write("a");
            const b2 = await write("b");
            h.clock.advance(200_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.published, result.failedPartitions], [2, 1]);
            assert.deepEqual(relay.publishedIds(h), [b1, b2], "key b went on past key a's head");
            assert.deepEqual(
                await relay.statusesOf(h, [a1, a2]),
                ["pending", "pending"],
                "key a waits, released in order",
            );

            h.server.setFaults({});
            await createSweeper(h.config())();
            assert.deepEqual(relay.deadLettered(h), [[a1, "expired"]]);
            assert.deepEqual(relay.publishedIds(h), [b1, b2, a2]);
        });

        it("a keyed record SNS refused maxPublishAttempts times whose DLQ send fails holds only its own key: the partition's other keys are published in the same sweep, and its key follows once the DLQ takes it", async function () {
            const h = await openHarness();
            const write = async (orderingKey: string) =>
                (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: orderingKey, orderingKey }] }))
                    .messageIds[0]!;
            const a1 = await write("a");
            const b1 = await write("b");
            const a2 = await write("a");
            const b2 = await write("b");
            h.server.setFaults({
                entries: [relay.entryFault(a1, { code: "InvalidParameter", senderFault: true })],
                calls: [{ kind: "Throttled", actions: ["SendMessage"], times: 100 }],
            });
            h.clock.advance(200_000);
            const result = await createSweeper(h.config({ maxPublishAttempts: 1 }))();
            assert.deepEqual([result.published, result.deadLettered, result.failedPartitions], [2, 0, 1]);
            assert.deepEqual(relay.publishedIds(h), [b1, b2], "key b went on past key a's head, in a later call too");
            assert.deepEqual(await relay.statusesOf(h, [a1, a2]), ["pending", "pending"]);

            relay.refuseEntry(h, a1);
            await createSweeper(h.config({ maxPublishAttempts: 1 }))();
            assert.deepEqual(relay.deadLettered(h), [[a1, "publish-rejected"]]);
            assert.deepEqual(relay.publishedIds(h), [b1, b2, a2]);
        });

        it("an undecodable item with has_expiry is counted and skipped; the other expired records are dead-lettered", async function () {
            const h = await openHarness();
            const now = h.clock.now();
            await relay.putRawItem(h, {
                PK: { S: "BROKEN" },
                SK: { S: "OUTBOX#x#topic" },
                record_id: { S: "broken" },
                envelope_json: { S: "not json" },
                status: { S: "pending" },
                has_expiry: { S: "1" },
                expires_at: { N: String(now - 5_000) },
            });
            const [fine] = (
                await h.writer.write({
                    messages: [{ partition: "FINE", type: "T", payload: 1, expiresAt: new Date(now + 1_000) }],
                })
            ).messageIds;
            h.clock.advance(2_000);
            const result = await createSweeper(h.config())();
            assert.deepEqual([result.expired, result.failedRecords], [1, 1]);
            assert.deepEqual(
                h.deadLetters().map((d) => d.recordId),
                [fine],
            );
        });

        it("a failed expiry query does not stop the missed-record step; the invocation then fails with the query's error", async function () {
            const h = await openHarness();
            const [missed] = (await h.writer.write({ messages: [{ partition: "M", type: "T", payload: "m" }] }))
                .messageIds;
            h.clock.advance(200_000);
            // A fake in front of DynamoDB Local: no emulator fails one index query on demand.
            const dynamodb = {
                send: (command: object) =>
                    command instanceof QueryCommand && command.input.IndexName === EXPIRY_INDEX.indexName
                        ? Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }))
                        : h.ddb.send(command as never),
            };
            await assert.rejects(
                createSweeper({ ...h.config(), dynamodb })(),
                (err: unknown) => isOutboxError(err, "THROTTLED") && /expiry index query failed/.test(err.message),
            );
            assert.deepEqual(relay.publishedIds(h), [missed]);
        });
    });
});
