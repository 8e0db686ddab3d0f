import * as assert from "node:assert/strict";
import type { DynamoDBClient, TableDescription } from "@aws-sdk/client-dynamodb";
import { Checklist } from "../../../cli/shared/checklist";
import { createOutput } from "../../../cli/shared/io";
import { planMigration } from "../../../cli/migrate/plan";
import { describeOutboxTable } from "../../../cli/shared/table-state";
import { checkProvisioning } from "../../../cli/verify/table";
import { isOutboxError } from "../../../runtime/errors";
import { inspectTable, keysMatch, renderActualKeys, renderExpectedKeys } from "../../../cli/shared/table-shape";
import {
    ATTRIBUTE_DEFINITIONS,
    CLAIM_INDEX,
    EXPIRY_INDEX,
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    RECORD_ID_INDEX,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
} from "../../../runtime/schema";

/** A DescribeTable result for a table provisioned from the schema, as DynamoDB reports one. */
function describedTable(): TableDescription {
    return {
        TableName: "orders-outbox",
        TableStatus: "ACTIVE",
        KeySchema: PRIMARY_KEY.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
        AttributeDefinitions: ATTRIBUTE_DEFINITIONS.map((a) => ({
            AttributeName: a.attributeName,
            AttributeType: a.attributeType,
        })),
        GlobalSecondaryIndexes: GLOBAL_SECONDARY_INDEXES.map((i) => ({
            IndexName: i.indexName,
            KeySchema: i.keySchema.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
            Projection: { ProjectionType: i.projectionType },
            IndexStatus: "ACTIVE",
        })),
        StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE },
        BillingModeSummary: { BillingMode: "PAY_PER_REQUEST" },
    };
}

const TTL_ON = { TimeToLiveStatus: "ENABLED" as const, AttributeName: TTL_ATTRIBUTE };
const OPTIONS = { recreateClaimIndex: false, backfillRecords: 0, pageSize: 100 };

function withoutIndex(table: TableDescription, name: string): TableDescription {
    return { ...table, GlobalSecondaryIndexes: table.GlobalSecondaryIndexes?.filter((g) => g.IndexName !== name) };
}

/** The rendered lines hold this one, word for word. */
function hasLine(lines: string[], line: string): void {
    assert.ok(lines.includes(line), `missing ${JSON.stringify(line)} in:\n${lines.join("\n")}`);
}

/** {@link hasLine} for each of `expected`. */
function hasLines(lines: string[], ...expected: string[]): void {
    for (const line of expected) hasLine(lines, line);
}

