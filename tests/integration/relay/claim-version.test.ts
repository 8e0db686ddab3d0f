/**
 * The component's `claimVersion` arg reaching the Lambda code as it ships (issue 38 item 4). The Outbox is
 * declared under the Pulumi mocks; the publisher's and the sweeper's archives (`__index.js`) are loaded in sloppy
 * mode with the environment the component set (`OUTBOX_CLAIM_VERSION` among it), pointed at DynamoDB Local and the
 * fault server's SNS topic, and driven with the table's real stream records. Partition P was touched once by
 * another claimer of version 7 (an `OutboxStore` with the docs' example token): the default outbox (version 1)
 * reports P's doorbell and fails its sweep, with the error line on stdout; the outbox declared with
 * `claimVersion: 7` delivers P.
 */
import assert from "node:assert/strict";
import { ENV } from "../../../runtime/config";
import { OutboxStore } from "../../../runtime/store";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { TYPE, buildOutbox } from "../../support/component-harness";
import { localLambdaEnvironment, preserveEnvironment } from "../../support/local-environment";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { entryText, loadSerialized } from "../../support/serialized";
import { capturingStdout, HANDLER_ENVIRONMENT } from "../../support/writer/lambda-process";

type Publisher = (event: LambdaStreamEvent) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
type Sweeper = (event?: unknown) => Promise<{ published: number }>;

/** The serialized publisher and sweeper of an outbox declared with `args`, pointed at the harness's world. */
async function shippedHandlers(
    h: Harness,
    name: string,
    args: { claimVersion?: number },
): Promise<{ publisher: Publisher; sweeper: Sweeper; environment: Record<string, string> }> {
    const built = await buildOutbox(name, args);
    const load = async <T>(fn: "publisher" | "sweeper"): Promise<{ handler: T; env: Record<string, string> }> => {
        const resource = built.one(TYPE.fn, `${name}-${fn}`);
        const env = resource.inputs.environment.variables as Record<string, string>;
        Object.assign(
            process.env,
            await localLambdaEnvironment(
                env,
                { tableName: h.tableName, topicArn: h.topicArn, dlqUrl: h.dlqUrl },
                h.server.endpoint,
                { AWS_MAX_ATTEMPTS: "1", [ENV.sweepAfterSeconds]: "1" },
            ),
        );
        return { handler: loadSerialized<T>(await entryText(resource)), env };
    };
    const publisher = await load<Publisher>("publisher");
    const sweeper = await load<Sweeper>("sweeper");
    assert.equal(publisher.env[ENV.claimVersion], sweeper.env[ENV.claimVersion], "both functions share the version");
    return { publisher: publisher.handler, sweeper: sweeper.handler, environment: publisher.env };
}

/** Keyed records of P, touched once by a claimer of version 7; then the stream event. */
async function fencedP(h: Harness): Promise<{ ids: string[]; event: LambdaStreamEvent }> {
    const ids = (
        await h.writer.write({
            messages: [1, 2].map((n) => ({ partition: "P", type: "T", payload: { n }, orderingKey: "p" })),
        })
    ).messageIds;
    const other = new OutboxStore({ client: h.ddb, tableName: h.tableName });
    const token = { owner: "relay-1", version: 7n };
    const claimed = await other.claim("P", token, 1);
    await other.release(
        claimed.map((r) => r.recordId),
        token,
    );
    return { ids, event: await h.streamEvent() };
}

describe("the component's claimVersion in the serialized handlers (Pulumi mocks + DynamoDB Local + the fault server)", function () {
    this.timeout(120_000);
    let h: Harness;
    let restore: () => void;
    before(function () {
        restore = preserveEnvironment(HANDLER_ENVIRONMENT);
    });
    after(function () {
        restore();
    });
    afterEach(async function () {
        await h?.close();
    });

    it("by default (version 1) the shipped publisher reports P's doorbell and the shipped sweeper fails, each logging the partition, both versions and the fix", async function () {
        h = await createHarness();
        const { ids, event } = await fencedP(h);
        const { publisher, sweeper, environment } = await shippedHandlers(h, "cvdefault", {});
        assert.equal(environment[ENV.claimVersion], "1");

        const published = await capturingStdout(() => publisher(event));
        assert.deepEqual(published.result, {
            batchItemFailures: [{ itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber }],
        });
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        const swept = await capturingStdout(() => sweeper({}));
        assert.ok(
            swept.result instanceof Error && /the fence of partition P is at version 7/.test(swept.result.message),
        );
        for (const { lines } of [published, swept]) {
            const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
            assert.ok(
                parsed.some(
                    (l) =>
                        l.level === "error" &&
                        l.partition === "P" &&
                        l.claimVersion === "1" &&
                        l.fenceVersion === "7" &&
                        String(l.reason).includes("set claimVersion to at least 7"),
                ),
                lines.join("\n"),
            );
            assert.ok(
                parsed.some((l) => "_aws" in l && l.FencedPartitions === 1),
                "FencedPartitions in the EMF line",
            );
        }
        assert.deepEqual(
            (await h.records()).map((r) => r.status),
            ["pending", "pending"],
        );
        assert.equal(h.published().length, 0, `nothing of ${ids.join(", ")} published`);
    });

    it("with claimVersion: 7 the shipped publisher delivers P, in order", async function () {
        h = await createHarness();
        const { ids, event } = await fencedP(h);
        const { publisher, environment } = await shippedHandlers(h, "cvseven", { claimVersion: 7 });
        assert.equal(environment[ENV.claimVersion], "7");
        const { result } = await capturingStdout(() => publisher(event));
        assert.deepEqual(result, { batchItemFailures: [] });
        assert.deepEqual(
            h.published().map((m) => m.id),
            ids,
        );
        assert.deepEqual(
            (await h.records()).map((r) => r.status),
            ["completed", "completed"],
        );
    });
});
