/**
 * `dynamodb-outbox doctor`, in-process through `main`. The table half runs against DynamoDB Local, the DLQ depth
 * and a destination queue against fauxqs (a local SQS). Lambda (event source mappings), EventBridge (rules, a
 * destination bus), CloudWatch (metrics) and SNS (a destination topic) are SDK-level fakes of the ports in
 * cli/doctor/aws.ts: no emulator here serves the first three (tests/unit/cli/doctor-sdk.test.ts drives the real SDK
 * clients against a local HTTP stand-in).
 */
import * as assert from "node:assert/strict";
import { DescribeTableCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
    CloudWatchPort,
    DoctorAws,
    EventBridgePort,
    EventSourceMappingInfo,
    LambdaPort,
    SnsPort,
} from "../../../cli/doctor/aws";
import { loadDoctorAws } from "../../../cli/doctor/aws";
import { readStackOutputs } from "../../../cli/doctor/outputs";
import { startDeadline } from "../../../cli/shared/deadline";
import { main } from "../../../cli/main";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { isOutboxError } from "../../../runtime/errors";
import { ATTR, streamFilterPatternJson } from "../../../runtime/schema";
import { exampleArns } from "../../support/arns";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import { scanItems } from "../../support/runtime/table";
import { captureIo, createOutboxTable, dropTable, LOCAL_ENV } from "../../support/cli";

/** The stack's resources: its two functions, its DLQ and a destination of each kind doctor reads. */
const STACK = { account: "123456789012" };
const PUBLISHER_ARN = exampleArns("orders-publisher", STACK).function;
const SWEEPER_ARN = exampleArns("orders-sweeper", STACK).function;
const DLQ_ARN = exampleArns("orders-dlq", STACK).queue;
const TOPIC_ARN = exampleArns("orders-events", STACK).topic;
const BUS_ARN = exampleArns("orders", STACK).bus;
/** The stream ARNs of the test tables, by table: a fake mapping reads from the table's stream. */
const streams = new Map<string, string>();
let currentTable = "";

/** A healthy mapping, bent by `bend`. */
function mapping(bend: Partial<EventSourceMappingInfo> = {}): EventSourceMappingInfo {
    return {
        UUID: "m-1",
        EventSourceArn: streams.get(currentTable),
        FunctionArn: PUBLISHER_ARN,
        State: "Enabled",
        StartingPosition: "TRIM_HORIZON",
        FilterCriteria: { Filters: [{ Pattern: streamFilterPatternJson() }] },
        DestinationConfig: { OnFailure: { Destination: DLQ_ARN } },
        LastProcessingResult: "OK",
        MetricsConfig: { Metrics: ["EventCount"] },
        ...bend,
    };
}

interface FakeWorld {
    mappings?: EventSourceMappingInfo[];
    ruleState?: string;
    rules?: string[];
    iteratorAgeMs?: number;
    errors?: number;
    lambdaError?: boolean;
    metricsError?: boolean;
    /** The topics that exist, with their attributes. @default the outputs' topic, standard */
    topics?: Record<string, Record<string, string>>;
    /** The buses that exist. @default the test bus */
    buses?: string[];
    /** An error GetTopicAttributes throws instead of answering. */
    snsError?: string;
}

/** An SDK-shaped service error. */
function serviceError(name: string, message: string): Error {
    return Object.assign(new Error(message), { name });
}

