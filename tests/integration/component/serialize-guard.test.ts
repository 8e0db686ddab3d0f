/**
 * The handler factories serialized directly, the way `CallbackFunction` does, outside the mocks. A closure the
 * serializer refuses (for example a captured object with a primitive `default` key, which makes Pulumi's
 * `isImportStarResult` check throw, reference test-infra §7) then fails here at once, with its message. Inside a
 * component under the mocks the same refusal never registers the function, and the test waits until it times out.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { HANDLER_LIMITS, MAPPING_LIMITS, REDRIVE_LIMITS } from "../../../runtime/limits";
import { publisherLambdaFactory, sweeperLambdaFactory } from "../../../runtime/relay/lambda";

describe("the handler factories serialize directly (no mocks, no hang)", () => {
    for (const [name, factory] of [
        ["publisher", publisherLambdaFactory],
        ["sweeper", sweeperLambdaFactory],
    ] as const) {
        it(`serializes the ${name} factory and captures the limits it reads`, async () => {
            const serialized = await pulumi.runtime.serializeFunction(factory, { isFactoryFunction: true });
            assert.match(serialized.text, /fallback: 3600/, "HANDLER_LIMITS travels with the handler");
            assert.equal(serialized.containsSecrets, false);
        });
    }

    it("no runtime module holds a Set or Map at module scope (serialized by value, it arrives as a plain object)", () => {
        const runtime = path.join(__dirname, "..", "..", "..", "runtime");
        const moduleScope = /^(?:export )?(?:const|let) [^=]+= new (?:Set|Map)\b/m;
        const offenders = (fs.readdirSync(runtime, { recursive: true }) as string[])
            .filter((f) => f.endsWith(".ts"))
            .filter((f) => moduleScope.test(fs.readFileSync(path.join(runtime, f), "utf8")));
        assert.deepEqual(offenders, []);
        assert.ok(moduleScope.test("const NAMES: ReadonlySet<string> = new Set([]);"), "the pattern finds one");
    });

    it("no limit the factories reach holds a primitive under a `default` key (the serializer bug's trigger)", () => {
        for (const table of [HANDLER_LIMITS, MAPPING_LIMITS, REDRIVE_LIMITS]) {
            for (const [key, limit] of Object.entries(table))
                assert.ok(!Object.prototype.hasOwnProperty.call(limit, "default"), key);
        }
    });
});
