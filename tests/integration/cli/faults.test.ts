/**
 * Faults no emulator can stage on demand: an UpdateTable refused half-way through a migration, and an expiry
 * sweep that never sees the record (ExpiryIndex lag on AWS). Real DynamoDB Local underneath, with the one
 * fault injected by a wrapping client or store.
 */
import * as assert from "node:assert/strict";
import { ScanCommand, UpdateTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Checklist } from "../../../cli/shared/checklist";
import { createOutput } from "../../../cli/shared/io";
import { runMigrate } from "../../../cli/migrate/migrate";
import { checkLive } from "../../../cli/verify/expiry";
import { LOCAL_REGION } from "../../../dev/emulators/dynamodb-local";
import { EXPIRY_INDEX, GLOBAL_SECONDARY_INDEXES, RECORD_ID_INDEX } from "../../../runtime/schema";
import { OutboxStore } from "../../../runtime/store";
import { dynamoClient } from "../../support/dynamodb";
import { captureIo, tablesDroppedAfterEach, fastClock, provisioning } from "../../support/cli";

describe("cli: faults", function () {
    this.timeout(120_000);
    const tables = tablesDroppedAfterEach();

    it("migrate stops at a refused UpdateTable, reports done/failed/not-run, and a rerun applies only what is left", async () => {
        const client = await dynamoClient();
        const table = await tables.create({ withoutIndexes: GLOBAL_SECONDARY_INDEXES.map((i) => i.indexName) });
        const refusing = {
            send: async (command: object): Promise<unknown> => {
                const create =
                    command instanceof UpdateTableCommand
                        ? command.input.GlobalSecondaryIndexUpdates?.[0]?.Create
                        : undefined;
                if (create?.IndexName === RECORD_ID_INDEX.indexName) {
                    throw Object.assign(
                        new Error(
                            "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
                        ),
                        { name: "LimitExceededException" },
                    );
                }
                return client.send(command as never);
            },
            destroy: () => undefined,
        } as unknown as DynamoDBClient;
        const io = captureIo({}, fastClock());
        const out = createOutput(io, true);
        const code = await runMigrate({
            client: refusing,
            tableName: table,
            region: LOCAL_REGION,
            apply: true,
            recreateClaimIndex: false,
            // An empty table without the indexes shows no sign of being an outbox: confirmed, as --confirm-table does.
            confirmedTable: true,
            out,
        });
        assert.equal(code, 1);
        const report = JSON.parse(io.output()) as {
            ok: boolean;
            error: string;
            steps: { kind: string; status: string }[];
        };
        assert.equal(report.ok, false);
        assert.deepEqual(
            report.steps.map((s) => s.status),
            ["done", "failed", "not-run"],
        );
        assert.match(
            report.error,
            /OutboxError \[UNAVAILABLE\]: create RecordIDIndex on "[^"]+" failed; nothing after this step was attempted, run migrate --apply again to continue: Subscriber limit exceeded/,
        );
        assert.deepEqual((await provisioning(client, table)).indexes, [`${EXPIRY_INDEX.indexName}:KEYS_ONLY:ACTIVE`]);

        const rerun = captureIo({}, fastClock());
        assert.equal(
            await runMigrate({
                client,
                tableName: table,
                region: LOCAL_REGION,
                apply: true,
                recreateClaimIndex: false,
                confirmedTable: true,
                out: createOutput(rerun, false),
            }),
            0,
        );
        assert.match(rerun.output(), /1\. create RecordIDIndex[\s\S]*2\. create ClaimIndex[\s\S]*applied 2 step\(s\)/);
        assert.deepEqual(
            (await provisioning(client, table)).indexes,
            GLOBAL_SECONDARY_INDEXES.map((i) => `${i.indexName}:${i.projectionType}:ACTIVE`).sort(),
        );
    });

    it("verify fails the expiry line after --timeout when the sweep never sees the record, and still cleans up", async () => {
        const client = await dynamoClient();
        const table = await tables.create();
        const clock = fastClock();
        const real = new OutboxStore({ client, tableName: table, clock });
        let sweeps = 0;
        const lagging = {
            preflight: () => real.preflight(),
            persist: real.persist.bind(real),
            countPending: real.countPending.bind(real),
            expire: async () => {
                sweeps++;
                return 0;
            },
        };
        const io = captureIo({}, clock);
        const checks = new Checklist(createOutput(io, false));
        await checkLive(checks, {
            store: lagging,
            client,
            tableName: table,
            region: LOCAL_REGION,
            expiryMs: 1000,
            timeoutMs: 10_000,
            pollIntervalMs: 1000,
            out: createOutput(io, false),
        });
        assert.deepEqual(
            checks.results.map((r) => `${r.id}:${r.status}`),
            ["preflight:pass", "expiry:fail", "depth:skip", "cleanup:pass"],
        );
        assert.match(
            io.output(),
            /✗ a record expiring 1\.0 s after persist, in partition "__verify#[^"]+", is moved by the expiry sweep — not moved 10\.0 s after persist: the sweep reads ExpiryIndex \(has_expiry, expires_at\); check that index, or raise --timeout/,
        );
        assert.match(io.output(), /… waiting for the expiry sweep: sweep moved 0 \(ExpiryIndex may lag\)/);
        // One early sweep, then one per poll interval after the expiry: never a busy loop.
        assert.ok(sweeps >= 9 && sweeps <= 12, `expected about 10 sweeps in 10 s at 1 s intervals, got ${sweeps}`);
        assert.deepEqual(
            (await client.send(new ScanCommand({ TableName: table }))).Items,
            [],
            "the verification record and fence row were left behind",
        );
    });
});
