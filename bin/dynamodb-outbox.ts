/**
 * The `dynamodb-outbox` executable's TypeScript entry: runs {@link main} against the real process and sets the
 * exit code. `bin/dynamodb-outbox.js` (the package.json `bin`) loads this file through ts-node.
 *
 * @packageDocumentation
 */
import { main } from "../cli/main";

export { main };

/**
 * Run the command line against this process: `process.argv`, its streams, its environment, the wall clock.
 * Resolves after setting `process.exitCode`.
 */
export async function runFromProcess(): Promise<void> {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
    process.exitCode = await main(process.argv.slice(2), {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        env: process.env,
    });
}

if (require.main === module) void runFromProcess();
