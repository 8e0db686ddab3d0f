/**
 * DLQ redrive on DynamoDB Local and fauxqs (a local SNS + SQS): records the real publisher dead-lettered are
 * written back as fresh records with their partition, ordering key, type, headers, trace context and payload, deleted from the DLQ
 * only after the write committed, idempotently on the original record id; then the publisher delivers them.
 * The failing DynamoDB and SQS clients are fakes wrapping the real ones (neither emulator fails on demand).
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { isOutboxError } from "../../../runtime/errors";
import { deadLetterMessage, outboundMessage } from "../../../runtime/record/message";
import { redriveRecordId } from "../../../runtime/record/redrive-id";
import { parseDeadLetter, redriveDeadLetters, type SqsClientLike } from "../../../runtime/writer/redrive";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { parseRedriveArgs } from "../../../cli/redrive/args";
import { redriveSummary, runRedrive } from "../../../cli/redrive/redrive";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { topicPublisher } from "../../support/runtime/relay";
import { createOutboxTable, scanRecords } from "../../support/runtime/table";
import { faultyDynamoClient } from "../../support/faults/faulty-dynamodb";
import { drainOutboxStream } from "../../support/stream-table";

/** An SQS client whose first `failDeletes` DeleteMessage calls fail. A fake: fauxqs never fails a delete. */
function failingDeletes(inner: SqsClientLike, failDeletes: number): SqsClientLike {
    let left = failDeletes;
    return {
        async send(command) {
            if (command.constructor.name === "DeleteMessageCommand" && left > 0) {
                left -= 1;
                throw Object.assign(new Error("injected"), {
                    name: "InternalError",
                    $metadata: { httpStatusCode: 500 },
                });
            }
            return inner.send(command);
        },
    };
}

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("DLQ redrive (DynamoDB Local + fauxqs)", function () {
    this.timeout(120_000);
    let fauxqs: LocalFauxqs;
    let ddb: DynamoDBClient;
    let streams: DynamoDBStreamsClient;

    before(async function () {
        fauxqs = await startFauxqs();
        ddb = await dynamoClient();
        streams = new DynamoDBStreamsClient({
            endpoint: await dynamoEndpoint(),
            region: LOCAL_REGION,
            credentials: LOCAL_CREDENTIALS,
        });
    });
    after(async function () {
        streams?.destroy();
        await fauxqs?.stop();
    });

    /** A table, a topic with a raw subscriber queue, a DLQ, and the stream publisher driven by the local mapping. */
    async function world(name: string) {
        const tableName = await createOutboxTable(ddb, `redrive-${name}`);
        const topicArn = await fauxqs.createTopic(`redrive-${name}`);
        const subscriber = await fauxqs.createQueue(`redrive-${name}-subscriber`);
        await fauxqs.subscribe(topicArn, subscriber.queueArn);
        const dlq = await fauxqs.createQueue(`redrive-${name}-dlq`);
        const writer = new OutboxWriter({ client: ddb, tableName });
        const publisher = topicPublisher(ddb, fauxqs, tableName, topicArn, dlq.queueUrl);
        const relay = () => drainOutboxStream(ddb, tableName, publisher, { streamsClient: streams });
        /** `redriveDeadLetters` on this DLQ and writer, a 1 s visibility timeout; `over` replaces any option. */
        const redrive = (over: Partial<Parameters<typeof redriveDeadLetters>[0]> = {}) =>
            redriveDeadLetters({
                sqs: fauxqs.sqs,
                queueUrl: dlq.queueUrl,
                writer,
                visibilityTimeoutSeconds: 1,
                ...over,
            });
        return { tableName, topicArn, subscriber, dlq, writer, relay, redrive };
    }

    it("writes dead letters back with partition, ordering key, type, headers, trace context and payload; deletes them after the write; the publisher delivers them", async function () {
        const w = await world("loop");
        const now = Date.now();
        const { messageIds } = await w.writer.write({
            messages: [
                {
                    id: "acct#1%23-late",
                    partition: "ACCOUNT#1",
                    orderingKey: "acct-1",
                    type: "BalanceChanged",
                    payload: { n: 1, text: "é <&>" },
                    headers: { tenant: "acme" },
                    traceparent: TRACEPARENT,
                    tracestate: "congo=t61rcWkgMzE",
                    expiresAt: new Date(now),
                },
                { partition: "ORDER%9#x", type: "OrderUpdated", payload: [1, "two", null], expiresAt: new Date(now) },
            ],
        });
        await w.relay();
        const before = await scanRecords(ddb, w.tableName);
        assert.deepEqual(
            before.map((r) => r.status),
            ["expired", "expired"],
            "the publisher dead-lettered both",
        );
        // Two DLQ messages that are not outbox records: the mapping's on-failure metadata, and a stray text.
        await fauxqs.sqs.send(
            new SendMessageCommand({
                QueueUrl: w.dlq.queueUrl,
                MessageBody: JSON.stringify({ version: "1.0", DDBStreamBatchInfo: { shardId: "s", batchSize: 3 } }),
            }),
        );
        await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: w.dlq.queueUrl, MessageBody: "hello" }));

        const lines: string[] = [];
        const logger = {
            debug: () => undefined,
            info: (m: string, a?: object) => lines.push(m + JSON.stringify(a)),
            warn: (m: string, a?: object) => lines.push(m + JSON.stringify(a)),
            error: (m: string, a?: object) => lines.push(m + JSON.stringify(a)),
        };
        const result = await w.redrive({ logger });
        assert.deepEqual(
            { ...result, records: [...result.records].sort(), problems: result.problems.map((p) => p.problem).sort() },
            {
                received: 4,
                redriven: 2,
                alreadyRedriven: 0,
                notRedrivable: 2,
                failed: 0,
                // The new record is published under the dead-lettered record's identity (issue 33).
                records: messageIds.map((id) => [id, redriveRecordId(id), id] as const).sort(),
                problems: [
                    "it is the event source mapping's on-failure metadata, not a record: read the records by sequence number from the stream",
                    "the body is not JSON",
                ],
            },
        );
        assert.ok(!lines.join("\n").includes("é <&>"), "redrive logs carry ids, never payloads");

        const byId = new Map((await scanRecords(ddb, w.tableName)).map((r) => [r.recordId, r]));
        const first = byId.get("redrive.acct#1%23-late")!;
        assert.equal(first.status, "pending");
        assert.equal(first.partition, "ACCOUNT#1");
        assert.equal(first.orderingKey, "acct-1");
        assert.equal(first.envelope.subject, "BalanceChanged");
        assert.equal(first.envelope.payload, JSON.stringify({ n: 1, text: "é <&>" }));
        assert.equal(first.envelope.headers.tenant, "acme");
        assert.deepEqual(
            [first.envelope.headers.traceparent, first.envelope.headers.tracestate],
            [TRACEPARENT, "congo=t61rcWkgMzE"],
            "the trace context came through the DLQ",
        );
        assert.equal(first.expiresAt, 0, "an expired message does not come back expired");
        const second = byId.get(redriveRecordId(messageIds[1]!))!;
        assert.equal(second.partition, "ORDER%9#x");
        assert.equal(second.orderingKey, undefined);
        assert.equal(second.envelope.payload, JSON.stringify([1, "two", null]));

        await sleep(1_200);
        const left = await fauxqs.receiveAll(w.dlq.queueUrl, { delete: false });
        assert.deepEqual(
            left.map((m) => m.body).sort(),
            ["hello", JSON.stringify({ version: "1.0", DDBStreamBatchInfo: { shardId: "s", batchSize: 3 } })].sort(),
            "only what is not a record stays",
        );

        await w.relay();
        const delivered = await fauxqs.receiveAll(w.subscriber.queueUrl, { expected: 2 });
        // Published under the dead-lettered records' identity, not the new records' ids (issue 33).
        assert.deepEqual(delivered.map((m) => m.attributes["outbox.id"]).sort(), [...messageIds].sort());
        const one = delivered.find((m) => m.attributes["outbox.id"] === "acct#1%23-late")!;
        assert.equal(one.body, JSON.stringify({ n: 1, text: "é <&>" }));
        assert.equal(one.attributes.tenant, "acme");
        assert.equal(one.attributes["outbox.type"], "BalanceChanged");
        assert.deepEqual(
            [one.attributes.traceparent, one.attributes.tracestate],
            [TRACEPARENT, "congo=t61rcWkgMzE"],
            "and is published with the redriven record",
        );
        const other = delivered.find((m) => m !== one)!;
        assert.ok(!("traceparent" in other.attributes), "a record without one gets none");
    });

    it("is idempotent on the original record id: a duplicate dead letter and a failed delete write nothing twice", async function () {
        const w = await world("idem");
        await w.writer.write({
            messages: [
                { id: "m-1", partition: "P", orderingKey: "k", type: "T", payload: { a: 1 }, expiresAt: new Date() },
            ],
        });
        await w.relay();
        const [original] = await scanRecords(ddb, w.tableName);
        // The same record dead-lettered twice (e.g. by the publisher and the sweeper).
        const again = deadLetterMessage(outboundMessage(original!), { reason: "expired", at: Date.now() });
        await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: w.dlq.queueUrl, MessageBody: again.body }));

        // First run: the delete of the first message fails after the write committed.
        const first = await w.redrive({ sqs: failingDeletes(fauxqs.sqs, 1) });
        assert.equal(first.received, 2);
        assert.equal(first.redriven + first.alreadyRedriven, 1, "one write, the duplicate found it");
        assert.equal(first.failed, 1, "the failed delete is reported");
        assert.equal((await scanRecords(ddb, w.tableName)).filter((r) => r.recordId === "redrive.m-1").length, 1);

        await sleep(1_200);
        const second = await w.redrive();
        assert.deepEqual([second.received, second.redriven, second.alreadyRedriven, second.failed], [1, 0, 1, 0]);
        assert.equal(
            (await scanRecords(ddb, w.tableName)).length,
            2,
            "the original and one redriven record, nothing more",
        );
        await sleep(1_200);
        assert.deepEqual(await fauxqs.receiveAll(w.dlq.queueUrl, { delete: false }), [], "the DLQ is empty");
    });

    it("leaves a message in the DLQ when the write fails (fake throttling DynamoDB client), and writes nothing", async function () {
        const w = await world("fail");
        await w.writer.write({
            messages: [{ id: "m-2", partition: "P", type: "T", payload: 2, expiresAt: new Date() }],
        });
        await w.relay();
        const throttled = new OutboxWriter({
            client: faultyDynamoClient(ddb, { throttle: 1 }, 1) as unknown as DynamoDBClient,
            tableName: w.tableName,
        });
        const result = await w.redrive({ writer: throttled });
        assert.deepEqual([result.received, result.redriven, result.failed], [1, 0, 1]);
        assert.equal((await scanRecords(ddb, w.tableName)).length, 1, "only the original");
        await sleep(1_200);
        const dry = await w.redrive({ dryRun: true });
        assert.deepEqual([dry.received, dry.redriven, dry.records], [1, 1, [["m-2", "redrive.m-2", "m-2"]]]);
        assert.equal((await scanRecords(ddb, w.tableName)).length, 1, "a dry run writes nothing");
        await sleep(1_200);
        assert.equal((await fauxqs.receiveAll(w.dlq.queueUrl, { delete: false })).length, 1, "and deletes nothing");
    });

    it("reports a message OutboxWriter can never take once per run as not redrivable, with the reason, and leaves it in the DLQ instead of failing it on every run", async function () {
        const w = await world("never");
        const base = { type: "T", partition: "P", body: '{"n":1}', headers: {}, createdAt: Date.now(), expiresAt: 0 };
        const letter = (over: Partial<typeof base> & { id: string; orderingKey?: string }) =>
            deadLetterMessage({ ...base, ...over }, { reason: "publish-rejected", at: Date.now() }).body;
        const bodies: Record<string, string> = {
            reserved: letter({ id: "reserved", headers: { "x-bridge.tenant-id": "acme" } }),
            ffff: letter({ id: "ffff", type: "T\uffff" }),
            untyped: letter({ id: "untyped", type: "" }),
            crowded: letter({
                id: "crowded",
                headers: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`h${i}`, "v"])),
            }),
            numericKey: JSON.stringify({ ...JSON.parse(letter({ id: "numeric-key" })), orderingKey: 7 }),
            spaced: letter({ id: "GoBridge id 1" }),
            fine: letter({ id: "fine", orderingKey: "k" }),
        };
        for (const body of Object.values(bodies))
            await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: w.dlq.queueUrl, MessageBody: body }));

        // The first run outlives the visibility timeout, so the queue hands the left messages out again within it.
        let receives = 0;
        const slowReceives: SqsClientLike = {
            async send(command) {
                if (command.constructor.name === "ReceiveMessageCommand" && ++receives > 1) await sleep(1_200);
                return fauxqs.sqs.send(command as never);
            },
        };
        const first = await w.redrive({ sqs: slowReceives });
        assert.deepEqual(
            [first.received, first.redriven, first.notRedrivable, first.failed],
            [7, 2, 5, 0],
            JSON.stringify(first.problems),
        );
        assert.deepEqual(first.records.map(([original]) => original).sort(), ["GoBridge id 1", "fine"]);
        assert.match(
            first.records.find(([original]) => original === "GoBridge id 1")![1],
            /^redrive\.[0-9a-f]{64}$/,
            "an id with a space is redriven under its hash",
        );
        const why = new Map(first.problems.map((p) => [p.recordId ?? "", p.problem]));
        assert.deepEqual(
            [...why.keys()].sort(),
            ["crowded", "ffff", "numeric-key", "reserved", "untyped"],
            "each reported once",
        );
        assert.match(
            why.get("reserved")!,
            /^OutboxWriter refuses it: .*headers name "x-bridge\.tenant-id" is reserved.*; publish it by hand/,
        );
        assert.match(why.get("ffff")!, /^OutboxWriter refuses it: messages\[0\]\.type holds U\+FFFF at index 1/);
        assert.match(why.get("crowded")!, /headers has 9 entries; at most 7 fit/);
        assert.match(why.get("untyped")!, /^it has no type \(""\); OutboxWriter writes every record with one/);
        assert.match(
            why.get("numeric-key")!,
            /^its orderingKey is the number 7, not a non-empty string: .*would change the order it is delivered in/,
        );
        assert.ok(first.problems.every((p) => p.sqsMessageId !== ""));

        await sleep(1_200);
        const second = await w.redrive();
        assert.deepEqual(
            [second.received, second.redriven, second.alreadyRedriven, second.notRedrivable, second.failed],
            [5, 0, 0, 5, 0],
            "never failed: not redrivable, again once each",
        );
        await sleep(1_200);
        assert.equal((await fauxqs.receiveAll(w.dlq.queueUrl, { delete: false })).length, 5, "left in the DLQ");
    });

    it("dynamodb-outbox redrive: its clients reach the table and the DLQ through --endpoint and --sqs-endpoint", async function () {
        const w = await world("script");
        await w.writer.write({
            messages: [{ id: "m-3", partition: "P", type: "T", payload: { x: 1 }, expiresAt: new Date() }],
        });
        await w.relay();
        const lines: string[] = [];
        const env = {
            AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
            AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        };
        const args = parseRedriveArgs(
            [
                "--table",
                w.tableName,
                "--dlq-url",
                w.dlq.queueUrl,
                "--region",
                LOCAL_REGION,
                "--endpoint",
                await dynamoEndpoint(),
                "--sqs-endpoint",
                fauxqs.endpoint,
            ],
            {},
        );
        const result = await runRedrive(args, { env, stderr: (text) => lines.push(text) });
        assert.equal(
            redriveSummary(result, false),
            "redrive received 1 redriven 1 already-redriven 0 not-redrivable 0 failed 0",
        );
        assert.ok((await scanRecords(ddb, w.tableName)).some((r) => r.recordId === "redrive.m-3"));
        assert.ok(
            lines.some((l) => l.includes('"recordId":"m-3"')),
            "JSON log lines with ids",
        );
    });

    it("derives a deterministic id of at most 128 characters", function () {
        assert.equal(redriveRecordId("01J0ABC"), "redrive.01J0ABC");
        const long = "x".repeat(128);
        assert.equal(redriveRecordId(long), redriveRecordId(long));
        assert.match(redriveRecordId(long), /^redrive\.[0-9a-f]{64}$/);
        assert.notEqual(redriveRecordId(long), redriveRecordId(`${"x".repeat(127)}y`));
        for (const outside of ["a b", "é", "tab\t"])
            assert.match(
                redriveRecordId(outside),
                /^redrive\.[0-9a-f]{64}$/,
                `an id with ${JSON.stringify(outside)} gets the hash, which the writer takes`,
            );
    });

    it("says why a DLQ message is not redrivable", function () {
        const problem = (body: string | undefined) => (parseDeadLetter(body) as { problem: string }).problem;
        assert.match(problem("hello"), /not JSON/);
        assert.match(problem("[1]"), /not a JSON object/);
        assert.match(problem(JSON.stringify({ DDBStreamBatchInfo: {} })), /on-failure metadata/);
        assert.match(problem(JSON.stringify({ recordId: "a" })), /no recordId and partition/);
        assert.match(
            problem(JSON.stringify({ recordId: "a", partition: "P", body: "raw" })),
            /payload is kept as raw text/,
        );
        assert.match(
            problem(JSON.stringify({ recordId: "a", partition: "P", type: "T", payload: 1, headers: { n: 1 } })),
            /headers are not an object of strings/,
        );
        assert.match(problem(JSON.stringify({ recordId: "a", partition: "P", payload: 1 })), /no type \(absent\)/);
        assert.match(
            problem(JSON.stringify({ recordId: "a", partition: "P", type: 5, payload: 1 })),
            /no type \(the number 5\)/,
        );
        assert.match(
            problem(JSON.stringify({ recordId: "a", partition: "P", type: "T", orderingKey: "", payload: 1 })),
            /orderingKey is "", not a non-empty string/,
        );
        assert.match(
            problem(JSON.stringify({ recordId: "a", originId: 7, partition: "P", type: "T", payload: 1 })),
            /its originId is the number 7, not a non-empty string: redriving it would publish it under another identity/,
        );
        assert.deepEqual(
            parseDeadLetter(
                JSON.stringify({ recordId: "redrive.a", originId: "a", partition: "P", type: "T", payload: 1 }),
            ),
            { recordId: "redrive.a", originId: "a", partition: "P", type: "T", headers: {}, payload: 1 },
            "a redriven record's dead letter keeps the event's identity",
        );
    });

    it("rejects bad options and flags with INVALID_CONFIG naming them", async function () {
        const writer = new OutboxWriter({ client: ddb, tableName: "t" });
        const cases: [object, RegExp][] = [
            [{ sqs: {}, queueUrl: "u", writer }, /sqs must be an SQSClient/],
            [{ sqs: fauxqs.sqs, queueUrl: "", writer }, /queueUrl must be the DLQ URL .* got ""/],
            [{ sqs: fauxqs.sqs, queueUrl: "u", writer: {} }, /writer must be an OutboxWriter/],
            [
                { sqs: fauxqs.sqs, queueUrl: "u", writer, maxMessages: 0 },
                /maxMessages is 0; expected an integer from 1 to 1000000/,
            ],
            [{ sqs: fauxqs.sqs, queueUrl: "u", writer, expiresAt: new Date("x") }, /expiresAt must be a valid Date/],
        ];
        for (const [options, pattern] of cases) {
            await assert.rejects(
                redriveDeadLetters(options as never),
                (e: unknown) => isOutboxError(e, "INVALID_CONFIG") && pattern.test((e as Error).message),
            );
        }
        const u = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq";
        assert.deepEqual(
            parseRedriveArgs(["--table", "t", `--dlq-url=${u}`, "--max", "5", "--dry-run", "--expires-in", "60"], {}),
            {
                table: "t",
                dlqUrl: u,
                max: 5,
                expiresInSeconds: 60,
                fifo: false,
                dryRun: true,
                timeoutMs: 3_600_000,
                json: false,
                help: false,
            },
        );
        assert.equal(parseRedriveArgs([], { OUTBOX_TABLE_NAME: "t", OUTBOX_DLQ_URL: u }).table, "t");
        assert.throws(
            () => parseRedriveArgs(["--dlq-url", u], {}),
            /--table is ""; expected the outbox table's name; pass --table or set OUTBOX_TABLE_NAME/,
        );
        assert.throws(
            () => parseRedriveArgs(["--table", "t", "--dlq-url", u, "--max", "lots"], {}),
            /--max is "lots"; expected an integer from 1 to 1000000/,
        );
        assert.throws(
            () => parseRedriveArgs(["--tabel", "t"], {}),
            (e: unknown) => isOutboxError(e, "INVALID_CONFIG") && /--tabel is "--tabel"/.test((e as Error).message),
        );
        assert.equal(
            redriveSummary(
                {
                    received: 3,
                    redriven: 1,
                    alreadyRedriven: 1,
                    notRedrivable: 1,
                    failed: 0,
                    records: [],
                    problems: [],
                },
                false,
            ),
            "redrive received 3 redriven 1 already-redriven 1 not-redrivable 1 failed 0",
        );
    });
});