/** Fakes of the three ports (see the file comment for why they are fakes), recording the calls. */
function fakeAws(world: FakeWorld, calls: string[] = []): () => DoctorAws {
    const lambda: LambdaPort = {
        listEventSourceMappings: async (input) => {
            calls.push(`lambda:${JSON.stringify(input)}`);
            if (world.lambdaError) throw Object.assign(new Error("not allowed"), { name: "AccessDeniedException" });
            // A mapping built before the test's table was known reads from that table's stream.
            return {
                EventSourceMappings: (world.mappings ?? [mapping()]).map((m) => ({
                    ...m,
                    EventSourceArn: m.EventSourceArn ?? streams.get(currentTable),
                })),
            };
        },
    };
    const eventBridge: EventBridgePort = {
        listRuleNamesByTarget: async (input) => {
            calls.push(`rules:${input.TargetArn}`);
            return { RuleNames: world.rules ?? ["orders-sweep"] };
        },
        describeRule: async ({ Name }) => ({
            Name,
            State: world.ruleState ?? "ENABLED",
            ScheduleExpression: "rate(1 minute)",
        }),
        describeEventBus: async ({ Name }) => {
            calls.push(`bus:${Name}`);
            if (!(world.buses ?? [BUS_ARN]).includes(Name))
                throw serviceError("ResourceNotFoundException", `Event bus ${Name} does not exist.`);
            return { Name: Name.split("/").pop(), Arn: Name };
        },
    };
    const sns: SnsPort = {
        getTopicAttributes: async ({ TopicArn }) => {
            calls.push(`sns:${TopicArn}`);
            if (world.snsError !== undefined) throw serviceError(world.snsError, "not allowed");
            const attributes = (world.topics ?? { [TOPIC_ARN]: {} })[TopicArn];
            if (attributes === undefined) throw serviceError("NotFoundException", "Topic does not exist");
            return { Attributes: { TopicArn, ...attributes } };
        },
    };
    const cloudWatch: CloudWatchPort = {
        getMetricStatistics: async (input) => {
            calls.push(
                `metric:${input.MetricName}:${input.Dimensions[0]?.Value}`,
                `window:${input.Namespace}:${input.EndTime.getTime() - input.StartTime.getTime()}`,
            );
            if (world.metricsError) throw Object.assign(new Error("not allowed"), { name: "AccessDenied" });
            return {
                Datapoints:
                    input.MetricName === "IteratorAge"
                        ? [{ Maximum: world.iteratorAgeMs ?? 1200 }]
                        : [{ Sum: world.errors ?? 0 }],
            };
        },
    };
    return () => ({
        lambda: { port: lambda },
        eventBridge: { port: eventBridge },
        cloudWatch: { port: cloudWatch },
        sns: { port: sns },
        destroy: () => undefined,
    });
}

/** The run printed `line` and exited with `code` (each failure shows what it printed). */
function assertReported(run: { stdout: string; code: number }, line: string, code: number): void {
    assert.ok(run.stdout.includes(line), run.stdout);
    assert.equal(run.code, code, run.stdout);
}

