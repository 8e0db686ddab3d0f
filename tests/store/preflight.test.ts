/**
 * Preflight (reference §7): a good table passes, each misprovisioned table fails with its exact GoBridge message.
 * The misprovisioned tables are real tables on DynamoDB Local; only the DescribeTable failures (which Local cannot
 * produce: it never denies access or throttles) use a fake client.
 */
import { CreateTableCommand, type CreateTableCommandInput } from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { isOutboxError } from "../../runtime/errors";
import { createTableInput, OutboxStore, PREFLIGHT_REFUSAL, resetStoreWarnings, schemaMismatch, STORE_WARNINGS } from "../../runtime/store";
import { dynamoClient, uniqueTableName } from "../support/dynamodb";
import { FakeDynamoDb, throttled } from "./fake-client";
import { RecordingLogger } from "./support";

type Mutate = (input: CreateTableCommandInput) => void;

/** Create a table from the schema's input after `mutate`, and preflight it. */
async function preflightOf(mutate: Mutate): Promise<{ outcome?: string; error?: unknown; tableName: string }> {
    const client = await dynamoClient();
    const tableName = uniqueTableName("preflight");
    const input = createTableInput(tableName, { stream: false });
    mutate(input);
    await client.send(new CreateTableCommand(input));
    try {
        return { outcome: await new OutboxStore({ client, tableName }).preflight(), tableName };
    } catch (error) {
        return { error, tableName };
    }
}

function gsi(input: CreateTableCommandInput, name: string) {
    const index = input.GlobalSecondaryIndexes!.find((g) => g.IndexName === name);
    assert.ok(index, `no ${name} in the input`);
    return index;
}

async function failsWith(mutate: Mutate, detail: string): Promise<void> {
    const { error, outcome, tableName } = await preflightOf(mutate);
    assert.equal(outcome, undefined, "preflight should have failed");
    assert.ok(isOutboxError(error, "INVALID_CONFIG"), String(error));
    assert.equal((error as Error).message, `dynamodboutbox: table "${tableName}" schema mismatch: ${detail}`);
    assert.equal((error as { transient: boolean }).transient, false);
}