describe("cli: table comparison and the migration planner", () => {
    it("renders key schemas the way GoBridge's preflight does, types from the attribute definitions", () => {
        assert.equal(renderExpectedKeys(PRIMARY_KEY), "[PK(S,HASH), SK(S,RANGE)]");
        assert.equal(
            renderActualKeys(
                [
                    { AttributeName: "x", KeyType: "RANGE" },
                    { AttributeName: "PK", KeyType: "HASH" },
                ],
                [{ AttributeName: "PK", AttributeType: "S" }],
            ),
            "[PK(S,HASH), x(,RANGE)]",
        );
    });

    it("matches key schemas by role, name and declared type, and rejects an extra range key", () => {
        const defs = [{ AttributeName: "record_id", AttributeType: "S" as const }];
        assert.ok(keysMatch(RECORD_ID_INDEX.keySchema, [{ AttributeName: "record_id", KeyType: "HASH" }], defs));
        assert.ok(
            !keysMatch(
                RECORD_ID_INDEX.keySchema,
                [{ AttributeName: "record_id", KeyType: "HASH" }],
                [{ AttributeName: "record_id", AttributeType: "N" }],
            ),
        );
        assert.ok(
            !keysMatch(
                RECORD_ID_INDEX.keySchema,
                [
                    { AttributeName: "record_id", KeyType: "HASH" },
                    { AttributeName: "SK", KeyType: "RANGE" },
                ],
                defs,
            ),
        );
        assert.ok(!keysMatch(RECORD_ID_INDEX.keySchema, [{ AttributeName: "recordId", KeyType: "HASH" }], defs));
    });

    it("plans nothing for a table provisioned from the schema", () => {
        assert.deepEqual(planMigration(inspectTable(describedTable(), TTL_ON), OPTIONS), {
            steps: [],
            refusals: [],
            notes: [],
        });
    });

    it("orders TTL and stream first, then the backfill, then one index per step", () => {
        let table = describedTable();
        for (const i of GLOBAL_SECONDARY_INDEXES) table = withoutIndex(table, i.indexName);
        table.StreamSpecification = undefined;
        const plan = planMigration(inspectTable(table, { TimeToLiveStatus: "DISABLED" }), {
            ...OPTIONS,
            backfillRecords: 7,
        });
        assert.deepEqual(
            plan.steps.map((s) => (s.kind === "create-index" ? `create ${s.shape.indexName}` : s.kind)),
            [
                "enable-ttl",
                "enable-stream",
                "backfill",
                `create ${EXPIRY_INDEX.indexName}`,
                `create ${RECORD_ID_INDEX.indexName}`,
                `create ${CLAIM_INDEX.indexName}`,
            ],
        );
        assert.match(
            plan.steps[2]?.description ?? "",
            /^backfill 7 pending\/claimed record\(s\) missing claim_sort or has_expiry/,
        );
    });

    it("gives a new index on a provisioned table the table's throughput", () => {
        const table = {
            ...withoutIndex(describedTable(), CLAIM_INDEX.indexName),
            BillingModeSummary: undefined,
            ProvisionedThroughput: { ReadCapacityUnits: 7, WriteCapacityUnits: 3 },
        };
        const shape = inspectTable(table, TTL_ON);
        assert.deepEqual(shape.provisionedThroughput, { readCapacityUnits: 7, writeCapacityUnits: 3 });
        assert.match(planMigration(shape, OPTIONS).steps[0]?.description ?? "", /with 7 RCU \/ 3 WCU \(the table's\)/);
    });

    it("recreates an under-projected ClaimIndex only with the flag: delete, then create", () => {
        const table = describedTable();
        const claim = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === CLAIM_INDEX.indexName);
        if (claim) claim.Projection = { ProjectionType: "INCLUDE", NonKeyAttributes: ["status"] };
        const shape = inspectTable(table, TTL_ON);
        const refused = planMigration(shape, OPTIONS);
        assert.deepEqual(refused.steps, []);
        assert.match(refused.refusals[0]?.reason ?? "", /ClaimIndex is projected INCLUDE, and must be ALL/);
        const plan = planMigration(shape, { ...OPTIONS, recreateClaimIndex: true });
        assert.deepEqual(
            plan.steps.map((s) => s.kind),
            ["delete-index", "create-index"],
        );
    });

    it("only notes an over-projected KEYS_ONLY index: it works", () => {
        const table = describedTable();
        const expiry = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === EXPIRY_INDEX.indexName);
        if (expiry) expiry.Projection = { ProjectionType: "ALL" };
        const plan = planMigration(inspectTable(table, TTL_ON), OPTIONS);
        assert.deepEqual([plan.steps, plan.refusals], [[], []]);
        assert.match(plan.notes[0] ?? "", /ExpiryIndex is projected ALL; KEYS_ONLY is enough/);
    });

    it("refuses a stream without new images, and a key attribute declared with another type", () => {
        const table = withoutIndex(describedTable(), CLAIM_INDEX.indexName);
        table.StreamSpecification = { StreamEnabled: true, StreamViewType: "KEYS_ONLY" };
        table.AttributeDefinitions = table.AttributeDefinitions?.map((d) =>
            d.AttributeName === "claim_sort" ? { ...d, AttributeType: "N" } : d,
        );
        const plan = planMigration(inspectTable(table, TTL_ON), OPTIONS);
        assert.deepEqual(plan.steps, []);
        assert.deepEqual(
            plan.refusals.map((r) => r.reason.slice(0, 60)),
            [
                `attribute "claim_sort" is declared type N by another index, and ClaimIndex needs it as S`.slice(0, 60),
                "the stream's view type is KEYS_ONLY; the publisher needs new images (NEW_IMAGE)".slice(0, 60),
            ],
        );
    });

    it("waits first when an index is still being created or deleted", () => {
        const table = describedTable();
        const record = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === RECORD_ID_INDEX.indexName);
        if (record) record.IndexStatus = "DELETING";
        const plan = planMigration(inspectTable(table, TTL_ON), OPTIONS);
        assert.deepEqual(
            plan.steps.map((s) => s.kind),
            ["wait-idle", "create-index"],
        );
        assert.match(plan.steps[0]?.description ?? "", /RecordIDIndex DELETING/);
    });
});