describe("cli: doctor", function () {
    this.timeout(120_000);
    let fauxqs: LocalFauxqs;
    let table: string;
    let dlqUrl: string;
    let dir: string;

    before(async () => {
        fauxqs = await startFauxqs();
        table = await createOutboxTable({}, "cli-doctor");
        dlqUrl = (await fauxqs.createQueue(`cli-doctor-dlq-${Date.now()}`)).queueUrl;
        dir = mkdtempSync(join(tmpdir(), "doctor-"));
    });
    after(async () => {
        await dropTable(table);
        await fauxqs?.stop();
    });

    async function useTable(name: string): Promise<void> {
        currentTable = name;
        if (!streams.has(name))
            streams.set(
                name,
                (await (await dynamoClient()).send(new DescribeTableCommand({ TableName: name }))).Table
                    ?.LatestStreamArn as string,
            );
    }

    beforeEach(async () => {
        await useTable(table);
    });

    function outputsFile(extra: Record<string, unknown> = {}): string {
        const file = join(dir, `outputs-${Math.random().toString(36).slice(2)}.json`);
        writeFileSync(
            file,
            JSON.stringify({
                tableName: table,
                dlqUrl,
                dlqArn: DLQ_ARN,
                publisherFunctionName: "orders-publisher",
                sweeperFunctionName: "orders-sweeper",
                destinationArn: TOPIC_ARN,
                topicArn: TOPIC_ARN,
                writerPolicy: "{}",
                ...extra,
            }),
        );
        return file;
    }

    async function doctor(argv: string[], world: FakeWorld = {}, calls: string[] = []) {
        const io = { ...captureIo({ ...LOCAL_ENV }), doctorAws: fakeAws(world, calls) };
        const code = await main(
            ["doctor", ...argv, "--endpoint", await dynamoEndpoint(), "--sqs-endpoint", fauxqs.endpoint],
            io,
        );
        return { code, stdout: io.output(), stderr: io.errors() };
    }

    it("passes a healthy outbox from its stack outputs: one ✓ line per check, exit 0", async () => {
        const calls: string[] = [];
        const run = await doctor(["--outputs", outputsFile()], {}, calls);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        for (const line of [
            `✓ table "${table}" exists and is ACTIVE`,
            '✓ publisher event source mapping exists — m-1 on function "orders-publisher"',
            "✓ mapping is enabled",
            "✓ mapping filter is the schema's (INSERTs of outbox records)",
            "✓ mapping starts from TRIM_HORIZON",
            `✓ mapping has its on-failure destination — ${DLQ_ARN}`,
            "✓ mapping's last processing result — OK",
            "✓ sweeper schedule rule is enabled — orders-sweep rate(1 minute)",
            `✓ destination SNS topic exists — ${TOPIC_ARN}`,
            "✓ DLQ is empty — 0 messages",
            "✓ oldest pending record is younger than 300.0 s — no pending record",
            "✓ publisher IteratorAge under 60.0 s (last 15 min) — max 1.2 s",
            "✓ publisher has no Errors (last 15 min) — 0",
        ]) {
            assert.ok(run.stdout.includes(line), `missing "${line}" in:\n${run.stdout}`);
        }
        assert.match(run.stdout, /\nhealthy: \d+ passed/);
        assert.ok(
            calls.includes(`rules:${SWEEPER_ARN}`),
            "the sweeper's ARN is the publisher's with the sweeper's name",
        );
        assert.ok(
            calls.includes("metric:IteratorAge:orders-publisher") && calls.includes("metric:Errors:orders-publisher"),
        );
        assert.ok(calls.includes(`window:AWS/Lambda:${15 * 60_000}`), "the last 15 minutes of AWS/Lambda");
        assert.ok(calls.includes(`sns:${TOPIC_ARN}`), "the topic is asked for by its ARN");
        assert.deepEqual(await scanItems(await dynamoClient(), table), [], "doctor writes nothing to the table");
    });

    it("--json prints one object with every check", async () => {
        const run = await doctor(["--outputs", outputsFile(), "--json"]);
        const result = JSON.parse(run.stdout) as {
            command: string;
            ok: boolean;
            checks: { id: string; status: string }[];
        };
        assert.equal(result.command, "doctor");
        assert.deepEqual(Object.keys(result).sort(), [
            "checks",
            "command",
            "counts",
            "durationMs",
            "ok",
            "region",
            "table",
        ]);
        assert.equal(result.ok, true);
        assert.deepEqual(
            result.checks
                .filter((c) => !c.id.startsWith("index:") && !["table", "primary-key", "ttl", "stream"].includes(c.id))
                .map((c) => `${c.id}:${c.status}`),
            [
                "mapping:pass",
                "mapping:state:pass",
                "mapping:filter:pass",
                "mapping:start:pass",
                "mapping:destination:pass",
                "mapping:metrics:pass",
                "mapping:last-result:pass",
                "sweeper-rule:pass",
                "destination:pass",
                "dlq:pass",
                "oldest-pending:pass",
                "metrics:iterator-age:pass",
                "metrics:errors:pass",
            ],
        );
    });

    const failing: [string, FakeWorld, RegExp][] = [
        [
            "no mapping",
            { mappings: [] },
            /✗ publisher event source mapping exists — none for function "orders-publisher" on the table's stream: .*fix: pulumi up/,
        ],
        [
            "a mapping on another stream",
            { mappings: [{ ...mapping(), EventSourceArn: "arn:aws:dynamodb:us-east-1:1:table/other/stream/x" }] },
            /✗ publisher event source mapping exists — none for function "orders-publisher" on the table's stream/,
        ],
        [
            "a disabled mapping",
            { mappings: [mapping({ State: "Disabled" })] },
            /✗ mapping is enabled — state Disabled: .*fix: aws lambda update-event-source-mapping --uuid m-1 --enabled/,
        ],
        [
            "a wrong filter",
            {
                mappings: [
                    mapping({ FilterCriteria: { Filters: [{ Pattern: '{"eventName":["INSERT","MODIFY"]}' }] } }),
                ],
            },
            /✗ mapping filter is the schema's .* expected exactly \{"eventName":\["INSERT"\]/,
        ],
        [
            "no filter",
            { mappings: [mapping({ FilterCriteria: undefined })] },
            /✗ mapping filter is the schema's .* — filters \[\]/,
        ],
        [
            "a LATEST start",
            { mappings: [mapping({ StartingPosition: "LATEST" })] },
            /✗ mapping starts from TRIM_HORIZON — starts from LATEST: .*recreate the mapping/,
        ],
        [
            "no on-failure destination",
            { mappings: [mapping({ DestinationConfig: undefined })] },
            /✗ mapping has its on-failure destination — none: .*OnFailure=\{Destination=arn:aws:sqs:us-east-1:123456789012:orders-dlq\}/,
        ],
        [
            "a destination that is not the DLQ",
            { mappings: [mapping({ DestinationConfig: { OnFailure: { Destination: "arn:aws:sqs:x:1:other" } } })] },
            /✗ mapping has its on-failure destination — arn:aws:sqs:x:1:other, not the DLQ/,
        ],
        [
            "a destination topic that does not exist",
            { topics: {} },
            /✗ destination SNS topic exists — arn:aws:sns:us-east-1:123456789012:orders-events does not exist: nothing the outbox publishes reaches a consumer; fix: pulumi up recreates a topic the Outbox created; a topic you gave \(topicArn\) must be created again/,
        ],
        [
            "a refused GetTopicAttributes",
            { snsError: "AuthorizationErrorException" },
            /✗ destination SNS topic exists — GetTopicAttributes failed: AuthorizationErrorException: not allowed; the tool needs sns:GetTopicAttributes/,
        ],
        [
            "a PROBLEM last result",
            { mappings: [mapping({ LastProcessingResult: "PROBLEM: Function call failed" })] },
            /✗ mapping's last processing result — PROBLEM: Function call failed; fix:/,
        ],
        [
            "a disabled rule",
            { ruleState: "DISABLED" },
            /✗ sweeper schedule rule is enabled — orders-sweep DISABLED: .*fix: aws events enable-rule --name orders-sweep/,
        ],
        [
            "no rule",
            { rules: [] },
            /✗ sweeper schedule rule is enabled — no EventBridge rule targets arn:aws:lambda:us-east-1:123456789012:function:orders-sweeper/,
        ],
        [
            "a high IteratorAge",
            { iteratorAgeMs: 120_000 },
            /✗ publisher IteratorAge under 60.0 s \(last 15 min\) — max 120.0 s: the publisher falls behind/,
        ],
        [
            "publisher errors",
            { errors: 3 },
            /✗ publisher has no Errors \(last 15 min\) — 3 error\(s\): fix: aws logs tail "\$\(aws lambda get-function-configuration --function-name orders-publisher --query LoggingConfig\.LogGroup --output text\)" --since 15m/,
        ],
    ];
    for (const metricsConfig of [undefined, { Metrics: [] }]) {
        it(`warns, and stays healthy (exit 0), when the mapping's EventCount metrics are off (MetricsConfig ${JSON.stringify(metricsConfig)})`, async () => {
            const run = await doctor(["--outputs", outputsFile()], {
                mappings: [mapping({ MetricsConfig: metricsConfig })],
            });
            assert.match(
                run.stdout,
                /! mapping's EventCount metrics are on — off: the mapping reports no DroppedEventCount nor FilteredOutEventCount, so the dropped-events alarm cannot fire; fix: pulumi up, or aws lambda update-event-source-mapping --uuid m-1 --metrics-config Metrics=EventCount/,
            );
            assert.equal(run.code, 0, run.stdout);
        });
    }

    for (const [name, world, pattern] of failing) {
        it(`fails on ${name}, with the fix, exit 1`, async () => {
            const run = await doctor(["--outputs", outputsFile()], world);
            assert.match(run.stdout, pattern);
            assert.match(run.stdout, /\nNOT healthy: [1-9]\d* failed/);
            assert.equal(run.code, 1);
        });
    }

    describe("the destination, by its kind", () => {
        it("finds an SQS queue by its ARN (GetQueueAttributes on its URL) and says it is FIFO; a topicArn of null is no topic", async () => {
            const queue = await fauxqs.createQueue(`cli-doctor-events-${Date.now()}.fifo`);
            const calls: string[] = [];
            const run = await doctor(
                ["--outputs", outputsFile({ destinationArn: queue.queueArn, topicArn: null })],
                {},
                calls,
            );
            assertReported(run, `✓ destination SQS queue exists — ${queue.queueArn} (FIFO)`, 0);
            assert.deepEqual(
                calls.filter((c) => c.startsWith("sns:") || c.startsWith("bus:")),
                [],
            );
        });

        it("fails on a destination queue that does not exist, with the fix", async () => {
            const missing = "arn:aws:sqs:us-east-1:000000000000:cli-doctor-no-such-queue";
            const run = await doctor(["--outputs", outputsFile({ destinationArn: missing, topicArn: undefined })]);
            assertReported(
                run,
                `✗ destination SQS queue exists — ${missing} does not exist: nothing the outbox publishes reaches a consumer; fix: create the queue again, or point the Outbox's queueArn at one that exists, then pulumi up`,
                1,
            );
        });

        it("finds an EventBridge bus by its ARN (DescribeEventBus), and fails on one that does not exist", async () => {
            const calls: string[] = [];
            const outputs = outputsFile({ destinationArn: BUS_ARN, topicArn: undefined });
            const run = await doctor(["--outputs", outputs], {}, calls);
            assertReported(run, `✓ destination EventBridge bus exists — ${BUS_ARN}`, 0);
            assert.deepEqual(
                calls.filter((c) => c.startsWith("sns:") || c.startsWith("bus:")),
                [`bus:${BUS_ARN}`],
            );
            const gone = await doctor(["--outputs", outputs], { buses: [] });
            assertReported(
                gone,
                `✗ destination EventBridge bus exists — ${BUS_ARN} does not exist: nothing the outbox publishes reaches a consumer; fix: create the bus again, or point the Outbox's eventBusArn at one that exists, then pulumi up`,
                1,
            );
        });

        it("takes the topic of a 0.1 stack's outputs, which have topicArn and no destinationArn", async () => {
            const calls: string[] = [];
            const run = await doctor(["--outputs", outputsFile({ destinationArn: undefined })], {}, calls);
            assert.ok(run.stdout.includes(`✓ destination SNS topic exists — ${TOPIC_ARN}`), run.stdout);
            assert.ok(calls.includes(`sns:${TOPIC_ARN}`));
            assert.equal(run.code, 0, run.stdout);
            const deadline = startDeadline("doctor", 10_000);
            try {
                assert.equal(
                    (await readStackOutputs(outputsFile({ destinationArn: undefined }), deadline)).destinationArn,
                    undefined,
                );
            } finally {
                deadline.dispose();
            }
        });

        it("says a FIFO topic is FIFO", async () => {
            const fifo = "arn:aws:sns:us-east-1:123456789012:orders-events.fifo";
            const run = await doctor(["--outputs", outputsFile({ destinationArn: fifo, topicArn: fifo })], {
                topics: { [fifo]: { FifoTopic: "true" } },
            });
            assert.ok(run.stdout.includes(`✓ destination SNS topic exists — ${fifo} (FIFO)`), run.stdout);
        });

        it("fails on an ARN that names no destination, with the fix", async () => {
            const run = await doctor(["--outputs", outputsFile({ destinationArn: "arn:aws:sqs:us-east-1:1:t" })]);
            assert.match(
                run.stdout,
                /✗ destination exists — arn:aws:sqs:us-east-1:1:t is not an SNS topic, SQS queue or EventBridge bus ARN; fix: write the outputs again with pulumi stack output --json/,
            );
            assert.equal(run.code, 1);
        });
    });

    it("fails on a mapping with no on-failure destination also when the outputs give no dlqArn", async () => {
        const run = await doctor(["--outputs", outputsFile({ dlqArn: undefined })], {
            mappings: [mapping({ DestinationConfig: undefined })],
        });
        assert.match(
            run.stdout,
            /✗ mapping has its on-failure destination — none: .*OnFailure=\{Destination=<dlq arn>\}/,
        );
        assert.equal(run.code, 1);
    });

    it("fails on a DLQ that holds messages, naming the redrive command", async () => {
        const queueUrl = (await fauxqs.createQueue(`cli-doctor-full-${Date.now()}`)).queueUrl;
        await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "{}" }));
        const run = await doctor(["--outputs", outputsFile({ dlqUrl: queueUrl })]);
        assert.match(
            run.stdout,
            new RegExp(
                `✗ DLQ is empty — 1 message\\(s\\) dead-lettered; .*dynamodb-outbox redrive --table ${table} --dlq-url ${queueUrl.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`,
            ),
        );
        assert.equal(run.code, 1);
    });

    it("fails on an old pending record, read from ClaimIndex, and passes it with a larger --max-pending-age", async () => {
        const old = await createOutboxTable({}, "cli-doctor-old");
        try {
            await useTable(old);
            const createdAt = Date.now() - 10 * 60_000;
            await (
                await dynamoClient()
            ).send(
                new PutItemCommand({
                    TableName: old,
                    Item: {
                        [ATTR.pk]: { S: "P" },
                        [ATTR.sk]: { S: "OUTBOX#x" },
                        [ATTR.claimSort]: { S: `${String(createdAt).padStart(19, "0")}#${"1".padStart(20, "0")}` },
                    },
                }),
            );
            const run = await doctor(["--outputs", outputsFile({ tableName: old })]);
            assert.match(
                run.stdout,
                /✗ oldest pending record is younger than 300.0 s — 600\.\d s old: neither the publisher nor the sweeper delivered it/,
            );
            assert.equal(run.code, 1);
            const relaxed = await doctor(["--outputs", outputsFile({ tableName: old }), "--max-pending-age", "900"]);
            assert.match(relaxed.stdout, /✓ oldest pending record is younger than 900.0 s — 600\.\d s old/);
            assert.equal(relaxed.code, 0, relaxed.stdout);
        } finally {
            await dropTable(old);
        }
    });

    it("with --table alone checks the table and the mapping by the table's stream, and skips what needs the outputs (exit 1)", async () => {
        const calls: string[] = [];
        const run = await doctor(["--table", table], { mappings: [] }, calls);
        assert.ok(
            calls.some((c) => c.startsWith('lambda:{"EventSourceArn":"arn:aws:dynamodb:')),
            calls.join("\n"),
        );
        assert.match(run.stdout, /- DLQ is empty — no DLQ URL: pass --outputs with dlqUrl/);
        assert.match(
            run.stdout,
            /- destination exists — no destination: pass --outputs with destinationArn \(a stack of 0\.1 has topicArn instead\)/,
        );
        assert.match(
            run.stdout,
            /- sweeper schedule rule is enabled — no sweeper function: pass --outputs with sweeperFunctionName/,
        );
        assert.match(
            run.stdout,
            /- publisher has no Errors \(last 15 min\) — no publisher function: pass --outputs with publisherFunctionName/,
        );
        assert.equal(run.code, 1);
    });

    it("fails a line whose call is refused, naming the permission", async () => {
        const run = await doctor(["--outputs", outputsFile()], { lambdaError: true, metricsError: true });
        assert.match(
            run.stdout,
            /✗ publisher event source mapping — ListEventSourceMappings failed: AccessDeniedException: not allowed; the tool needs lambda:ListEventSourceMappings/,
        );
        assert.match(
            run.stdout,
            /✗ publisher has no Errors \(last 15 min\) — GetMetricStatistics failed: AccessDenied: not allowed; the tool needs cloudwatch:GetMetricStatistics/,
        );
        assert.equal(run.code, 1);
    });

    it("fails on a missing table", async () => {
        const run = await doctor(["--table", "no-such-outbox-table"]);
        assert.match(run.stdout, /✗ table "no-such-outbox-table" exists and is ACTIVE — not found/);
        assert.equal(run.code, 1);
    });

    it("names the package to install when an SDK client does not resolve", async () => {
        const aws = loadDoctorAws({ region: "us-east-1" }, (name) => {
            throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
        });
        assert.deepEqual(
            [aws.lambda, aws.eventBridge, aws.cloudWatch, aws.sns],
            [
                { missing: "@aws-sdk/client-lambda" },
                { missing: "@aws-sdk/client-eventbridge" },
                { missing: "@aws-sdk/client-cloudwatch" },
                { missing: "@aws-sdk/client-sns" },
            ],
        );
        const io = { ...captureIo({ ...LOCAL_ENV }), doctorAws: () => aws };
        const code = await main(
            [
                "doctor",
                "--outputs",
                outputsFile(),
                "--endpoint",
                await dynamoEndpoint(),
                "--sqs-endpoint",
                fauxqs.endpoint,
            ],
            io,
        );
        assert.match(
            io.output(),
            /- publisher event source mapping — needs @aws-sdk\/client-lambda: npm install @aws-sdk\/client-lambda/,
        );
        assert.match(io.output(), /- sweeper schedule rule is enabled — needs @aws-sdk\/client-eventbridge/);
        assert.match(io.output(), /- publisher IteratorAge .* — needs @aws-sdk\/client-cloudwatch/);
        assert.match(
            io.output(),
            /- destination SNS topic exists — needs @aws-sdk\/client-sns: npm install @aws-sdk\/client-sns/,
        );
        assert.equal(code, 1);
    });

    it("builds a port from an SDK package that resolves: its client sends the named command with the input", async () => {
        // A fake SDK module, to see exactly what the port hands the client.
        const sent: unknown[] = [];
        class LambdaClient {
            constructor(readonly config: object) {}
            async send(command: { input: object; name: string }) {
                sent.push([this.config, command.name, command.input]);
                return { EventSourceMappings: [] };
            }
            destroy() {}
        }
        class ListEventSourceMappingsCommand {
            readonly name = "ListEventSourceMappings";
            constructor(readonly input: object) {}
        }
        const aws = loadDoctorAws({ region: "eu-west-1" }, (name) => {
            if (name === "@aws-sdk/client-lambda") return { LambdaClient, ListEventSourceMappingsCommand };
            throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
        });
        assert.ok("port" in aws.lambda);
        assert.deepEqual(await aws.lambda.port.listEventSourceMappings({ FunctionName: "f" }), {
            EventSourceMappings: [],
        });
        assert.deepEqual(sent, [
            [{ region: "eu-west-1", maxAttempts: 5 }, "ListEventSourceMappings", { FunctionName: "f" }],
        ]);
        assert.deepEqual(aws.cloudWatch, { missing: "@aws-sdk/client-cloudwatch" });
        aws.destroy();
    });

    const badArgs: [string, string[], RegExp][] = [
        ["neither --table nor --outputs", ["doctor"], /doctor needs --table <name> or --outputs <file>/],
        [
            "both --table and --outputs",
            ["doctor", "--table", "orders", "--outputs", "o.json"],
            /--table and --outputs were both given; give one/,
        ],
        [
            "a bad --max-pending-age",
            ["doctor", "--table", "orders", "--max-pending-age", "soon"],
            /--max-pending-age must be a positive number of seconds, got "soon"/,
        ],
        ["a verify flag", ["doctor", "--table", "orders", "--expiry", "2"], /--expiry is not a flag of "doctor"/],
    ];
    for (const [name, argv, pattern] of badArgs) {
        it(`exits 2 on ${name}`, async () => {
            const io = captureIo({ ...LOCAL_ENV });
            assert.equal(await main(argv, io), 2);
            assert.match(io.errors(), pattern);
            assert.match(io.errors(), /usage: dynamodb-outbox/);
        });
    }

    it("exits 2 naming the file on an outputs file it cannot use", async () => {
        const cases: [string, RegExp][] = [
            ["not json", /is not JSON; write it with: pulumi stack output --json >/],
            ["[1]", /is not a JSON object of stack outputs/],
            ["{}", /has no tableName \(the Outbox component's tableName output\)/],
            ['{"tableName":"t","dlqUrl":5}', /has dlqUrl 5; expected a non-empty string/],
        ];
        for (const [text, pattern] of cases) {
            const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
            writeFileSync(file, text);
            const io = captureIo({ ...LOCAL_ENV });
            assert.equal(await main(["doctor", "--outputs", file], io), 2, io.errors());
            assert.match(io.errors(), pattern);
            assert.ok(io.errors().includes(`--outputs "${file}"`));
        }
        const deadline = startDeadline("doctor", 10_000);
        try {
            await assert.rejects(
                readStackOutputs(join(dir, "missing.json"), deadline),
                (e: unknown) => isOutboxError(e, "INVALID_CONFIG") && /cannot be read/.test((e as Error).message),
            );
        } finally {
            deadline.dispose();
        }
    });
});
