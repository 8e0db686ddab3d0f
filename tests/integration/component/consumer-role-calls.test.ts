/**
 * The `OutboxConsumer`'s role grants exactly what its code calls (issue 39), in the style of relay-policy.test.ts.
 * The component is declared under Pulumi's mocks; its function, exactly as Pulumi serializes it, runs with the
 * environment the component set, on DynamoDB Local, on what the real publisher put on fauxqs's SNS (delivered through
 * the raw-delivery subscription the component declared, and delivered twice). Every DynamoDB command the function
 * sends is recorded (the client is built inside the serialized code, so the recorder wraps the SDK client class's
 * `send` for the span of each invocation, when nothing else in the process sends), turned into the IAM
 * authorizations AWS checks for it (tests/support/iam-recording.ts), and mapped onto the component's ARNs. Then:
 * - every recorded authorization is allowed by the role's statements, action and resource;
 * - every action the role grants was recorded, but for {@link PLATFORM_ACTIONS}: what Lambda itself calls with the
 *   role (the event source mapping's SQS calls, as AWS documents them; the runtime's logs). No emulator runs
 *   Lambda's poller.
 * The messages carry their source (the relay stamps it), so the inbox's default `legacyMarkerCheck` adds its
 * `ConditionCheck`. The same policy is held to a hand-written consumer's run in a `previousMarkerShards` window.
 *
 * With `payloadBucketArn`, the same for a claim-checked event (the writer offloads it to fauxqs's S3): the function
 * reads the payload with `s3:GetObject`, which the role's grant (exactly `readerPolicyDocument`'s statements) allows,
 * and applies it once through a redelivery; without the arg, the same event fails with an `INVALID_CONFIG` that
 * names it. Every S3 command is recorded as the DynamoDB ones are (on `S3Client`'s `send`).
 *
 * Not proven here: KMS (no emulator enforces a key; `payloadKmsKeyArn`'s `kms:Decrypt` statement is
 * readerPolicyDocument's, checked by tests/integration/component/inbox-consumer-policy.test.ts).
 */
import * as assert from "node:assert/strict";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { OutboxConsumer, type OutboxConsumerArgs } from "../../../components/consumer";
import { consumerPolicyDocument } from "../../../components/consumer-policy";
import { readerPolicyDocument } from "../../../components/payload-bucket";
import { createPayloadBucket, localPayloadObjects } from "../../../dev/emulators/local-s3";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { createInboxHandler, Inbox } from "../../../runtime";
import type { InboxHandler, LambdaSqsEvent } from "../../../runtime";
import { INBOX_ENV, inboxLambda } from "../../../runtime/inbox/lambda";
import { waitForRPCs } from "../../support/component-harness";
import { consumerWorld, effectCounter, publishOrders, useConsumerEnvironment } from "../../support/consumer-function";
import { dynamoClient, dynamoEndpoint } from "../../support/dynamodb";
import {
    allowing,
    iamAuthorizations,
    recordCalls,
    recordingSends,
    type ArnAuthorization,
    type GrantStatement,
    type RecordedCall,
} from "../../support/iam-recording";
import { recordedNamed, unwrap } from "../../support/pulumi-mocks";
import { createConsumerTable } from "../../support/runtime/table";
import { entryText, loadSerialized } from "../../support/serialized";
import { applyThroughRedelivery } from "../../support/sqs-lambda";

/**
 * What the role is granted for Lambda to call with it, not the function's code: the event source mapping receives,
 * deletes and reads the queue's attributes (AWS's `AWSLambdaSQSQueueExecutionRole`), and the Lambda runtime writes
 * the function's logs.
 */
const PLATFORM_ACTIONS = [
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:ReceiveMessage",
    "logs:CreateLogStream",
    "logs:PutLogEvents",
] as const;