describe("cli: verify's provisioning lines for states DynamoDB Local never shows", () => {
    function linesFor(
        table: TableDescription,
        ttl: Parameters<typeof inspectTable>[1],
    ): { usable: boolean; lines: string[] } {
        const printed: string[] = [];
        const out = createOutput({ stdout: (t) => printed.push(t.trimEnd()), stderr: () => undefined, env: {} }, false);
        const usable = checkProvisioning(new Checklist(out), "orders-outbox", inspectTable(table, ttl));
        return { usable, lines: printed };
    }

    it("warns, without failing, on TTL still ENABLING, a NEW_AND_OLD_IMAGES stream and an over-projected ExpiryIndex", () => {
        const table = describedTable();
        table.StreamSpecification = { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" };
        const expiry = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === EXPIRY_INDEX.indexName);
        if (expiry) expiry.Projection = { ProjectionType: "ALL" };
        const { usable, lines } = linesFor(table, { TimeToLiveStatus: "ENABLING", AttributeName: TTL_ATTRIBUTE });
        assert.equal(usable, true);
        hasLines(
            lines,
            `  ! ${EXPIRY_INDEX.indexName} [has_expiry(S,HASH), expires_at(N,RANGE)] KEYS_ONLY, ACTIVE — projected ALL: works, and costs more per write than KEYS_ONLY`,
            '  ! TTL enabled on "ttl" — ENABLING: AWS takes up to an hour; completed records pile up until then',
            "  ✓ stream enabled with new images (NEW_IMAGE) — view type NEW_AND_OLD_IMAGES (carries the new image)",
        );
    });

    it("fails an index still CREATING and a stream without new images, and keeps the live checks off", () => {
        const table = describedTable();
        table.StreamSpecification = { StreamEnabled: true, StreamViewType: "KEYS_ONLY" };
        const claim = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === CLAIM_INDEX.indexName);
        if (claim) claim.IndexStatus = "CREATING";
        const { usable, lines } = linesFor(table, TTL_ON);
        assert.equal(usable, false);
        hasLines(
            lines,
            `  ✗ ${CLAIM_INDEX.indexName} [PK(S,HASH), claim_sort(S,RANGE)] ALL, ACTIVE — CREATING: wait until it is ACTIVE (a new index backfills first), then verify again`,
            "  ✗ stream enabled with new images (NEW_IMAGE) — view type KEYS_ONLY: the publisher needs the new image; change it with the IaC that owns the event source mapping",
        );
    });

    it("keeps the live checks off for a stream without new images alone: the store's preflight refuses it", () => {
        const table = describedTable();
        table.StreamSpecification = { StreamEnabled: true, StreamViewType: "KEYS_ONLY" };
        const { usable, lines } = linesFor(table, TTL_ON);
        assert.equal(usable, false);
        assert.deepEqual(
            lines.filter((l) => l.startsWith("  ✗")),
            [
                "  ✗ stream enabled with new images (NEW_IMAGE) — view type KEYS_ONLY: the publisher needs the new image; change it with the IaC that owns the event source mapping",
            ],
        );
    });

    it("fails a wrong primary key and a mis-keyed index with the actual shapes", () => {
        const table = describedTable();
        table.KeySchema = [{ AttributeName: "PK", KeyType: "HASH" }];
        const record = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === RECORD_ID_INDEX.indexName);
        if (record) record.KeySchema = [{ AttributeName: "SK", KeyType: "HASH" }];
        const { usable, lines } = linesFor(table, TTL_ON);
        assert.equal(usable, false);
        hasLines(
            lines,
            "  ✗ primary key [PK(S,HASH), SK(S,RANGE)] — actual [PK(S,HASH)]: not an outbox table (a primary key cannot be changed; create one with the Outbox component)",
            `  ✗ ${RECORD_ID_INDEX.indexName} [record_id(S,HASH)] KEYS_ONLY, ACTIVE — key schema is [SK(S,HASH)]; preflight rejects the table. migrate explains the manual fix`,
        );
    });
});

describe("cli: reading the table", () => {
    it("names the missing permission when DescribeTable is denied (a fake client: no emulator enforces IAM)", async () => {
        const denied = Object.assign(
            new Error("User: arn:aws:iam::1:user/ops is not authorized to perform: dynamodb:DescribeTable"),
            { name: "AccessDeniedException" },
        );
        const client = { send: async () => Promise.reject(denied) } as unknown as DynamoDBClient;
        await assert.rejects(describeOutboxTable(client, "orders-outbox"), (err: unknown) => {
            assert.ok(isOutboxError(err, "NOT_AUTHORIZED"));
            assert.equal(err.message, 'describe table "orders-outbox" failed: the tool needs dynamodb:DescribeTable');
            assert.equal(err.cause, denied);
            return true;
        });
    });

    it("returns undefined for a table that does not exist", async () => {
        const missing = Object.assign(new Error("Requested resource not found"), { name: "ResourceNotFoundException" });
        const client = { send: async () => Promise.reject(missing) } as unknown as DynamoDBClient;
        assert.equal(await describeOutboxTable(client, "orders-outbox"), undefined);
    });
});
