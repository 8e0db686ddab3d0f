/**
 * `npm run test:faults`: every fault scenario on DynamoDB Local and the fault-injecting SNS server, one line per
 * scenario, and as the LAST line exactly `scenarios <s> messages <n> lost <l> inversions <i> duplicates <d>`.
 * Scale from the environment: OUTBOX_FAULT_MESSAGES (total over all scenarios, default 320), OUTBOX_FAULT_RATE
 * (default 0.1), OUTBOX_FAULT_SEED (default 7). Exits 1 when any invariant fails.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { stopDynamo } from "../tests/support/dynamodb";
import { faultScale, messagesFor } from "../tests/faults/support/scale";
import { holds, runScenario, scenarioLine, summaryLine, type ScenarioResult } from "../tests/faults/support/scenario";
import { SCENARIOS } from "../tests/faults/support/scenarios";

async function main(): Promise<number> {
    const scale = faultScale();
    const only = process.argv.slice(2);
    const chosen = only.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => only.includes(s.name));
    if (chosen.length === 0) {
        process.stderr.write(`test:faults: no scenario named ${only.join(", ")}; scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}\n`);
        return 2;
    }
    const started = Date.now();
    const results: ScenarioResult[] = [];
    try {
        for (let i = 0; i < chosen.length; i += 1) {
            const spec = chosen[i]!;
            const t0 = Date.now();
            const result = await runScenario(spec, { messages: messagesFor(scale, i, chosen.length), rate: scale.rate, seed: scale.seed + i });
            results.push(result);
            process.stdout.write(`${scenarioLine(result)} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
        }
    } finally {
        await stopDynamo();
    }
    process.stdout.write(`rate ${scale.rate} seed ${scale.seed} elapsed ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    process.stdout.write(`${summaryLine(results)}\n`);
    return results.every(holds) ? 0 : 1;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
        process.stderr.write(`test:faults: ${signal}, stopping DynamoDB Local\n`);
        void stopDynamo().finally(() => process.exit(130));
    });
}

main().then(
    (code) => process.exit(code),
    (err: unknown) => {
        process.stderr.write(`test:faults failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        void stopDynamo().finally(() => process.exit(1));
    },
);
