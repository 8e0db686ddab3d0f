import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { handlerExcludePackages } from "../../../components/code-path";
import { ENV } from "../../../runtime/config";
import { RecordedResource } from "../../support/pulumi-mocks";
import { archiveSize, entryText, loadSerialized } from "../../support/serialized";
import * as aws from "@pulumi/aws";
import { publisherLambdaFactory } from "../../../runtime/relay/lambda";
import { recordedNamed } from "../../support/pulumi-mocks";
import { BuiltOutbox, TYPE, buildOutbox, waitForRPCs } from "../../support/component-harness";
import { runLambdaHost } from "../../support/lambda-host";
import { LAMBDA_NODE_MAJOR, lambdaNode, majorOf } from "../../support/lambda-node";

/**
 * The budget for each function's archive: the serialized handler alone, no node_modules. 336 KB since the three
 * destination kinds (`runtime/destination/`) took the publisher's from 291,063 to 318,533 bytes raw (320,957 with the
 * middleware that keeps its message attributes). 352 KB since issues 33 and 38 took it to 345,485 bytes raw (67,032
 * deflated); issue 35 takes the relay's code down instead of raising this again. 360 KB since issue 34 gave the
 * relay two features it must carry, the CloudEvents body and the schema version: 361,377 bytes raw (70,384 deflated).
 * 368 KB since issue 37's origin scope (global tables: the stamp, the per-region claims and the adopted-record
 * check): 370,593 bytes raw (72,364 deflated).
 */
const ARCHIVE_BUDGET_BYTES = 368 * 1024;

/** What a missing variable's error names: a missing topic is a missing destination, so the three that can name one. */
function named(variable: string): string {
    return variable === ENV.topicArn ? [ENV.topicArn, ENV.queueArn, ENV.eventBusArn].join(", ") : variable;
}

