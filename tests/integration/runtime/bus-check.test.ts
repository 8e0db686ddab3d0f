/**
 * The check that an EventBridge bus exists, on DynamoDB Local with the table's real stream records and the fault
 * server standing in for EventBridge (no maintained emulator exists; it answers `DescribeEventBus` as AWS does, and
 * accepts and drops events put on a bus that does not exist, as AWS does). The faults (a throttled or denied
 * `DescribeEventBus`) are the server's, injected by error code. The rule: a bus whose existence is not confirmed
 * gets no `PutEvents`. An unknown answer fails the invocation as transient and is asked again, never kept; a bus
 * missing or not to be described holds every invocation; a warm handler asks again once its answer is
 * `BUS_CHECK_INTERVAL_MS` old, on the handler's clock (the harness's hand-driven one).
 */
import assert from "node:assert/strict";
import { BUS_CHECK_INTERVAL_MS } from "../../../runtime/destination/bus-check";
import { isOutboxError } from "../../../runtime/errors";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { RecordingLogger } from "../../support/store/helpers";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach } from "../../support/runtime/relay-fixtures";

const MISSING = "arn:aws:events:us-east-1:000000000000:event-bus/orders-typo";

function calls(h: Harness, action: string): number {
    return h.server.calls().filter((c) => c.action === action).length;
}

/** Two keyless records and two keyed ones, in two partitions. */
async function writeFour(h: Harness): Promise<string[]> {
    const keyless = await h.writer.write({
        messages: [1, 2].map((n) => ({ partition: `ORDER#${n}`, type: "OrderPlaced", payload: { n } })),
    });
    const keyed = await h.writer.write({
        messages: [3, 4].map((n) => ({ partition: "ACCOUNT#7", type: "T", payload: { n }, orderingKey: "acct-7" })),
    });
    return [...keyless.messageIds, ...keyed.messageIds];
}

async function statuses(h: Harness, ids: readonly string[]): Promise<string[]> {
    const byId = new Map((await h.records()).map((r) => [r.recordId, r.status]));
    return ids.map((id) => byId.get(id) ?? "absent");
}

function isTransientUnknown(err: unknown): boolean {
    return (
        isOutboxError(err, "UNAVAILABLE") &&
        err.transient &&
        /the check that the event bus .* exists got no answer \(ThrottlingException\); nothing is put on a bus whose existence is not confirmed/.test(
            err.message,
        )
    );
}

