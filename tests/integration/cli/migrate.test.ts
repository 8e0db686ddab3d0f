import * as assert from "node:assert/strict";
import { CreateTableCommand, DescribeTableCommand, PutItemCommand, UpdateTableCommand } from "@aws-sdk/client-dynamodb";
import {
    CLAIM_INDEX,
    EXPIRY_INDEX,
    GLOBAL_SECONDARY_INDEXES,
    RECORD_ID_INDEX,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
} from "../../../runtime/schema";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import {
    createTestTable,
    createOutboxTableWithTtlOn,
    tablesDroppedAfterEach,
    outboxTableInput,
    provisioning,
    runCli,
    type Misprovision,
} from "../../support/cli";

const ALL_ACTIVE = GLOBAL_SECONDARY_INDEXES.map((i) => `${i.indexName}:${i.projectionType}:ACTIVE`).sort();
/** A table with the outbox's keys and nothing else: no index, no TTL, no stream. */
const UNPROVISIONED: Misprovision = {
    withoutIndexes: GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName),
    ttlOff: true,
    streamOff: true,
};

/** What a table provisioned from the schema looks like after a migration. */
const FULLY_PROVISIONED = { indexes: ALL_ACTIVE, stream: STREAM_VIEW_TYPE, ttl: `ENABLED:${TTL_ATTRIBUTE}` };

