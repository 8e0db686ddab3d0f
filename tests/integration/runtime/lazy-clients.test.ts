/**
 * The runtime entry loads no destination client until code that sends through one runs: a writer-only application
 * loads `@aws-sdk/client-dynamodb` alone (`runtime/sdk-clients.ts`; `npm run bench:require` times it), and an
 * `OutboxConsumer`'s function loads `@aws-sdk/client-s3` only when it reads claim checks.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";

const REPO = path.resolve(__dirname, "..", "..", "..");

/** The `@aws-sdk/client-*` packages a fresh process has loaded after running `script` against the runtime entry. */
function clientsLoadedBy(script: string): string[] {
    const child = spawnSync(
        process.execPath,
        [
            "-r",
            "ts-node/register/transpile-only",
            "-e",
            `const m = require("./runtime");
const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
${script}
const names = Object.keys(require.cache).map((f) => /@aws-sdk[\\\\/](client-[a-z0-9-]+)[\\\\/]/.exec(f)?.[1]).filter(Boolean);
process.stdout.write(JSON.stringify([...new Set(names)].sort()));`,
        ],
        { cwd: REPO, encoding: "utf8" },
    );
    assert.equal(child.status, 0, child.stderr);
    return JSON.parse(child.stdout) as string[];
}

describe("runtime: the destination clients load on first use", function () {
    this.timeout(120_000);

    it("loads only @aws-sdk/client-dynamodb for an application that requires the runtime and builds an OutboxWriter", () => {
        assert.deepEqual(
            clientsLoadedBy(
                `new m.OutboxWriter({ client: new DynamoDBClient({ region: "eu-west-1" }), tableName: "orders" });`,
            ),
            ["client-dynamodb"],
        );
    });

    it("an OutboxConsumer's function (inboxLambda) loads @aws-sdk/client-s3 only when its environment names a payload bucket", () => {
        const cold = (bucket: string) =>
            `const { inboxLambda, INBOX_ENV } = require("./runtime/inbox/lambda");
process.env.AWS_REGION = "eu-west-1";
inboxLambda(() => [], { [INBOX_ENV.tableName]: "inbox", [INBOX_ENV.consumer]: "billing", [INBOX_ENV.payloadBucket]: "${bucket}" });`;
        assert.deepEqual(clientsLoadedBy(cold("")), ["client-dynamodb"]);
        assert.deepEqual(clientsLoadedBy(cold("orders-payloads")), ["client-dynamodb", "client-s3"]);
    });

    it("loads the SNS client once a topic destination sends (the check above can fail)", () => {
        assert.deepEqual(clientsLoadedBy(`require("./runtime/sdk-clients").snsSdk();`), [
            "client-dynamodb",
            "client-sns",
        ]);
    });
});
