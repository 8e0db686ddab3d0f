/**
 * The fault server's EventBridge stand-in, driven through the real @aws-sdk/client-eventbridge: PutEvents on the
 * default and created buses, EventBridge's validation, per-entry and whole-call faults, and a bus routed to a
 * queue read with the real SQSClient.
 */
import assert from "node:assert/strict";
import {
    AccessDeniedException,
    DescribeEventBusCommand,
    EventBridgeServiceException,
    InternalException,
    PutEventsCommand,
    ResourceNotFoundException,
    ThrottlingException,
    type PutEventsRequestEntry,
} from "@aws-sdk/client-eventbridge";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { faultServerEach } from "../../support/fault-server";

const MiB = 1_048_576;

const event = (i: number, extra: Partial<PutEventsRequestEntry> = {}): PutEventsRequestEntry => ({
    Source: "app.orders",
    DetailType: "OrderPlaced",
    Detail: JSON.stringify({ orderId: i }),
    ...extra,
});

describe("AWS fault server: EventBridge PutEvents, through the real AWS SDK", () => {
    const each = faultServerEach();

    it("accepts events on the default bus and a created one (by name or ARN), EventIds aligned with the entries", async () => {
        const arn = each.server.createEventBus("orders");
        assert.equal(arn, "arn:aws:events:us-east-1:000000000000:event-bus/orders");
        const out = await each.events.send(
            new PutEventsCommand({
                Entries: [event(0), event(1, { EventBusName: "orders" }), event(2, { EventBusName: arn })],
            }),
        );
        assert.equal(out.FailedEntryCount, 0);
        const ids = out.Entries?.map((e) => e.EventId) ?? [];
        assert.equal(new Set(ids).size, 3);
        assert.deepEqual(each.server.busEvents("default"), [
            {
                service: "events",
                destination: "arn:aws:events:us-east-1:000000000000:event-bus/default",
                destinationName: "default",
                messageId: ids[0],
                body: '{"orderId":0}',
                attributes: {},
                source: "app.orders",
                detailType: "OrderPlaced",
                action: "PutEvents",
                callNumber: 1,
                acknowledged: true,
            },
        ]);
        assert.deepEqual(
            each.server.busEvents(arn).map((m) => [m.messageId, m.body, m.destinationName]),
            [
                [ids[1], '{"orderId":1}', "orders"],
                [ids[2], '{"orderId":2}', "orders"],
            ],
        );
        assert.deepEqual(each.server.busEvents("orders"), each.server.busEvents(arn));
        assert.deepEqual(each.server.calls(), [{ callNumber: 1, action: "PutEvents", entries: 3, outcome: "ok" }]);
    });

    it("an entry fault in the middle fails that entry alone: FailedEntryCount, ErrorCode at its position", async () => {
        each.server.setFaults({
            entries: [
                { when: () => true, code: "NotForPutEvents" },
                { actions: ["PutEvents"], when: (e) => e.index === 1 },
                {
                    actions: ["PutEvents"],
                    when: (e) => e.body.includes('"orderId":3'),
                    code: "ThrottlingException",
                    message: "slow",
                },
            ],
        });
        const out = await each.events.send(new PutEventsCommand({ Entries: [0, 1, 2, 3].map((i) => event(i)) }));
        assert.equal(out.FailedEntryCount, 2);
        assert.deepEqual(
            out.Entries?.map((e) => (e.EventId === undefined ? [e.ErrorCode, e.ErrorMessage] : "ok")),
            ["ok", ["InternalFailure", "injected failure"], "ok", ["ThrottlingException", "slow"]],
        );
        assert.deepEqual(
            each.server.busEvents("default").map((m) => [m.messageId, m.body]),
            [
                [out.Entries?.[0]?.EventId, '{"orderId":0}'],
                [out.Entries?.[2]?.EventId, '{"orderId":2}'],
            ],
        );
        assert.equal(each.server.calls().at(-1)?.outcome, "partial");
    });

    describe("validates entries as EventBridge does: the bad entry fails, the others go on (HTTP 200)", () => {
        const cases: [string, PutEventsRequestEntry, string][] = [
            ["no Source", { DetailType: "T", Detail: "{}" }, "InvalidArgument"],
            ["an empty Source", { Source: "", DetailType: "T", Detail: "{}" }, "InvalidArgument"],
            ["no DetailType", { Source: "s", Detail: "{}" }, "InvalidArgument"],
            ["no Detail", { Source: "s", DetailType: "T" }, "InvalidArgument"],
            ["a Detail that is an array", event(0, { Detail: "[1]" }), "MalformedDetail"],
            ["a Detail that is a string", event(0, { Detail: '"text"' }), "MalformedDetail"],
            ["a Detail that is null", event(0, { Detail: "null" }), "MalformedDetail"],
            ["a Detail that is not JSON", event(0, { Detail: "{oops" }), "MalformedDetail"],
            ["an aws. Source", event(0, { Source: "aws.s3" }), "NotAuthorizedForSourceException"],
            ["a Source of 257 characters", event(0, { Source: "s".repeat(257) }), "InvalidArgument"],
            ["a DetailType of 129 characters", event(0, { DetailType: "t".repeat(129) }), "InvalidArgument"],
        ];
        for (const [name, bad, code] of cases) {
            it(name, async () => {
                const out = await each.events.send(new PutEventsCommand({ Entries: [event(0), bad, event(2)] }));
                assert.equal(out.FailedEntryCount, 1);
                assert.ok(out.Entries?.[0]?.EventId && out.Entries?.[2]?.EventId);
                assert.equal(out.Entries?.[1]?.ErrorCode, code);
                assert.equal(out.Entries?.[1]?.EventId, undefined);
                assert.equal(each.server.busEvents("default").length, 2);
            });
        }
        it("the longest Source (256) and DetailType (128) pass", async () => {
            const out = await each.events.send(
                new PutEventsCommand({ Entries: [event(0, { Source: "s".repeat(256), DetailType: "t".repeat(128) })] }),
            );
            assert.equal(out.FailedEntryCount, 0);
        });
        it("a request in which no entry has Source, DetailType and Detail fails every entry, still HTTP 200", async () => {
            const out = await each.events.send(
                new PutEventsCommand({ Entries: [{ Source: "s", DetailType: "T" }, { Detail: "{}" }] }),
            );
            assert.equal(out.FailedEntryCount, 2);
            assert.deepEqual(
                out.Entries?.map((e) => e.ErrorMessage),
                [
                    "Parameter Detail is not valid. Reason: Detail is a required argument.",
                    "Parameter Source is not valid. Reason: Source is a required argument.",
                ],
            );
        });
    });

    describe("refuses a whole request with ValidationException, accepting nothing", () => {
        // An entry's size: 14 bytes for a Time, the UTF-8 bytes of Source, DetailType, Detail and each resource.
        const EVENT_SIZE = "app.orders".length + "OrderPlaced".length + '{"orderId":0}'.length;
        const sized = (total: number, withTime = false): PutEventsRequestEntry => {
            const fixed = "app.orders".length + "OrderPlaced".length + Buffer.byteLength("é") + (withTime ? 14 : 0);
            return {
                Source: "app.orders",
                DetailType: "OrderPlaced",
                Resources: ["é"],
                Detail: JSON.stringify({ pad: "x".repeat(total - fixed - '{"pad":""}'.length) }),
                ...(withTime ? { Time: new Date("2026-01-01T00:00:00Z") } : {}),
            };
        };
        const cases: [string, () => PutEventsRequestEntry[]][] = [
            ["11 entries", () => Array.from({ length: 11 }, (_, i) => event(i))],
            ["no entry", () => []],
            ["1 MB + 1 byte in all", () => [event(0), sized(MiB - EVENT_SIZE + 1)]],
            [
                "1 MB + 1 byte once the 14 bytes of a Time count",
                () => [{ ...sized(MiB - 13), Time: new Date("2026-01-01T00:00:00Z") }],
            ],
        ];
        for (const [name, entries] of cases) {
            it(name, async () => {
                await assert.rejects(
                    each.events.send(new PutEventsCommand({ Entries: entries() })),
                    (err: unknown) =>
                        err instanceof EventBridgeServiceException &&
                        err.name === "ValidationException" &&
                        err.$metadata.httpStatusCode === 400,
                );
                assert.equal(each.server.messages().length, 0);
            });
        }
        it("accepts 1 MB exactly, Time and resources counted", async () => {
            const out = await each.events.send(
                new PutEventsCommand({ Entries: [event(0), sized(MiB - EVENT_SIZE, true)] }),
            );
            assert.equal(out.FailedEntryCount, 0);
            const alone = await each.events.send(new PutEventsCommand({ Entries: [sized(MiB - 13)] }));
            assert.equal(alone.FailedEntryCount, 0);
        });
    });

    it("an unknown bus: the entry is accepted with an EventId and dropped, as AWS does", async () => {
        const queueUrl = each.server.createQueue("watch");
        each.server.routeBusToQueue("default", "watch");
        const out = await each.events.send(
            new PutEventsCommand({
                Entries: [
                    event(0, { EventBusName: "nope" }),
                    event(1, { EventBusName: "arn:aws:events:us-east-1:000000000000:event-bus/gone" }),
                ],
            }),
        );
        assert.equal(out.FailedEntryCount, 0);
        assert.ok(out.Entries?.every((e) => typeof e.EventId === "string"));
        assert.deepEqual(each.server.messages(), [], "not recorded on any bus, not routed");
        assert.deepEqual(each.server.queueMessages(queueUrl), []);
    });

    it("DescribeEventBus answers a bus by name or ARN, and ResourceNotFoundException for one that does not exist", async () => {
        const arn = each.server.createEventBus("orders");
        for (const name of ["orders", arn]) {
            const out = await each.events.send(new DescribeEventBusCommand({ Name: name }));
            assert.deepEqual([out.Name, out.Arn], ["orders", arn], name);
        }
        assert.equal((await each.events.send(new DescribeEventBusCommand({}))).Name, "default");
        await assert.rejects(
            each.events.send(
                new DescribeEventBusCommand({ Name: "arn:aws:events:us-east-1:000000000000:event-bus/gone" }),
            ),
            (err: unknown) => err instanceof ResourceNotFoundException && /gone does not exist/.test(err.message),
        );
    });

    describe("whole-call faults by code arrive as the SDK's error names", () => {
        const cases: [string, number, (err: unknown) => boolean][] = [
            ["ThrottlingException", 400, (e) => e instanceof ThrottlingException],
            ["InternalException", 500, (e) => e instanceof InternalException && e.$fault === "server"],
            ["ResourceNotFoundException", 400, (e) => e instanceof ResourceNotFoundException],
            ["AccessDeniedException", 400, (e) => e instanceof AccessDeniedException],
        ];
        for (const [code, status, check] of cases) {
            it(`${code} (${status})`, async () => {
                each.server.setFaults({ calls: [{ kind: "Error", code, status, actions: ["PutEvents"], times: 1 }] });
                await assert.rejects(
                    each.events.send(new PutEventsCommand({ Entries: [event(0)] })),
                    (err: unknown) =>
                        check(err) &&
                        (err as EventBridgeServiceException).name === code &&
                        (err as EventBridgeServiceException).$metadata.httpStatusCode === status,
                );
                assert.equal(each.server.busEvents("default").length, 0, "nothing accepted");
                assert.equal(each.server.calls().at(-1)?.outcome, code);
                await each.events.send(new PutEventsCommand({ Entries: [event(1)] }));
                assert.equal(each.server.busEvents("default").length, 1, "times: 1 fired once");
            });
        }
        it("a rule without PutEvents in its actions leaves PutEvents alone; a named kind answers in JSON 1.1", async () => {
            each.server.setFaults({ calls: [{ kind: "Error", code: "ThrottlingException", status: 400 }] });
            await each.events.send(new PutEventsCommand({ Entries: [event(0)] }));
            each.server.setFaults({ calls: [{ kind: "InternalError", actions: ["PutEvents"] }] });
            await assert.rejects(
                each.events.send(new PutEventsCommand({ Entries: [event(1)] })),
                (err: unknown) => err instanceof EventBridgeServiceException && err.name === "InternalError",
            );
            assert.equal(each.server.busEvents("default").length, 1);
        });
        it("accept then reset: the event is recorded unacknowledged, routed copy included", async () => {
            each.server.createQueue("copies");
            each.server.routeBusToQueue("default", "copies");
            each.server.setFaults({ calls: [{ kind: "AcceptThenReset", actions: ["PutEvents"], times: 1 }] });
            await assert.rejects(each.events.send(new PutEventsCommand({ Entries: [event(0)] })));
            assert.deepEqual(
                each.server.messages().map((m) => [m.service, m.destinationName, m.acknowledged]),
                [
                    ["events", "default", false],
                    ["sqs", "copies", false],
                ],
            );
        });
    });

    describe("routing a bus to a queue", () => {
        it("enqueues each accepted event as its envelope, the detail parsed equal to what was put", async () => {
            const busArn = each.server.createEventBus("orders");
            const queueUrl = each.server.createQueue("orders-consumer");
            each.server.routeBusToQueue(busArn, "orders-consumer");
            const detail = { orderId: 7, lines: [{ sku: "a", qty: 2 }], note: "é\u{1F600}", big: 1 };
            const out = await each.events.send(
                new PutEventsCommand({
                    Entries: [
                        event(0, { EventBusName: "orders", Detail: JSON.stringify(detail) }),
                        event(1, {
                            EventBusName: "orders",
                            Time: new Date("2026-12-02T05:04:15.123Z"),
                            Resources: ["arn:aws:s3:::bucket"],
                        }),
                        event(2, { EventBusName: "orders", Source: "aws.nope" }),
                        event(3),
                    ],
                }),
            );
            assert.equal(out.FailedEntryCount, 1);
            const received = await each.sqs.send(
                new ReceiveMessageCommand({
                    QueueUrl: queueUrl,
                    MaxNumberOfMessages: 10,
                    MessageAttributeNames: ["All"],
                }),
            );
            assert.equal(received.Messages?.length, 2, "the failed entry and the default bus's event are not routed");
            const [first, second] = (received.Messages ?? []).map((m) => {
                assert.equal(m.MessageAttributes, undefined);
                return JSON.parse(m.Body as string) as Record<string, unknown>;
            });
            assert.deepEqual(Object.keys(first ?? {}), [
                "version",
                "id",
                "detail-type",
                "source",
                "account",
                "time",
                "region",
                "resources",
                "detail",
            ]);
            assert.deepEqual(first?.detail, detail);
            assert.equal(first?.id, out.Entries?.[0]?.EventId);
            assert.equal(first?.version, "0");
            assert.equal(first?.["detail-type"], "OrderPlaced");
            assert.equal(first?.source, "app.orders");
            assert.equal(first?.account, "000000000000");
            assert.equal(first?.region, "us-east-1");
            assert.deepEqual(first?.resources, []);
            assert.match(String(first?.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
            assert.equal(second?.time, "2026-12-02T05:04:15Z");
            assert.deepEqual(second?.resources, ["arn:aws:s3:::bucket"]);
            assert.deepEqual(
                each.server.queueMessages(queueUrl).map((m) => [m.service, m.action, m.body]),
                (received.Messages ?? []).map((m) => ["sqs", "PutEvents", m.Body]),
            );
        });

        it("refuses an unknown bus or queue, or a FIFO queue", () => {
            each.server.createQueue("q");
            each.server.createQueue("q.fifo");
            assert.throws(() => each.server.routeBusToQueue("nope", "q"), /no event bus nope/);
            assert.throws(() => each.server.routeBusToQueue("default", "nope"), /no queue nope/);
            assert.throws(() => each.server.routeBusToQueue("default", "q.fifo"), /FIFO/);
        });

        it("reset() forgets bus events and routed copies, and keeps the bus and the route", async () => {
            const queueUrl = each.server.createQueue("q");
            each.server.routeBusToQueue("default", "q");
            await each.events.send(new PutEventsCommand({ Entries: [event(0)] }));
            each.server.reset();
            assert.deepEqual(each.server.messages(), []);
            const none = await each.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
            assert.equal(none.Messages, undefined);
            await each.events.send(new PutEventsCommand({ Entries: [event(1)] }));
            assert.equal(each.server.busEvents("default").length, 1);
            assert.equal(each.server.queueMessages("q").length, 1);
        });
    });
});
