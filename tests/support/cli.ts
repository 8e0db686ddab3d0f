/**
 * Helpers for the CLI tests: an in-process run of `main` with captured output, a clock whose waits take a few
 * real milliseconds (DynamoDB Local's index changes still take their ~1 s of real time), and outbox tables
 * provisioned right or wrong on the shared DynamoDB Local.
 */
import {
    CreateTableCommand,
    DeleteTableCommand,
    DescribeTableCommand,
    DescribeTimeToLiveCommand,
    UpdateTimeToLiveCommand,
    type CreateTableCommandInput,
    type DynamoDBClient,
    type GlobalSecondaryIndex,
    type TableDescription,
} from "@aws-sdk/client-dynamodb";
import type { CliIo } from "../../cli/shared/io";
import { main } from "../../cli/main";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";
import type { Clock } from "../../runtime/ports";
import {
    ATTRIBUTE_DEFINITIONS,
    GLOBAL_SECONDARY_INDEXES,
    PRIMARY_KEY,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
    type ProjectionType,
} from "../../runtime/schema";
import { dynamoClient, dynamoEndpoint, uniqueTableName } from "./dynamodb";

/** The environment a user of DynamoDB Local sets: fake credentials and the local region. */
export const LOCAL_ENV = {
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_REGION: LOCAL_REGION,
} as const;

/** An io that records what was written. */
export interface CapturedIo extends CliIo {
    /** Everything written to stdout. */
    output(): string;
    /** Everything written to stderr. */
    errors(): string;
}

/**
 * A clock that starts at the wall clock and advances by exactly what is slept, while each sleep takes a tenth of
 * that in real time (at most 100 ms). DynamoDB Local's index changes still take their real time, which grows
 * with the number of tables alive on the instance (about 0.6 s with none, 9 s with ten, over 60 s with twenty,
 * measured here), so the CLI's default bounds stay a minute or more of real time and every test drops its tables.
 */
export function fastClock(): Clock {
    let now = Date.now();
    return {
        now: () => now,
        sleep: async (ms: number) => {
            now += ms;
            await new Promise((r) => setTimeout(r, Math.min(ms / 10, 100)));
        },
    };
}

/** An io with the given environment, capturing output. */
export function captureIo(env: Record<string, string>, clock: Clock = fastClock()): CapturedIo {
    let out = "";
    let err = "";
    return {
        env,
        clock,
        stdout: (text) => {
            out += text;
        },
        stderr: (text) => {
            err += text;
        },
        output: () => out,
        errors: () => err,
    };
}

/** The result of one in-process run. */
export interface CliRun {
    /** The exit code. */
    readonly code: number;
    /** stdout. */
    readonly stdout: string;
    /** stderr. */
    readonly stderr: string;
}

/** Run the CLI in-process against the shared DynamoDB Local (`--endpoint` is appended). */
export async function runCli(argv: string[], clock: Clock = fastClock()): Promise<CliRun> {
    const io = captureIo({ ...LOCAL_ENV }, clock);
    const code = await main([...argv, "--endpoint", await dynamoEndpoint()], io);
    return { code, stdout: io.output(), stderr: io.errors() };
}

/** How a test table departs from the schema. */
export interface Misprovision {
    /** Leave these required indexes out. @default none */
    readonly withoutIndexes?: readonly string[];
    /** Project ClaimIndex this way. @default ALL */
    readonly claimIndexProjection?: ProjectionType;
    /** Leave TTL off. @default false */
    readonly ttlOff?: boolean;
    /** Leave the stream off. @default false */
    readonly streamOff?: boolean;
}