describe("Outbox Lambda code", () => {
    let std: BuiltOutbox;
    let publisher: RecordedResource;
    let sweeper: RecordedResource;

    before(async () => {
        std = await buildOutbox("code");
        publisher = std.one(TYPE.fn, "code-publisher");
        sweeper = std.one(TYPE.fn, "code-sweeper");
    });

    for (const which of ["publisher", "sweeper"] as const) {
        it(`ships the ${which} as the serialized handler alone, within ${ARCHIVE_BUDGET_BYTES / 1024} KB`, async () => {
            const fn = which === "publisher" ? publisher : sweeper;
            const assets = Object.keys(await (fn.inputs.code.assets as Promise<Record<string, unknown>>));
            assert.deepEqual(
                assets,
                ["__index.js"],
                "no node_modules: @aws-sdk/* and @smithy/* come with the Lambda runtime",
            );
            const size = await archiveSize(fn);
            console.log(
                `      ${which} archive: ${size.files} file(s), ${size.raw} bytes raw, ${size.deflated} bytes deflated`,
            );
            assert.ok(
                size.raw > 0 && size.raw <= ARCHIVE_BUDGET_BYTES,
                `${which} archive is ${size.raw} bytes, budget ${ARCHIVE_BUDGET_BYTES}`,
            );
        });
    }

    it("would blow the budget without the exclusions (what the budget guards against)", async () => {
        // The same factory in a CallbackFunction left to Pulumi's default dependency walk.
        new aws.lambda.CallbackFunction("codeloose-publisher", {
            callbackFactory: publisherLambdaFactory,
            role: "arn:aws:iam::111111111111:role/r",
        });
        await waitForRPCs();
        const fn = recordedNamed("codeloose-publisher")[0];
        const size = await archiveSize(fn);
        console.log(
            `      publisher archive without exclusions: ${size.files} files, ${size.raw} bytes raw, ${size.deflated} bytes deflated`,
        );
        assert.ok(size.raw > ARCHIVE_BUDGET_BYTES, `${size.raw} bytes`);
    });

    it("excludes every direct dependency of the program and every installed @aws-sdk/* and @smithy/* package", () => {
        const excluded = handlerExcludePackages(path.join(__dirname, "..", "..", ".."));
        const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8"));
        for (const dep of Object.keys(manifest.dependencies)) assert.ok(excluded.includes(dep), `${dep} excluded`);
        const smithy = fs
            .readdirSync(path.join(__dirname, "..", "..", "..", "node_modules", "@smithy"))
            .map((p) => `@smithy/${p}`);
        for (const pkg of smithy) assert.ok(excluded.includes(pkg), `${pkg} excluded`);
    });

    it("finds the program's package.json from a subdirectory, and excludes nothing where there is none", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-codepath-"));
        try {
            assert.deepEqual(handlerExcludePackages(dir), []);
            fs.writeFileSync(
                path.join(dir, "package.json"),
                JSON.stringify({ dependencies: { "dynamodb-outbox": "0.1.0", leftpad: "1.0.0" } }),
            );
            fs.mkdirSync(path.join(dir, "node_modules", "@aws-sdk", "client-sns"), { recursive: true });
            fs.mkdirSync(path.join(dir, "program"));
            assert.deepEqual(handlerExcludePackages(path.join(dir, "program")), [
                "@aws-sdk/client-sns",
                "dynamodb-outbox",
                "leftpad",
            ]);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    describe(`each archive written out and loaded as Lambda loads it, on this process's Node ${lambdaNode().version} (Lambda's nodejs${LAMBDA_NODE_MAJOR}.x major)`, () => {
        let work: string;
        before(() => {
            work = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-archive-host-"));
        });
        after(() => fs.rmSync(work, { recursive: true, force: true }));

        for (const which of ["publisher", "sweeper"] as const) {
            it(`loads the ${which} from __index.js alone, with only @aws-sdk and @smithy on NODE_PATH, and fails its cold start naming each missing variable`, async () => {
                const fn = which === "publisher" ? publisher : sweeper;
                const dir = path.join(work, which);
                fs.mkdirSync(dir);
                fs.writeFileSync(path.join(dir, "__index.js"), await entryText(fn));
                const dropped = [ENV.tableName, ENV.topicArn, ENV.dlqUrl];
                const report = runLambdaHost(dir, {
                    work,
                    environment: fn.inputs.environment.variables as Record<string, string>,
                    drop: dropped,
                    invokeEmptyBatch: which === "publisher",
                });
                assert.equal(report.node, lambdaNode().version);
                assert.equal(majorOf(report.node), LAMBDA_NODE_MAJOR, "Lambda's nodejs22.x");
                assert.equal(report.handlerType, "function");
                if (which === "publisher") assert.deepEqual(report.emptyBatch, { batchItemFailures: [] });
                for (const variable of dropped) {
                    assert.equal(
                        report.missing[variable]?.code,
                        "INVALID_CONFIG",
                        `${variable}: ${JSON.stringify(report.missing[variable])}`,
                    );
                    assert.equal(report.missing[variable]?.context?.variable, named(variable));
                }
                assert.deepEqual(
                    report.modules.filter((m) => m.includes(`${path.sep}@pulumi${path.sep}`)),
                    [],
                    "no @pulumi module loaded",
                );
            });
        }
    });

    describe("the publisher closure exactly as the component serialized it", () => {
        let text: string;
        const saved: Record<string, string | undefined> = {};
        const environment = () => publisher.inputs.environment.variables as Record<string, string>;
        /** With `variable` set to `bad`, the cold start of `serialized` fails naming it, its value and its range. */
        const refusesOutOfRange = (serialized: string, variable: string, bad: string, range: string, also = "") => {
            Object.assign(process.env, environment(), { [variable]: bad });
            assert.throws(
                () => loadSerialized(serialized),
                (e: any) =>
                    e.code === "INVALID_CONFIG" &&
                    e.context?.variable === variable &&
                    e.message.includes(`"${bad}"`) &&
                    e.message.includes(range) &&
                    e.message.includes(also),
            );
        };

        let savedRegion: string | undefined;
        before(async () => {
            text = await entryText(publisher);
            for (const name of Object.values(ENV)) saved[name] = process.env[name];
            savedRegion = process.env.AWS_REGION;
        });

        afterEach(() => {
            for (const [name, value] of Object.entries({ ...saved, AWS_REGION: savedRegion })) {
                if (value === undefined) delete process.env[name];
                else process.env[name] = value;
            }
        });

        it("loads in sloppy mode and builds the handler from the environment the component set", async () => {
            Object.assign(process.env, environment());
            const handler = loadSerialized<(event: unknown) => Promise<{ batchItemFailures: unknown[] }>>(text);
            assert.equal(typeof handler, "function");
            assert.deepEqual(await handler({ Records: [] }), { batchItemFailures: [] });
        });

        for (const variable of [ENV.tableName, ENV.topicArn, ENV.dlqUrl]) {
            it(`fails the cold start with INVALID_CONFIG naming ${variable} when it is missing`, () => {
                Object.assign(process.env, environment());
                delete process.env[variable];
                assert.throws(
                    () => loadSerialized(text),
                    (e: any) =>
                        e.code === "INVALID_CONFIG" &&
                        e.context?.variable === named(variable) &&
                        e.message.includes(variable),
                );
            });
        }

        it("fails the cold start naming a malformed optional variable and its value", () => {
            Object.assign(process.env, environment(), { [ENV.maxPublishAttempts]: "many" });
            assert.throws(
                () => loadSerialized(text),
                (e: any) =>
                    e.code === "INVALID_CONFIG" &&
                    e.context?.variable === ENV.maxPublishAttempts &&
                    e.context?.value === "many" &&
                    e.message.includes(ENV.maxPublishAttempts) &&
                    e.message.includes('"many"'),
            );
        });

        it("keeps the error message and code through serialization", () => {
            Object.assign(process.env, environment());
            delete process.env[ENV.tableName];
            assert.throws(
                () => loadSerialized(text),
                (e: any) => e.message.includes(ENV.tableName) && String(e).includes(ENV.tableName),
            );
        });

        it("fails the sweeper's cold start naming OUTBOX_EXPIRY_SHARDS when it is 0, 1.5 or 1000", async () => {
            const sweeperText = await entryText(sweeper);
            for (const bad of ["0", "1.5", "1000"]) {
                refusesOutOfRange(sweeperText, ENV.expiryShards, bad, "from 1 to 64");
            }
        });

        it("fails the cold start of both functions naming a malformed topic ARN, a DLQ URL that is not a URL, and a topic or DLQ of another region than AWS_REGION", async () => {
            const sweeperText = await entryText(sweeper);
            const cases: [Record<string, string>, string, RegExp][] = [
                [
                    { [ENV.topicArn]: "orders-topic" },
                    ENV.topicArn,
                    /OUTBOX_TOPIC_ARN is "orders-topic"; expected an SNS topic ARN, arn:aws:sns:<region>:<account>:<name>; set it to the topic's ARN/,
                ],
                [
                    { [ENV.topicArn]: "arn:aws:sns:eu-west-1:111111111111" },
                    ENV.topicArn,
                    /OUTBOX_TOPIC_ARN is "arn:aws:sns:eu-west-1:111111111111"; expected an SNS topic ARN/,
                ],
                [
                    { [ENV.dlqUrl]: "not-a-url" },
                    ENV.dlqUrl,
                    /OUTBOX_DLQ_URL is "not-a-url"; expected an SQS queue URL, https:\/\/sqs\.<region>\.amazonaws\.com\/<account>\/<queue name>; set it to the queue's URL/,
                ],
                [
                    { [ENV.dlqUrl]: "arn:aws:sqs:eu-west-1:111111111111:dlq" },
                    ENV.dlqUrl,
                    /OUTBOX_DLQ_URL is "arn:aws:sqs:eu-west-1:111111111111:dlq"; expected an SQS queue URL/,
                ],
                [
                    { AWS_REGION: "us-east-1" },
                    ENV.topicArn,
                    /OUTBOX_TOPIC_ARN is "arn:aws:sns:eu-west-1:[^"]+": the topic is in eu-west-1, but the function runs in us-east-1 \(AWS_REGION\); SNS refuses a topic of another region \(InvalidParameter: TopicArn\); point it at a topic in us-east-1/,
                ],
                [
                    { AWS_REGION: "eu-west-1", [ENV.dlqUrl]: "https://sqs.us-east-2.amazonaws.com/111111111111/dlq" },
                    ENV.dlqUrl,
                    /OUTBOX_DLQ_URL is "https:\/\/sqs\.us-east-2\.amazonaws\.com\/111111111111\/dlq": the queue is in us-east-2, but the function runs in eu-west-1 \(AWS_REGION\)/,
                ],
            ];
            for (const [change, variable, pattern] of cases) {
                for (const serialized of [text, sweeperText]) {
                    Object.assign(process.env, environment(), change);
                    assert.throws(
                        () => loadSerialized(serialized),
                        (e: any) =>
                            e.code === "INVALID_CONFIG" && e.context?.variable === variable && pattern.test(e.message),
                        JSON.stringify(change),
                    );
                }
            }
            Object.assign(process.env, environment(), { AWS_REGION: "eu-west-1" });
            assert.equal(
                typeof loadSerialized(text),
                "function",
                "the component's own names, in the function's region, pass",
            );
        });

        it("builds both handlers for a queue or a bus named by its variable instead of the topic's, and refuses two destinations or a malformed one", async () => {
            const sweeperText = await entryText(sweeper);
            const queue = "arn:aws:sqs:eu-west-1:111111111111:orders.fifo";
            const bus = "arn:aws:events:eu-west-1:111111111111:event-bus/orders";
            // Empty is unset to the handlers: each case names its own destination only.
            const none = { [ENV.topicArn]: "", [ENV.queueArn]: "", [ENV.eventBusArn]: "", [ENV.eventSource]: "" };
            const destinations: Record<string, string>[] = [
                { ...none, [ENV.queueArn]: queue, [ENV.fifo]: "true" },
                { ...none, [ENV.eventBusArn]: bus, [ENV.eventSource]: "com.example.orders" },
            ];
            for (const destination of destinations)
                for (const serialized of [text, sweeperText]) {
                    Object.assign(process.env, environment(), { AWS_REGION: "eu-west-1" }, destination);
                    assert.equal(typeof loadSerialized(serialized), "function", JSON.stringify(destination));
                }
            const refused: [Record<string, string>, string, RegExp][] = [
                [
                    {
                        ...none,
                        [ENV.topicArn]: environment()[ENV.topicArn]!,
                        [ENV.queueArn]: queue,
                        [ENV.fifo]: "true",
                    },
                    `${ENV.topicArn}, ${ENV.queueArn}`,
                    /the environment variables OUTBOX_TOPIC_ARN and OUTBOX_QUEUE_ARN are both set; exactly one of them names the destination/,
                ],
                [
                    { ...none, [ENV.eventBusArn]: "orders" },
                    ENV.eventBusArn,
                    /OUTBOX_EVENT_BUS_ARN is "orders"; expected an EventBridge event bus ARN, arn:aws:events:<region>:<account>:event-bus\/<bus name>; set it to the bus's ARN/,
                ],
                [
                    { ...none, [ENV.queueArn]: queue, AWS_REGION: "us-east-1" },
                    ENV.queueArn,
                    /OUTBOX_QUEUE_ARN is "arn:aws:sqs:eu-west-1:[^"]+": the queue is in eu-west-1, but the function runs in us-east-1 \(AWS_REGION\); SQS refuses a queue of another region/,
                ],
            ];
            for (const [change, variable, pattern] of refused)
                for (const serialized of [text, sweeperText]) {
                    Object.assign(process.env, environment(), { AWS_REGION: "eu-west-1" }, change);
                    assert.throws(
                        () => loadSerialized(serialized),
                        (e: any) =>
                            e.code === "INVALID_CONFIG" && e.context?.variable === variable && pattern.test(e.message),
                        JSON.stringify(change),
                    );
                }
        });

        it("fails the sweeper's cold start naming OUTBOX_MAX_PARTITIONS_PER_RUN when it is 0, 1.5 or 10001, and takes 10000", async () => {
            const sweeperText = await entryText(sweeper);
            for (const bad of ["0", "1.5", "10001"]) {
                refusesOutOfRange(sweeperText, ENV.maxPartitionsPerRun, bad, "from 1 to 10000");
            }
            Object.assign(process.env, environment(), { [ENV.maxPartitionsPerRun]: "10000" });
            assert.equal(typeof loadSerialized(sweeperText), "function");
        });

        it("fails both functions' cold start naming OUTBOX_CLAIM_VERSION when it is 0, 1.5, 7n or past 2^53 - 1, and takes 7", async () => {
            for (const fn of [publisher, sweeper]) {
                const text = await entryText(fn);
                for (const bad of ["0", "1.5", "7n", "9007199254740992"]) {
                    refusesOutOfRange(
                        text,
                        ENV.claimVersion,
                        bad,
                        "from 1 to 9007199254740991",
                        "on every publisher and sweeper of the table",
                    );
                }
                Object.assign(process.env, environment(), { [ENV.claimVersion]: "7" });
                assert.equal(typeof loadSerialized(text), "function");
            }
        });

        it("loads the sweeper the same way", async () => {
            Object.assign(process.env, environment());
            const handler = loadSerialized<(event: unknown) => Promise<unknown>>(await entryText(sweeper));
            assert.equal(typeof handler, "function");
        });
    });
});
