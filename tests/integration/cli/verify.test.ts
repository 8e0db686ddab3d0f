import * as assert from "node:assert/strict";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { VERIFY_HEADER, VERIFY_PARTITION_PREFIX } from "../../../cli/verify/expiry";
import { startFauxqs } from "../../../dev/emulators/fauxqs";
import { MESSAGE_ATTRIBUTE } from "../../../runtime/record/message";
import {
    ATTR,
    CLAIM_INDEX,
    EXPIRY_INDEX,
    RECORD_ID_INDEX,
    STREAM_VIEW_TYPE,
    TTL_ATTRIBUTE,
} from "../../../runtime/schema";
import { expiryShardsRowKey } from "../../../runtime/store";
import { tableRegions } from "../../../cli/verify/origin";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { dynamoClient, uniqueTableName } from "../../support/dynamodb";
import { preserveEnvironment } from "../../support/local-environment";
import {
    createOutboxTable,
    createOutboxTableWithTtlOn,
    tablesDroppedAfterEach,
    fastClock,
    runCli,
    type Misprovision,
} from "../../support/cli";

/** The checklist lines of a text run: mark and title, without the reasons. */
function lines(stdout: string): string[] {
    return stdout
        .split("\n")
        .filter((l) => /^ {2}[✓✗!-] /.test(l))
        .map((l) => l.replace(/ — .*$/, "").replace(/"__verify#[^"]+"/, '"__verify#…"'));
}

describe("cli: verify on DynamoDB Local", function () {
    this.timeout(120_000);
    const tables = tablesDroppedAfterEach();

    it("passes every line on a table provisioned from the schema, proves the expiry path, and leaves nothing behind", async () => {
        const table = await createOutboxTable();
        tables.push(table);
        const clock = fastClock();
        const run = await runCli(["verify", "--table", table], clock);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.equal(run.stderr, "");
        assert.deepEqual(lines(run.stdout), [
            `  ✓ table "${table}" exists and is ACTIVE`,
            "  ✓ primary key [PK(S,HASH), SK(S,RANGE)]",
            `  ✓ ${EXPIRY_INDEX.indexName} [has_expiry(S,HASH), expires_at(N,RANGE)] KEYS_ONLY, ACTIVE`,
            `  ✓ ${RECORD_ID_INDEX.indexName} [record_id(S,HASH)] KEYS_ONLY, ACTIVE`,
            `  ✓ ${CLAIM_INDEX.indexName} [PK(S,HASH), claim_sort(S,RANGE)] ALL, ACTIVE`,
            `  ✓ TTL enabled on "${TTL_ATTRIBUTE}"`,
            `  ✓ stream enabled with new images (${STREAM_VIEW_TYPE})`,
            "  ✓ store preflight passes",
            '  ✓ a record expiring 2.0 s after persist, in partition "__verify#…", is moved by the expiry sweep',
            "  ✓ depth (countPending) counts it, then drains",
            "  ✓ verification record and fence row removed",
        ]);
        // It waited for the expiry on the clock (and said so) rather than sweeping early.
        assert.match(run.stdout, /… waiting for the expiry sweep: expires in \d\.\d s/);
        assert.match(
            run.stdout,
            /moved 2\.\d s after persist; status expired, ttl \d+, out of ClaimIndex and ExpiryIndex/,
        );
        assert.match(run.stdout, /\nverified: 11 passed/);
        const scan = await (await dynamoClient()).send(new ScanCommand({ TableName: table }));
        assert.deepEqual(scan.Items, [], "verify left items behind");
    });

    it("with --expiry-shards 4 proves the expiry path through a shard, and leaves only the table's expiry shards mark, at 4", async () => {
        const table = await createOutboxTable();
        tables.push(table);
        const run = await runCli(["verify", "--table", table, "--expiry", "1", "--expiry-shards", "4"]);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(run.stdout, /\nverified: 11 passed/);
        const scan = await (await dynamoClient()).send(new ScanCommand({ TableName: table }));
        assert.deepEqual(scan.Items, [{ ...expiryShardsRowKey(), [ATTR.maxExpiryShards]: { N: "4" } }]);
    });

    it("gives the same as one JSON object with --json, progress on stderr", async () => {
        const table = await createOutboxTable();
        tables.push(table);
        const run = await runCli(["verify", "--table", table, "--json", "--expiry", "1"]);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        const report = JSON.parse(run.stdout) as {
            ok: boolean;
            table: string;
            counts: Record<string, number>;
            checks: { id: string; status: string }[];
            verificationRecord: { partition: string; movedAfterMs: number };
        };
        assert.equal(report.ok, true);
        assert.equal(report.table, table);
        assert.deepEqual(report.counts, { pass: 11, fail: 0, warn: 0, skip: 0 });
        assert.deepEqual(
            report.checks.map((c) => `${c.id}:${c.status}`),
            [
                "table",
                "primary-key",
                `index:${EXPIRY_INDEX.indexName}`,
                `index:${RECORD_ID_INDEX.indexName}`,
                `index:${CLAIM_INDEX.indexName}`,
                "ttl",
                "stream",
                "preflight",
                "expiry",
                "depth",
                "cleanup",
            ].map((id) => `${id}:pass`),
        );
        assert.ok(report.verificationRecord.partition.startsWith(VERIFY_PARTITION_PREFIX));
        assert.ok(report.verificationRecord.movedAfterMs >= 1000);
        assert.match(run.stderr, /… waiting for the expiry sweep/);
    });

    const broken: [string, Misprovision, RegExp, string[]][] = [
        [
            `without ${EXPIRY_INDEX.indexName}`,
            { withoutIndexes: [EXPIRY_INDEX.indexName] },
            /✗ ExpiryIndex \[has_expiry\(S,HASH\), expires_at\(N,RANGE\)\] KEYS_ONLY, ACTIVE — missing: the expiry sweep finds pending records past expires_at, and preflight rejects the table; fix: dynamodb-outbox migrate --table \S+ \(plan\), then add --apply/,
            [],
        ],
        [
            `without ${RECORD_ID_INDEX.indexName}`,
            { withoutIndexes: [RECORD_ID_INDEX.indexName] },
            /✗ RecordIDIndex \[record_id\(S,HASH\)\] KEYS_ONLY, ACTIVE — missing: complete and release resolve a record id to its keys/,
            [],
        ],
        [
            `without ${CLAIM_INDEX.indexName}`,
            { withoutIndexes: [CLAIM_INDEX.indexName] },
            /✗ ClaimIndex \[PK\(S,HASH\), claim_sort\(S,RANGE\)\] ALL, ACTIVE — missing: the claim query filters on the non-key status attribute/,
            [],
        ],
        [
            `with ${CLAIM_INDEX.indexName} KEYS_ONLY`,
            { claimIndexProjection: "KEYS_ONLY" },
            /✗ ClaimIndex \[PK\(S,HASH\), claim_sort\(S,RANGE\)\] ALL, ACTIVE — projected KEYS_ONLY: every claim fails with "does not project one or more filter attributes"\. fix: dynamodb-outbox migrate --table \S+ --recreate-claim-index \(plan\), then add --apply\. While it is rebuilt, claims fail while ClaimIndex is absent, so delivery stops; nothing is lost/,
            ["--recreate-claim-index"],
        ],
        [
            "with TTL off",
            { ttlOff: true },
            /✗ TTL enabled on "ttl" — DISABLED: completed and expired records are never deleted; fix: dynamodb-outbox migrate/,
            [],
        ],
        [
            "with the stream off",
            { streamOff: true },
            /✗ stream enabled with new images \(NEW_IMAGE\) — no stream: the publisher gets nothing and only the sweeper delivers/,
            [],
        ],
    ];
    for (const [what, bend, line, flags] of broken) {
        it(`fails a table ${what} with its line; migrate plans the fix, applies it, and the table then verifies clean`, async () => {
            const table = await createOutboxTable(bend);
            tables.push(table);
            const failed = await runCli(["verify", "--table", table]);
            assert.equal(failed.code, 1, failed.stdout);
            assert.match(failed.stdout, line);
            assert.equal(
                lines(failed.stdout).filter((l) => l.startsWith("  ✗")).length,
                1,
                `exactly one ✗ line expected:\n${failed.stdout}`,
            );
            assert.match(failed.stdout, /\nNOT verified: 1 failed/);

            const plan = await runCli(["migrate", "--table", table, ...flags]);
            assert.equal(plan.code, 0, plan.stdout);
            assert.match(plan.stdout, /nothing was changed\. Run again with --apply/);
            const stillFailing = await runCli(["verify", "--table", table]);
            assert.equal(stillFailing.code, 1, "the plan alone must not fix anything");

            const applied = await runCli(["migrate", "--table", table, "--apply", ...flags]);
            assert.equal(applied.code, 0, applied.stdout + applied.stderr);
            const fixed = await runCli(["verify", "--table", table]);
            assert.equal(fixed.code, 0, fixed.stdout);
            assert.match(fixed.stdout, /\nverified: 11 passed/);
        });
    }

    it("skips the live checks when the provisioning is wrong, and says why", async () => {
        const table = await createOutboxTable({ withoutIndexes: [CLAIM_INDEX.indexName] });
        tables.push(table);
        const run = await runCli(["verify", "--table", table]);
        assert.equal(run.code, 1);
        assert.match(
            run.stdout,
            /\n {2}- store preflight and expiry round trip — fix the lines marked ✗ above first\n/,
        );
    });

    it("fails TTL enabled on another attribute, naming it", async () => {
        const table = await createOutboxTableWithTtlOn("expiresAt");
        tables.push(table);
        const run = await runCli(["verify", "--table", table]);
        assert.equal(run.code, 1);
        assert.match(
            run.stdout,
            /✗ TTL enabled on "ttl" — ENABLED on "expiresAt": completed and expired records are never deleted; migrate explains the fix/,
        );
    });

    it("with --dlq-url, sends the expired verification record to the DLQ as the sweeper does, marked as a verification", async () => {
        const fauxqs = await startFauxqs();
        try {
            const table = await createOutboxTable();
            tables.push(table);
            const { queueUrl } = await fauxqs.createQueue("orders-outbox-dlq");
            const run = await runCli([
                "verify",
                "--table",
                table,
                "--dlq-url",
                queueUrl,
                "--sqs-endpoint",
                fauxqs.endpoint,
                "--expiry",
                "1",
            ]);
            assert.equal(run.code, 0, run.stdout + run.stderr);
            assert.match(
                run.stdout,
                /✓ expired record sent to the DLQ — message \S+ on \S+\/orders-outbox-dlq \(body headers carry dynamodb-outbox-verify: true/,
            );
            const [message, ...more] = await fauxqs.receiveAll(queueUrl, { expected: 1 });
            assert.deepEqual(more, []);
            const body = JSON.parse(message?.body ?? "{}") as {
                reason: string;
                recordId: string;
                partition: string;
                headers: Record<string, string>;
            };
            assert.equal(body.reason, "expired");
            assert.ok(body.partition.startsWith(VERIFY_PARTITION_PREFIX));
            assert.deepEqual(body.headers, { [VERIFY_HEADER]: "true" });
            assert.equal(message?.attributes[MESSAGE_ATTRIBUTE.reason], "expired");
            assert.equal(message?.attributes[MESSAGE_ATTRIBUTE.recordId], body.recordId);
        } finally {
            await fauxqs.stop();
        }
    });

    it("fails the DLQ line, naming the permission, when the queue does not exist", async () => {
        const fauxqs = await startFauxqs();
        try {
            const table = await createOutboxTable();
            tables.push(table);
            const run = await runCli([
                "verify",
                "--table",
                table,
                "--dlq-url",
                `${fauxqs.endpoint}/000000000000/no-such-queue`,
                "--sqs-endpoint",
                fauxqs.endpoint,
                "--expiry",
                "1",
            ]);
            assert.equal(run.code, 1);
            assert.match(
                run.stdout,
                /✗ expired record sent to the DLQ — .*\(check the queue URL and region; the tool needs sqs:SendMessage on the queue\)/,
            );
            assert.match(run.stdout, /✓ verification record and fence row removed/);
        } finally {
            await fauxqs.stop();
        }
    });

    it("fails on a table that does not exist", async () => {
        const run = await runCli(["verify", "--table", uniqueTableName("cli-none")]);
        assert.equal(run.code, 1);
        assert.match(
            run.stdout,
            /✗ table "cli-none-[^"]+" exists and is ACTIVE — not found in us-east-1: check --table and --region/,
        );
    });

    describe("on a global table: pending records' origin stamps", function () {
        /** Write `count` keyless events to `table` from a writer with `region` (undefined: no stamp). */
        async function writeEvents(table: string, count: number, region: string | undefined): Promise<string[]> {
            const restore = preserveEnvironment(["AWS_REGION"]);
            delete process.env.AWS_REGION;
            try {
                const writer = new OutboxWriter({
                    client: await dynamoClient(),
                    tableName: table,
                    ...(region !== undefined ? { region } : {}),
                });
                const ids: string[] = [];
                for (let n = 0; n < count; n += 1)
                    ids.push(
                        ...(await writer.write({ messages: [{ partition: `ORDER#${n}`, type: "T", payload: n }] }))
                            .messageIds,
                    );
                return ids;
            } finally {
                restore();
            }
        }

        it("with --regions, warns of the pending records without a stamp and those stamped with none of the regions, with counts, sample ids and the fix (exit 0: the home region delivers them)", async () => {
            const table = await createOutboxTable();
            tables.push(table);
            await writeEvents(table, 3, "us-east-1");
            await writeEvents(table, 2, "us-west-2");
            const unstamped = await writeEvents(table, 7, undefined);
            const stray = await writeEvents(table, 1, "eu-west-1");
            const run = await runCli(["verify", "--table", table, "--expiry", "1", "--regions", "us-east-1,us-west-2"]);
            assert.equal(run.code, 0, run.stdout + run.stderr);
            const line = run.stdout.split("\n").find((l) => l.includes("origin stamp"));
            assert.ok(line, run.stdout);
            assert.match(
                line,
                new RegExp(
                    `^  ! pending records carry the origin stamp of one of us-east-1, us-west-2 — 7 without origin_region \\(e\\.g\\. (${unstamped.join("|")})(, (${unstamped.join("|")})){4}\\); 1 stamped with a region that is none of the table's \\(e\\.g\\. ${stray[0]} in eu-west-1\\): the home region's relay delivers these, not the region that wrote them; fix: set each writer's region \\(OutboxWriter region, or AWS_REGION\\) to its replica's region, and globalTable: true so a writer without one refuses to start$`,
                ),
            );
            assert.match(run.stdout, /\nverified: 11 passed, 1 warning\(s\)/);
            const json = await runCli([
                "verify",
                "--table",
                table,
                "--expiry",
                "1",
                "--regions",
                "us-east-1,us-west-2",
                "--json",
            ]);
            const report = JSON.parse(json.stdout) as { origin: Record<string, unknown> };
            assert.equal(report.origin.unstamped, 7);
            assert.equal((report.origin.unstampedSample as string[]).length, 5);
            assert.ok((report.origin.unstampedSample as string[]).every((id) => unstamped.includes(id)));
            assert.deepEqual(report.origin.regions, ["us-east-1", "us-west-2"]);
            assert.equal(report.origin.strayStamped, 1);
            assert.deepEqual(report.origin.straySample, [{ recordId: stray[0], originRegion: "eu-west-1" }]);
        });

        it("passes the line when every pending record carries one of the regions, and has no such line on a table without replicas", async () => {
            const table = await createOutboxTable();
            tables.push(table);
            await writeEvents(table, 2, "us-east-1");
            await writeEvents(table, 2, "us-west-2");
            const run = await runCli(["verify", "--table", table, "--expiry", "1", "--regions", "us-east-1,us-west-2"]);
            assert.equal(run.code, 0, run.stdout + run.stderr);
            assert.match(run.stdout, /\n {2}✓ pending records carry the origin stamp of one of us-east-1, us-west-2\n/);
            assert.match(run.stdout, /\nverified: 12 passed/);
            await writeEvents(table, 1, undefined);
            // DynamoDB Local shows no Replicas, so without --regions this is a single-region table: no origin line.
            const single = await runCli(["verify", "--table", table, "--expiry", "1"]);
            assert.equal(single.code, 0, single.stdout + single.stderr);
            assert.doesNotMatch(single.stdout, /origin stamp/);
        });

        it("takes the table's regions from DescribeTable's Replicas, else none", () => {
            // No emulator shows replicas (DynamoDB Local's DescribeTable has no Replicas): these are DescribeTable
            // answers written by hand, in the shape AWS documents for a global table (version 2019.11.21).
            assert.deepEqual(
                tableRegions(
                    "us-east-1",
                    { Replicas: [{ RegionName: "us-west-2" }, { RegionName: "eu-west-1" }] },
                    undefined,
                ),
                ["us-east-1", "us-west-2", "eu-west-1"],
            );
            assert.deepEqual(
                tableRegions(
                    "us-east-1",
                    { Replicas: [{ RegionName: "us-east-1" }, { RegionName: "us-west-2" }] },
                    undefined,
                ),
                ["us-east-1", "us-west-2"],
            );
            assert.equal(tableRegions("us-east-1", {}, undefined), undefined);
            assert.equal(tableRegions("us-east-1", { Replicas: [] }, undefined), undefined);
            assert.deepEqual(tableRegions("us-east-1", {}, ["us-west-2"]), ["us-west-2"], "--regions wins");
        });
    });
});
