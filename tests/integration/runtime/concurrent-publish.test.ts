/**
 * The publisher's keyless calls in flight together (runtime/relay/keyless-publish.ts), on DynamoDB Local and the SNS
 * test server. The clients are wrapped to watch which calls are in flight and in what order they end: a wrapper
 * only observes, except where a test holds one call back or throttles one completion, which no emulator does on
 * demand (said at each). No timing is asserted: overlap is read from the calls themselves.
 */
import assert from "node:assert/strict";
import { BatchGetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import { ATTR } from "../../../runtime/schema";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { createCriticalPathCounter } from "../../../dev/bench/critical-path";
import { createHarness, type Harness } from "../../support/runtime/harness";
import {
    closeAfterEach,
    idOf,
    skOf,
    metric,
    from,
    entryFault,
    failEntryOnce,
    publishedIds,
} from "../../support/runtime/relay-fixtures";

type Sender = { send(command: object): Promise<unknown> };

/** Record ids of a PublishBatch call. */
function entryIds(command: object): string[] {
    if (!(command instanceof PublishBatchCommand)) return [];
    return (command.input.PublishBatchRequestEntries ?? []).map(
        (e) => e.MessageAttributes?.["outbox.id"]?.StringValue ?? "",
    );
}

/** Message groups of a PublishBatch call. */
function groupsOf(command: object): string[] {
    if (!(command instanceof PublishBatchCommand)) return [];
    return [...new Set((command.input.PublishBatchRequestEntries ?? []).map((e) => e.MessageGroupId ?? ""))];
}

/** Watches the PublishBatch calls in flight, in all and per message group; forwards every call unchanged. */
function watchPublishes(sns: Sender): Sender & { maxInFlight: number; maxInFlightPerGroup: Map<string, number> } {
    let inFlight = 0;
    const perGroup = new Map<string, number>();
    const watcher = {
        maxInFlight: 0,
        maxInFlightPerGroup: new Map<string, number>(),
        async send(command: object): Promise<unknown> {
            if (!(command instanceof PublishBatchCommand)) return sns.send(command);
            const groups = groupsOf(command);
            inFlight += 1;
            watcher.maxInFlight = Math.max(watcher.maxInFlight, inFlight);
            for (const g of groups) {
                perGroup.set(g, (perGroup.get(g) ?? 0) + 1);
                watcher.maxInFlightPerGroup.set(g, Math.max(watcher.maxInFlightPerGroup.get(g) ?? 0, perGroup.get(g)!));
            }
            try {
                return await sns.send(command);
            } finally {
                inFlight -= 1;
                for (const g of groups) perGroup.set(g, perGroup.get(g)! - 1);
            }
        },
    };
    return watcher;
}

async function writeKeyless(h: Harness, partitions: readonly string[]): Promise<void> {
    for (let i = 0; i < partitions.length; i += 10) {
        await h.writer.write({
            messages: partitions
                .slice(i, i + 10)
                .map((partition, j) => ({ partition, type: "T", payload: { n: i + j } })),
        });
    }
}

/** Partitions of `a` records of group A, then of `b` groups B0, B1, … of one record each. */
function groupAThenBs(a: number, b: number): string[] {
    return [...Array.from({ length: a }, () => "A"), ...Array.from({ length: b }, (_, i) => `B${i}`)];
}

/** Where group A's published messages stand in `event`, in the order they were published. */
function groupAPositions(h: Harness, event: LambdaStreamEvent): number[] {
    const order = new Map(event.Records.map((r, i) => [idOf(r), i]));
    return h
        .published()
        .filter((p) => p.groupId === "A")
        .map((p) => order.get(p.id)!);
}

describe("publisher: keyless calls in flight together (DynamoDB Local + AWS fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("a 100-record batch costs three sequential round trips: one status read, ten PublishBatch calls in flight together, each call's completions as it returns", async function () {
        h = await createHarness();
        await writeKeyless(
            h,
            Array.from({ length: 100 }, (_, i) => `ORDER#${i}`),
        );
        const event = await h.streamEvent();
        assert.equal(event.Records.length, 100);
        const path = createCriticalPathCounter();
        const sns = watchPublishes(h.sns);
        let statusReads = 0;
        const dynamodb = {
            send: (command: object) => {
                if (command instanceof BatchGetItemCommand) statusReads += 1;
                return h.ddb.send(command as never);
            },
        };
        path.begin();
        const response = await h.publisher({
            dynamodb: path.wrap(dynamodb) as unknown as Harness["ddb"],
            sns: path.wrap(sns) as unknown as Harness["sns"],
        })(event);
        assert.deepEqual(response, { batchItemFailures: [] });
        assert.equal(path.depth(), 3, "status read, then the publishes, then the completions");
        assert.equal(statusReads, 1);
        assert.equal(sns.maxInFlight, 10);
        assert.deepEqual(publishedIds(h).sort(), event.Records.map(idOf).sort());
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("reports the lowest failure whatever order the calls end in: a completion that fails in a later call never replaces a refused entry of an earlier one", async function () {
        h = await createHarness();
        await writeKeyless(
            h,
            Array.from({ length: 20 }, () => "P"),
        );
        const event = await h.streamEvent();
        const [fourth, sixteenth] = [event.Records[3]!, event.Records[15]!];
        failEntryOnce(h, idOf(fourth));
        // Fakes in front of the emulators: the second call's completion of the sixteenth record is throttled, and
        // the first call (which holds the refused fourth) is held back until then, so the later failure is seen first.
        let throttled: () => void = () => undefined;
        const completionFailed = new Promise<void>((resolve) => {
            throttled = resolve;
        });
        const dynamodb = {
            send: (command: object) => {
                if (
                    command instanceof UpdateItemCommand &&
                    command.input.Key?.[ATTR.sk]?.S === skOf(sixteenth) &&
                    JSON.stringify(command.input.ExpressionAttributeValues).includes('"completed"')
                ) {
                    throttled();
                    return Promise.reject(
                        Object.assign(new Error("Rate of requests exceeds the allowed throughput."), {
                            name: "ThrottlingException",
                            $fault: "client",
                        }),
                    );
                }
                return h.ddb.send(command as never);
            },
        };
        const sns = {
            send: async (command: object) => {
                if (entryIds(command).includes(idOf(fourth)))
                    await Promise.race([completionFailed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
                return h.sns.send(command as never);
            },
        };
        const response = await h.publisher({
            dynamodb: dynamodb as unknown as Harness["ddb"],
            sns: sns as unknown as Harness["sns"],
        })(event);
        assert.deepEqual(response, { batchItemFailures: [{ itemIdentifier: fourth.dynamodb.SequenceNumber }] });
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            event.Records.map((r) => status.get(idOf(r))),
            event.Records.map((_, i) => (i === 3 || i === 15 ? "pending" : "completed")),
        );
        assert.equal(metric(h, "PublishedAfterFailure"), 16, "entries 4-9 of the first call and all ten of the second");
        assert.equal(metric(h, "PublishedNotCompleted"), 1);

        assert.deepEqual(await h.publisher()(from(event, fourth.dynamodb.SequenceNumber)), { batchItemFailures: [] });
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        const ids = publishedIds(h);
        assert.deepEqual(
            [...ids].sort(),
            [...event.Records.map(idOf), idOf(sixteenth)].sort(),
            "every record once, and the sixteenth (its completion failed) twice",
        );
    });

    it("on a FIFO topic, calls of different message groups are in flight together, one group's calls never are, and each group arrives in shard order", async function () {
        h = await createHarness({ fifo: true });
        // Calls in shard order: [A×10] [A×10] [B0..B9] [B10..B19]: the second waits for the first, the others overlap.
        await writeKeyless(h, groupAThenBs(20, 20));
        const event = await h.streamEvent();
        const sns = watchPublishes(h.sns);
        assert.deepEqual(await h.publisher({ sns: sns as unknown as Harness["sns"] })(event), {
            batchItemFailures: [],
        });
        assert.equal(sns.maxInFlightPerGroup.get("A"), 1, "group A's two calls one after the other");
        assert.ok(sns.maxInFlight >= 2, `calls of different groups overlap (at most ${sns.maxInFlight} in flight)`);
        const groupA = groupAPositions(h, event);
        assert.deepEqual(
            groupA,
            [...groupA].sort((a, b) => a - b),
        );
        assert.equal(groupA.length, 20);
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("on a FIFO topic a refused entry holds its group's later calls: they are not sent, and the retry from the refusal sends the refused entry before them", async function () {
        h = await createHarness({ fifo: true });
        await writeKeyless(h, groupAThenBs(20, 10));
        const event = await h.streamEvent();
        const fourth = event.Records[3]!;
        failEntryOnce(h, idOf(fourth));
        const publisher = h.publisher();
        assert.deepEqual(await publisher(event), {
            batchItemFailures: [{ itemIdentifier: fourth.dynamodb.SequenceNumber }],
        });
        const sentInFirst = new Set(publishedIds(h));
        for (const r of event.Records.slice(10, 20))
            assert.ok(!sentInFirst.has(idOf(r)), "group A's second call was not sent");
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            event.Records.slice(10, 20).map((r) => status.get(idOf(r))),
            Array.from({ length: 10 }, () => "pending"),
        );

        assert.deepEqual(await publisher(from(event, fourth.dynamodb.SequenceNumber)), { batchItemFailures: [] });
        assert.ok((await h.records()).every((r) => r.status === "completed"));
        const groupA = groupAPositions(h, event);
        assert.deepEqual(
            groupA.slice(-11),
            [3, ...Array.from({ length: 10 }, (_, i) => 10 + i)],
            "the refused entry, then the held call, in order",
        );
    });

    it("on a FIFO topic a call that was held behind its group and then not sent, because another call's entry was refused meanwhile, is the lowest failure reported", async function () {
        h = await createHarness({ fifo: true });
        // Calls in shard order: [A0..A9] [A10..A19] (waits for the first) [B0..B9] (B3 refused).
        await writeKeyless(h, groupAThenBs(20, 10));
        const event = await h.streamEvent();
        const [a0, a10, b3] = [event.Records[0]!, event.Records[10]!, event.Records[23]!];
        failEntryOnce(h, idOf(b3));
        // A fake in front of the SNS server: group A's first call is held until the call with the refusal has
        // returned, an ordering of answers no emulator gives on demand.
        let refusedCallReturned: () => void = () => undefined;
        const refusal = new Promise<void>((resolve) => {
            refusedCallReturned = resolve;
        });
        const sns = {
            send: async (command: object) => {
                const ids = entryIds(command);
                if (ids.includes(idOf(a0)))
                    await Promise.race([refusal, new Promise((resolve) => setTimeout(resolve, 5_000))]);
                try {
                    return await h.sns.send(command as never);
                } finally {
                    if (ids.includes(idOf(b3))) refusedCallReturned();
                }
            },
        };
        const publisher = h.publisher({ sns: sns as unknown as Harness["sns"] });
        assert.deepEqual(
            await publisher(event),
            { batchItemFailures: [{ itemIdentifier: a10.dynamodb.SequenceNumber }] },
            "A10 comes before B3 in the shard",
        );
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.deepEqual(
            event.Records.map((r) => status.get(idOf(r))),
            event.Records.map((_, i) => ((i >= 10 && i < 20) || i === 23 ? "pending" : "completed")),
        );

        assert.deepEqual(await publisher(from(event, a10.dynamodb.SequenceNumber)), { batchItemFailures: [] });
        assert.ok((await h.records()).every((r) => r.status === "completed"));
    });

    it("on a standard topic too, no call starts once an entry failed for a reason every record would meet: SNS throttling every call, a flush of twelve calls sends only the ten that started together, and the retry delivers every record once", async function () {
        h = await createHarness();
        // Twelve records of 140 KB: one per call (256 KiB per call), so twelve calls, ten in flight at once.
        for (let i = 0; i < 12; i += 1)
            await h.writer.write({ messages: [{ partition: `P${i}`, type: "T", payload: "x".repeat(140_000) }] });
        const event = await h.streamEvent();
        h.server.setFaults({ calls: [{ kind: "Throttled" }] });
        const response = await h.publisher()(event);
        assert.deepEqual(
            h.server
                .calls()
                .filter((c) => c.action === "PublishBatch")
                .map((c) => `${c.entries}:${c.outcome}`),
            Array.from({ length: 10 }, () => "1:Throttled"),
            "the two calls waiting for a slot were never sent",
        );
        assert.deepEqual(response, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.ok((await h.records()).every((r) => r.status === "pending"));
        h.server.clearFaults();
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        assert.deepEqual(publishedIds(h).sort(), event.Records.map(idOf).sort(), "each once");
    });

    it("a permanent refusal is the record's own: the other calls of the batch are still sent, the refused record stays pending for the sweeper, and nothing is retried", async function () {
        h = await createHarness({ fifo: true });
        await writeKeyless(h, groupAThenBs(20, 10));
        const event = await h.streamEvent();
        const fourth = event.Records[3]!;
        h.server.setFaults({
            entries: [entryFault(idOf(fourth), { code: "InvalidParameter", senderFault: true })],
        });
        assert.deepEqual(await h.publisher()(event), { batchItemFailures: [] });
        const status = new Map((await h.records()).map((r) => [r.recordId, r.status]));
        assert.equal(status.get(idOf(fourth)), "pending");
        assert.deepEqual(
            event.Records.filter((r) => r !== fourth).map((r) => status.get(idOf(r))),
            Array.from({ length: 29 }, () => "completed"),
            "group A's second call and group B were sent",
        );
        assert.equal(metric(h, "LeftForSweeper"), 1);
    });
});
