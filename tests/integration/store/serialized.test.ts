/**
 * The store as Pulumi ships it: serialized BY VALUE into a Lambda's `__index.js`. Class fields, `#private` and
 * captured Map/Set serialize without error and then crash when the code runs (reference/test-infra.md §7), and a
 * type check cannot see it. This test serializes a handler that drives every store operation, loads the text the
 * way Lambda does, and runs it against DynamoDB Local.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import * as pulumi from "@pulumi/pulumi";
import * as assert from "node:assert/strict";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { OutboxStore } from "../../../runtime/store";
import { wrapAwsError } from "../../../runtime/store/aws-errors";
import { isOutboxError } from "../../../runtime/errors";
import { dynamoEndpoint, uniqueTableName } from "../../support/dynamodb";
import { loadSerialized } from "../../support/serialized";

interface Event {
    readonly endpoint: string;
    readonly tableName: string;
}

async function driveTheStore(event: Event): Promise<Record<string, unknown>> {
    const client = new DynamoDBClient({
        endpoint: event.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
    });
    try {
        const store = new OutboxStore({ client, tableName: event.tableName, staleClaimMs: 0, keyCacheSize: 4 });
        await store.createTable({ stream: false });
        const preflight = await store.preflight();
        const base = { bindingId: "b", address: "arn:aws:sns:us-east-1:000000000000:t" };
        const now = Date.UTC(2026, 0, 1);
        await store.persist([
            { ...base, partition: "P", recordId: "r1", envelope: { id: "e1", payload: '{"n":1}', createdAt: now } },
            { ...base, partition: "P", recordId: "r2", envelope: { id: "e2", payload: '{"n":2}', createdAt: now + 1 } },
            {
                ...base,
                partition: "K",
                recordId: "k1",
                orderingKey: "O",
                envelope: { id: "k1", payload: "{}", createdAt: now },
            },
            {
                ...base,
                partition: "K",
                recordId: "k2",
                orderingKey: "O",
                envelope: { id: "k2", payload: "{}", createdAt: now + 1 },
            },
            {
                ...base,
                partition: "X",
                recordId: "x1",
                envelope: { id: "x1", payload: "{}", createdAt: now, expiresAt: now + 10 },
            },
        ]);
        const token = { owner: "lambda", version: 1n };
        const claimed = await store.claim("P", token, 10);
        await store.complete(
            claimed.map((r) => r.recordId),
            token,
        );
        const keyed = await store.claim("K", token, 10);
        await store.release([keyed[1].recordId], token);
        const expired = await store.expire(now + 1000, "X", token);
        return {
            preflight,
            claimed: claimed.map((r) => r.envelopeId),
            keyed: keyed.map((r) => r.envelopeId),
            pendingK: await store.countPending("K"),
            claimedK: await store.countClaimed("K"),
            expired,
        };
    } finally {
        client.destroy();
    }
}

describe("the store serialized by value (as Pulumi ships it)", () => {
    it("loads and runs every operation from the serialized text", async function () {
        this.timeout(120_000);
        const serialized = await pulumi.runtime.serializeFunction(() => driveTheStore, {
            isFactoryFunction: true,
            exportName: "handler",
        });
        assert.doesNotMatch(
            serialized.text,
            /require\([^)]*runtime\//,
            "the store must travel by value, not as a require of the repo's runtime/",
        );
        const handler = loadSerialized<(event: Event) => Promise<Record<string, unknown>>>(serialized.text);
        const result = await handler({ endpoint: await dynamoEndpoint(), tableName: uniqueTableName("serialized") });
        assert.deepEqual(result, {
            preflight: "verified",
            claimed: ["e1", "e2"],
            keyed: ["k1", "k2"],
            pendingK: 1,
            claimedK: 1,
            expired: 1,
        });
    });

    it("wraps an AWS error it does not recognize, and one the SDK retries, from the serialized text", async function () {
        this.timeout(60_000);
        // A captured Set reached only on this path once crashed it with "Set.prototype.has called on incompatible
        // receiver" instead of the OutboxError: no store call against DynamoDB Local makes these errors.
        const wrapBoth = () => () =>
            ["WeirdException", "ThrottlingException"].map((name) => {
                const wrapped = wrapAwsError(Object.assign(new Error("odd"), { name }), "a call failed");
                return isOutboxError(wrapped) ? `${wrapped.code}:${wrapped.transient}` : String(wrapped);
            });
        const serialized = await pulumi.runtime.serializeFunction(wrapBoth, {
            isFactoryFunction: true,
            exportName: "handler",
        });
        assert.deepEqual(loadSerialized<() => string[]>(serialized.text)(), ["UNAVAILABLE:false", "THROTTLED:true"]);
    });
});
