/**
 * Logs carry ids, never payloads: the publisher, the sweeper, their store and the local mapping log through the
 * package's JSON logger at debug level during a run with every fault (failures, retries, kills, dead letters,
 * completion races), and no log line or EMF metric line holds any part of a payload, while the lines that name a
 * record do carry its id.
 */
import assert from "node:assert/strict";
import { createJsonLogger } from "../../../runtime/observability/json-logger";
import { runScenario } from "../../support/faults/scenario";
import { SCENARIOS } from "../../support/faults/scenarios";
import { PAYLOAD_MARKER } from "../../support/faults/workload";

describe("logs carry ids, never payloads", function () {
    this.timeout(300_000);

    it("on a run with every fault injected, no log or metric line holds a payload, and the record lines name record ids", async function () {
        const spec = SCENARIOS.find((s) => s.name === "everything-at-once")!;
        const logLines: string[] = [];
        const metricLines: string[] = [];
        const logger = createJsonLogger({ level: "debug", write: (line) => logLines.push(line) });
        const result = await runScenario(spec, {
            messages: 60,
            rate: 0.3,
            seed: 11,
            logger,
            writeMetrics: (line) => metricLines.push(line),
        });
        assert.equal(result.lost, 0);
        assert.ok(logLines.length >= 5, `the run logged (${logLines.length} lines)`);
        assert.ok(metricLines.length > 0);
        for (const line of [...logLines, ...metricLines]) {
            assert.ok(!line.includes(PAYLOAD_MARKER), `no payload in: ${line}`);
            assert.ok(!line.includes("é <&>"), `no payload text in: ${line}`);
        }
        const withRecordId = logLines.filter((l) => /"recordId":"everythingat-\d+/.test(l));
        assert.ok(withRecordId.length > 0, "lines about a record carry its id");
        assert.ok(
            logLines.some((l) => l.includes('"level":"warn"') || l.includes('"level":"error"')),
            "failures were logged",
        );
    });
});
