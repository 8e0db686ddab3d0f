/**
 * `npm run test:faults`: every fault scenario on DynamoDB Local and the AWS fault server, one line per
 * scenario (its relay figures, then its inbox consumer's), the inbox consumer's summary
 * (`inbox effects <n> applied-once <n> …`), and as the LAST line exactly
 * `scenarios <s> messages <n> lost <l> inversions <i> duplicates <d>`.
 * Scale from the environment: OUTBOX_FAULT_MESSAGES (total over all scenarios, default 320), OUTBOX_FAULT_RATE
 * (default 0.1), OUTBOX_FAULT_SEED (default 7). Exits 1 when any invariant fails. OUTBOX_FAULT_LOG_TALLY=1 prints,
 * per scenario, how often each warning and error was logged (with its `code`), to find what slows a drain.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { stopDynamo } from "../tests/support/dynamodb";
import { faultScale, scenarioMessages } from "../tests/support/faults/scale";
import {
    holds,
    inboxSummaryLine,
    runScenario,
    scenarioLine,
    summaryLine,
    type ScenarioResult,
} from "../tests/support/faults/scenario";
import { SCENARIOS } from "../tests/support/faults/scenarios";
import type { LogAttributes, Logger } from "../runtime/ports";

/** A logger that counts warnings and errors by level, message and code, for OUTBOX_FAULT_LOG_TALLY. */
function tallyLogger(): { logger: Logger; report(): string } {
    const counts = new Map<string, number>();
    const note = (level: string) => (message: string, attributes?: LogAttributes) => {
        const code = attributes?.["code"];
        const key = `${level} ${message}${code !== undefined ? ` [${String(code)}]` : ""}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
    };
    return {
        logger: { debug: () => undefined, info: () => undefined, warn: note("warn"), error: note("error") },
        report: () =>
            [...counts.entries()]
                .sort((a, b) => b[1] - a[1])
                .map(([k, n]) => `  ${String(n).padStart(6)} ${k}`)
                .join("\n"),
    };
}

async function main(): Promise<number> {
    const scale = faultScale();
    const only = process.argv.slice(2);
    const chosen = only.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => only.includes(s.name));
    if (chosen.length === 0) {
        process.stderr.write(
            `test:faults: no scenario named ${only.join(", ")}; scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}\n`,
        );
        return 2;
    }
    const started = Date.now();
    const results: ScenarioResult[] = [];
    const messages = scenarioMessages(
        scale,
        chosen.map((s) => s.minMessages ?? 0),
    );
    try {
        for (let i = 0; i < chosen.length; i += 1) {
            const spec = chosen[i]!;
            const t0 = Date.now();
            const tally = process.env.OUTBOX_FAULT_LOG_TALLY === "1" ? tallyLogger() : undefined;
            try {
                results.push(
                    await runScenario(spec, {
                        messages: messages[i]!,
                        rate: scale.rate,
                        seed: scale.seed + i,
                        ...(tally ? { logger: tally.logger } : {}),
                    }),
                );
            } finally {
                if (tally) process.stdout.write(`log tally of ${spec.name}:\n${tally.report()}\n`);
            }
            const result = results[results.length - 1]!;
            process.stdout.write(`${scenarioLine(result)} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
        }
    } finally {
        await stopDynamo();
    }
    process.stdout.write(
        `rate ${scale.rate} seed ${scale.seed} elapsed ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    process.stdout.write(`${inboxSummaryLine(results)}\n`);
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
        process.stderr.write(
            `test:faults failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
        void stopDynamo().finally(() => process.exit(1));
    },
);
