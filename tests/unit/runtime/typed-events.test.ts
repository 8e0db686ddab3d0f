/**
 * Typed events without I/O. The type tests are the functions below: `npm run typecheck` (`tsc -p tests`, part of
 * `npm test`) compiles them, and each `@ts-expect-error` line fails the typecheck if its line compiles (an unused
 * directive is an error). They are never called. Then the pure checks: schema versions, issue paths, the options.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { OutboxWriter, type OutboxMessage, type WriterMessage } from "../../../runtime/writer/writer";
import {
    createInboxHandler,
    type InboxMessage,
    type TypedInboxMessage,
    type InboxConsumer,
} from "../../../runtime/inbox/handler";
import type { Inbox } from "../../../runtime/inbox/inbox";
import { eventDetail, type OutboxEventDetail } from "../../../runtime/destination/event-detail";
import {
    attributeBudgetOverrun,
    deadLetterMessage,
    headerNameProblem,
    messageAttributes,
    SCHEMA_VERSION_HEADER,
    schemaVersionHeader,
    userHeaders,
} from "../../../runtime/record/message";
import { parseDeadLetter } from "../../../runtime/writer/redrive";
import { outboundMessage as testOutbound } from "../../support/outbound-message";
import {
    issuePath,
    payloadRefusal,
    schemaVersionProblem,
    typedEventRules,
    type StandardSchemaV1,
} from "../../../runtime/record/typed-events";

/** The event map the type tests use. */
interface OrderEvents {
    OrderPlaced: { orderId: string; total: number };
    OrderCancelled: { orderId: string; reason?: string };
}

/** `true` only when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(proof: Same<A, B>): Same<A, B> => proof;

/** The writer, typed: a payload is checked against its type, and an unknown type is refused. Compiled, never run. */
export async function writerTypes(client: DynamoDBClient): Promise<void> {
    const writer = new OutboxWriter<OrderEvents>({ client, tableName: "orders-outbox" });
    await writer.write({
        messages: [
            { partition: "ORDER#1", type: "OrderPlaced", payload: { orderId: "o-1", total: 42 } },
            { partition: "ORDER#1", type: "OrderCancelled", payload: { orderId: "o-1" }, schemaVersion: "2" },
        ],
    });
    await writer.write({
        // @ts-expect-error a payload of the wrong type: total is a number
        messages: [{ partition: "ORDER#1", type: "OrderPlaced", payload: { orderId: "o-1", total: "42" } }],
    });
    await writer.write({
        // @ts-expect-error a payload missing a field its type requires
        messages: [{ partition: "ORDER#1", type: "OrderPlaced", payload: { orderId: "o-1" } }],
    });
    await writer.write({
        // @ts-expect-error an unknown type
        messages: [{ partition: "ORDER#1", type: "OrderShipped", payload: { orderId: "o-1" } }],
    });
    // The validators are typed by the map: a schema whose output is not the type's payload is refused.
    new OutboxWriter<OrderEvents>({
        client,
        tableName: "orders-outbox",
        validators: { OrderPlaced: z.object({ orderId: z.string(), total: z.number() }) },
        schemaVersions: { OrderPlaced: "2" },
    });
    new OutboxWriter<OrderEvents>({
        client,
        tableName: "orders-outbox",
        // @ts-expect-error the schema's output (total: string) is not OrderPlaced's payload
        validators: { OrderPlaced: z.object({ orderId: z.string(), total: z.string() }) },
    });
    new OutboxWriter<OrderEvents>({
        client,
        tableName: "orders-outbox",
        // @ts-expect-error a version for a type the map does not have
        schemaVersions: { OrderShipped: "1" },
    });
}

/** The untyped writer and inbox compile as they did: any type, any payload, `payload: unknown`. Compiled, never run. */
export async function untypedTypes(client: DynamoDBClient, inbox: Inbox): Promise<void> {
    const writer = new OutboxWriter({ client, tableName: "orders-outbox" });
    const messages: OutboxMessage[] = [{ partition: "P", type: "Anything", payload: [1, "two"] }];
    await writer.write({ messages });
    same<WriterMessage, OutboxMessage>(true);
    same<TypedInboxMessage, InboxMessage>(true);
    const consume: InboxConsumer = (message) => {
        same<typeof message.payload, unknown>(true);
        return [];
    };
    createInboxHandler({ inbox, consume });
}

/** The inbox, typed: `consume` gets a union that narrows on `type`. Compiled, never run. */
export function inboxTypes(inbox: Inbox): void {
    createInboxHandler<OrderEvents>({
        inbox,
        validators: { OrderCancelled: z.object({ orderId: z.string(), reason: z.string().optional() }) },
        consume: (message) => {
            same<typeof message.type, "OrderPlaced" | "OrderCancelled">(true);
            if (message.type === "OrderPlaced") {
                same<typeof message.payload, { orderId: string; total: number }>(true);
                const total: number = message.payload.total;
                void total;
            } else {
                same<typeof message.payload, { orderId: string; reason?: string }>(true);
                // @ts-expect-error narrowed to OrderCancelled, whose payload has no total
                void message.payload.total;
            }
            const version: string | undefined = message.schemaVersion;
            void version;
            return { documentItems: [{ Put: { TableName: "billing", Item: { PK: message.payload.orderId } } }] };
        },
    });
    createInboxHandler<OrderEvents>({
        inbox,
        consume: (message) => {
            // @ts-expect-error a type the map does not have can never be the message's
            if (message.type === "OrderShipped") return [];
            return [];
        },
    });
}

