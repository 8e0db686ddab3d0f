/**
 * `dynamodb-outbox adopt --from <region>` on DynamoDB Local: the command line around `adoptRegion` (its behaviour on
 * two regions is in tests/integration/relay/global-table.test.ts). DynamoDB Local keeps one database per region, so
 * the replica of the region that takes over (us-east-1, the CLI's `AWS_REGION` here) is written directly, with
 * records stamped by the evacuated region, as replication would have left them.
 */
import * as assert from "node:assert/strict";
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { OutboxWriter } from "../../../runtime/writer/writer";
import { dynamoClient } from "../../support/dynamodb";
import { createOutboxTable, scanRecords } from "../../support/runtime/table";
import { runCli } from "../../support/cli";

describe("dynamodb-outbox adopt", function () {
    this.timeout(60_000);

    it("re-stamps the evacuated region's pending records with --region's and prints the counts; a second run adopts none", async function () {
        const ddb = await dynamoClient();
        const tableName = await createOutboxTable(ddb, "adopt");
        try {
            const gone = new OutboxWriter({ client: ddb, tableName, region: "eu-west-1" });
            const here = new OutboxWriter({ client: ddb, tableName, region: "us-east-1" });
            for (let n = 0; n < 5; n += 1)
                await gone.write({ messages: [{ partition: `P${n % 2}`, type: "T", payload: n, orderingKey: "k" }] });
            await here.write({ messages: [{ partition: "P0", type: "T", payload: "own" }] });
            const run = await runCli(["adopt", "--table", tableName, "--from", "eu-west-1", "--json"]);
            assert.equal(run.code, 0, run.stderr);
            assert.deepEqual(JSON.parse(run.stdout), {
                command: "adopt",
                table: tableName,
                ok: true,
                from: "eu-west-1",
                region: "us-east-1",
                adopted: 5,
                inFlight: 0,
                moved: 0,
                failedPartitions: 0,
            });
            const records = await scanRecords(ddb, tableName);
            assert.deepEqual(
                records.map((r) => [r.originRegion, r.status]),
                records.map(() => ["us-east-1", "pending"]),
                "every record is us-east-1's now, still pending",
            );
            const again = await runCli(["adopt", "--table", tableName, "--from", "eu-west-1"]);
            assert.equal(again.code, 0, again.stderr);
            assert.match(again.stdout, /adopted 0 record\(s\) from eu-west-1/);
        } finally {
            await ddb.send(new DeleteTableCommand({ TableName: tableName }));
        }
    });

    it("refuses a missing --from, a malformed one, and --from equal to the region that takes over (usage exit 2)", async function () {
        const missing = await runCli(["adopt", "--table", "orders-outbox"]);
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /adopt needs --from <region>: the evacuated region, e.g. --from us-east-1/);
        const malformed = await runCli(["adopt", "--table", "orders-outbox", "--from", "Virginia"]);
        assert.equal(malformed.code, 2);
        assert.match(malformed.stderr, /adopt: from must be an AWS region name like "us-east-1", got "Virginia"/);
        const same = await runCli(["adopt", "--table", "orders-outbox", "--from", "us-east-1"]);
        assert.equal(same.code, 2);
        assert.match(same.stderr, /adopt: from and to are both us-east-1/);
        const foreign = await runCli(["verify", "--table", "orders-outbox", "--from", "us-east-1"]);
        assert.equal(foreign.code, 2);
        assert.match(foreign.stderr, /--from is not a flag of "verify"; it belongs to adopt/);
    });
});