describe("the EventBridge bus check (DynamoDB Local + the fault server)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("a first check throttled on a missing bus puts nothing and completes nothing: the invocation fails as transient, the next check finds the bus missing and holds (the sweeper likewise)", async function () {
        h = await createHarness({ destination: "eventbridge" });
        const ids = await writeFour(h);
        const event = await h.streamEvent();
        h.server.setFaults({
            calls: [
                { kind: "Error", code: "ThrottlingException", status: 400, actions: ["DescribeEventBus"], times: 1 },
            ],
        });
        const logger = new RecordingLogger();
        const publisher = h.publisher({ eventBusArn: MISSING, logger });

        await assert.rejects(publisher(event), isTransientUnknown);
        assert.equal(calls(h, "PutEvents"), 0, "nothing put on a bus whose existence is not confirmed");
        assert.deepEqual(await statuses(h, ids), ["pending", "pending", "pending", "pending"], "nothing completed");
        assert.ok(
            logger.lines.some(
                (l) =>
                    l.level === "warn" && l.attributes?.code === "UNAVAILABLE" && l.attributes.eventBusArn === MISSING,
            ),
            "the unknown answer is logged at warn",
        );

        await assert.rejects(
            publisher(event),
            (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && /orders-typo does not exist/.test(err.message),
            "asked again, the check finds the bus missing",
        );
        await assert.rejects(publisher(event), (err: unknown) => isOutboxError(err, "INVALID_CONFIG"), "and holds");
        assert.equal(calls(h, "DescribeEventBus"), 2, "the missing answer is kept for the interval");
        assert.ok(
            logger.lines.some(
                (l) =>
                    l.level === "error" &&
                    l.attributes?.code === "INVALID_CONFIG" &&
                    /orders-typo does not exist/.test(String(l.attributes.reason)),
            ),
        );

        h.server.setFaults({
            calls: [
                { kind: "Error", code: "ThrottlingException", status: 400, actions: ["DescribeEventBus"], times: 1 },
            ],
        });
        h.clock.advance(121_000);
        const sweeper = createSweeper(h.config({ eventBusArn: MISSING }));
        await assert.rejects(sweeper(), isTransientUnknown, "the sweep fails likewise");
        await assert.rejects(sweeper(), (err: unknown) => isOutboxError(err, "INVALID_CONFIG"));
        assert.equal(calls(h, "PutEvents"), 0);
        assert.deepEqual(await statuses(h, ids), ["pending", "pending", "pending", "pending"]);
    });

    it("a denied check holds every invocation with an error naming the permission, the bus and the fix; checkEventBus: false opts out, loudly", async function () {
        h = await createHarness({ destination: "eventbridge" });
        const ids = await writeFour(h);
        const event = await h.streamEvent();
        h.server.setFaults({
            calls: [{ kind: "Error", code: "AccessDeniedException", status: 400, actions: ["DescribeEventBus"] }],
        });
        const logger = new RecordingLogger();
        const denied = (err: unknown): boolean =>
            isOutboxError(err, "INVALID_CONFIG") &&
            err.message.includes(`may not call events:DescribeEventBus on the event bus ${h.destinationArn}`) &&
            err.message.includes("grant events:DescribeEventBus on the bus to the role") &&
            err.message.includes("the bus's resource policy must grant it to the role too");
        await assert.rejects(h.publisher({ logger })(event), denied);
        await assert.rejects(createSweeper(h.config({ logger }))(), denied, "the sweep is held too");
        const errors = logger.lines.filter((l) => l.level === "error");
        assert.equal(errors.length, 2);
        for (const line of errors)
            assert.deepEqual(
                [line.attributes?.code, line.attributes?.permission, line.attributes?.eventBusArn],
                ["INVALID_CONFIG", "events:DescribeEventBus", h.destinationArn],
            );
        assert.equal(calls(h, "PutEvents"), 0);
        assert.deepEqual(await statuses(h, ids), ["pending", "pending", "pending", "pending"]);

        const optedOut = new RecordingLogger();
        const unchecked = h.publisher({ checkEventBus: false, logger: optedOut });
        assert.ok(
            optedOut.lines.some(
                (l) =>
                    l.level === "warn" &&
                    /the event bus check is off \(checkEventBus: false\)/.test(l.message) &&
                    l.attributes?.eventBusArn === h.destinationArn,
            ),
            "the opt-out warns at construction (every cold start)",
        );
        assert.deepEqual(await unchecked(event), { batchItemFailures: [] });
        assert.equal(calls(h, "DescribeEventBus"), 2, "no check asked with the opt-out");
        assert.equal(h.server.busEvents(h.destinationArn).length, 4);
    });

    it(`a bus deleted while a handler is warm is found at the next check (${BUS_CHECK_INTERVAL_MS} ms after the last): nothing is completed after it, and the bus made again is found the same way`, async function () {
        h = await createHarness({ destination: "eventbridge" });
        const logger = new RecordingLogger();
        const publisher = h.publisher({ logger });
        const first = await writeFour(h);
        assert.deepEqual(await publisher(await h.streamEvent()), { batchItemFailures: [] });
        assert.equal(calls(h, "DescribeEventBus"), 1);
        assert.equal(h.server.busEvents(h.destinationArn).length, 4);

        h.server.deleteEventBus(h.destinationArn);
        // Within the interval the answer is kept: what is put now is accepted and dropped (the cost of the
        // interval, docs/runtime.md).
        h.clock.advance(BUS_CHECK_INTERVAL_MS - 1);
        const inWindow = await writeFour(h);
        assert.deepEqual(await publisher(await h.streamEvent()), { batchItemFailures: [] });
        assert.equal(calls(h, "DescribeEventBus"), 1, "not asked again within the interval");
        assert.deepEqual(await statuses(h, inWindow), ["completed", "completed", "completed", "completed"]);
        assert.equal(h.server.busEvents(h.destinationArn).length, 4, "dropped by EventBridge: the loss window");

        h.clock.advance(1);
        const after = await writeFour(h);
        const putsBefore = calls(h, "PutEvents");
        for (let i = 0; i < 2; i += 1)
            await assert.rejects(
                publisher(await h.streamEvent()),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && /does not exist/.test(err.message),
            );
        assert.equal(calls(h, "DescribeEventBus"), 2, "asked again once the answer was an interval old");
        assert.equal(calls(h, "PutEvents"), putsBefore, "nothing put once the bus is known missing");
        assert.deepEqual(await statuses(h, after), ["pending", "pending", "pending", "pending"], "nothing completed");

        h.server.createEventBus("events");
        h.clock.advance(BUS_CHECK_INTERVAL_MS);
        assert.deepEqual(await publisher(await h.streamEvent()), { batchItemFailures: [] });
        assert.deepEqual(await statuses(h, after), ["completed", "completed", "completed", "completed"]);
        assert.equal(h.server.busEvents(h.destinationArn).length, 8);
        assert.deepEqual(await statuses(h, first), ["completed", "completed", "completed", "completed"]);
    });

    it("an unknown bus-check answer is asked again, never kept: not as success, not as failure, not past a known answer's interval", async function () {
        h = await createHarness({ destination: "eventbridge" });
        const throttledOnce = {
            calls: [
                {
                    kind: "Error" as const,
                    code: "ThrottlingException",
                    status: 400,
                    actions: ["DescribeEventBus"],
                    times: 1,
                },
            ],
        };
        h.server.setFaults(throttledOnce);
        const publisher = h.publisher();
        const ids = await writeFour(h);
        const event = await h.streamEvent();

        await assert.rejects(publisher(event), isTransientUnknown, "not kept as success");
        assert.deepEqual([calls(h, "DescribeEventBus"), calls(h, "PutEvents")], [1, 0]);
        // Same instant: an unknown answer kept as failure would fail this invocation without asking.
        assert.deepEqual(await publisher(event), { batchItemFailures: [] }, "not kept as failure");
        assert.equal(calls(h, "DescribeEventBus"), 2, "asked again at once");
        assert.deepEqual(await statuses(h, ids), ["completed", "completed", "completed", "completed"]);

        const more = await writeFour(h);
        h.clock.advance(BUS_CHECK_INTERVAL_MS - 1);
        assert.deepEqual(await publisher(await h.streamEvent()), { batchItemFailures: [] });
        assert.equal(calls(h, "DescribeEventBus"), 2, "a known answer is kept within the interval");

        // Past the interval, the known answer is stale: a re-check with no answer fails the invocation rather than
        // trusting the old one.
        h.server.setFaults(throttledOnce);
        h.clock.advance(1);
        const late = await writeFour(h);
        const putsBefore = calls(h, "PutEvents");
        await assert.rejects(publisher(await h.streamEvent()), isTransientUnknown, "not kept past its interval");
        assert.equal(calls(h, "PutEvents"), putsBefore);
        assert.deepEqual(await statuses(h, late), ["pending", "pending", "pending", "pending"]);
        assert.deepEqual(await publisher(await h.streamEvent()), { batchItemFailures: [] });
        assert.equal(calls(h, "DescribeEventBus"), 4);
        assert.deepEqual(await statuses(h, [...more, ...late]), Array(8).fill("completed"));
    });
});
