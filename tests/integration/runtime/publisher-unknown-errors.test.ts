/**
 * The stream publisher when DynamoDB answers with an error the store does not recognize (issue 34): it is not
 * transient, yet the relay neither holds the record forever nor acknowledges it unsent. DynamoDB Local never
 * answers with an unknown error, so the one client call that fails is a FAKE: a wrapper around the real DynamoDB
 * Local client that throws an SDK-shaped `SerializationException` on the completion update; every other call is real.
 */
import assert from "node:assert/strict";
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import type { ClientLike } from "../../../runtime/ports";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { closeAfterEach } from "../../support/runtime/relay-fixtures";

/** The real client, except that each UpdateItem throws an unknown client-fault error while `failing` is on. */
function unknownErrorOnUpdates(real: ClientLike): ClientLike & { failing: boolean; thrown: number } {
    const wrapper = {
        failing: true,
        thrown: 0,
        async send(command: object): Promise<unknown> {
            if (wrapper.failing && command instanceof UpdateItemCommand) {
                wrapper.thrown += 1;
                throw Object.assign(new Error("Unexpected token in the request body"), {
                    name: "SerializationException",
                    $fault: "client",
                    $metadata: { httpStatusCode: 400 },
                });
            }
            return real.send(command as never);
        },
    };
    return wrapper;
}

describe("createPublisher on an AWS error the store does not recognize (DynamoDB Local + a faulting wrapper)", function () {
    let h: Harness;
    closeAfterEach(() => h);

    it("fails the record, not transient and named, leaves it pending (never acknowledged unsent), and a later delivery completes it", async function () {
        h = await createHarness();
        const { messageIds } = await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
        const event = await h.streamEvent();
        const faulty = unknownErrorOnUpdates(h.ddb as unknown as ClientLike);
        const lines: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
        const log =
            (level: string) =>
            (message: string, attributes: Record<string, unknown> = {}) =>
                lines.push({ level, message, attributes });
        const logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
        // The record fails (Lambda retries it, bounded by the mapping's retry attempts, then the sweeper has it).
        assert.deepEqual(await h.publisher({ dynamodb: faulty as never, logger })(event), {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        assert.ok(faulty.thrown > 0, "the fault was injected");
        const named = lines.filter((l) => JSON.stringify(l).includes("SerializationException"));
        assert.ok(named.length > 0, `a log line names the unknown error: ${JSON.stringify(lines)}`);
        assert.match(
            String(named[0]!.attributes.error),
            /does not recognize: SerializationException; not one AWS documents as retryable/,
        );
        const [record] = await h.records();
        assert.equal(record?.status, "pending");
        faulty.failing = false;
        assert.deepEqual(await h.publisher({ dynamodb: faulty as never })(event), { batchItemFailures: [] });
        assert.deepEqual(
            (await h.records()).map((r) => [r.recordId, r.status]),
            [[messageIds[0], "completed"]],
        );
    });
});
