/**
 * The keyed path's lanes and rounds (issue 24) on DynamoDB Local with real stream records and the fault-injecting
 * AWS fault server: the heads of different keys and partitions share PublishBatch calls, a key never has two
 * records in one call, two partitions' heads of one ordering-key string never share a round, a refused head holds
 * only its key, a stale claimer completes nothing, the lowest failure is reported, and a round does not start when
 * the time is short. Each test also proves the partitions were delivered together (a call that carries the heads
 * of two partitions), which the partition-after-partition drain never did.
 */
import assert from "node:assert/strict";
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { PublishBatchCommand, type PublishBatchRequestEntry } from "@aws-sdk/client-sns";
import { ATTR } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { throttled } from "../../support/store/fake-client";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach, entryFault, publishedIds, refuseEntry } from "../../support/runtime/relay-fixtures";

/** Where each record the test wrote lives: its partition and ordering key. */
type Placement = Map<string, { partition: string; orderingKey: string }>;

/** An SNS client in front of the test server that keeps each PublishBatch call's entries (by record id). */
function recordingSns(h: Harness, onCall?: (call: number) => Promise<void> | void) {
    const calls: string[][] = [];
    return {
        calls,
        client: {
            send: async (command: object) => {
                if (command instanceof PublishBatchCommand) {
                    const entries = (command.input.PublishBatchRequestEntries ?? []) as PublishBatchRequestEntry[];
                    calls.push(entries.map((e) => e.MessageAttributes?.["outbox.id"]?.StringValue ?? ""));
                    const out = await h.sns.send(command);
                    await onCall?.(calls.length);
                    return out;
                }
                return h.sns.send(command as never);
            },
        },
    };
}

async function writeKeyed(
    h: Harness,
    placement: Placement,
    partition: string,
    orderingKey: string,
    n: number,
): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1) {
        const [id] = (
            await h.writer.write({
                messages: [{ partition, type: "T", payload: `${partition}/${orderingKey}/${i}`, orderingKey }],
            })
        ).messageIds;
        placement.set(id!, { partition, orderingKey });
        ids.push(id!);
    }
    return ids;
}

function partitionsOf(placement: Placement, call: readonly string[]): Set<string> {
    return new Set(call.map((id) => placement.get(id)!.partition));
}

/**
 * The harness's DynamoDB client, except that each completion (the UpdateItem that sets a record `completed`) is
 * first shown to `onCompletion` with its record id, which may hold it or throw: a fake, because DynamoDB Local
 * cannot hold or throttle one write on demand.
 */
function watchedCompletions(
    h: Harness,
    event: LambdaStreamEvent,
    onCompletion: (recordId: string) => Promise<void> | void,
): Harness["ddb"] {
    const idBySortKey = new Map(
        event.Records.map((r) => [(r.dynamodb.Keys as Record<string, { S?: string }>)[ATTR.sk]!.S!, idOfRecord(r)]),
    );
    const send = async (command: object): Promise<unknown> => {
        if (
            command instanceof UpdateItemCommand &&
            JSON.stringify(command.input.ExpressionAttributeValues ?? {}).includes('"completed"')
        )
            await onCompletion(idBySortKey.get(command.input.Key?.[ATTR.sk]?.S ?? "") ?? "");
        return h.ddb.send(command as never);
    };
    return { send } as unknown as Harness["ddb"];
}

/** A promise and the function that resolves it; it resolves by itself after 5 s, so a test never hangs on it. */
function gate(): { opened: Promise<void>; open: () => void } {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
        open = resolve;
        setTimeout(resolve, 5_000);
    });
    return { opened, open };
}

/** A whole turn of the event loop: every reaction already queued (the relay reading an answer) has run. */
const aTurnLater = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The fault server refuses every publish of this record as SNS refuses a bad message: its own fault, never a retry's. */
function refuseEveryPublishOf(h: Harness, recordId: string): void {
    h.server.setFaults({
        entries: [
            entryFault(recordId, {
                code: "InvalidParameter",
                senderFault: true,
                message: "Invalid parameter: Message",
            }),
        ],
    });
}