describe("preflight", () => {
    beforeEach(() => resetStoreWarnings());

    it("passes the table createTable makes", async () => {
        assert.equal((await preflightOf(() => undefined)).outcome, "verified");
    });

    it("ignores extra GSIs and wider projections of the KEYS_ONLY indexes", async () => {
        const { outcome } = await preflightOf((input) => {
            input.AttributeDefinitions!.push({ AttributeName: "tenant", AttributeType: "S" });
            input.GlobalSecondaryIndexes!.push({ IndexName: "TenantIndex", KeySchema: [{ AttributeName: "tenant", KeyType: "HASH" }], Projection: { ProjectionType: "ALL" } });
            gsi(input, "RecordIDIndex").Projection = { ProjectionType: "ALL" };
        });
        assert.equal(outcome, "verified");
    });

    it("a missing table is not an error (table-missing)", async () => {
        const client = await dynamoClient();
        assert.equal(await new OutboxStore({ client, tableName: uniqueTableName("absent") }).preflight(), "table-missing");
    });

    it("refuses a ClaimIndex projected KEYS_ONLY", async () => {
        await failsWith(
            (input) => (gsi(input, "ClaimIndex").Projection = { ProjectionType: "KEYS_ONLY" }),
            'GSI "ClaimIndex" must be Projection: ALL (the claim query filters on the non-key status attribute); actual projection is "KEYS_ONLY"',
        );
    });

    it("refuses a ClaimIndex projected INCLUDE", async () => {
        await failsWith(
            (input) => (gsi(input, "ClaimIndex").Projection = { ProjectionType: "INCLUDE", NonKeyAttributes: ["status"] }),
            'GSI "ClaimIndex" must be Projection: ALL (the claim query filters on the non-key status attribute); actual projection is "INCLUDE"',
        );
    });

    it("refuses a table without ClaimIndex", async () => {
        await failsWith((input) => {
            input.GlobalSecondaryIndexes = input.GlobalSecondaryIndexes!.filter((g) => g.IndexName !== "ClaimIndex");
            input.AttributeDefinitions = input.AttributeDefinitions!.filter((a) => a.AttributeName !== "claim_sort");
        }, 'required global secondary index "ClaimIndex" is missing (expected key schema [PK(S,HASH), claim_sort(S,RANGE)])');
    });

    it("refuses a key of the wrong type", async () => {
        await failsWith(
            (input) => (input.AttributeDefinitions!.find((a) => a.AttributeName === "expires_at")!.AttributeType = "S"),
            'GSI "ExpiryIndex" key "expires_at" has attribute type "S", expected "N"; expected [has_expiry(S,HASH), expires_at(N,RANGE)], actual [has_expiry(S,HASH), expires_at(S,RANGE)]',
        );
    });

    it("refuses an unexpected range key", async () => {
        await failsWith((input) => {
            input.AttributeDefinitions!.push({ AttributeName: "created_at", AttributeType: "N" });
            gsi(input, "RecordIDIndex").KeySchema!.push({ AttributeName: "created_at", KeyType: "RANGE" });
        }, 'GSI "RecordIDIndex" has an unexpected range key "created_at"; expected [record_id(S,HASH)], actual [record_id(S,HASH), created_at(N,RANGE)]');
    });

    it("refuses a PK-only table (the silent shredder, H3)", async () => {
        await failsWith((input) => {
            // A lease table's name copy-pasted into the outbox config.
            input.KeySchema = [{ AttributeName: "PK", KeyType: "HASH" }];
            input.AttributeDefinitions = [{ AttributeName: "PK", AttributeType: "S" }];
            delete input.GlobalSecondaryIndexes;
        }, "primary key is missing its range key; expected [PK(S,HASH), SK(S,RANGE)], actual [PK(S,HASH)]");
    });

    it("refuses a primary key with the wrong attribute name", async () => {
        await failsWith((input) => {
            input.AttributeDefinitions!.push({ AttributeName: "id", AttributeType: "S" });
            input.KeySchema = [{ AttributeName: "id", KeyType: "HASH" }, { AttributeName: "SK", KeyType: "RANGE" }];
        }, 'primary key hash key is "id", expected "PK"; expected [PK(S,HASH), SK(S,RANGE)], actual [id(S,HASH), SK(S,RANGE)]');
    });

    it("refuses a ClaimIndex keyed on another range attribute", async () => {
        await failsWith((input) => {
            input.AttributeDefinitions!.push({ AttributeName: "created_at", AttributeType: "N" });
            gsi(input, "ClaimIndex").KeySchema = [{ AttributeName: "PK", KeyType: "HASH" }, { AttributeName: "created_at", KeyType: "RANGE" }];
            input.AttributeDefinitions = input.AttributeDefinitions!.filter((a) => a.AttributeName !== "claim_sort");
        }, 'GSI "ClaimIndex" range key is "created_at", expected "claim_sort"; expected [PK(S,HASH), claim_sort(S,RANGE)], actual [PK(S,HASH), created_at(N,RANGE)]');
    });

    it("reports an empty description, and skips the type check for an undeclared key attribute", () => {
        assert.equal(schemaMismatch(undefined), "DescribeTable returned an empty table description");
        const good = createTableInput("t");
        const withoutDefinitions = { ...good, AttributeDefinitions: [] } as never;
        assert.equal(schemaMismatch(withoutDefinitions), undefined);
        const noProjection = { ...good, GlobalSecondaryIndexes: good.GlobalSecondaryIndexes!.map((g) => (g.IndexName === "ClaimIndex" ? { ...g, Projection: undefined } : g)) } as never;
        assert.match(schemaMismatch(noProjection)!, /actual projection is "<none>"$/);
    });

    describe("when DescribeTable fails (fake client: DynamoDB Local never denies or throttles)", () => {
        it("fails closed with the refusal message, keeping the classified code", async () => {
            const fake = new FakeDynamoDb().on("DescribeTable", () => {
                // The shape the SDK gives a service error it has no class for: a name and a message.
                throw Object.assign(new Error("User is not authorized to perform: dynamodb:DescribeTable"), { name: "AccessDeniedException", $fault: "client" });
            });
            await assert.rejects(new OutboxStore({ client: fake, tableName: "outbox" }).preflight(), (err: unknown) => {
                assert.ok(isOutboxError(err, "NOT_AUTHORIZED"), String(err));
                assert.equal((err as Error).message, PREFLIGHT_REFUSAL);
                assert.ok(isOutboxError((err as Error).cause), "the describe error is the cause");
                assert.equal(((err as Error).cause as Error).message, "outbox preflight: describe table failed");
                return true;
            });
        });

        it("a throttled DescribeTable is THROTTLED and transient, never INVALID_CONFIG", async () => {
            const fake = new FakeDynamoDb().on("DescribeTable", () => {
                throw throttled();
            });
            await assert.rejects(new OutboxStore({ client: fake, tableName: "outbox" }).preflight(), (err: unknown) => isOutboxError(err, "THROTTLED") && (err as { transient: boolean }).transient);
        });

        it("with schemaPreflightAdvisory it warns once per process and returns unverified", async () => {
            const fake = new FakeDynamoDb().on("DescribeTable", () => {
                throw throttled();
            });
            const logger = new RecordingLogger();
            const store = new OutboxStore({ client: fake, tableName: "outbox", logger, schemaPreflightAdvisory: true });
            assert.equal(await store.preflight(), "unverified");
            assert.equal(await store.preflight(), "unverified");
            assert.equal(logger.warnings(STORE_WARNINGS.preflightAdvisory).length, 1);
        });

        it("an empty description is a schema mismatch", async () => {
            const fake = new FakeDynamoDb().on("DescribeTable", () => ({}));
            await assert.rejects(
                new OutboxStore({ client: fake, tableName: "outbox" }).preflight(),
                (err: unknown) => isOutboxError(err, "INVALID_CONFIG") && (err as Error).message === 'dynamodboutbox: table "outbox" schema mismatch: DescribeTable returned an empty table description',
            );
        });
    });
});