describe("typed events: schema versions, issue paths and the options (no I/O)", () => {
    it("a schema version is 1 to 64 letters, digits, '.', '_', '-' or '+'; anything else says why", () => {
        for (const ok of ["1", "2.1.0", "v3", "2026-01-15", "1.0.0+build.7", "a_b", "x".repeat(64)])
            assert.equal(schemaVersionProblem(ok), undefined, ok);
        const refusals: [unknown, RegExp][] = [
            ["", /1 to 64 characters \(it is 0\)/],
            ["x".repeat(65), /1 to 64 characters \(it is 65\)/],
            ["1 0", /only letters, digits/],
            ["v#1", /only letters, digits/],
            ["é", /only letters, digits/],
            [2, /must be a string/],
        ];
        for (const [bad, why] of refusals) assert.match(schemaVersionProblem(bad) ?? "", why, String(bad));
    });

    it("names an issue's path from the payload's root, keys and segments alike", () => {
        assert.equal(issuePath(undefined), "$");
        assert.equal(issuePath(["items", 0, { key: "sku" }]), "$.items[0].sku");
    });

    it("refuses options that are not validators, a policy or versions (INVALID_CONFIG naming them)", () => {
        const cases: [Record<string, unknown>, RegExp][] = [
            [{ validators: { A: { parse: () => 1 } } }, /validators\["A"\] is not a Standard Schema/],
            [{ validators: 3 }, /validators must be an object of Standard Schemas/],
            [{ unvalidatedTypes: "drop" }, /unvalidatedTypes is "drop"; it must be "accept"/],
            [{ unvalidatedTypes: "refuse" }, /"refuse" without validators, which would refuse every event/],
            [{ schemaVersions: { A: "1 0" } }, /schemaVersions\["A"\] is "1 0"; a schema version may hold only/],
        ];
        for (const [options, message] of cases)
            assert.throws(
                () => typedEventRules("OutboxWriter", options),
                (err: Error & { code?: string }) => err.code === "INVALID_CONFIG" && message.test(err.message),
            );
    });

    it("awaits an asynchronous validator, and with unvalidatedTypes 'refuse' refuses a type it has none for", async () => {
        const asyncSchema: StandardSchemaV1<unknown, { n: number }> = {
            "~standard": {
                version: 1,
                vendor: "hand-made",
                validate: async (value) => {
                    await new Promise((resolve) => setImmediate(resolve));
                    return typeof (value as { n?: unknown })?.n === "number"
                        ? { value: value as { n: number } }
                        : { issues: [{ message: "n must be a number", path: [{ key: "n" }] }] };
                },
            },
        };
        const rules = typedEventRules("t", { validators: { A: asyncSchema }, unvalidatedTypes: "refuse" });
        assert.equal(await payloadRefusal(rules, "A", { n: 1 }), undefined);
        assert.deepEqual(await payloadRefusal(rules, "A", { n: "1" }), {
            path: "$.n",
            text: 'the payload of type "A" fails its hand-made schema at $.n: n must be a number',
        });
        assert.match((await payloadRefusal(rules, "B", {}))?.text ?? "", /type "B" has no validator/);
        const accepting = typedEventRules("t", { validators: { A: asyncSchema } });
        assert.equal(await payloadRefusal(accepting, "B", {}), undefined, "accept: a type without a validator passes");
    });
});

describe("the schema version on the way: attributes, the bus event, the DLQ and a redrive (no I/O)", () => {
    const message = testOutbound({ schemaVersion: "1.4.0", headers: { tenant: "acme" } });

    it("is the outbox.schema-version attribute, counted in the budget, and detail.outbox.schemaVersion on a bus", () => {
        assert.equal(messageAttributes(message)["outbox.schema-version"]?.StringValue, "1.4.0");
        assert.equal(messageAttributes(testOutbound())["outbox.schema-version"], undefined, "none without one");
        const crowded = testOutbound({
            schemaVersion: "2",
            source: "s",
            headers: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`h${i}`, "v"])),
        });
        assert.deepEqual(attributeBudgetOverrun(crowded)?.outbox, [
            "outbox.id",
            "outbox.type",
            "outbox.source",
            "outbox.schema-version",
        ]);
        assert.equal((JSON.parse(eventDetail(message)) as OutboxEventDetail).outbox.schemaVersion, "1.4.0");
    });

    it("is kept by the DLQ message and read back by the redrive's parser", () => {
        const dead = deadLetterMessage(message, { reason: "expired", at: 0 });
        assert.equal((JSON.parse(dead.body) as { schemaVersion?: string }).schemaVersion, "1.4.0");
        const parsed = parseDeadLetter(dead.body);
        assert.ok(!("problem" in parsed), JSON.stringify(parsed));
        assert.equal(parsed.schemaVersion, "1.4.0");
        const without = parseDeadLetter(deadLetterMessage(testOutbound(), { reason: "expired", at: 0 }).body);
        assert.ok(!("problem" in without) && without.schemaVersion === undefined);
    });

    it("is not a user header: the reserved envelope header goes to schemaVersion, never to headers", () => {
        const headers = { tenant: "acme", [SCHEMA_VERSION_HEADER]: "3" };
        assert.deepEqual(userHeaders(headers), { tenant: "acme" });
        assert.equal(schemaVersionHeader(headers), "3");
        assert.match(headerNameProblem("outbox.schema-version") ?? "", /is reserved/);
    });
});
