/**
 * Preflight (reference §7): a good table passes, each misprovisioned table fails with its exact GoBridge message.
 * The misprovisioned tables are real tables on DynamoDB Local; only the DescribeTable failures (which Local cannot
 * produce: it never denies access or throttles) and the not-ready states (Local creates a table and its indexes
 * ACTIVE at once, so it never shows CREATING, DELETING or a backfilling index) use a fake client.
 */
import {
    CreateTableCommand,
    DescribeTableCommand,
    type CreateTableCommandInput,
    type DescribeTableCommandOutput,
    type DynamoDBClient,
    type TableDescription,
} from "@aws-sdk/client-dynamodb";
import * as assert from "node:assert/strict";
import { isOutboxError } from "../../../runtime/errors";
import {
    createTableInput,
    OutboxStore,
    PREFLIGHT_REFUSAL,
    resetStoreWarnings,
    schemaMismatch,
    STORE_WARNINGS,
    type OutboxStoreOptions,
} from "../../../runtime/store";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { FakeDynamoDb, throttled } from "../../support/store/fake-client";
import { RecordingLogger } from "../../support/store/helpers";

type Mutate = (input: CreateTableCommandInput) => void;

type StoreExtras = Pick<OutboxStoreOptions, "requireStream">;

type PreflightAnswer = { outcome?: string; error?: unknown; tableName: string };

/** Create a table from the schema's input after `mutate`, and preflight it through `client(real)` with `extras`. */
async function preflightThrough(
    mutate: Mutate,
    client: (real: DynamoDBClient) => OutboxStoreOptions["client"],
    extras: StoreExtras = {},
): Promise<PreflightAnswer> {
    const real = await dynamoClient();
    const tableName = uniqueTableName("preflight");
    const input = createTableInput(tableName, { stream: false });
    mutate(input);
    await real.send(new CreateTableCommand(input));
    try {
        return {
            outcome: await new OutboxStore({ client: client(real), tableName, ...extras }).preflight(),
            tableName,
        };
    } catch (error) {
        return { error, tableName };
    }
}

/** Create a table from the schema's input after `mutate`, and preflight it. */
function preflightOf(mutate: Mutate, extras: StoreExtras = {}): Promise<PreflightAnswer> {
    return preflightThrough(mutate, (real) => real, extras);
}

/**
 * Preflight a real, well-formed table on DynamoDB Local whose DescribeTable answer the fake client rewrites with
 * `describe` (a status DynamoDB Local never reports).
 */
function preflightDescribedAs(
    describe: (table: TableDescription) => void,
    mutate: Mutate = () => undefined,
): Promise<PreflightAnswer> {
    return preflightThrough(mutate, (real) =>
        new FakeDynamoDb(real).on("DescribeTable", async (params) => {
            const out = (await real.send(new DescribeTableCommand(params))) as DescribeTableCommandOutput;
            describe(out.Table!);
            return out;
        }),
    );
}

function indexOf(table: TableDescription, name: string) {
    const index = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === name);
    assert.ok(index, `no ${name} in the description`);
    return index;
}