describe("cli: migrate on DynamoDB Local", function () {
    this.timeout(120_000);
    const tables = tablesDroppedAfterEach();

    it("finds nothing to do on a table provisioned from the schema, and exits 0", async () => {
        const table = await tables.create();
        const run = await runCli(["migrate", "--table", table, "--apply"]);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
            run.stdout,
            /nothing to do: the table matches the schema and no record needs a backfill \(0 item\(s\) scanned\)\./,
        );
    });

    it("plans every missing piece without changing anything, then applies it one index at a time (an empty table: confirmed by name), and a second --apply changes nothing", async () => {
        const client = await dynamoClient();
        const table = await tables.create(UNPROVISIONED);
        const before = await provisioning(client, table);

        const plan = await runCli(["migrate", "--table", table]);
        assert.equal(plan.code, 0, plan.stdout + plan.stderr);
        const steps = plan.stdout.split("\n").filter((l) => /^ {2}\d+\. /.test(l));
        assert.deepEqual(
            steps.map((l) => l.replace(/^ {2}\d+\. (\S+ \S+).*$/, "$1")),
            [
                "enable TTL",
                "enable the",
                `create ${EXPIRY_INDEX.indexName}`,
                `create ${RECORD_ID_INDEX.indexName}`,
                `create ${CLAIM_INDEX.indexName}`,
            ],
        );
        assert.match(plan.stdout, /nothing was changed\. Run again with --apply/);
        assert.deepEqual(await provisioning(client, table), before, "the plan changed the table");

        // An empty table without the indexes shows no sign of being an outbox: --apply needs its name again.
        const apply = await runCli(["migrate", "--table", table, "--apply", "--confirm-table", table]);
        assert.equal(apply.code, 0, apply.stdout + apply.stderr);
        assert.match(apply.stdout, /applied 5 step\(s\)/);
        // Each create waited for ACTIVE before the next one started (DynamoDB Local reports CREATING first).
        assert.match(
            apply.stdout,
            new RegExp(
                `waiting for ${EXPIRY_INDEX.indexName} ACTIVE: CREATING[\\s\\S]*create ${RECORD_ID_INDEX.indexName}`,
            ),
        );
        assert.deepEqual(await provisioning(client, table), FULLY_PROVISIONED);

        const again = await runCli(["migrate", "--table", table, "--apply", "--json"]);
        assert.equal(again.code, 0, again.stdout + again.stderr);
        const report = JSON.parse(again.stdout) as { ok: boolean; steps: unknown[]; mode: string };
        assert.deepEqual([report.ok, report.mode, report.steps], [true, "apply", []]);
        assert.deepEqual(await provisioning(client, table), FULLY_PROVISIONED);
    });

    it("refuses to recreate a KEYS_ONLY ClaimIndex without --recreate-claim-index, stating the consequence, and recreates it with the flag", async () => {
        const client = await dynamoClient();
        const table = await tables.create({ claimIndexProjection: "KEYS_ONLY" });
        const refused = await runCli(["migrate", "--table", table, "--apply"]);
        assert.equal(refused.code, 1);
        assert.match(refused.stdout, /refused: nothing was changed\./);
        assert.doesNotMatch(refused.stdout, /counting records/, "a refusal must not read the whole table first");
        assert.match(refused.stdout, /ClaimIndex is projected KEYS_ONLY, and must be ALL/);
        assert.match(
            refused.stdout,
            /run again with --recreate-claim-index\. Consequence: claims fail while ClaimIndex is absent, so delivery stops; nothing is lost: records stay pending/,
        );
        assert.ok((await provisioning(client, table)).indexes.includes(`${CLAIM_INDEX.indexName}:KEYS_ONLY:ACTIVE`));

        const applied = await runCli(["migrate", "--table", table, "--apply", "--recreate-claim-index"]);
        assert.equal(applied.code, 0, applied.stdout + applied.stderr);
        assert.match(
            applied.stdout,
            /1\. delete ClaimIndex \(projected KEYS_ONLY\), then wait until it is gone\. Consequence: claims fail/,
        );
        assert.match(applied.stdout, /waiting for ClaimIndex to be gone: DELETING/);
        assert.match(applied.stdout, /2\. create ClaimIndex \[PK\(S,HASH\), claim_sort\(S,RANGE\)\] projected ALL/);
        assert.deepEqual((await provisioning(client, table)).indexes, ALL_ACTIVE);
    });

    it("creates a missing index on a provisioned-capacity table with the table's throughput", async () => {
        const input = outboxTableInput(uniqueTableName("cli-prov"), { withoutIndexes: [CLAIM_INDEX.indexName] });
        const table = await createTestTable({
            ...input,
            BillingMode: "PROVISIONED",
            ProvisionedThroughput: { ReadCapacityUnits: 4, WriteCapacityUnits: 2 },
            GlobalSecondaryIndexes: input.GlobalSecondaryIndexes?.map((g) => ({
                ...g,
                ProvisionedThroughput: { ReadCapacityUnits: 4, WriteCapacityUnits: 2 },
            })),
        });
        tables.push(table);
        const run = await runCli(["migrate", "--table", table, "--apply"]);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
            run.stdout,
            /create ClaimIndex \[PK\(S,HASH\), claim_sort\(S,RANGE\)\] projected ALL with 4 RCU \/ 2 WCU \(the table's\)/,
        );
        const described = (await (await dynamoClient()).send(new DescribeTableCommand({ TableName: table }))).Table;
        const claim = described?.GlobalSecondaryIndexes?.find((g) => g.IndexName === CLAIM_INDEX.indexName);
        assert.deepEqual(
            [
                claim?.IndexStatus,
                claim?.ProvisionedThroughput?.ReadCapacityUnits,
                claim?.ProvisionedThroughput?.WriteCapacityUnits,
            ],
            ["ACTIVE", 4, 2],
        );
    });

    it("refuses a table whose primary key is not PK/SK, and changes nothing", async () => {
        const client = await dynamoClient();
        const name = uniqueTableName("cli-pk");
        await client.send(
            new CreateTableCommand({
                TableName: name,
                BillingMode: "PAY_PER_REQUEST",
                KeySchema: [{ AttributeName: "PK", KeyType: "HASH" }],
                AttributeDefinitions: [{ AttributeName: "PK", AttributeType: "S" }],
            }),
        );
        tables.push(name);
        const before = await provisioning(client, name);
        const run = await runCli(["migrate", "--table", name, "--apply", "--recreate-claim-index"]);
        assert.equal(run.code, 1);
        assert.match(
            run.stdout,
            /✗ the primary key is \[PK\(S,HASH\)\], expected \[PK\(S,HASH\), SK\(S,RANGE\)\]\. A table's primary key cannot be changed/,
        );
        assert.match(run.stdout, /fix: create a new table with the Outbox component/);
        assert.deepEqual(await provisioning(client, name), before);
    });

    it("refuses an index with the right name and the wrong keys, explaining the manual fix", async () => {
        const client = await dynamoClient();
        const input = outboxTableInput(uniqueTableName("cli-gsi"), { withoutIndexes: [RECORD_ID_INDEX.indexName] });
        input.AttributeDefinitions = [
            ...(input.AttributeDefinitions ?? []),
            { AttributeName: "envelope_id", AttributeType: "S" },
        ];
        input.GlobalSecondaryIndexes = [
            ...(input.GlobalSecondaryIndexes ?? []),
            {
                IndexName: RECORD_ID_INDEX.indexName,
                KeySchema: [{ AttributeName: "envelope_id", KeyType: "HASH" }],
                Projection: { ProjectionType: "KEYS_ONLY" },
            },
        ];
        const table = await createTestTable(input);
        tables.push(table);
        const before = await provisioning(client, table);
        const run = await runCli(["migrate", "--table", table, "--apply"]);
        assert.equal(run.code, 1);
        assert.match(
            run.stdout,
            /RecordIDIndex exists with key schema \[envelope_id\(S,HASH\)\], expected \[record_id\(S,HASH\)\]/,
        );
        assert.match(run.stdout, /"Delete":\{"IndexName":"RecordIDIndex"\}/);
        assert.deepEqual(await provisioning(client, table), before);
    });

    it("refuses to move TTL off another attribute", async () => {
        const table = await createOutboxTableWithTtlOn("expiresAt");
        tables.push(table);
        const run = await runCli(["migrate", "--table", table]);
        assert.equal(run.code, 1);
        assert.match(run.stdout, /TTL is ENABLED on attribute "expiresAt", not "ttl"/);
    });

    describe("a table that shows no sign of being an outbox (issue 38 item 7)", function () {
        /** A business table: the outbox's key names, no index, TTL or stream, and items of its own. */
        async function businessTable(): Promise<string> {
            const client = await dynamoClient();
            const table = await tables.create(UNPROVISIONED);
            for (const n of [1, 2, 3])
                await client.send(
                    new PutItemCommand({
                        TableName: table,
                        Item: { PK: { S: `CUSTOMER#${n}` }, SK: { S: `ORDER#${n}` }, total: { N: "10" } },
                    }),
                );
            return table;
        }

        it("--apply refuses to change it, listing what it would change and how to confirm; nothing is changed", async () => {
            const client = await dynamoClient();
            const table = await businessTable();
            const before = await provisioning(client, table);
            const refused = await runCli(["migrate", "--table", table, "--apply"]);
            assert.equal(refused.code, 1, refused.stdout + refused.stderr);
            assert.match(refused.stdout, /refused: nothing was changed\./);
            assert.match(
                refused.stdout,
                new RegExp(
                    `✗ table "${table}" shows no sign of being an outbox: none of its indexes \\(ExpiryIndex, RecordIDIndex, ClaimIndex\\), an outbox record \\(SK OUTBOX#…\\), a FENCE row, an id guard \\(PK OUTBOX_ID#…\\) or an OUTBOX_META#expiry-shards or OUTBOX_META#sweep-cursor row among its 3 item\\(s\\)\\. If it is a business table named by mistake, --apply would change it: 1\\. enable TTL on "ttl" .*; 2\\. enable the stream .*; 3\\. create ExpiryIndex .*; 4\\. create RecordIDIndex .*; 5\\. create ClaimIndex .*\\n    fix: check --table; if this is the table the outbox is to use \\(a new one, or one adopted before any outbox record was written\\), run again with --apply --confirm-table ${table}\\n`,
                ),
            );
            assert.doesNotMatch(refused.stdout, /counting records/, "no backfill count: there is no outbox record");
            assert.deepEqual(await provisioning(client, table), before, "the refusal changed the table");

            const json = await runCli(["migrate", "--table", table, "--apply", "--json"]);
            assert.equal(json.code, 1);
            const report = JSON.parse(json.stdout) as {
                ok: boolean;
                refusals: { reason: string; fix: string }[];
                steps: { kind: string; status: string }[];
            };
            assert.equal(report.ok, false);
            assert.match(report.refusals[0]!.fix, new RegExp(`--confirm-table ${table}$`));
            assert.deepEqual(
                report.steps.map((step) => `${step.kind}:${step.status}`),
                ["enable-ttl", "enable-stream", "create-index", "create-index", "create-index"].map(
                    (k) => `${k}:planned`,
                ),
            );

            const plan = await runCli(["migrate", "--table", table]);
            assert.equal(plan.code, 0, plan.stdout);
            assert.match(plan.stdout, /note: table "[^"]+" shows no sign of being an outbox/);
            assert.match(plan.stdout, /run again with --apply --confirm-table /);
            assert.deepEqual(await provisioning(client, table), before, "the plan changed the table");
        });

        it("--apply --confirm-table <its name> changes it; a wrong name, or the flag without --apply, is a usage error", async () => {
            const client = await dynamoClient();
            const table = await businessTable();
            const wrong = await runCli(["migrate", "--table", table, "--apply", "--confirm-table", `${table}-x`]);
            assert.equal(wrong.code, 2);
            assert.match(
                wrong.stderr,
                new RegExp(
                    `--confirm-table "${table}-x" does not repeat --table "${table}"; it confirms the table by its exact name`,
                ),
            );
            const planOnly = await runCli(["migrate", "--table", table, "--confirm-table", table]);
            assert.equal(planOnly.code, 2);
            assert.match(planOnly.stderr, /--confirm-table only applies with --apply/);

            const confirmed = await runCli(["migrate", "--table", table, "--apply", "--confirm-table", table]);
            assert.equal(confirmed.code, 0, confirmed.stdout + confirmed.stderr);
            assert.match(confirmed.stdout, /applied 5 step\(s\)/);
            assert.deepEqual(await provisioning(client, table), FULLY_PROVISIONED);
        });

        it("an outbox item is a sign: a FENCE row among the business items lets --apply go on without the confirmation", async () => {
            const client = await dynamoClient();
            const table = await businessTable();
            await client.send(
                new PutItemCommand({
                    TableName: table,
                    Item: { PK: { S: "ORDER#9" }, SK: { S: "FENCE" }, seq_counter: { N: "3" } },
                }),
            );
            const run = await runCli(["migrate", "--table", table, "--apply"]);
            assert.equal(run.code, 0, run.stdout + run.stderr);
            assert.match(run.stdout, /applied 5 step\(s\)/);
        });
    });

    it("refuses a missing table", async () => {
        const run = await runCli(["migrate", "--table", uniqueTableName("cli-none")]);
        assert.equal(run.code, 1);
        assert.match(run.stdout, /refused: table "cli-none-[^"]+" does not exist in us-east-1/);
    });

    it("waits for an index change already in progress before starting its own", async () => {
        const client = await dynamoClient();
        const table = await tables.create({ withoutIndexes: [EXPIRY_INDEX.indexName, RECORD_ID_INDEX.indexName] });
        await client.send(
            new UpdateTableCommand({
                TableName: table,
                AttributeDefinitions: RECORD_ID_INDEX.keySchema.map((k) => ({
                    AttributeName: k.attributeName,
                    AttributeType: k.attributeType,
                })),
                GlobalSecondaryIndexUpdates: [
                    {
                        Create: {
                            IndexName: RECORD_ID_INDEX.indexName,
                            KeySchema: RECORD_ID_INDEX.keySchema.map((k) => ({
                                AttributeName: k.attributeName,
                                KeyType: k.keyType,
                            })),
                            Projection: { ProjectionType: "KEYS_ONLY" },
                        },
                    },
                ],
            }),
        );
        const run = await runCli(["migrate", "--table", table, "--apply"]);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
            run.stdout,
            /1\. wait for the changes in progress to finish \(table ACTIVE, RecordIDIndex CREATING\)/,
        );
        assert.match(run.stdout, /2\. create ExpiryIndex/);
        assert.deepEqual((await provisioning(client, table)).indexes, ALL_ACTIVE);
    });
});
