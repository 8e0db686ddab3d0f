/**
 * The opt-in CloudEvents format, its pure parts: the body each destination sends with it on and, pinned byte for
 * byte, with it off; the `source` check; the extension names against the spec's rule, as the `cloudevents` SDK
 * enforces it; the inbox's reading of an outbox's CloudEvent in its three wrappings, and its refusal of a foreign
 * one; and a property: whatever id, type, payload, headers, trace context and source the writer and the component
 * take, the body is a valid CloudEvent to the SDK and reads back through the inbox's format as it was written. The
 * batch calls go to a recording client (no I/O); the same against local SNS, SQS and the EventBridge stand-in, with
 * the inbox applying each event once, are in tests/integration/relay/cloud-events.test.ts.
 */
import assert from "node:assert/strict";
import { CloudEvent, HTTP } from "cloudevents";
import fc from "fast-check";
import { readHandlerEnvironment, ENV } from "../../../runtime/config";
import {
    CLOUDEVENT_EXTENSION_NAME,
    CLOUDEVENT_EXTENSIONS,
    CLOUDEVENT_RESERVED_NAMES,
    cloudEventBody,
    cloudEventsSourceProblem,
    cloudEventsWriter,
} from "../../../runtime/destination/cloud-events";
import { createDestination, type DestinationConfig } from "../../../runtime/destination/create";
import { publisherLambdaFactory } from "../../../runtime/relay/lambda";
import { isOutboxError } from "../../../runtime/errors";
import { CLOUDEVENTS_DELIVERY } from "../../../runtime/inbox/cloud-event-delivery";
import { parseDelivery } from "../../../runtime/inbox/delivery-formats";
import type { LambdaSqsRecord } from "../../../runtime/inbox/sqs-event";
import type { ClientLike } from "../../../runtime/ports";
import { headerNameProblem, unsendableCharacter, type OutboundMessage } from "../../../runtime/record/message";
import { exampleArns } from "../../support/arns";
import { outboundMessage } from "../../support/outbound-message";
import { schemaVersionProblem } from "../../../runtime/record/typed-events";

const { topic: TOPIC, fifoQueue: QUEUE } = exampleArns("events");
const BUS = exampleArns("orders").bus;
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACESTATE = "congo=t61rcWkgMzE";
const SOURCE = "https://orders.example.com/outbox";

/** A message with every field the outbox carries. */
const FULL: OutboundMessage = outboundMessage({
    id: "01JCLOUDEVENTS0000000000001",
    type: "OrderPlaced",
    partition: "ORDER#1",
    orderingKey: "customer-7",
    source: "orders",
    body: '{"orderId":"o-1","total":12345678901234567890,"ratio":1.0}',
    headers: { tenant: "acme", "X-Request.Id": "r-1" },
    traceparent: TRACEPARENT,
    tracestate: TRACESTATE,
    createdAt: Date.UTC(2026, 11, 5, 23, 50, 0, 123),
});

/** A client that records each command's input and answers every entry as accepted. */
function recordingClient(): { client: ClientLike; inputs: Record<string, unknown>[] } {
    const inputs: Record<string, unknown>[] = [];
    const client: ClientLike = {
        send: async (command: object) => {
            const input = (command as { input: Record<string, unknown> }).input;
            inputs.push(JSON.parse(JSON.stringify(input)) as Record<string, unknown>);
            if ("Entries" in input && !("QueueUrl" in input))
                return { FailedEntryCount: 0, Entries: [{ EventId: "e-0" }] };
            return { Successful: [{ Id: "0", MessageId: "m-0" }], Failed: [] };
        },
    };
    return { client, inputs };
}

/** The request entry one destination of `config` sends for `message`. */
async function sentEntry(
    config: Partial<DestinationConfig>,
    message: OutboundMessage,
    outboxSource?: string,
): Promise<Record<string, unknown>> {
    const { client, inputs } = recordingClient();
    const destination = createDestination(
        { sqs: client, sns: client, eventBridge: client, ...config } as DestinationConfig,
        "createPublisher",
        outboxSource,
    );
    assert.deepEqual(await destination.sendCall([message]), [
        { ok: true, messageId: config.eventBusArn !== undefined ? "e-0" : "m-0" },
    ]);
    const input = inputs[0]!;
    const entries = (input.PublishBatchRequestEntries ?? input.Entries) as Record<string, unknown>[];
    return entries[0]!;
}