/** The CreateTable input of an outbox table, from the schema, bent as asked. */
export function outboxTableInput(tableName: string, bend: Misprovision = {}): CreateTableCommandInput {
    const indexes: GlobalSecondaryIndex[] = GLOBAL_SECONDARY_INDEXES.filter(
        (i) => !(bend.withoutIndexes ?? []).includes(i.indexName),
    ).map((i) => ({
        IndexName: i.indexName,
        KeySchema: i.keySchema.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
        Projection: {
            ProjectionType:
                i.indexName === GLOBAL_SECONDARY_INDEXES[2]?.indexName
                    ? (bend.claimIndexProjection ?? i.projectionType)
                    : i.projectionType,
        },
    }));
    const used = new Set([
        ...PRIMARY_KEY.map((k) => k.attributeName),
        ...indexes.flatMap((i) => (i.KeySchema ?? []).map((k) => k.AttributeName as string)),
    ]);
    return {
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        KeySchema: PRIMARY_KEY.map((k) => ({ AttributeName: k.attributeName, KeyType: k.keyType })),
        AttributeDefinitions: ATTRIBUTE_DEFINITIONS.filter((a) => used.has(a.attributeName)).map((a) => ({
            AttributeName: a.attributeName,
            AttributeType: a.attributeType,
        })),
        ...(indexes.length > 0 ? { GlobalSecondaryIndexes: indexes } : {}),
        ...(bend.streamOff ? {} : { StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }),
    };
}

/** Create a table from an input and, unless told not to, enable TTL on `ttl`. Returns its name. */
export async function createTestTable(input: CreateTableCommandInput, ttl = true): Promise<string> {
    const client = await dynamoClient();
    await client.send(new CreateTableCommand(input));
    if (ttl)
        await client.send(
            new UpdateTimeToLiveCommand({
                TableName: input.TableName,
                TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
            }),
        );
    return input.TableName as string;
}

/** Create an outbox table on DynamoDB Local, right or bent. */
export async function createOutboxTable(bend: Misprovision = {}, prefix = "cli"): Promise<string> {
    return createTestTable(outboxTableInput(uniqueTableName(prefix), bend), !bend.ttlOff);
}

/** A snapshot of what a migration could change: the table description (indexes, stream) and the TTL. */
export async function provisioning(
    client: DynamoDBClient,
    tableName: string,
): Promise<{ indexes: string[]; stream: string; ttl: string }> {
    const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table as TableDescription;
    const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
    return {
        indexes: (table.GlobalSecondaryIndexes ?? [])
            .map((g) => `${g.IndexName}:${g.Projection?.ProjectionType}:${g.IndexStatus}`)
            .sort(),
        stream: table.StreamSpecification?.StreamEnabled ? `${table.StreamSpecification.StreamViewType}` : "off",
        ttl: `${ttl?.TimeToLiveStatus}:${ttl?.AttributeName ?? ""}`,
    };
}

/** Create an outbox table whose TTL is enabled on `attribute` instead of the schema's. */
export async function createOutboxTableWithTtlOn(attribute: string): Promise<string> {
    const table = await createOutboxTable({ ttlOff: true });
    const client = await dynamoClient();
    await client.send(
        new UpdateTimeToLiveCommand({
            TableName: table,
            TimeToLiveSpecification: { AttributeName: attribute, Enabled: true },
        }),
    );
    return table;
}

/** The tables a suite creates: push each one, and the suite's afterEach drops them (call inside `describe`). */
export function tablesDroppedAfterEach(): TestTables {
    const tables = Object.assign([] as string[], {
        async create(bend: Misprovision = {}, prefix = "cli"): Promise<string> {
            const table = await createOutboxTable(bend, prefix);
            tables.push(table);
            return table;
        },
    });
    afterEach(async () => {
        for (const t of tables.splice(0)) await dropTable(t);
    });
    return tables;
}

/** The tables a test made, dropped after it: push a name, or make an outbox table with `create`. */
export interface TestTables extends Array<string> {
    /**
     * {@link createOutboxTable}, the table kept to be dropped after the test.
     * @param bend - How the table departs from the schema. @default {}
     * @param prefix - The table name's prefix. @default "cli"
     */
    create(bend?: Misprovision, prefix?: string): Promise<string>;
}

/** Delete a test table (best effort). */
export async function dropTable(tableName: string): Promise<void> {
    const client = await dynamoClient();
    await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
}
