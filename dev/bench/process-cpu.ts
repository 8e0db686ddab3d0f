/**
 * The CPU time a process has used, read from Linux's `/proc/<pid>/stat`: how the drain bench tells the time
 * DynamoDB Local spends computing its answers from the time the relay spends waiting for them.
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, 100 on every Linux the bench runs on). */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * User plus system CPU time of process `pid` so far, ms; `undefined` when it cannot be read (no pid, not Linux,
 * the process is gone).
 *
 * @param pid - The process id.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
    if (pid === undefined) return undefined;
    let stat: string;
    try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
        // No /proc (not Linux) or the process has exited: the figure is absent, not zero.
        return undefined;
    }
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
    return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** The machine's CPU time so far, all cores, from `/proc/stat`'s first line: busy and idle (idle plus iowait), ms. */
export interface MachineCpu {
    readonly busyMs: number;
    readonly idleMs: number;
}

/** The machine's CPU time so far ({@link MachineCpu}); `undefined` where `/proc/stat` cannot be read. */
export function machineCpuMs(): MachineCpu | undefined {
    let stat: string;
    try {
        stat = fs.readFileSync("/proc/stat", "utf8");
    } catch {
        // Not Linux: the figure is absent, not zero.
        return undefined;
    }
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in clock ticks.
    const ticks = (stat.split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
    if (ticks.length < 8 || ticks.some((t) => !Number.isFinite(t))) return undefined;
    const idle = ticks[3]! + ticks[4]!;
    const busy = ticks.slice(0, 8).reduce((a, b) => a + b, 0) - idle;
    return { busyMs: (busy * 1000) / CLOCK_TICKS_PER_SECOND, idleMs: (idle * 1000) / CLOCK_TICKS_PER_SECOND };
}
