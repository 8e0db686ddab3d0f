/**
 * The writer's key homing (`keyHoming`) on DynamoDB Local: a keyed message whose partition is homed in another region
 * is refused with nothing written (the caller's items included), or written with a warning; keyless messages are
 * never homed; every malformed option and every bad answer of `homeOf` is refused by name. The two-region
 * behaviour (homed keys across both regions' writers) is in tests/integration/relay/global-table.test.ts.
 */
import assert from "node:assert/strict";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import fc from "fast-check";
import { isOutboxError, type OutboxError } from "../../../runtime/errors";
import { ATTR } from "../../../runtime/schema";
import { OutboxWriter, type KeyHoming, type OutboxWriterOptions } from "../../../runtime/writer/writer";
import { preserveEnvironment } from "../../support/local-environment";
import { RecordingLogger, rejectsWith } from "../../support/store/helpers";
import {
    fixedClock,
    message,
    rejection,
    scanAll,
    WRITER_ADDRESS,
    writerOnFreshTable,
} from "../../support/writer/world";

const [A, B, C] = ["us-east-1", "us-west-2", "eu-west-1"] as const;
const REGIONS = [A, B, C];

/** ACCOUNT#a is homed in A, ACCOUNT#b in B, everything else in C. */
const HOMES: KeyHoming = {
    regions: REGIONS,
    homeOf: (partition) => (partition === "ACCOUNT#a" ? A : partition === "ACCOUNT#b" ? B : C),
};

