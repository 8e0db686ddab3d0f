/**
 * The sweeper's reference time (`runtime/relay/server-clock.ts`): when its clock and DynamoDB's `Date` header disagree by
 * more than the tolerance beyond what the header can tell (its whole second, and the call's round trip), the sweep
 * takes DynamoDB's time. The header as DynamoDB Local sends it, read through the SDK, is in
 * tests/integration/runtime/sweeper-clocks.test.ts ("a sweeper whose clock is wrong").
 */
import assert from "node:assert/strict";
import { captureServerDate, SWEEPER_CLOCK_TOLERANCE_MS, sweepTime } from "../../../runtime/relay/server-clock";

const T = Date.UTC(2026, 5, 1, 12, 0, 0);

describe("sweepTime: the sweeper's clock checked against DynamoDB's Date header", function () {
    it("keeps the sweeper's clock without a header, and gives no offset", function () {
        assert.deepEqual(sweepTime(T, T + 40, undefined), { nowMs: T + 40, offsetMs: undefined, serverTime: false });
    });

    it("keeps the sweeper's clock while the clocks agree within the header's second, the round trip and the tolerance", function () {
        // The header truncates to the second: a sweeper 999 ms into the second reads a Date 999 ms behind it.
        assert.deepEqual(sweepTime(T + 999, T + 999, T), { nowMs: T + 999, offsetMs: -499, serverTime: false });
        // DynamoDB exactly the tolerance ahead of the latest moment the answer can have been stamped: still agreeing.
        assert.equal(sweepTime(T, T, T + SWEEPER_CLOCK_TOLERANCE_MS).serverTime, false);
        // ...or behind the earliest: the Date's second (1 s) is the server's, so it may be 1 s + tolerance behind.
        assert.equal(sweepTime(T, T, T - SWEEPER_CLOCK_TOLERANCE_MS - 1_000).serverTime, false);
        // A slow round trip widens what the header allows.
        assert.equal(sweepTime(T, T + 20_000, T + 20_000 + SWEEPER_CLOCK_TOLERANCE_MS).serverTime, false);
    });

    it("takes DynamoDB's time, at the middle of what the header allows, once the clocks disagree by more", function () {
        // The sweeper is 10 minutes slow: DynamoDB's Date is 10 minutes ahead of its clock.
        assert.deepEqual(sweepTime(T, T + 100, T + 600_000), {
            nowMs: T + 100 + 600_000 + 450,
            offsetMs: 600_450,
            serverTime: true,
        });
        // 10 minutes fast.
        assert.deepEqual(sweepTime(T, T, T - 600_000), {
            nowMs: T - 600_000 + 500,
            offsetMs: -599_500,
            serverTime: true,
        });
        // One millisecond past the tolerance, either way.
        assert.equal(sweepTime(T, T, T + SWEEPER_CLOCK_TOLERANCE_MS + 1).serverTime, true);
        assert.equal(sweepTime(T, T, T - SWEEPER_CLOCK_TOLERANCE_MS - 1_001).serverTime, true);
    });
});

describe("captureServerDate", function () {
    /** A command stand-in whose stack runs the one middleware over a canned response. */
    function commandAnswering(headers: Record<string, string> | undefined) {
        let added: ((next: () => Promise<unknown>) => () => Promise<unknown>) | undefined;
        let options: unknown;
        const command = {
            middlewareStack: {
                add(middleware: never, o: unknown) {
                    added = middleware;
                    options = o;
                },
            },
        };
        return {
            command,
            options: () => options,
            run: async () => added!(async () => ({ response: headers === undefined ? {} : { headers } }))(),
        };
    }

    it("records the answer's Date header in epoch ms, on the command's own stack (deserialize step)", async function () {
        const into = { dateMs: undefined as number | undefined };
        const c = commandAnswering({ date: "Mon, 01 Jun 2026 12:00:00 GMT" });
        assert.equal(captureServerDate(c.command, into), c.command);
        assert.deepEqual(c.options(), { step: "deserialize", name: "dynamodbOutboxServerDate" });
        await c.run();
        assert.equal(into.dateMs, T);
    });

    it("records nothing when the answer has no Date, or one that is not a date", async function () {
        for (const headers of [undefined, {}, { date: "not a date" }] as (Record<string, string> | undefined)[]) {
            const into = { dateMs: undefined as number | undefined };
            const c = commandAnswering(headers);
            captureServerDate(c.command, into);
            await c.run();
            assert.equal(into.dateMs, undefined, JSON.stringify(headers));
        }
    });
});
