/**
 * Bad input the other suites do not already cover (see docs/reliability.md's "Bad input" section for the whole table and where
 * each case is tested): ids and partitions with `#` and `%` are valid, escaped and never aliased, end to end
 * through the publisher and the DLQ; the valid edges of the SQS/SNS character set reach the topic and the DLQ
 * unchanged (the writer's refusals are in `tests/integration/runtime/writer-limits.test.ts`); an OUTBOX# stream record the publisher cannot decode is skipped with an
 * error naming its sequence number, without holding back the rest of the batch.
 * Real DynamoDB Local stream records; SNS and the DLQ are the AWS fault server.
 */
import assert from "node:assert/strict";
import { PutItemCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { isOutboxError } from "../../../runtime/errors";
import { createJsonLogger } from "../../../runtime/observability/json-logger";
import { deadLetterMessage } from "../../../runtime/record/message";
import { parseDeadLetter } from "../../../runtime/writer/redrive";
import { marshalRecord, pendingRecord, unmarshalRecord } from "../../../runtime/record/codec";
import { OutboxStore } from "../../../runtime/store";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { ATTR, RECORD_SK_PREFIX } from "../../../runtime/schema";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { createHarness, type Harness } from "../../support/runtime/harness";

describe("bad input", function () {
    this.timeout(60_000);
    let h: Harness;
    afterEach(async function () {
        await h?.close();
    });

    async function outboxItems() {
        const out = await h.ddb.send(new ScanCommand({ TableName: h.tableName, ConsistentRead: true }));
        return (out.Items ?? []).filter((i) => i[ATTR.sk]?.S?.startsWith(RECORD_SK_PREFIX));
    }

    it("ids and partitions with # and % are accepted, escaped, never aliased, and delivered and dead-lettered under their exact ids", async function () {
        h = await createHarness();
        const now = h.clock.now();
        // Under raw concatenation "x#y" and "x%23y" (and "%" and "%25") would collide once one of them is decoded.
        const ids = ["x#y", "x%23y", "%", "%25", "a#b%#"];
        await h.writer.write({
            messages: ids.map((id) => ({ id, partition: "TENANT%1#ORDER#2", type: "T", payload: id })),
        });
        await h.writer.write({
            messages: [{ id: "late#%", partition: "P#%", type: "T", payload: 0, expiresAt: new Date(now) }],
        });
        const items = await outboxItems();
        assert.equal(new Set(items.map((i) => i[ATTR.sk]!.S)).size, 6, "six distinct sort keys");
        assert.deepEqual(
            items.map((i) => unmarshalRecord(i).recordId).sort(),
            [...ids, "late#%"].sort(),
            "every id round-trips exactly",
        );
        await assert.rejects(
            h.writer.write({ messages: [{ id: "x#y", partition: "TENANT%1#ORDER#2", type: "T", payload: 1 }] }),
            (e: unknown) =>
                isOutboxError(e, "DUPLICATE_RECORD") &&
                (e as Error).message.includes('id "x#y"') &&
                !(e as Error).message.includes('x%23y"'),
        );

        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [...ids].sort(),
            "published under the exact ids",
        );
        assert.deepEqual(
            h
                .published()
                .map((p) => p.body)
                .sort(),
            ids.map((id) => JSON.stringify(id)).sort(),
            "each id's own payload: no record answered for another",
        );
        assert.deepEqual(
            h.deadLetters().map((d) => [d.recordId, d.body.partition]),
            [["late#%", "P#%"]],
        );
    });

    it("the valid character edges (U+FFFD, astral emoji, tab, JSON-escaped controls and lone surrogates) reach the topic and the DLQ unchanged", async function () {
        h = await createHarness();
        const now = h.clock.now();
        const payload = { text: "\uFFFD😀\t", escaped: "\u0001\uD800", top: "\u{10FFFD}" };
        const headers = { tenant: "😀\uFFFD" };
        const [live] = (
            await h.writer.write({
                messages: [{ id: "edge-live", partition: "P😀", type: "Edge😀", payload, headers }],
            })
        ).messageIds;
        await h.writer.write({
            messages: [
                { id: "edge-late", partition: "P😀", type: "Edge😀", payload, headers, expiresAt: new Date(now) },
            ],
        });
        assert.deepEqual(await h.publisher()(await h.streamEvent()), { batchItemFailures: [] });
        const published = h.published();
        assert.deepEqual(
            published.map((p) => p.id),
            [live],
        );
        assert.equal(published[0]!.body, JSON.stringify(payload), "the body is the payload's JSON text, byte for byte");
        assert.equal(published[0]!.attributes["outbox.type"], "Edge😀");
        assert.equal(published[0]!.attributes.tenant, "😀\uFFFD");
        const dead = h.deadLetters();
        assert.deepEqual(
            dead.map((d) => d.recordId),
            ["edge-late"],
        );
        assert.deepEqual(dead[0]!.body.payload, payload);
        assert.deepEqual(dead[0]!.body.headers, headers);
        assert.equal(dead[0]!.body.partition, "P😀");
    });

    it("a binding id with # never aliases another record's id (c13-sk-collision)", async function () {
        h = await createHarness();
        const other = new OutboxWriter({ client: h.ddb, tableName: h.tableName, clock: h.clock, bindingId: "b#sns" });
        // Raw "OUTBOX#a#b#sns" for both; escaped, they differ.
        await h.writer.write({ messages: [{ id: "a#b", partition: "P", type: "T", payload: 1 }] });
        await other.write({ messages: [{ id: "a", partition: "P", type: "T", payload: 2 }] });
        const records = (await outboxItems()).map((i) => unmarshalRecord(i));
        assert.deepEqual(
            new Map(records.map((r) => [r.recordId, r.bindingId])),
            new Map([
                ["a", "b#sns"],
                ["a#b", "sns"],
            ]),
        );
    });

    it("skips an OUTBOX# stream record it cannot decode, logs its sequence number and error code (no payload), and publishes the rest of the batch", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({
            messages: [1, 2, 3].map((n) => ({ partition: "P", type: "T", payload: { secret: `payload-${n}` } })),
        });
        const event = await h.streamEvent();
        const broken = event.Records[1]!;
        const image = { ...(broken.dynamodb.NewImage as Record<string, unknown>) };
        delete image[ATTR.envelopeJson];
        const lines: string[] = [];
        const publisher = h.publisher({ logger: createJsonLogger({ level: "debug", write: (l) => lines.push(l) }) });
        const response = await publisher({
            Records: [
                event.Records[0],
                { ...broken, dynamodb: { ...broken.dynamodb, NewImage: image } },
                event.Records[2],
            ],
        });
        assert.deepEqual(response, { batchItemFailures: [] }, "one bad record does not block the shard");
        assert.deepEqual(
            h
                .published()
                .map((p) => p.id)
                .sort(),
            [messageIds[0]!, messageIds[2]!].sort(),
        );
        const error = lines
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => String(l.message).includes("could not be decoded"));
        assert.ok(error, lines.join("\n"));
        assert.equal(error.level, "error");
        assert.equal(error.sequenceNumber, broken.dynamodb.SequenceNumber);
        assert.equal(error.code, "INVALID_PAYLOAD");
        assert.ok(!lines.join("\n").includes("payload-"), "no payload in the logs");
    });

    /** An outbox record item as an older writer leaves it: `status` present but empty (GoBridge's codec reads it as pending). */
    async function putEmptyStatusRecord(
        id: string,
        partition: string,
        createdAt: number,
        orderingKey?: string,
    ): Promise<void> {
        const record = pendingRecord(
            {
                partition,
                recordId: id,
                bindingId: "sns",
                address: h.topicArn,
                envelope: { id, subject: "T", payload: JSON.stringify(id), createdAt },
                createdAt,
                ...(orderingKey !== undefined ? { orderingKey } : {}),
            },
            BigInt(createdAt) * 1_000_000n,
            createdAt,
        );
        await h.ddb.send(
            new PutItemCommand({
                TableName: h.tableName,
                Item: { ...marshalRecord(record), [ATTR.status]: { S: "" } },
            }),
        );
    }

    it('a row with status "" is pending on the stream path: published once, completed, and not published again when the stream redelivers it', async function () {
        h = await createHarness();
        await putEmptyStatusRecord("empty-status-1", "P", h.clock.now());
        const event = await h.streamEvent();
        assert.equal(event.Records.length, 1);
        assert.deepEqual(
            event.Records[0]!.dynamodb.NewImage![ATTR.status],
            { S: "" },
            "the stream image carries the empty status",
        );
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(
            await h.publisher()(event),
            { batchItemFailures: [] },
            "the stream redelivers the same record",
        );
        assert.deepEqual(
            h.published().map((p) => p.id),
            ["empty-status-1"],
            "published once, not once per delivery",
        );
        assert.deepEqual(
            (await h.records()).map((r) => [r.recordId, r.status]),
            [["empty-status-1", "completed"]],
        );
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
    });

    it('rows with status "" are pending to the store and the sweeper: counted, claimed in order, and delivered by the safety net', async function () {
        h = await createHarness();
        const t = h.clock.now();
        await putEmptyStatusRecord("keyless-empty", "P", t);
        await putEmptyStatusRecord("keyed-empty-1", "K", t, "k");
        await putEmptyStatusRecord("keyed-empty-2", "K", t + 1, "k");
        const store = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        assert.deepEqual(
            [await store.countPending("P"), await store.countPending("K")],
            [1, 2],
            "CountPending counts them",
        );
        h.clock.advance(121_000);
        const result = await createSweeper(h.config())();
        assert.deepEqual(
            [result.published, result.failedPartitions, result.failedRecords],
            [3, 0, 0],
            JSON.stringify(result),
        );
        const published = h.published().map((p) => p.id);
        assert.deepEqual(
            published.filter((id) => id.startsWith("keyed")),
            ["keyed-empty-1", "keyed-empty-2"],
            "per-key order",
        );
        assert.deepEqual([...published].sort(), ["keyed-empty-1", "keyed-empty-2", "keyless-empty"]);
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        assert.deepEqual(await h.indexCounts(), { claim: 0, expiry: 0 });
    });

    it("a DLQ message keeps a payload that would not read back identically (an integer beyond 2^53) as raw text, and redrive refuses to rewrite it", function () {
        const message = { id: "go-1", type: "T", partition: "P", headers: {}, createdAt: 1, expiresAt: 0 };
        const exact = JSON.parse(
            deadLetterMessage({ ...message, body: '{"id":9007199254740993,"n":1.0}' }, { reason: "expired", at: 2 })
                .body,
        ) as Record<string, unknown>;
        assert.equal(exact.body, '{"id":9007199254740993,"n":1.0}', "every digit kept");
        assert.equal("payload" in exact, false);
        assert.match(
            (parseDeadLetter(JSON.stringify(exact)) as { problem: string }).problem,
            /raw text .* integer beyond 2\^53/,
        );
        const plain = JSON.parse(
            deadLetterMessage({ ...message, body: '{"id":42,"note":"é"}' }, { reason: "expired", at: 2 }).body,
        ) as Record<string, unknown>;
        assert.deepEqual(plain.payload, { id: 42, note: "é" }, "JSON that reads back identically stays JSON");
    });
});
