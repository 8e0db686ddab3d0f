/**
 * Adopting an existing table with `importTableName`.
 *
 * Under the Pulumi mocks: the table child is declared with Pulumi's `import` resource option and the table's own
 * name (the mocks receive the import ID as `MockResourceArgs.id`, as the engine would), and everything that reads
 * the table reads the adopted one. On DynamoDB Local: the documented path for a table that is not yet the
 * outbox's shape (`verify`, `migrate --apply`, `verify`) ends with the keys, attributes, indexes, TTL and stream
 * the component declares for it. What is not shown here is Pulumi's own import step (no Pulumi CLI or AWS
 * provider where the tests run): the comparison is of DynamoDB's description with the declared args.
 */
import * as assert from "node:assert/strict";
import { DescribeTableCommand, DescribeTimeToLiveCommand, type TableDescription } from "@aws-sdk/client-dynamodb";
import { ENV } from "../../../runtime/config";
import { GLOBAL_SECONDARY_INDEXES } from "../../../runtime/schema";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { unwrap } from "../../support/pulumi-mocks";
import { createTestTable, dropTable, outboxTableInput, runCli } from "../../support/cli";
import { BuiltOutbox, TYPE, buildOutbox } from "../../support/component-harness";

/** The table shape both sides are reduced to: what an import compares and `verify`/`migrate` decide. */
interface TableShape {
    readonly key: string[];
    readonly attributes: string[];
    readonly indexes: string[];
    readonly ttl: string;
    readonly stream: string;
}

/** The shape the component declares, from the table child's recorded inputs. */
function declaredShape(inputs: Record<string, any>): TableShape {
    return {
        key: [`${inputs.hashKey}:HASH`, `${inputs.rangeKey}:RANGE`],
        attributes: inputs.attributes.map((a: any) => `${a.name}:${a.type}`).sort(),
        indexes: inputs.globalSecondaryIndexes
            .map(
                (i: any) =>
                    `${i.name}[${i.keySchemas.map((k: any) => `${k.attributeName}:${k.keyType}`).join(",")}]${i.projectionType}`,
            )
            .sort(),
        ttl: inputs.ttl.enabled ? `ENABLED:${inputs.ttl.attributeName}` : "DISABLED",
        stream: inputs.streamEnabled ? inputs.streamViewType : "off",
    };
}

/** The shape DynamoDB describes for a live table. */
async function describedShape(tableName: string): Promise<TableShape> {
    const client = await dynamoClient();
    const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table as TableDescription;
    const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
    return {
        key: (table.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`),
        attributes: (table.AttributeDefinitions ?? []).map((a) => `${a.AttributeName}:${a.AttributeType}`).sort(),
        indexes: (table.GlobalSecondaryIndexes ?? [])
            .map(
                (i) =>
                    `${i.IndexName}[${(i.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(",")}]${i.Projection?.ProjectionType}`,
            )
            .sort(),
        ttl: ttl?.TimeToLiveStatus === "ENABLED" ? `ENABLED:${ttl.AttributeName}` : "DISABLED",
        stream: table.StreamSpecification?.StreamEnabled ? `${table.StreamSpecification.StreamViewType}` : "off",
    };
}

describe("Outbox adopting an existing table (importTableName)", () => {
    let adopted: BuiltOutbox;

    before(async () => {
        adopted = await buildOutbox("adopt", { importTableName: "legacy-outbox" });
    });

    it("declares the table child with Pulumi's import option and the table's own name, so the import plans no rename", () => {
        const table = adopted.one(TYPE.table, "adopt-table");
        assert.equal(adopted.options.get("adopt-table")?.import, "legacy-outbox");
        assert.equal(table.importId, "legacy-outbox", "the import ID the engine (here, the mocks) receives");
        assert.equal(table.inputs.name, "legacy-outbox");
        assert.equal(adopted.options.get("adopt-table")?.parent, adopted.outbox);
    });

    it("imports nothing else, and nothing at all without importTableName", async () => {
        assert.deepEqual(
            adopted.resources.filter((r) => r.importId !== undefined).map((r) => r.name),
            ["adopt-table"],
        );
        const created = await buildOutbox("adoptnone");
        assert.deepEqual(
            created.resources.filter((r) => r.importId !== undefined).map((r) => r.name),
            [],
        );
        assert.equal(created.one(TYPE.table).inputs.name, undefined, "a created table is autonamed");
        assert.equal(created.options.get("adoptnone-table")?.import, undefined);
    });

    it("points the outputs and both functions at the adopted table", async () => {
        assert.equal(await unwrap(adopted.outbox.tableName), "legacy-outbox");
        assert.match(await unwrap(adopted.outbox.tableArn), /:table\/legacy-outbox$/);
        assert.match(await unwrap(adopted.outbox.streamArn), /:table\/legacy-outbox\/stream\//);
        for (const fn of ["adopt-publisher", "adopt-sweeper"])
            assert.equal(adopted.one(TYPE.fn, fn).inputs.environment.variables[ENV.tableName], "legacy-outbox", fn);
    });

    it("declares the args of a created table, plus the name: the import compares these with the table", async () => {
        const created = await buildOutbox("adoptsame");
        const { name, ...imported } = adopted.one(TYPE.table).inputs;
        assert.equal(name, "legacy-outbox");
        assert.deepEqual(imported, created.one(TYPE.table).inputs);
    });

    describe("a table not yet in the outbox's shape, on DynamoDB Local: verify, migrate --apply, verify", function () {
        this.timeout(180_000);
        let tableName: string;

        before(async () => {
            // An inherited table: the outbox's keys, but no index, no TTL and no stream yet.
            tableName = await createTestTable(
                outboxTableInput(uniqueTableName("adopt"), {
                    withoutIndexes: GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName),
                    streamOff: true,
                }),
                false,
            );
        });

        after(async () => {
            await dropTable(tableName);
        });

        it("ends with the keys, attributes, indexes, TTL and stream the component declares for it", async () => {
            const declared = declaredShape(adopted.one(TYPE.table).inputs);
            const before = await describedShape(tableName);
            assert.notDeepEqual(before, declared, "the inherited table starts out of shape");
            assert.deepEqual([before.indexes, before.ttl, before.stream], [[], "DISABLED", "off"]);

            const first = await runCli(["verify", "--table", tableName]);
            assert.equal(first.code, 1, first.stdout + first.stderr);
            assert.match(first.stdout, /fix: dynamodb-outbox migrate --table/);

            // The inherited table holds no outbox item yet: migrate changes it only when confirmed by name.
            const migrate = await runCli(["migrate", "--table", tableName, "--apply", "--confirm-table", tableName]);
            assert.equal(migrate.code, 0, migrate.stdout + migrate.stderr);

            const again = await runCli(["verify", "--table", tableName]);
            assert.equal(again.code, 0, again.stdout + again.stderr);
            assert.deepEqual(await describedShape(tableName), declared);
        });
    });
});
