/**
 * `npm run test:edges -- --runs N --seed S [--path P]`: issue 38's property test at any size. It prints the seed
 * first (a random one when none is given), a progress line every 100 cases, and at the end what the run did (cases,
 * messages accepted and refused, published, dead-lettered, refusals by kind); on a failure, fast-check's report: the
 * seed and path that replay it, and the shrunk counterexample. Exits 1 on a failure.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { stopDynamo } from "../tests/support/dynamodb";
import { checkEdges, tallyLines } from "../tests/support/edges/property";
import { destroyStreamsClients } from "../tests/support/stream-table";

/** `--name value` from the command line. */
function option(args: readonly string[], name: string): string | undefined {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1] : undefined;
}

function integer(text: string | undefined, name: string, fallback: number): number {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isSafeInteger(n)) throw new Error(`--${name} must be an integer, got ${text}`);
    return n;
}

async function main(): Promise<number> {
    const args = process.argv.slice(2);
    const runs = integer(option(args, "runs"), "runs", 100);
    const seed = integer(option(args, "seed"), "seed", Math.floor(Math.random() * 2 ** 31));
    const path = option(args, "path");
    process.stdout.write(`test:edges seed ${seed} runs ${runs}${path !== undefined ? ` path ${path}` : ""}\n`);
    const started = Date.now();
    try {
        const { tally, failure } = await checkEdges({
            runs,
            seed,
            ...(path !== undefined ? { path } : {}),
            log: (line) => process.stdout.write(`${line} (${((Date.now() - started) / 60_000).toFixed(1)} min)\n`),
        });
        for (const line of tallyLines(tally)) process.stdout.write(`${line}\n`);
        const minutes = ((Date.now() - started) / 60_000).toFixed(1);
        if (failure !== undefined) {
            process.stdout.write(`${failure}\n`);
            process.stdout.write(`test:edges FAILED seed ${seed} after ${minutes} min\n`);
            return 1;
        }
        process.stdout.write(`test:edges passed: ${tally.cases} cases, seed ${seed}, ${minutes} min\n`);
        return 0;
    } finally {
        destroyStreamsClients();
        await stopDynamo();
    }
}

main().then(
    (code) => process.exit(code),
    (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exit(2);
    },
);
