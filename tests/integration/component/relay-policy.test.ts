/**
 * The publisher's and the sweeper's roles grant exactly what their code calls (issue 39). Real runs of
 * `createPublisher` and `createSweeper` on DynamoDB Local, with the AWS fault server as the destination and DLQ
 * (it stands in for EventBridge, which has no emulator, and refuses entries on demand) and with fauxqs (SNS, SQS
 * and S3, the publisher fed by the local event source mapping from the table's real stream), record every command
 * their SDK clients send, at the clients' middleware stacks. Each command is turned into the IAM authorizations AWS
 * checks for it (tests/support/iam-recording.ts) and mapped onto the ARNs of an `Outbox` declared under Pulumi's
 * mocks with the same destination. Then:
 * - every recorded authorization is allowed by the role's statements, action and resource;
 * - every action the role grants was recorded in at least one scenario (the destination's actions in a scenario
 *   of that destination), but for {@link PLATFORM_ACTIONS}: what Lambda itself does with the role.
 * The writer's policy (`writerPolicy`, with `largePayloads`) is held to the same two rules against the writes
 * of the fauxqs run, its claim check's S3 puts included.
 *
 * Not proven here: KMS (no emulator enforces a key; the grants on it are in tests/integration/component/iam.test.ts).
 */
import assert from "node:assert/strict";
import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { dateFollowsClock, LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { startFauxqs, type LocalFauxqs } from "../../../dev/emulators/fauxqs";
import { createPayloadBucket, localPayloadObjects } from "../../../dev/emulators/local-s3";
import type { DestinationKind } from "../../../runtime/destination/kind";
import type { Logger } from "../../../runtime/ports";
import { createPublisher, type PublisherConfig } from "../../../runtime/relay/publisher";
import { createSweeper } from "../../../runtime/relay/sweeper";
import { startLocalEventSourceMapping } from "../../../runtime/testing/event-source-mapping";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { TYPE, buildOutbox, type BuiltOutbox } from "../../support/component-harness";
import { dynamoClient } from "../../support/dynamodb";
import {
    allowing,
    iamAuthorizations,
    recordCalls,
    type ArnAuthorization,
    type ArnOf,
    type GrantStatement,
    type LocalResourceKind,
    type RecordedCall,
} from "../../support/iam-recording";
import { unwrap } from "../../support/pulumi-mocks";
import { createHarness, type Harness } from "../../support/runtime/harness";
import { entryFault, publishedIds } from "../../support/runtime/relay-fixtures";
import { createOutboxTable } from "../../support/runtime/table";
import { destroyStreamsClients, streamsClient } from "../../support/stream-table";

type Role = "publisher" | "sweeper";

/**
 * Actions a role is granted that its code never calls, because Lambda calls them with the role: the event source
 * mapping lists the streams (`dynamodb:ListStreams`, in AWS's `AWSLambdaDynamoDBExecutionRole`; the local mapping
 * is given its stream and lists none), and the Lambda runtime writes the function's logs. The mapping's other stream
 * reads are recorded: the fauxqs scenario polls the stream through it with the publisher's clients.
 */
const PLATFORM_ACTIONS: Record<Role, readonly string[]> = {
    publisher: ["dynamodb:ListStreams", "logs:CreateLogStream", "logs:PutLogEvents"],
    sweeper: ["logs:CreateLogStream", "logs:PutLogEvents"],
};

/** The ARNs of a component declared under the mocks, and its roles' statements. */
interface Component {
    readonly tableArn: string;
    readonly streamArn: string;
    readonly destinationArn: string;
    readonly dlqArn: string;
    readonly payloadBucketArn?: string;
    readonly statements: Record<Role, GrantStatement[]>;
    readonly writer: GrantStatement[];
}

async function component(built: BuiltOutbox, name: string): Promise<Component> {
    const inline = (role: Role): GrantStatement[] => {
        const policies = built.one(TYPE.role, `${name}-${role}-role`).inputs.inlinePolicies as { policy: string }[];
        assert.equal(policies.length, 1);
        return (JSON.parse(policies[0]!.policy) as { Statement: GrantStatement[] }).Statement;
    };
    const bucket = built.resources.find((r) => r.type === "aws:s3/bucket:Bucket");
    return {
        tableArn: await unwrap(built.outbox.tableArn),
        streamArn: await unwrap(built.outbox.streamArn),
        destinationArn: await unwrap(built.outbox.destinationArn),
        dlqArn: await unwrap(built.outbox.dlqArn),
        ...(bucket !== undefined ? { payloadBucketArn: bucket.computed!.arn as string } : {}),
        statements: { publisher: inline("publisher"), sweeper: inline("sweeper") },
        writer: (JSON.parse(await unwrap(built.outbox.writerPolicy)) as { Statement: GrantStatement[] }).Statement,
    };
}

/** The last segment of a queue's URL or ARN: its name. */
function queueName(urlOrArn: string): string {
    return urlOrArn.split(/[/:]/).at(-1)!;
}

/** The local resources of one run, as the component's ARNs. */
interface LocalWorld {
    readonly tableName: string;
    readonly kind: DestinationKind;
    /** The topic's or the bus's ARN, or the destination queue's URL or ARN. */
    readonly destination: string;
    readonly dlqUrl: string;
    readonly bucket?: string;
}

function arnOf(world: LocalWorld, c: Component): ArnOf {
    return (kind: LocalResourceKind, local: string) => {
        const outboxs = (ok: boolean, arn: string | undefined): string => {
            if (ok && arn !== undefined) return arn;
            throw new Error(`the run named a ${kind} that is not its outbox's: ${local}`);
        };
        switch (kind) {
            case "table":
                return outboxs(local === world.tableName, c.tableArn);
            case "stream":
                return c.streamArn;
            case "queue":
                if (local === world.dlqUrl) return c.dlqArn;
                return outboxs(
                    world.kind === "sqs" && queueName(local) === queueName(world.destination),
                    c.destinationArn,
                );
            case "topic":
                return outboxs(world.kind === "sns" && local === world.destination, c.destinationArn);
            case "bus":
                return outboxs(world.kind === "eventbridge" && local === world.destination, c.destinationArn);
            case "bucket":
                return outboxs(local === world.bucket, c.payloadBucketArn);
        }
    };
}

/** One scenario's recorded calls. */
interface Run {
    readonly scenario: string;
    readonly role: Role;
    readonly kind: DestinationKind;
    readonly calls: RecordedCall[];
    readonly world: LocalWorld;
}

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Clients on the harness's DynamoDB Local and fault server that record what they send into `calls`, as config
 * overrides, and a `destroy` for the ones made here.
 */
async function recordingClients(
    h: Harness,
    calls: RecordedCall[],
): Promise<{ overrides: Partial<PublisherConfig>; destroy(): void }> {
    const dynamodb = recordCalls(await dynamoClient(), calls);
    // As the harness's own client: DynamoDB's clock, which the sweeper reads, moves with the test's.
    dateFollowsClock(dynamodb.middlewareStack, h.clock);
    const local = { endpoint: h.server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 };
    const sns = recordCalls(new SNSClient(local), calls);
    const sqs = recordCalls(new SQSClient(local), calls);
    const eventBridge = recordCalls(new EventBridgeClient(local), calls);
    return {
        overrides: { dynamodb, sns, sqs, eventBridge, logger: quiet, writeMetrics: () => undefined },
        destroy() {
            sns.destroy();
            sqs.destroy();
            eventBridge.destroy();
        },
    };
}

/** A scenario on a harness: `run` gets the harness and a config whose clients record. */
interface Scenario {
    readonly name: string;
    readonly role: Role;
    readonly kinds: readonly DestinationKind[];
    run(h: Harness, config: (overrides?: Partial<PublisherConfig>) => PublisherConfig): Promise<void>;
}

const SWEEP_AFTER_MS = 121_000;

const SCENARIOS: readonly Scenario[] = [
    {
        name: "keyless, then the same batch redelivered",
        role: "publisher",
        kinds: ["sns", "sqs", "eventbridge"],
        async run(h, config) {
            const { messageIds } = await h.writer.write({
                messages: [1, 2, 3].map((n) => ({ partition: `ORDER#${n}`, type: "T", payload: n })),
            });
            const event = await h.streamEvent();
            assert.deepEqual(await createPublisher(config())(event), { batchItemFailures: [] });
            assert.deepEqual(await createPublisher(config())(event), { batchItemFailures: [] });
            assert.deepEqual(publishedIds(h).sort(), [...messageIds].sort());
        },
    },
    {
        name: "keyed (the claim path)",
        role: "publisher",
        kinds: ["sns", "sqs", "eventbridge"],
        async run(h, config) {
            const { messageIds } = await h.writer.write({
                messages: [0, 1, 2].map((n) => ({ partition: "ACCOUNT#1", type: "T", payload: n, orderingKey: "a" })),
            });
            assert.deepEqual(await createPublisher(config())(await h.streamEvent()), { batchItemFailures: [] });
            assert.deepEqual(publishedIds(h), messageIds);
        },
    },
    {
        name: "expired records, keyless and keyed, to the DLQ",
        role: "publisher",
        kinds: ["sns"],
        async run(h, config) {
            const at = new Date(h.clock.now() + 1_000);
            await h.writer.write({
                messages: [
                    { partition: "P", type: "T", payload: "late", expiresAt: at },
                    { partition: "Q", type: "T", payload: "late-keyed", orderingKey: "k", expiresAt: at },
                ],
            });
            h.clock.advance(5_000);
            assert.deepEqual(await createPublisher(config())(await h.streamEvent()), { batchItemFailures: [] });
            assert.deepEqual(
                h.deadLetters().map((d) => d.reason),
                ["expired", "expired"],
            );
        },
    },
    {
        name: "a record refused until maxPublishAttempts, to the DLQ",
        role: "publisher",
        kinds: ["sns"],
        async run(h, config) {
            const { messageIds } = await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
            h.server.setFaults({
                entries: [entryFault(messageIds[0]!, { code: "InvalidParameter", senderFault: true })],
            });
            const event = await h.streamEvent();
            await createPublisher(config({ maxPublishAttempts: 2 }))(event);
            await createPublisher(config({ maxPublishAttempts: 2 }))(event);
            assert.deepEqual(
                h.deadLetters().map((d) => d.reason),
                ["publish-rejected"],
            );
        },
    },
    {
        name: "missed records, keyless and keyed",
        role: "sweeper",
        kinds: ["sns", "sqs", "eventbridge"],
        async run(h, config) {
            const { messageIds } = await h.writer.write({
                messages: [
                    { partition: "ORDER#1", type: "T", payload: 1 },
                    { partition: "ACCOUNT#1", type: "T", payload: 2, orderingKey: "a" },
                ],
            });
            h.clock.advance(SWEEP_AFTER_MS);
            const result = await createSweeper(config())();
            assert.equal(result.published, 2);
            assert.deepEqual(publishedIds(h).sort(), [...messageIds].sort());
        },
    },
    {
        name: "expired records, keyless and keyed, to the DLQ",
        role: "sweeper",
        kinds: ["sns"],
        async run(h, config) {
            const at = new Date(h.clock.now() + 1_000);
            await h.writer.write({
                messages: [
                    { partition: "P", type: "T", payload: "a", expiresAt: at },
                    { partition: "Q", type: "T", payload: "b", expiresAt: at, orderingKey: "k" },
                ],
            });
            h.clock.advance(2_000);
            assert.equal((await createSweeper(config())()).expired, 2);
        },
    },
    {
        name: "a record refused until maxPublishAttempts, to the DLQ",
        role: "sweeper",
        kinds: ["sns"],
        async run(h, config) {
            const { messageIds } = await h.writer.write({ messages: [{ partition: "P", type: "T", payload: 1 }] });
            h.server.setFaults({
                entries: [entryFault(messageIds[0]!, { code: "InvalidParameter", senderFault: true })],
            });
            h.clock.advance(SWEEP_AFTER_MS);
            await createSweeper(config({ maxPublishAttempts: 1 }))();
            assert.deepEqual(
                h.deadLetters().map((d) => d.reason),
                ["publish-rejected"],
            );
        },
    },
];

const BUCKET = "iam-payloads";

/**
 * On fauxqs: a writer with `largePayloads` (its calls recorded for `writerPolicy`) writes a large payload, a small
 * one and a keyed one; the local event source mapping polls the table's real stream with the publisher's recording
 * streams client and invokes the publisher, which publishes the claim check's pointer to fauxqs's SNS.
 */
async function fauxqsRun(fauxqs: LocalFauxqs): Promise<{ publisher: Run; writer: Run }> {
    const ddb = await dynamoClient();
    const tableName = await createOutboxTable(ddb, "iam-relay");
    const streamArn = (await ddb.send(new DescribeTableCommand({ TableName: tableName }))).Table!.LatestStreamArn!;
    const topicArn = await fauxqs.createTopic("iam-events");
    const dlq = await fauxqs.createQueue("iam-dlq");
    const world: LocalWorld = { tableName, kind: "sns", destination: topicArn, dlqUrl: dlq.queueUrl, bucket: BUCKET };
    const objects = localPayloadObjects(fauxqs.endpoint);
    await createPayloadBucket(objects, BUCKET);

    const writerCalls: RecordedCall[] = [];
    const writer = new OutboxWriter({
        client: recordCalls(await dynamoClient(), writerCalls),
        tableName,
        address: topicArn,
        largePayloads: { objects: recordCalls(objects, writerCalls), bucket: BUCKET },
    });
    await writer.write({ messages: [{ partition: "ORDER#1", type: "Big", payload: { blob: "x".repeat(300_000) } }] });
    await writer.write({ messages: [{ partition: "ORDER#2", type: "Small", payload: { n: 2 } }] });
    await writer.write({ messages: [{ partition: "ACCOUNT#1", type: "Keyed", payload: { n: 3 }, orderingKey: "a" }] });
    assert.ok(
        writerCalls.some((c) => c.command === "PutObject"),
        "the large payload went to S3",
    );

    const calls: RecordedCall[] = [];
    const local = { endpoint: fauxqs.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const sns = recordCalls(new SNSClient(local), calls);
    const sqs = recordCalls(new SQSClient(local), calls);
    const publisher = createPublisher({
        dynamodb: recordCalls(await dynamoClient(), calls),
        sns,
        sqs,
        tableName,
        topicArn,
        dlqUrl: dlq.queueUrl,
        fifo: false,
        logger: quiet,
        writeMetrics: () => undefined,
    });
    const mapping = await startLocalEventSourceMapping({
        streamsClient: recordCalls(await streamsClient(), calls),
        streamArn,
        handler: publisher,
        batchSize: 100,
        pollIntervalMs: 10,
    });
    try {
        await mapping.drain();
    } finally {
        await mapping.stop();
        sns.destroy();
        sqs.destroy();
        objects.destroy();
    }
    assert.equal(
        calls
            .filter((c) => c.command === "PublishBatch")
            .flatMap((c) => c.input.PublishBatchRequestEntries as unknown[]).length,
        3,
        "the three records were published",
    );
    return {
        publisher: {
            scenario: "fauxqs: the local mapping on the real stream, a claim check",
            role: "publisher",
            kind: "sns",
            calls,
            world,
        },
        writer: {
            scenario: "fauxqs: writes with largePayloads",
            role: "publisher",
            kind: "sns",
            calls: writerCalls,
            world,
        },
    };
}

describe("the relay's roles grant exactly what its code calls (recorded runs on DynamoDB Local, the fault server and fauxqs)", function () {
    this.timeout(300_000);
    const runs: Run[] = [];
    let writerRun: Run;
    const components = new Map<DestinationKind, Component>();
    let fauxqs: LocalFauxqs | undefined;

    before(async function () {
        components.set("sns", await component(await buildOutbox("iamrunsns", { largePayloads: true }), "iamrunsns"));
        components.set(
            "sqs",
            await component(
                await buildOutbox("iamrunsqs", { queueArn: "arn:aws:sqs:eu-west-1:111111111111:orders-events" }),
                "iamrunsqs",
            ),
        );
        components.set(
            "eventbridge",
            await component(
                await buildOutbox("iamrunbus", {
                    eventBusArn: "arn:aws:events:eu-west-1:111111111111:event-bus/orders",
                }),
                "iamrunbus",
            ),
        );
        for (const s of SCENARIOS) {
            for (const kind of s.kinds) {
                const h = await createHarness({ destination: kind });
                const calls: RecordedCall[] = [];
                const clients = await recordingClients(h, calls);
                try {
                    await s.run(h, (overrides = {}) => h.config({ ...clients.overrides, ...overrides }));
                } finally {
                    clients.destroy();
                    await h.close();
                }
                const world = { tableName: h.tableName, kind, destination: h.destinationArn, dlqUrl: h.dlqUrl };
                runs.push({ scenario: `${s.role} ${kind}: ${s.name}`, role: s.role, kind, calls, world });
            }
        }
        fauxqs = await startFauxqs();
        const faux = await fauxqsRun(fauxqs);
        runs.push(faux.publisher);
        writerRun = faux.writer;
    });

    after(async function () {
        destroyStreamsClients();
        await fauxqs?.stop();
    });

    /** The authorizations `run` recorded, on its component's ARNs. */
    const authorizations = (run: Run): ArnAuthorization[] =>
        run.calls.flatMap((call) => iamAuthorizations(call, arnOf(run.world, components.get(run.kind)!)));

    for (const role of ["publisher", "sweeper"] as const) {
        it(`allows every call the ${role} made, action and resource, for each destination kind`, function () {
            const denied: string[] = [];
            for (const run of runs.filter((r) => r.role === role)) {
                const statements = components.get(run.kind)!.statements[role];
                for (const a of authorizations(run))
                    if (allowing(statements, a).length === 0)
                        denied.push(`${run.scenario}: ${a.action} on ${a.resource}`);
            }
            assert.ok(runs.some((r) => r.role === role));
            assert.deepEqual([...new Set(denied)], []);
        });

        it(`grants the ${role} no action its runs did not call, but what Lambda calls with the role`, function () {
            const unused: string[] = [];
            for (const [kind, c] of components) {
                const ofRole = runs.filter((r) => r.role === role);
                const called = (kinds: readonly DestinationKind[]) =>
                    new Set(
                        ofRole
                            .filter((r) => kinds.includes(r.kind))
                            .flatMap((r) => authorizations(r).map((a) => a.action)),
                    );
                for (const s of c.statements[role]) {
                    // A destination's actions count only in runs on that kind of destination.
                    const onDestination = s.Resource.includes(c.destinationArn);
                    const seen = called(onDestination ? [kind] : ["sns", "sqs", "eventbridge"]);
                    for (const action of s.Action)
                        if (!seen.has(action) && !PLATFORM_ACTIONS[role].includes(action))
                            unused.push(`${kind} ${s.Sid}: ${action}`);
                }
            }
            assert.deepEqual(unused, []);
        });
    }

    it("records the stream reads the mapping makes with the publisher's role, and no S3 call by the relay", function () {
        const actions = new Set(runs.flatMap((r) => authorizations(r).map((a) => a.action)));
        for (const read of ["dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords"])
            assert.ok(actions.has(read), read);
        assert.deepEqual(
            [...actions].filter((a) => a.startsWith("s3:")),
            [],
            "the relay publishes the claim check's pointer, never reads the payload",
        );
    });

    it("writerPolicy allows every call the writer made, its claim check's S3 put included, and grants nothing it did not call", function () {
        const c = components.get("sns")!;
        const recordedAuthorizations = authorizations(writerRun);
        const denied = recordedAuthorizations.filter((a) => allowing(c.writer, a).length === 0);
        assert.deepEqual(denied, []);
        const called = new Set(recordedAuthorizations.map((a) => a.action));
        assert.deepEqual(
            [...new Set(c.writer.flatMap((s) => s.Action))].filter((a) => !called.has(a)),
            [],
        );
        assert.ok(called.has("s3:PutObject"));
    });
});
