import * as assert from "node:assert/strict";
import { COMPONENT_PEERS, POLICY_PEERS, assertPeers, missingPeers } from "../../../components/peers";
import { OutboxError } from "../../../runtime/errors";

/** A resolver that finds only `present`. */
function only(...present: string[]): (request: string) => string {
    return (request) => {
        if (present.includes(request)) return `/node_modules/${request}/index.js`;
        throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
    };
}

describe("unit: the optional peer dependencies an entry needs", () => {
    it("finds every peer of both entries in this repository (devDependencies)", () => {
        assert.deepEqual(missingPeers([...new Set([...COMPONENT_PEERS, ...POLICY_PEERS])]), []);
        assert.doesNotThrow(() => assertPeers("dynamodb-outbox", COMPONENT_PEERS));
    });

    it("lists the peers that do not resolve, in order", () => {
        assert.deepEqual(missingPeers(COMPONENT_PEERS, only("@pulumi/pulumi")), ["@pulumi/aws"]);
        assert.deepEqual(missingPeers(POLICY_PEERS, only()), ["@pulumi/policy", "@pulumi/pulumi", "@pulumi/aws"]);
    });

    it("fails the component entry with INVALID_CONFIG naming the missing peers, the install command and the runtime entry", () => {
        assert.throws(
            () => assertPeers("dynamodb-outbox", COMPONENT_PEERS, only()),
            (err: unknown) => {
                assert.ok(err instanceof OutboxError);
                assert.equal(err.code, "INVALID_CONFIG");
                assert.equal(
                    err.message,
                    "dynamodb-outbox needs @pulumi/pulumi and @pulumi/aws, which are not installed: they are optional peer dependencies, which npm does not install by itself. " +
                        'Install them next to it: npm install @pulumi/pulumi @pulumi/aws. An application that only writes or relays events needs none of them: import "dynamodb-outbox/runtime" instead.',
                );
                assert.deepEqual(err.context, { entry: "dynamodb-outbox", missing: "@pulumi/pulumi @pulumi/aws" });
                return true;
            },
        );
    });

    it("fails the policy entry naming the one missing peer, without the runtime hint", () => {
        assert.throws(
            () => assertPeers("dynamodb-outbox/policy", POLICY_PEERS, only("@pulumi/pulumi", "@pulumi/aws")),
            {
                name: "OutboxError",
                message:
                    "dynamodb-outbox/policy needs @pulumi/policy, which is not installed: it is an optional peer dependency, which npm does not install by itself. Install it next to it: npm install @pulumi/policy.",
            },
        );
    });

    it("rethrows a resolution failure other than a missing package (a broken install is not a missing one)", () => {
        const broken = (): string => {
            throw Object.assign(new SyntaxError("Unexpected token in package.json"), {
                code: "ERR_INVALID_PACKAGE_CONFIG",
            });
        };
        assert.throws(() => missingPeers(COMPONENT_PEERS, broken), SyntaxError);
    });
});
