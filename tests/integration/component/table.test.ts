import * as assert from "node:assert/strict";
import { CLAIM_INDEX, EXPIRY_INDEX, OUTBOX_TABLE_TAG, RECORD_ID_INDEX } from "../../../runtime/schema";
import { BuiltOutbox, TYPE, buildOutbox } from "../../support/component-harness";

const KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab";

describe("Outbox table", () => {
    let std: BuiltOutbox;
    let table: Record<string, any>;

    before(async () => {
        std = await buildOutbox("tbl", { tags: { team: "payments" } });
        table = std.one(TYPE.table, "tbl-table").inputs;
    });

    function index(name: string): Record<string, any> {
        const found = table.globalSecondaryIndexes.filter((i: any) => i.name === name);
        assert.equal(found.length, 1, `exactly one ${name}`);
        return found[0];
    }

    it("keys the table on PK (HASH) and SK (RANGE), both strings", () => {
        assert.equal(table.hashKey, "PK");
        assert.equal(table.rangeKey, "SK");
        assert.deepEqual(table.attributes.map((a: any) => `${a.name}:${a.type}`).sort(), [
            "PK:S",
            "SK:S",
            "claim_sort:S",
            "expires_at:N",
            "has_expiry:S",
            "record_id:S",
        ]);
    });

    it("declares exactly the three GSIs through v7 keySchemas, never the deprecated hashKey/rangeKey", () => {
        assert.deepEqual(table.globalSecondaryIndexes.map((i: any) => i.name).sort(), [
            "ClaimIndex",
            "ExpiryIndex",
            "RecordIDIndex",
        ]);
        for (const i of table.globalSecondaryIndexes) {
            assert.equal(i.hashKey, undefined, `${i.name}.hashKey`);
            assert.equal(i.rangeKey, undefined, `${i.name}.rangeKey`);
        }
    });

    const hash = (attributeName: string) => ({ attributeName, keyType: "HASH" });
    const range = (attributeName: string) => ({ attributeName, keyType: "RANGE" });
    for (const [title, indexName, keySchemas, projectionType] of [
        [
            "ExpiryIndex: has_expiry HASH, expires_at RANGE, KEYS_ONLY",
            EXPIRY_INDEX.indexName,
            [hash("has_expiry"), range("expires_at")],
            "KEYS_ONLY",
        ],
        ["RecordIDIndex: record_id HASH, KEYS_ONLY", RECORD_ID_INDEX.indexName, [hash("record_id")], "KEYS_ONLY"],
        [
            "ClaimIndex: PK HASH, claim_sort RANGE, projected ALL",
            CLAIM_INDEX.indexName,
            [hash("PK"), range("claim_sort")],
            "ALL",
        ],
    ] as const) {
        it(title, () => {
            assert.deepEqual(index(indexName), { name: title.split(":")[0], keySchemas, projectionType });
        });
    }

    it("enables TTL on ttl and a NEW_IMAGE stream", () => {
        assert.deepEqual(table.ttl, { attributeName: "ttl", enabled: true });
        assert.equal(table.streamEnabled, true);
        assert.equal(table.streamViewType, "NEW_IMAGE");
    });

    it("defaults to on-demand billing, PITR on, deletion protection off, AWS owned encryption key", () => {
        assert.equal(table.billingMode, "PAY_PER_REQUEST");
        assert.equal(table.readCapacity, undefined);
        assert.deepEqual(table.pointInTimeRecovery, { enabled: true });
        assert.equal(table.deletionProtectionEnabled, false);
        assert.equal(table.serverSideEncryption, undefined);
    });

    it("tags the table with the caller's tags and the outbox tag the policy pack recognises", () => {
        assert.deepEqual(table.tags, { team: "payments", [OUTBOX_TABLE_TAG.key]: OUTBOX_TABLE_TAG.value });
    });

    it("encrypts with the customer key, and honours PITR and deletion protection args", async () => {
        const kms = await buildOutbox("tblkms", {
            kmsKeyArn: KMS_KEY,
            pointInTimeRecovery: false,
            deletionProtection: true,
        });
        const t = kms.one(TYPE.table).inputs;
        assert.deepEqual(t.serverSideEncryption, { enabled: true, kmsKeyArn: KMS_KEY });
        assert.deepEqual(t.pointInTimeRecovery, { enabled: false });
        assert.equal(t.deletionProtectionEnabled, true);
    });

    it("gives the table and every GSI the capacity when billing is PROVISIONED", async () => {
        const prov = await buildOutbox("tblprov", { billingMode: "PROVISIONED", provisionedCapacity: 7 });
        const t = prov.one(TYPE.table).inputs;
        assert.equal(t.billingMode, "PROVISIONED");
        assert.deepEqual([t.readCapacity, t.writeCapacity], [7, 7]);
        assert.deepEqual(
            t.globalSecondaryIndexes.map((i: any) => [i.name, i.readCapacity, i.writeCapacity]),
            [
                ["ExpiryIndex", 7, 7],
                ["RecordIDIndex", 7, 7],
                ["ClaimIndex", 7, 7],
            ],
        );
    });

    it("deep-merges transform.table over the computed args: a nested key it names replaces, the rest stays", async () => {
        const tr = await buildOutbox("tbltr", {
            transform: {
                table: {
                    tableClass: "STANDARD_INFREQUENT_ACCESS",
                    pointInTimeRecovery: { enabled: true, recoveryPeriodInDays: 7 },
                },
            },
        });
        const t = tr.one(TYPE.table).inputs;
        assert.equal(t.tableClass, "STANDARD_INFREQUENT_ACCESS");
        assert.deepEqual(t.pointInTimeRecovery, { enabled: true, recoveryPeriodInDays: 7 });
        assert.equal(t.streamViewType, "NEW_IMAGE", "untouched keys keep the component's value");
        assert.deepEqual(t.ttl, { attributeName: "ttl", enabled: true }, "untouched objects too");
    });
});
