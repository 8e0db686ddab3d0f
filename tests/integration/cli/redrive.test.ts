/**
 * `dynamodb-outbox redrive`, in-process through `main`: its flags (the failing ones exit 2 with the message and the
 * usage), its help, and a run against DynamoDB Local and fauxqs (a local SNS + SQS) that writes a dead letter back
 * as a fresh record and prints the summary line. The redrive itself is covered in tests/integration/faults/redrive.test.ts.
 */
import * as assert from "node:assert/strict";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { main } from "../../../cli/main";
import { parseRedriveArgs } from "../../../cli/redrive/args";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { createOutboxTable, scanRecords } from "../../support/runtime/table";
import { captureIo, LOCAL_ENV } from "../../support/cli";

async function redrive(argv: string[], env: Record<string, string> = { ...LOCAL_ENV }) {
    const io = captureIo(env);
    const code = await main(["redrive", ...argv], io);
    return { code, stdout: io.output(), stderr: io.errors() };
}

describe("cli: redrive", function () {
    this.timeout(120_000);

    it("prints its usage on --help and exits 0", async () => {
        const run = await redrive(["--help"]);
        assert.equal(run.code, 0);
        assert.match(run.stdout, /^Usage: dynamodb-outbox redrive --table <name> --dlq-url <url> \[options\]/);
        assert.match(run.stdout, /--dry-run/);
        assert.match(
            run.stdout,
            /exit codes: 0 every message received was handled, 1 a message failed or the redrive failed, 2 bad command line/,
        );
        assert.equal(run.stderr, "");
    });

    it("is listed in the top-level usage", async () => {
        const io = captureIo({});
        assert.equal(await main(["--help"], io), 0);
        assert.match(
            io.output(),
            /^usage: dynamodb-outbox <verify\|migrate\|doctor\|adopt> --table <name> \[flags\]\n {7}dynamodb-outbox redrive --table <name> --dlq-url <url> \[flags\]/,
        );
        assert.match(io.output(), /\n {2}redrive +move dead-lettered messages from the DLQ back into the outbox/);
    });

    const dlq = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq";
    const failing: [string, string[], Record<string, string>, RegExp][] = [
        [
            "no table",
            ["--dlq-url", dlq],
            {},
            /^redrive: --table is ""; expected the outbox table's name; pass --table or set OUTBOX_TABLE_NAME\n\nUsage: dynamodb-outbox redrive/,
        ],
        [
            "no DLQ URL",
            ["--table", "t"],
            {},
            /^redrive: --dlq-url is ""; expected the DLQ URL \(the Outbox component's dlqUrl output\); pass --dlq-url or set OUTBOX_DLQ_URL/,
        ],
        [
            "a bad --max",
            ["--table", "t", "--dlq-url", dlq, "--max", "lots"],
            {},
            /--max is "lots"; expected an integer from 1 to 1000000; omit it for 1000/,
        ],
        [
            "a hex --max",
            ["--table", "t", "--dlq-url", dlq, "--max", "0x10"],
            {},
            /^redrive: --max is "0x10"; expected an integer from 1 to 1000000; omit it for 1000\n/,
        ],
        [
            "a bad --expires-in",
            ["--table", "t", "--dlq-url", dlq, "--expires-in", "0"],
            {},
            /--expires-in is "0"; expected a whole number of seconds ≥ 1/,
        ],
        [
            "an --expires-in past any Date",
            ["--table", "t", "--dlq-url", dlq, "--expires-in", "1e15"],
            {},
            /^redrive: --expires-in is "1e15"; expected a whole number of seconds ≥ 1 and ≤ 31536000 \(365 days\); omit it for messages that never expire\n/,
        ],
        [
            "a --dlq-url that is not a URL",
            ["--table", "t", "--dlq-url", "not-a-url"],
            {},
            /^redrive: --dlq-url is "not-a-url"; expected the DLQ's URL \(the Outbox component's dlqUrl output\), but it is not an SQS queue URL; fix --dlq-url, e\.g\. https:\/\/sqs\.eu-west-1\.amazonaws\.com\/123456789012\/orders-dlq\n/,
        ],
        [
            "an OUTBOX_DLQ_URL that is not a URL",
            ["--table", "t"],
            { OUTBOX_DLQ_URL: "orders-dlq" },
            /^redrive: --dlq-url is "orders-dlq"; expected the DLQ's URL .*, but it is not an SQS queue URL; fix OUTBOX_DLQ_URL, e\.g\./,
        ],
        [
            "an --endpoint that is not a URL",
            ["--table", "t", "--dlq-url", dlq, "--endpoint", "127.0.0.1:8000"],
            {},
            /^redrive: --endpoint is "127\.0\.0\.1:8000"; expected an http:\/\/ or https:\/\/ URL, but it is (not a URL|a 127\.0\.0\.1 URL, not http or https); e\.g\. --endpoint http:\/\/127\.0\.0\.1:8000\n/,
        ],
        [
            "a --timeout of 1e308",
            ["--table", "t", "--dlq-url", dlq, "--timeout", "1e308"],
            {},
            /^redrive: --timeout is "1e308"; expected a positive number of seconds in plain digits, from 0\.001 to 86400; e\.g\. --timeout 600, or omit it for 3600\n/,
        ],
        ["an unknown flag", ["--tabel", "t"], {}, /--tabel is "--tabel"; expected one of --table/],
        ["a positional argument", ["now"], {}, /--\(positional\) is "now"; expected only --flags/],
        ["a flag without its value", ["--table"], {}, /--table is ""; expected a value; write --table <value>/],
        // util.parseArgs in strict mode: a boolean flag takes no value, and a value with one leading dash is written --flag=-value.
        [
            "a value on a boolean flag",
            ["--table", "t", "--dlq-url", dlq, "--fifo=false"],
            {},
            /^redrive: --fifo is "--fifo=false"; expected no value; write just --fifo\n/,
        ],
        [
            "a bad --max with a leading dash after a space (its own message)",
            ["--table", "t", "--dlq-url", dlq, "--max", "-5"],
            {},
            /^redrive: --max is "-5"; expected an integer from 1 to 1000000; omit it for 1000\n/,
        ],
        [
            "a good value with a leading dash after a space",
            ["--table", "-abc", "--dlq-url", dlq],
            {},
            /^redrive: --table is "-abc"; expected a value that does not read as a flag; if it is the value, write --table=-abc\n/,
        ],
        [
            "a one-letter flag",
            ["-h"],
            {},
            /^redrive: --\(positional\) is "-h"; expected only --flags; run with --help for the flags\n/,
        ],
        [
            "--, the end of the flags",
            ["--table", "t", "--dlq-url", dlq, "--"],
            {},
            /^redrive: -- is "--"; expected one of --table, /,
        ],
    ];
    for (const [name, argv, env, pattern] of failing) {
        it(`exits 2 with the message and the usage on ${name}`, async () => {
            const run = await redrive(argv, env);
            assert.equal(run.code, 2);
            assert.equal(run.stdout, "");
            assert.match(run.stderr, pattern);
            assert.match(run.stderr, /\n\nUsage: dynamodb-outbox redrive/);
        });
    }

    it("takes a value with a leading dash as --flag=-value", () => {
        assert.equal(parseRedriveArgs(["--table=-abc", "--dlq-url", dlq], {}).table, "-abc");
    });

    it("exits 2 when redrive does not come first, saying so", async () => {
        const io = captureIo({});
        assert.equal(await main(["--table", "orders", "redrive"], io), 2);
        assert.match(
            io.errors(),
            /^dynamodb-outbox: "redrive" must come first, before any flag: dynamodb-outbox redrive --table <name> --dlq-url <url>/,
        );
    });

    /** The DLQ body of a record of partition "P" that expired before it was published. */
    const expiredDeadLetter = (recordId: string, type: string, payload: unknown) =>
        JSON.stringify({ reason: "expired", recordId, partition: "P", type, headers: {}, payload });

    describe("against DynamoDB Local and fauxqs", () => {
        let fauxqs: LocalFauxqs;
        before(async () => {
            fauxqs = await startFauxqs();
        });
        after(async () => {
            await fauxqs?.stop();
        });

        it("reads the table and DLQ from the environment, writes the dead letter back, prints the summary, exits 0; and a dry run writes nothing", async () => {
            const ddb = await dynamoClient();
            const tableName = await createOutboxTable(ddb, "cli-redrive");
            const dlq = await fauxqs.createQueue(`cli-redrive-${Date.now()}`);
            const body = expiredDeadLetter("m-1", "T", { x: 1 });
            await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: dlq.queueUrl, MessageBody: body }));
            const env = { ...LOCAL_ENV, OUTBOX_TABLE_NAME: tableName, OUTBOX_DLQ_URL: dlq.queueUrl };
            const endpoints = ["--endpoint", await dynamoEndpoint(), "--sqs-endpoint", fauxqs.endpoint];

            // The dry run gets a queue of its own: its receive hides the message for the visibility timeout (60 s).
            const dryDlq = await fauxqs.createQueue(`cli-redrive-dry-${Date.now()}`);
            await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: dryDlq.queueUrl, MessageBody: body }));
            const dry = await redrive([...endpoints, "--dry-run", "--dlq-url", dryDlq.queueUrl], env);
            // One line per record, with the identity consumers see (issue 33), then the summary.
            assert.equal(
                dry.stdout,
                "would redrive m-1 as redrive.m-1 outbox.id m-1\nredrive (dry run) received 1 redriven 1 already-redriven 0 not-redrivable 0 failed 0\n",
                dry.stderr,
            );
            assert.equal(dry.code, 0);
            assert.deepEqual(await scanRecords(ddb, tableName), [], "a dry run writes nothing");

            const run = await redrive(endpoints, env);
            assert.equal(
                run.stdout,
                "redriven m-1 as redrive.m-1 outbox.id m-1\nredrive received 1 redriven 1 already-redriven 0 not-redrivable 0 failed 0\n",
                run.stderr,
            );
            assert.equal(run.code, 0);
            assert.ok(
                run.stderr.split("\n").some((l) => l.includes('"tool":"redrive"') && l.includes('"recordId":"m-1"')),
                `JSON log lines with ids on stderr: ${run.stderr}`,
            );
            assert.deepEqual(
                (await scanRecords(ddb, tableName)).map((r) => r.recordId),
                ["redrive.m-1"],
            );
            assert.equal((await fauxqs.receiveAll(dlq.queueUrl, { delete: false })).length, 0, "deleted from the DLQ");
        });

        it("--json prints one object on stdout (counts, records, the not-redrivable messages and why, endpoints), keeps the log lines on stderr, and exits 0", async () => {
            const ddb = await dynamoClient();
            const tableName = await createOutboxTable(ddb, "cli-redrive-json");
            const dlq = await fauxqs.createQueue(`cli-redrive-json-${Date.now()}`);
            const body = expiredDeadLetter("m-2", "T", { x: 2 });
            await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: dlq.queueUrl, MessageBody: body }));
            const stray = await fauxqs.sqs.send(
                new SendMessageCommand({
                    QueueUrl: dlq.queueUrl,
                    MessageBody: expiredDeadLetter("m-3", "", 3),
                }),
            );
            const endpoint = await dynamoEndpoint();
            const run = await redrive([
                "--table",
                tableName,
                "--dlq-url",
                dlq.queueUrl,
                "--endpoint",
                endpoint,
                "--sqs-endpoint",
                fauxqs.endpoint,
                "--json",
            ]);
            assert.equal(run.code, 0, run.stderr);
            const json = JSON.parse(run.stdout) as Record<string, unknown>;
            assert.equal(typeof json.durationMs, "number");
            assert.deepEqual(
                { ...json, durationMs: 0 },
                {
                    command: "redrive",
                    table: tableName,
                    dlqUrl: dlq.queueUrl,
                    endpoint,
                    sqsEndpoint: fauxqs.endpoint,
                    dryRun: false,
                    ok: true,
                    counts: { received: 2, redriven: 1, alreadyRedriven: 0, notRedrivable: 1, failed: 0 },
                    records: [{ originalId: "m-2", recordId: "redrive.m-2", outboxId: "m-2" }],
                    notRedrivable: [
                        {
                            sqsMessageId: stray.MessageId,
                            recordId: "m-3",
                            problem:
                                'it has no type (""); OutboxWriter writes every record with one: publish it by hand, or give it a type and send it again',
                        },
                    ],
                    durationMs: 0,
                },
            );
            assert.doesNotMatch(
                run.stdout,
                /^redrive received/m,
                "the summary line is the object's, not a second output",
            );
            assert.ok(
                run.stderr.split("\n").some((l) => l.includes('"tool":"redrive"') && l.includes('"recordId":"m-2"')),
                `JSON log lines on stderr: ${run.stderr}`,
            );
            assert.deepEqual(
                (await scanRecords(ddb, tableName)).map((r) => r.recordId),
                ["redrive.m-2"],
            );
        });

        it("exits 1 with 'redrive failed' and the cause when the DLQ does not exist", async () => {
            const run = await redrive([
                "--table",
                "t-missing",
                "--dlq-url",
                `${fauxqs.endpoint}/000000000000/no-such-queue`,
                "--sqs-endpoint",
                fauxqs.endpoint,
                "--endpoint",
                await dynamoEndpoint(),
            ]);
            assert.equal(run.code, 1, run.stderr);
            assert.equal(run.stdout, "");
            assert.match(
                run.stderr,
                new RegExp(
                    `^redrive failed: redrive: receiving from the DLQ failed: the queue does not exist at SQS at ${fauxqs.endpoint.replace(/\./g, "\\.")} \\((QueueDoesNotExist|AWS\\.SimpleQueueService\\.NonExistentQueue): [^)]+\\): check the DLQ URL \\(the Outbox component's dlqUrl output\\) and that it is in the region used\n$`,
                    "m",
                ),
            );
        });
    });
});
