/**
 * Run a command without blocking the test process, collecting its output.
 */
import { spawn } from "node:child_process";

/** How a command ended. */
export interface Ran {
    status: number | null;
    stdout: string;
    stderr: string;
}

/** Run `command` with `args` in `options.cwd` (environment: `options.env`, else this process's) and collect its output. */
export function runAsync(
    command: string,
    args: string[],
    options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Ran> {
    return new Promise((resolve, reject) => {
        const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        child.on("error", reject);
        child.on("close", (status) => resolve({ status, stdout, stderr }));
    });
}
