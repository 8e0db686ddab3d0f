/**
 * `doctor`'s Lambda, EventBridge, CloudWatch and SNS ports built from the real SDK clients (EventBridge's and SNS's
 * are dependencies of this package; Lambda's and CloudWatch's optional peers, installed here as devDependencies). A local HTTP server stands in for the four services: it answers each call a port makes in the
 * service's own wire protocol (SNS's is awsQuery: a form body, an XML answer), and records what the clients sent.
 */
import * as assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DOCTOR_PACKAGES, loadDoctorAws } from "../../../cli/doctor/aws";

const TOPIC_ARN = "arn:aws:sns:eu-west-1:123456789012:orders-events.fifo";
const BUS_ARN = "arn:aws:events:eu-west-1:123456789012:event-bus/orders";

interface Seen {
    readonly method: string;
    readonly path: string;
    readonly target: string;
    readonly body: string;
}

async function read(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString("latin1");
}

describe("doctor's SDK clients (real @aws-sdk packages, a local HTTP stand-in)", function () {
    let server: Server;
    let endpoint = "";
    const seen: Seen[] = [];

    before(async function () {
        server = createServer((req, res) => {
            void read(req).then((body) => {
                const target = String(req.headers["x-amz-target"] ?? "");
                seen.push({ method: req.method ?? "", path: req.url ?? "", target, body });
                if ((req.url ?? "").startsWith("/2015-03-31/event-source-mappings")) {
                    res.writeHead(200, { "content-type": "application/json" });
                    res.end(
                        JSON.stringify({
                            EventSourceMappings: [{ UUID: "m-1", State: "Enabled", StartingPosition: "TRIM_HORIZON" }],
                        }),
                    );
                } else if (target === "AWSEvents.ListRuleNamesByTarget") {
                    res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
                    res.end(JSON.stringify({ RuleNames: ["orders-sweeper-schedule"] }));
                } else if (target === "AWSEvents.DescribeRule") {
                    res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
                    res.end(
                        JSON.stringify({
                            Name: "orders-sweeper-schedule",
                            State: "ENABLED",
                            ScheduleExpression: "rate(1 minute)",
                        }),
                    );
                } else if (target === "AWSEvents.DescribeEventBus") {
                    res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
                    res.end(JSON.stringify({ Name: "orders", Arn: BUS_ARN }));
                } else if (body.includes("Action=GetTopicAttributes")) {
                    res.writeHead(200, { "content-type": "text/xml" });
                    res.end(
                        `<GetTopicAttributesResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><GetTopicAttributesResult><Attributes>` +
                            `<entry><key>TopicArn</key><value>${TOPIC_ARN}</value></entry>` +
                            `<entry><key>FifoTopic</key><value>true</value></entry>` +
                            `</Attributes></GetTopicAttributesResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></GetTopicAttributesResponse>`,
                    );
                } else if (target === "GraniteServiceVersion20100801.GetMetricStatistics") {
                    res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
                    res.end(
                        JSON.stringify({ Label: "IteratorAge", Datapoints: [{ Maximum: 1234, Unit: "Milliseconds" }] }),
                    );
                } else {
                    res.writeHead(400, { "content-type": "application/json" });
                    res.end(
                        JSON.stringify({
                            __type: "UnknownOperation",
                            message: `no stand-in for ${req.method} ${req.url} ${target}`,
                        }),
                    );
                }
            });
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    after(async function () {
        await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it("every SDK client doctor needs resolves here (no check is skipped); EventBridge's and SNS's are dependencies, Lambda's and CloudWatch's optional peers", function () {
        const aws = loadDoctorAws({
            region: "eu-west-1",
            credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
            endpoint,
        });
        try {
            for (const [name, port] of Object.entries({
                lambda: aws.lambda,
                eventBridge: aws.eventBridge,
                cloudWatch: aws.cloudWatch,
                sns: aws.sns,
            })) {
                assert.ok("port" in port, `${name}: ${"missing" in port ? `missing ${port.missing}` : ""}`);
            }
            // eslint-disable-next-line @typescript-eslint/no-require-imports -- the manifest, read as the doctor reads it
            const pkg = require("../../../package.json") as {
                dependencies: Record<string, string>;
                peerDependencies: Record<string, string>;
                peerDependenciesMeta: Record<string, { optional?: boolean }>;
                devDependencies: Record<string, string>;
            };
            for (const name of [DOCTOR_PACKAGES.eventBridge, DOCTOR_PACKAGES.sns])
                assert.ok(pkg.dependencies[name], `${name} is a dependency (the runtime sends through it)`);
            for (const name of [DOCTOR_PACKAGES.lambda, DOCTOR_PACKAGES.cloudWatch]) {
                assert.equal(pkg.dependencies[name], undefined, `${name} is not a dependency: only doctor uses it`);
                assert.match(pkg.peerDependencies[name] ?? "", /^\^3\./, `${name} is a peer, with a caret range`);
                assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} is an optional peer`);
                assert.ok(pkg.devDependencies[name], `${name} is a devDependency, so the tests have it`);
            }
        } finally {
            aws.destroy();
        }
    });

    it("each port sends its call in the service's protocol and reads the answer", async function () {
        const aws = loadDoctorAws({
            region: "eu-west-1",
            credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
            endpoint,
        });
        try {
            assert.ok(
                "port" in aws.lambda && "port" in aws.eventBridge && "port" in aws.cloudWatch && "port" in aws.sns,
            );
            const mappings = await aws.lambda.port.listEventSourceMappings({ FunctionName: "orders-publisher" });
            assert.deepEqual(
                mappings.EventSourceMappings?.map((m) => [m.UUID, m.State, m.StartingPosition]),
                [["m-1", "Enabled", "TRIM_HORIZON"]],
            );
            const rules = await aws.eventBridge.port.listRuleNamesByTarget({
                TargetArn: "arn:aws:lambda:eu-west-1:123456789012:function:orders-sweeper",
            });
            assert.deepEqual(rules.RuleNames, ["orders-sweeper-schedule"]);
            const rule = await aws.eventBridge.port.describeRule({ Name: "orders-sweeper-schedule" });
            assert.equal(rule.State, "ENABLED");
            const now = new Date("2026-12-01T00:00:00Z");
            const stats = await aws.cloudWatch.port.getMetricStatistics({
                Namespace: "AWS/Lambda",
                MetricName: "IteratorAge",
                Dimensions: [{ Name: "FunctionName", Value: "orders-publisher" }],
                StartTime: new Date(now.getTime() - 900_000),
                EndTime: now,
                Period: 300,
                Statistics: ["Maximum"],
            });
            assert.deepEqual(
                stats.Datapoints?.map((d) => d.Maximum),
                [1234],
            );

            assert.match(
                seen.find((s) => s.path.startsWith("/2015-03-31/event-source-mappings"))?.path ?? "",
                /FunctionName=orders-publisher/,
            );
            assert.match(
                seen.find((s) => s.target === "AWSEvents.ListRuleNamesByTarget")?.body ?? "",
                /"TargetArn":"arn:aws:lambda:eu-west-1:123456789012:function:orders-sweeper"/,
            );
            const bus = await aws.eventBridge.port.describeEventBus({ Name: BUS_ARN });
            assert.deepEqual([bus.Name, bus.Arn], ["orders", BUS_ARN]);
            assert.match(
                seen.find((s) => s.target === "AWSEvents.DescribeEventBus")?.body ?? "",
                new RegExp(`"Name":"${BUS_ARN.replace(/[/]/g, "\\/")}"`),
            );
            const topic = await aws.sns.port.getTopicAttributes({ TopicArn: TOPIC_ARN });
            assert.deepEqual(topic.Attributes, { TopicArn: TOPIC_ARN, FifoTopic: "true" });
            const snsCall = seen.find((s) => s.body.includes("Action=GetTopicAttributes"));
            assert.ok(snsCall, "SNS was called");
            assert.match(snsCall.body, new RegExp(`TopicArn=${encodeURIComponent(TOPIC_ARN)}`));
            const cw = seen.find((s) => s.target === "GraniteServiceVersion20100801.GetMetricStatistics");
            assert.ok(cw, "CloudWatch was called");
            assert.match(cw.body, /IteratorAge/);
        } finally {
            aws.destroy();
        }
    });
});
