/**
 * A deliberate, reproducible CPU load for the bench (`npm run bench:burst -- --load N`): N child processes that
 * spin, each taking one core's worth of CPU when it gets one, so a run on a quiet machine can be repeated on a
 * starved one. They run at the same priority as the bench and DynamoDB Local, and are stopped by their own pids.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from "node:child_process";
import { processCpuMs } from "./process-cpu";

/** A running load. */
export interface CpuLoad {
    /** How many spinning processes. */
    readonly processes: number;
    /** The CPU time the spinners have used so far, ms (0 with no spinners; `undefined` where /proc cannot be read). */
    cpuMs(): number | undefined;
    /** Stop every spinner and wait for it to exit. Never throws. */
    stop(): Promise<void>;
}

/** Each spinner: a Node process in a busy loop that exits when its parent goes (its stdin closes). */
const SPIN =
    "process.stdin.on('close',()=>process.exit(0));process.stdin.resume();setImmediate(function spin(){const end=Date.now()+50;while(Date.now()<end);setImmediate(spin);});";

/**
 * Start `processes` spinners (0 starts none).
 *
 * @param processes - Spinners to start, 0 to 64.
 */
export function startCpuLoad(processes: number): CpuLoad {
    if (!Number.isInteger(processes) || processes < 0 || processes > 64)
        throw new Error(`cpu load: processes is ${processes}; expected an integer from 0 to 64, e.g. 4`);
    const children: ChildProcess[] = Array.from({ length: processes }, () =>
        spawn(process.execPath, ["-e", SPIN], { stdio: ["pipe", "ignore", "ignore"] }),
    );
    const exited = children.map((child) => new Promise<void>((resolve) => child.once("exit", () => resolve())));
    return {
        processes,
        cpuMs() {
            let total = 0;
            for (const child of children) {
                const used = processCpuMs(child.pid);
                if (used === undefined) return undefined;
                total += used;
            }
            return total;
        },
        async stop() {
            for (const child of children) {
                child.stdin?.end();
                if (child.exitCode === null) child.kill("SIGTERM");
            }
            await Promise.all(exited);
        },
    };
}