describe("the OutboxConsumer's role grants exactly what its code calls (its serialized function on DynamoDB Local and fauxqs)", function () {
    this.timeout(120_000);
    const world = consumerWorld();
    const calls: RecordedCall[] = [];
    let statements: GrantStatement[];
    let inboxTable: string;
    let ownTable: string;
    let inboxTableArn: string;
    let queueArn: string;
    let ownTableArn: string;
    let delivered: LambdaSqsEvent;
    const arnOf = (kind: string, local: string): string => {
        assert.equal(kind, "table");
        if (local === inboxTable) return inboxTableArn;
        if (local === ownTable) return ownTableArn;
        throw new Error(`the consumer called a table it was given no name of: ${local}`);
    };
    const authorizations = (): ArnAuthorization[] => calls.flatMap((c) => iamAuthorizations(c, arnOf));

    before(async () => {
        const fauxqs = await world.fauxqs();
        const topicArn = await fauxqs.createTopic(`consumer-role-${Date.now()}`);
        const ddb = await dynamoClient();
        inboxTable = await createConsumerTable(ddb, "consumer-role-inbox");
        ownTable = await createConsumerTable(ddb, "consumer-role-own");
        ownTableArn = `arn:aws:dynamodb:eu-west-1:111111111111:table/${ownTable}`;

        // The user's writes go to a table of its own: their grant is the user's, not the component's.
        const own = ownTable;
        const consume: OutboxConsumerArgs["consume"] = (message) => [
            { Put: { TableName: own, Item: { PK: { S: `EFFECT#${message.outboxId}` }, SK: { S: "META" } } } },
        ];
        const consumer = new OutboxConsumer("crole", { destinationArn: topicArn, consume, inboxTableName: inboxTable });
        await waitForRPCs();
        const mine = recordedNamed("crole");
        const role = mine.find((r) => r.type === "aws:iam/role:Role")!;
        const policies = mine.filter(
            (r) => r.type === "aws:iam/rolePolicy:RolePolicy" && r.inputs.role === role.computed!.name,
        );
        assert.deepEqual(policies.map((p) => p.name).sort(), ["crole-consume-policy", "crole-logs-policy"]);
        statements = policies.flatMap(
            (p) => (JSON.parse(p.inputs.policy as string) as { Statement: GrantStatement[] }).Statement,
        );
        queueArn = mine.find((r) => r.type === "aws:sqs/queue:Queue" && r.name === "crole-queue")!.computed!.arn;
        inboxTableArn = await unwrap(consumer.inboxTableArn);

        const fn = mine.find((r) => r.type === "aws:lambda/function:Function")!;
        const subscription = mine.find((r) => r.type === "aws:sns/topicSubscription:TopicSubscription")!;
        const queue = await fauxqs.createQueue(`consumer-role-${Date.now()}`);
        await fauxqs.subscribe(topicArn, queue.queueArn, {
            rawMessageDelivery: subscription.inputs.rawMessageDelivery as boolean,
        });
        await useConsumerEnvironment(fn.inputs.environment.variables as Record<string, string>);
        const handler = loadSerialized<InboxHandler>(await entryText(fn));

        const h = await world.harness();
        const dlq = await fauxqs.createQueue(`consumer-role-dlq-${Date.now()}`);
        await publishOrders(h, { sns: fauxqs.sns, sqs: fauxqs.sqs, topicArn, dlqUrl: dlq.queueUrl });

        // Applied, then (the answer lost) delivered again: a duplicate.
        const recorded = (event: LambdaSqsEvent) => recordingSends(DynamoDBClient, calls, () => handler(event));
        delivered = (await applyThroughRedelivery(fauxqs.sqs, queue, recorded, 2)).first;
    });
    it("allows every call the function made, action and resource, the legacyMarkerCheck's ConditionCheck included", () => {
        assert.ok(calls.length >= 4, "two applied, two duplicates");
        const all = authorizations();
        assert.ok(
            all.some((a) => a.action === "dynamodb:ConditionCheckItem" && a.resource === inboxTableArn),
            "the messages carry their source: the default legacyMarkerCheck checks the older marker key",
        );
        for (const a of all.filter((x) => x.resource !== ownTableArn)) {
            assert.ok(allowing(statements, a).length > 0, `the role does not allow ${a.action} on ${a.resource}`);
        }
        assert.deepEqual(
            [...new Set(all.map((a) => a.resource))].sort(),
            [inboxTableArn, ownTableArn].sort(),
            "the consumer's own table is the only other resource: its grant is the user's",
        );
        assert.equal(
            statements.filter((s) => s.Resource.includes(ownTableArn)).length,
            0,
            "and the role grants nothing on it",
        );
    });

    it("grants no action the function did not call, but what Lambda calls with the role", () => {
        const called = new Set(authorizations().map((a) => a.action));
        const granted = [...new Set(statements.flatMap((s) => s.Action))].sort();
        assert.deepEqual(
            granted.filter((a) => !called.has(a) && !(PLATFORM_ACTIONS as readonly string[]).includes(a)),
            [],
        );
        assert.deepEqual(
            statements.find((s) => s.Action.includes("sqs:ReceiveMessage"))?.Resource,
            [queueArn],
            "the mapping's SQS actions, on the one queue",
        );
    });

    it("consumerPolicy also allows a hand-written consumer's calls in a previousMarkerShards window", async () => {
        const ddb = await dynamoClient();
        const table = await createConsumerTable(ddb, "consumer-role-window");
        const tableArn = `arn:aws:dynamodb:eu-west-1:111111111111:table/${table}`;
        const mine: RecordedCall[] = [];
        const client = recordCalls(
            new DynamoDBClient({
                region: LOCAL_REGION,
                endpoint: await dynamoEndpoint(),
                credentials: LOCAL_CREDENTIALS,
            }),
            mine,
        );
        const handler = createInboxHandler({
            inbox: new Inbox({
                client,
                consumer: "billing",
                tableName: table,
                markerShards: 4,
                previousMarkerShards: { shards: 1 },
            }),
            consume: () => [],
            logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
        });
        assert.deepEqual(await handler(delivered), { batchItemFailures: [] });
        assert.deepEqual(await handler(delivered), { batchItemFailures: [] });
        const policy = consumerPolicyDocument({ queueArn, inboxTableArn: tableArn }).Statement;
        const all = mine.flatMap((c) => iamAuthorizations(c, () => tableArn));
        assert.deepEqual(
            [...new Set(all.map((a) => a.action))].sort(),
            ["dynamodb:ConditionCheckItem", "dynamodb:PutItem"],
            "the marker's Put under both layouts, and the older key's check under both",
        );
        assert.ok(
            mine.some((c) => (c.input.TransactItems as unknown[]).length === 4),
            "each transaction: two Puts and two ConditionChecks",
        );
        for (const a of all) assert.ok(allowing(policy, a).length > 0, `consumerPolicy does not allow ${a.action}`);
    });
});

