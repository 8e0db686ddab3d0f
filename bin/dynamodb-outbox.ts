/**
 * The `dynamodb-outbox` executable's TypeScript entry: runs {@link main} against the real process and sets the
 * exit code. `bin/dynamodb-outbox.js` (the package.json `bin`) loads this file through ts-node.
 *
 * @packageDocumentation
 */
import { main } from "../cli/main";

export { main };

/** How long the process may stay alive after the command ended, ms, before it exits anyway. */
export const EXIT_GRACE_MS = 1_000;

/**
 * Run the command line against this process: `process.argv`, its streams, its environment, the wall clock.
 * Resolves after setting `process.exitCode`. `--timeout` counts from the process's start, and `main` ends within
 * a few seconds of it; a connection or timer still open {@link EXIT_GRACE_MS} after that does not keep the process
 * alive: it exits with the command's code.
 */
export async function runFromProcess(): Promise<void> {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
    const code = await main(process.argv.slice(2), {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        env: process.env,
        startedAt: performance.timeOrigin,
    });
    process.exitCode = code;
    setTimeout(() => {
        process.stderr.write(
            `dynamodb-outbox: the command ended (exit ${code}), but a connection was still open ${EXIT_GRACE_MS} ms later; exiting\n`,
        );
        process.exit(code);
    }, EXIT_GRACE_MS).unref();
}

if (require.main === module) void runFromProcess();
