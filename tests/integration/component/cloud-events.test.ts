/**
 * The `cloudEvents` arg under Pulumi mocks: its `source` reaches both functions' environment as
 * `OUTBOX_CLOUDEVENTS_SOURCE` (an Output's resolved value too), whatever the destination, and nothing is set without
 * it; a value the runtime would refuse at cold start is refused before any resource is registered, naming the arg,
 * the value, what is allowed and the fix.
 */
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { Outbox, type OutboxArgs } from "../../../components/outbox";
import { ENV } from "../../../runtime/config";
import { recordedNamed } from "../../support/pulumi-mocks";
import { type BuiltOutbox, TYPE, buildOutbox, waitForRPCs } from "../../support/component-harness";

const ACCOUNT = "111111111111";
const QUEUE = `arn:aws:sqs:eu-west-1:${ACCOUNT}:orders-events`;
const BUS = `arn:aws:events:eu-west-1:${ACCOUNT}:event-bus/orders`;
const SOURCE = "https://orders.example.com/outbox";

/** Each function's environment variables. */
function environments(built: BuiltOutbox, name: string): Record<string, string>[] {
    return ["publisher", "sweeper"].map((fn) => built.one(TYPE.fn, `${name}-${fn}`).inputs.environment.variables);
}

describe("Outbox cloudEvents", () => {
    for (const [name, destination] of [
        ["cesns", {}],
        ["ceq", { queueArn: QUEUE }],
        ["cebus", { eventBusArn: BUS }],
    ] as const) {
        it(`${name}: sets OUTBOX_CLOUDEVENTS_SOURCE on the publisher and the sweeper`, async () => {
            const built = await buildOutbox(name, { ...destination, cloudEvents: { source: SOURCE } });
            for (const env of environments(built, name)) assert.equal(env[ENV.cloudEventsSource], SOURCE);
        });
    }

    it("takes the source as an Output, and sets nothing without cloudEvents", async () => {
        const out = await buildOutbox("ceout", { cloudEvents: { source: pulumi.output("urn:example:orders") } });
        for (const env of environments(out, "ceout")) assert.equal(env[ENV.cloudEventsSource], "urn:example:orders");
        const off = await buildOutbox("ceoff", {});
        for (const env of environments(off, "ceoff")) assert.ok(!(ENV.cloudEventsSource in env));
    });

    it("refuses a source that is no URI-reference, and a cloudEvents that is no object, before any resource is registered", async () => {
        const cases: [string, OutboxArgs, RegExp][] = [
            [
                "cebada",
                { cloudEvents: { source: "orders events" } },
                /args\.cloudEvents\.source is "orders events"; allowed: a CloudEvents source: a non-empty URI-reference \(RFC 3986\).*holds " " at index 6.*fix: name where the events come from as a URI, e\.g\. "https:\/\/orders\.example\.com"/s,
            ],
            [
                "cebadb",
                { cloudEvents: { source: "" } },
                /args\.cloudEvents\.source is "".*is 0 characters long: 1 to 1024 are taken/s,
            ],
            [
                "cebadc",
                { cloudEvents: "https://x" as unknown as OutboxArgs["cloudEvents"] },
                /args\.cloudEvents is "https:\/\/x"; allowed: an object with a source/s,
            ],
            [
                "cebadd",
                { cloudEvents: pulumi.output({ source: SOURCE }) as unknown as OutboxArgs["cloudEvents"] },
                /args\.cloudEvents is an Output.*a plain object \(its source may be an Output\)/s,
            ],
        ];
        for (const [name, args, pattern] of cases) {
            assert.throws(
                () => new Outbox(name, args),
                (e: any) => e.code === "INVALID_CONFIG" && pattern.test(e.message),
                name,
            );
        }
        await waitForRPCs();
        assert.deepEqual(
            cases.flatMap(([name]) => recordedNamed(name).map((r) => r.name)),
            [],
        );
    });
});
