import * as assert from "node:assert/strict";
import { parseArgs, usage } from "../../../cli/shared/args";
import { main } from "../../../cli/main";
import { isOutboxError } from "../../../runtime/errors";
import { captureIo } from "../../support/cli";

function usageErrorOf(argv: string[]): string {
    try {
        parseArgs(argv);
    } catch (err) {
        assert.ok(isOutboxError(err, "INVALID_CONFIG"), `expected INVALID_CONFIG, got ${String(err)}`);
        return err.message;
    }
    assert.fail(`parseArgs(${JSON.stringify(argv)}) accepted bad input`);
}

describe("cli: argument parsing", () => {
    it("reads --regions as the table's region names, split at commas", () => {
        assert.deepEqual(parseArgs(["verify", "--table", "tbl", "--regions", "us-east-1, us-west-2"]).regions, [
            "us-east-1",
            "us-west-2",
        ]);
    });

    it("parses a full verify command line, flags before or after the command, with = or a separate value", () => {
        const args = parseArgs([
            "--table=orders-outbox",
            "verify",
            "--region",
            "eu-west-1",
            "--endpoint",
            "http://127.0.0.1:8000",
            "--json",
            "--timeout",
            "30",
            "--poll-interval=0.5",
            "--expiry",
            "3",
            "--dlq-url",
            "https://sqs/q",
        ]);
        assert.deepEqual(args, {
            command: "verify",
            help: false,
            table: "orders-outbox",
            region: "eu-west-1",
            endpoint: "http://127.0.0.1:8000",
            json: true,
            timeoutMs: 30_000,
            pollIntervalMs: 500,
            expiryMs: 3_000,
            dlqUrl: "https://sqs/q",
            sqsEndpoint: undefined,
            apply: false,
            recreateClaimIndex: false,
            confirmTable: false,
            pageSize: undefined,
        });
    });

    it("takes --timeout on every command, in plain digits from 0.001 to 86400 seconds, URLs as they are, and a value with a leading dash as --flag=-value", () => {
        assert.equal(parseArgs(["doctor", "--table", "tbl", "--timeout", "5"]).timeoutMs, 5_000);
        assert.equal(parseArgs(["migrate", "--table", "tbl", "--timeout", "86400"]).timeoutMs, 86_400_000);
        assert.equal(parseArgs(["verify", "--table", "tbl", "--timeout", "0.001"]).timeoutMs, 1);
        assert.equal(parseArgs(["verify", "--table=-abc"]).table, "-abc");
        assert.equal(
            parseArgs(["verify", "--table", "tbl", "--endpoint", "https://dynamodb.eu-west-1.amazonaws.com"]).endpoint,
            "https://dynamodb.eu-west-1.amazonaws.com",
        );
        const emulatorQueue = "http://sqs.us-east-1.127.0.0.1:4566/000000000000/q";
        assert.equal(
            parseArgs([
                "verify",
                "--table",
                "tbl",
                "--dlq-url",
                emulatorQueue,
                "--sqs-endpoint",
                "http://127.0.0.1:4566",
            ]).dlqUrl,
            emulatorQueue,
        );
    });

    it("parses migrate's own flags", () => {
        const args = parseArgs([
            "migrate",
            "--table",
            "tbl",
            "--apply",
            "--recreate-claim-index",
            "--page-size",
            "250",
            "--confirm-table",
            "tbl",
        ]);
        assert.equal(args.command, "migrate");
        assert.equal(args.apply, true);
        assert.equal(args.recreateClaimIndex, true);
        assert.equal(args.pageSize, 250);
        assert.equal(args.confirmTable, true);
    });

    const bad: [string, string[], RegExp][] = [
        [
            "no command",
            ["--table", "tbl"],
            /no command given; the commands are verify, migrate, doctor, adopt, redrive/,
        ],
        [
            "an unknown command",
            ["deploy", "--table", "tbl"],
            /unknown command "deploy"; the commands are verify, migrate, doctor, adopt, redrive/,
        ],
        ["an unknown flag", ["verify", "--table", "tbl", "--force"], /unknown flag "--force"/],
        [
            "a flag of the other command",
            ["verify", "--table", "tbl", "--apply"],
            /--apply is not a flag of "verify"; it belongs to migrate/,
        ],
        ["a missing --table", ["migrate"], /--table is required/],
        [
            "--confirm-table naming another table",
            ["migrate", "--table", "orders", "--apply", "--confirm-table", "orders-outbox"],
            /--confirm-table "orders-outbox" does not repeat --table "orders"; it confirms the table by its exact name: --confirm-table orders/,
        ],
        [
            "--confirm-table without --apply",
            ["migrate", "--table", "orders", "--confirm-table", "orders"],
            /--confirm-table only applies with --apply \(the plan changes nothing\); add --apply or drop it/,
        ],
        [
            "--confirm-table with a name DynamoDB would refuse",
            ["migrate", "--table", "orders", "--apply", "--confirm-table", "my table"],
            /--confirm-table "my table" is not a DynamoDB table name/,
        ],
        [
            "--confirm-table on another command",
            ["verify", "--table", "orders", "--confirm-table", "orders"],
            /--confirm-table is not a flag of "verify"; it belongs to migrate/,
        ],
        ["an empty --table", ["verify", "--table="], /--table needs a non-empty name, got ""/],
        [
            "a table name DynamoDB would refuse",
            ["verify", "--table", "my table"],
            /--table "my table" is not a DynamoDB table name: 3 to 255 characters of a-z, A-Z, 0-9, "_", "-" and "\."/,
        ],
        ["a flag without its value", ["verify", "--table"], /--table needs a value: --table <name>/],
        ["a flag followed by another flag", ["verify", "--region", "--table", "tbl"], /--region needs a value/],
        [
            "a non-numeric timeout",
            ["verify", "--table", "tbl", "--timeout", "soon"],
            /--timeout must be a positive number of seconds, got "soon"/,
        ],
        [
            "a zero poll interval",
            ["verify", "--table", "tbl", "--poll-interval", "0"],
            /--poll-interval must be a positive number of seconds, got "0"/,
        ],
        [
            "a fractional page size",
            ["migrate", "--table", "tbl", "--page-size", "2.5"],
            /--page-size must be a whole number from 1 to 1000, got "2.5"/,
        ],
        [
            "a page size over the bound",
            ["migrate", "--table", "tbl", "--page-size", "5000"],
            /--page-size must be a whole number from 1 to 1000/,
        ],
        ["a value on a boolean flag", ["migrate", "--table", "tbl", "--apply=yes"], /--apply takes no value/],
        [
            "expiry shards of 0",
            ["migrate", "--table", "tbl", "--expiry-shards", "0"],
            /--expiry-shards must be a whole number from 1 to 64, got "0"/,
        ],
        [
            "fractional expiry shards",
            ["verify", "--table", "tbl", "--expiry-shards", "1.5"],
            /--expiry-shards must be a whole number from 1 to 64, got "1.5"/,
        ],
        [
            "expiry shards over the bound",
            ["migrate", "--table", "tbl", "--expiry-shards", "1000"],
            /--expiry-shards must be a whole number from 1 to 64, got "1000"; e.g. --expiry-shards 64/,
        ],
        ["a flag given twice", ["verify", "--table", "tbl", "--table", "tb2"], /--table was given twice/],
        [
            "--sqs-endpoint without --dlq-url",
            ["verify", "--table", "tbl", "--sqs-endpoint", "http://127.0.0.1:4566"],
            /--sqs-endpoint only applies with --dlq-url/,
        ],
        [
            "a stray positional argument",
            ["verify", "extra", "--table", "tbl"],
            /unexpected argument "extra" after the command "verify"/,
        ],
        [
            "a timeout of 1e308 (Infinity once in ms)",
            ["verify", "--table", "tbl", "--timeout", "1e308"],
            /^--timeout must be a positive number of seconds, got "1e308"; write plain digits from 0\.001 to 86400, e\.g\. --timeout 30$/,
        ],
        [
            "a hex timeout",
            ["doctor", "--table", "tbl", "--timeout", "0x10"],
            /^--timeout must be a positive number of seconds, got "0x10"; write plain digits/,
        ],
        [
            "a timeout over a day",
            ["migrate", "--table", "tbl", "--timeout", "86401"],
            /^--timeout must be a positive number of seconds, got "86401"/,
        ],
        [
            "a timeout with a sign",
            ["migrate", "--table", "tbl", "--timeout", "+5"],
            /^--timeout must be a positive number of seconds, got "\+5"/,
        ],
        [
            "a max pending age under a millisecond",
            ["doctor", "--table", "tbl", "--max-pending-age", "1e-7"],
            /^--max-pending-age must be a positive number of seconds, got "1e-7"; write plain digits from 0\.001 to 86400, e\.g\. --max-pending-age 30$/,
        ],
        [
            "a poll interval under a millisecond in digits",
            ["verify", "--table", "tbl", "--poll-interval", "0.0001"],
            /^--poll-interval must be a positive number of seconds, got "0\.0001"/,
        ],
        [
            "a hex page size",
            ["migrate", "--table", "tbl", "--page-size", "0x10"],
            /^--page-size must be a whole number from 1 to 1000, got "0x10"; e\.g\. --page-size 100$/,
        ],
        [
            "expiry shards as an exponent",
            ["verify", "--table", "tbl", "--expiry-shards", "1e1"],
            /^--expiry-shards must be a whole number from 1 to 64, got "1e1"/,
        ],
        [
            "an endpoint that is not a URL",
            ["verify", "--table", "tbl", "--endpoint", "localhost:8000"],
            /^--endpoint "localhost:8000" is a localhost URL, not http or https: give an http:\/\/ or https:\/\/ URL, e\.g\. --endpoint http:\/\/127\.0\.0\.1:8000$/,
        ],
        [
            "a --dlq-url that is not a URL",
            ["verify", "--table", "tbl", "--dlq-url", "not-a-url"],
            /^--dlq-url "not-a-url" is not an SQS queue URL: give the queue's http:\/\/ or https:\/\/ URL, e\.g\. --dlq-url https:\/\/sqs\.eu-west-1\.amazonaws\.com\/123456789012\/orders-dlq$/,
        ],
        [
            "an emulator's queue URL without --sqs-endpoint (the SDK cannot send to its host)",
            ["verify", "--table", "tbl", "--dlq-url", "http://sqs.us-east-1.127.0.0.1:4566/000000000000/q"],
            /^--dlq-url "http:\/\/sqs\.us-east-1\.127\.0\.0\.1:4566\/000000000000\/q" has a host the SDK cannot send to: pass --sqs-endpoint with it$/,
        ],
        [
            "an --sqs-endpoint of another scheme",
            ["doctor", "--table", "tbl", "--sqs-endpoint", "ftp://127.0.0.1:4566"],
            /^--sqs-endpoint "ftp:\/\/127\.0\.0\.1:4566" is a ftp URL, not http or https/,
        ],
        [
            "an empty --endpoint",
            ["verify", "--table", "tbl", "--endpoint="],
            /^--endpoint needs a non-empty url, got ""$/,
        ],
        // util.parseArgs in strict mode: a word with one dash after a flag may be a flag, so only --flag=-value gives it.
        [
            "a good value with a leading dash after a space",
            ["verify", "--table", "-abc"],
            /^--table is followed by "-abc", which reads as a flag; if it is the value, write --table=-abc$/,
        ],
        [
            "a bad value with a leading dash after a space (its own message)",
            ["verify", "--table", "tbl", "--timeout", "-5"],
            /^--timeout must be a positive number of seconds, got "-5"/,
        ],
        ["an unknown one-letter flag", ["verify", "-x", "--table", "tbl"], /^unknown flag "-x"; see the flags below$/],
        [
            "-- (no command takes words after it)",
            ["verify", "--table", "tbl", "--"],
            /^unknown flag "--"; see the flags below$/,
        ],
        [
            "a flag given twice, the second without its value",
            ["verify", "--table", "tbl", "--table"],
            /^--table was given twice; give it once$/,
        ],
        [
            "a --regions entry that is not a region name",
            ["verify", "--table", "tbl", "--regions", "us-east-1,,us-west-2"],
            /^--regions "us-east-1,,us-west-2" holds "", which is not an AWS region name; list the table's regions separated by commas, e.g. --regions us-east-1,us-west-2$/,
        ],
        [
            "--regions on another command",
            ["migrate", "--table", "tbl", "--regions", "us-east-1"],
            /^--regions is not a flag of "migrate"; it belongs to verify$/,
        ],
    ];
    for (const [what, argv, message] of bad) {
        it(`rejects ${what}`, () => {
            assert.match(usageErrorOf(argv), message);
        });
    }

    it("exits 2 with the message and the usage on stderr for a bad command line", async () => {
        const io = captureIo({});
        const code = await main(["verify", "--table", "tbl", "--nope"], io);
        assert.equal(code, 2);
        assert.equal(io.output(), "");
        assert.match(io.errors(), /^dynamodb-outbox: unknown flag "--nope"/);
        assert.match(io.errors(), /usage: dynamodb-outbox <verify\|migrate\|doctor\|adopt> --table <name>/);
    });

    it("exits 2 naming --region when no region is given or set", async () => {
        const io = captureIo({});
        const code = await main(["verify", "--table", "tbl"], io);
        assert.equal(code, 2);
        assert.match(io.errors(), /no AWS region: pass --region \(e\.g\. --region eu-west-1\) or set AWS_REGION/);
    });

    it("exits 2 when --expiry is not shorter than --timeout, before touching any table", async () => {
        const io = captureIo({ AWS_REGION: "us-east-1" });
        const code = await main(["verify", "--table", "tbl", "--endpoint", "http://127.0.0.1:1", "--expiry", "90"], io);
        assert.equal(code, 2);
        assert.match(
            io.errors(),
            /^dynamodb-outbox: --expiry \(90\.0 s\) must be shorter than --timeout \(60\.0 s\): the wait for the sweep would end before the record expires; lower --expiry or raise --timeout/,
        );
    });

    it("prints the usage on --help and exits 0, limited to the command when one is given", async () => {
        const all = captureIo({});
        assert.equal(await main(["--help"], all), 0);
        assert.equal(all.output(), `${usage()}\n`);
        assert.match(all.output(), /verify flags:[\s\S]*--dlq-url[\s\S]*migrate flags:[\s\S]*--recreate-claim-index/);
        const one = captureIo({});
        assert.equal(await main(["migrate", "-h"], one), 0);
        assert.doesNotMatch(one.output(), /verify flags/);
        assert.match(one.output(), /AWS_ACCESS_KEY_ID=local/);
    });
});