describe("with payloadBucketArn: the OutboxConsumer's serialized function applies a claim-checked event once, and its role allows exactly the S3 read", function () {
    this.timeout(120_000);
    const BUCKET = `consumer-claims-${Date.now()}`;
    const BUCKET_ARN = `arn:aws:s3:::${BUCKET}`;
    const world = consumerWorld([INBOX_ENV.payloadBucket, "AWS_ENDPOINT_URL_S3"]);
    let claimed: LambdaSqsEvent | undefined;

    it("resolves the pointer from the bucket, applies the writer's bytes once through a redelivery, and calls only what readerPolicyDocument grants", async () => {
        const fauxqs = await world.fauxqs();
        const s3 = localPayloadObjects(fauxqs.endpoint);
        await createPayloadBucket(s3, BUCKET);
        const topicArn = await fauxqs.createTopic(`consumer-claims-${Date.now()}`);
        const ddb = await dynamoClient();
        const table = await createConsumerTable(ddb, "consumer-claims");
        const tableArn = `arn:aws:dynamodb:eu-west-1:111111111111:table/${table}`;
        const consume = effectCounter("textLength", (payload: { text: string }) => payload.text.length);
        new OutboxConsumer("cclaims", {
            destinationArn: topicArn,
            consume,
            inboxTableName: table,
            payloadBucketArn: BUCKET_ARN,
        });
        await waitForRPCs();
        const mine = recordedNamed("cclaims");
        const role = mine.find((r) => r.type === "aws:iam/role:Role")!;
        const consumePolicy = mine.find(
            (r) => r.type === "aws:iam/rolePolicy:RolePolicy" && r.name === "cclaims-consume-policy",
        )!;
        assert.equal(consumePolicy.inputs.role, role.computed!.name);
        const statements = (JSON.parse(consumePolicy.inputs.policy as string) as { Statement: GrantStatement[] })
            .Statement;
        const queueArn = mine.find((r) => r.type === "aws:sqs/queue:Queue" && r.name === "cclaims-queue")!.computed!
            .arn;
        assert.deepEqual(
            statements.filter((s) => s.Action.some((a) => a.startsWith("s3:") || a.startsWith("kms:"))),
            readerPolicyDocument(BUCKET_ARN).Statement,
            "the reader grant, exactly: s3:GetObject on the payloads, no KMS without a key",
        );
        assert.deepEqual(
            statements,
            consumerPolicyDocument({ queueArn, inboxTableArn: tableArn, payloadBucketArn: BUCKET_ARN }).Statement,
        );

        const fn = mine.find((r) => r.type === "aws:lambda/function:Function")!;
        const environment = fn.inputs.environment.variables as Record<string, string>;
        assert.equal(environment[INBOX_ENV.payloadBucket], BUCKET, "the bucket's name, from its ARN");
        const queue = await fauxqs.createQueue(`consumer-claims-${Date.now()}`);
        const subscription = mine.find((r) => r.type === "aws:sns/topicSubscription:TopicSubscription")!;
        await fauxqs.subscribe(topicArn, queue.queueArn, {
            rawMessageDelivery: subscription.inputs.rawMessageDelivery as boolean,
        });
        await useConsumerEnvironment(environment, { AWS_ENDPOINT_URL_S3: fauxqs.endpoint });
        const handler = loadSerialized<InboxHandler>(await entryText(fn));

        // The writer offloads a payload past SNS's 256 KiB to the bucket; the real publisher sends the pointer.
        const h = await world.harness();
        const writer = new OutboxWriter({
            client: h.ddb,
            tableName: h.tableName,
            clock: h.clock,
            largePayloads: { objects: s3, bucket: BUCKET },
        });
        const text = "é".repeat(200_000);
        const { messageIds } = await writer.write({
            messages: [{ partition: "ORDER#large", type: "OrderPlaced", payload: { text } }],
        });
        const dlq = await fauxqs.createQueue(`consumer-claims-dlq-${Date.now()}`);
        const publisher = h.publisher({ sns: fauxqs.sns, sqs: fauxqs.sqs, topicArn, dlqUrl: dlq.queueUrl });
        assert.deepEqual(await publisher(await h.streamEvent()), { batchItemFailures: [] });

        const calls: RecordedCall[] = [];
        const recorded = (event: LambdaSqsEvent) => recordingSends(S3Client, calls, () => handler(event));
        const { first } = await applyThroughRedelivery(fauxqs.sqs, queue, recorded, 1);
        assert.ok(first.Records[0]!.body.length < 4096, "a pointer travelled, not the payload");
        claimed = first;

        const effect = await ddb.send(
            new GetItemCommand({
                TableName: table,
                Key: { PK: { S: `EFFECT#${messageIds[0]}` }, SK: { S: "META" } },
                ConsistentRead: true,
            }),
        );
        assert.deepEqual([effect.Item?.applied?.N, effect.Item?.textLength?.N], ["1", String(text.length)]);

        const all = calls.flatMap((c) =>
            iamAuthorizations(c, (kind, local) => {
                assert.deepEqual([kind, local], ["bucket", BUCKET]);
                return BUCKET_ARN;
            }),
        );
        assert.ok(all.length >= 1 && all.every((a) => a.action === "s3:GetObject"), "the function read the payload");
        for (const a of all)
            assert.ok(allowing(statements, a).length > 0, `the role does not allow ${a.action} on ${a.resource}`);
    });

    it("without payloadBucketArn, the same claim check is refused in plain sight: the record fails, and the logged INVALID_CONFIG names payloadBucketArn", async () => {
        assert.ok(claimed !== undefined, "the claim-checked event of the test above");
        // The function's factory as the component ships it, with the environment of a consumer given no bucket.
        const handler = inboxLambda(() => [], {
            [INBOX_ENV.tableName]: process.env[INBOX_ENV.tableName],
            [INBOX_ENV.consumer]: "cclaims-without",
        });
        const lines: string[] = [];
        const write = process.stdout.write;
        process.stdout.write = ((chunk: unknown) => lines.push(String(chunk)) > 0) as typeof process.stdout.write;
        let answer: Awaited<ReturnType<InboxHandler>>;
        try {
            answer = await handler(claimed);
        } finally {
            process.stdout.write = write;
        }
        assert.deepEqual(answer, { batchItemFailures: [{ itemIdentifier: claimed.Records[0]!.messageId }] });
        const logged = lines.map((l) => JSON.parse(l) as { code?: string; error?: string });
        const refusal = logged.find((l) => l.code === "INVALID_CONFIG");
        assert.ok(refusal, `an INVALID_CONFIG line in: ${lines.join("")}`);
        assert.match(refusal.error ?? "", /is a claim check \(its payload is in S3\)/);
        assert.match(refusal.error ?? "", /on an OutboxConsumer, set payloadBucketArn/);
    });
});
