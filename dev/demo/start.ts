/**
 * `npm start`: the whole outbox on this machine, no AWS account needed. See dev/demo/demo.ts for what runs,
 * and `npm start -- --help` for the flags.
 *
 * Nothing goes to stderr on a clean run; a usage mistake or a missing Java gives one line there.
 *
 * @packageDocumentation
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
import { JAVA_MISSING_MESSAGE, javaAvailable } from "../emulators/dynamodb-local";
import { runDemo } from "./demo";
import { createProgressLine } from "./progress";
import { runTwoRegionDemo } from "./two-regions";
import { describeError, installShutdown } from "./shutdown";
import { parseStartArgs, START_USAGE, UsageError, type StartOptions } from "./start-args";

async function main(): Promise<void> {
    let options: StartOptions;
    try {
        options = parseStartArgs(process.argv.slice(2));
    } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        process.stderr.write(`npm start: ${err.message}\n`);
        process.exit(2);
    }
    if (options.help) {
        process.stdout.write(`${START_USAGE}\n`);
        return;
    }
    if (options.endpoint === undefined && !javaAvailable()) {
        process.stderr.write(`${JAVA_MISSING_MESSAGE}\n`);
        process.exit(1);
    }
    const progress = createProgressLine();
    const shutdown = installShutdown({ say: (line) => progress.print(line) });
    try {
        const result = await (options.regions === 2 ? runTwoRegionDemo : runDemo)(options, shutdown, progress);
        await shutdown.exit(result.ok ? 0 : 1);
    } catch (err) {
        if (shutdown.stopping) return;
        progress.done();
        process.stderr.write(`npm start failed: ${describeError(err)}\n`);
        await shutdown.exit(1);
    }
}

void main();
