/**
 * The bench's drain to each destination kind (dev/bench/drain-run.ts with dev/bench/drain-destination.ts): a small
 * backlog drained through the local mapping into our publisher, on the shared DynamoDB Local and the fault server, to
 * an SNS topic, an SQS queue and an EventBridge bus (the server's stand-in). The figures the bench reports are
 * checked for what they count (every record acknowledged once, the calls and entries per call the server saw, the
 * bus checks, the keyed order), never for speed; and the acknowledgements the bench reads from each kind's answer are checked on
 * hand-made answers, a refused entry among them.
 */
import * as assert from "node:assert/strict";
import { startAwsFaultServer, type AwsFaultServer } from "../../../dev/emulators/aws-fault-server";
import { BATCH_ACTIONS } from "../../../dev/bench/drain-destination";
import { runDrain } from "../../../dev/bench/drain-run";
import { acknowledgedIds } from "../../../dev/bench/relay-run";
import { dynamoEndpoint } from "../../support/dynamodb";

const MESSAGES = 120;

describe("bench drain to each destination kind", function () {
    this.timeout(120_000);
    let server: AwsFaultServer;
    beforeEach(async () => {
        server = await startAwsFaultServer();
    });
    afterEach(async () => {
        await server.stop();
    });

    for (const destination of ["sns", "sqs", "eventbridge"] as const) {
        for (const variant of ["standard", "keyed"] as const) {
            it(`${destination}, ${variant === "keyed" ? "keyed (10 keys)" : "keyless"}: every record acknowledged, calls and entries per call as the server saw them${variant === "keyed" ? ", no key out of order" : ""}`, async () => {
                const r = await runDrain({
                    kind: "ours",
                    variant,
                    destination,
                    endpoint: await dynamoEndpoint(),
                    sns: server,
                    messages: MESSAGES,
                    latencyMs: { dynamodb: 0, sns: 0 },
                    runId: `${Date.now().toString(36)}-${destination}-${variant}`,
                });
                assert.equal(r.destination, destination);
                assert.equal(r.messages, MESSAGES, "every record acknowledged");
                const calls = server.calls().filter((c) => c.action === BATCH_ACTIONS[destination]);
                assert.ok(calls.length > 0, `${BATCH_ACTIONS[destination]} calls were made`);
                assert.ok(
                    calls.every((c) => c.entries >= 1 && c.entries <= 10),
                    "at most 10 entries per call",
                );
                const entries = calls.reduce((sum, c) => sum + c.entries, 0);
                assert.equal(entries, MESSAGES, "each record sent once (no fault was injected)");
                assert.equal(r.entriesPerCall, Math.round((entries / calls.length) * 100) / 100);
                assert.equal(r.destinationCallsPerMessage, Math.round((calls.length / MESSAGES) * 1000) / 1000);
                assert.equal(r.snsCallsPerMessage > 0, destination === "sns");
                const checks = server.calls().filter((c) => c.action === "DescribeEventBus").length;
                assert.equal(checks, destination === "eventbridge" ? 1 : 0, "one bus check for the one warm publisher");
                assert.equal(r.busChecksPerMessage, Math.round((checks / MESSAGES) * 10_000) / 10_000);
                assert.equal(r.inversions, variant === "keyed" ? 0 : undefined);
                // No other kind's batch call was made.
                for (const other of Object.values(BATCH_ACTIONS).filter((a) => a !== BATCH_ACTIONS[destination]))
                    assert.equal(server.calls().filter((c) => c.action === other).length, 0, other);
            });
        }
    }
});

describe("bench acknowledgements by kind", () => {
    it("reads the ids each kind's answer accepted, and leaves out a refused entry", () => {
        const attributes = (id: string) => ({ "outbox.id": { DataType: "String", StringValue: id } });
        assert.deepEqual(
            acknowledgedIds(
                "SendMessageBatchCommand",
                {
                    Entries: [
                        { Id: "0", MessageAttributes: attributes("a") },
                        { Id: "1", MessageAttributes: attributes("b") },
                    ],
                },
                { Successful: [{ Id: "1" }], Failed: [{ Id: "0", Code: "InternalError" }] },
            ),
            ["b"],
        );
        assert.deepEqual(
            acknowledgedIds(
                "PublishBatchCommand",
                { PublishBatchRequestEntries: [{ Id: "0", MessageAttributes: attributes("c") }] },
                { Successful: [{ Id: "0" }] },
            ),
            ["c"],
        );
        const detail = (id: string) => JSON.stringify({ outbox: { id, type: "T", headers: {} }, payload: {} });
        assert.deepEqual(
            acknowledgedIds(
                "PutEventsCommand",
                { Entries: [{ Detail: detail("d") }, { Detail: detail("e") }, { Detail: detail("f") }] },
                { Entries: [{ EventId: "1" }, { ErrorCode: "InternalFailure" }, { EventId: "3" }] },
            ),
            ["d", "f"],
        );
    });
});
