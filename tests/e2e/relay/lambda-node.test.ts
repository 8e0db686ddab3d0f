/**
 * The publisher's archive, exactly as the component serializes it, run on Lambda's Node major (`nodejs22.x`: the
 * toolchain's Node 22, which runs the tests, see tests/support/lambda-node.ts) the way the Lambda runtime runs it:
 * each invocation in a process of that Node, from the archive's folder, with only `@aws-sdk` and `@smithy` on
 * `NODE_PATH`. The local event source mapping reads DynamoDB Local's real stream with the component's filter and
 * batch size and hands each batch to that process; the handler publishes to fauxqs (real SNS → SQS delivery) and
 * completes the records in DynamoDB Local. Nothing in between is a fake.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { type LocalInvocationContext } from "../../../runtime/testing/event-source-mapping";
import type { LambdaStreamEvent } from "../../../runtime/testing/stream-event";
import { unmarshalRecord } from "../../../runtime/record/codec";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { TYPE, buildOutbox } from "../../support/component-harness";
import { componentMappingOptions, destroyStreamsClients, outboxStreamMapping } from "../../support/stream-table";
import { createOutboxTable, scanRecordItems } from "../../support/runtime/table";
import { dynamoClient } from "../../support/dynamodb";
import { lambdaRuntimeModules } from "../../support/lambda-host";
import { LAMBDA_NODE_MAJOR, lambdaNode, majorOf } from "../../support/lambda-node";
import { entryText } from "../../support/serialized";
import { localLambdaEnvironment } from "../../support/local-environment";
import { writeKeyedAndKeyless } from "../../support/writer/world";

const INVOKE_HOST = path.join(__dirname, "fixtures", "invoke-host.js");

/** What one invocation's process reported. */
interface Invocation {
    readonly node: string;
    readonly result?: { batchItemFailures: { itemIdentifier: string }[] };
    readonly error?: { name?: string; code?: string; message: string };
}

/**
 * A stream handler that runs each batch in a fresh process of Lambda's Node (a cold start every time), from
 * `archiveDir`, with `environment` and the Lambda runtime's modules only. Asynchronous on purpose: fauxqs and the
 * mapping run in this process, and the child calls them.
 */
function processPerInvocation(
    archiveDir: string,
    work: string,
    environment: Record<string, string>,
    seen: Invocation[],
) {
    let n = 0;
    return async (event: LambdaStreamEvent, context: LocalInvocationContext) => {
        n += 1;
        const eventFile = path.join(work, `event-${n}.json`);
        const resultFile = path.join(work, `result-${n}.json`);
        fs.writeFileSync(eventFile, JSON.stringify(event));
        const child = spawn(
            lambdaNode().path,
            [INVOKE_HOST, eventFile, resultFile, String(context.getRemainingTimeInMillis())],
            {
                cwd: archiveDir,
                env: { PATH: process.env.PATH ?? "", NODE_PATH: lambdaRuntimeModules(work), ...environment },
                stdio: ["ignore", "ignore", "pipe"],
            },
        );
        let stderr = "";
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        const code = await new Promise<number | null>((resolve, reject) =>
            child.on("error", reject).on("close", resolve),
        );
        assert.ok(fs.existsSync(resultFile), `invocation ${n} exited ${code} without a result\n${stderr}`);
        const report = JSON.parse(fs.readFileSync(resultFile, "utf8")) as Invocation;
        seen.push(report);
        if (report.error)
            throw Object.assign(new Error(`invocation ${n}: ${report.error.message}`), {
                name: report.error.name ?? "Error",
            });
        return report.result!;
    };
}

describe("end to end on Lambda's Node: the serialized publisher archive in a process of its own per invocation", function () {
    this.timeout(180_000);
    let fauxqs: LocalFauxqs | undefined;
    let work: string;

    before(() => {
        work = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-lambda-node-"));
    });
    after(async () => {
        await fauxqs?.stop();
        destroyStreamsClients();
        fs.rmSync(work, { recursive: true, force: true });
    });

    it("publishes every record of the real stream once, keyed ones in order, and completes them all", async () => {
        const built = await buildOutbox("e2enode");
        const fn = built.one(TYPE.fn, "e2enode-publisher");
        const mapping = built.one(TYPE.mapping);
        const archiveDir = path.join(work, "publisher");
        fs.mkdirSync(archiveDir);
        fs.writeFileSync(path.join(archiveDir, "__index.js"), await entryText(fn));

        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "e2enode");
        fauxqs = await startFauxqs();
        const topicArn = await fauxqs.createTopic("node22-events");
        const subscriber = await fauxqs.createQueue("node22-subscriber");
        await fauxqs.subscribe(topicArn, subscriber.queueArn, { rawMessageDelivery: true });
        const dlq = await fauxqs.createQueue("node22-dlq");

        const environment = await localLambdaEnvironment(
            fn.inputs.environment.variables as Record<string, string>,
            { tableName, topicArn, dlqUrl: dlq.queueUrl },
            fauxqs.endpoint,
            {
                AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
            },
        );

        const writer = new OutboxWriter({ client: ddb, tableName, address: topicArn });
        const ids = await writeKeyedAndKeyless(writer, 24, (n) => (n % 4 === 0 ? `acct-${n % 8}` : undefined), {
            account: "ACCOUNT#1",
            orders: 3,
        });

        const invocations: Invocation[] = [];
        const esm = await outboxStreamMapping(
            ddb,
            tableName,
            processPerInvocation(archiveDir, work, environment, invocations),
            {
                ...componentMappingOptions(mapping),
                maximumRetryAttempts: 3,
            },
        );
        try {
            await esm.drain({ timeoutMs: 120_000 });
        } finally {
            await esm.stop();
        }

        const node = lambdaNode();
        assert.ok(invocations.length > 0);
        for (const invocation of invocations) {
            assert.equal(invocation.node, node.version, "each invocation ran on the Node the test chose");
            assert.equal(invocation.error, undefined);
            assert.deepEqual(invocation.result?.batchItemFailures, []);
        }
        assert.equal(majorOf(node.version), LAMBDA_NODE_MAJOR, "Lambda's nodejs22.x");

        const received = await fauxqs.receiveAll(subscriber.queueUrl, { expected: ids.length, timeoutMs: 15_000 });
        const got = received.map((m) => m.attributes["outbox.id"]);
        assert.deepEqual([...got].sort(), ids.map((w) => w.id).sort(), "every record once");
        for (const key of new Set(ids.flatMap((w) => (w.key ? [w.key] : [])))) {
            const expected = ids.filter((w) => w.key === key).map((w) => w.id);
            assert.deepEqual(
                got.filter((id) => expected.includes(id!)),
                expected,
                `order of ${key}`,
            );
        }
        const records = (await scanRecordItems(ddb, tableName)).map((item) => unmarshalRecord(item));
        assert.deepEqual(
            records.filter((r) => r.status !== "completed").map((r) => r.recordId),
            [],
            "every record completed",
        );
    });
});