describe("OutboxWriter keyHoming (DynamoDB Local)", function () {
    let client: DynamoDBClient, table: string;
    beforeEach(async () => ({ client, table } = await writerOnFreshTable()));

    const homedWriter = (over: Partial<OutboxWriterOptions> = {}): OutboxWriter =>
        new OutboxWriter({
            client,
            tableName: table,
            clock: fixedClock(),
            address: WRITER_ADDRESS,
            region: A,
            keyHoming: HOMES,
            ...over,
        });

    it("refuses a keyed message homed in another region, naming the partition, both regions and the fix; the business item is not written either", async function () {
        const writer = homedWriter();
        const err = (await rejection(
            writer.write({
                items: [{ Put: { TableName: table, Item: { PK: { S: "ORDER#1" }, SK: { S: "META" } } } }],
                messages: [
                    message({ partition: "ACCOUNT#a", orderingKey: "k" }),
                    message({ partition: "ACCOUNT#b", orderingKey: "k" }),
                ],
            }),
        )) as OutboxError;
        assert.ok(isOutboxError(err, "INVALID_PAYLOAD"), String(err));
        assert.match(
            err.message,
            /^write: messages\[1\] \(partition "ACCOUNT#b", orderingKey "k"\) is homed in us-west-2, and this writer is in us-east-1; nothing was written; write it from us-west-2's writer, or change keyHoming\.homeOf$/,
        );
        assert.deepEqual(err.context, { messageIndex: 1, partition: "ACCOUNT#b", region: A, homeRegion: B });
        assert.deepEqual(await scanAll(client, table), [], "no business item, no record, no FENCE allocation");
    });

    it("writes keyed messages of its own region's partitions, and keyless messages of any partition without asking homeOf", async function () {
        const asked: string[] = [];
        const writer = homedWriter({
            keyHoming: { regions: REGIONS, homeOf: (p) => (asked.push(p), p === "ACCOUNT#a" ? A : B) },
        });
        const { messageIds } = await writer.write({
            messages: [
                message({ partition: "ACCOUNT#a", orderingKey: "k1" }),
                message({ partition: "ACCOUNT#a", orderingKey: "k2" }),
                message({ partition: "ACCOUNT#b" }),
            ],
        });
        assert.equal(messageIds.length, 3);
        assert.deepEqual(asked, ["ACCOUNT#a"], "asked once per partition of keyed messages, never for keyless ones");
        const records = (await scanAll(client, table)).filter((i) => i[ATTR.sk]!.S!.startsWith("OUTBOX#"));
        assert.equal(records.length, 3);
        assert.deepEqual([...new Set(records.map((r) => r[ATTR.originRegion]?.S))], [A], "stamped with A");
    });

    it("takes a map from partition to home region, and refuses a keyed partition the map lacks (INVALID_CONFIG, nothing written)", async function () {
        const writer = homedWriter({ keyHoming: { regions: [A, B], homeOf: { "ACCOUNT#a": A, "ACCOUNT#b": B } } });
        await writer.write({ messages: [message({ partition: "ACCOUNT#a", orderingKey: "k" })] });
        await rejectsWith(
            writer.write({ messages: [message({ partition: "ACCOUNT#b", orderingKey: "k" })] }),
            "INVALID_PAYLOAD",
            /is homed in us-west-2/,
        );
        await rejectsWith(
            writer.write({ messages: [message({ partition: "toString", orderingKey: "k" })] }),
            "INVALID_CONFIG",
            /keyHoming\.homeOf has no home for partition "toString"; nothing was written; add it to the map/,
        );
        assert.equal((await scanAll(client, table)).length, 2, "only the first write: its record and FENCE row");
    });

    it('"warn" writes the foreign keyed message and warns on the logger with its partition and both regions; check() warns of nothing', async function () {
        const logger = new RecordingLogger();
        const writer = homedWriter({ logger, keyHoming: { ...HOMES, onForeignWrite: "warn" } });
        writer.check({ messages: [message({ partition: "ACCOUNT#b", orderingKey: "k" })] });
        assert.deepEqual(logger.warnings(), [], "check writes nothing, so it warns of nothing");
        const { messageIds } = await writer.write({
            messages: [message({ partition: "ACCOUNT#b", orderingKey: "k" }), message({ partition: "ACCOUNT#c" })],
        });
        assert.equal((await scanAll(client, table)).filter((i) => i[ATTR.sk]!.S!.startsWith("OUTBOX#")).length, 2);
        assert.deepEqual(logger.warnings(), [
            {
                level: "warn",
                message: "outbox write of a partition homed in another region",
                attributes: {
                    messageIndex: 0,
                    partition: "ACCOUNT#b",
                    region: A,
                    homeRegion: B,
                    messageId: messageIds[0],
                },
            },
        ]);
    });

    it("refuses a homeOf that throws, returns a non-string or names a region outside regions (INVALID_CONFIG, nothing written)", async function () {
        const boom = new Error("lookup down");
        const cases: [KeyHoming["homeOf"], RegExp][] = [
            [
                () => {
                    throw boom;
                },
                /keyHoming\.homeOf threw for partition "P"; nothing was written; make it return one of \["us-east-1","us-west-2","eu-west-1"\]/,
            ],
            [
                () => undefined as unknown as string,
                /keyHoming\.homeOf gave undefined as the home of partition "P", which is none of keyHoming\.regions/,
            ],
            [() => 7 as unknown as string, /gave 7 as the home/],
            [
                () => "ap-south-1",
                /gave "ap-south-1" as the home of partition "P", which is none of keyHoming\.regions \["us-east-1","us-west-2","eu-west-1"\]; nothing was written; make it return one of them/,
            ],
            [{ P: "mars" }, /gave "mars" as the home/],
        ];
        for (const [homeOf, pattern] of cases) {
            const err = await rejection(
                homedWriter({ keyHoming: { regions: REGIONS, homeOf } }).write({
                    items: [{ Put: { TableName: table, Item: { PK: { S: "ORDER#1" }, SK: { S: "META" } } } }],
                    messages: [message({ orderingKey: "k" })],
                }),
            );
            assert.ok(isOutboxError(err, "INVALID_CONFIG"), String(err));
            assert.match((err as Error).message, pattern);
            assert.deepEqual((err as OutboxError).context, { partition: "P" });
            if (typeof homeOf === "function" && pattern.source.includes("threw"))
                assert.equal((err as Error).cause, boom, "the thrown error is the cause");
        }
        assert.deepEqual(await scanAll(client, table), []);
    });

    it("refuses a malformed keyHoming at construction (INVALID_CONFIG), naming the setting and the fix", function () {
        const restore = preserveEnvironment(["AWS_REGION"]);
        try {
            const cases: [Partial<OutboxWriterOptions>, RegExp][] = [
                [
                    { keyHoming: "A" as unknown as KeyHoming },
                    /keyHoming must be \{ regions, homeOf, onForeignWrite\? \}, got "A"/,
                ],
                [{ keyHoming: { ...HOMES, regions: [] } }, /keyHoming\.regions must list the table's regions/],
                [
                    { keyHoming: { ...HOMES, regions: "us-east-1" as unknown as string[] } },
                    /keyHoming\.regions must list/,
                ],
                [
                    { keyHoming: { ...HOMES, regions: [A, "Mars"] } },
                    /keyHoming\.regions\[1\] must be an AWS region name like "us-east-1", got "Mars"/,
                ],
                [
                    { keyHoming: { ...HOMES, homeOf: "us-east-1" as unknown as KeyHoming["homeOf"] } },
                    /keyHoming\.homeOf must be a function from partition to region, or a map/,
                ],
                [
                    { keyHoming: { ...HOMES, onForeignWrite: "ignore" as "warn" } },
                    /keyHoming\.onForeignWrite must be "refuse" or "warn", got "ignore"; omit it for "refuse"/,
                ],
                [
                    { keyHoming: { ...HOMES, regions: [B, C] } },
                    /keyHoming\.regions \["us-west-2","eu-west-1"\] does not include the writer's region "us-east-1"/,
                ],
                [
                    { keyHoming: { ...HOMES, onForeignWrite: "warn" } },
                    /keyHoming\.onForeignWrite "warn" needs the writer's logger, or the warning would go nowhere/,
                ],
            ];
            for (const [over, pattern] of cases)
                assert.throws(
                    () => homedWriter(over),
                    (e: unknown) => isOutboxError(e, "INVALID_CONFIG") && pattern.test((e as Error).message),
                    String(pattern),
                );
            delete process.env.AWS_REGION;
            assert.throws(
                () => new OutboxWriter({ client, tableName: table, keyHoming: HOMES }),
                (e: unknown) =>
                    isOutboxError(e, "INVALID_CONFIG") &&
                    /keyHoming needs the writer's region.*pass region/.test((e as Error).message),
            );
        } finally {
            restore();
        }
    });

    it("property: a write is refused exactly when one of its keyed messages is homed outside the writer's region, and a refused write leaves the table as it was", async function () {
        this.timeout(120_000);
        const partitions = ["P0", "P1", "P2", "P3"];
        await fc.assert(
            fc.asyncProperty(
                fc.constantFrom(...REGIONS),
                fc.array(fc.constantFrom(...REGIONS), { minLength: 4, maxLength: 4 }),
                fc.array(fc.record({ p: fc.nat({ max: 3 }), keyed: fc.boolean() }), { minLength: 1, maxLength: 5 }),
                async (region, homes, picks) => {
                    const writer = homedWriter({
                        region,
                        keyHoming: { regions: REGIONS, homeOf: (p) => homes[partitions.indexOf(p)]! },
                    });
                    const messages = picks.map(({ p, keyed }) =>
                        message({ partition: partitions[p]!, ...(keyed ? { orderingKey: "k" } : {}) }),
                    );
                    const foreign = picks.some(({ p, keyed }) => keyed && homes[p] !== region);
                    const before = (await scanAll(client, table)).length;
                    const err = await rejection(
                        writer.write({
                            items: [
                                {
                                    Put: {
                                        TableName: table,
                                        Item: { PK: { S: `ORDER#${before}` }, SK: { S: "META" } },
                                    },
                                },
                            ],
                            messages,
                        }),
                    );
                    assert.equal(err !== undefined, foreign, `refused ⇔ a keyed message is foreign (${String(err)})`);
                    if (foreign) {
                        assert.ok(isOutboxError(err, "INVALID_PAYLOAD"));
                        assert.notEqual((err as OutboxError).context.homeRegion, region);
                        assert.equal((await scanAll(client, table)).length, before, "nothing written");
                    } else {
                        assert.ok((await scanAll(client, table)).length > before, "written");
                    }
                },
            ),
            { numRuns: 40 },
        );
    });
});