const DESTINATIONS = {
    sns: { topicArn: TOPIC },
    sqs: { queueArn: QUEUE, fifo: true },
    eventbridge: { eventBusArn: BUS },
} as const satisfies Record<string, Partial<DestinationConfig>>;

/** A structured CloudEvent as the SDK's HTTP binding reads it, then validated strictly. */
function sdkEvent(body: string): CloudEvent<unknown> {
    const event = HTTP.toEvent({
        headers: { "content-type": "application/cloudevents+json" },
        body,
    }) as CloudEvent<unknown>;
    assert.equal(event.validate(), true);
    // Strict construction checks what validate() does not: each extension's name and value.
    return new CloudEvent<unknown>(JSON.parse(body) as Record<string, unknown> & { type: string; source: string });
}

function sqsRecord(body: string, attributes: LambdaSqsRecord["messageAttributes"] = {}): LambdaSqsRecord {
    return { messageId: "m-1", body, messageAttributes: attributes, eventSource: "aws:sqs" } as LambdaSqsRecord;
}

describe("CloudEvents, opt in", function () {
    describe("with the setting off, each destination sends today's bytes", function () {
        // Pinned literally: a change to any of them changes what every consumer of the default format receives.
        it("SNS: the payload as the Message, the outbox's attributes", async function () {
            assert.equal(
                JSON.stringify(await sentEntry(DESTINATIONS.sns, FULL)),
                '{"Id":"0","Message":"{\\"orderId\\":\\"o-1\\",\\"total\\":12345678901234567890,\\"ratio\\":1.0}","MessageAttributes":{"outbox.id":{"DataType":"String","StringValue":"01JCLOUDEVENTS0000000000001"},"outbox.type":{"DataType":"String","StringValue":"OrderPlaced"},"outbox.source":{"DataType":"String","StringValue":"orders"},"traceparent":{"DataType":"String","StringValue":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"tracestate":{"DataType":"String","StringValue":"congo=t61rcWkgMzE"},"tenant":{"DataType":"String","StringValue":"acme"},"X-Request.Id":{"DataType":"String","StringValue":"r-1"}}}',
            );
        });
        it("SQS (FIFO): the payload as the body, the attributes, the group and the deduplication id", async function () {
            assert.equal(
                JSON.stringify(await sentEntry(DESTINATIONS.sqs, FULL)),
                '{"Id":"0","MessageBody":"{\\"orderId\\":\\"o-1\\",\\"total\\":12345678901234567890,\\"ratio\\":1.0}","MessageAttributes":{"outbox.id":{"DataType":"String","StringValue":"01JCLOUDEVENTS0000000000001"},"outbox.type":{"DataType":"String","StringValue":"OrderPlaced"},"outbox.source":{"DataType":"String","StringValue":"orders"},"traceparent":{"DataType":"String","StringValue":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"tracestate":{"DataType":"String","StringValue":"congo=t61rcWkgMzE"},"tenant":{"DataType":"String","StringValue":"acme"},"X-Request.Id":{"DataType":"String","StringValue":"r-1"}},"MessageGroupId":"customer-7","MessageDeduplicationId":"01JCLOUDEVENTS0000000000001"}',
            );
        });
        it("EventBridge: Source, DetailType, and {outbox, payload} as the Detail", async function () {
            assert.equal(
                JSON.stringify(await sentEntry(DESTINATIONS.eventbridge, FULL)),
                '{"EventBusName":"arn:aws:events:us-east-1:111111111111:event-bus/orders","Source":"dynamodb-outbox","DetailType":"OrderPlaced","Detail":"{\\"outbox\\":{\\"id\\":\\"01JCLOUDEVENTS0000000000001\\",\\"type\\":\\"OrderPlaced\\",\\"source\\":\\"orders\\",\\"headers\\":{\\"tenant\\":\\"acme\\",\\"X-Request.Id\\":\\"r-1\\"},\\"traceparent\\":\\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\\",\\"tracestate\\":\\"congo=t61rcWkgMzE\\"},\\"payload\\":{\\"orderId\\":\\"o-1\\",\\"total\\":12345678901234567890,\\"ratio\\":1.0}}"}',
            );
        });
    });

    describe("with it on", function () {
        const on = { cloudEvents: { source: SOURCE } };
        const EXPECTED_BODY =
            '{"specversion":"1.0","id":"01JCLOUDEVENTS0000000000001","source":"https://orders.example.com/outbox","type":"OrderPlaced","time":"2026-12-05T23:50:00.123Z","datacontenttype":"application/json","outboxsource":"orders","partitionkey":"customer-7","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"congo=t61rcWkgMzE","outboxheaders":"{\\"tenant\\":\\"acme\\",\\"X-Request.Id\\":\\"r-1\\"}","data":{"orderId":"o-1","total":12345678901234567890,"ratio":1.0}}';

        /** The one message attribute SNS and SQS send with the format on. */
        const CONTENT_TYPE_ATTRIBUTE = {
            "content-type": { DataType: "String", StringValue: "application/cloudevents+json" },
        };

        it("SNS and SQS send the CloudEvent as the body, with content-type as the one attribute; FIFO ids unchanged", async function () {
            const sns = await sentEntry({ ...DESTINATIONS.sns, ...on }, FULL);
            assert.deepEqual(sns, {
                Id: "0",
                Message: EXPECTED_BODY,
                MessageAttributes: CONTENT_TYPE_ATTRIBUTE,
            });
            const sqs = await sentEntry({ ...DESTINATIONS.sqs, ...on }, FULL);
            assert.deepEqual(sqs, {
                Id: "0",
                MessageBody: EXPECTED_BODY,
                MessageAttributes: CONTENT_TYPE_ATTRIBUTE,
                MessageGroupId: "customer-7",
                MessageDeduplicationId: "01JCLOUDEVENTS0000000000001",
            });
        });

        it("EventBridge sends it as the Detail, Source and DetailType as they were", async function () {
            const entry = await sentEntry({ ...DESTINATIONS.eventbridge, ...on }, FULL);
            assert.deepEqual(entry, {
                EventBusName: BUS,
                Source: "dynamodb-outbox",
                DetailType: "OrderPlaced",
                Detail: EXPECTED_BODY,
            });
        });

        it("is a valid CloudEvent to the cloudevents SDK, with the outbox's fields where the module says", function () {
            const event = sdkEvent(EXPECTED_BODY);
            assert.equal(event.specversion, "1.0");
            assert.equal(event.id, FULL.id);
            assert.equal(event.source, SOURCE);
            assert.equal(event.type, "OrderPlaced");
            assert.equal(event.time, "2026-12-05T23:50:00.123Z");
            assert.equal(event.datacontenttype, "application/json");
            assert.equal(event.traceparent, TRACEPARENT);
            assert.equal(event.tracestate, TRACESTATE);
            assert.equal(event.partitionkey, "customer-7");
            assert.equal(event.outboxsource, "orders");
            assert.deepEqual(JSON.parse(event.outboxheaders as string), { tenant: "acme", "X-Request.Id": "r-1" });
            assert.equal((event.data as { orderId: string }).orderId, "o-1");
        });

        it("stamps the relay's source as outboxsource when the message carries none, and leaves out what is absent", function () {
            const bare = outboundMessage({ id: "a", type: "", body: "not json", createdAt: 0 });
            const body = cloudEventBody(bare, "/orders", "orders-table");
            assert.equal(
                body,
                '{"specversion":"1.0","id":"a","source":"/orders","type":"outbox.message","datacontenttype":"text/plain","outboxsource":"orders-table","data":"not json"}',
            );
            sdkEvent(body);
            assert.equal(
                cloudEventsWriter({ source: "/o" }, "test").size(bare),
                Buffer.byteLength(cloudEventBody(bare, "/o")) + 46,
            );
        });

        it("the redriven record's origin id is the event's id", function () {
            assert.match(
                cloudEventBody({ ...FULL, originId: "origin-1" }, SOURCE),
                /^\{"specversion":"1\.0","id":"origin-1",/,
            );
        });
    });

    describe("extension names", function () {
        it("are lowercase letters and digits, at most 20, none a context attribute's name: the SDK's strict mode takes them all", function () {
            for (const name of Object.values(CLOUDEVENT_EXTENSIONS)) {
                assert.match(name, CLOUDEVENT_EXTENSION_NAME, name);
                assert.ok(!(CLOUDEVENT_RESERVED_NAMES as readonly string[]).includes(name), name);
                // One extension at a time, so the SDK's refusal would name this one.
                new CloudEvent({ type: "t", source: "/s", [name]: "v" });
            }
        });

        it("the SDK refuses a header's name as an extension (a dot, a capital), so headers travel as one JSON extension", function () {
            assert.throws(
                () => new CloudEvent({ type: "t", source: "/s", "x-request.id": "r" }),
                /invalid extension name/,
            );
            assert.throws(() => new CloudEvent({ type: "t", source: "/s", Tenant: "acme" }), /invalid extension name/);
            // 21 characters: the spec's SHOULD, which the SDK does not enforce; none of ours comes near it.
            new CloudEvent({ type: "t", source: "/s", abcdefghijklmnopqrstu: "v" });
            assert.ok(Object.values(CLOUDEVENT_EXTENSIONS).every((n) => n.length <= 20));
            const headers = { "X-Request.Id": "r", ["h".repeat(200)]: "long name" };
            const event = sdkEvent(cloudEventBody(outboundMessage({ headers }), "/s", "o"));
            assert.deepEqual(JSON.parse(event.outboxheaders as string), headers);
        });
    });

    describe("the source", function () {
        it("takes a URI-reference, absolute or relative, as the SDK does", function () {
            for (const ok of [
                "https://orders.example.com/api?v=1#top",
                "urn:example:orders",
                "mailto:ops@example.com",
                "/orders",
                "orders",
                "orders/eu-west-1",
                "//example.com:8080/x",
                "https://user@example.com/a%20b",
                "1-555-123-4567",
                "/a:b",
                "a:",
                "./a:b?q=1/2#f/g?",
            ]) {
                assert.equal(cloudEventsSourceProblem(ok), undefined, ok);
                sdkEvent(cloudEventBody(FULL, ok));
            }
        });

        it("refuses what is not one, saying why", function () {
            const notUri = /is not a URI-reference \(RFC 3986\)/;
            for (const [bad, why] of [
                ["", /is 0 characters long: 1 to 1024 are taken/],
                [" orders", /holds " " at index 0: percent-encode it/],
                ["orders events", /holds " " at index 6/],
                ["https://example.com/ä", /holds "ä" at index 20/],
                ['/a"b', /holds "\\"" at index 2/],
                ["a%zz", notUri],
                ["1:orders", notUri],
                ["http://[::1]/orders", /holds "\[" at index 7.*an IP-literal host is not taken/],
                ["http://example.com:80x/", notUri],
                ["/f#a#b", notUri],
                ["x".repeat(1025), /is 1025 characters long/],
                [42, /is number, not a string/],
                [undefined, /is undefined, not a string/],
            ] as const) {
                assert.match(cloudEventsSourceProblem(bad) ?? "(taken)", why, String(bad));
            }
        });

        it("a handler's cloudEvents setting is refused with INVALID_CONFIG naming the value, what is allowed and the fix", function () {
            const client = recordingClient().client;
            for (const [cloudEvents, pattern] of [
                [
                    { source: "orders events" },
                    /createPublisher: cloudEvents\.source \(OUTBOX_CLOUDEVENTS_SOURCE\) "orders events" holds " " at index 6.*give a URI-reference \(RFC 3986\), e\.g\. \{ source: "https:\/\/orders\.example\.com" \}/,
                ],
                [{}, /cloudEvents\.source \(OUTBOX_CLOUDEVENTS_SOURCE\) undefined is undefined, not a string/],
                ["https://x", /cloudEvents\.source \(OUTBOX_CLOUDEVENTS_SOURCE\) undefined is not in an object/],
                [null, /cloudEvents\.source \(OUTBOX_CLOUDEVENTS_SOURCE\) undefined is undefined, not a string/],
            ] as const) {
                assert.throws(
                    () =>
                        createDestination(
                            { sqs: client, topicArn: TOPIC, sns: client, cloudEvents } as unknown as DestinationConfig,
                            "createPublisher",
                        ),
                    (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && pattern.test(err.message),
                    JSON.stringify(cloudEvents),
                );
            }
        });

        it("OUTBOX_CLOUDEVENTS_SOURCE is read, and a publisher's cold start refuses a bad one naming it", function () {
            const env = {
                AWS_REGION: "us-east-1",
                [ENV.tableName]: "orders-outbox",
                [ENV.topicArn]: TOPIC,
                [ENV.dlqUrl]: "https://sqs.us-east-1.amazonaws.com/111111111111/dlq",
            };
            assert.equal(readHandlerEnvironment(env).cloudEventsSource, undefined);
            assert.equal(
                readHandlerEnvironment({ ...env, [ENV.cloudEventsSource]: " urn:x:y " }).cloudEventsSource,
                "urn:x:y",
            );
            const saved = { ...process.env };
            try {
                Object.assign(process.env, env, { [ENV.cloudEventsSource]: "a b" });
                assert.throws(
                    () => publisherLambdaFactory(),
                    (err: unknown) =>
                        isOutboxError(err, "INVALID_CONFIG") &&
                        /cloudEvents\.source \(OUTBOX_CLOUDEVENTS_SOURCE\) "a b" holds " " at index 1/.test(
                            err.message,
                        ),
                );
                process.env[ENV.cloudEventsSource] = "urn:example:orders";
                assert.equal(typeof publisherLambdaFactory(), "function");
            } finally {
                for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
                Object.assign(process.env, saved);
            }
        });
    });

    describe("the inbox reads it back", function () {
        const body = cloudEventBody(FULL, SOURCE);
        const expected = {
            outboxId: FULL.id,
            source: "orders",
            type: "OrderPlaced",
            headers: { tenant: "acme", "X-Request.Id": "r-1" },
            traceparent: TRACEPARENT,
            tracestate: TRACESTATE,
            time: "2026-12-05T23:50:00.123Z",
            body: FULL.body,
        };

        it("as the body, as SNS's Message, and as a bus event's detail, the payload's own text", function () {
            const notification = JSON.stringify({
                Type: "Notification",
                MessageId: "n-1",
                TopicArn: TOPIC,
                Message: body,
                MessageAttributes: { "content-type": { Type: "String", Value: "application/cloudevents+json" } },
            });
            const busEvent = `{"version":"0","id":"e-1","detail-type":"OrderPlaced","source":"dynamodb-outbox","account":"111111111111","time":"2026-12-05T23:50:01Z","region":"us-east-1","resources":[],"detail":${body}}`;
            for (const wrapped of [body, notification, busEvent]) {
                assert.deepEqual(parseDelivery(sqsRecord(wrapped)), { message: expected, format: "cloudevents" });
            }
        });

        it("leaves the default format to its own readers, even when the payload holds a specversion", function () {
            const payload = '{"specversion":"1.0","id":"x","outboxsource":"y","type":"t","data":1}';
            const attributes = { "outbox.id": { dataType: "String", stringValue: "id-1" } };
            assert.equal(CLOUDEVENTS_DELIVERY.parse(sqsRecord(payload, attributes)), undefined);
            assert.equal(parseDelivery(sqsRecord(payload, attributes)).format, "message-attributes");
            const notification = JSON.stringify({
                Type: "Notification",
                TopicArn: TOPIC,
                Message: payload,
                MessageAttributes: { "outbox.id": { Type: "String", Value: "id-2" } },
            });
            assert.equal(parseDelivery(sqsRecord(notification)).format, "sns-envelope");
            const busEvent = `{"detail-type":"t","source":"s","detail":{"outbox":{"id":"id-3","type":"t","headers":{}},"payload":${payload}}}`;
            assert.equal(parseDelivery(sqsRecord(busEvent)).format, "eventbridge-envelope");
        });

        it("refuses, as poison naming why, a foreign producer's CloudEvent and one it cannot read", function () {
            const foreign = JSON.stringify({
                specversion: "1.0",
                id: "f-1",
                source: "/billing",
                type: "Paid",
                data: {},
            });
            for (const [record, why] of [
                [
                    foreign,
                    /SQS message m-1 \(cloudevents\): the body is a CloudEvent \(id "f-1", source "\/billing"\) without the outboxsource extension, so no outbox published it/,
                ],
                [
                    `{"detail-type":"Paid","source":"billing","detail":${foreign}}`,
                    /the EventBridge event's detail is a CloudEvent \(id "f-1".*without the outboxsource extension/,
                ],
                [
                    body.replace('"specversion":"1.0"', '"specversion":"0.3"'),
                    /specversion "0\.3"; the inbox reads CloudEvents 1\.0/,
                ],
                [body.replace(`"id":"${FULL.id}"`, '"id":""'), /a CloudEvent with no id string/],
                [
                    body.replace(/,"data":.*\}$/, ',"data_base64":"AA=="}'),
                    /no data member \(data_base64, binary data, is not an outbox payload\)/,
                ],
                [
                    JSON.stringify({ ...(JSON.parse(body) as object), outboxheaders: "[1]" }),
                    /outboxheaders extension is not the JSON text of an object/,
                ],
            ] as const) {
                assert.throws(
                    () => parseDelivery(sqsRecord(record)),
                    (err: unknown) => isOutboxError(err, "INVALID_PAYLOAD") && why.test(err.message),
                    record,
                );
            }
        });
    });

    describe("property", function () {
        const sendable = (s: string) => unsendableCharacter(s) === undefined;
        const text = (min: number, max: number) =>
            fc.string({ unit: "grapheme", minLength: min, maxLength: max }).filter(sendable);
        const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/);
        const source = fc
            .oneof(
                fc.webUrl({ withQueryParameters: true, withFragments: true }),
                fc.tuple(segment, segment).map(([a, b]) => `urn:${a.replace(/[^A-Za-z0-9]/g, "") || "x"}:${b}`),
                fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join("/")}`),
                fc.string({
                    unit: fc.constantFrom("a", "/", ":", "%20", "@", "!", "?", "#", "-", "9"),
                    minLength: 1,
                    maxLength: 20,
                }),
            )
            .filter((s) => cloudEventsSourceProblem(s) === undefined);
        const headerName = fc
            .stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,30}[A-Za-z0-9_-]$/)
            .filter((n) => headerNameProblem(n) === undefined);
        const message = fc.record({
            id: text(1, 40),
            type: text(1, 128),
            payload: fc.jsonValue(),
            headers: fc.dictionary(headerName, text(0, 20), { maxKeys: 5 }),
            orderingKey: fc.option(fc.stringMatching(/^[!-~]{1,20}$/), { nil: undefined }),
            trace: fc.option(
                fc
                    .tuple(fc.stringMatching(/^[0-9a-f]{32}$/), fc.stringMatching(/^[0-9a-f]{16}$/))
                    .filter(([t, p]) => !/^0+$/.test(t) && !/^0+$/.test(p)),
                { nil: undefined },
            ),
            createdAt: fc.integer({ min: 1, max: Date.UTC(9999, 0) }),
            outboxSource: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,40}$/),
            schemaVersion: fc.option(
                fc.stringMatching(/^[A-Za-z0-9._+-]{1,64}$/).filter((v) => schemaVersionProblem(v) === undefined),
                { nil: undefined },
            ),
        });

        it("whatever the writer and the component take, the body is a valid CloudEvent to the SDK and reads back through the inbox as written", function () {
            fc.assert(
                fc.property(message, source, (m, ceSource) => {
                    const outbound = outboundMessage({
                        id: m.id,
                        type: m.type,
                        body: JSON.stringify(m.payload),
                        headers: m.headers,
                        ...(m.orderingKey !== undefined ? { orderingKey: m.orderingKey } : {}),
                        ...(m.trace !== undefined ? { traceparent: `00-${m.trace[0]}-${m.trace[1]}-01` } : {}),
                        createdAt: m.createdAt,
                        source: m.outboxSource,
                        ...(m.schemaVersion !== undefined ? { schemaVersion: m.schemaVersion } : {}),
                    });
                    const body = cloudEventBody(outbound, ceSource);
                    const event = sdkEvent(body);
                    assert.equal(event.id, m.id);
                    assert.equal(event.source, ceSource);
                    assert.equal(event.type, m.type);
                    assert.deepEqual(event.data, JSON.parse(JSON.stringify(m.payload)));
                    const { message: read } = parseDelivery(sqsRecord(body));
                    assert.deepEqual(read, {
                        outboxId: m.id,
                        source: m.outboxSource,
                        type: m.type,
                        headers: { ...m.headers },
                        ...(m.trace !== undefined ? { traceparent: outbound.traceparent } : {}),
                        time: new Date(m.createdAt).toISOString(),
                        ...(m.schemaVersion !== undefined ? { schemaVersion: m.schemaVersion } : {}),
                        body: outbound.body,
                    });
                }),
                { numRuns: 300 },
            );
        });
    });
});