describe("the keyed path's lanes and rounds (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("batches across keys and partitions: one PublishBatch carries the heads of every key, and each key stays in order", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const a = await writeKeyed(h, placement, "A", "a", 3);
        const b = await writeKeyed(h, placement, "B", "b", 3);
        const c = await writeKeyed(h, placement, "A", "c", 3);
        const sns = recordingSns(h);
        assert.deepEqual(await h.publisher({ sns: sns.client })(await h.streamEvent()), { batchItemFailures: [] });
        assert.equal(sns.calls.length, 3, "three rounds of three heads, not nine calls of one");
        for (const call of sns.calls)
            assert.equal(partitionsOf(placement, call).size, 2, "each call carries the heads of both partitions");
        const published = publishedIds(h);
        for (const key of [a, b, c])
            assert.deepEqual(
                published.filter((id) => key.includes(id)),
                key,
                "each key in order",
            );
    });

    it("never puts two records of one key in one call, nor two of one ordering-key string from two partitions (on a FIFO topic, one MessageGroupId)", async function () {
        h = await createHarness({ fifo: true });
        const placement: Placement = new Map();
        const p1k = await writeKeyed(h, placement, "P1", "k", 2);
        const p1j = await writeKeyed(h, placement, "P1", "j", 2);
        const p2k = await writeKeyed(h, placement, "P2", "k", 2);
        const p2m = await writeKeyed(h, placement, "P2", "m", 2);
        const sns = recordingSns(h);
        assert.deepEqual(await h.publisher({ sns: sns.client })(await h.streamEvent()), { batchItemFailures: [] });
        for (const call of sns.calls) {
            const keys = call.map((id) => placement.get(id)!.orderingKey);
            assert.equal(new Set(keys).size, keys.length, `no key string twice in a call: ${keys.join(",")}`);
        }
        assert.ok(
            sns.calls.some((call) => partitionsOf(placement, call).size === 2),
            "heads of the two partitions share calls",
        );
        const published = h.published();
        for (const key of [p1k, p1j, p2k, p2m])
            assert.deepEqual(
                published.map((p) => p.id).filter((id) => key.includes(id)),
                key,
                "each key in order",
            );
        assert.ok(
            published.every((p) => p.groupId === placement.get(p.id)!.orderingKey),
            "MessageGroupId is the ordering key",
        );
    });

    it("on a standard topic never has two partitions' heads of one ordering-key string in one round: their lanes take turns, no two calls carrying that string are in flight together, and each key stays in order", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const p1k = await writeKeyed(h, placement, "P1", "k", 2);
        const p1j = await writeKeyed(h, placement, "P1", "j", 1);
        const p2k = await writeKeyed(h, placement, "P2", "k", 2);
        const p2m = await writeKeyed(h, placement, "P2", "m", 1);
        // A round's calls start together (up to ten in flight), so two heads of one round are two calls in flight
        // at once whenever one call cannot carry both: read rounds from the calls in flight, not from timing.
        const inFlight: string[][] = [];
        const overlaps: string[] = [];
        const sns = recordingSns(h);
        const watching = {
            send: async (command: object) => {
                const call =
                    command instanceof PublishBatchCommand
                        ? (command.input.PublishBatchRequestEntries ?? []).map(
                              (e) => e.MessageAttributes?.["outbox.id"]?.StringValue ?? "",
                          )
                        : [];
                const keys = call.map((id) => placement.get(id)!.orderingKey);
                for (const other of inFlight)
                    for (const id of other)
                        if (keys.includes(placement.get(id)!.orderingKey))
                            overlaps.push(`${id} and ${call.join(",")} share key ${placement.get(id)!.orderingKey}`);
                inFlight.push(call);
                try {
                    return await sns.client.send(command);
                } finally {
                    inFlight.splice(inFlight.indexOf(call), 1);
                }
            },
        };
        assert.deepEqual(await h.publisher({ sns: watching })(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(overlaps, [], "P1's and P2's heads of key k never in flight together");
        for (const call of sns.calls) {
            const keys = call.map((id) => placement.get(id)!.orderingKey);
            assert.equal(new Set(keys).size, keys.length, `no key string twice in a call: ${keys.join(",")}`);
        }
        assert.ok(
            sns.calls.some((call) => partitionsOf(placement, call).size === 2),
            "the partitions' other keys still share calls",
        );
        const published = publishedIds(h);
        assert.equal(published.length, 6);
        for (const key of [p1k, p1j, p2k, p2m])
            assert.deepEqual(
                published.filter((id) => key.includes(id)),
                key,
                "each key in order",
            );
        assert.ok(
            published.indexOf(p1k[1]!) < published.indexOf(p2k[0]!),
            "P1's lane of k, then P2's: they take turns",
        );
    });

    it("sends a lane's completion n+1 only once completion n succeeded, and none after it failed: the lane's later records stay pending, and the retry delivers the key in order", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const a = await writeKeyed(h, placement, "A", "a", 3);
        const event = await h.streamEvent();
        // Fakes in front of the emulators, for an ordering in time no emulator gives on demand: a1's completion is
        // held until the round that publishes a3 has been read, then throttled.
        const thirdRoundRead = gate();
        const sent: { recordId: string; firstSettled: boolean }[] = [];
        let firstSettled = false;
        const dynamodb = watchedCompletions(h, event, async (recordId) => {
            sent.push({ recordId, firstSettled });
            if (recordId !== a[0]) return;
            await thirdRoundRead.opened;
            firstSettled = true;
            throw throttled();
        });
        const sns = recordingSns(h, (call) => {
            if (call === 3) void aTurnLater().then(thirdRoundRead.open);
        });
        const response = await h.publisher({ dynamodb, sns: sns.client })(event);
        assert.deepEqual(sns.calls, [[a[0]], [a[1]], [a[2]]], "one record of the lane per round");
        assert.deepEqual(
            sent,
            [{ recordId: a[0], firstSettled: false }],
            "a2's and a3's completions waited for a1's, and were never sent once it failed",
        );
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            a.map((id) => states.get(id)),
            ["pending", "pending", "pending"],
            "published but not completed: released, so the next delivery sends them again in order",
        );
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h), [...a, ...a], "duplicates, never an inversion");
    });

    it("a failed completion ends its lane and, being a fault every record would meet (DynamoDB failing), the delivery: no round starts after it, nothing more is published, and the retry delivers every key in order", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const a = await writeKeyed(h, placement, "A", "a", 2);
        const b = await writeKeyed(h, placement, "A", "b", 2);
        const others: string[] = [];
        for (let i = 0; i < 9; i += 1) others.push(...(await writeKeyed(h, placement, "A", `c${i}`, 1)));
        const event = await h.streamEvent();
        // Round 1 carries the heads of eleven keys in two calls, [a1, b1, c0..c7] and [c8]. Fakes in front of the
        // emulators, for an ordering in time no emulator gives on demand: a1's completion is throttled, and the call
        // of c8 is held until that failure has been read, so round 1 ends after it is known.
        const firstFailed = gate();
        const dynamodb = watchedCompletions(h, event, (recordId) => {
            if (recordId !== a[0]) return;
            void aTurnLater().then(firstFailed.open);
            throw throttled();
        });
        const sns = recordingSns(h);
        const holding = {
            send: async (command: object) => {
                if (
                    command instanceof PublishBatchCommand &&
                    (command.input.PublishBatchRequestEntries ?? []).some(
                        (e) => e.MessageAttributes?.["outbox.id"]?.StringValue === others[8],
                    )
                )
                    await firstFailed.opened;
                return sns.client.send(command);
            },
        };
        const response = await h.publisher({ dynamodb, sns: holding })(event);
        assert.deepEqual(
            sns.calls,
            [[a[0], b[0], ...others.slice(0, 8)], [others[8]]],
            "round 1 only: a2 (its lane ended) and b2 (the delivery stopped) were never published",
        );
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [...a, ...b].map((id) => states.get(id)),
            ["pending", "pending", "completed", "pending"],
            "released, except b1, whose completion did not fail",
        );
        assert.ok(others.every((id) => states.get(id) === "completed"));
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        const published = publishedIds(h);
        assert.deepEqual(
            published.filter((id) => a.includes(id)),
            [a[0], a[0], a[1]],
            "a1 again (it was not completed), then a2",
        );
        assert.deepEqual(
            published.filter((id) => b.includes(id)),
            b,
        );
    });

    it("starts no publish call once a fault every record would meet is known: with SNS throttling every call, a round of twelve calls sends only the ten that started together, and the retry delivers everything once", async function () {
        h = await createHarness();
        // Two partitions of sixty keys each: one round of 120 heads, in twelve calls of ten, ten in flight at once.
        for (const partition of ["A", "B"])
            for (let i = 0; i < 60; i += 10)
                await h.writer.write({
                    messages: Array.from({ length: 10 }, (_, j) => ({
                        partition,
                        type: "T",
                        payload: i + j,
                        orderingKey: `${partition}${i + j}`,
                    })),
                });
        const event = await h.streamEvent();
        assert.equal(event.Records.length, 120);
        h.server.setFaults({ calls: [{ kind: "Throttled" }] });
        const response = await h.publisher()(event);
        const calls = h.server.calls().filter((c) => c.action === "PublishBatch");
        assert.deepEqual(
            calls.map((c) => `${c.entries}:${c.outcome}`),
            Array.from({ length: 10 }, () => "10:Throttled"),
            "the two calls waiting for a slot were never sent: the first throttled answer stopped the delivery",
        );
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        h.server.clearFaults();
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.equal(new Set(publishedIds(h)).size, 120);
        assert.equal(h.published().length, 120, "each once");
    });

    it("a head SNS refuses in a merged call holds only its key: the other heads of that call are completed and their keys go on", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const [a1, a2] = await writeKeyed(h, placement, "A", "a", 2);
        const b = await writeKeyed(h, placement, "B", "b", 2);
        refuseEntry(h, a1);
        const sns = recordingSns(h);
        assert.deepEqual(
            await h.publisher({ sns: sns.client, maxPublishAttempts: 3 })(await h.streamEvent()),
            { batchItemFailures: [] },
            "the shard goes on",
        );
        assert.deepEqual(
            sns.calls[0]!.slice().sort(),
            [a1!, b[0]!].sort(),
            "the refused head shared its call with key b's head",
        );
        assert.deepEqual(publishedIds(h), b, "key b delivered in order past key a's refused head");
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [a1, a2, ...b].map((id) => states.get(id!)),
            ["pending", "pending", "completed", "completed"],
        );
    });

    it("a refused head holds only its key past the claim limit: a key of its partition the first claim did not reach is claimed and delivered in the same invocation, and the shard goes on (issue 38, found by tests/integration/relay/edges.test.ts)", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        // Key a's three records fill two claims of claimLimit 2; key b's record and a keyless one come after them.
        const a = await writeKeyed(h, placement, "P", "a", 3);
        const [b] = await writeKeyed(h, placement, "P", "b", 1);
        const [keyless] = (await h.writer.write({ messages: [{ partition: "P", type: "T", payload: "keyless" }] }))
            .messageIds;
        refuseEveryPublishOf(h, a[0]!);
        assert.deepEqual(
            await h.publisher({ claimLimit: 2, maxPublishAttempts: 3 })(await h.streamEvent()),
            { batchItemFailures: [] },
            "key a's own refusal does not stop the batch",
        );
        assert.deepEqual(publishedIds(h).sort(), [b!, keyless!].sort(), "key b and the keyless record went on");
        const records = new Map((await h.records()).map((r) => [r.recordId, r]));
        assert.deepEqual(
            [...a, b, keyless].map((id) => records.get(id!)?.status),
            ["pending", "pending", "pending", "completed", "completed"],
            "key a waits for the sweeper behind its refused head",
        );
        const head = (await h.items()).find((i) => i[ATTR.recordId]?.S === a[0]);
        assert.equal(head?.[ATTR.publishAttempts]?.N, "1", "the refused head was tried once");
    });

    it("with a store that ignores claim's skip, the held head is still tried once per invocation: the records the store hands back are released, and the key not reached is reported, never acknowledged", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const a = await writeKeyed(h, placement, "P", "a", 3);
        const [b] = await writeKeyed(h, placement, "P", "b", 1);
        refuseEveryPublishOf(h, a[0]!);
        const outbox = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        // A store of one's own that knows nothing of skip: every claim starts again at key a's head.
        const store = {
            claim: (
                partition: string,
                token: Parameters<OutboxStore["claim"]>[1],
                limit: number,
                options?: Parameters<OutboxStore["claim"]>[3],
            ) => outbox.claim(partition, token, limit, { ...options, skip: undefined }),
            complete: (ids: readonly string[], token: Parameters<OutboxStore["complete"]>[1]) =>
                outbox.complete(ids, token),
            release: (ids: readonly string[], token: Parameters<OutboxStore["release"]>[1]) =>
                outbox.release(ids, token),
        };
        const event = await h.streamEvent();
        const result = await h.publisher({ claimLimit: 2, maxPublishAttempts: 3, store })(event);
        const sequenceOf = (id: string) =>
            event.Records.find((r) => (r.dynamodb.NewImage?.[ATTR.recordId] as { S?: string })?.S === id)!.dynamodb
                .SequenceNumber;
        assert.deepEqual(result, { batchItemFailures: [{ itemIdentifier: sequenceOf(b!) }] }, "b not reached: retried");
        const head = (await h.items()).find((i) => i[ATTR.recordId]?.S === a[0]);
        assert.equal(head?.[ATTR.publishAttempts]?.N, "1", "the refused head was tried once");
        assert.deepEqual(
            (await h.records()).filter((r) => r.status !== "pending").map((r) => r.recordId),
            [],
            "nothing completed, nothing left claimed",
        );
    });

    it("under a stale token (another claimer took partition A over mid-delivery) the stale publisher completes nothing of A, and B goes on", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const a = await writeKeyed(h, placement, "A", "a", 3);
        const b = await writeKeyed(h, placement, "B", "b", 3);
        const other = new OutboxStore({ client: h.ddb, tableName: h.tableName, clock: h.clock });
        // After the first call, a claimer with a higher version takes A over: its fence and its claims.
        const sns = recordingSns(h, async (call) => {
            if (call === 1) assert.equal((await other.claim("A", { owner: "takeover", version: 2n }, 100)).length, 3);
        });
        assert.deepEqual(
            await h.publisher({ sns: sns.client })(await h.streamEvent()),
            { batchItemFailures: [] },
            "A is the other claimer's now: nothing to retry",
        );
        assert.equal(partitionsOf(placement, sns.calls[0]!).size, 2, "the partitions were delivered together");
        const records = new Map((await h.records()).map((r) => [r.recordId, r]));
        for (const id of a)
            assert.deepEqual(
                [records.get(id)!.status, records.get(id)!.claimedBy],
                ["claimed", "takeover"],
                "nothing of A completed by the stale claimer",
            );
        for (const id of b) assert.equal(records.get(id)!.status, "completed");
        assert.deepEqual(
            publishedIds(h).filter((id) => b.includes(id)),
            b,
        );
    });

    it("reports the lowest SequenceNumber not delivered, whatever order concurrent partitions ended in; what SNS took after it is completed", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const [a1] = await writeKeyed(h, placement, "A", "a", 1);
        const [b1] = await writeKeyed(h, placement, "B", "b", 1);
        const [c1] = await writeKeyed(h, placement, "C", "c", 1);
        h.server.setFaults({
            entries: [entryFault(b1, { code: "InternalError" })],
        });
        const event = await h.streamEvent();
        const sns = recordingSns(h);
        const response = await h.publisher({ sns: sns.client })(event);
        assert.deepEqual(sns.calls, [[a1, b1, c1]], "one call carried the three heads");
        assert.deepEqual(
            response,
            { batchItemFailures: [{ itemIdentifier: event.Records[1]!.dynamodb.SequenceNumber }] },
            "b1, the lowest failure",
        );
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [a1, b1, c1].map((id) => states.get(id!)),
            ["completed", "pending", "completed"],
            "c1, accepted after b1's refusal, is completed so the retry skips it",
        );
    });

    it("starts no round once the invocation is short of time: the first doorbell not delivered is reported, and the retry goes on in order", async function () {
        h = await createHarness();
        const placement: Placement = new Map();
        const a = await writeKeyed(h, placement, "A", "a", 3);
        const b = await writeKeyed(h, placement, "B", "b", 3);
        const event = await h.streamEvent();
        const sns = recordingSns(h);
        // Time for one round: the invocation runs short once a call was sent.
        const context = {
            awsRequestId: "short",
            getRemainingTimeInMillis: () => (sns.calls.length > 0 ? 1_000 : 60_000),
        };
        const response = await h.publisher({ sns: sns.client, reserveMs: 5_000 })(event, context);
        assert.equal(sns.calls.length, 1, "one round, then no more");
        assert.deepEqual(publishedIds(h).sort(), [a[0]!, b[0]!].sort());
        const firstUndelivered = event.Records.find((r) => ![a[0], b[0]].includes(idOfRecord(r)))!;
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: firstUndelivered.dynamodb.SequenceNumber }],
        });
        const states = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            [...a, ...b].map((id) => states.get(id)),
            ["completed", "pending", "pending", "completed", "pending", "pending"],
            "the rest released, not held",
        );
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        const published = publishedIds(h);
        for (const key of [a, b])
            assert.deepEqual(
                published.filter((id) => key.includes(id)),
                key,
                "in order, each once",
            );
    });
});

function idOfRecord(r: { dynamodb: { NewImage?: unknown } }): string {
    return ((r.dynamodb.NewImage as Record<string, { S?: string }> | undefined)?.record_id?.S ?? "") as string;
}
