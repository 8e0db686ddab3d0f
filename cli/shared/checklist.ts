/**
 * The ✓/✗ checklist `verify` prints: one line per check, printed as soon as the check ends, with the reason.
 *
 * @packageDocumentation
 */
import type { Output } from "./io";

/** How a check ended. `warn` works but deserves a look; `skip` could not run because an earlier check failed. */
export type CheckStatus = "pass" | "fail" | "warn" | "skip";

/** One checklist line. */
export interface CheckResult {
    /** A stable id, e.g. `index:ClaimIndex`, for `--json` consumers. */
    readonly id: string;
    /** What was checked. */
    readonly title: string;
    /** How it ended. */
    readonly status: CheckStatus;
    /** Why: what was found and, on failure, the fix. */
    readonly detail: string;
}

const MARK: Readonly<Record<CheckStatus, string>> = { pass: "✓", fail: "✗", warn: "!", skip: "-" };

/** Collects checks and prints each as it is added. */
export class Checklist {
    /** The checks so far, in order. */
    readonly results: CheckResult[] = [];

    constructor(private readonly out: Output) {}

    /** Record a check and print its line. */
    add(id: string, title: string, status: CheckStatus, detail: string): void {
        this.results.push({ id, title, status, detail });
        this.out.line(`  ${MARK[status]} ${title}${detail === "" ? "" : ` — ${detail}`}`);
    }

    /** Whether no check failed or was skipped. */
    get ok(): boolean {
        return this.results.every((r) => r.status === "pass" || r.status === "warn");
    }

    /** Counts by status. */
    counts(): Record<CheckStatus, number> {
        const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
        for (const r of this.results) counts[r.status]++;
        return counts;
    }
}
