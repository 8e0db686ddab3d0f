/**
 * `outbox-payload-bucket` on the resources an Outbox with `largePayloads` records under the mocks: none for the
 * component's own bucket, and one for each thing a change makes wrong (public access, encryption, expiry).
 */
import * as assert from "node:assert/strict";
import { PAYLOAD_BUCKET_TYPES, outboxPolicies } from "../../../policy/outbox-policies";
import type { RecordedResource } from "../../support/pulumi-mocks";
import { buildOutbox } from "../../support/component-harness";
import { violationsOf } from "../../support/policy/bridge";

describe("outbox-payload-bucket", () => {
    let resources: RecordedResource[];
    before(async () => {
        resources = (await buildOutbox("polpay", { largePayloads: true })).resources;
    });

    const payloadViolations = async (changed: RecordedResource[]) =>
        (await violationsOf(outboxPolicies, changed)).filter((v) => v.startsWith("outbox-payload-bucket:"));
    const change = (type: string, edit: (inputs: Record<string, any>) => Record<string, any> | undefined) =>
        resources.flatMap((r) => {
            if (r.type !== type) return [r];
            const inputs = edit({ ...r.inputs });
            return inputs === undefined ? [] : [{ ...r, inputs }];
        });

    it("finds nothing wrong with the bucket the component declares", async () => {
        assert.ok(resources.some((r) => r.type === PAYLOAD_BUCKET_TYPES.bucket));
        assert.deepEqual(await payloadViolations(resources), []);
    });

    // Spelled here, not read from the rule: a rule that forgot one of them must fail this test.
    for (const setting of ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"]) {
        it(`flags a bucket whose public access block sets ${setting}: false, naming that setting only`, async () => {
            assert.deepEqual(
                await payloadViolations(
                    change(PAYLOAD_BUCKET_TYPES.publicAccessBlock, (i) => ({ ...i, [setting]: false })),
                ),
                [
                    `outbox-payload-bucket: outbox payload bucket "polpay-payloads" may be public: ${setting} not true in a public access block; it holds whole payloads: block all four (the Outbox component does)`,
                ],
            );
        });

        it(`flags a second public access block on the bucket that sets ${setting}: false (whichever is applied last wins)`, async () => {
            const block = resources.find((r) => r.type === PAYLOAD_BUCKET_TYPES.publicAccessBlock)!;
            const second = {
                ...block,
                name: "second-public-access",
                urn: block.urn!.replace(/::[^:]+$/, "::second-public-access"),
                inputs: { ...block.inputs, [setting]: false },
            };
            const v = await payloadViolations([...resources, second]);
            assert.deepEqual(v.length, 1);
            assert.match(v[0]!, new RegExp(`may be public: ${setting} not true`));
        });
    }

    it("flags a bucket whose public access is not fully blocked", async () => {
        const v = await payloadViolations(
            change(PAYLOAD_BUCKET_TYPES.publicAccessBlock, (i) => ({ ...i, restrictPublicBuckets: false })),
        );
        assert.deepEqual(v, [
            'outbox-payload-bucket: outbox payload bucket "polpay-payloads" may be public: restrictPublicBuckets not true in a public access block; it holds whole payloads: block all four (the Outbox component does)',
        ]);
        assert.equal(
            (await payloadViolations(change(PAYLOAD_BUCKET_TYPES.publicAccessBlock, () => undefined))).length,
            1,
        );
    });

    it("flags a bucket without encryption, and one without an expiring lifecycle rule", async () => {
        assert.match(
            (await payloadViolations(change(PAYLOAD_BUCKET_TYPES.encryption, () => undefined)))[0] ?? "",
            /has no server-side encryption configuration/,
        );
        assert.match(
            (await payloadViolations(change(PAYLOAD_BUCKET_TYPES.lifecycle, () => undefined)))[0] ?? "",
            /has no enabled lifecycle rule that expires its objects/,
        );
        const disabled = await payloadViolations(
            change(PAYLOAD_BUCKET_TYPES.lifecycle, (i) => ({
                ...i,
                rules: (i.rules as Record<string, unknown>[]).map((r) => ({ ...r, status: "Disabled" })),
            })),
        );
        assert.equal(disabled.length, 1);
    });
});