/** Assert preflight threw `code` with `transient`, a message matching `message`. */
function threw(
    result: { outcome?: string; error?: unknown },
    code: "UNAVAILABLE" | "INVALID_CONFIG",
    transient: boolean,
    message: RegExp,
): void {
    assert.equal(result.outcome, undefined, "preflight should have failed");
    assert.ok(isOutboxError(result.error, code), String(result.error));
    assert.equal((result.error as { transient: boolean }).transient, transient);
    assert.match((result.error as Error).message, message);
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
            input.GlobalSecondaryIndexes!.push({
                IndexName: "TenantIndex",
                KeySchema: [{ AttributeName: "tenant", KeyType: "HASH" }],
                Projection: { ProjectionType: "ALL" },
            });
            gsi(input, "RecordIDIndex").Projection = { ProjectionType: "ALL" };
        });
        assert.equal(outcome, "verified");
    });

    it("a missing table is not an error (table-missing)", async () => {
        const client = await dynamoClient();
        assert.equal(
            await new OutboxStore({ client, tableName: uniqueTableName("absent") }).preflight(),
            "table-missing",
        );
    });

    it("refuses a ClaimIndex projected KEYS_ONLY", async () => {
        await failsWith(
            (input) => (gsi(input, "ClaimIndex").Projection = { ProjectionType: "KEYS_ONLY" }),
            'GSI "ClaimIndex" must be Projection: ALL (the claim query filters on the non-key status attribute); actual projection is "KEYS_ONLY"',
        );
    });

    it("refuses a ClaimIndex projected INCLUDE", async () => {
        await failsWith(
            (input) =>
                (gsi(input, "ClaimIndex").Projection = { ProjectionType: "INCLUDE", NonKeyAttributes: ["status"] }),
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
            input.KeySchema = [
                { AttributeName: "id", KeyType: "HASH" },
                { AttributeName: "SK", KeyType: "RANGE" },
            ];
        }, 'primary key hash key is "id", expected "PK"; expected [PK(S,HASH), SK(S,RANGE)], actual [id(S,HASH), SK(S,RANGE)]');
    });

    it("refuses a ClaimIndex keyed on another range attribute", async () => {
        await failsWith((input) => {
            input.AttributeDefinitions!.push({ AttributeName: "created_at", AttributeType: "N" });
            gsi(input, "ClaimIndex").KeySchema = [
                { AttributeName: "PK", KeyType: "HASH" },
                { AttributeName: "created_at", KeyType: "RANGE" },
            ];
            input.AttributeDefinitions = input.AttributeDefinitions!.filter((a) => a.AttributeName !== "claim_sort");
        }, 'GSI "ClaimIndex" range key is "created_at", expected "claim_sort"; expected [PK(S,HASH), claim_sort(S,RANGE)], actual [PK(S,HASH), created_at(N,RANGE)]');
    });

    it("reports an empty description, and skips the type check for an undeclared key attribute", () => {
        assert.equal(schemaMismatch(undefined), "DescribeTable returned an empty table description");
        const good = createTableInput("t");
        const withoutDefinitions = { ...good, AttributeDefinitions: [] } as never;
        assert.equal(schemaMismatch(withoutDefinitions), undefined);
        const noProjection = {
            ...good,
            GlobalSecondaryIndexes: good.GlobalSecondaryIndexes!.map((g) =>
                g.IndexName === "ClaimIndex" ? { ...g, Projection: undefined } : g,
            ),
        } as never;
        assert.match(schemaMismatch(noProjection)!, /actual projection is "<none>"$/);
    });

    describe("readiness (fake DescribeTable over a real table: DynamoDB Local never shows CREATING, DELETING or a backfill)", () => {
        it("a CREATING table is transient UNAVAILABLE, naming the table, its status and what to do", async () => {
            const result = await preflightDescribedAs((t) => (t.TableStatus = "CREATING"));
            threw(
                result,
                "UNAVAILABLE",
                true,
                new RegExp(
                    `^dynamodb-outbox: table "${result.tableName}" is not ready: its status is CREATING, expected ACTIVE; wait until DescribeTable shows it ACTIVE, then run preflight again$`,
                ),
            );
        });

        it("a global table with multi-Region strong consistency (MRSC) is refused, naming why; an MREC one passes", async () => {
            const result = await preflightDescribedAs((t) => (t.MultiRegionConsistency = "STRONG"));
            threw(
                result,
                "INVALID_CONFIG",
                false,
                /multi-Region strong consistency \(MultiRegionConsistency STRONG\), which supports neither TransactWriteItems .* nor TTL/,
            );
            assert.equal(
                (await preflightDescribedAs((t) => (t.MultiRegionConsistency = "EVENTUAL"))).outcome,
                "verified",
            );
        });

        it("an UPDATING table whose indexes are ACTIVE is usable", async () => {
            assert.equal((await preflightDescribedAs((t) => (t.TableStatus = "UPDATING"))).outcome, "verified");
        });

        it("a DELETING or ARCHIVED table is permanent INVALID_CONFIG", async () => {
            threw(
                await preflightDescribedAs((t) => (t.TableStatus = "DELETING")),
                "INVALID_CONFIG",
                false,
                /is unusable: its status is DELETING, expected ACTIVE or UPDATING; this does not fix itself/,
            );
            threw(
                await preflightDescribedAs((t) => (t.TableStatus = "ARCHIVED")),
                "INVALID_CONFIG",
                false,
                /is unusable: its status is ARCHIVED/,
            );
        });

        it("a backfilling ClaimIndex is transient UNAVAILABLE, naming the index and its purpose", async () => {
            const result = await preflightDescribedAs((t) =>
                Object.assign(indexOf(t, "ClaimIndex"), { IndexStatus: "CREATING", Backfilling: true }),
            );
            threw(
                result,
                "UNAVAILABLE",
                true,
                /is not ready: GSI "ClaimIndex" is CREATING and backfilling, expected ACTIVE; the claim query filters on the non-key status attribute only once it is ACTIVE\. Wait .*then run preflight again$/,
            );
            assert.deepEqual((result.error as { context: object }).context, {
                table: result.tableName,
                index: "ClaimIndex",
                indexStatus: "CREATING",
                backfilling: true,
            });
        });

        it("an index CREATING before its backfill starts is not ready either", async () => {
            threw(
                await preflightDescribedAs((t) => (indexOf(t, "ExpiryIndex").IndexStatus = "CREATING")),
                "UNAVAILABLE",
                true,
                /GSI "ExpiryIndex" is CREATING, expected ACTIVE/,
            );
        });

        it("Backfilling: true is not ready whatever the status says", async () => {
            threw(
                await preflightDescribedAs((t) => (indexOf(t, "RecordIDIndex").Backfilling = true)),
                "UNAVAILABLE",
                true,
                /GSI "RecordIDIndex" is ACTIVE and backfilling/,
            );
        });

        it("an index UPDATING (a throughput change) still serves queries", async () => {
            assert.equal(
                (await preflightDescribedAs((t) => (indexOf(t, "ClaimIndex").IndexStatus = "UPDATING"))).outcome,
                "verified",
            );
        });

        it("a required index being deleted is permanent INVALID_CONFIG, pointing at migrate", async () => {
            threw(
                await preflightDescribedAs((t) => (indexOf(t, "ClaimIndex").IndexStatus = "DELETING")),
                "INVALID_CONFIG",
                false,
                /GSI "ClaimIndex" is DELETING, expected ACTIVE; .*dynamodb-outbox migrate --table \S+ --apply/,
            );
        });

        it("the GoBridge schema checks come first: a CREATING table with a KEYS_ONLY ClaimIndex gets the schema mismatch", async () => {
            const result = await preflightDescribedAs(
                (t) => (t.TableStatus = "CREATING"),
                (input) => (gsi(input, "ClaimIndex").Projection = { ProjectionType: "KEYS_ONLY" }),
            );
            threw(result, "INVALID_CONFIG", false, /schema mismatch: GSI "ClaimIndex" must be Projection: ALL/);
        });
    });

    describe("stream (real tables on DynamoDB Local)", () => {
        const withStream = (viewType: string) => (input: CreateTableCommandInput) =>
            (input.StreamSpecification = { StreamEnabled: true, StreamViewType: viewType as never });

        it("refuses a KEYS_ONLY stream: the publisher cannot read a record from it", async () => {
            const result = await preflightOf(withStream("KEYS_ONLY"));
            threw(
                result,
                "INVALID_CONFIG",
                false,
                new RegExp(
                    `^dynamodb-outbox: table "${result.tableName}" stream view type is KEYS_ONLY, expected NEW_IMAGE or NEW_AND_OLD_IMAGES: the publisher reads each record from the new image; change the stream to NEW_IMAGE in the IaC that owns the table and its event source mapping, together`,
                ),
            );
            assert.equal((result.error as { context: { streamViewType: string } }).context.streamViewType, "KEYS_ONLY");
        });

        it("refuses an OLD_IMAGE stream", async () => {
            threw(await preflightOf(withStream("OLD_IMAGE")), "INVALID_CONFIG", false, /stream view type is OLD_IMAGE/);
        });

        it("passes NEW_IMAGE and NEW_AND_OLD_IMAGES", async () => {
            assert.equal((await preflightOf(withStream("NEW_IMAGE"), { requireStream: true })).outcome, "verified");
            assert.equal(
                (await preflightOf(withStream("NEW_AND_OLD_IMAGES"), { requireStream: true })).outcome,
                "verified",
            );
        });

        it("passes GoBridge's table without a stream by default, and refuses it under requireStream", async () => {
            assert.equal((await preflightOf(() => undefined)).outcome, "verified");
            threw(
                await preflightOf(() => undefined, { requireStream: true }),
                "INVALID_CONFIG",
                false,
                /has no stream, and requireStream is set: the publisher needs a NEW_IMAGE stream; enable it with `dynamodb-outbox migrate --table \S+ --apply`/,
            );
        });
    });

    describe("when DescribeTable fails (fake client: DynamoDB Local never denies or throttles)", () => {
        it("fails closed with the refusal message, keeping the classified code", async () => {
            const fake = new FakeDynamoDb().on("DescribeTable", () => {
                // The shape the SDK gives a service error it has no class for: a name and a message.
                throw Object.assign(new Error("User is not authorized to perform: dynamodb:DescribeTable"), {
                    name: "AccessDeniedException",
                    $fault: "client",
                });
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
            await assert.rejects(
                new OutboxStore({ client: fake, tableName: "outbox" }).preflight(),
                (err: unknown) => isOutboxError(err, "THROTTLED") && (err as { transient: boolean }).transient,
            );
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
                (err: unknown) =>
                    isOutboxError(err, "INVALID_CONFIG") &&
                    (err as Error).message ===
                        'dynamodboutbox: table "outbox" schema mismatch: DescribeTable returned an empty table description',
            );
        });
    });
});
